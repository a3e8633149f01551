package asm

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
	"github.com/ocannlgen/ocannlgen/emit/target"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
)

// The transcendental and other unary primitives of the pointwise kernels
// (issue 10): vector versions of the Go path's math.Exp, math.Log, ...
// for the AVX2 tier; a map using one the AVX-512 tier lacks (wideTrans)
// is not emitted there (its dispatch is `if ocannlAVX2 { kernel } else {
// Go loops }`, and AVX-512 machines run the AVX2 kernel). The AVX-512
// tier has float32 exp and exp2 (exp32 on 16 lanes: the same operations
// lane by lane, so the same bits as the AVX2 kernel), and sqrt, recip,
// neg, not and sat01 in both precisions: the primitives of a softmax and
// a layer norm, and the float32 gelu and gelu_grad (gelu32.go: float32
// operations that the Go path, package rt, repeats bit for bit).
//
// The functions the Go path computes in float64 (log, log2, tanh, erf,
// gelu and gelu_grad of float64 arrays, gelu_tanh, recip_sqrt, fma) are
// computed here in float64 lanes
// too: a float32 vector is widened into two float64 halves, each half is
// evaluated and the halves are narrowed back. So float32 results are the
// float64 value rounded once more, exactly as float32(math.Log(float64(x)))
// is: denormal float32 results, overflow to +Inf and float32 denormal
// inputs need no special path. exp and exp2 have a float32 version
// (exp32, four times faster than widening, still within 1 ulp). sqrt and
// recip are the exact VSQRTP and VDIVP (bit-identical to the Go path);
// recip_sqrt, sat01, neg, not and fma match it bit for bit as well, and
// so do erf, gelu and gelu_tanh (Go's math compiled for GOAMD64 v1 or
// v2): they repeat math.Erf, math.Tanh and amd64 math.Exp's FMA path
// operation for operation (erf64, tanhGo64, expGo64), because gelu's
// 1 + erf(x/√2) cancels for negative x and would turn one ulp of erf into
// thousands. docs/benchmarks.md has the measured error table
// (TestTranscendentalSweep), docs/design.md the bounds it guarantees.

// transPrims are the primitives of this file, with their arity.
var transPrims = map[ops.PrimName]int{
	ops.Exp: 1, ops.Exp2: 1, ops.Log: 1, ops.Log2: 1, ops.Tanh: 1, ops.Sqrt: 1, ops.Recip: 1, ops.RecipSqrt: 1,
	ops.Neg: 1, ops.Not: 1, ops.Sat01: 1, ops.FMA: 3, ops.Erf: 1, ops.Gelu: 1, ops.GeluTanh: 1, ops.GeluGrad: 1,
}

// mapArity is the arity of a primitive a pointwise kernel evaluates;
// known is false for the others.
func mapArity(prim ops.PrimName) (n int, known bool) {
	if n, ok := mapPrims[prim]; ok {
		return n, true
	}
	n, known = transPrims[prim]
	return n, known
}

// costlyPrims are the primitives whose Go path calls package math (tens
// of nanoseconds an element), so that a kernel pays from fewer elements
// than a map of adds (MinCostlyMapElems).
var costlyPrims = map[ops.PrimName]bool{ops.Exp: true, ops.Exp2: true, ops.Log: true, ops.Log2: true, ops.Tanh: true,
	ops.Erf: true, ops.Gelu: true, ops.GeluTanh: true, ops.GeluGrad: true}

// minMapElems is the shortest axis a pointwise kernel evaluating e runs.
func minMapElems(e loopir.Expr, kn target.Kernels) int {
	if usesPrim(e, costlyPrims) {
		return kn.MinCostlyMapElems
	}
	return kn.MinMapElems
}

// usesPrim reports whether e applies a primitive of set.
func usesPrim[V any](e loopir.Expr, set map[ops.PrimName]V) bool {
	a, ok := e.(*loopir.Apply)
	if !ok {
		return false
	}
	if _, in := set[a.Prim]; in {
		return true
	}
	for _, x := range a.Args {
		if usesPrim(x, set) {
			return true
		}
	}
	return false
}

// usesTrans reports whether the map uses a primitive of this file.
func (m *MapSpec) usesTrans() bool { return usesPrim(m.Expr, transPrims) }

// wideTrans are the primitives of this file the AVX-512 tier emits, by
// element type (the others widen to float64 or use AVX2-only
// instructions).
var wideTrans = map[string]map[ops.PrimName]bool{
	"float32": {ops.Exp: true, ops.Exp2: true, ops.Sqrt: true, ops.Recip: true, ops.Neg: true, ops.Not: true, ops.Sat01: true,
		ops.Gelu: true, ops.GeluGrad: true},
	"float64": {ops.Sqrt: true, ops.Recip: true, ops.Neg: true, ops.Not: true, ops.Sat01: true},
}

// narrowTrans reports whether e applies a primitive of this file that the
// AVX-512 tier does not emit for elem.
func narrowTrans(e loopir.Expr, elem string) bool {
	a, ok := e.(*loopir.Apply)
	if !ok {
		return false
	}
	if _, mine := transPrims[a.Prim]; mine && !wideTrans[elem][a.Prim] {
		return true
	}
	for _, x := range a.Args {
		if narrowTrans(x, elem) {
			return true
		}
	}
	return false
}

// avx2Only reports whether the kernel is emitted for the AVX2 tier only
// (AVX-512 machines run it too): a map using a primitive of this file
// outside wideTrans, or one marked AVX2Only.
func (m *MapSpec) avx2Only() bool { return m.AVX2Only || narrowTrans(m.Expr, m.Elem) }

// EmitsIn reports whether the map's kernel exists in tier t.
func (m *MapSpec) EmitsIn(t Config) bool { return !t.Wide || !m.avx2Only() }

// MapIn reports whether pointwise kernel i exists in tier t (a kernel
// using a primitive of transcend.go exists in the AVX2 tier only).
func (s *Set) MapIn(i int, t Config) bool { return s.maps[i].EmitsIn(t) }

// tierList filters tiers to those the map is emitted in.
func (m *MapSpec) tierList(tiers []Config) []string {
	var ts []string
	for _, t := range tiers {
		if m.EmitsIn(t) {
			ts = append(ts, t.Tier)
		}
	}
	if m.avx2Only() && len(ts) > 0 {
		ts[len(ts)-1] += " (also on AVX-512 machines)"
	}
	return ts
}

// vconsts is the table of one kernel's vector constants, each 32 bytes
// (the value in every lane), emitted after the kernel as a static
// global named after it.
type vconsts struct {
	name string
	off  map[vkey]int
	data []vkey
}

// vkey is a constant: its bits and its lane size in bytes (the value in
// every lane), or, with size 32, four float64 lanes lanes[0..3] (a
// table for VPERMPS).
type vkey struct {
	bits  uint64
	size  int
	lanes [4]uint64
}

func newVConsts(name string) *vconsts {
	return &vconsts{name: name + "Consts", off: map[vkey]int{}}
}

// at is the address of constant k, added to the table on first use.
func (t *vconsts) at(k vkey) operand.Mem {
	o, ok := t.off[k]
	if !ok {
		o = 32 * len(t.data)
		t.off[k] = o
		t.data = append(t.data, k)
	}
	return operand.NewDataAddr(operand.NewStaticSymbol(t.name), o)
}

// emit adds the table (if any constant was used) to c.
func (t *vconsts) emit(c *build.Context) {
	if len(t.data) == 0 {
		return
	}
	c.StaticGlobal(t.name)
	c.DataAttributes(attr.RODATA | attr.NOPTR)
	for _, k := range t.data {
		if k.size == 32 {
			for _, u := range k.lanes {
				c.AppendDatum(operand.U64(u))
			}
			continue
		}
		for range 32 / k.size {
			if k.size == 8 {
				c.AppendDatum(operand.U64(k.bits))
			} else {
				c.AppendDatum(operand.U32(uint32(k.bits)))
			}
		}
	}
}

// k64 is the float64 constant v in every lane; b64 and b32 are bit
// patterns in every 64- or 32-bit lane.
func (g *mgen) k64(v float64) operand.Mem { return g.tr.at(vkey{bits: math.Float64bits(v), size: 8}) }
func (g *mgen) b64(u uint64) operand.Mem  { return g.tr.at(vkey{bits: u, size: 8}) }
func (g *mgen) b32(u uint32) operand.Mem  { return g.tr.at(vkey{bits: uint64(u), size: 4}) }
func (g *mgen) k32(v float32) operand.Mem { return g.b32(math.Float32bits(v)) }

// ld loads a table constant into a new register. In the AVX-512 tier
// (which only the float32 kernels of exp32 and the primitives of
// wideTrans reach) it broadcasts the constant's first lane, of the
// kernel's element size, into a ZMM register.
func (g *mgen) ld(m operand.Mem) reg.VecVirtual {
	if g.cfg.Wide {
		r := g.c.ZMM()
		if g.es == 8 {
			g.c.VBROADCASTSD(m, r)
		} else {
			g.c.VBROADCASTSS(m, r)
		}
		return r
	}
	r := g.c.YMM()
	g.c.VMOVUPD(m, r)
	return r
}

// kop is table constant m as an instruction's operand: the memory
// itself (32 bytes: a YMM operand), or in the AVX-512 tier the constant
// in a register (kreg; a ZMM operand would read 64 bytes).
func (g *mgen) kop(m operand.Mem) operand.Op {
	if g.cfg.Wide {
		return g.kreg(m)
	}
	return m
}

// kreg is table constant m (of g.tr) in a register that the caller only
// reads: the register emitMap keeps it in, if it does (hoisted), else
// the constant loaded where used (ld).
func (g *mgen) kreg(m operand.Mem) reg.VecVirtual {
	k := g.tr.data[m.Disp/32]
	if g.record != nil {
		g.record(k)
	}
	if r, ok := g.hoisted[k]; ok {
		return r
	}
	return g.ld(m)
}

// transcend evaluates primitive prim of this file on a (the operands'
// vectors); ok is false for the other primitives.
func (g *mgen) transcend(prim ops.PrimName, a []reg.VecVirtual) (v reg.VecVirtual, ok bool) {
	if _, mine := transPrims[prim]; !mine {
		return nil, false
	}
	c := g.c
	d := g.vec()
	switch prim {
	case ops.Sqrt:
		if g.es == 8 {
			c.VSQRTPD(a[0], d)
		} else {
			c.VSQRTPS(a[0], d)
		}
	case ops.Recip:
		if g.es == 8 {
			c.VDIVPD(a[0], g.constVec(1), d)
		} else {
			c.VDIVPS(a[0], g.constVec(1), d)
		}
	case ops.Neg:
		switch {
		case g.cfg.Wide && g.es == 8: // VXORPD on ZMM needs AVX512DQ
			c.VPXORQ(g.kreg(g.b64(1<<63)), a[0], d)
		case g.cfg.Wide:
			c.VPXORD(g.kreg(g.b32(1<<31)), a[0], d)
		case g.es == 8:
			c.VXORPD(g.b64(1<<63), a[0], d)
		default:
			c.VXORPS(g.b32(1<<31), a[0], d)
		}
	case ops.Not:
		return g.sel(g.cmp(cmpEQ, a[0], g.constVec(0)), g.constVec(1), g.constVec(0)), true
	case ops.Sat01:
		g.sat01(a[0], d)
	case ops.Exp, ops.Exp2:
		if g.es == 4 {
			return g.exp32(a[0], prim == ops.Exp2), true
		}
		return g.exp64(a[0], prim == ops.Exp2), true
	case ops.Gelu:
		if g.es == 4 {
			return g.gelu32(a[0]), true
		}
		return g.gelu64(a[0]), true
	case ops.GeluGrad:
		if g.es == 4 {
			return g.geluGrad32(a[0]), true
		}
		return g.geluGrad64(a[0]), true
	default:
		return g.viaF64(a, g.f64Func(prim)), true
	}
	return d, true
}

// sat01 is Go's min(1, max(0, x)): NaN stays NaN, -0 becomes +0.
func (g *mgen) sat01(x, d reg.VecVirtual) {
	c := g.c
	zero, one := g.constVec(0), g.constVec(1)
	if g.es == 8 {
		c.VMAXPD(x, zero, d) // max(0, x), x when unordered or both zero
		c.VADDPD(zero, d, d) // -0 + 0 = +0
		c.VMINPD(d, one, d)
		return
	}
	c.VMAXPS(x, zero, d)
	c.VADDPS(zero, d, d)
	c.VMINPS(d, one, d)
}

// f64Func is the float64-lane implementation of prim.
func (g *mgen) f64Func(prim ops.PrimName) func([]reg.VecVirtual) reg.VecVirtual {
	switch prim {
	case ops.Exp:
		return func(x []reg.VecVirtual) reg.VecVirtual { return g.exp64(x[0], false) }
	case ops.Exp2:
		return func(x []reg.VecVirtual) reg.VecVirtual { return g.exp64(x[0], true) }
	case ops.Log:
		return func(x []reg.VecVirtual) reg.VecVirtual { return g.log64(x[0], false) }
	case ops.Log2:
		return func(x []reg.VecVirtual) reg.VecVirtual { return g.log64(x[0], true) }
	case ops.Tanh:
		return func(x []reg.VecVirtual) reg.VecVirtual { return g.tanh64(x[0]) }
	case ops.Erf:
		return func(x []reg.VecVirtual) reg.VecVirtual { return g.erf64(x[0], x[0]) }
	case ops.GeluTanh:
		return func(x []reg.VecVirtual) reg.VecVirtual { return g.geluTanh64(x[0]) }
	case ops.RecipSqrt:
		return func(x []reg.VecVirtual) reg.VecVirtual {
			d := g.ld(g.k64(1))
			s := g.c.YMM()
			g.c.VSQRTPD(x[0], s)
			g.c.VDIVPD(s, d, d)
			return d
		}
	case ops.FMA:
		// a*b + c rounded twice, as Go computes it in float64 (in a
		// float32 kernel the product of two widened floats is exact).
		return func(x []reg.VecVirtual) reg.VecVirtual {
			d := g.c.YMM()
			g.c.VMULPD(x[1], x[0], d)
			g.c.VADDPD(x[2], d, d)
			return d
		}
	}
	panic("asm: no float64 implementation of " + string(prim))
}

// viaF64 applies f to the operands in float64 lanes: directly in a
// float64 kernel; in a float32 kernel on each widened half, the results
// narrowed back into one vector.
func (g *mgen) viaF64(args []reg.VecVirtual, f func([]reg.VecVirtual) reg.VecVirtual) reg.VecVirtual {
	if g.es == 8 {
		return f(args)
	}
	c := g.c
	lo := make([]reg.VecVirtual, len(args))
	hi := make([]reg.VecVirtual, len(args))
	for i, a := range args {
		lo[i], hi[i] = c.YMM(), c.YMM()
		c.VCVTPS2PD(a.AsX(), lo[i])
		t := c.XMM()
		c.VEXTRACTF128(operand.Imm(1), a, t)
		c.VCVTPS2PD(t, hi[i])
	}
	d := c.YMM()
	c.VCVTPD2PSY(f(lo), d.AsX())
	t := c.XMM()
	c.VCVTPD2PSY(f(hi), t)
	c.VINSERTF128(operand.Imm(1), t, d, d)
	return d
}

// ln2Hi + ln2Lo is ln 2 to about 2^-106 (ln2Hi is math.Ln2).
const (
	ln2Hi = math.Ln2
	ln2Lo = 2.319046813846299558417771e-17
	// magic: adding 1.5*2^52 to an integer-valued float64 of magnitude
	// below 2^51 leaves the integer in the low bits of the mantissa.
	magic = 0x1.8p52
)

// expCoeffs are the Taylor coefficients 1/k! of e^r, highest degree
// first: degree 13 in a float64 kernel (truncation below 2^-57 relative
// on |r| <= ln2/2), degree 8 when the result is rounded to float32
// (below 2^-32).
func (g *mgen) expCoeffs() []float64 {
	deg := 13
	if g.es == 4 {
		deg = 8
	}
	out := make([]float64, deg+1)
	f := 1.0
	for k := 0; k <= deg; k++ {
		if k > 0 {
			f *= float64(k)
		}
		out[deg-k] = 1 / f
	}
	return out
}

// poly evaluates the polynomial of coefficients cs (highest degree
// first) at r by Horner's rule with FMAs.
func (g *mgen) poly(r reg.VecVirtual, cs ...float64) reg.VecVirtual {
	p := g.ld(g.k64(cs[0]))
	for _, k := range cs[1:] {
		g.c.VFMADD213PD(g.k64(k), r, p) // p = r*p + k
	}
	return p
}

// exp64 is e^x (2^x when base2) in float64 lanes: x clamped to where the
// result is neither certainly +Inf nor certainly 0 (NaN passes), n =
// round(x/ln2), r = x - n*ln2 (Cody-Waite with FMA, exact in the first
// step), e^r by its Taylor polynomial, scaled by 2^n in two steps so
// that denormal results round once.
func (g *mgen) exp64(x reg.VecVirtual, base2 bool) reg.VecVirtual {
	c := g.c
	lo, hi := -750.0, 710.0
	if base2 {
		lo, hi = -1080, 1025
	}
	t := c.YMM()
	c.VMAXPD(x, g.ld(g.k64(lo)), t) // max(lo, x): x when NaN
	c.VMINPD(t, g.ld(g.k64(hi)), t)
	n := c.YMM()
	if base2 {
		c.VROUNDPD(operand.Imm(0), t, n)
		c.VSUBPD(n, t, t) // exact
		c.VMULPD(g.k64(math.Ln2), t, t)
	} else {
		c.VMULPD(g.k64(math.Log2E), t, n)
		c.VROUNDPD(operand.Imm(0), n, n)
		c.VFNMADD231PD(g.k64(ln2Hi), n, t) // t -= n*ln2Hi, exact
		c.VFNMADD231PD(g.k64(ln2Lo), n, t)
	}
	p := g.poly(t, g.expCoeffs()...)
	return g.scale2(p, n)
}

// scale2 is p*2^n for integer-valued n in [-1082, 1025]: 2^n1 * 2^n2
// with n1 = floor(n/2), each power built in the exponent field.
func (g *mgen) scale2(p, n reg.VecVirtual) reg.VecVirtual {
	c := g.c
	n1 := c.YMM()
	c.VMULPD(g.k64(0.5), n, n1)
	c.VROUNDPD(operand.Imm(1), n1, n1) // floor
	c.VSUBPD(n1, n, n)
	for _, v := range []reg.VecVirtual{n1, n} {
		c.VADDPD(g.k64(magic), v, v)
		c.VPADDQ(g.b64(1023), v, v)
		c.VPSLLQ(operand.Imm(52), v, v)
		c.VMULPD(v, p, p)
	}
	return p
}

// Coefficients of Go's math.Log (FreeBSD's e_log.c).
const (
	logL1 = 6.666666666666735130e-01
	logL2 = 3.999999999940941908e-01
	logL3 = 2.857142874366239149e-01
	logL4 = 2.222219843214978396e-01
	logL5 = 1.818357216161805012e-01
	logL6 = 1.531383769920937332e-01
	logL7 = 1.479819860511658591e-01
	// Go's split of ln 2 for log: k*logLn2Hi is exact.
	logLn2Hi = 6.93147180369123816490e-01
	logLn2Lo = 1.90821492927058770002e-10
	// log2eLo is log2(e) - math.Log2E.
	log2eLo = 2.0355273740931033e-17
)

// log64 is ln x (log2 x when base2) in float64 lanes, Go's math.Log
// algorithm vectorized: x = 2^k * m with m in (sqrt2/2, sqrt2], f = m-1,
// s = f/(2+f), ln(1+f) = f - (f²/2 - s*(f²/2 + R(s²))). Then x < 0 gives
// NaN, ±0 gives -Inf, +Inf and NaN give x.
func (g *mgen) log64(x reg.VecVirtual, base2 bool) reg.VecVirtual {
	c := g.c
	e, f := g.logReduce(x)
	s := c.YMM()
	c.VADDPD(g.k64(2), f, s)
	c.VDIVPD(s, f, s) // f / (2+f)
	z, w := c.YMM(), c.YMM()
	c.VMULPD(s, s, z)
	c.VMULPD(z, z, w)
	t1 := g.poly(w, logL7, logL5, logL3, logL1)
	c.VMULPD(z, t1, t1)
	t2 := g.poly(w, logL6, logL4, logL2)
	c.VMULPD(w, t2, t2)
	c.VADDPD(t2, t1, t1) // R
	hf := c.YMM()
	c.VMULPD(f, f, hf)
	c.VMULPD(g.k64(0.5), hf, hf)
	c.VADDPD(hf, t1, t1)
	c.VMULPD(s, t1, t1) // s*(hfsq+R)
	var res reg.VecVirtual
	if base2 {
		c.VSUBPD(t1, hf, hf) // hfsq - s*(hfsq+R)
		c.VSUBPD(hf, f, f)   // ln m
		// ln m * log2(e) with log2(e) as log2eHi + log2eLo, then + k.
		c.VMULPD(g.k64(log2eLo), f, hf)
		c.VFMADD231PD(g.k64(math.Log2E), f, hf)
		c.VADDPD(e, hf, hf)
		res = hf
	} else {
		c.VFMADD231PD(g.k64(logLn2Lo), e, t1) // + k*Ln2Lo
		c.VSUBPD(t1, hf, hf)
		c.VSUBPD(f, hf, hf)
		c.VFMSUB231PD(g.k64(logLn2Hi), e, hf) // k*Ln2Hi - (...)
		res = hf
	}
	msk := c.YMM()
	c.VCMPPD(operand.Imm(cmpLT), g.k64(0), x, msk)
	c.VBLENDVPD(msk, g.b64(0x7FF8000000000000), res, res)
	c.VCMPPD(operand.Imm(cmpEQ), g.k64(0), x, msk)
	c.VBLENDVPD(msk, g.k64(math.Inf(-1)), res, res)
	c.VCMPPD(operand.Imm(cmpNLTUS), g.k64(math.Inf(1)), x, msk)
	c.VBLENDVPD(msk, x, res, res)
	return res
}

// cmpNLTUS is the predicate !(a < b), true when unordered; cmpGTOS is a > b.
const (
	cmpNLTUS = 5
	cmpGTOS  = 14
)

// logReduce splits positive x into e (the power of two, a float64) and
// f = m - 1 with m in (sqrt2/2, sqrt2]. A float64 kernel first scales
// denormal x by 2^54 (float32 denormals are normal once widened).
func (g *mgen) logReduce(x reg.VecVirtual) (e, f reg.VecVirtual) {
	c := g.c
	xs := x
	var adj reg.VecVirtual
	if g.es == 8 {
		small, sc := c.YMM(), c.YMM()
		c.VCMPPD(operand.Imm(cmpLT), g.k64(0x1p-1022), x, small)
		c.VMULPD(g.k64(0x1p54), x, sc)
		xs = c.YMM()
		c.VBLENDVPD(small, sc, x, xs)
		adj = c.YMM()
		c.VANDPD(g.k64(54), small, adj)
	}
	e = c.YMM()
	c.VPSRLQ(operand.Imm(52), xs, e)
	c.VPOR(g.b64(0x4330000000000000), e, e)
	c.VSUBPD(g.k64(0x1p52+1023), e, e)
	if adj != nil {
		c.VSUBPD(adj, e, e)
	}
	m := c.YMM()
	c.VANDPD(g.b64(0x000FFFFFFFFFFFFF), xs, m)
	c.VORPD(g.b64(0x3FF0000000000000), m, m) // [1, 2)
	big, h := c.YMM(), c.YMM()
	c.VCMPPD(operand.Imm(cmpGTOS), g.k64(math.Sqrt2), m, big)
	c.VMULPD(g.k64(0.5), m, h)
	c.VBLENDVPD(big, h, m, m)
	c.VANDPD(g.k64(1), big, h)
	c.VADDPD(h, e, e)
	c.VSUBPD(g.k64(1), m, m)
	return e, m
}

// Coefficients of Go's math.Tanh (Cephes) on |x| < 0.625.
var (
	tanhP = [...]float64{-9.64399179425052238628e-1, -9.92877231001918586564e1, -1.61468768441708447952e3}
	tanhQ = [...]float64{1.12811678491632931402e2, 2.23548839060100448583e3, 4.84406305325125486048e3}
)

// tanh64 is tanh x in float64 lanes, Go's math.Tanh vectorized: both
// branches computed, |x| < 0.625 picks x + x*s*P(s)/Q(s) (s = x²), the
// others 1 - 2/(e^(2 min(|x|, 44)) + 1); then x's sign is put back (so
// -0 stays -0, NaN stays NaN).
func (g *mgen) tanh64(x reg.VecVirtual) reg.VecVirtual {
	c := g.c
	ax := c.YMM()
	c.VANDPD(g.b64(1<<63-1), x, ax)
	z := c.YMM()
	c.VMINPD(ax, g.ld(g.k64(44)), z) // min(44, |x|): NaN passes
	c.VADDPD(z, z, z)
	e := g.exp64(z, false)
	c.VADDPD(g.k64(1), e, e)
	big := g.ld(g.k64(2))
	c.VDIVPD(e, big, big)
	one := g.ld(g.k64(1))
	c.VSUBPD(big, one, big) // 1 - 2/(e+1)
	s := c.YMM()
	c.VMULPD(x, x, s)
	num := g.poly(s, tanhP[0], tanhP[1], tanhP[2])
	den := g.poly(s, 1, tanhQ[0], tanhQ[1], tanhQ[2])
	c.VDIVPD(den, num, num)
	c.VMULPD(s, num, num)
	c.VFMADD213PD(x, x, num) // x*q + x
	sm := c.YMM()
	c.VCMPPD(operand.Imm(cmpLT), g.k64(0.625), ax, sm)
	c.VBLENDVPD(sm, num, big, big)
	c.VANDPD(g.b64(1<<63-1), big, big)
	c.VANDPD(g.b64(1<<63), x, ax)
	c.VORPD(ax, big, big)
	return big
}

// highVecRegs reports whether fn uses a vector register numbered 16 or
// more: EVEX-only, so an AVX2 kernel must not (avo never spills, and it
// allocates YMM registers from all 32).
func highVecRegs(fn *ir.Function) bool {
	for _, i := range fn.Instructions() {
		for _, op := range i.Operands {
			r, ok := op.(reg.Register)
			if !ok {
				continue
			}
			if p := reg.ToPhysical(r); p != nil && p.Kind() == reg.KindVector && p.PhysicalIndex() >= 16 {
				return true
			}
		}
	}
	return false
}

// checkNarrowRegs fails when a kernel of a tier that is not Wide uses a
// vector register the tier does not have.
func checkNarrowRegs(f *ir.File, tierOf map[string]string, tiers []Config) error {
	wide := map[string]bool{}
	for _, t := range tiers {
		wide[t.Tier] = t.Wide
	}
	for _, fn := range f.Functions() {
		if !wide[tierOf[fn.Name]] && highVecRegs(fn) {
			return fmt.Errorf("asm: kernel %s needs more than 16 vector registers", fn.Name)
		}
	}
	return nil
}

// fitsAVX2 reports whether the map's AVX2 kernel fits the 16 YMM
// registers (maps of transcend.go's primitives hold many temporaries; a
// map that does not fit stays Go loops). It compiles the kernel alone.
func (m *MapSpec) fitsAVX2() bool {
	key := m.key()
	if fits, ok := fitMemo.Load(key); ok {
		return fits.(bool)
	}
	s := NewSet(target.AVX2())
	s.AddMap(*m)
	_, err := s.Files("fit")
	fitMemo.Store(key, err == nil)
	return err == nil
}

// fitMemo remembers fitsAVX2's answer by MapSpec.key: compiling a kernel
// to see whether it fits the registers costs milliseconds, and a large
// model asks for the same map once per layer (a 12-block decoder's
// kernels spent 2.4 s here). It is a memo of a pure function of the key:
// it never changes an answer, and is safe for concurrent use.
var fitMemo sync.Map

// exprNeed estimates the vector registers evaluating e takes (its
// Sethi-Ullman number, with the temporaries of transcend.go's costly
// primitives); constants live in registers loaded before the loop.
func exprNeed(e loopir.Expr) int {
	a, ok := e.(*loopir.Apply)
	if !ok {
		if _, load := e.(*loopir.Load); load {
			return 1
		}
		return 0
	}
	needs := make([]int, len(a.Args))
	for i, x := range a.Args {
		needs[i] = exprNeed(x)
	}
	slices.SortFunc(needs, func(x, y int) int { return y - x })
	n := 1
	for i, k := range needs {
		n = max(n, k+i)
	}
	if costlyPrims[a.Prim] {
		n = max(n, 9)
	}
	return n
}

// evalOrder is the order in which to evaluate args: the most demanding
// first (Sethi-Ullman), so fewer results wait in registers; ties keep
// the written order (maps without transcend.go's primitives keep it).
func evalOrder(args []loopir.Expr) []int {
	order := make([]int, len(args))
	needs := make([]int, len(args))
	for i, x := range args {
		order[i] = i
		needs[i] = exprNeed(x)
		if !usesPrim(x, costlyPrims) {
			needs[i] = 0
		}
	}
	slices.SortStableFunc(order, func(x, y int) int { return needs[y] - needs[x] })
	return order
}

// preloaded are the constants a map kernel keeps in registers (besides
// 0 and 1): all of them, except in a map of transcend.go's primitives,
// which needs the registers and loads them where used (loadConst).
func (m *MapSpec) preloaded() []float64 {
	if m.usesTrans() {
		return nil
	}
	return m.constants()
}

// loadConst loads the element-typed constant v from the kernel's vector
// constant table.
func (g *mgen) loadConst(v float64) reg.VecVirtual {
	if g.es == 8 {
		return g.ld(g.k64(v))
	}
	return g.ld(g.b32(math.Float32bits(float32(v))))
}

// Float32 exp: ln 2 as exp32Ln2Hi (float32(ln 2), so that n*hi is exact
// in an FMA) + exp32Ln2Lo.
const (
	exp32Ln2Hi = float32(math.Ln2)
	exp32Ln2Lo = float32(math.Ln2 - float64(exp32Ln2Hi))
	magic32    = 0x1.8p23
)

// exp32 is e^x (2^x when base2) in float32 lanes, the float32 version of
// exp64 (twice the lanes, so twice the speed of widening): x clamped to
// [-104, 89] ([-151, 129]), n = round(x/ln2), r = x - n*ln2 (exact first
// step), e^r (2^r) by its degree-7 Taylor polynomial, 2^n in two factors
// so that denormal results round once.
func (g *mgen) exp32(x reg.VecVirtual, base2 bool) reg.VecVirtual {
	c := g.c
	lo, hi := float32(-104), float32(89)
	if base2 {
		lo, hi = -151, 129
	}
	round := func(mode uint64, x, d reg.VecVirtual) { // VROUNDPS has no ZMM form
		if g.cfg.Wide {
			c.VRNDSCALEPS(operand.Imm(mode), x, d)
		} else {
			c.VROUNDPS(operand.Imm(mode), x, d)
		}
	}
	t := g.vec()
	c.VMAXPS(x, g.kreg(g.k32(lo)), t) // max(lo, x): x when NaN
	c.VMINPS(t, g.kreg(g.k32(hi)), t)
	n := g.vec()
	cs := make([]float32, 8)
	f, l := 1.0, 1.0
	if base2 {
		l = math.Ln2
	}
	for k := 0; k <= 7; k++ {
		if k > 0 {
			f *= l / float64(k)
		}
		cs[7-k] = float32(f)
	}
	if base2 {
		round(0, t, n)
		c.VSUBPS(n, t, t) // exact
	} else {
		c.VMULPS(g.kop(g.k32(math.Log2E)), t, n)
		round(0, n, n)
		c.VFNMADD231PS(g.kop(g.k32(exp32Ln2Hi)), n, t) // exact
		c.VFNMADD231PS(g.kop(g.k32(exp32Ln2Lo)), n, t)
	}
	p := g.ld(g.k32(cs[0]))
	for _, k := range cs[1:] {
		c.VFMADD213PS(g.kop(g.k32(k)), t, p)
	}
	n1 := g.vec()
	c.VMULPS(g.kop(g.k32(0.5)), n, n1)
	round(1, n1, n1) // floor
	c.VSUBPS(n1, n, n)
	for _, v := range []reg.VecVirtual{n1, n} {
		c.VADDPS(g.kop(g.k32(magic32)), v, v)
		c.VPADDD(g.kop(g.b32(127)), v, v)
		c.VPSLLD(operand.Imm(23), v, v)
		c.VMULPS(v, p, p)
	}
	return p
}

// Constants of Go's math.Erf (FreeBSD's s_erf.c).
const (
	erfErx      = 8.45062911510467529297e-01
	erfEfx      = 1.28379167095512586316e-01
	erfEfx8     = 1.02703333676410069053e+00
	erfVeryTiny = 2.848094538889218e-306 // 0x0080000000000000
	erfSmall    = 1.0 / (1 << 28)
)

// erfNum and erfDen are the coefficients of math.Erf's four rational
// approximations, one column per interval of |x| ([0, 0.84375) in x²,
// [0.84375, 1.25) in |x|-1, [1.25, 1/0.35) and [1/0.35, 6) in 1/x²),
// highest degree first, padded with leading zeros to a common degree: a
// padded Horner step is c + t*0 = c exactly, so each lane computes its
// interval's polynomial bit for bit as Go does. erfDen stops at degree
// 1 (every denominator's constant term is 1).
var (
	erfNum = [8][4]float64{
		{0, 0, -9.81432934416914548592e+00, 0},
		{0, -2.16637559486879084300e-03, -8.12874355063065934246e+01, -4.83519191608651397019e+02},
		{0, 3.54783043256182359371e-02, -1.84605092906711035994e+02, -1.02509513161107724954e+03},
		{-2.37630166566501626084e-05, -1.10894694282396677476e-01, -1.62396669462573470355e+02, -6.37566443368389627722e+02},
		{-5.77027029648944159157e-03, 3.18346619901161753674e-01, -6.23753324503260060396e+01, -1.60636384855821916062e+02},
		{-2.84817495755985104766e-02, -3.72207876035701323847e-01, -1.05586262253232909814e+01, -1.77579549177547519889e+01},
		{-3.25042107247001499370e-01, 4.14856118683748331666e-01, -6.93858572707181764372e-01, -7.99283237680523006574e-01},
		{1.28379167095512558561e-01, -2.36211856075265944077e-03, -9.86494403484714822705e-03, -9.86494292470009928597e-03},
	}
	erfDen = [8][4]float64{
		{0, 0, -6.04244152148580987438e-02, 0},
		{0, 0, 6.57024977031928170135e+00, -2.24409524465858183362e+01},
		{0, 1.19844998467991074170e-02, 1.08635005541779435134e+02, 4.74528541206955367215e+02},
		{-3.96022827877536812320e-06, 1.36370839120290507362e-02, 4.29008140027567833386e+02, 2.55305040643316442583e+03},
		{1.32494738004321644526e-04, 1.26171219808761642112e-01, 6.45387271733267880336e+02, 3.19985821950859553908e+03},
		{5.08130628187576562776e-03, 7.18286544141962662868e-02, 4.34565877475229228821e+02, 1.53672958608443695994e+03},
		{6.50222499887672944485e-02, 5.40397917702171048937e-01, 1.37657754143519042600e+02, 3.25792512996573918826e+02},
		{3.97917223959155352819e-01, 1.06420880400844228286e-01, 1.96512716674392571292e+01, 3.03380607434824582924e+01},
	}
)

// tab is the table of four float64 lanes v, for VPERMPS.
func (g *mgen) tab(v [4]float64) operand.Mem {
	var k vkey
	k.size = 32
	for i, f := range v {
		k.lanes[i] = math.Float64bits(f)
	}
	return g.tr.at(k)
}

// cmpGEOS is the predicate a >= b (false when unordered).
const cmpGEOS = 13

// erf64 is erf x in float64 lanes, Go's math.Erf vectorized without
// branches, on |x| (the sign is put back at the end: Go's erf is odd bit
// for bit, -0 gives -0, NaN stays NaN). Each lane's interval (|x| below
// 0.84375, 1.25, 1/0.35, 6) indexes the coefficient tables through
// VPERMPS, so one rational function num(t)/den(t) serves all four
// intervals, evaluated as Go does (a multiply and an add a step, no FMA:
// Go does not fuse them for GOAMD64 v1 and v2); then each interval's
// final formula is computed and blended in: |x| + |x|*y (with Go's two
// tiny-|x| cases), erx + y, 1 - e^(-z²-0.5625) e^((z-|x|)(z+|x|)+y)/|x|
// (z is |x| with the low 32 bits cleared), and 1 from 6 on (+Inf too).
func (g *mgen) erf64(x, sgn reg.VecVirtual) reg.VecVirtual {
	c := g.c
	ax := c.YMM()
	c.VANDPD(g.b64(1<<63-1), x, ax)
	// idx: each lane's interval k as VPERMPS dword indices (2k, 2k+1).
	idx := g.ld(g.b64(1 << 32))
	msk := c.YMM()
	for _, b := range []float64{0.84375, 1.25, 1 / 0.35} {
		c.VCMPPD(operand.Imm(cmpGEOS), g.k64(b), ax, msk)
		c.VANDPD(g.b64(2<<32|2), msk, msk)
		c.VPADDQ(msk, idx, idx)
	}
	// t: x², |x|-1 from 0.84375, 1/x² from 1.25.
	x2, t := c.YMM(), c.YMM()
	c.VMULPD(ax, ax, x2)
	c.VSUBPD(g.k64(1), ax, t)
	c.VCMPPD(operand.Imm(cmpLT), g.k64(0.84375), ax, msk)
	c.VBLENDVPD(msk, x2, t, t)
	r := g.ld(g.k64(1))
	c.VDIVPD(x2, r, r)
	c.VCMPPD(operand.Imm(cmpGEOS), g.k64(1.25), ax, msk)
	c.VBLENDVPD(msk, r, t, t)
	horner := func(rows [][4]float64) reg.VecVirtual {
		p := c.YMM()
		c.VPERMPS(g.tab(rows[0]), idx, p)
		for _, row := range rows[1:] {
			c.VMULPD(t, p, p)
			c.VPERMPS(g.tab(row), idx, msk)
			c.VADDPD(msk, p, p)
		}
		return p
	}
	y := horner(erfNum[:])
	den := horner(erfDen[:])
	c.VMULPD(t, den, den)
	c.VADDPD(g.k64(1), den, den)
	c.VDIVPD(den, y, y)
	// |x| < 0.84375: |x| + |x|*y; below 2^-28 |x| + efx*|x|; below
	// VeryTiny 0.125*(8|x| + efx8*|x|).
	res, u := c.YMM(), c.YMM()
	c.VMULPD(ax, y, res)
	c.VADDPD(ax, res, res)
	c.VMULPD(g.k64(erfEfx), ax, u)
	c.VADDPD(ax, u, u)
	c.VCMPPD(operand.Imm(cmpLT), g.k64(erfSmall), ax, msk)
	c.VBLENDVPD(msk, u, res, res)
	c.VMULPD(g.k64(8), ax, u)
	c.VMULPD(g.k64(erfEfx8), ax, t)
	c.VADDPD(t, u, u)
	c.VMULPD(g.k64(0.125), u, u)
	c.VCMPPD(operand.Imm(cmpLT), g.k64(erfVeryTiny), ax, msk)
	c.VBLENDVPD(msk, u, res, res)
	// [0.84375, 1.25): erx + y.
	c.VADDPD(g.k64(erfErx), y, u)
	c.VCMPPD(operand.Imm(cmpGEOS), g.k64(0.84375), ax, msk)
	c.VBLENDVPD(msk, u, res, res)
	// [1.25, 6): 1 - exp(-z*z-0.5625)*exp((z-|x|)*(z+|x|)+y)/|x|.
	z := c.YMM()
	c.VANDPD(g.b64(0xffffffff00000000), ax, z)
	c.VMULPD(z, z, u)
	c.VXORPD(g.b64(1<<63), u, u)
	c.VSUBPD(g.k64(0.5625), u, u)
	c.VSUBPD(ax, z, t)
	c.VADDPD(ax, z, z)
	c.VMULPD(z, t, t)
	c.VADDPD(y, t, t)
	e1 := g.expGo64(u)
	e2 := g.expGo64(t)
	c.VMULPD(e2, e1, e1)
	c.VDIVPD(ax, e1, e1)
	one := g.ld(g.k64(1))
	c.VSUBPD(e1, one, one)
	c.VCMPPD(operand.Imm(cmpGEOS), g.k64(1.25), ax, msk)
	c.VBLENDVPD(msk, one, res, res)
	c.VCMPPD(operand.Imm(cmpGEOS), g.k64(6), ax, msk)
	c.VBLENDVPD(msk, g.k64(1), res, res)
	c.VANDPD(g.b64(1<<63), sgn, u)
	c.VORPD(u, res, res)
	return res
}

// Go's amd64 math.Exp (exp_amd64.s) constants.
const (
	goExpLog2E = 1.4426950408889634073599246810018920
	goExpLn2U  = 0.69314718055966295651160180568695068359375
	goExpLn2L  = 0.28235290563031577122588448175013436025525412068e-12
)

// goExpCoeffs are exp_amd64.s's Taylor coefficients of (e^r - 1)/r,
// highest degree first.
var goExpCoeffs = [...]float64{2.4801587301587301587e-5, 1.9841269841269841270e-4, 1.3888888888888888889e-3,
	8.3333333333333333333e-3, 4.1666666666666666667e-2, 1.6666666666666666667e-1, 0.5, 1.0}

// expGo64 is e^x in float64 lanes computed as Go's amd64 math.Exp does
// on a machine with FMA (exp_amd64.s, the path package math takes where
// AVX and FMA exist, as they do wherever an AVX2 kernel runs), so bit
// for bit the same, for x whose e^x is a normal float64 (the callers
// keep to that): n = round(x*log2 e) (to even, as CVTSD2SL rounds),
// r = (x - n*ln2U - n*ln2L)/16 by FMAs, e^r - 1 by the Taylor
// polynomial, squared up four times ((e^r-1)(e^r-1+2) = e^2r - 1), + 1,
// scaled by 2^n.
func (g *mgen) expGo64(x reg.VecVirtual) reg.VecVirtual {
	c := g.c
	n := c.YMM()
	c.VMULPD(g.k64(goExpLog2E), x, n)
	c.VROUNDPD(operand.Imm(0), n, n)
	r := g.ld(g.k64(goExpLn2U))
	c.VFNMADD213PD(x, n, r) // x - n*ln2U
	c.VFNMADD231PD(g.k64(goExpLn2L), n, r)
	c.VMULPD(g.k64(0.0625), r, r)
	p := g.poly(r, goExpCoeffs[:]...)
	c.VMULPD(p, r, r)
	for range 3 {
		c.VADDPD(g.k64(2), r, p)
		c.VMULPD(p, r, r)
	}
	c.VADDPD(g.k64(2), r, p)
	c.VFMADD213PD(g.k64(1), p, r) // r*(r+2) + 1
	c.VADDPD(g.k64(magic), n, n)
	c.VPADDQ(g.b64(1023), n, n)
	c.VPSLLQ(operand.Imm(52), n, n)
	c.VMULPD(n, r, r)
	return r
}

// gelu64 is Go's 0.5 * x * (1 + math.Erf(x*0.7071067811865476)) in
// float64 lanes, each operation rounded as Go rounds it.
func (g *mgen) gelu64(x reg.VecVirtual) reg.VecVirtual {
	c := g.c
	u := c.YMM()
	c.VMULPD(g.k64(0.7071067811865476), x, u)
	return g.halfXOnePlus(x, g.erf64(u, x), u) // u has x's sign
}

// geluTanh64 is Go's 0.5 * x * (1 + math.Tanh(0.7978845608028654*(x +
// 0.044715*x*x*x))) in float64 lanes, each operation rounded as Go
// rounds it, tanh by tanhGo64 (not tanh64, which can differ from
// math.Tanh by an ulp: 1 + tanh cancels for negative x).
func (g *mgen) geluTanh64(x reg.VecVirtual) reg.VecVirtual {
	c := g.c
	u := c.YMM()
	c.VMULPD(g.k64(0.044715), x, u)
	c.VMULPD(x, u, u)
	c.VMULPD(x, u, u)
	c.VADDPD(u, x, u)
	c.VMULPD(g.k64(0.7978845608028654), u, u)
	return g.halfXOnePlus(x, g.tanhGo64(u, x), u) // u has x's sign
}

// halfXOnePlus is both GELUs' 0.5 * x * (1 + e), rounded as Go rounds it,
// into u (a temporary the caller is done with).
func (g *mgen) halfXOnePlus(x, e, u reg.VecVirtual) reg.VecVirtual {
	c := g.c
	c.VADDPD(g.k64(1), e, e)
	c.VMULPD(g.k64(0.5), x, u)
	c.VMULPD(e, u, u)
	return u
}

// tanhGo64 is Go's math.Tanh in float64 lanes bit for bit (where e^x is
// expGo64's): on |x|, |x| < 0.625 picks |x| + |x|*s*P(s)/Q(s) (s = x²,
// P and Q by Horner's rule without FMA, as Go evaluates them), up to
// MAXLOG/2 1 - 2/(e^2|x| + 1), beyond 1; then x's sign is put back (Go's
// tanh is odd bit for bit; -0 stays -0, NaN stays NaN). Lanes beyond
// MAXLOG/2 feed expGo64 out of its range and are blended away.
func (g *mgen) tanhGo64(x, sgn reg.VecVirtual) reg.VecVirtual {
	c := g.c
	ax := c.YMM()
	c.VANDPD(g.b64(1<<63-1), x, ax)
	s := c.YMM()
	c.VADDPD(ax, ax, s)
	big := g.expGo64(s)
	c.VADDPD(g.k64(1), big, big)
	q := g.ld(g.k64(2))
	c.VDIVPD(big, q, q)
	one := g.ld(g.k64(1))
	c.VSUBPD(q, one, one) // 1 - 2/(e+1)
	c.VMULPD(ax, ax, s)
	num := g.ld(g.k64(tanhP[0]))
	c.VMULPD(s, num, num)
	c.VADDPD(g.k64(tanhP[1]), num, num)
	c.VMULPD(s, num, num)
	c.VADDPD(g.k64(tanhP[2]), num, num)
	den := c.YMM()
	c.VADDPD(g.k64(tanhQ[0]), s, den)
	c.VMULPD(s, den, den)
	c.VADDPD(g.k64(tanhQ[1]), den, den)
	c.VMULPD(s, den, den)
	c.VADDPD(g.k64(tanhQ[2]), den, den)
	c.VMULPD(ax, s, s)
	c.VMULPD(num, s, s)
	c.VDIVPD(den, s, s)
	c.VADDPD(ax, s, s) // |x| + |x|*s*P/Q
	msk := c.YMM()
	c.VCMPPD(operand.Imm(cmpGEOS), g.k64(0.625), ax, msk)
	c.VBLENDVPD(msk, one, s, s)
	c.VCMPPD(operand.Imm(cmpGTOS), g.k64(0.5*tanhMaxLog), ax, msk)
	c.VBLENDVPD(msk, g.k64(1), s, s)
	c.VANDPD(g.b64(1<<63), sgn, ax)
	c.VORPD(ax, s, s)
	return s
}

// tanhMaxLog is math.Tanh's MAXLOG, log(2^127).
const tanhMaxLog = 8.8029691931113054295988e+01
