package asm

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
	"github.com/ocannlgen/ocannlgen/emit/target"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
)

// ReduceKind is the shape of a reduction kernel.
type ReduceKind int

const (
	// AlongRows reduces the unit-stride axis: each row of N elements
	// becomes one cell of C (row sums and maxima of a softmax, the mean
	// and variance of a layer norm). Vector accumulators run across the
	// row and are reduced horizontally at its end.
	AlongRows ReduceKind = iota
	// AcrossRows reduces an outer axis: Rows rows of N unit-stride
	// elements are accumulated into the N cells of C (a bias gradient
	// summed over the batch). Each lane adds its column in row order, as
	// the Go loops do.
	AcrossRows
)

// String names the kind as the explain output prints it.
func (k ReduceKind) String() string {
	if k == AcrossRows {
		return "across-rows"
	}
	return "along-rows"
}

// ReduceSpec is one specialized reduction kernel, C op= reduce(f(X0,
// X1, ...)) with op one of add, sub, max, min and f a pointwise
// expression of loads (the primitives of mapPrims, neg). Reduction
// kernels are emitted for the AVX2 and the AVX-512 tier (the AVX-512
// kernel since 2026-11-29; see docs/design.md).
type ReduceSpec struct {
	Elem  string // "float32" or "float64"
	Kind  ReduceKind
	Accum ops.AccumName // ops.AccAdd, AccSub, AccMax or AccMin
	// Expr is f, each Load's Tensor numbering the operand.
	Expr loopir.Expr
	// Stride0 marks the operands constant along the vector axis (read
	// once per row, or once if their row stride is 0 as well).
	Stride0 []bool
	// N is the length of the vector axis (unit stride): the reduced one
	// (AlongRows) or C's (AcrossRows).
	N int
	// Rows is the number of rows: C's cells (AlongRows) or the reduced
	// rows (AcrossRows); RowStride[0] is C's stride between rows (0 for
	// AcrossRows), RowStride[1+j] operand j's.
	Rows      int
	RowStride []int
	// Init: the kernel starts each cell from InitVal instead of C's
	// value (it absorbs the pre-fill of C).
	Init    bool
	InitVal float64
}

// key identifies the kernel among a package's.
func (r *ReduceSpec) key() string {
	return fmt.Sprintf("red/%s/%d/%s/%d/%v/%d/%v/%v/%v/%s", r.Elem, r.Kind, r.Accum, r.N, r.Stride0, r.Rows, r.RowStride,
		r.Init, math.Float64bits(r.InitVal), exprKey(r.Expr))
}

// neutral is the accumulator's neutral element.
func (r *ReduceSpec) neutral() float64 {
	switch r.Accum {
	case ops.AccMax:
		return math.Inf(-1)
	case ops.AccMin:
		return math.Inf(1)
	}
	return 0
}

// constants are the values the kernel loads from the constant table:
// 0 and 1 unless the expression is plain arithmetic, its constants, the neutral element and the initial
// value.
func (r *ReduceSpec) constants() []float64 {
	m := MapSpec{Expr: r.Expr}
	var out []float64
	if usesSelect(r.Expr) {
		out = []float64{0, 1}
	}
	out = append(out, m.constants()...)
	out = append(out, r.neutral())
	if r.Init {
		out = append(out, r.InitVal)
	}
	return out
}

// usesSelect reports whether e may need the constants 0 and 1 from the
// table: any primitive besides plain arithmetic (relu, comparisons and
// where build on them; primitives added later may too).
func usesSelect(e loopir.Expr) bool {
	ap, ok := e.(*loopir.Apply)
	if !ok {
		return false
	}
	switch ap.Prim {
	case ops.Add, ops.Sub, ops.Mul, ops.Div, ops.ID:
	default:
		return true
	}
	for _, a := range ap.Args {
		if usesSelect(a) {
			return true
		}
	}
	return false
}

// ReduceNest is a perfect nest the reduction classifier recognized: the
// Go loops around the call, C and the operands, and each one's index
// with the kernel's loop variables set to zero.
type ReduceNest struct {
	Spec  ReduceSpec
	Outer []*loopir.For
	C     int
	Ins   []*loopir.Load
	Zero  []loopir.IndexExpr
	ZIns  [][]loopir.IndexExpr
	// OuterReduces: a Go loop around the call is a reduction (C does not
	// depend on it), so the kernel cannot absorb a pre-fill.
	OuterReduces bool
}

// The size rules of the reduction kernels are target.Kernels'
// MinReduceElems, MinReduceN and MinAcrossN (TestReduceSizeRule
// measures a kernel against the loops over small shapes).

// redAccums are the accumulators a reduction kernel runs.
var redAccums = map[ops.AccumName]bool{ops.AccAdd: true, ops.AccSub: true, ops.AccMax: true, ops.AccMin: true}

// ClassifyReduce recognizes a perfect nest that is a reduction a kernel
// can run: the store accumulates (add, sub, max, min) a pointwise
// expression of loads of other tensors, at least one loop does not move
// C, and after merging loops whose strides compose either the reduced
// axis has unit stride (AlongRows) or C's kept axis has (AcrossRows).
// It returns nil otherwise.
func ClassifyReduce(kn target.Kernels, p *loopir.Program, loops []*loopir.For, st *loopir.Store, elem string) *ReduceNest {
	return ClassifyReduceFree(kn, p, loops, st, elem, nil)
}

// ClassifyReduceFree is ClassifyReduce where the indices may also
// mention the variables of free, bound outside the nest (see
// ClassifyFree).
func ClassifyReduceFree(kn target.Kernels, p *loopir.Program, loops []*loopir.For, st *loopir.Store, elem string, free map[int]bool) *ReduceNest {
	if elem != "float32" && elem != "float64" || len(loops) == 0 || !st.Accumulate || !redAccums[st.Accum] {
		return nil
	}
	expr, loads, ok := mapOperands(&loopir.Store{Tensor: st.Tensor, Value: negAsMul(st.Value)})
	if !ok || len(loads) > maxMapIns || len(loads) == 0 {
		return nil
	}
	// The transcendental primitives (transcend.go) need their constant
	// tables and temporaries, which the reduction emitter and its register
	// budget do not provide: such a reduction stays in Go loops.
	if usesPrim(expr, transPrims) {
		return nil
	}
	axes, ok := redAxes(p, loops, st, loads, free)
	if !ok {
		return nil
	}
	axes = mergeMapAxes(axes)
	kind, vec, rows := pickReduceAxes(axes, kn)
	if vec == nil {
		return nil
	}
	return buildReduceNest(kn, loops, st, elem, expr, loads, kind, vec, rows)
}

// negAsMul rewrites neg(x) as x * -1 (exact, signed zeros included; a
// NaN keeps its sign, where Go's -x flips it, and NaN bits are not
// promised: docs/language.md, "Where the tiers may differ") so that the
// pointwise evaluator runs it.
func negAsMul(e loopir.Expr) loopir.Expr {
	ap, ok := e.(*loopir.Apply)
	if !ok {
		return e
	}
	args := make([]loopir.Expr, len(ap.Args))
	for i, a := range ap.Args {
		args[i] = negAsMul(a)
	}
	if ap.Prim == ops.Neg && len(args) == 1 {
		return &loopir.Apply{Prim: ops.Mul, Args: []loopir.Expr{args[0], &loopir.Const{Value: -1}}}
	}
	return &loopir.Apply{Prim: ap.Prim, Args: args}
}

// redAxes returns one axis per loop, with the strides of C and of each
// operand along it. ok is false when an index is not flat, a stride is
// negative, no loop is a reduction, or an index mentions a variable
// bound neither in the nest nor in free.
func redAxes(p *loopir.Program, loops []*loopir.For, st *loopir.Store, loads []*loopir.Load, free map[int]bool) ([]*mapAxis, bool) {
	sc, ss, ok := strideMaps(p, st, loads)
	if !ok {
		return nil, false
	}
	inNest := map[int]bool{}
	reduces := false
	var axes []*mapAxis
	for _, l := range loops {
		if inNest[l.Var] || l.Extent < 1 {
			return nil, false
		}
		x := &mapAxis{vars: []int{l.Var}, extent: l.Extent, st: []int{sc[l.Var]}}
		for _, s := range ss {
			x.st = append(x.st, s[l.Var])
		}
		for _, v := range x.st {
			if v < 0 {
				return nil, false
			}
		}
		reduces = reduces || x.st[0] == 0 && l.Extent > 1
		inNest[l.Var] = true
		axes = append(axes, x)
	}
	if !boundIn(sc, ss, inNest, free) {
		return nil, false
	}
	return axes, reduces
}

// unitOrZero reports whether every operand stride of x is 0 or 1 and at
// least one is 1.
func unitOrZero(x *mapAxis) bool {
	one := false
	for _, s := range x.st[1:] {
		if s != 0 && s != 1 {
			return false
		}
		one = one || s == 1
	}
	return one
}

// pickReduceAxes chooses the kernel's vector axis and rows axis: across
// rows when C has a unit-stride axis of at least minAcrossN with unit or
// zero operand strides (the reduced axis, the longest, is then the
// rows), else along rows when a reduced axis has unit or zero operand
// strides (the longest; the rows are C's longest axis, or none). vec is
// nil when neither fits.
func pickReduceAxes(axes []*mapAxis, kn target.Kernels) (kind ReduceKind, vec, rows *mapAxis) {
	longest := func(ok func(*mapAxis) bool) *mapAxis {
		var best *mapAxis
		for _, x := range axes {
			if ok(x) && (best == nil || x.extent > best.extent) {
				best = x
			}
		}
		return best
	}
	red := func(x *mapAxis) bool { return x.st[0] == 0 && x.extent > 1 }
	n := longest(func(x *mapAxis) bool { return x.st[0] == 1 && unitOrZero(x) })
	if r := longest(red); n != nil && r != nil && n.extent >= kn.MinAcrossN {
		return AcrossRows, n, r
	}
	r := longest(func(x *mapAxis) bool { return red(x) && unitOrZero(x) })
	if r == nil {
		return 0, nil, nil
	}
	return AlongRows, r, longest(func(x *mapAxis) bool { return x.st[0] != 0 })
}

// buildReduceNest assembles the ReduceNest for the vector axis vec and
// the rows axis (nil: one row), applying the size rules. It returns nil
// when the kernel is too small or would span 1 GiB or more.
func buildReduceNest(kn target.Kernels, loops []*loopir.For, st *loopir.Store, elem string, expr loopir.Expr, loads []*loopir.Load, kind ReduceKind, vec, rows *mapAxis) *ReduceNest {
	n := &ReduceNest{C: st.Tensor, Ins: loads}
	n.Spec = ReduceSpec{Elem: elem, Kind: kind, Accum: st.Accum, Expr: expr, N: vec.extent, Rows: 1, RowStride: make([]int, len(vec.st))}
	for _, s := range vec.st[1:] {
		n.Spec.Stride0 = append(n.Spec.Stride0, s == 0)
	}
	kv := map[int]bool{}
	for _, v := range vec.vars {
		kv[v] = true
	}
	if rows != nil {
		n.Spec.Rows, n.Spec.RowStride = rows.extent, rows.st
		for _, v := range rows.vars {
			kv[v] = true
		}
	}
	minN := kn.MinReduceN
	if kind == AcrossRows {
		minN = kn.MinAcrossN
	}
	if n.Spec.N < minN || n.Spec.N*n.Spec.Rows < kn.MinReduceElems || !n.Spec.fitsAVX2() {
		return nil // too small, or too many registers (an initial value and one accumulator must fit)
	}
	span := int64(n.Spec.N) * 8
	for _, s := range n.Spec.RowStride {
		span += int64(n.Spec.Rows) * int64(s) * 8
	}
	if span >= 1<<30 {
		return nil
	}
	cs := map[int]int{}
	for _, x := range st.Index {
		for _, t := range x.Terms {
			cs[t.Var] += t.Coeff
		}
	}
	for _, l := range loops {
		if !kv[l.Var] {
			n.Outer = append(n.Outer, l)
			n.OuterReduces = n.OuterReduces || cs[l.Var] == 0 && l.Extent > 1
		}
	}
	n.Zero = zeroVars(st.Index, kv)
	for _, l := range loads {
		n.ZIns = append(n.ZIns, zeroVars(l.Index, kv))
	}
	return n
}

// Describe is a one-line account of the reduction kernel, with the
// tiers it is emitted in.
func (r *ReduceSpec) Describe(tiers ...Config) string {
	what := fmt.Sprintf("%d rows of %d elements into %d cells", r.Rows, r.N, r.Rows)
	if r.Kind == AcrossRows {
		what = fmt.Sprintf("%d rows of %d elements into %d cells", r.Rows, r.N, r.N)
	}
	var ts []string
	for _, t := range tiers {
		ts = append(ts, t.Tier)
	}
	return fmt.Sprintf("%s %s %s reduction kernel, %s (%s): %s", r.Elem, r.Kind, r.Accum, what, redDesc(r), strings.Join(ts, ", "))
}

// redDesc renders the reduction's update for comments.
func redDesc(r *ReduceSpec) string {
	start := "c"
	if r.Init {
		start = fmt.Sprint(r.InitVal)
	}
	return fmt.Sprintf("c = %s %s %s", start, r.Accum, exprKey(r.Expr))
}

// AddReduce returns the index of the reduction kernel r in the set,
// adding it if the set does not have it yet.
func (s *Set) AddReduce(r ReduceSpec) int {
	k := r.key()
	if i, ok := s.rindex[k]; ok {
		return i
	}
	if s.rindex == nil {
		s.rindex = map[string]int{}
	}
	s.rindex[k] = len(s.reds)
	s.reds = append(s.reds, r)
	return len(s.reds) - 1
}

// ReduceName is the function implementing reduction kernel i in tier t
// (every tier emits every reduction kernel).
func (s *Set) ReduceName(i int, t Config) string {
	return fmt.Sprintf("ocannlReduce%d%s", i, t.Tier)
}

// reduceMaskNeeds reports which AVX2 tail-mask tables the reduction
// kernels use.
func (s *Set) reduceMaskNeeds() (need32, need64 bool) {
	for i := range s.reds {
		if s.reds[i].Elem == "float64" {
			need64 = true
		} else {
			need32 = true
		}
	}
	return need32, need64
}

// reduceConsts lists the constants the reduction kernels of elem need
// (none when there are none).
func (s *Set) reduceConsts(elem string) []float64 {
	var out []float64
	for i := range s.reds {
		if s.reds[i].Elem == elem {
			out = append(out, s.reds[i].constants()...)
		}
	}
	return out
}

// emitReduces adds the reduction kernels of tier t to c and records
// their tier in tierOf.
func (s *Set) emitReduces(c *build.Context, t Config, tab32, tab64 operand.Mem, ctab map[string]operand.Mem, coff map[string]map[uint64]int, tierOf map[string]string) {
	for i := range s.reds {
		r := &s.reds[i]
		tab := tab32
		if r.Elem == "float64" {
			tab = tab64
		}
		emitReduce(c, t, r, s.ReduceName(i, t), tab, ctab[r.Elem], coff[r.Elem])
		tierOf[s.ReduceName(i, t)] = t.Tier
	}
}

// otherReduces writes the stand-ins of the reduction kernels for builds
// without assembly.
func (s *Set) otherReduces(b io.Writer) {
	for _, t := range s.tiers {
		for i := range s.reds {
			n := s.ReduceName(i, t)
			if n == "" {
				continue
			}
			fmt.Fprintf(b, "\n// %s stands in for the assembly kernel; it is never called.\nfunc %s(%s *%s) { panic(\"ocannlgen: %s called without assembly\") }\n",
				n, n, strings.Join(redParams(&s.reds[i]), ", "), s.reds[i].Elem, n)
		}
	}
}

// redParams are the kernel's parameter names: c, then one per operand.
func redParams(r *ReduceSpec) []string {
	params := []string{"c"}
	for i := range r.Stride0 {
		params = append(params, fmt.Sprintf("x%d", i))
	}
	return params
}

// rgen emits one reduction kernel on top of the pointwise evaluator.
type rgen struct {
	*mgen
	r       *ReduceSpec
	cp      reg.Register
	neutral reg.VecVirtual
}

// emitReduce adds the reduction kernel name implementing r in tier cfg.
func emitReduce(c *build.Context, cfg Config, r *ReduceSpec, name string, maskTab, ctab operand.Mem, coff map[uint64]int) {
	c.Function(name)
	c.Attributes(attr.NOSPLIT)
	c.SignatureExpr(fmt.Sprintf("func(%s *%s)", strings.Join(redParams(r), ", "), r.Elem))
	c.Pragma("noescape")
	c.Doc(fmt.Sprintf("%s runs a %s %s %s reduction kernel: %s, %d rows of %d elements.", name, r.Elem, r.Kind, r.Accum, redDesc(r), r.Rows, r.N))
	sp := &Spec{Elem: r.Elem}
	m := &MapSpec{Elem: r.Elem, N: r.N, Expr: r.Expr, Stride0: r.Stride0}
	g := &rgen{mgen: &mgen{kgen: &kgen{c: c, cfg: cfg, s: sp, op: opsFor(r.Elem, c), es: sp.elemSize(), lanes: cfg.lanes(sp), maskTab: maskTab},
		m: m, consts: map[uint64]reg.VecVirtual{}, ctab: ctab, coff: coff}, r: r}
	g.cp = c.Load(c.Param("c"), c.GP64())
	for i := range r.Stride0 {
		g.ins = append(g.ins, c.Load(c.Param(fmt.Sprintf("x%d", i)), c.GP64()))
	}
	for _, v := range r.constants() {
		bits := math.Float64bits(v)
		if _, done := g.consts[bits]; done {
			continue
		}
		v := g.vec()
		g.op.bcast2(ctab.Offset(coff[bits]), v)
		g.consts[bits] = v
	}
	g.neutral = g.constVec(r.neutral())
	g.bcast = make([]reg.VecVirtual, len(r.Stride0))
	g.loadBcast(false)
	if r.Kind == AcrossRows {
		g.across()
	} else {
		g.along()
	}
	c.VZEROUPPER()
	c.RET()
}

// loadBcast loads the stride-0 operands whose row stride is nonzero
// (perRow) or zero (!perRow) into their broadcast registers.
func (g *rgen) loadBcast(perRow bool) {
	for i, s0 := range g.r.Stride0 {
		if s0 && (g.r.RowStride[1+i] != 0) == perRow {
			g.bcast[i] = g.vec()
			g.op.bcast2(mem(g.ins[i], 0), g.bcast[i])
		}
	}
}

// bump advances the operand pointers (and C's when withC) by the given
// byte counts: each operand by its per-row stride when row, else the
// non-stride-0 ones by vec bytes.
func (g *rgen) bump(row bool, vecBytes int, withC bool) {
	c := g.c
	if withC {
		d := vecBytes
		if row {
			d = g.r.RowStride[0] * g.es
		}
		if d != 0 {
			c.ADDQ(imm(d), g.cp)
		}
	}
	for i, s0 := range g.r.Stride0 {
		d := 0
		switch {
		case row:
			d = g.r.RowStride[1+i] * g.es
		case !s0:
			d = vecBytes
		}
		if d != 0 {
			c.ADDQ(imm(d), g.ins[i])
		}
	}
}

// combine is the accumulator's step on two vectors (of any width, a and
// b alike): a+b (add and sub along rows), a-b (sub across rows), or the
// maximum or minimum with Go's semantics (a NaN wins, +0 > -0): the two
// operand orders of VMAXPS agree except on zeros (AND of the signs for
// max, OR for min) and NaNs (an unordered compare sets all bits, a NaN).
func (g *rgen) combine(dst, a, b reg.Register, subtract bool) reg.Register {
	c := g.c
	if g.cfg.Wide {
		return g.combineWide(dst, a, b, subtract)
	}
	newv := func() reg.Register {
		if a.Size() == 16 {
			return c.XMM()
		}
		return c.YMM()
	}
	if dst == nil {
		dst = newv()
	}
	f64 := g.es == 8
	if g.addSub(dst, a, b, subtract) {
		return dst
	}
	d, e, u := newv(), newv(), newv()
	isMax := g.r.Accum == ops.AccMax
	switch {
	case f64 && isMax:
		c.VMAXPD(b, a, d)
		c.VMAXPD(a, b, e)
		c.VCMPPD(operand.Imm(cmpUnord), b, a, u)
		c.VANDPD(e, d, dst)
	case f64:
		c.VMINPD(b, a, d)
		c.VMINPD(a, b, e)
		c.VCMPPD(operand.Imm(cmpUnord), b, a, u)
		c.VORPD(e, d, dst)
	case isMax:
		c.VMAXPS(b, a, d)
		c.VMAXPS(a, b, e)
		c.VCMPPS(operand.Imm(cmpUnord), b, a, u)
		c.VANDPS(e, d, dst)
	default:
		c.VMINPS(b, a, d)
		c.VMINPS(a, b, e)
		c.VCMPPS(operand.Imm(cmpUnord), b, a, u)
		c.VORPS(e, d, dst)
	}
	if f64 {
		c.VORPD(u, dst, dst)
	} else {
		c.VORPS(u, dst, dst)
	}
	return dst
}

// addSub writes a + b (a - b when subtract) into dst for an add or sub
// reduction (the same instructions on YMM and ZMM registers) and
// reports whether it did: combine and combineWide handle max and min.
func (g *rgen) addSub(dst, a, b reg.Register, subtract bool) bool {
	if g.r.Accum != ops.AccAdd && g.r.Accum != ops.AccSub {
		return false
	}
	c := g.c
	f64 := g.es == 8
	switch {
	case subtract && f64:
		c.VSUBPD(b, a, dst)
	case subtract:
		c.VSUBPS(b, a, dst)
	case f64:
		c.VADDPD(b, a, dst)
	default:
		c.VADDPS(b, a, dst)
	}
	return true
}

// combineWide is combine on ZMM registers (the AVX-512 tier): the same
// instructions for add and sub; for max and min the same two VMAXPS
// (VMINPS) with their signs ANDed (ORed) by VPANDD/VPORD (VANDPS on ZMM
// needs AVX512DQ), and an unordered pair gets a + b, a NaN (its bits
// unspecified, as the AVX2 kernel's all-ones NaN is), through a compare
// into an opmask.
func (g *rgen) combineWide(dst, a, b reg.Register, subtract bool) reg.Register {
	c := g.c
	if dst == nil {
		dst = c.ZMM()
	}
	f64 := g.es == 8
	if g.addSub(dst, a, b, subtract) {
		return dst
	}
	d, e, nan, k := c.ZMM(), c.ZMM(), c.ZMM(), c.K()
	isMax := g.r.Accum == ops.AccMax
	switch {
	case f64 && isMax:
		c.VMAXPD(b, a, d)
		c.VMAXPD(a, b, e)
	case f64:
		c.VMINPD(b, a, d)
		c.VMINPD(a, b, e)
	case isMax:
		c.VMAXPS(b, a, d)
		c.VMAXPS(a, b, e)
	default:
		c.VMINPS(b, a, d)
		c.VMINPS(a, b, e)
	}
	if f64 {
		c.VCMPPD(operand.Imm(cmpUnord), b, a, k)
		c.VADDPD(b, a, nan)
	} else {
		c.VCMPPS(operand.Imm(cmpUnord), b, a, k)
		c.VADDPS(b, a, nan)
	}
	switch {
	case f64 && isMax:
		c.VPANDQ(e, d, dst)
	case f64:
		c.VPORQ(e, d, dst)
	case isMax:
		c.VPANDD(e, d, dst)
	default:
		c.VPORD(e, d, dst)
	}
	if f64 {
		c.VBLENDMPD(nan, dst, k, dst)
	} else {
		c.VBLENDMPS(nan, dst, k, dst)
	}
	return dst
}

// cmpUnord is the VCMPPS predicate UNORD_Q.
const cmpUnord = 3

// fresh returns v as an accumulator: a copy when v is a constant's or a
// broadcast operand's register (which the loop must keep).
func (g *rgen) fresh(v reg.VecVirtual) reg.Register {
	shared := false
	for _, k := range g.consts {
		shared = shared || k == v
	}
	for _, b := range g.bcast {
		shared = shared || b != nil && b == v
	}
	if !shared {
		return v
	}
	d := g.vec()
	g.c.VMOVUPS(v, d)
	return d
}

// value evaluates f at byte offset off; with mask set (a tail), the
// lanes past it become the neutral element.
func (g *rgen) value(off int, mask reg.Register) reg.VecVirtual {
	g.mask, g.masked = mask, mask != nil
	v := g.eval(g.m.Expr, off)
	if mask != nil {
		v = g.sel(mask, v, g.neutral)
	}
	g.masked = false
	return v
}

// unroll is the number of vector accumulators for nv vectors of work,
// fewer when the expression needs many registers.
func (g *rgen) unroll(nv int) int {
	return max(1, min(g.cfg.Kernels.RedUnroll, nv, g.cfg.Regs-g.r.fixedRegs()))
}

// fixedRegs bounds the YMM registers a kernel needs besides its
// accumulators: the constants, the broadcast operands, the tail mask,
// and the registers evaluating the expression and the update (three
// temporaries for max and min).
func (r *ReduceSpec) fixedRegs() int {
	n := len(r.constants()) + len(r.Stride0) + 1 + exprRegs(r.Expr)
	if r.Accum == ops.AccMax || r.Accum == ops.AccMin {
		n += 3
	}
	return n
}

// fitsAVX2 reports whether the kernel fits the AVX2 tier's 16 YMM
// registers: at once when the bound fixedRegs leaves room for an
// initial value and one accumulator, else by compiling the kernel alone
// (fixedRegs overcounts: the argmax of a softmax's maximum, min=
// where(eq(x0,x1),x2,N) with a per-row scalar, bounds at 17 and
// compiles). The answer is memoized by key, as fitsAVX2 of a map.
func (r *ReduceSpec) fitsAVX2() bool {
	if r.fixedRegs() <= AVX2().Regs-2 {
		return true
	}
	key := r.key()
	if fits, ok := fitMemo.Load(key); ok {
		return fits.(bool)
	}
	s := NewSet(target.AVX2())
	s.AddReduce(*r)
	_, err := s.Files("fit")
	fitMemo.Store(key, err == nil)
	return err == nil
}

// exprRegs bounds the registers the pointwise evaluator holds at once
// while it evaluates e (arguments left to right, each earlier result
// held; constants are preloaded; a comparison or select needs two more).
func exprRegs(e loopir.Expr) int {
	ap, ok := e.(*loopir.Apply)
	if !ok {
		return 1
	}
	need := 1
	for i, a := range ap.Args {
		need = max(need, exprRegs(a)+i)
	}
	switch ap.Prim {
	case ops.Lt, ops.Eq, ops.Ne, ops.Where:
		need += 2
	}
	return need
}

// along emits the AlongRows kernel: per row, U vector accumulators
// across the full vectors (the first U start them), a masked tail whose
// lanes past the row are neutral, then the accumulators fold pairwise,
// reduce horizontally (upper half onto the lower, then pairs of lanes),
// combine with C's cell (or the initial value) and store it.
func (g *rgen) along() {
	r := g.r
	vb := g.cfg.VecBytes
	full, rem := r.N/g.lanes, r.N%g.lanes
	var tail reg.Register
	if rem > 0 {
		tail = g.tailMask(rem)
	}
	nv := full
	if rem > 0 {
		nv++
	}
	u := g.unroll(nv)
	g.loop(r.Rows, "row", func() {
		g.loadBcast(true)
		acc := make([]reg.Register, 0, u)
		// The first group starts the accumulators.
		first := min(u, full)
		for j := range first {
			acc = append(acc, g.fresh(g.value(j*vb, nil)))
		}
		groups := (full - first) / u
		moved := 0
		if groups > 0 {
			g.bump(false, first*vb, false)
			moved = first * vb
			g.loop(groups, "grp", func() {
				for j := range u {
					g.combine(acc[j], acc[j], g.value(j*vb, nil), false)
				}
				g.bump(false, u*vb, false)
			})
			moved += groups * u * vb
		}
		// The vectors left after the groups, then the tail, from the
		// current pointers.
		base := first*vb - moved
		if groups > 0 {
			base = 0
		}
		left := full - first - groups*u
		for j := range left {
			g.combine(acc[j%u], acc[j%u], g.value(base+j*vb, nil), false)
		}
		if tail != nil {
			v := g.value(base+left*vb, tail)
			if len(acc) < u {
				acc = append(acc, g.fresh(v))
			} else {
				g.combine(acc[left%u], acc[left%u], v, false)
			}
		}
		g.finishRow(acc)
		// Back to the row's start, then to the next row.
		if moved > 0 {
			g.bump(false, -moved, false)
		}
		g.bump(true, 0, true)
	})
}

// finishRow folds the accumulators, reduces the lanes, combines the
// result with C's cell (or the initial value) and stores it.
func (g *rgen) finishRow(acc []reg.Register) {
	c, r := g.c, g.r
	for len(acc) > 1 {
		var next []reg.Register
		for j := 0; j+1 < len(acc); j += 2 {
			next = append(next, g.combine(nil, acc[j], acc[j+1], false))
		}
		if len(acc)%2 == 1 {
			next = append(next, acc[len(acc)-1])
		}
		acc = next
	}
	if g.cfg.Wide {
		g.finishRowWide(acc[0])
		return
	}
	v := acc[0].(reg.VecVirtual)
	hi := c.XMM()
	c.VEXTRACTF128(operand.Imm(1), v, hi)
	x := g.combine(nil, v.AsX(), hi, false)
	t := c.XMM()
	if g.es == 8 {
		c.VPERMILPD(operand.Imm(1), x, t)
		x = g.combine(nil, x, t, false)
	} else {
		c.VPERMILPS(operand.Imm(0x4e), x, t)
		x = g.combine(nil, x, t, false)
		t2 := c.XMM()
		c.VPERMILPS(operand.Imm(0xb1), x, t2)
		x = g.combine(nil, x, t2, false)
	}
	if r.Init && r.InitVal == r.neutral() && (r.Accum == ops.AccMax || r.Accum == ops.AccMin) {
		g.op.movS2(x, mem(g.cp, 0)) // max(-Inf, x) is x, NaN included
		return
	}
	cell := c.XMM()
	if r.Init {
		g.op.movS2(g.ctab.Offset(g.coff[math.Float64bits(r.InitVal)]), cell)
	} else {
		g.op.movS2(mem(g.cp, 0), cell)
	}
	out := g.combine(nil, cell, x, r.Accum == ops.AccSub)
	g.op.movS2(out, mem(g.cp, 0))
}

// finishRowWide is finishRow's end in the AVX-512 tier, all in ZMM
// registers (no VEX-only instruction on a register that may be one of
// Z16-Z31): the 256-bit halves combine (VSHUFF64X2 swaps them), then the
// 128-bit lanes, then pairs and single lanes as in the AVX2 kernel;
// lane 0 then holds the row's value. C's cell (or the initial value) is
// broadcast, combined and its lane 0 stored.
func (g *rgen) finishRowWide(v reg.Register) {
	c, r := g.c, g.r
	for _, imm := range []uint64{0x4e, 0xb1} {
		t := c.ZMM()
		c.VSHUFF64X2(operand.Imm(imm), v, v, t)
		v = g.combine(nil, v, t, false)
	}
	if g.es == 8 {
		t := c.ZMM()
		c.VPERMILPD(operand.Imm(0x55), v, t)
		v = g.combine(nil, v, t, false)
	} else {
		for _, imm := range []uint64{0x4e, 0xb1} {
			t := c.ZMM()
			c.VPERMILPS(operand.Imm(imm), v, t)
			v = g.combine(nil, v, t, false)
		}
	}
	if r.Init && r.InitVal == r.neutral() && (r.Accum == ops.AccMax || r.Accum == ops.AccMin) {
		g.op.movS2(v.(reg.VecVirtual).AsX(), mem(g.cp, 0)) // max(-Inf, x) is x, NaN included
		return
	}
	cell := c.ZMM()
	if r.Init {
		g.op.bcast2(g.ctab.Offset(g.coff[math.Float64bits(r.InitVal)]), cell)
	} else {
		g.op.bcast2(mem(g.cp, 0), cell)
	}
	out := g.combine(nil, cell, v, r.Accum == ops.AccSub)
	g.op.movS2(out.(reg.VecVirtual).AsX(), mem(g.cp, 0))
}

// across emits the AcrossRows kernel: C's N cells in blocks of U
// vectors (a loop over the full blocks, then the rest and a masked
// tail), each block's accumulators loaded from C (or the initial value),
// updated row after row in row order, and stored.
func (g *rgen) across() {
	r := g.r
	full, rem := r.N/g.lanes, r.N%g.lanes
	nv := full
	if rem > 0 {
		nv++
	}
	u := g.unroll(nv)
	var tail reg.Register
	if rem > 0 {
		tail = g.tailMask(rem)
	}
	masks := make([]reg.Register, u)
	g.loop(full/u, "blk", func() { g.block(masks, true) })
	left := full % u
	if left > 0 || tail != nil {
		masks = make([]reg.Register, left)
		if tail != nil {
			masks = append(masks, tail)
		}
		g.block(masks, false)
	}
}

// block emits one block of len(masks) vectors of C (a nil mask: a full
// vector) accumulated over every row; advance moves the pointers to the
// next block.
func (g *rgen) block(masks []reg.Register, advance bool) {
	c, r := g.c, g.r
	vb := g.cfg.VecBytes
	acc := make([]reg.Register, len(masks))
	for j, m := range masks {
		v := g.vec()
		switch {
		case r.Init:
			c.VMOVUPS(g.constVec(r.InitVal), v)
		case m != nil:
			g.loadMasked(mem(g.cp, j*vb), m, v)
		default:
			c.VMOVUPS(mem(g.cp, j*vb), v)
		}
		acc[j] = v
	}
	g.loop(r.Rows, "row", func() {
		g.loadBcast(true)
		for j, m := range masks {
			g.combine(acc[j], acc[j], g.value(j*vb, m), r.Accum == ops.AccSub)
		}
		g.bump(true, 0, false)
	})
	for j, m := range masks {
		if m != nil {
			g.storeMasked(acc[j], m, mem(g.cp, j*vb))
		} else {
			c.VMOVUPS(acc[j], mem(g.cp, j*vb))
		}
	}
	if advance {
		// Back over the rows, on to the next block.
		for i, s0 := range r.Stride0 {
			d := -r.Rows * r.RowStride[1+i] * g.es
			if !s0 {
				d += len(masks) * vb
			}
			if d != 0 {
				c.ADDQ(imm(d), g.ins[i])
			}
		}
		c.ADDQ(imm(len(masks)*vb), g.cp)
	}
}
