package bf16

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

// layout is a contraction with its operands' sizes, built from dims.
type layout struct {
	name string
	s    Shape
}

// layouts covers the forms the generated code passes: NN, NT (dot),
// TN, TT, a product stored transposed (the operands swap), a second
// and third reduction axis (a convolution), a second column axis,
// overwrite, odd and tiny reductions, edge tiles in m and n.
func layouts() []layout {
	var out []layout
	add := func(name string, s Shape) { out = append(out, layout{name, s}) }
	for _, d := range [][3]int{{37, 45, 29}, {14, 32, 256}, {29, 70, 513}, {1, 1, 1}, {5, 3, 2}, {100, 33, 300}} {
		m, n, k := d[0], d[1], d[2]
		add(fmt.Sprintf("NN%v", d), Shape{M: m, N: n, K: k, CM: n, CN: 1, AM: k, AK: 1, BK: n, BN: 1})
		add(fmt.Sprintf("NT%v", d), Shape{M: m, N: n, K: k, CM: n, CN: 1, AM: k, AK: 1, BK: 1, BN: k})
		add(fmt.Sprintf("TN%v", d), Shape{M: m, N: n, K: k, CM: n, CN: 1, AM: 1, AK: m, BK: n, BN: 1, Overwrite: true})
		add(fmt.Sprintf("TT%v", d), Shape{M: m, N: n, K: k, CM: n, CN: 1, AM: 1, AK: m, BK: 1, BN: k})
		add(fmt.Sprintf("Ctransposed%v", d), Shape{M: m, N: n, K: k, CM: 1, CN: m, AM: k, AK: 1, BK: 1, BN: k})
	}
	// A convolution: C[m][n] += sum_{kh<3, k<24} A[m*24 + kh*40 + k] * B[n*72 + kh*24 + k], a padded row stride.
	add("conv", Shape{M: 30, N: 40, K: 24, CM: 40, CN: 1, AM: 24, AK: 1, BK: 1, BN: 72, K2: 3, AK2: 40 * 24, BK2: 24})
	// Runs of 9 contiguous steps (odd: pairs straddle the runs) in both operands.
	add("n16", Shape{M: 30, N: 16, K: 40, CM: 16, CN: 1, AM: 40, AK: 1, BK: 16, BN: 1})
	add("n48", Shape{M: 17, N: 48, K: 33, CM: 48, CN: 1, AM: 33, AK: 1, BK: 48, BN: 1, Overwrite: true})
	add("oddruns", Shape{M: 20, N: 35, K: 9, CM: 35, CN: 1, AM: 40, AK: 1, BK: 1, BN: 50, K2: 4, AK2: 10, BK2: 12})
	add("k3", Shape{M: 17, N: 19, K: 5, CM: 19, CN: 1, AM: 5, AK: 1, BK: 19, BN: 1, K2: 3, AK2: 17 * 5, BK2: 19 * 5, K3: 4, AK3: 17 * 15, BK3: 19 * 15, Overwrite: true})
	add("n2", Shape{M: 16, N: 3, K: 50, CM: 9, CN: 3, AM: 1, AK: 16, BK: 9, BN: 3, N2: 3, CN2: 1, BN2: 1})
	// Columns in groups of 9 contiguous ones (the first convolution's
	// kernel gradient: 3 kernel columns x 3 channels, 3 kernel rows).
	add("n2groups", Shape{M: 16, N: 3, K: 40, CM: 27, CN: 9, AM: 1, AK: 16, BK: 70, BN: 21, N2: 9, CN2: 1, BN2: 1, Overwrite: true})
	for m := 1; m <= 15; m++ { // every tile height
		add(fmt.Sprintf("rows%d", m), Shape{M: m, N: 40, K: 18, CM: 40, CN: 1, AM: 18, AK: 1, BK: 40, BN: 1})
		// Three whole panels of 32 columns in one kernBF16p call, then
		// a panel of 16 (C loaded: the second k block).
		add(fmt.Sprintf("rowswide%d", m), Shape{M: m, N: 100, K: 300, CM: 100, CN: 1, AM: 300, AK: 1, BK: 100, BN: 1})
	}
	// A convolution's kernel gradient with the pixel loops folded into
	// K2 and K3 (rows of A and columns of B contiguous, the reduction in
	// runs of 10 and 6 steps along one stride: packed by runs).
	add("folded", Shape{M: 16, N: 48, K: 10, CM: 48, CN: 1, AM: 1, AK: 16 * 20, BK: 48 * 20, BN: 1, K2: 5, AK2: 16, BK2: 48, K3: 4, AK3: 16 * 5, BK3: 48 * 5})
	add("folded-odd", Shape{M: 20, N: 16, K: 7, CM: 16, CN: 1, AM: 1, AK: 20 * 12, BK: 16 * 12, BN: 1, K2: 12, AK2: 20, BK2: 16, K3: 3, AK3: 20 * 84, BK3: 16 * 84})
	// Kernel gradients whose B columns (kernel columns x channels) of
	// one progression of steps (the images) overlap the next one's (the
	// next pixel: 16 or 32 channels on), packed as windows
	// (packWindows): one block, and two blocks of 16 and 32 columns
	// shifts, M an edge of two panels.
	add("wgrad", Shape{M: 16, N: 48, K: 8, CM: 48, CN: 1, AM: 1, AK: 288, BK: 640, BN: 1, K2: 6, AK2: 16, BK2: 16, K3: 3, AK3: 96, BK3: 128})
	// Blocks of 8 progressions each one 16 columns on (cvtWindows).
	add("wgradrow", Shape{M: 16, N: 48, K: 32, CM: 48, CN: 1, AM: 1, AK: 384, BK: 800, BN: 1, K2: 8, AK2: 16, BK2: 16, K3: 3, AK3: 128, BK3: 160})
	add("wgrad32", Shape{M: 20, N: 96, K: 16, CM: 96, CN: 1, AM: 1, AK: 400, BK: 1344, BN: 1, K2: 4, AK2: 20, BK2: 32, K3: 5, AK3: 80, BK3: 192, Overwrite: true})
	add("empty-k", Shape{M: 3, N: 4, K: 0, CM: 4, CN: 1, Overwrite: true})
	// Row axes M2 and M3 (a forward convolution with its output pixels
	// folded into the rows): images [17][7][7][16] (A), a 3x3 kernel
	// [16][3][3][16] (B), outputs [17][3][5][16] (C); m an edge panel.
	add("m3conv", Shape{M: 17, N: 16, K: 48, CM: 240, CN: 1, AM: 784, AK: 1, BK: 1, BN: 144, K2: 3, AK2: 112, BK2: 48,
		M2: 5, CM2: 16, AM2: 16, M3: 3, CM3: 80, AM3: 112, Overwrite: true})
	// The batch as m, 4 KiB apart in C (a multiple: the rows would share
	// an L1 set), its pixels in M2 and M3: rt/bf16 runs the pixels as the
	// tiles' rows (rowAxes), M2's (10 rows, an edge panel) or M3's (9).
	add("m2batch", Shape{M: 9, N: 16, K: 48, CM: 1024, CN: 1, AM: 1152, AK: 1, BK: 1, BN: 144, K2: 3, AK2: 192, BK2: 48,
		M2: 10, CM2: 16, AM2: 16, M3: 4, CM3: 160, AM3: 192, Overwrite: true})
	add("m3batch", Shape{M: 3, N: 40, K: 24, CM: 2048, CN: 1, AM: 500, AK: 1, BK: 1, BN: 48, K2: 2, AK2: 40, BK2: 24,
		M2: 2, CM2: 9 * 40, AM2: 100, M3: 9, CM3: 40, AM3: 8})
	add("m2edge", Shape{M: 9, N: 40, K: 19, CM: 40, CN: 1, AM: 19, AK: 1, BK: 40, BN: 1, M2: 3, CM2: 9 * 40, AM2: 9 * 19})
	// C columns strided, rows contiguous: not swapped with M2 (the tile).
	add("m2colsC", Shape{M: 5, N: 7, K: 9, CM: 1, CN: 20, AM: 9, AK: 1, BK: 1, BN: 9, M2: 4, CM2: 5, AM2: 45})
	add("m2A1", Shape{M: 20, N: 33, K: 40, CM: 33, CN: 1, AM: 1, AK: 20, BK: 33, BN: 1, M2: 2, CM2: 20 * 33, AM2: 800})
	// Runs of the lengths copyRuns meets with a converted A (a masked
	// tail only, whole chunks of 32, both; odd reductions, a run across
	// two k blocks), rows at odd offsets, several panels.
	for _, k := range []int{8, 31, 32, 33, 64, 77, 100} {
		add(fmt.Sprintf("runs%d", k), Shape{M: 23, N: 20, K: k, CM: 20, CN: 1, AM: 3*k + 7, AK: 1, BK: 1, BN: 3 * k, K2: 3, AK2: k + 3, BK2: k})
	}
	// B contiguous along the reduction in full panels (cvtColumns16):
	// a 16-column panel and an odd block; runs of whole pairs with gaps
	// between them, one cut by the k block's end.
	add("NTn16", Shape{M: 20, N: 48, K: 77, CM: 48, CN: 1, AM: 77, AK: 1, BK: 1, BN: 80})
	add("NTruns", Shape{M: 9, N: 32, K: 10, CM: 32, CN: 1, AM: 300, AK: 1, BK: 1, BN: 400, K2: 30, AK2: 10, BK2: 12, Overwrite: true})
	add("m3empty-k", Shape{M: 3, N: 4, K: 0, CM: 4, CN: 1, M2: 2, CM2: 12, M3: 2, CM3: 24, Overwrite: true})
	return out
}

// emulate is the documented order in plain loops, from the rounded
// operands: independent of the packing and the kernels.
func emulate(c, a, b []float32, s Shape) {
	bz := s.norm().bOff // b[0] is the lowest element (negative strides)
	s.K2, s.K3, s.N2 = max(s.K2, 1), max(s.K3, 1), max(s.N2, 1)
	kt := s.K * s.K2 * s.K3
	ao := func(arow, r int) int {
		return arow + r/(s.K*s.K2)*s.AK3 + r/s.K%s.K2*s.AK2 + r%s.K*s.AK
	}
	bo := func(n, n2, r int) int {
		return bz + n*s.BN + n2*s.BN2 + r/(s.K*s.K2)*s.BK3 + r/s.K%s.K2*s.BK2 + r%s.K*s.BK
	}
	for _, row := range rowOffsets(s) {
		arow, crow := row[0], row[1]
		for n := range s.N {
			for n2 := range s.N2 {
				ci := crow + n*s.CN + n2*s.CN2
				acc := c[ci]
				if s.Overwrite {
					acc = 0
				}
				for p := 0; p < kt; p += 2 {
					var odd float32
					if p+1 < kt {
						odd = rt.RoundBF16(a[ao(arow, p+1)]) * rt.RoundBF16(b[bo(n, n2, p+1)])
					}
					acc += odd
					acc += rt.RoundBF16(a[ao(arow, p)]) * rt.RoundBF16(b[bo(n, n2, p)])
				}
				c[ci] = acc
			}
		}
	}
}

// reference is the float64 sum of each cell's products and of their
// magnitudes, from the rounded operands (round) or the float32 ones.
func reference(c0, a, b []float32, s Shape, round bool) (sum, mag []float64) {
	bz := s.norm().bOff
	s.K2, s.K3, s.N2 = max(s.K2, 1), max(s.K3, 1), max(s.N2, 1)
	sum, mag = make([]float64, len(c0)), make([]float64, len(c0))
	for i, x := range c0 {
		sum[i], mag[i] = float64(x), math.Abs(float64(x))
	}
	r := func(x float32) float64 {
		if round {
			return float64(rt.RoundBF16(x))
		}
		return float64(x)
	}
	for _, row := range rowOffsets(s) {
		arow, crow := row[0], row[1]
		for n := range s.N {
			for n2 := range s.N2 {
				ci := crow + n*s.CN + n2*s.CN2
				if s.Overwrite {
					sum[ci], mag[ci] = 0, 0
				}
				for k3 := range s.K3 {
					for k2 := range s.K2 {
						for k := range s.K {
							p := r(a[arow+k3*s.AK3+k2*s.AK2+k*s.AK]) * r(b[bz+n*s.BN+n2*s.BN2+k3*s.BK3+k2*s.BK2+k*s.BK])
							sum[ci] += p
							mag[ci] += math.Abs(p)
						}
					}
				}
			}
		}
	}
	return sum, mag
}

// rowOffsets lists the rows of s (m, m2, m3; m innermost) as their
// offsets in A and C.
func rowOffsets(s Shape) [][2]int {
	var out [][2]int
	for m3 := range max(s.M3, 1) {
		for m2 := range max(s.M2, 1) {
			for m := range s.M {
				out = append(out, [2]int{m*s.AM + m2*s.AM2 + m3*s.AM3, m*s.CM + m2*s.CM2 + m3*s.CM3})
			}
		}
	}
	return out
}

func randSlice(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// TestGemmTiers: every tier the CPU has gives, for every layout, the
// bits of the documented order (emulate), cells outside the contraction
// untouched; and the result is within K*2^-24 (plus one rounding) of the
// float64 sum of the rounded operands' products, and within 2^-7 of the
// magnitudes of the unrounded float32 product.
func TestGemmTiers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, l := range layouts() {
		cn, an, bn := l.s.spans()
		cn += 7 // cells past the end stay as they were
		a, b, c0 := randSlice(rng, an), randSlice(rng, bn), randSlice(rng, cn)
		want := append([]float32(nil), c0...)
		emulate(want, a, b, l.s)
		sumR, magR := reference(c0, a, b, l.s, true)
		sumF, magF := reference(c0, a, b, l.s, false)
		kt := l.s.K * max(l.s.K2, 1) * max(l.s.K3, 1)
		for _, tier := range []Tier{Go, AVX2, AVX512, AVX512BF16} {
			if !Available(tier) {
				t.Logf("%s: tier %v not available here", l.name, tier)
				continue
			}
			c := append([]float32(nil), c0...)
			GemmTier(tier, &c[0], &a[0], &b[0], l.s)
			for i := range c {
				if math.Float32bits(c[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s, tier %v: cell %d = %v, want %v (the documented order)", l.name, tier, i, c[i], want[i])
				}
				tolR := float64(kt+1)*0x1p-24*magR[i] + 1e-30
				if d := math.Abs(float64(c[i]) - sumR[i]); d > tolR {
					t.Fatalf("%s, tier %v: cell %d = %v, rounded-operand reference %v (difference %g > %g)", l.name, tier, i, c[i], sumR[i], d, tolR)
				}
				tolF := 0x1p-7*magF[i] + 1e-30
				if d := math.Abs(float64(c[i]) - sumF[i]); d > tolF {
					t.Fatalf("%s, tier %v: cell %d = %v, float32 reference %v (difference %g > %g)", l.name, tier, i, c[i], sumF[i], d, tolF)
				}
			}
		}
	}
}

// TestGemmAllocs: no allocation in any tier.
func TestGemmAllocs(t *testing.T) {
	s := Shape{M: 40, N: 50, K: 300, CM: 50, CN: 1, AM: 300, AK: 1, BK: 50, BN: 1}
	_, an, bn := s.spans()
	a, b, c := make([]float32, an), make([]float32, bn), make([]float32, s.M*s.N)
	for _, tier := range []Tier{Go, AVX2, AVX512, AVX512BF16} {
		if n := testing.AllocsPerRun(5, func() { GemmTier(tier, &c[0], &a[0], &b[0], s) }); n != 0 {
			t.Errorf("tier %v: %v allocations per call", tier, n)
		}
	}
}

// TestBest: OCANNLGEN_CPU's limit holds.
func TestBest(t *testing.T) {
	if !allowed(Best()) || !supported(Best()) {
		t.Errorf("Best() = %v is not allowed or supported", Best())
	}
	t.Logf("best tier: %v", Best())
}

// TestEnvForcesTier: OCANNLGEN_CPU selects each tier (at most the CPU's
// best): the test binary runs itself under each value and reports Best.
func TestEnvForcesTier(t *testing.T) {
	if os.Getenv("OCANNLGEN_BF16_REPORT") != "" {
		fmt.Printf("best=%v\n", Best())
		return
	}
	top := Go
	for tr := AVX512BF16; tr > Go; tr-- {
		if supported(tr) {
			top = tr
			break
		}
	}
	for _, c := range []struct {
		env  string
		want Tier
	}{{"purego", Go}, {"avx2", AVX2}, {"avx512", AVX512}, {"avx512bf16", AVX512BF16}, {"", AVX512BF16}} {
		want := min(c.want, top)
		for want > Go && !supported(want) {
			want--
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestEnvForcesTier$")
		cmd.Env = append(os.Environ(), "OCANNLGEN_CPU="+c.env, "OCANNLGEN_BF16_REPORT=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("OCANNLGEN_CPU=%s: %v\n%s", c.env, err, out)
		}
		if !strings.Contains(string(out), "best="+want.String()+"\n") {
			t.Errorf("OCANNLGEN_CPU=%q: %s, want best=%v", c.env, out, want)
		}
	}
}
