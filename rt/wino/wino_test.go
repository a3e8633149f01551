package wino

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// direct is the reference: the convolution in float64, plain loops over
// a kernel stored [o][i][j][c].
func direct(y []float64, x, w []float32, g Geom) {
	for r := range g.H {
		for c := range g.W {
			for o := range g.O {
				s := 0.0
				for i := range 3 {
					for j := range 3 {
						for ci := range g.C {
							s += float64(x[(r+i)*g.XRow+(c+j)*g.C+ci]) * float64(w[((o*3+i)*3+j)*g.C+ci])
						}
					}
				}
				y[r*g.YRow+c*g.O+o] += s
			}
		}
	}
}

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

// TestConv compares Conv, in the assembly kernels where the CPU has them
// and in Go, with the float64 direct convolution on random data, over
// geometries that take every product kernel (1 to 4 column vectors and
// a part of one, tiles in chunks of rows and of columns), storing and
// adding. Tolerance: 1e-5 of the sum of the products' magnitudes.
func TestConv(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	geoms := []Geom{
		{H: 2, W: 2, C: 16, O: 16},
		{H: 32, W: 32, C: 16, O: 16},
		{H: 16, W: 16, C: 32, O: 32},
		{H: 8, W: 8, C: 64, O: 64},
		{H: 6, W: 10, C: 48, O: 80},
		{H: 4, W: 140, C: 128, O: 32},
		{H: 4, W: 6, C: 16, O: 144, Add: true},
	}
	for _, g0 := range geoms {
		for _, tier := range tiers() {
			g := g0
			g.XRow = (g.W+2)*g.C + 16*(1+rng.IntN(3))
			g.YRow = g.W*g.O + 16*rng.IntN(3)
			x := randSlice(rng, (g.H+2)*g.XRow)
			w := randSlice(rng, 9*g.C*g.O)
			y0 := randSlice(rng, g.H*g.YRow)
			y := append([]float32(nil), y0...)
			u := make([]float32, WeightsLen(g.C, g.O))
			Weights(&u[0], &w[0], g.O, g.C, 9*g.C, 3*g.C, g.C, 1)
			conv(tier, &y[0], &x[0], &u[0], g, new([bufLen]float32), new([bufLen]float32))
			want := make([]float64, len(y))
			mag := make([]float64, len(y))
			if g.Add {
				for i, v := range y0 {
					want[i] = float64(v)
				}
			}
			direct(want, x, w, g)
			abs := func(s []float32) []float32 {
				a := make([]float32, len(s))
				for i, v := range s {
					a[i] = float32(math.Abs(float64(v)))
				}
				return a
			}
			direct(mag, abs(x), abs(w), g)
			for r := range g.H {
				for c := range g.W {
					for o := range g.O {
						i := r*g.YRow + c*g.O + o
						if d := math.Abs(float64(y[i]) - want[i]); d > 1e-5*(mag[i]+math.Abs(want[i])) {
							t.Fatalf("%+v tier %d: y[%d][%d][%d] = %g, want %g", g, tier, r, c, o, y[i], want[i])
						}
					}
				}
			}
			// Cells between the rows (the stride's slack) stay as they were.
			for r := range g.H {
				for i := r*g.YRow + g.W*g.O; i < (r+1)*g.YRow; i++ {
					if y[i] != y0[i] {
						t.Fatalf("%+v tier %d: wrote y[%d] outside the pixels", g, tier, i)
					}
				}
			}
		}
	}
}

// TestWeightsFlipped checks the strides of Weights: a kernel read
// flipped and transposed through negative strides gives the transform of
// the flipped, transposed copy.
func TestWeightsFlipped(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	c, o := 16, 32
	w := randSlice(rng, 9*c*o) // [o][i][j][c]
	// f[c][i][j][o] = w[o][2-i][2-j][c]: f has c outputs and o inputs.
	f := make([]float32, len(w))
	for oi := range o {
		for i := range 3 {
			for j := range 3 {
				for ci := range c {
					f[((ci*3+i)*3+j)*o+oi] = w[((oi*3+2-i)*3+2-j)*c+ci]
				}
			}
		}
	}
	u1 := make([]float32, WeightsLen(o, c))
	u2 := make([]float32, WeightsLen(o, c))
	Weights(&u1[0], &f[0], c, o, 9*o, 3*o, o, 1)
	Weights(&u2[0], &w[(2*3+2)*c], c, o, 1, -3*c, -c, 9*c)
	for i := range u1 {
		if u1[i] != u2[i] {
			t.Fatalf("u[%d] = %g through strides, %g from the copy", i, u2[i], u1[i])
		}
	}
}

func TestCheck(t *testing.T) {
	good := Geom{H: 4, W: 4, C: 16, O: 32, XRow: 6 * 16, YRow: 4 * 32}
	if err := good.Check(); err != nil {
		t.Fatal(err)
	}
	for _, g := range []Geom{
		{H: 3, W: 4, C: 16, O: 16, XRow: 96, YRow: 64},
		{H: 4, W: 4, C: 8, O: 16, XRow: 96, YRow: 64},
		{H: 4, W: 4, C: 16, O: 16, XRow: 95, YRow: 64},
		{H: 4, W: 4, C: 2048, O: 16, XRow: 6 * 2048, YRow: 64},
	} {
		if err := g.Check(); !errors.Is(err, ErrGeom) {
			t.Errorf("%+v: Check = %v, want ErrGeom", g, err)
		}
	}
}

// TestConvAllocs: Conv allocates nothing (its buffers are on the stack).
func TestConvAllocs(t *testing.T) {
	g := Geom{H: 8, W: 8, C: 64, O: 64, XRow: 10 * 64, YRow: 8 * 64}
	x := make([]float32, 10*g.XRow)
	y := make([]float32, 8*g.YRow)
	u := make([]float32, WeightsLen(64, 64))
	if n := testing.AllocsPerRun(10, func() { Conv(&y[0], &x[0], &u[0], g) }); n != 0 {
		t.Fatalf("Conv allocates %v times per call", n)
	}
}

// TestMulKernels runs every product kernel of each set the CPU has (each
// tile height and number of column vectors) against the Go products on
// random planes, storing and adding.
func TestMulKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	n := 0
	for _, tier := range tiers()[1:] {
		lanes, tall := 16, maxRows[:]
		if tier == tierAVX2 {
			lanes, tall = 8, maxRows2[:]
		}
		for nv := 1; nv < len(tall); nv++ {
			for r := 1; r <= tall[nv]; r++ {
				for _, load := range []bool{false, true} {
					n++
					c, o := 16*(1+rng.IntN(3)), lanes*nv
					k := 1 + rng.IntN(c)
					ldv, ldm := r*c+16, r*o+32
					v := randSlice(rng, 16*ldv)
					u := randSlice(rng, 16*k*o)
					got := randSlice(rng, 16*ldm)
					want := make([]float32, len(got))
					for xi := range 16 {
						for i := range r {
							for j := range o {
								s := float32(0)
								if load {
									s = got[xi*ldm+i*o+j]
								}
								for kk := range k {
									s += v[xi*ldv+i*c+kk] * u[xi*k*o+kk*o+j]
								}
								want[xi*ldm+i*o+j] = s
							}
						}
					}
					// rows r (c floats apart), k steps of one float, o columns.
					products(tier, &got[0], &v[0], &u[0], r, k, o, 4*c, 4, 4*o, 4*o, 4*ldm, 4*ldv, 4*k*o, load)
					for xi := range 16 {
						for i := range r {
							for j := range o {
								g, w := got[xi*ldm+i*o+j], want[xi*ldm+i*o+j]
								if d := math.Abs(float64(g - w)); d > 1e-4*(1+math.Abs(float64(w))) {
									t.Fatalf("tier %d r=%d nv=%d k=%d load=%v: m[%d][%d][%d] = %g, want %g", tier, r, nv, k, load, xi, i, j, g, w)
								}
							}
						}
					}
				}
			}
		}
	}
	if n == 0 {
		t.Skip("no assembly kernels on this CPU or build")
	}
}

// tiers are the kernel sets this CPU and build run, tierGo first.
func tiers() []int {
	ts := []int{tierGo}
	for t := tierAVX2; t <= bestTier(); t++ {
		ts = append(ts, t)
	}
	return ts
}

// TestPadded: the copy holds the values in the middle and zeros around
// them, At finds them moved by the shift, and a second Copy of other
// dimensions keeps the margins zero.
func TestPadded(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var p Padded
	for _, dims := range [][4]int{{2, 3, 4, 5}, {1, 2, 6, 3}} {
		pad := [4]int{0, 2, 1, 0}
		src := randSlice(rng, dims[0]*dims[1]*dims[2]*dims[3])
		p.Copy(&src[0], dims, pad)
		pd := [4]int{}
		for i := range pd {
			pd[i] = dims[i] + 2*pad[i]
		}
		nz := 0
		for _, v := range p.buf {
			if v != 0 {
				nz++
			}
		}
		if nz != len(src) || len(p.buf) != pd[0]*pd[1]*pd[2]*pd[3] {
			t.Fatalf("dims %v: %d nonzero values of %d in %d cells", dims, nz, len(src), len(p.buf))
		}
		i := ((1%dims[0]*dims[1]+1)*dims[2]+2)*dims[3] + 1
		if got := *p.At(&src[i], [4]int{0, -1, 1, 0}); got != 0 && got != src[i+dims[3]-dims[2]*dims[3]] && i-dims[2]*dims[3] >= 0 {
			t.Fatalf("dims %v: At moved to %g", dims, got)
		}
		if got := *p.At(&src[i], [4]int{}); got != src[i] {
			t.Fatalf("dims %v: At = %g, want %g", dims, got, src[i])
		}
	}
}

// TestConvPad runs Conv on unpadded inputs (Geom.Pad) in each kernel set
// and checks that the results are the same bits as Conv of the same
// input copied into a zero-padded buffer: the same windows, so the same
// sums. The geometries cover one-tile rows and columns, chunks narrower
// than a tile row (the edge tiles inside and at the ends of chunks),
// several images with slack between rows and images, and adding.
func TestConvPad(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	geoms := []Geom{
		{H: 2, W: 2, C: 16, O: 16},
		{H: 2, W: 8, C: 16, O: 32},
		{H: 8, W: 2, C: 32, O: 16},
		{N: 3, H: 32, W: 32, C: 16, O: 16},
		{N: 2, H: 16, W: 16, C: 32, O: 32, Add: true},
		{H: 8, W: 8, C: 64, O: 64},
		{H: 6, W: 140, C: 128, O: 32},
		{H: 4, W: 36, C: 512, O: 64, Add: true},
	}
	for _, g0 := range geoms {
		for _, tier := range tiers() {
			n := max(g0.N, 1)
			gp := g0 // the padded copy's geometry
			gp.XRow = (gp.W+2)*gp.C + 16
			gp.XImg = (gp.H+2)*gp.XRow + 32
			gp.YRow = gp.W*gp.O + 16*rng.IntN(2)
			gp.YImg = gp.H*gp.YRow + 16
			g := gp
			g.Pad = true
			g.XRow = g.W*g.C + 16*rng.IntN(3)
			g.XImg = g.H*g.XRow + 16*rng.IntN(2)
			x := randSlice(rng, n*g.XImg)
			xp := make([]float32, n*gp.XImg)
			for i := range n {
				for r := range g.H {
					copy(xp[i*gp.XImg+(r+1)*gp.XRow+g.C:], x[i*g.XImg+r*g.XRow:i*g.XImg+r*g.XRow+g.W*g.C])
				}
			}
			w := randSlice(rng, 9*g.C*g.O)
			u := make([]float32, WeightsLen(g.C, g.O))
			Weights(&u[0], &w[0], g.O, g.C, 9*g.C, 3*g.C, g.C, 1)
			y0 := randSlice(rng, n*g.YImg)
			want, got := append([]float32(nil), y0...), append([]float32(nil), y0...)
			v, m := new([bufLen]float32), new([bufLen]float32)
			for i := range n {
				conv(tier, &want[i*g.YImg], &xp[i*gp.XImg], &u[0], gp, v, m)
				conv(tier, &got[i*g.YImg], &x[i*g.XImg], &u[0], g, v, m)
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%+v tier %d: y[%d] = %g unpadded, %g from the padded copy", g, tier, i, got[i], want[i])
				}
			}
			if tier == bestTier() {
				y := append([]float32(nil), y0...)
				Conv(&y[0], &x[0], &u[0], g)
				for i := range y {
					if math.Float32bits(y[i]) != math.Float32bits(got[i]) {
						t.Fatalf("%+v: Conv's y[%d] = %g, conv's %g", g, i, y[i], got[i])
					}
				}
			}
		}
	}
}

// TestKernelGrad compares KernelGrad, in the assembly kernels where the
// CPU has them and in Go, with the float64 sums on random data, over
// several images, channel counts and chunkings, storing and adding,
// whole and in parts (GradSums, the same bits whichever part finishes
// last). Tolerance: 1e-5 of the sum of the products' magnitudes.
func TestKernelGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	geoms := []Geom{
		{N: 2, H: 4, W: 4, C: 16, O: 16},
		{N: 3, H: 8, W: 12, C: 32, O: 48},
		{N: 1, H: 6, W: 70, C: 64, O: 80, Add: true},
		{N: 2, H: 2, W: 2, C: 16, O: 144},
	}
	for _, g0 := range geoms {
		for _, tier := range tiers() {
			g := g0
			g.XRow = (g.W+2)*g.C + 16
			g.YRow = g.W*g.O + 16
			g.XImg, g.YImg = (g.H+2)*g.XRow+16, g.H*g.YRow
			x := randSlice(rng, g.N*g.XImg)
			dy := randSlice(rng, g.N*g.YImg)
			dw0 := randSlice(rng, 9*g.C*g.O)
			want, mag := make([]float64, len(dw0)), make([]float64, len(dw0))
			for o := range g.O {
				for i := range 3 {
					for j := range 3 {
						for c := range g.C {
							k := ((o*3+i)*3+j)*g.C + c
							if g.Add {
								want[k] = float64(dw0[k])
							}
							for n := range g.N {
								for p := range g.H {
									for q := range g.W {
										a := float64(x[n*g.XImg+(p+i)*g.XRow+(q+j)*g.C+c]) * float64(dy[n*g.YImg+p*g.YRow+q*g.O+o])
										want[k] += a
										mag[k] += math.Abs(a)
									}
								}
							}
						}
					}
				}
			}
			check := func(dw []float32, how string) {
				for k := range dw {
					if d := math.Abs(float64(dw[k]) - want[k]); d > 1e-5*(mag[k]+math.Abs(want[k])) || math.IsNaN(float64(dw[k])) {
						t.Fatalf("%+v tier %d %s: dw[%d] = %g, want %g", g, tier, how, k, dw[k], want[k])
					}
				}
			}
			dw := append([]float32(nil), dw0...)
			acc := make([]float32, GradAccLen(g.C, g.O))
			sumTiles(tier, acc, &x[0], &dy[0], g, 0, g.N)
			writeGrad(&dw[0], acc, g, 9*g.C, 3*g.C, g.C)
			check(dw, "whole")
			if tier == bestTier() {
				// In 3 parts, run in reverse order: the last to finish
				// writes dw, the same bits as in order.
				var s GradSums
				var got [2][]float32
				for i, order := range [][]int{{0, 1, 2}, {2, 1, 0}} {
					got[i] = append([]float32(nil), dw0...)
					s.Prepare(g.C, g.O, 3)
					for _, p := range order {
						s.KernelGrad(&got[i][0], &x[0], &dy[0], g, 9*g.C, 3*g.C, g.C, p, 3)
					}
					check(got[i], "in 3 parts")
				}
				for k := range got[0] {
					if math.Float32bits(got[0][k]) != math.Float32bits(got[1][k]) {
						t.Fatalf("%+v: dw[%d] = %g with the parts in order, %g in reverse", g, k, got[0][k], got[1][k])
					}
				}
			}
		}
	}
}

// TestKernelGradRejectsPad: the kernel gradients read a padded x, so
// they refuse a geometry with Pad.
func TestKernelGradRejectsPad(t *testing.T) {
	g := Geom{H: 4, W: 4, C: 16, O: 16, XRow: 4 * 16, YRow: 4 * 16, Pad: true}
	if err := g.Check(); err != nil {
		t.Fatalf("Check: %v (Conv takes it)", err)
	}
	if err := g.checkGrad(); err == nil || !errors.Is(err, ErrGeom) {
		t.Fatalf("checkGrad = %v, want an ErrGeom", err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("KernelGrad took an unpadded x")
		}
	}()
	x, dy := make([]float32, 6*6*16), make([]float32, 4*4*16)
	dw, acc := make([]float32, 9*16*16), make([]float32, GradAccLen(16, 16))
	KernelGrad(&dw[0], &x[0], &dy[0], &acc[0], g, 9*16, 3*16, 16)
}
