package loadcheck

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

// TestAdamKernelMatchesRT: the generated ocannlAdam (the Adam kernel of
// the CPU's tier over the whole vectors, rt.Adam over the rest) leaves
// the same bits as rt.Adam in the parameters and both moments, for
// lengths around the vectors' lanes, Adam and AdamW, early and late
// steps, and special values (zeros of both signs, denormals, huge
// gradients, infinities, NaNs). Run it in every tier: the default, and
// OCANNLGEN_CPU=avx2 and -tags purego (rt.Adam alone).
func TestAdamKernelMatchesRT(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	special := []float32{0, float32(math.Copysign(0, -1)), 1e-40, -1e-42, 3e38, -3e38,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1, -1, 1e-20}
	val := func() float32 {
		if r.IntN(8) == 0 {
			return special[r.IntN(len(special))]
		}
		return float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(9)-4)))
	}
	for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100, 1000, 4099} {
		for _, decoupled := range []bool{false, true} {
			for _, step := range []int{1, 2, 10, 1000, 1 << 20} {
				wd := float32(0)
				if decoupled {
					wd = 0.01
				}
				mk := func() []float32 {
					x := make([]float32, n)
					for i := range x {
						x[i] = val()
					}
					return x
				}
				p, g, m, v := mk(), mk(), mk(), mk()
				for i := range v {
					v[i] = float32(math.Abs(float64(v[i])))
				}
				cp := func(x []float32) []float32 { return append([]float32(nil), x...) }
				p2, m2, v2 := cp(p), cp(m), cp(v)
				lr := float32(3e-4)
				ocannlAdam(p, g, m, v, step, lr, 0.9, 0.999, 1e-8, wd, decoupled)
				rt.Adam(p2, g, m2, v2, step, lr, 0.9, 0.999, 1e-8, wd, decoupled)
				for _, c := range []struct {
					name      string
					got, want []float32
				}{{"param", p, p2}, {"m", m, m2}, {"v", v, v2}} {
					for i := range c.got {
						if math.Float32bits(c.got[i]) != math.Float32bits(c.want[i]) && !(c.got[i] != c.got[i] && c.want[i] != c.want[i]) {
							t.Fatalf("n=%d decoupled=%v step=%d: %s[%d] = %g (%#x), rt.Adam %g (%#x)", n, decoupled, step, c.name, i,
								c.got[i], math.Float32bits(c.got[i]), c.want[i], math.Float32bits(c.want[i]))
						}
					}
				}
			}
		}
	}
}
