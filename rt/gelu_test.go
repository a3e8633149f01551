package rt

import (
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// fma32Exact is a*b + c rounded once to float32, from exact rational
// arithmetic (an independent reference for FMA32).
func fma32Exact(a, b, c float32) float32 {
	x := new(big.Float).SetPrec(0).SetMode(big.ToNearestEven)
	pa, pb, pc := big.NewFloat(float64(a)), big.NewFloat(float64(b)), big.NewFloat(float64(c))
	p := new(big.Float).SetPrec(200).Mul(pa, pb)
	x.SetPrec(400).Add(p, pc)
	f, _ := x.Float32()
	return f
}

func TestFMA32(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	check := func(a, b, c float32) {
		t.Helper()
		if got, want := FMA32(a, b, c), fma32Exact(a, b, c); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("FMA32(%g, %g, %g) = %g, want %g", a, b, c, got, want)
		}
	}
	for range 100000 {
		a := float32(r.NormFloat64())
		b := float32(r.NormFloat64())
		c := float32(r.NormFloat64()) * float32(math.Ldexp(1, r.IntN(60)-30))
		check(a, b, c)
	}
	// Ties: a*b = 1 + 2^-24 (halfway between 1 and 1+2^-23) plus a tiny
	// c, which the float64 sum absorbs; and denormal results.
	a := float32(1 + 0x1p-12)
	b := float32(1 + 0x1p-12) // a*b = 1 + 2^-11 + 2^-24
	for _, c := range []float32{0x1p-60, -0x1p-60, 0x1p-100, -0x1p-100, 0} {
		check(a, b, c)
		check(a, -b, c)
	}
	for range 100000 {
		a := float32(r.NormFloat64()) * 0x1p-70
		b := float32(r.NormFloat64()) * 0x1p-70
		c := float32(r.NormFloat64()) * 0x1p-140
		check(a, b, c)
	}
	// Halfway cases built on purpose: c = -(a*b's float32 part) + half
	// an ulp of it + a tiny residue carried by the exact product.
	for range 100000 {
		a := float32(1 + r.IntN(1<<12)) // 12-bit integers: exact products
		b := float32(1+r.IntN(1<<12)) * 0x1p-12
		u := float32(math.Ldexp(1, r.IntN(20)-40))
		c := u * float32(r.IntN(5)-2)
		check(a, b, c)
	}
}

func ulps32(got, want float32) float64 {
	if got == want {
		return 0
	}
	d := math.Abs(float64(got) - float64(want))
	w := math.Abs(float64(want))
	ulp := float64(math.Nextafter32(float32(w), float32(math.Inf(1)))) - w
	if w < 0x1p-126 {
		ulp = 0x1p-149
	}
	return d / ulp
}

func TestExp32(t *testing.T) {
	worst := 0.0
	for x := float32(-104); x < 89; x = math.Nextafter32(x, 100) + 0.0007 {
		got, want := Exp32(x), float32(math.Exp(float64(x)))
		worst = max(worst, ulps32(got, want))
	}
	if worst > 1 {
		t.Fatalf("Exp32 is %.3g ulp off, want at most 1", worst)
	}
	for _, c := range []struct{ x, want float32 }{
		{float32(math.Inf(-1)), 0}, {-200, 0}, {float32(math.Inf(1)), float32(math.Inf(1))}, {0, 1},
	} {
		if got := Exp32(c.x); got != c.want {
			t.Errorf("Exp32(%g) = %g, want %g", c.x, got, c.want)
		}
	}
	if got := Exp32(float32(math.NaN())); got == got {
		t.Errorf("Exp32(NaN) = %g", got)
	}
}

// geluRef and geluGradRef are the float64 references: Φ from math.Erfc
// (no cancellation in either tail).
func geluRef(x float64) float64 { return x * 0.5 * math.Erfc(-x/math.Sqrt2) }
func geluGradRef(x float64) float64 {
	return 0.5*math.Erfc(-x/math.Sqrt2) + x*math.Exp(-0.5*x*x)/math.Sqrt(2*math.Pi)
}

// geluErr measures Gelu32 and GeluGrad32 at x: gelu's error in float32
// ulps of the reference for x >= -13.1 (below, e^(-x²/2) is a float32
// denormal and loses bits: there the absolute error is measured), the
// derivative's absolute error and its error in ulps outside [-1, -0.5]
// (its root is at x = -0.7518, where relative errors mean nothing).
type geluErr struct {
	gelu, geluTail, gradAbs, gradUlp float64
	at                               [4]float32
}

func (m *geluErr) add(x float32) {
	w := geluRef(float64(x))
	if x >= -13.1 {
		if u := ulps32(Gelu32(x), float32(w)); u > m.gelu {
			m.gelu, m.at[0] = u, x
		}
	} else if d := math.Abs(float64(Gelu32(x)) - w); d > m.geluTail {
		m.geluTail, m.at[3] = d, x
	}
	w = geluGradRef(float64(x))
	g := GeluGrad32(x)
	if d := math.Abs(float64(g) - w); d > m.gradAbs {
		m.gradAbs, m.at[1] = d, x
	}
	if (x < -1 || x > -0.5) && math.Abs(w) >= 0x1p-126 {
		if u := ulps32(g, float32(w)); u > m.gradUlp {
			m.gradUlp, m.at[2] = u, x
		}
	}
}

// The accuracy docs/design.md states for the float32 GELU (measured
// over every 7th float32 in [-20, 20] with OCANNLGEN_GELU_STEP=7).
const (
	geluMaxUlp     = 9
	geluTailMaxAbs = 0x1p-140
	geluGradMaxUlp = 9
	geluGradMaxAbs = 2.5e-7
)

func TestGelu32Accuracy(t *testing.T) {
	var m geluErr
	step := uint32(997)                                 // about 2.2M inputs in [-20, 20]
	if s := os.Getenv("OCANNLGEN_GELU_STEP"); s != "" { // 1: every float32 (hours)
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil || n == 0 {
			t.Fatalf("OCANNLGEN_GELU_STEP=%q: want a positive integer", s)
		}
		step = uint32(n)
	}
	for _, sign := range []uint32{0, 1 << 31} {
		for b := uint32(0); b <= math.Float32bits(20); b += step {
			m.add(math.Float32frombits(sign | b))
		}
	}
	t.Logf("gelu %.3g ulp (at %g), below -13.1 %.3g absolute (at %g); derivative %.3g ulp outside [-1, -0.5] (at %g), %.3g absolute (at %g)",
		m.gelu, m.at[0], m.geluTail, m.at[3], m.gradUlp, m.at[2], m.gradAbs, m.at[1])
	if m.gelu > geluMaxUlp || m.geluTail > geluTailMaxAbs || m.gradUlp > geluGradMaxUlp || m.gradAbs > geluGradMaxAbs {
		t.Errorf("over the bounds %d ulp, %g, %d ulp, %g", geluMaxUlp, geluTailMaxAbs, geluGradMaxUlp, geluGradMaxAbs)
	}
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	for _, c := range []struct{ x, gelu, grad float32 }{
		{inf, inf, 1}, {-inf, nan, 0}, {0, 0, 0.5}, {-100, 0, 0}, {100, 100, 1}, {nan, nan, nan},
	} {
		g, d := Gelu32(c.x), GeluGrad32(c.x)
		if !(g == c.gelu || g != g && c.gelu != c.gelu) || !(d == c.grad || d != d && c.grad != c.grad) {
			t.Errorf("x = %g: gelu %g, derivative %g; want %g, %g", c.x, g, d, c.gelu, c.grad)
		}
	}
}
