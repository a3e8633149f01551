package asm

import (
	"math"

	"github.com/mmcloughlin/avo/reg"
	"github.com/ocannlgen/ocannlgen/rt"
)

// The float32 GELU (issue 25): gelu and its derivative gelu_grad in
// float32 lanes, rt.Gelu32 and rt.GeluGrad32 operation for operation
// (the same IEEE float32 operations, FMAs rounded once as rt.FMA32 rounds
// them, exp32 as rt.Exp32), so the AVX2 kernel, the AVX-512 kernel and
// the Go loops (which call rt) give the same bits. rt/gelu.go has the
// algorithm and docs/design.md its accuracy. float64 kernels keep the
// float64 lanes (gelu64; gelu_grad as the former derivative expression,
// geluGrad64).

// geluTail32 is rt's geluTail: e and gg with Φ(-a) = e·gg, and a =
// min(|x|, rt.Gelu32AMax).
func (g *mgen) geluTail32(x reg.VecVirtual) (e, gg, a reg.VecVirtual) {
	c := g.c
	a = g.vec()
	if g.cfg.Wide { // VANDPS on ZMM needs AVX512DQ
		c.VPANDD(g.kreg(g.b32(1<<31-1)), x, a)
	} else {
		c.VANDPS(g.b32(1<<31-1), x, a)
	}
	c.VMINPS(a, g.kreg(g.k32(rt.Gelu32AMax)), a) // min(a, 14.5): NaN passes
	d := g.vec()
	c.VADDPS(g.kop(g.k32(rt.Gelu32K)), a, d)
	r := g.ld(g.k32(1))
	c.VDIVPS(d, r, r) // 1/d
	q := g.vec()
	c.VSUBPS(g.kop(g.k32(rt.Gelu32K)), a, q)
	c.VMULPS(r, q, q)
	cs := rt.Gelu32Coeffs()
	gg = g.ld(g.k32(cs[0]))
	for _, k := range cs[1:] {
		c.VFMADD213PS(g.kop(g.k32(k)), q, gg) // gg = q*gg + k
	}
	c.VMULPS(r, gg, gg) // G = P(q)/d
	s := g.vec()
	c.VMULPS(a, a, s)
	lo := g.vec()
	c.VMOVUPS(s, lo)
	c.VFMSUB231PS(a, a, lo) // a*a - s, exact
	c.VMULPS(g.kop(g.k32(-0.5)), s, s)
	e = g.exp32(s, false)
	c.VMULPS(g.kop(g.k32(-0.5)), lo, lo)
	c.VFMADD231PS(e, lo, e) // e*(-lo/2) + e
	return e, gg, a
}

// pickSign is x < 0 ? t : 1 - t.
func (g *mgen) pickSign(x, t reg.VecVirtual) reg.VecVirtual {
	c := g.c
	om := g.ld(g.k32(1))
	c.VSUBPS(t, om, om)
	return g.sel(g.cmp(cmpLT, x, g.constVec(0)), t, om)
}

// gelu32 is rt.Gelu32: x·(x < 0 ? h : 1 - h), h = Φ(-|x|).
func (g *mgen) gelu32(x reg.VecVirtual) reg.VecVirtual {
	e, gg, _ := g.geluTail32(x)
	g.c.VMULPS(gg, e, e) // h
	phi := g.pickSign(x, e)
	g.c.VMULPS(x, phi, phi)
	return phi
}

// geluGrad32 is rt.GeluGrad32: x < 0 ? t : 1 - t, t = e·(G - a/√(2π)).
func (g *mgen) geluGrad32(x reg.VecVirtual) reg.VecVirtual {
	e, gg, a := g.geluTail32(x)
	g.c.VFNMADD231PS(g.kop(g.k32(rt.Gelu32InvSqrt2Pi)), a, gg) // G - a/√(2π)
	g.c.VMULPS(gg, e, e)
	return g.pickSign(x, e)
}

// geluGrad64 is gelu_grad in float64 lanes: the expression the
// derivative of gelu was before gelu_grad existed, 0.5*(1 + erf(x/√2)) +
// x*(1/√(2π)*exp(-0.5*(x*x))), each operation as the map kernel of that
// expression computed it (erf64, exp64), so float64 results keep their
// bits.
func (g *mgen) geluGrad64(x reg.VecVirtual) reg.VecVirtual {
	c := g.c
	u := c.YMM()
	c.VMULPD(g.k64(geluInvSqrt2), x, u)
	u = g.erf64(u, u)
	c.VADDPD(g.k64(1), u, u)
	c.VMULPD(g.k64(0.5), u, u)
	s := c.YMM()
	c.VMULPD(x, x, s)
	c.VMULPD(g.k64(-0.5), s, s)
	p := g.exp64(s, false)
	c.VMULPD(g.k64(geluInvSqrt2Pi), p, p)
	c.VMULPD(x, p, p)
	c.VADDPD(p, u, u)
	return u
}

// The float64 constants of gelu_grad's float64 expression, computed as
// package ops computes them.
var (
	geluInvSqrt2   = 1 / math.Sqrt2
	geluInvSqrt2Pi = 1 / math.Sqrt(2*math.Pi)
)
