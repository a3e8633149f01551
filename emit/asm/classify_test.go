package asm

import (
	"github.com/ocannlgen/ocannlgen/emit/target"
	"testing"

	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/pipeline"
)

// firstNest lowers src and returns its last operation's first loop nest.
func firstNest(t *testing.T, src string) (*loopir.Program, []*loopir.For, *loopir.Store) {
	t.Helper()
	res, err := pipeline.Compile(src, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Loops
	o := p.Ops[len(p.Ops)-1]
	for _, s := range o.Body {
		if f, ok := s.(*loopir.For); ok {
			loops, st, _ := loopir.PerfectNest(f)
			if st == nil {
				t.Fatalf("not a perfect nest:\n%s", p)
			}
			return p, loops, st
		}
	}
	t.Fatalf("no loop nest:\n%s", p)
	return nil, nil, nil
}

// TestClassify pins the kernel chosen for typical nests, computed by
// hand from the layouts (memory order batch, output, input).
func TestClassify(t *testing.T) {
	cases := []struct {
		name, src string
		want      *Spec // nil: the Go loops
		outer     int
	}{
		{"matmul", `input a : 64, 48 = range
input b : 48, 32 = range
let c = a +* "i,j; j,k => i,k" b`,
			&Spec{Elem: "float32", Kind: Broadcast, M: 64, N: 32, K: 48, CM: 32, CN: 1, AM: 48, AK: 1, BK: 32, BN: 1}, 0},
		{"A transposed (a weight gradient)", `input a : 48, 64 = range
input b : 48, 32 = range
let c = a +* "j,i; j,k => i,k" b`,
			&Spec{Elem: "float32", Kind: Broadcast, M: 64, N: 32, K: 48, CM: 32, CN: 1, AM: 1, AK: 64, BK: 32, BN: 1}, 0},
		{"B transposed (an input gradient)", `input a : 64, 48 = range
input b : 32, 48 = range
let c = a +* "i,j; k,j => i,k" b`,
			&Spec{Elem: "float32", Kind: Dot, M: 64, N: 32, K: 48, K2: 1, CM: 32, CN: 1, AM: 48, AK: 1, BK: 1, BN: 48}, 0},
		{"batched", `input a : 8, 16, 32 = range
input b : 8, 32, 24 = range
let c = a +* "b,i,j; b,j,k => b,i,k" b`,
			&Spec{Elem: "float32", Kind: Broadcast, M: 16, N: 24, K: 32, CM: 24, CN: 1, AM: 32, AK: 1, BK: 24, BN: 1}, 1},
		{"padded convolution: kw and ic merge into k, kh is k2", `input img : 2 | 10, 10, 16 = range
input ker : 3, 3, 16 -> 8 = range
let c = img +* "n | oh=+kh, ow=+kw, ic; kh, kw, ic -> oc => n | oh, ow, oc" ker`,
			// oh and ow tie as m: ow, the smaller C stride (dotRows).
			&Spec{Elem: "float32", Kind: Dot, M: 10, N: 8, K: 48, K2: 3, AK2: 13 * 16, BK2: 48, CM: 8, CN: 1, AM: 16, AK: 1, BK: 1, BN: 144}, 2},
		{"batch and pixels tie as m: the pixels, the smaller C stride", `input img : 12 | 14, 14, 16 = range
input ker : 3, 3, 16 -> 8 = range
let c = img +* "n | oh<+kh, ow<+kw, ic; kh, kw, ic -> oc => n | oh, ow, oc" ker`,
			&Spec{Elem: "float32", Kind: Dot, M: 12, N: 8, K: 48, K2: 3, AK2: 14 * 16, BK2: 48, CM: 8, CN: 1, AM: 16, AK: 1, BK: 1, BN: 144}, 2},
		{"pixels a quarter of the batch as m: the pixels, the smaller C stride", `input img : 32 | 10, 10, 16 = range
input ker : 3, 3, 16 -> 8 = range
let c = img +* "n | oh<+kh, ow<+kw, ic; kh, kw, ic -> oc => n | oh, ow, oc" ker`,
			&Spec{Elem: "float32", Kind: Dot, M: 8, N: 8, K: 48, K2: 3, AK2: 10 * 16, BK2: 48, CM: 8, CN: 1, AM: 16, AK: 1, BK: 1, BN: 144}, 2},
		{"one-channel valid convolution: the gathered form on AVX2", `input img : 256 | 12, 12, 1 = range
input ker : 3, 3, 1 -> 8 = range
let c = img +* "n | oh<+kh, ow<+kw, ic; kh, kw, ic -> oc => n | oh, ow, oc" ker`,
			&Spec{Elem: "float32", Kind: Dot, M: 256, N: 8, K: 3, K2: 3, AK2: 12, BK2: 3, CM: 800, CN: 1, AM: 144, AK: 1, BK: 1, BN: 9, Gather: true}, 2},
		{"its kernel gradient: an m-vector kernel over the whole reduction", `input img : 32 | 12, 12, 1 = range
input g : 32 | 10, 10, 8 = range
let c = img +* "n | oh<+kh, ow<+kw, ic; n | oh, ow, oc => kh, kw, ic -> oc" g`,
			&Spec{Elem: "float32", Kind: MVec, M: 8, CM: 9, AM: 1, N: 3, CN: 3, BN: 12, N2: 3, CN2: 1, BN2: 1,
				K: 10, AK: 8, BK: 1, K2: 10, AK2: 80, BK2: 12, K3: 32, AK3: 800, BK3: 144}, 0},
		{"too small", `input a : 4, 4 = range
input b : 4, 4 = range
let c = a +* "i,j; j,k => i,k" b`, nil, 0},
		{"not a product", `input a : 64, 48 = range
let c = a ++ "i,j => i" `, nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, loops, st := firstNest(t, c.src)
			n := Classify(target.AVX512().Kernels, p, loops, st, "float32", false)
			if c.want == nil {
				if n != nil {
					t.Fatalf("got %+v, want the Go loops", n.Spec)
				}
				return
			}
			if n == nil {
				t.Fatalf("Go loops, want %+v\n%s", *c.want, p)
			}
			if n.Spec != *c.want || len(n.Outer) != c.outer {
				t.Fatalf("got %+v with %d outer loops,\nwant %+v with %d\n%s", n.Spec, len(n.Outer), *c.want, c.outer, p)
			}
		})
	}
}

// TestClassifyMap pins the pointwise kernels of a relu (all loops merge
// into one axis), a bias add (the bias is constant along the rows, so the
// rows do not merge: they run as rows in the kernel, or stay a Go loop
// when a row alone fills a call, MapCallElems) and nests that are not
// maps.
func TestClassifyMap(t *testing.T) {
	cases := []struct {
		name, src string
		n, outer  int // n == 0: not a map
		desc      string
	}{
		{"relu", `input x : 32, 64 = range
let y = relu x`, 2048, 0, "c = relu(x0)"},
		{"bias add", `input x : 32 | 300 = range
input b : 300 = range
let y = x + b`, 300, 0, "c = add(x0,x1)"},
		{"bias add over long rows", `input x : 4 | 5000 = range
input b : 5000 = range
let y = x + b`, 5000, 1, "c = add(x0,x1)"},
		{"short rows run as rows in the kernel", `input x : 32 | 8 = range
input b : 8 = range
let y = x + b`, 8, 0, "c = add(x0,x1)"},
		{"too few elements", `input x : 16 | 8 = range
input b : 8 = range
let y = x + b`, 0, 0, ""},
		{"a reduction", `input x : 64, 64 = range
let y = x ++ "i,j => i"`, 0, 0, ""},
		{"exp (AVX2 only)", `input x : 32, 64 = range
let y = exp x`, 2048, 0, "c = exp(x0)"},
		{"a short exp map pays (MinCostlyMapElems)", `input x : 2 | 8 = range
let y = exp x`, 16, 0, "c = exp(x0)"},
		{"too few elements for exp", `input x : 2 | 4 = range
let y = exp x`, 0, 0, ""},
		{"sin is not supported", `input x : 32, 64 = range
let y = sin x`, 0, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, loops, st := firstNest(t, c.src)
			m := ClassifyMap(target.AVX512().Kernels, p, loops, st, "float32")
			if c.n == 0 {
				if m != nil {
					t.Fatalf("got a map over %d elements, want none", m.Spec.N)
				}
				return
			}
			if m == nil {
				t.Fatalf("not a map:\n%s", p)
			}
			if m.Spec.N != c.n || len(m.Outer) != c.outer || mapDesc(&m.Spec) != c.desc {
				t.Fatalf("got N=%d, %d outer loops, %q; want N=%d, %d, %q", m.Spec.N, len(m.Outer), mapDesc(&m.Spec), c.n, c.outer, c.desc)
			}
		})
	}
}

// TestStreamsB pins which broadcast kernels read their B slivers in
// place on the AVX-512 tier (streamsB) rather than packing them: the
// decoder's products with B rows 1536 bytes apart and several slivers
// stream; rows a multiple of 2 KiB apart, a single sliver, or too few m
// tiles to pack for keep their former blocking; the AVX2 tier packs.
func TestStreamsB(t *testing.T) {
	bc := func(m, n, k, am, ak, bk int) Spec {
		return Spec{Elem: "float32", Kind: Broadcast, M: m, N: n, K: k, CM: n, CN: 1, AM: am, AK: ak, BK: bk, BN: 1}
	}
	cases := []struct {
		name          string
		s             Spec
		stream, packs bool
	}{
		{"decoder M=128 N=384 K=1536", bc(128, 384, 1536, 1536, 1, 384), true, false},
		{"decoder M=192 N=384, A transposed", bc(192, 384, 1024, 1, 1536, 384), true, false},
		{"B rows 6 KiB apart", bc(1024, 192, 384, 384, 1, 1536), false, true},
		{"one sliver", bc(384, 64, 1024, 1, 384, 384), false, true},
		{"too few m tiles to pack", bc(12, 384, 384, 384, 1, 384), false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := AVX512()
			if got := w.streamsB(&c.s); got != c.stream {
				t.Errorf("AVX-512 streamsB = %v, want %v", got, c.stream)
			}
			if got := w.packs(&c.s); got != c.packs {
				t.Errorf("AVX-512 packs = %v, want %v", got, c.packs)
			}
			if AVX2().streamsB(&c.s) {
				t.Errorf("AVX2 streams B")
			}
		})
	}
}
