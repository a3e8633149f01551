package tiers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// This file checks docs/language.md's statement "Where the tiers may
// differ": every kernel of the package runs in each assembly tier the
// machine has and in the Go loops, in one process (the generated flags
// ocannlAVX512 and ocannlAVX2 set by the test), on operands full of
// special values, and each output cell must satisfy its family's rule.

// tierFlags are the values of the generated flags that select a tier.
type tierFlags struct {
	name         string
	avx512, avx2 bool
}

// goLoops is the Go tier.
var goLoops = tierFlags{"Go loops", false, false}

// family is a kernel output's rule (docs/language.md's table).
type family int

const (
	// famExact: the same bits, except that a NaN's sign and payload may
	// differ (a NaN where the other tier has a NaN). Maps, fills, max and
	// min (reductions, max-pool), sums across rows, the max-pool gradient.
	famExact family = iota
	// famSum: sums that the kernels reassociate (contractions,
	// convolutions, sums along rows); see checkSum.
	famSum
	// famTransc: exp, exp2, log, log2, tanh; see checkTransc.
	famTransc
)

func (f family) String() string {
	return [...]string{"exact", "sum", "transcendental"}[f]
}

// output is one result of a kernel: the argument holding it and its rule.
type output struct {
	arg int
	fam family
}

// kernel is one function of the package under test.
type kernel struct {
	name string
	fn   any // func(pointers to arrays...): its inputs, then its outputs
	outs []output
	prim string // famTransc: the primitive
	// fusable: the Go loops compute a*b + c, which the Go compiler fuses
	// into one FMA from GOAMD64=v3 on (the Go spec allows it), so that
	// their bits then differ from the kernel's.
	fusable bool
	// bounds, when set, returns a famSum output's S and n per cell (see
	// checkSum); by default the Go loops compute them (sumBounds).
	bounds func(args []any) (s, n []float64)
}

// last is the usual output: the last argument, with rule fam.
func last(fn any, fam family) []output {
	return []output{{reflect.TypeOf(fn).NumIn() - 1, fam}}
}

func kernels() []kernel {
	k := func(name string, fn any, fam family) kernel { return kernel{name: name, fn: fn, outs: last(fn, fam)} }
	tr := func(name string, fn any, prim string) kernel {
		return kernel{name: name, fn: fn, outs: last(fn, famTransc), prim: prim}
	}
	fusable := func(kn kernel) kernel { kn.fusable = true; return kn }
	return []kernel{
		k("MatMul", MatMul, famSum),
		k("MatMulF64", MatMulF64, famSum),
		k("Dot", Dot, famSum),
		k("DotF64", DotF64, famSum),
		k("Conv", Conv, famSum),
		k("ConvPadded", ConvPadded, famSum),
		k("ConvDilated", ConvDilated, famSum),
		k("ConvKernelGrad", ConvKernelGrad, famSum),
		fusable(k("Arith", Arith, famExact)),
		fusable(k("ArithF64", ArithF64, famExact)),
		k("Compare", Compare, famExact),
		k("Gate", Gate, famExact),
		k("MaxPool", MaxPool, famExact),
		k("MinInto", MinInto, famExact),
		{name: "PoolBackward", fn: poolBackward, outs: []output{{2, famExact}, {3, famSum}}, bounds: poolLossBounds},
		k("SumRows", SumRows, famSum),
		k("SumCols", SumCols, famExact),
		k("MaxRows", MaxRows, famExact),
		k("MaxRowsF64", MaxRowsF64, famExact),
		k("MaxCols", MaxCols, famExact),
		k("MinRows", MinRows, famExact),
		tr("Exp", Exp, "exp"),
		tr("ExpF64", ExpF64, "exp"),
		tr("Exp2", Exp2, "exp2"),
		tr("Exp2F64", Exp2F64, "exp2"),
		tr("Log", Log, "log"),
		tr("LogF64", LogF64, "log"),
		tr("Log2", Log2, "log2"),
		tr("Log2F64", Log2F64, "log2"),
		tr("Tanh", Tanh, "tanh"),
		tr("TanhF64", TanhF64, "tanh"),
		fusable(k("Exact", Exact, famExact)),
		fusable(k("ExactF64", ExactF64, famExact)),
		k("ExactWide", ExactWide, famExact),
		k("ExactWideF64", ExactWideF64, famExact),
		k("Gelus", Gelus, famExact),
		k("GelusF64", GelusF64, famExact),
		k("Gelu", Gelu, famExact),
		k("GeluBackward", geluBackward, famExact),
	}
}

// geluBackward runs GeluNet's Backward at x with the loss's weights r:
// x's gradient r * gelu_grad(x) into grad.
func geluBackward(x *[4096]float32, r *[16][256]float32, grad *[4096]float32) {
	m := new(GeluNet)
	m.Params.X = *x
	m.Backward(r)
	*grad = m.Grads.X
}

// poolBackward runs Pool's Backward on the image img and weights r: the
// image's gradient into grad (the max-pool gradient's map), the loss
// (a sum of products of the pooled image and r) into loss.
func poolBackward(img *[4096]float32, r *[2][8][8][8]float32, grad *[4096]float32, loss *[1]float32) {
	m := new(Pool)
	m.Params.Img = *img
	loss[0] = m.Backward(r)
	*grad = m.Grads.Img
}

// poolLossBounds is S and n of Pool's loss: the sum over the pooled
// image's cells of |y·r| (y the 2x2 maximum, with Go's max), 1024 terms.
func poolLossBounds(args []any) (s, n []float64) {
	img, r := args[0].(*[4096]float32), args[1].(*[2][8][8][8]float32)
	sum := 0.0
	for b := range 2 {
		for oh := range 8 {
			for ow := range 8 {
				for c := range 8 {
					y := float32(math.Inf(-1))
					for wh := range 2 {
						for ww := range 2 {
							y = max(y, img[2048*b+256*oh+128*wh+16*ow+8*ww+c])
						}
					}
					sum += math.Abs(float64(y) * float64(r[b][oh][ow][c]))
				}
			}
		}
	}
	return []float64{sum}, []float64{1024}
}

// cells views an argument (a pointer to nested arrays) as its cells.
type cells struct {
	p   unsafe.Pointer
	n   int
	f64 bool
}

func view(a any) cells {
	v := reflect.ValueOf(a)
	t, n := v.Type().Elem(), 1
	for t.Kind() == reflect.Array {
		n *= t.Len()
		t = t.Elem()
	}
	return cells{v.UnsafePointer(), n, t.Kind() == reflect.Float64}
}

func (c cells) bits(i int) uint64 {
	if c.f64 {
		return *(*uint64)(unsafe.Add(c.p, 8*i))
	}
	return uint64(*(*uint32)(unsafe.Add(c.p, 4*i)))
}

func (c cells) set(i int, b uint64) {
	if c.f64 {
		*(*uint64)(unsafe.Add(c.p, 8*i)) = b
	} else {
		*(*uint32)(unsafe.Add(c.p, 4*i)) = uint32(b)
	}
}

func (c cells) float(i int) float64 { return bitsFloat(c.bits(i), c.f64) }

func bitsFloat(b uint64, f64 bool) float64 {
	if f64 {
		return math.Float64frombits(b)
	}
	return float64(math.Float32frombits(uint32(b)))
}

func floatBits(f float64, f64 bool) uint64 {
	if f64 {
		return math.Float64bits(f)
	}
	return uint64(math.Float32bits(float32(f)))
}

// newArgs allocates fn's arguments.
func newArgs(fn any) []any {
	ft := reflect.TypeOf(fn)
	args := make([]any, ft.NumIn())
	for i := range args {
		args[i] = reflect.New(ft.In(i).Elem()).Interface()
	}
	return args
}

// cloneArgs copies args, each cell mapped by f (nil: unchanged).
func cloneArgs(fn any, args []any, f func(b uint64, f64 bool) uint64) []any {
	out := newArgs(fn)
	for i, a := range args {
		src, dst := view(a), view(out[i])
		for j := range src.n {
			b := src.bits(j)
			if f != nil {
				b = f(b, src.f64)
			}
			dst.set(j, b)
		}
	}
	return out
}

// run calls fn on args in tier f.
func run(fn any, args []any, f tierFlags) {
	defer setTiers(f)()
	vals := make([]reflect.Value, len(args))
	for i, a := range args {
		vals[i] = reflect.ValueOf(a)
	}
	reflect.ValueOf(fn).Call(vals)
}

// sumBounds returns, per cell of output o, S = |c0| + Σ|t_k| (the Go
// loops on the operands' absolute values: NaN when a term is NaN, a NaN
// operand or ∞·0) and n, the number of terms (the Go loops on ones).
func sumBounds(kn kernel, args []any, o int) (s, n []float64) {
	abs := cloneArgs(kn.fn, args, func(b uint64, f64 bool) uint64 {
		if f64 {
			return b &^ (1 << 63)
		}
		return b &^ (1 << 31)
	})
	run(kn.fn, abs, goLoops)
	ones := cloneArgs(kn.fn, args, func(b uint64, f64 bool) uint64 { return floatBits(1, f64) })
	run(kn.fn, ones, goLoops)
	sv, nv := view(abs[o]), view(ones[o])
	s, n = make([]float64, sv.n), make([]float64, sv.n)
	for i := range s {
		s[i], n[i] = sv.float(i), nv.float(i)
	}
	return s, n
}

// Element type constants of the rules: ε (2^-23, 2^-52: twice the unit
// roundoff), η (the smallest subnormal) and the largest finite value.
func epsEtaMax(f64 bool) (eps, eta, maxF float64) {
	if f64 {
		return 0x1p-52, 0x1p-1074, math.MaxFloat64
	}
	return 0x1p-23, 0x1p-149, math.MaxFloat32
}

// checkExact is famExact's rule: the same bits, or NaN in both.
func checkExact(g, a uint64, f64 bool) string {
	gn, an := math.IsNaN(bitsFloat(g, f64)), math.IsNaN(bitsFloat(a, f64))
	switch {
	case gn && an, g == a:
		return ""
	case gn || an:
		return "NaN in one tier only"
	}
	return "different bits"
}

// checkSum is famSum's rule for a cell with S = |c0| + Σ|t_k| (the terms
// t_k, the products of a contraction or the values of a sum, exact) and
// n terms: when a term is NaN (S is NaN), both are NaN; when S <= max/2
// (no term, product or partial sum can overflow), both are finite and
// |go - asm| <= 2·n·ε·S + n·η (the sign of a zero may differ); beyond,
// nothing is promised.
func checkSum(g, a uint64, f64 bool, s, n float64) (bad string, unspecified bool) {
	gf, af := bitsFloat(g, f64), bitsFloat(a, f64)
	eps, eta, maxF := epsEtaMax(f64)
	switch {
	case math.IsNaN(s):
		if !math.IsNaN(gf) || !math.IsNaN(af) {
			return "a NaN term, but not NaN in both tiers", false
		}
	case s <= maxF/2:
		if math.IsNaN(gf) || math.IsInf(gf, 0) || math.IsNaN(af) || math.IsInf(af, 0) {
			return fmt.Sprintf("S=%g <= max/2, but not finite in both tiers", s), false
		}
		if tol := 2*n*eps*s + n*eta; math.Abs(gf-af) > tol {
			return fmt.Sprintf("differ by %g > 2nεS + nη = %g (n=%g S=%g)", math.Abs(gf-af), tol, n, s), false
		}
	default:
		return "", g != a
	}
	return "", false
}

// ulps is the distance between two non-NaN values in units in the last
// place (consecutive floats are 1 apart, +0 and -0 0 apart, the largest
// finite value and Inf 1 apart).
func ulps(g, a uint64, f64 bool) float64 {
	signBit := uint64(1) << 31
	if f64 {
		signBit = 1 << 63
	}
	gs, gm := g&signBit != 0, g&^signBit
	as, am := a&signBit != 0, a&^signBit
	switch {
	case gs != as:
		return float64(gm + am)
	case gm > am:
		return float64(gm - am)
	}
	return float64(am - gm)
}

// checkTransc is famTransc's rule for the result of prim at x: NaN in
// both or in neither; within 1 ulp (float32) or 2 ulp (float64) of the
// Go loops; except, in float64, where the Go loops' package math is off:
// exp for 709.43 < x < 709.79 (math.Exp gives +Inf, the kernel the
// finite value), log of subnormals, and log2 for 1 < x < 2
// (math.Log2 loses digits there: within 2^-51 absolute).
func checkTransc(prim string, x float64, g, a uint64, f64 bool) (bad string, unspecified bool) {
	gf, af := bitsFloat(g, f64), bitsFloat(a, f64)
	if math.IsNaN(gf) || math.IsNaN(af) {
		if math.IsNaN(gf) && math.IsNaN(af) {
			return "", false
		}
		return "NaN in one tier only", false
	}
	bound := 1.0
	if f64 {
		bound = 2
		switch {
		case prim == "exp" && x > 709.43 && x < 709.79:
			return "", g != a
		case prim == "log" && x > 0 && x < 0x1p-1022:
			return "", g != a
		case prim == "log2" && x > 1 && x < 2:
			if d := math.Abs(gf - af); d > 0x1p-51 && ulps(g, a, f64) > bound {
				return fmt.Sprintf("log2(%v) differs by %g > 2^-51 and by %g ulp", x, d, ulps(g, a, f64)), false
			}
			return "", false
		}
	}
	if d := ulps(g, a, f64); d > bound {
		return fmt.Sprintf("%s(%v): %g ulp apart (go %v, asm %v), bound %g", prim, x, d, gf, af, bound), false
	}
	return "", false
}

// scenario fills operands with one kind of special values.
type scenario struct {
	name string
	gen  func(r *rand.Rand, f64 bool) uint64
}

// nans are quiet and signaling NaNs of both signs with payloads.
var (
	nans32 = []uint32{0x7fc00001, 0x7fc0beef, 0xffc01234, 0x7fa00000, 0xff800001}
	nans64 = []uint64{0x7ff8000000000001, 0x7ff800000000beef, 0xfff8000000001234, 0x7ff4000000000000, 0xfff0000000000001}
)

func scenarios() []scenario {
	sign := func(r *rand.Rand) float64 { return float64(1 - 2*r.IntN(2)) }
	// binades: ±2^[lo32, hi32) in float32, ±2^[lo64, hi64) in float64.
	binades := func(lo32, hi32, lo64, hi64 float64) func(r *rand.Rand, f64 bool) float64 {
		return func(r *rand.Rand, f64 bool) float64 {
			if f64 {
				return sign(r) * math.Exp2(lo64+(hi64-lo64)*r.Float64())
			}
			return sign(r) * math.Exp2(lo32+(hi32-lo32)*r.Float64())
		}
	}
	uniform := func(r *rand.Rand, f64 bool) float64 { return 2*r.Float64() - 1 }
	nan := func(r *rand.Rand, f64 bool) uint64 {
		if f64 {
			return nans64[r.IntN(len(nans64))]
		}
		return uint64(nans32[r.IntN(len(nans32))])
	}
	val := func(f func(r *rand.Rand, f64 bool) float64) func(r *rand.Rand, f64 bool) uint64 {
		return func(r *rand.Rand, f64 bool) uint64 { return floatBits(f(r, f64), f64) }
	}
	// mix draws from the generators with the given weights.
	mix := func(ws []int, gs ...func(r *rand.Rand, f64 bool) uint64) func(r *rand.Rand, f64 bool) uint64 {
		total := 0
		for _, w := range ws {
			total += w
		}
		return func(r *rand.Rand, f64 bool) uint64 {
			k := r.IntN(total)
			for i, w := range ws {
				if k < w {
					return gs[i](r, f64)
				}
				k -= w
			}
			panic("unreachable")
		}
	}
	zero := val(func(r *rand.Rand, f64 bool) float64 { return math.Copysign(0, sign(r)) })
	inf := val(func(r *rand.Rand, f64 bool) float64 { return math.Inf(int(sign(r))) })
	// transcendental inputs: any bit pattern, and where the functions
	// are delicate (overflow and underflow thresholds, near 1,
	// subnormals).
	anyBits := func(r *rand.Rand, f64 bool) uint64 {
		if f64 {
			return r.Uint64()
		}
		return uint64(r.Uint32())
	}
	delicate := func(r *rand.Rand, f64 bool) uint64 {
		var v float64
		switch r.IntN(6) {
		case 0:
			v = sign(r) * (700 + 12*r.Float64()) // float64 exp overflow
		case 1:
			v = sign(r) * (80 + 75*r.Float64()) // float32 exp, exp2 thresholds
		case 2:
			v = 1 + math.Exp2(-40*r.Float64()) // log, log2 in (1, 2), near 1
		case 3:
			if f64 {
				return r.Uint64N(1 << 52) // subnormal
			}
			return uint64(r.Uint32N(1 << 23))
		case 4:
			v = sign(r) * (1000 + 200*r.Float64()) // float64 exp2 thresholds
		default:
			v = sign(r) * 20 * r.Float64() // tanh's range
		}
		return floatBits(v, f64)
	}
	return []scenario{
		{"uniform", val(uniform)},
		{"zeros", mix([]int{1, 1}, zero, val(uniform))},
		// zeros of both signs only: maxima and minima are zeros.
		{"signed zeros", zero},
		{"nan", mix([]int{1, 29}, nan, val(uniform))},
		{"inf", mix([]int{1, 29}, inf, val(uniform))},
		// products of about 2^126-2^128: some overflow, sums do.
		{"overflowing products", val(binades(63, 64, 511, 512))},
		// values near the largest finite: products overflow, sums of
		// values too.
		{"overflowing sums", val(binades(124, 128, 1020, 1024))},
		// products of 2^-160-2^-120 (float32): subnormal or zero.
		{"underflowing products", val(binades(-80, -60, -560, -500))},
		// products below half the smallest subnormal: ±0.
		{"vanishing products", val(binades(-90, -80, -600, -560))},
		{"everything", mix([]int{2, 2, 2, 2, 2, 8}, nan, zero, inf, val(binades(62, 64, 510, 512)), val(binades(-90, -60, -600, -500)), val(uniform))},
		{"transcendental", mix([]int{1, 1}, anyBits, delicate)},
	}
}

// fusesFMA reports whether the Go compiler fused a*b + c into one FMA
// in this binary (GOAMD64=v3 or above).
var fusesFMA = fmaProbe(1+0x1p-12, 1+0x1p-12, -(1+0x1p-11)) != 0

//go:noinline
func fmaProbe(a, b, c float32) float32 { return a*b + c }

// tierDiff is what one kernel output showed in one scenario and tier.
type tierDiff struct {
	violations  []string
	bitsDiffer  int            // cells whose bits differ
	nanBits     int            // ... both NaN
	finite      int            // ... both finite (famSum: within the bound)
	maxULP      float64        // the largest ulp distance of those
	unspecified map[string]int // famSum/famTransc cells beyond the promise: "go -> asm" classes
	zeroSign    map[string]int // cells holding zeros of different signs
}

func class(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	case f == 0 && math.Signbit(f):
		return "-0"
	case f == 0:
		return "+0"
	}
	return "finite"
}

// compare checks output out of a kernel call in an assembly tier (asmA)
// against the Go loops' (goA) by out's family rule; s and n are a famSum
// output's bounds.
func compare(kn kernel, out output, in, goA, asmA []any, s, n []float64) tierDiff {
	d := tierDiff{unspecified: map[string]int{}, zeroSign: map[string]int{}}
	gv, av := view(goA[out.arg]), view(asmA[out.arg])
	for i := range gv.n {
		g, a := gv.bits(i), av.bits(i)
		gf, af := bitsFloat(g, gv.f64), bitsFloat(a, gv.f64)
		var bad string
		var unspec bool
		switch out.fam {
		case famExact:
			bad = checkExact(g, a, gv.f64)
		case famSum:
			bad, unspec = checkSum(g, a, gv.f64, s[i], n[i])
		case famTransc:
			bad, unspec = checkTransc(kn.prim, view(in[0]).float(i), g, a, gv.f64)
		}
		if bad != "" {
			d.violations = append(d.violations, fmt.Sprintf("cell %d: go %v (%#x), asm %v (%#x): %s", i, gf, g, af, a, bad))
		}
		if g == a {
			continue
		}
		d.bitsDiffer++
		switch {
		case unspec:
			d.unspecified[class(gf)+" -> "+class(af)]++
		case math.IsNaN(gf) && math.IsNaN(af):
			d.nanBits++
		case gf == 0 && af == 0:
			d.zeroSign[class(gf)+" -> "+class(af)]++
		case !math.IsNaN(gf) && !math.IsNaN(af) && !math.IsInf(gf, 0) && !math.IsInf(af, 0):
			d.finite++
			d.maxULP = max(d.maxULP, ulps(g, a, gv.f64))
		}
	}
	return d
}

// TestTiersAgreeAsDocumented runs every kernel of the package in each
// assembly tier of this machine and in the Go loops on the same operands
// (uniform values, zeros of both signs, NaNs with payloads and both
// signs, quiet and signaling, infinities, overflowing products and sums,
// underflowing products, all bit patterns) and checks each output cell
// against its family's rule in docs/language.md, "Where the tiers may
// differ" (checkExact, checkSum, checkTransc). With -v it logs what
// differed.
func TestTiersAgreeAsDocumented(t *testing.T) {
	tiers := asmTiers()
	if len(tiers) == 0 {
		t.Skip("no assembly tier in this build, on this CPU or within OCANNLGEN_CPU: only the Go loops run")
	}
	for _, tf := range tiers {
		t.Logf("tier %s checked against the Go loops", tf.name)
	}
	if fusesFMA {
		t.Log("the Go compiler fuses a*b + c here (GOAMD64=v3 or above): the maps computing it are not compared bit for bit")
	}
	for _, kn := range kernels() {
		t.Run(kn.name, func(t *testing.T) {
			for si, sc := range scenarios() {
				rng := rand.New(rand.NewPCG(uint64(si), 0x71e5))
				in := newArgs(kn.fn)
				for _, a := range in {
					c := view(a)
					for j := range c.n {
						c.set(j, sc.gen(rng, c.f64))
					}
				}
				goA := cloneArgs(kn.fn, in, nil)
				run(kn.fn, goA, goLoops)
				s, n := make([][]float64, len(kn.outs)), make([][]float64, len(kn.outs))
				for o, out := range kn.outs {
					switch {
					case out.fam != famSum:
					case kn.bounds != nil:
						s[o], n[o] = kn.bounds(in)
					default:
						s[o], n[o] = sumBounds(kn, in, out.arg)
					}
				}
				for _, tf := range tiers {
					asmA := cloneArgs(kn.fn, in, nil)
					run(kn.fn, asmA, tf)
					for o, out := range kn.outs {
						if kn.fusable && fusesFMA && out.fam == famExact {
							continue
						}
						d := compare(kn, out, in, goA, asmA, s[o], n[o])
						for i, v := range d.violations {
							if i == 5 {
								t.Errorf("... %d violations in all", len(d.violations))
								break
							}
							t.Errorf("%s, %s, output %d (%s): %s", sc.name, tf.name, out.arg, out.fam, v)
						}
						if d.bitsDiffer > 0 {
							var un []string
							for k, v := range d.unspecified {
								un = append(un, fmt.Sprintf("%s: %d", k, v))
							}
							slices.Sort(un)
							var zs []string
							for k, v := range d.zeroSign {
								zs = append(zs, fmt.Sprintf("%s: %d", k, v))
							}
							slices.Sort(zs)
							t.Logf("%-21s %s: %d cells differ: %d NaN bits, zero signs {%s}, %d finite (at most %g ulp), beyond the promise {%s}",
								sc.name, tf.name, d.bitsDiffer, d.nanBits, strings.Join(zs, ", "), d.finite, d.maxULP, strings.Join(un, ", "))
						}
					}
				}
			}
		})
	}
}

// TestTierRulesCatchViolations feeds the rules results that break the
// documented statement (and some that keep it), so that
// TestTiersAgreeAsDocumented is known to fail when a kernel breaks it.
func TestTierRulesCatchViolations(t *testing.T) {
	b32 := func(f float32) uint64 { return uint64(math.Float32bits(f)) }
	b64 := math.Float64bits
	negZero := float32(math.Copysign(0, -1))
	nanA, nanB := uint64(nans32[0]), uint64(nans32[2])
	exact := []struct {
		g, a uint64
		bad  bool
	}{
		{b32(1.5), b32(1.5), false},
		{nanA, nanB, false},                     // NaN bits are not promised
		{b32(0), b32(negZero), true},            // max(+0, -0) must be +0 in both
		{b32(1), b32(1.0000001), true},          // one ulp
		{b32(float32(math.Inf(1))), nanA, true}, // NaN in one tier only
		{nanA, b32(0), true},                    //
		{b32(float32(math.Inf(-1))), b32(float32(math.Inf(-1))), false},
	}
	for _, c := range exact {
		if got := checkExact(c.g, c.a, false); (got != "") != c.bad {
			t.Errorf("checkExact(%#x, %#x) = %q, want a violation: %v", c.g, c.a, got, c.bad)
		}
	}
	sum := []struct {
		g, a, s, n  float64
		bad, unspec bool
	}{
		{1, 1 + 3*0x1p-23, 1, 2, false, false},            // within 2nεS
		{1, 1 + 5*0x1p-23, 1, 2, true, false},             // beyond it
		{0, math.Copysign(0, -1), 1e-30, 8, false, false}, // the sign of a zero
		{1, math.NaN(), 1, 2, true, false},                // a NaN where both must be finite
		{math.Inf(1), math.Inf(1), 1e38, 4, true, false},  // S <= max/2: no overflow allowed
		{math.NaN(), 1, math.NaN(), 4, true, false},       // a NaN term: NaN in both
		{math.NaN(), math.Inf(1), 3e38, 4, false, true},   // overflow: nothing promised
	}
	for _, c := range sum {
		bad, unspec := checkSum(b32(float32(c.g)), b32(float32(c.a)), false, c.s, c.n)
		if (bad != "") != c.bad || unspec != c.unspec {
			t.Errorf("checkSum(%v, %v, S=%v, n=%v) = %q, %v; want a violation: %v, unspecified: %v", c.g, c.a, c.s, c.n, bad, unspec, c.bad, c.unspec)
		}
	}
	tr := []struct {
		prim    string
		x, g, a float64
		f64     bool
		bad     bool
	}{
		{"exp", 1, math.E, math.Nextafter(math.E, 9), true, false},
		{"exp", 1, math.E, math.Nextafter(math.Nextafter(math.Nextafter(math.E, 9), 9), 9), true, true},
		{"exp", 709.5, math.Inf(1), 1.6e308, true, false}, // math.Exp's +Inf there
		{"exp", 700, math.Inf(1), 1e304, true, true},
		{"exp", 1, float64(float32(math.E)), float64(math.Nextafter32(float32(math.E), 9)), false, false},
		{"exp", 1, float64(float32(math.E)), float64(math.Nextafter32(math.Nextafter32(float32(math.E), 9), 9)), false, true},
		{"log", -1, math.NaN(), math.Inf(-1), true, true},
		{"log2", 1 + 0x1p-40, 0x1p-40 * math.Log2E, 0x1p-40*math.Log2E + 0x1p-52, true, false}, // near 1: absolute
		{"log2", 1 + 0x1p-40, 0x1p-40 * math.Log2E, 0x1p-40*math.Log2E + 0x1p-49, true, true},
	}
	for _, c := range tr {
		g, a := b32(float32(c.g)), b32(float32(c.a))
		if c.f64 {
			g, a = b64(c.g), b64(c.a)
		}
		if bad, _ := checkTransc(c.prim, c.x, g, a, c.f64); (bad != "") != c.bad {
			t.Errorf("checkTransc(%s(%v): %v, %v) = %q, want a violation: %v", c.prim, c.x, c.g, c.a, bad, c.bad)
		}
	}
}
