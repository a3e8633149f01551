package bf16

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

// TestGemmBF16Tiers: GemmBF16 over bf16 operands gives, in every tier
// the CPU has and for every layout, the bits of the documented order on
// the operands widened to float32 (emulate, which rounds nothing
// further: a widened bf16 rounds to itself), and the bits of Gemm over
// the widened operands; cells outside the contraction stay untouched.
func TestGemmBF16Tiers(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, l := range layouts() {
		cn, an, bn := l.s.spans()
		cn += 7
		a16, b16 := make([]rt.BF16, an), make([]rt.BF16, bn)
		rt.BF16sFromFloat32s(a16, randSlice(rng, an))
		rt.BF16sFromFloat32s(b16, randSlice(rng, bn))
		a, b := make([]float32, an), make([]float32, bn)
		rt.Float32sFromBF16s(a, a16)
		rt.Float32sFromBF16s(b, b16)
		c0 := randSlice(rng, cn)
		want := append([]float32(nil), c0...)
		emulate(want, a, b, l.s)
		for _, tier := range []Tier{Go, AVX2, AVX512, AVX512BF16} {
			if !Available(tier) {
				continue
			}
			c := append([]float32(nil), c0...)
			GemmBF16Tier(tier, &c[0], &a16[0], &b16[0], l.s)
			g := append([]float32(nil), c0...)
			GemmTier(tier, &g[0], &a[0], &b[0], l.s)
			for i := range c {
				if math.Float32bits(c[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s, tier %v: cell %d = %v, want %v (the documented order)", l.name, tier, i, c[i], want[i])
				}
				if math.Float32bits(c[i]) != math.Float32bits(g[i]) {
					t.Fatalf("%s, tier %v: cell %d = %v, Gemm over the widened operands %v", l.name, tier, i, c[i], g[i])
				}
			}
		}
	}
}

// TestGemmBF16Allocs: no allocation in any tier.
func TestGemmBF16Allocs(t *testing.T) {
	s := Shape{M: 40, N: 50, K: 300, CM: 50, CN: 1, AM: 300, AK: 1, BK: 50, BN: 1}
	_, an, bn := s.spans()
	a, b, c := make([]rt.BF16, an), make([]rt.BF16, bn), make([]float32, s.M*s.N)
	for _, tier := range []Tier{Go, AVX2, AVX512, AVX512BF16} {
		if n := testing.AllocsPerRun(5, func() { GemmBF16Tier(tier, &c[0], &a[0], &b[0], s) }); n != 0 {
			t.Errorf("tier %v: %v allocations per call", tier, n)
		}
	}
}
