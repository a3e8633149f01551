package bf16

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

// gatherCase is the input gradient of a 3x3 convolution (stride 1)
// over bt images of h x w pixels, ko output and ci input channels,
// run as a gather: the flipped kernel (negative strides of B) over the
// output gradient padded by 2 (Padded), its cells the (h+2) x (w+2)
// pixels the transposed convolution's scatter reaches, in an array
// with one more row and column (left untouched).
type gatherCase struct{ bt, h, w, ko, ci int }

func (g gatherCase) shape() Shape {
	pw, cw := g.w+4, g.w+3
	return Shape{
		M: g.h + 2, N: g.ci, K: g.ko,
		CM: cw * g.ci, CN: 1, AM: pw * g.ko, AK: 1, BK: 9 * g.ci, BN: 1,
		K2: 3, AK2: g.ko, BK2: -g.ci, // kernel column 2 - k2
		K3: 3, AK3: pw * g.ko, BK3: -3 * g.ci, // kernel row 2 - k3
		M2: g.w + 2, CM2: g.ci, AM2: g.ko,
		M3: g.bt, CM3: (g.h + 3) * cw * g.ci, AM3: (g.h + 4) * pw * g.ko,
	}
}

// TestGemmGather: in every tier, with B as float32 or packed, the
// gather gives the documented order's bits on the padded operand
// (emulate), agrees with the scatter's sums (float64 over the rounded
// operands, within K*2^-24 of the magnitudes) on every cell it reaches
// and leaves the others as they were.
func TestGemmGather(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, g := range []gatherCase{{3, 5, 6, 12, 7}, {2, 4, 3, 5, 16}, {1, 8, 8, 16, 33}} {
		s := g.shape()
		dy := randSlice(rng, g.bt*g.h*g.w*g.ko)
		kern := randSlice(rng, g.ko*9*g.ci)
		cells := g.bt * (g.h + 3) * (g.w + 3) * g.ci
		c0 := randSlice(rng, cells)
		// The scatter: xg[b][y+i][x+j][c] += dy[b][y][x][o] * kern[o][i][j][c].
		sum, mag := scatterSums(g.bt, g.h, g.w, g.ko, g.ci, dy, kern, c0, func(b, y, x, i, j int) int {
			return (b*(g.h+3)+y+i)*(g.w+3) + x + j
		})
		// The padded operand as float32, for emulate.
		pad := make([]float32, g.bt*(g.h+4)*(g.w+4)*g.ko)
		for b := range g.bt {
			for y := range g.h {
				for x := range g.w {
					copy(pad[((b*(g.h+4)+y+2)*(g.w+4)+x+2)*g.ko:][:g.ko], dy[((b*g.h+y)*g.w+x)*g.ko:][:g.ko])
				}
			}
		}
		want := append([]float32(nil), c0...)
		emulate(want, pad, kern, s)
		bp := &kern[(2*3+2)*g.ci] // kernel row 2, column 2
		for _, tier := range []Tier{Go, AVX2, AVX512, AVX512BF16} {
			if !Available(tier) {
				continue
			}
			var pd Padded
			pd.ConvertTier(tier, &dy[0], [4]int{g.bt, g.h, g.w, g.ko}, [4]int{0, 2, 2, 0})
			var pk Packed
			PackTier(&pk, tier, bp, s)
			for _, form := range []Operand{{F: bp}, {P: &pk, F: bp}} {
				name := fmt.Sprintf("%+v, tier %v, packed %v", g, tier, form.P != nil)
				c := append([]float32(nil), c0...)
				GemmOpsTier(tier, &c[0], pd.At(&dy[0], [4]int{0, -2, -2, 0}), form, s)
				checkGathered(t, name, c, want, sum, mag, s.K*9)
			}
		}
	}
}

// TestPadded: the copy's margins are zero (also after a Convert with
// other dimensions into the same buffer), its cells the rounded values,
// At moves within the copy and panics outside it, and a Convert into a
// grown buffer allocates nothing.
func TestPadded(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	src := randSlice(rng, 2*7*5*3)
	var p Padded
	for _, d := range []struct{ dims, pad [4]int }{
		{[4]int{2, 7, 5, 3}, [4]int{0, 2, 1, 0}},
		{[4]int{1, 2, 7, 5}, [4]int{1, 1, 0, 0}}, // smaller: old cells in the margins
		{[4]int{1, 1, 70, 1}, [4]int{0, 0, 0, 3}},
		{[4]int{2, 7, 5, 3}, [4]int{0, 0, 0, 0}},
	} {
		p.Convert(&src[0], d.dims, d.pad)
		var pd [4]int
		for i := range pd {
			pd[i] = d.dims[i] + 2*d.pad[i]
		}
		if len(p.h) != pd[0]*pd[1]*pd[2]*pd[3] {
			t.Fatalf("%v: %d values, want %v", d, len(p.h), pd)
		}
		i := 0
		for a := range pd[0] {
			for b := range pd[1] {
				for c := range pd[2] {
					for e := range pd[3] {
						x := [4]int{a - d.pad[0], b - d.pad[1], c - d.pad[2], e - d.pad[3]}
						var want uint16
						inside := true
						s := 0
						for k := range x {
							inside = inside && x[k] >= 0 && x[k] < d.dims[k]
							s = s*d.dims[k] + x[k]
						}
						if inside {
							want = uint16(rt.BF16FromFloat32(src[s]))
						}
						if p.h[i] != want {
							t.Fatalf("%v: cell %v = %#x, want %#x", d, x, p.h[i], want)
						}
						i++
					}
				}
			}
		}
	}
	// At: element (1, 2, 3, 1) of [2][7][5][3], moved by (0, -2, 1, 0).
	p.Convert(&src[0], [4]int{2, 7, 5, 3}, [4]int{0, 2, 1, 0})
	op := p.At(&src[((1*7+2)*5+3)*3+1], [4]int{0, -2, 1, 0})
	if want := &p.h[((1*11+2)*7+5)*3+1]; op.H != want {
		t.Errorf("At: %p, want %p", op.H, want)
	}
	other := make([]float32, 4)
	for name, f := range map[string]func(){
		"outside the array": func() { p.At(&other[0], [4]int{}) },
		"past the margin":   func() { p.At(&src[0], [4]int{0, -3, 0, 0}) },
		"past the end":      func() { p.At(&src[len(src)-1], [4]int{0, 0, 2, 0}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
	if n := testing.AllocsPerRun(5, func() { p.Convert(&src[0], [4]int{2, 7, 5, 3}, [4]int{0, 2, 1, 0}) }); n != 0 {
		t.Errorf("Convert: %v allocations", n)
	}
}

// checkGathered fails t unless every cell of c has the bits of want (the
// documented summation order) and lies within (k+1)·2⁻²⁴ of the cell's
// float64 sum relative to the sum of its terms' magnitudes (mag): k
// products in float32, whatever the order.
func checkGathered(t *testing.T, name string, c, want []float32, sum, mag []float64, k int) {
	t.Helper()
	for i := range c {
		if math.Float32bits(c[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: cell %d = %v, want %v (the documented order)", name, i, c[i], want[i])
		}
		tol := float64(k+1)*0x1p-24*mag[i] + 1e-30
		if d := math.Abs(float64(c[i]) - sum[i]); d > tol {
			t.Fatalf("%s: cell %d = %v, the scatter's %v (difference %g > %g)", name, i, c[i], sum[i], d, tol)
		}
	}
}

// scatterSums is the float64 reference of a 3x3 convolution's input
// gradient as a scatter: c0 plus, for every pixel (b, y, x) of dy, tap
// (i, j), channel c < ci and output channel o < ko, the product of the
// bf16-rounded dy[b][y][x][o] and kern[o][i][j][c], added to cell
// at(b, y, x, i, j)*ci + c; and per cell the sum of its terms'
// magnitudes (for checkGathered's tolerance).
func scatterSums(bt, h, w, ko, ci int, dy, kern, c0 []float32, at func(b, y, x, i, j int) int) (sum, mag []float64) {
	sum, mag = make([]float64, len(c0)), make([]float64, len(c0))
	for i, x := range c0 {
		sum[i], mag[i] = float64(x), math.Abs(float64(x))
	}
	for b := range bt {
		for y := range h {
			for x := range w {
				for i := range 3 {
					for j := range 3 {
						for c := range ci {
							cell := at(b, y, x, i, j)*ci + c
							for o := range ko {
								p := float64(rt.RoundBF16(dy[((b*h+y)*w+x)*ko+o])) * float64(rt.RoundBF16(kern[(o*9+i*3+j)*ci+c]))
								sum[cell] += p
								mag[cell] += math.Abs(p)
							}
						}
					}
				}
			}
		}
	}
	return sum, mag
}
