package gocode

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/desc"
	"github.com/ocannlgen/ocannlgen/internal/testutil"
)

const matmulSrc = `
input a : 8,13
input b : 13,10
let c = a +* "ij;jk=>ik" b`

const matmulSrc64 = `
input a : 7,9
input b : 9,11
let c = a +* "ij;jk=>ik" b`

const accumSrc = `
input a : 4,6
input t : 4,6
{s1} =:- a ~logic:"ij=>i"
{p1} =:* a ~logic:"ij=>j"
{d1} =:/ a ~logic:"ij=>i"
{m1} =:@- a ~logic:"ij=>j"
{m2} =:@^ a ~logic:"ij=>i"
t =/ a
t =- a
t =* a`

const primsSrc = `
input u : 3,5
input v : 3,5
input w : 3,5
let p1 = exp (u *. 0.1) + log (v *. v + 1) + sqrt (v *. v) + tanh u
let p2 = sin u - cos v + exp2 (u *. 0.2) + log2 (v *. v + 2)
let p3 = recip (v *. v + 1) + recip_sqrt (v *. v + 1) + neg u + sat01 u + relu v
let p4 = where (u < v) u v + (u = v) + (u <> v) + not (u < 0) + fma u v w + u **. 2
let o = p1 + p2 + p3 + p4 /. 3`

const padParam1DSrc = `
input x : 11
input w : 3
let y = x +* "o=+k; k => o" w`

// 2 images of 8x9 pixels with 3 channels, a 3x3 kernel to 4 channels.
const padParam2DSrc = `
input img : 2 | 8, 9, 3
input k2 : 3, 3, 3 -> 4
let c2 = img +* "... | oh=+kh, ow=+kw, ..ic..; kh, kw, ..ic.. -> ..oc.. => ... | oh, ow, ..oc.." k2`

const padParamStrideSrc = `
input img : 2 | 8, 6, 3
input k2 : 3, 3, 3 -> 4
let c2 = img +* "... | 2*oh=+kh, 2*ow=+kw, ..ic..; kh, kw, ..ic.. -> ..oc.. => ... | oh, ow, ..oc.." k2`

// Max pools over padded windows: the margins must hold -inf (the random
// inputs are negative about half the time).
const padParamPoolSrc = `
input img : 6,8
leaf win : 3,3 = 0
let mp = img @^+ "oh=+wh, ow=+ww; wh, ww => oh, ow" win
let ms = img @^+ "2*oh=+wh, 2*ow=+ww; wh, ww => oh, ow" win`

// One padded input read with margins 0, then -inf, then 0 again.
const padParamSharedSrc = `
input x : 6
input u : 3
leaf w : 3 = 0
let c = x +* "o=+k; k => o" u
let p = x @^+ "o=+k; k => o" w
let c2 = x +* "o=+k; k => o" u`

// A padded result read with margins 0, -inf, 0.
const padOutResultSrc = `
input x0 : 6
input u : 3
leaf w : 3 = 0
let x = relu x0 - 0.5
let c = x +* "o=+k; k => o" u
let p = x @^+ "o=+k; k => o" w
let c2 = x +* "o=+k; k => o" u`

const padOut2DSrc = `
input img0 : 2 | 8, 9, 3
input k2 : 3, 3, 3 -> 4
let img = relu img0
let c2 = img +* "... | oh=+kh, ow=+kw, ..ic..; kh, kw, ..ic.. -> ..oc.. => ... | oh, ow, ..oc.." k2`

// A leaf updated in place and read by padded operations.
const padOutInPlaceSrc = `
input t : 6
input v : 6
input u : 3
leaf w : 3 = 0
t =+ v
let c = t +* "o=+k; k => o" u
let p = t @^+ "o=+k; k => o" w`

// e2eCases covers the kernels the emitter must get right.
func e2eCases(t testing.TB) []ecase {
	mlp, err := os.ReadFile("../../examples/programs/mlp.ocl")
	if err != nil {
		t.Fatalf("example: %v", err)
	}
	attention, err := os.ReadFile("../../examples/programs/attention.ocl")
	if err != nil {
		t.Fatalf("example: %v", err)
	}
	return []ecase{
		{"MatMul32", "float32", matmulSrc, ptrs("a", "b", "c")},
		{"MatMul32S", "float32", matmulSrc, []pspec{sl("a"), sl("b"), out(sl("c"))}},
		{"MatMul64", "float64", matmulSrc64, ptrs("a", "b", "c")},
		{"MatMul64S", "float64", matmulSrc64, []pspec{sl("a"), sl("b"), out(sl("c"))}},
		{"MatMulMixed", "float32", matmulSrc, []pspec{sl("a"), pa("b"), out(sl("c"))}},
		{"MatMulFlat", "float32", matmulSrc, []pspec{{name: "a", flat: true}, pa("b"), {name: "c", out: true, flat: true}}},
		{"Regrouped", "float64", `
input x : 4,3,5
input w : 5
let y = x ++ "abc=>acb"
let z = x +* "abc;c=>ab" w`, []pspec{{name: "x", dims: []int{4, 15}}, {name: "w", dims: []int{1, 5}}, {name: "y", out: true, dims: []int{20, 3}}, {name: "z", out: true, flat: true}}},
		{"BatchedMatMul", "float32", `
input x : 3,4,6
input y : 3,6,5
let bm = x +* "bij;bjk=>bik" y`, ptrs("x", "y", "bm")},
		{"Transpose", "float32", `
input a : 5,7
let t = a ++ "ij=>ji"`, ptrs("a", "t")},
		{"SumRows", "float32", `
input a : 5,7
let s = a ++ "ij=>i0"`, ptrs("a", "s")},
		{"SumCols", "float64", `
input a : 5,7
let s = a ++ "ij=>0j"`, ptrs("a", "s")},
		{"SumAll", "float32", `
input a : 5,7
let s = a ++ "ij=>0"`, []pspec{sl("a"), out(sl("s"))}},
		{"MaxRows", "float32", `
input a : 5,7
let m = a @^^ "ij=>i0"`, ptrs("a", "m")},
		{"MaxCols", "float64", `
input a : 9,7
let m = a @^^ "ij=>0j"`, ptrs("a", "m")},
		{"Broadcast", "float32", `
input a : 4,6
input b : 6
let y = a *. 2.5 + b - 1`, ptrs("a", "b", "y")},
		{"ConvValid", "float32", `
input x : 11
input w : 3
let y = x +* "o<+k; k => o" w`, ptrs("x", "w", "y")},
		{"ConvPadded", "float32", `
input x0 : 11
input w : 3
let x = relu x0
let y = x +* "o=+k; k => o" w`, ptrs("x0", "w", "y")},
		{"ConvStrided", "float64", `
input x : 11
input w : 3
let y = x +* "2*o<+k; k => o" w`, []pspec{sl("x"), sl("w"), out(sl("y"))}},
		{"ConvValid2D", "float32", `
input img : 9,10
input k2 : 3,3
let c2 = img +* "oh<+kh, ow<+kw; kh, kw => oh, ow" k2`, ptrs("img", "k2", "c2")},
		{"ConvPadded2D", "float32", `
input img0 : 8,9
input k2 : 3,3
let img = img0 *. 1
let c2 = img +* "oh=+kh, ow=+kw; kh, kw => oh, ow" k2`, ptrs("img0", "k2", "c2")},
		{"ConvStrided2D", "float32", `
input img : 9,11
input k2 : 3,3
let c2 = img +* "2*oh<+kh, 2*ow<+kw; kh, kw => oh, ow" k2`, []pspec{sl("img"), pa("k2"), out(sl("c2"))}},
		{"ConvWide", "float32", `
input x : 20
input w : 7
let y = x +* "o<+k; k => o" w`, []pspec{sl("x"), pa("w"), out(sl("y"))}},
		{"MaxPool", "float32", `
input img : 8,8
leaf win : 2,2 = 0
let mp = img @^+ "2*oh<+wh, 2*ow<+ww; wh, ww => oh, ow" win`, ptrs("img", "mp")},
		{"PaddedShared", "float32", `
input x0 : 6
input u : 3
leaf w : 3 = 0
let x = x0 *. 1
let c = x +* "o=+k; k => o" u
let p = x @^+ "o=+k; k => o" w
let c2 = x +* "o=+k; k => o" u`, []pspec{pa("x0"), pa("u"), out(pa("c")), out(pa("p")), out(sl("c2"))}},
		// Padded convolutions reading kernel inputs directly: the
		// parameter keeps its unpadded type and is copied into a padded
		// local on entry.
		{"PadParam1D", "float32", padParam1DSrc, ptrs("x", "w", "y")},
		{"PadParam1D64S", "float64", padParam1DSrc, []pspec{sl("x"), sl("w"), out(sl("y"))}},
		{"PadParam2D", "float32", padParam2DSrc, ptrs("img", "k2", "c2")},
		{"PadParam2D64", "float64", padParam2DSrc, ptrs("img", "k2", "c2")},
		{"PadParam2DS", "float32", padParam2DSrc, []pspec{sl("img"), sl("k2"), out(sl("c2"))}},
		{"PadParam2DFlat64", "float64", padParam2DSrc, []pspec{{name: "img", flat: true}, pa("k2"), out(pa("c2"))}},
		{"PadParam2DRegrouped", "float32", padParam2DSrc, []pspec{{name: "img", dims: []int{16, 27}}, pa("k2"), out(pa("c2"))}},
		{"PadParamStride2", "float32", padParamStrideSrc, ptrs("img", "k2", "c2")},
		{"PadParamStride2x64S", "float64", padParamStrideSrc, []pspec{sl("img"), pa("k2"), out(sl("c2"))}},
		{"PadParamPool", "float32", padParamPoolSrc, []pspec{pa("img"), out(pa("mp")), out(pa("ms"))}},
		{"PadParamPool64S", "float64", padParamPoolSrc, []pspec{sl("img"), out(sl("mp")), out(pa("ms"))}},
		{"PadParamShared", "float32", padParamSharedSrc, []pspec{pa("x"), pa("u"), out(pa("c")), out(pa("p")), out(sl("c2"))}},
		{"PadParamShared64S", "float64", padParamSharedSrc, []pspec{sl("x"), sl("u"), out(sl("c")), out(pa("p")), out(pa("c2"))}},
		// Padded tensors bound to Output parameters: computed in a padded
		// local (results start as zeros, in-place leaves are copied in)
		// whose interior is copied out at the end.
		{"PadOutResult", "float32", padOutResultSrc, []pspec{pa("x0"), pa("u"), out(pa("x")), out(pa("c")), out(pa("p")), out(sl("c2"))}},
		{"PadOutResult64S", "float64", padOutResultSrc, []pspec{sl("x0"), sl("u"), out(sl("x")), out(sl("c")), out(pa("p")), out(pa("c2"))}},
		{"PadOutResult2D", "float32", padOut2DSrc, []pspec{pa("img0"), pa("k2"), out(pa("img")), out(pa("c2"))}},
		{"PadOutResult2DFlat64", "float64", padOut2DSrc, []pspec{pa("img0"), pa("k2"), {name: "img", out: true, flat: true}, out(sl("c2"))}},
		{"PadOutInPlace", "float32", padOutInPlaceSrc, []pspec{out(pa("t")), pa("v"), pa("u"), out(pa("c")), out(pa("p"))}},
		{"PadOutInPlace64S", "float64", padOutInPlaceSrc, []pspec{out(sl("t")), sl("v"), sl("u"), out(sl("c")), out(sl("p"))}},
		{"Interleave", "float32", `
input t1 : 4
input t2 : 4
{t} =:+ id t1 ~logic:"i => 2*i"
t =+ id t2 ~logic:"i => 2*i + 1"`, ptrs("t1", "t2", "t")},
		{"Concat", "float32", `
input x : 2
input y : 3
let c = (x, y) ++^ "a; b => a^b"`, ptrs("x", "y", "c")},
		{"BlockMatrix", "float64", `
input a : 1,2
input b : 1,1
input c : 2,2
input d : 2,1
let m = (a, b, c, d) ++^ "r, s; r, t; u, s; u, t => r^u, s^t"`, ptrs("a", "b", "c", "d", "m")},
		{"Intermediate", "float32", `
input a : 3,4
input b : 3,4
input cc : 4
let r = relu (a *. b + cc)`, ptrs("a", "b", "cc", "r")},
		{"InPlace", "float32", `
input t : 5
input v : 2
t =+ v ~logic:"b => a^b"`, []pspec{out(pa("t")), pa("v")}},
		{"Accums32", "float32", accumSrc, []pspec{pa("a"), out(pa("t")), out(pa("s1")), out(pa("p1")), out(pa("d1")), out(pa("m1")), out(sl("m2"))}},
		{"Accums64", "float64", accumSrc, []pspec{sl("a"), out(sl("t")), out(pa("s1")), out(sl("p1")), out(pa("d1")), out(pa("m1")), out(pa("m2"))}},
		{"Prims32", "float32", primsSrc, ptrs("u", "v", "w", "o")},
		{"Prims64", "float64", primsSrc, []pspec{sl("u"), sl("v"), sl("w"), out(sl("o"))}},
		{"SumOrder", "float64", `
input a : 2,2,4 = [[[1e16; 1e16; 1e16; 1e16]; [1; 1; 1; 1]]; [[-1e16; -1e16; -1e16; -1e16]; [1; 1; 1; 1]]]
let s = a ++ "jki=>i"`, ptrs("s")},
		{"Diagonals", "float32", `
input q : 3,3
let dg = q ++ "ii => i"
input v : 2
let dm = v ++ "i => ii"
let z = dg ++ "i => "`, []pspec{pa("q"), pa("v"), out(pa("dg")), out(sl("dm")), out(pa("z"))}},
		{"StackAndSlice", "float32", `
input x : 3 | 2
input y : 3 | 2
let s = [x; y]
let b = x @| 1`, []pspec{pa("x"), pa("y"), out(pa("s")), out(pa("b"))}},
		{"OddNames", "float32", matmulSrc, []pspec{{name: "a", kind: desc.Slice, as: "i0"}, {name: "b", kind: desc.Slice, as: "itoa"}, {name: "c", kind: desc.Slice, out: true, as: "n"}}},
		{"TargetAccum", "float32", `
input x : 4
{t} =+ id x ~logic:"i => i"
{u} =: id x ~logic:"i => 2*i"`, []pspec{pa("x"), out(pa("t")), out(sl("u"))}},
		// Intermediates that the program reads or accumulates into
		// before writing every cell (a target accumulated into, one
		// written at even cells only, an interleaving), and a literal
		// leaf updated in place: they rely on starting as zeros (or as
		// the literal), which a scratch does not give.
		{"LocalsStartZero", "float32", `
input x : 4
input t2 : 4
leaf v : 4 = [1; 2; 3; 4]
{t} =+ id x ~logic:"i => i"
{u} =: id x ~logic:"i => 2*i"
{w} =:+ id x ~logic:"i => 2*i"
w =+ id t2 ~logic:"i => 2*i + 1"
v =+ x
{mx} =:@^ x ~logic:"i => 2*i"
let o1 = t *. 2 + v
let o2 = u + w + mx`, []pspec{pa("x"), pa("t2"), out(pa("o1")), out(pa("o2"))}},
		{"MLP", "float32", string(mlp), []pspec{pa("points"), pa("labels"), out(pa("loss")), out(pa("h2"))}},
		{"Attention", "float32", string(attention), []pspec{sl("seq"), pa("w_q"), out(pa("out"))}},
	}
}

// Benchmark kernels (0 allocs/op), rendered into the same module.
const benchConvSrc = `
input img0 : 32,32
input k2 : 3,3
let img = img0 *. 1
let c2 = img +* "oh=+kh, ow=+kw; kh, kw => oh, ow" k2`

// A padded convolution reading the kernel's input directly (copied
// into a padded local on entry).
const benchConvParamSrc = `
input img : 32,32,4
input k2 : 3,3,4 -> 8
let c2 = img +* "oh=+kh, ow=+kw, ..ic..; kh, kw, ..ic.. -> ..oc.. => oh, ow, ..oc.." k2`

const benchMatMulSrc = `
input a : 64,64
input b : 64,64
let c = a +* "ij;jk=>ik" b`

func benchKernels(t testing.TB) []*desc.Kernel {
	mlp, err := os.ReadFile("../../examples/programs/mlp.ocl")
	if err != nil {
		t.Fatalf("example: %v", err)
	}
	var ks []*desc.Kernel
	add := func(name, src string, params ...pspec) {
		g, p := compileProgram(t, src, nil)
		k := &desc.Kernel{Name: name, Elem: "float32", Prog: p}
		for _, ps := range params {
			k.Params = append(k.Params, desc.Param{Name: ps.name, Kind: ps.kind, Tensor: testutil.Named(t, g, ps.name), Output: ps.out})
		}
		ks = append(ks, k)
	}
	add("BenchMatMul", benchMatMulSrc, pa("a"), pa("b"), out(pa("c")))
	add("BenchMatMulS", benchMatMulSrc, sl("a"), sl("b"), out(sl("c")))
	add("BenchConv", benchConvSrc, pa("img0"), pa("k2"), out(pa("c2")))
	add("BenchConvParam", benchConvParamSrc, pa("img"), pa("k2"), out(pa("c2")))
	add("BenchConvParamS", benchConvParamSrc, sl("img"), sl("k2"), out(sl("c2")))
	add("BenchMLP", string(mlp), pa("points"), out(pa("loss")))
	return ks
}

const benchFile = `package main

import "testing"

var (
	mmA, mmB, mmC    [64][64]float32
	sA, sB, sC       = make([]float32, 64*64), make([]float32, 64*64), make([]float32, 64*64)
	cvImg, cvOut     [32][32]float32
	cvK              [3][3]float32
	mlpPoints        [32][2]float32
	mlpLoss          [1]float32
	cpImg            [32][32][4]float32
	cpK              [8][3][3][4]float32
	cpOut            [32][32][8]float32
	cpSImg, cpSK     = make([]float32, 32*32*4), make([]float32, 8*3*3*4)
	cpSOut           = make([]float32, 32*32*8)
)

func BenchmarkMatMul(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		BenchMatMul(&mmA, &mmB, &mmC)
	}
}

func BenchmarkMatMulSlice(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		BenchMatMulS(sA, sB, sC)
	}
}

func BenchmarkConv(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		BenchConv(&cvImg, &cvK, &cvOut)
	}
}

func BenchmarkConvParam(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		BenchConvParam(&cpImg, &cpK, &cpOut)
	}
}

func BenchmarkConvParamSlice(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		BenchConvParamS(cpSImg, cpSK, cpSOut)
	}
}

func BenchmarkMLP(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		BenchMLP(&mlpPoints, &mlpLoss)
	}
}
`

// TestGenerated renders every case into one file, builds it with a
// harness in a temporary module, and checks the outputs against the
// interpreter, go vet, 0 allocs/op (with OCANNLGEN_E2E=1) and the
// wrong-length panic.
func TestGenerated(t *testing.T) {
	cases := e2eCases(t)
	var bs []*built
	f := &desc.File{Package: "main", Sources: []string{"e2e_test.go"}, Guards: []desc.Guard{{Name: "guardedSize", Value: 13}}}
	for _, c := range cases {
		b := build(t, c)
		bs = append(bs, b)
		f.Kernels = append(f.Kernels, b.k)
	}
	f.Kernels = append(f.Kernels, benchKernels(t)...)
	src, err := Render(f, Options{})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	var h strings.Builder
	h.WriteString(harnessHead)
	h.WriteString("const guardedSize = 13\n\nfunc main() {\n")
	for _, b := range bs {
		harnessCall(&h, b)
	}
	// A slice of the wrong length must panic with a clear message.
	h.WriteString(`	func() {
		defer func() { fmt.Println("!panic", recover()) }()
		MatMul32S(make([]float32, 3), make([]float32, 130), make([]float32, 80))
	}()
}
`)
	dir := testutil.WriteModule(t, map[string][]byte{
		"kernels.go":    src,
		"main.go":       []byte(h.String()),
		"bench_test.go": []byte(benchFile),
	})
	runOut, err := testutil.GoCmd(t, dir, goEnv, "run", ".")
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, head(runOut, 4000))
	}
	got, other := parseOutputs(t, runOut)
	for _, b := range bs {
		t.Run(b.c.kernel, func(t *testing.T) {
			tol := tolerance(b.c.elem)
			for i, ps := range b.c.params {
				if !ps.out {
					continue
				}
				g, ok := got[b.c.kernel+" "+ps.name]
				want := b.want[i]
				if !ok || len(g) != len(want) {
					t.Fatalf("%s: got %d values, want %d", ps.name, len(g), len(want))
				}
				for j := range want {
					if !testutil.CloseRel(g[j], want[j], tol) {
						t.Errorf("%s[%d] = %v, interpreter %v\ngenerated: %v\ninterpreter: %v", ps.name, j, g[j], want[j], g, want)
						break
					}
				}
			}
		})
	}
	t.Run("panic", func(t *testing.T) {
		want := "ocannlgen: MatMul32S: operand a has length 3, want 104"
		if other["!panic"] != want {
			t.Errorf("panic message %q, want %q", other["!panic"], want)
		}
	})
	t.Run("vet", func(t *testing.T) {
		if o, err := testutil.GoCmd(t, dir, goEnv, "vet", "."); err != nil {
			t.Errorf("go vet: %v\n%s", err, o)
		}
	})
	t.Run("allocs", func(t *testing.T) {
		// An end-to-end check (another build, of the benchmarks): in the
		// default run TestScratchAllocs and the examples' alloc tests
		// (the gallery's every kernel, the demos' TrainStep) check that
		// generated code allocates nothing.
		testutil.EndToEnd(t)
		o, err := testutil.GoCmd(t, dir, goEnv, "test", "-run", "XXX", "-bench", ".", "-benchmem", "-benchtime", "20x")
		if err != nil {
			t.Fatalf("go test -bench: %v\n%s", err, o)
		}
		allocs := parseAllocs(o)
		for _, name := range []string{"BenchmarkMatMul", "BenchmarkMatMulSlice", "BenchmarkConv", "BenchmarkConvParam", "BenchmarkConvParamSlice", "BenchmarkMLP"} {
			n, ok := allocs[name]
			if !ok {
				t.Errorf("%s: no result in\n%s", name, o)
			} else if n != 0 {
				t.Errorf("%s: %d allocs/op, want 0", name, n)
			}
		}
	})
}

var benchLine = regexp.MustCompile(`^(Benchmark\w+?)(?:-\d+)?\s+\d+\s+.*?\s(\d+) allocs/op`)

// parseAllocs reads allocs/op per benchmark from go test -benchmem output.
func parseAllocs(text string) map[string]int {
	m := map[string]int{}
	for _, l := range strings.Split(text, "\n") {
		if s := benchLine.FindStringSubmatch(l); s != nil {
			n, _ := strconv.Atoi(s[2])
			m[s[1]] = n
		}
	}
	return m
}

func TestParseAllocs(t *testing.T) {
	m := parseAllocs("BenchmarkConv-2   \t     20\t      4136 ns/op\t       0 B/op\t       0 allocs/op\nBenchmarkX \t 3 \t 5 ns/op \t 16 B/op \t 2 allocs/op\n")
	if m["BenchmarkConv"] != 0 || m["BenchmarkX"] != 2 || len(m) != 2 {
		t.Errorf("parseAllocs = %v", m)
	}
}

func head(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// TestMatMul256Speed compares the generated 256x256x256 float32 matmul
// with a naive triple loop. It only logs (no timing thresholds); set
// OCANNLGEN_BENCH=1 to run it.
func TestMatMul256Speed(t *testing.T) {
	if os.Getenv("OCANNLGEN_BENCH") == "" {
		t.Skip("set OCANNLGEN_BENCH=1 to measure")
	}
	g, p := compileProgram(t, `
input a : 256,256
input b : 256,256
let c = a +* "ij;jk=>ik" b`, nil)
	k := &desc.Kernel{Name: "MatMul256", Elem: "float32", Prog: p, Params: []desc.Param{
		{Name: "a", Tensor: testutil.Named(t, g, "a")}, {Name: "b", Tensor: testutil.Named(t, g, "b")}, {Name: "c", Tensor: testutil.Named(t, g, "c"), Output: true}}}
	src, err := Render(&desc.File{Package: "main", Kernels: []*desc.Kernel{k}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := testutil.WriteModule(t, map[string][]byte{
		"kernels.go": src,
		"main.go":    []byte("package main\n\nfunc main() {}\n"),
		"bench_test.go": []byte(`package main

import "testing"

const n = 256

var a, b, c, c2 [n][n]float32

func init() {
	for i := range n {
		for j := range n {
			a[i][j] = float32((i*7+j*3)%11) / 11
			b[i][j] = float32((i*5+j*2)%13) / 13
		}
	}
}

// naive is the i-j-k triple loop c[i][j] += a[i][k] * b[k][j].
func naive(a, b, c *[n][n]float32) {
	*c = [n][n]float32{}
	for i := range n {
		for j := range n {
			for k := range n {
				c[i][j] += a[i][k] * b[k][j]
			}
		}
	}
}

func gflops(b *testing.B) {
	b.ReportMetric(2*n*n*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkGenerated(bm *testing.B) {
	for bm.Loop() {
		MatMul256(&a, &b, &c)
	}
	gflops(bm)
}

func BenchmarkNaive(bm *testing.B) {
	for bm.Loop() {
		naive(&a, &b, &c2)
	}
	gflops(bm)
}

func TestSame(t *testing.T) {
	MatMul256(&a, &b, &c)
	naive(&a, &b, &c2)
	for i := range n {
		for j := range n {
			if d := c[i][j] - c2[i][j]; d > 1e-3 || d < -1e-3 {
				t.Fatalf("c[%d][%d] = %v, naive %v", i, j, c[i][j], c2[i][j])
			}
		}
	}
}
`)})
	o, err := testutil.GoCmd(t, dir, goEnv, "test", "-run", "TestSame", "-bench", ".", "-benchmem", "-count", "3")
	if err != nil {
		t.Fatalf("%v\n%s", err, o)
	}
	fmt.Println(o)
}
