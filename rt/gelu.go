package rt

import "math"

// The float32 GELU (issue 25): gelu x = x Φ(x) and its derivative
// Φ(x) + x φ(x), computed in float32 operations only, so that the
// pointwise kernels of emit/asm (AVX2 and AVX-512, 8 and 16 lanes) can
// repeat them operation for operation and give the same bits as these
// functions, which the generated Go loops call. Every step is an IEEE
// float32 addition, multiplication or division, a fused multiply-add
// rounded once ([FMA32]), a round to nearest even, a minimum or maximum,
// or an exact power-of-two scaling; products are converted with
// float32(...) so that the Go compiler never fuses them (from GOAMD64 v3
// on it may fuse a*b + c otherwise).
//
// With a = min(|x|, 14.5), the lower tail Φ(-a) = e^(-a²/2) G(a), where
// G(a) = Φ(-a) e^(a²/2) (the Mills ratio over √(2π)) is smooth and
// decreases from 1/2 to about 1/(√(2π) a):
//
//	d = a + 3, r = 1/d, q = (a - 3) r        (q in [-1, 0.657])
//	G = P(q) r                                (P: degree 10, Horner, FMA)
//	s = a·a, e = fma(a, a, -s)                (a² = s + e exactly)
//	E = exp32(-s/2) (1 - e/2)                 (e^(-a²/2))
//	h = E G                                   (Φ(-a))
//
// P(q) = G(a)(a+3) with a = 3(1+q)/(1-q) is a Chebyshev fit (mpmath
// chebyfit, error 1.4e-9 on [-1, 11.5/17.5]; the float32 coefficients add
// 3.9e-8 relative). Then gelu x = x h for x < 0 and x (1 - h) otherwise:
// no 1 + erf cancels, so the lower tail keeps its relative accuracy. The
// derivative is T = E (G - a/√(2π)) for x < 0 and 1 - T otherwise (Φ(-a)
// - a φ(a) = E (G - a/√(2π))). Past a = 14.5 E is 0 (e^-105 rounds to 0
// in float32).
//
// Accuracy (TestGelu32Accuracy, against float64 math.Erfc; measured
// over every 7th float32 in [-20, 20]): gelu within 9 ulps for x >=
// -13.1, its derivative within 8 ulps outside [-1, -0.5] and 1.85e-7
// everywhere; docs/design.md ("Vector transcendentals") has the details.

// geluP are the coefficients of P, highest degree first.
var geluP = [...]float32{
	5.53559657e-05, 0.000133125912, -0.000244582654, -0.00103422208, 0.00102413574, 0.00696981326,
	-0.0104622934, -0.0472627468, 0.230017677, -0.509332001, 0.729083717,
}

// Gelu32Coeffs returns the coefficients of the polynomial P of [Gelu32],
// highest degree first (emit/asm's kernels use the same ones).
func Gelu32Coeffs() []float32 { return append([]float32(nil), geluP[:]...) }

// The constants of the float32 GELU.
const (
	// Gelu32K is the shift of q = (a - K)/(a + K).
	Gelu32K float32 = 3
	// Gelu32AMax is where |x| is clamped: beyond it e^(-x²/2) is 0 in
	// float32.
	Gelu32AMax float32 = 14.5
	// Gelu32InvSqrt2Pi is 1/√(2π) in float32.
	Gelu32InvSqrt2Pi = float32(0.3989422804014327)
)

// geluTail returns E and G (Φ(-a) = E·G) for a = min(|x|, 14.5), and a.
func geluTail(x float32) (e, g, a float32) {
	a = min(float32(math.Abs(float64(x))), Gelu32AMax) // NaN stays NaN
	d := a + Gelu32K
	r := 1 / d
	q := float32((a - Gelu32K) * r)
	p := geluP[0]
	for _, c := range geluP[1:] {
		p = FMA32(p, q, c)
	}
	g = float32(p * r)
	s := float32(a * a)
	lo := FMA32(a, a, -s)
	e = Exp32(float32(-0.5 * s))
	e = FMA32(e, float32(-0.5*lo), e)
	return e, g, a
}

// Gelu32 is gelu x = x Φ(x) in float32, the float32 kernels' value bit
// for bit. gelu(+Inf) = +Inf, gelu(-Inf) = NaN (x·0, as x (1 +
// erf(x/√2))/2 gives), NaN gives NaN.
func Gelu32(x float32) float32 {
	e, g, _ := geluTail(x)
	h := float32(e * g)
	if x < 0 {
		return float32(x * h)
	}
	return float32(x * (1 - h))
}

// GeluGrad32 is the derivative of gelu, Φ(x) + x φ(x), in float32, the
// float32 kernels' value bit for bit. It is 0 at -Inf and 1 at +Inf;
// NaN gives NaN.
func GeluGrad32(x float32) float32 {
	e, g, a := geluTail(x)
	t := float32(e * FMA32(-a, Gelu32InvSqrt2Pi, g))
	if x < 0 {
		return t
	}
	return 1 - t
}

// The float32 exp of the kernels (emit/asm exp32): ln 2 as exp32Ln2Hi
// (float32(ln 2)) + exp32Ln2Lo.
const (
	exp32Ln2Hi = float32(math.Ln2)
	exp32Ln2Lo = float32(math.Ln2 - float64(exp32Ln2Hi))
)

// exp32Coeffs are the Taylor coefficients 1/k! of e^r, k = 7 down to 0,
// computed as emit/asm computes them.
var exp32Coeffs = func() (cs [8]float32) {
	f := 1.0
	for k := 0; k <= 7; k++ {
		if k > 0 {
			f *= 1 / float64(k)
		}
		cs[7-k] = float32(f)
	}
	return cs
}()

// Exp32 is e^x in float32 as the float32 pointwise kernels compute it
// (within 1 ulp of float32(math.Exp(float64(x))); emit/asm exp32): x
// clamped to [-104, 89] (NaN passes), n = round(x log2 e) to even,
// r = x - n ln2 in two FMA steps (the first exact), e^r by its degree-7
// Taylor polynomial (FMA Horner), then scaled by 2^floor(n/2) and
// 2^(n-floor(n/2)) so that a denormal result rounds once.
func Exp32(x float32) float32 {
	t := min(max(x, -104), 89)
	n := float32(math.RoundToEven(float64(float32(t * float32(math.Log2E)))))
	t = FMA32(-n, exp32Ln2Hi, t)
	t = FMA32(-n, exp32Ln2Lo, t)
	p := exp32Coeffs[0]
	for _, c := range exp32Coeffs[1:] {
		p = FMA32(p, t, c)
	}
	if n != n { // NaN
		return p
	}
	n1 := float32(math.Floor(float64(float32(0.5 * n))))
	n2 := n - n1
	p = float32(p * math.Float32frombits(uint32(int32(n1)+127)<<23))
	return float32(p * math.Float32frombits(uint32(int32(n2)+127)<<23))
}

// FMA32 is a*b + c rounded once to float32, as the vector FMA
// instructions compute it (Go has no float32 FMA). The product is exact
// in float64 and the sum s is rounded once there; float32(s) then rounds
// a second time, which is wrong only when s falls exactly halfway
// between two float32 values while the exact sum does not: the sum's
// exact error (TwoSum) then decides the direction. In the float32
// normal range a halfway s has the low 29 bits of its fraction 1<<28,
// which the fast path rules out.
func FMA32(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	s := p + float64(c)
	if u := math.Float64bits(s); u&(1<<29-1) != 1<<28 && u&(0x7ff<<52) >= (1023-126)<<52 {
		return float32(s) // not halfway between two float32s, |s| >= 2^-126
	}
	return fma32Tie(p, float64(c), s)
}

// fma32Tie is FMA32's rounding of s = p + c (rounded) where s may be
// halfway between two float32 values or in the subnormal range.
func fma32Tie(p, c, s float64) float32 {
	r := float32(s)
	bb := s - p
	err := (p - (s - bb)) + (c - bb)
	if err == 0 || float64(r) == s || math.IsInf(s, 0) || s != s {
		return r
	}
	// The float32 neighbour of r on s's other side.
	var o float32
	if float64(r) < s {
		o = math.Nextafter32(r, float32(math.Inf(1)))
	} else {
		o = math.Nextafter32(r, float32(math.Inf(-1)))
	}
	if float64(r)+float64(o) != 2*s {
		return r // not a tie
	}
	if (err > 0) == (float64(o) > float64(r)) {
		return o
	}
	return r
}
