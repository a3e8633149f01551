package bf16

import (
	"math"
	"math/rand/v2"
	"testing"
)

// packedLayouts are layouts() plus blocks of B beyond one (more than kc
// reduction steps and more than nc columns, with a partial panel).
func packedLayouts() []layout {
	out := layouts()
	out = append(out,
		layout{"blocks", Shape{M: 9, N: 2*nc + 37, K: kc + 41, CM: 2*nc + 37, CN: 1, AM: kc + 41, AK: 1, BK: 2*nc + 37, BN: 1}},
		layout{"blocksT", Shape{M: 20, N: nc + 3, K: 2*kc + 1, CM: nc + 3, CN: 1, AM: 1, AK: 20, BK: 1, BN: 2*kc + 1, Overwrite: true}})
	return out
}

// TestGemmPacked: in every tier, GemmPacked with B packed once gives
// the bits of GemmTier for every layout (the swapped ones included),
// over two calls with the same Packed and different A and C (a loop of
// calls sharing the weights), and the packing then allocates nothing.
func TestGemmPacked(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, l := range packedLayouts() {
		cn, an, bn := l.s.spans()
		b := randSlice(rng, bn)
		for _, tier := range []Tier{Go, AVX2, AVX512, AVX512BF16} {
			if !Available(tier) {
				continue
			}
			var p Packed
			PackTier(&p, tier, &b[0], l.s)
			for call := range 2 {
				a, c0 := randSlice(rng, an), randSlice(rng, cn+7)
				want := append([]float32(nil), c0...)
				GemmTier(tier, &want[0], &a[0], &b[0], l.s)
				c := append([]float32(nil), c0...)
				GemmPacked(&c[0], &a[0], &b[0], &p, l.s)
				for i := range c {
					if math.Float32bits(c[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s, tier %v, call %d: cell %d = %v, GemmTier gives %v", l.name, tier, call, i, c[i], want[i])
					}
				}
			}
			if n := testing.AllocsPerRun(3, func() { PackTier(&p, tier, &b[0], l.s) }); n != 0 {
				t.Errorf("%s, tier %v: %v allocations per Pack into a grown Packed", l.name, tier, n)
			}
		}
	}
}

// TestGemmPackedShape: a shape other than the packed one panics.
func TestGemmPackedShape(t *testing.T) {
	s := Shape{M: 4, N: 5, K: 6, CM: 5, CN: 1, AM: 6, AK: 1, BK: 5, BN: 1}
	b, a, c := make([]float32, 30), make([]float32, 24), make([]float32, 20)
	var p Packed
	Pack(&p, &b[0], s)
	defer func() {
		if recover() == nil {
			t.Error("GemmPacked with another shape did not panic")
		}
	}()
	s.Overwrite = true
	GemmPacked(&c[0], &a[0], &b[0], &p, s)
}

// TestGemmPackedOperand: an operand other than the packed one panics.
func TestGemmPackedOperand(t *testing.T) {
	s := Shape{M: 4, N: 5, K: 6, CM: 5, CN: 1, AM: 6, AK: 1, BK: 5, BN: 1}
	b, a, c := make([]float32, 31), make([]float32, 24), make([]float32, 20)
	var p Packed
	Pack(&p, &b[0], s)
	defer func() {
		if recover() == nil {
			t.Error("GemmPacked with another operand did not panic")
		}
	}()
	GemmPacked(&c[0], &a[0], &b[1], &p, s)
}

// TestGemmOps: in every tier, GemmOpsTier on the operands in each form
// (float32, converted by ConvertTier, packed by PackATier and PackTier)
// gives the bits of GemmTier on the float32 operands, for every layout
// (the swapped ones included, more than one block of k, n and m).
func TestGemmOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, l := range packedLayouts() {
		cn, an, bn := l.s.spans()
		a, b, c0 := randSlice(rng, an), randSlice(rng, bn), randSlice(rng, cn+7)
		for _, tier := range []Tier{Go, AVX2, AVX512, AVX512BF16} {
			if !Available(tier) {
				continue
			}
			want := append([]float32(nil), c0...)
			GemmTier(tier, &want[0], &a[0], &b[0], l.s)
			a16, b16 := make([]uint16, an), make([]uint16, bn)
			ConvertTier(tier, &a16[0], &a[0], an)
			ConvertTier(tier, &b16[0], &b[0], bn)
			var p, pa Packed
			PackTier(&p, tier, &b[0], l.s)
			PackATier(&pa, tier, &a[0], l.s)
			as := []Operand{{F: &a[0]}, {H: &a16[0]}, {P: &pa}, {P: &pa, F: &a[0]}}
			bs := []Operand{{F: &b[0]}, {H: &b16[0]}, {P: &p}}
			for i, ao := range as {
				for j, bo := range bs {
					c := append([]float32(nil), c0...)
					GemmOpsTier(tier, &c[0], ao, bo, l.s)
					for x := range c {
						if math.Float32bits(c[x]) != math.Float32bits(want[x]) {
							t.Fatalf("%s, tier %v, A form %d, B form %d: cell %d = %v, GemmTier gives %v", l.name, tier, i, j, x, c[x], want[x])
						}
					}
				}
			}
		}
	}
}

// TestGemmOpsAllocs: GemmOps on converted operands allocates nothing.
func TestGemmOpsAllocs(t *testing.T) {
	s := Shape{M: 40, N: 50, K: 300, CM: 50, CN: 1, AM: 300, AK: 1, BK: 50, BN: 1}
	_, an, bn := s.spans()
	a, b, c := make([]uint16, an), make([]uint16, bn), make([]float32, s.M*s.N)
	if n := testing.AllocsPerRun(5, func() { GemmOps(&c[0], Operand{H: &a[0]}, Operand{H: &b[0]}, s) }); n != 0 {
		t.Errorf("%v allocations per call", n)
	}
}

// TestConverted: At maps an element of the converted array to its bf16
// copy (a GemmOps on it gives GemmTier's bits), and panics outside it.
func TestConverted(t *testing.T) {
	s := Shape{M: 5, N: 7, K: 9, CM: 7, CN: 1, AM: 9, AK: 1, BK: 7, BN: 1}
	rng := rand.New(rand.NewPCG(7, 8))
	a, b := randSlice(rng, 3*45), randSlice(rng, 63)
	var cv Converted
	cv.Convert(&a[0], len(a))
	want, c := make([]float32, 35), make([]float32, 35)
	Gemm(&want[0], &a[45], &b[0], s)
	GemmOps(&c[0], cv.At(&a[45]), Operand{F: &b[0]}, s)
	for i := range c {
		if math.Float32bits(c[i]) != math.Float32bits(want[i]) {
			t.Fatalf("cell %d = %v, Gemm gives %v", i, c[i], want[i])
		}
	}
	if n := testing.AllocsPerRun(3, func() { cv.Convert(&a[0], len(a)) }); n != 0 {
		t.Errorf("%v allocations per Convert into a grown Converted", n)
	}
	defer func() {
		if recover() == nil {
			t.Error("At outside the converted array did not panic")
		}
	}()
	cv.At(&b[0])
}

// TestPackA: an A packed once serves several calls with other B and C
// operands (the parts of a contraction split along its columns), a
// shape or operand other than the packed one panics, and repacking into
// a grown Packed allocates nothing.
func TestPackA(t *testing.T) {
	s := Shape{M: 45, N: 70, K: 300, CM: 70, CN: 1, AM: 1, AK: 45, BK: 70, BN: 1}
	cn, an, bn := s.spans()
	rng := rand.New(rand.NewPCG(9, 10))
	a := randSlice(rng, an)
	for _, tier := range []Tier{Go, AVX2, AVX512, AVX512BF16} {
		if !Available(tier) {
			continue
		}
		var p Packed
		PackATier(&p, tier, &a[0], s)
		for call := range 2 {
			b, c0 := randSlice(rng, bn), randSlice(rng, cn)
			want := append([]float32(nil), c0...)
			GemmTier(tier, &want[0], &a[0], &b[0], s)
			c := append([]float32(nil), c0...)
			GemmOps(&c[0], Operand{P: &p, F: &a[0]}, Operand{F: &b[0]}, s)
			for i := range c {
				if math.Float32bits(c[i]) != math.Float32bits(want[i]) {
					t.Fatalf("tier %v, call %d: cell %d = %v, GemmTier gives %v", tier, call, i, c[i], want[i])
				}
			}
		}
		if n := testing.AllocsPerRun(3, func() { PackATier(&p, tier, &a[0], s) }); n != 0 {
			t.Errorf("tier %v: %v allocations per PackA into a grown Packed", tier, n)
		}
	}
	b, c := make([]float32, bn), make([]float32, cn)
	var p, pb Packed
	PackA(&p, &a[0], s)
	Pack(&pb, &b[0], s)
	other := s
	other.Overwrite = true
	for name, f := range map[string]func(){
		"another shape":   func() { GemmOps(&c[0], Operand{P: &p}, Operand{F: &b[0]}, other) },
		"another operand": func() { GemmOps(&c[0], Operand{P: &p, F: &a[1]}, Operand{F: &b[0]}, s) },
		"B packed as A":   func() { GemmOps(&c[0], Operand{P: &pb}, Operand{F: &b[0]}, s) },
		"A packed as B":   func() { GemmOps(&c[0], Operand{F: &a[0]}, Operand{P: &p}, s) },
		"GemmPacked of A": func() { GemmPacked(&c[0], &b[0], &a[0], &p, s) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f()
		}()
	}
}

// TestConvertedOddRuns: a converted A copied by runs (copyRuns) with an
// odd reduction gets 0 as its last pair's missing member whatever the
// packing buffer held: a previous call leaves infinities there (Inf
// times B's 0 would make the cells NaN).
func TestConvertedOddRuns(t *testing.T) {
	prev := Shape{M: 14, N: 16, K: 32, CM: 16, CN: 1, AM: 99, AK: 1, BK: 1, BN: 96, K2: 3, AK2: 33, BK2: 32}
	s := Shape{M: 14, N: 16, K: 31, CM: 16, CN: 1, AM: 99, AK: 1, BK: 1, BN: 96, K2: 3, AK2: 33, BK2: 31}
	rng := rand.New(rand.NewPCG(11, 12))
	inf := make([]float32, 14*99)
	for i := range inf {
		inf[i] = float32(math.Inf(1))
	}
	a, b := randSlice(rng, 14*99), randSlice(rng, 16*96)
	for _, tier := range []Tier{Go, AVX2, AVX512, AVX512BF16} {
		if !Available(tier) {
			continue
		}
		h, hInf := make([]uint16, len(a)), make([]uint16, len(a))
		ConvertTier(tier, &h[0], &a[0], len(a))
		ConvertTier(tier, &hInf[0], &inf[0], len(a))
		want, c := make([]float32, 14*16), make([]float32, 14*16)
		GemmTier(tier, &want[0], &a[0], &b[0], s)
		GemmOpsTier(tier, &c[0], Operand{H: &hInf[0]}, Operand{F: &b[0]}, prev)
		clear(c)
		GemmOpsTier(tier, &c[0], Operand{H: &h[0]}, Operand{F: &b[0]}, s)
		for i := range c {
			if math.Float32bits(c[i]) != math.Float32bits(want[i]) {
				t.Fatalf("tier %v: cell %d = %v, GemmTier gives %v", tier, i, c[i], want[i])
			}
		}
	}
}
