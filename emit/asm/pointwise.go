package asm

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/pass"
	"github.com/mmcloughlin/avo/reg"
	"github.com/ocannlgen/ocannlgen/emit/target"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
)

// MapSpec is one specialized pointwise kernel: C[i] = f(X0[i], X1[i],
// ...) (or C[i] += f(...)) for i in 0..N-1 over unit-stride operands
// (or operands constant along the axis, stride 0).
type MapSpec struct {
	Elem string
	N    int
	// Expr is f, with each Load's Tensor numbering the operand (its Index
	// unused).
	Expr loopir.Expr
	// Stride0 marks the operands read at one address for every i.
	Stride0 []bool
	// Accumulate: C[i] += f (otherwise C[i] = f).
	Accumulate bool
	// Combine, with Accumulate, replaces the addition: ops.AccMax (C[i] =
	// max(C[i], f)) or ops.AccMin, with Go's max and min (NaN wins, -0 <
	// +0).
	// Such a kernel may be called once per point of reduction loops left
	// in Go (a max-pool's window): the result does not depend on the
	// order.
	Combine ops.AccumName
	// Rows > 1 runs the map over Rows rows, RowStride[0] elements apart
	// in C and RowStride[1+j] in operand j (0: the same row each time),
	// e.g. a bias added to every row of short channel rows.
	Rows      int
	RowStride []int
	// Rows2 > 1 repeats the Rows rows Rows2 times, Row2Stride[0]
	// elements apart in C and Row2Stride[1+j] in operand j (see
	// ClassifyMapNew).
	Rows2      int
	Row2Stride []int
	// AVX2Only emits the kernel for the AVX2 tier only: the dispatch is
	// `if AVX2 { kernel } else { Go loops }`, and AVX-512 machines run
	// the AVX2 kernel. No classifier sets it any more (the new forms,
	// max/min, two levels of rows and fills, were AVX2 only until an
	// AVX-512 machine tested them); maps of transcend.go's primitives are
	// AVX2 only regardless (avx2Only).
	AVX2Only bool
}

// key identifies the kernel among a package's.
func (m *MapSpec) key() string {
	return fmt.Sprintf("%s/%d/%v/%v/%s/%d/%v/%d/%v/%v/%s", m.Elem, m.N, m.Stride0, m.Accumulate, m.Combine, m.Rows, m.RowStride, m.Rows2, m.Row2Stride, m.AVX2Only, exprKey(m.Expr))
}

func exprKey(e loopir.Expr) string {
	switch e := e.(type) {
	case *loopir.Const:
		return strconv.FormatFloat(e.Value, 'g', -1, 64)
	case *loopir.Load:
		return "x" + strconv.Itoa(e.Tensor)
	case *loopir.Apply:
		s := make([]string, len(e.Args))
		for i, a := range e.Args {
			s[i] = exprKey(a)
		}
		return string(e.Prim) + "(" + strings.Join(s, ",") + ")"
	}
	return "?"
}

// MapNest is a perfect nest the pointwise classifier recognized: the
// Go loops around the call, C and the operand tensors, and each one's
// index with the kernel's loop variables set to zero.
type MapNest struct {
	Spec  MapSpec
	Outer []*loopir.For
	C     int
	// Ins are the operands' tensors and indices (the loads, in order).
	Ins  []*loopir.Load
	Zero []loopir.IndexExpr   // C's
	ZIns [][]loopir.IndexExpr // the operands'
}

// maxMapIns bounds the operands of a pointwise kernel (the general
// registers hold one pointer each).
const maxMapIns = 6

// mapPrims are the primitives a pointwise kernel evaluates.
var mapPrims = map[ops.PrimName]int{ops.Add: 2, ops.Sub: 2, ops.Mul: 2, ops.Div: 2, ops.Relu: 1, ops.Lt: 2, ops.Eq: 2, ops.Ne: 2, ops.Where: 3, ops.ID: 1}

// ClassifyMap recognizes a perfect nest that is a pointwise map over one
// contiguous axis (after merging loops whose strides compose in every
// tensor): every loop indexes the stored tensor, the value is made of
// the primitives of mapPrims over loads of other tensors and constants,
// and the store overwrites or adds. It returns nil otherwise.
func ClassifyMap(kn target.Kernels, p *loopir.Program, loops []*loopir.For, st *loopir.Store, elem string) *MapNest {
	return ClassifyMapFree(kn, p, loops, st, elem, nil)
}

// ClassifyMapFree is ClassifyMap where the indices may also mention the
// variables of free, bound outside the nest (see ClassifyFree).
func ClassifyMapFree(kn target.Kernels, p *loopir.Program, loops []*loopir.For, st *loopir.Store, elem string, free map[int]bool) *MapNest {
	return ClassifyMapNew(kn, p, loops, st, elem, free, false)
}

// ClassifyMapNew is ClassifyMapFree that, with newForm (a nest made
// perfect by inlining a scalar temporary, say) or for a max or min
// kernel, may also run two levels of rows in the kernel: the inner level
// along the axis of smallest stride in C (the next cells in memory), the
// outer along the longest other axis, when the kernel axis is short.
// Such kernels exist in every tier (the AVX-512 one since it was tested
// on an AVX-512 machine); one whose AVX2 kernel does not fit the 16 YMM
// registers stays Go loops.
func ClassifyMapNew(kn target.Kernels, p *loopir.Program, loops []*loopir.For, st *loopir.Store, elem string, free map[int]bool, newForm bool) *MapNest {
	if elem != "float32" && elem != "float64" || len(loops) == 0 {
		return nil
	}
	combine := ops.NoAccum
	if st.Accumulate {
		switch st.Accum {
		case ops.AccAdd, ops.NoAccum:
		case ops.AccMax, ops.AccMin:
			combine = st.Accum
		default:
			return nil
		}
	}
	expr, loads, ok := mapOperands(st)
	if !ok || len(loads) > maxMapIns {
		return nil
	}
	// Reduction loops stay in Go around a max or min kernel.
	axes, ok := mapAxes(p, loops, st, loads, free, combine != ops.NoAccum)
	if !ok {
		return nil
	}
	axes = mergeMapAxes(axes)
	var rows2 *mapAxis
	k, rows, ok := pickMapAxes(axes, minMapElems(expr, kn), kn)
	if newForm || combine != ops.NoAccum {
		k, rows, rows2, ok = pickMapAxes2(axes, kn)
	}
	if !ok {
		return nil
	}
	n := buildMapNest(loops, st, elem, expr, loads, k, rows, rows2)
	if n != nil && combine != ops.NoAccum {
		n.Spec.Accumulate, n.Spec.Combine = true, combine
	}
	if n != nil && (n.Spec.avx2Only() || newForm || combine != ops.NoAccum || rows2 != nil) && !n.Spec.fitsAVX2() {
		return nil
	}
	return n
}

// mapAxis is one axis of a pointwise nest: the loop variables merged
// into it (outermost first), its extent, and its strides in C then in
// each operand.
type mapAxis struct {
	vars   []int
	extent int
	st     []int
	// red: C does not move along the axis (a reduction of a max or
	// min kernel, run by Go loops).
	red bool
}

// mapOperands rewrites the stored value into a kernel expression whose
// loads number the distinct operands, returned in order. ok is false
// when the value reads the stored tensor or uses anything besides
// constants, loads and the primitives of mapPrims.
func mapOperands(st *loopir.Store) (expr loopir.Expr, loads []*loopir.Load, ok bool) {
	ok = true
	var rewrite func(e loopir.Expr) loopir.Expr
	rewrite = func(e loopir.Expr) loopir.Expr {
		switch e := e.(type) {
		case *loopir.Const:
			return e
		case *loopir.Load:
			if e.Tensor == st.Tensor {
				ok = false
				return e
			}
			for i, l := range loads {
				if l.Tensor == e.Tensor && idxEqual(l.Index, e.Index) {
					return &loopir.Load{Tensor: i}
				}
			}
			loads = append(loads, e)
			return &loopir.Load{Tensor: len(loads) - 1}
		case *loopir.Apply:
			if n, known := mapArity(e.Prim); !known || n != len(e.Args) {
				ok = false
				return e
			}
			args := make([]loopir.Expr, len(e.Args))
			for i, a := range e.Args {
				args[i] = rewrite(a)
			}
			return &loopir.Apply{Prim: e.Prim, Args: args}
		}
		ok = false
		return e
	}
	expr = rewrite(st.Value)
	return expr, loads, ok
}

// strideMaps flattens C's index and each load's into strides per loop
// variable (see flat); ok is false when one is not flat.
func strideMaps(p *loopir.Program, st *loopir.Store, loads []*loopir.Load) (sc map[int]int, ss []map[int]int, ok bool) {
	if sc, ok = loopir.FlatStrides(st.Index, p.Tensors[st.Tensor].BufDims); !ok {
		return nil, nil, false
	}
	ss = make([]map[int]int, len(loads))
	for i, l := range loads {
		if ss[i], ok = loopir.FlatStrides(l.Index, p.Tensors[l.Tensor].BufDims); !ok {
			return nil, nil, false
		}
	}
	return sc, ss, true
}

// mapAxes returns one axis per loop, with the strides of C and of each
// operand along it. ok is false when an index is not flat, a stride is
// negative, a loop of extent > 1 does not move C (a reduction), or an
// index mentions a variable bound neither in the nest nor in free.
// With red, a reduction loop is allowed (marked red: it stays in Go).
func mapAxes(p *loopir.Program, loops []*loopir.For, st *loopir.Store, loads []*loopir.Load, free map[int]bool, red bool) ([]*mapAxis, bool) {
	sc, ss, ok := strideMaps(p, st, loads)
	if !ok {
		return nil, false
	}
	inNest := map[int]bool{}
	var axes []*mapAxis
	for _, l := range loops {
		x := &mapAxis{vars: []int{l.Var}, extent: l.Extent, st: []int{sc[l.Var]}}
		for _, s := range ss {
			x.st = append(x.st, s[l.Var])
		}
		for _, v := range x.st {
			if v < 0 {
				return nil, false
			}
		}
		if x.st[0] == 0 && l.Extent > 1 {
			if !red {
				return nil, false // a reduction
			}
			x.red = true
		}
		inNest[l.Var] = true
		axes = append(axes, x)
	}
	if !boundIn(sc, ss, inNest, free) {
		return nil, false
	}
	return axes, true
}

// boundIn reports whether every variable that moves C (sc) or an
// operand (ss) is a loop of the nest or a free variable.
func boundIn(sc map[int]int, ss []map[int]int, inNest, free map[int]bool) bool {
	for _, m := range append([]map[int]int{sc}, ss...) {
		for v, s := range m {
			if s != 0 && !inNest[v] && !free[v] {
				return false
			}
		}
	}
	return true
}

// mergeMapAxes merges axis u into v wherever every stride of u is v's
// times v's extent, until no pair merges; it reuses axes' storage.
func mergeMapAxes(axes []*mapAxis) []*mapAxis {
	for merged := true; merged; {
		merged = false
		for i := 0; i < len(axes) && !merged; i++ {
			for j := 0; j < len(axes) && !merged; j++ {
				u, v := axes[i], axes[j]
				if i == j {
					continue
				}
				all := true
				for t := range u.st {
					all = all && u.st[t] == v.st[t]*v.extent
				}
				if all {
					v.vars = append(append([]int(nil), u.vars...), v.vars...)
					v.extent *= u.extent
					axes = append(axes[:i], axes[i+1:]...)
					merged = true
				}
			}
		}
	}
	return axes
}

// pickMapAxes chooses the kernel's axis k: unit stride in C, 0 or 1 in
// every operand, the longest such. When k is shorter than minElems
// (MinMapElems, or MinCostlyMapElems for a costly primitive),
// rows is the longest other axis, run as rows inside the kernel (nil
// otherwise). ok is false when no axis fits or the rows stay too short.
// A k of at least minElems but shorter than MapCallElems takes the
// other axis nearest in C's memory (nearestAxis) as rows, when there is
// one, so that a call covers more than one row (and its rows lie
// together, as the Go loop visited them).
func pickMapAxes(axes []*mapAxis, minElems int, kn target.Kernels) (k, rows *mapAxis, ok bool) {
	k = kernelAxis(axes)
	if k == nil {
		return nil, nil, false
	}
	if k.extent >= minElems && k.extent < kn.MapCallElems {
		return k, nearestAxis(axes, k, nil), true
	}
	if k.extent < minElems {
		for _, x := range axes {
			if x != k && !x.red && (rows == nil || x.extent > rows.extent) {
				rows = x
			}
		}
		if rows == nil || k.extent < kn.MinMapRow || k.extent*rows.extent < minElems {
			return nil, nil, false
		}
	}
	return k, rows, true
}

// kernelAxis is the longest axis (not a reduction) along which C and
// every operand have unit or zero stride, C unit; nil if none.
func kernelAxis(axes []*mapAxis) (k *mapAxis) {
	for _, x := range axes {
		good := x.st[0] == 1
		for _, s := range x.st[1:] {
			good = good && (s == 0 || s == 1)
		}
		if good && !x.red && (k == nil || x.extent > k.extent) {
			k = x
		}
	}
	return k
}

// pickMapAxes2 is pickMapAxes with the rows of ClassifyMapNew: the
// inner level along the axis of smallest stride in C, and when that
// leaves the call under MinMapElems elements, rows2 along the axis of
// next smallest stride in C if the call then holds minLocalMapElems
// elements, else along the longest other axis. Rows in memory order keep
// a call's cells together (the max pool's backward at a batch of 256:
// rows2 along the batch put 64 rows 3 KiB apart in every call, each cell
// a cache miss).
func pickMapAxes2(axes []*mapAxis, kn target.Kernels) (k, rows, rows2 *mapAxis, ok bool) {
	k = kernelAxis(axes)
	if k == nil {
		return nil, nil, nil, false
	}
	if k.extent >= kn.MinMapElems {
		return k, nil, nil, true
	}
	rows = nearestAxis(axes, k, nil)
	if rows == nil || k.extent < kn.MinMapRow {
		return nil, nil, nil, false
	}
	if k.extent*rows.extent >= kn.MinMapElems {
		return k, rows, nil, true
	}
	if rows2 = nearestAxis(axes, k, rows); rows2 != nil && k.extent*rows.extent*rows2.extent >= kn.MinLocalMapElems {
		return k, rows, rows2, true
	}
	rows2 = nil
	for _, x := range axes {
		if x != k && x != rows && !x.red && (rows2 == nil || x.extent > rows2.extent) {
			rows2 = x
		}
	}
	if rows2 == nil || k.extent*rows.extent*rows2.extent < kn.MinMapElems {
		return nil, nil, nil, false
	}
	return k, rows, rows2, true
}

// nearestAxis is the axis besides k and not of smallest stride in C
// (the longest among equal strides), skipping reductions and unit axes.
func nearestAxis(axes []*mapAxis, k, not *mapAxis) (n *mapAxis) {
	for _, x := range axes {
		if x != k && x != not && !x.red && x.extent > 1 && (n == nil || x.st[0] < n.st[0] || x.st[0] == n.st[0] && x.extent > n.extent) {
			n = x
		}
	}
	return n
}

// buildMapNest assembles the MapNest for kernel axis k (and rows, if
// any): the spec, the loops left outside the call, and C's and the
// operands' indices with the kernel's variables zeroed. It returns nil
// when the kernel would span 1 GiB or more.
func buildMapNest(loops []*loopir.For, st *loopir.Store, elem string, expr loopir.Expr, loads []*loopir.Load, k, rows, rows2 *mapAxis) *MapNest {
	n := &MapNest{C: st.Tensor, Ins: loads}
	n.Spec = MapSpec{Elem: elem, N: k.extent, Expr: expr, Accumulate: st.Accumulate && st.Accum == ops.AccAdd}
	for _, s := range k.st[1:] {
		n.Spec.Stride0 = append(n.Spec.Stride0, s == 0)
	}
	kv := map[int]bool{}
	for _, v := range k.vars {
		kv[v] = true
	}
	if rows != nil {
		n.Spec.Rows, n.Spec.RowStride = rows.extent, rows.st
		for _, v := range rows.vars {
			kv[v] = true
		}
		if int64(rows.extent)*int64(slices.Max(rows.st))*8 >= 1<<30 {
			return nil
		}
	}
	if rows2 != nil {
		n.Spec.Rows2, n.Spec.Row2Stride = rows2.extent, rows2.st
		for _, v := range rows2.vars {
			kv[v] = true
		}
		if int64(rows2.extent)*int64(slices.Max(rows2.st))*8 >= 1<<30 {
			return nil
		}
	}
	for _, l := range loops {
		if !kv[l.Var] {
			n.Outer = append(n.Outer, l)
		}
	}
	n.Zero = zeroVars(st.Index, kv)
	for _, l := range loads {
		n.ZIns = append(n.ZIns, zeroVars(l.Index, kv))
	}
	if int64(k.extent)*8 >= 1<<30 {
		return nil
	}
	return n
}

func idxEqual(a, b []loopir.IndexExpr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].String() != b[i].String() {
			return false
		}
	}
	return true
}

// constants returns the constants a map kernel needs (besides 0 and 1,
// which every map kernel gets).
func (m *MapSpec) constants() []float64 {
	var out []float64
	loopir.WalkExpr(m.Expr, func(e loopir.Expr) {
		if c, ok := e.(*loopir.Const); ok {
			out = append(out, c.Value)
		}
	})
	return out
}

// mgen emits one pointwise kernel.
type mgen struct {
	*kgen
	m      *MapSpec
	consts map[uint64]reg.VecVirtual
	ctab   operand.Mem
	coff   map[uint64]int
	ins    []reg.Register
	mask   reg.Register
	masked bool
	bcast  []reg.VecVirtual
	// tr: the vector constants of transcend.go's primitives.
	tr *vconsts
	// hoisted: the table constants kept in registers (emitMap); record:
	// told each read-only use of a table constant (hoistPlan).
	hoisted map[vkey]reg.VecVirtual
	record  func(vkey)
}

// constVec is the vector of constant v: loaded once before the loop, or,
// in a map of transcend.go's primitives (which needs the registers),
// loaded where used (m.preloaded, loadConst).
func (g *mgen) constVec(v float64) reg.VecVirtual {
	bits := math.Float64bits(v)
	if r, ok := g.consts[bits]; ok {
		return r
	}
	return g.loadConst(v)
}

func (g *mgen) cmp(pred uint8, a, b reg.VecVirtual) reg.Register {
	c := g.c
	if g.cfg.Wide {
		k := c.K()
		if g.es == 8 {
			c.VCMPPD(operand.Imm(uint64(pred)), b, a, k)
		} else {
			c.VCMPPS(operand.Imm(uint64(pred)), b, a, k)
		}
		return k
	}
	m := g.vec()
	if g.es == 8 {
		c.VCMPPD(operand.Imm(uint64(pred)), b, a, m)
	} else {
		c.VCMPPS(operand.Imm(uint64(pred)), b, a, m)
	}
	return m
}

// select is mask ? a : b.
func (g *mgen) sel(mask reg.Register, a, b reg.VecVirtual) reg.VecVirtual {
	c := g.c
	d := g.vec()
	switch {
	case g.cfg.Wide && g.es == 8:
		c.VBLENDMPD(a, b, mask, d)
	case g.cfg.Wide:
		c.VBLENDMPS(a, b, mask, d)
	case g.es == 8:
		c.VBLENDVPD(mask, a, b, d)
	default:
		c.VBLENDVPS(mask, a, b, d)
	}
	return d
}

// Comparison predicates (VCMPPS immediates): LT_OS, EQ_OQ, NEQ_UQ, as
// Go's <, == and != (NaN: false, false, true).
const (
	cmpLT  = 1
	cmpEQ  = 0
	cmpNEQ = 4
	// cmpUNORD is UNORD_Q: either operand is NaN.
	cmpUNORD = 3
)

// binary emits d = f(x, y) in a new register, with the packed-single
// or packed-double instruction for the element type.
func (g *mgen) binary(f32, f64 func(...operand.Op), x, y reg.VecVirtual) reg.VecVirtual {
	d := g.vec()
	if g.es == 8 {
		f64(y, x, d)
	} else {
		f32(y, x, d)
	}
	return d
}

func (g *mgen) eval(e loopir.Expr, off int) reg.VecVirtual {
	c := g.c
	switch e := e.(type) {
	case *loopir.Const:
		return g.constVec(e.Value)
	case *loopir.Load:
		if g.m.Stride0[e.Tensor] {
			return g.bcast[e.Tensor]
		}
		v := g.vec()
		m := mem(g.ins[e.Tensor], off)
		if g.masked {
			g.loadMasked(m, g.mask, v)
		} else {
			c.VMOVUPS(m, v)
		}
		return v
	case *loopir.Apply:
		a := make([]reg.VecVirtual, len(e.Args))
		for _, i := range evalOrder(e.Args) {
			a[i] = g.eval(e.Args[i], off)
		}
		if v, ok := g.transcend(e.Prim, a); ok {
			return v
		}
		switch e.Prim {
		case ops.ID:
			return a[0]
		case ops.Add:
			return g.binary(c.VADDPS, c.VADDPD, a[0], a[1])
		case ops.Sub:
			return g.binary(c.VSUBPS, c.VSUBPD, a[0], a[1])
		case ops.Mul:
			return g.binary(c.VMULPS, c.VMULPD, a[0], a[1])
		case ops.Div:
			return g.binary(c.VDIVPS, c.VDIVPD, a[0], a[1])
		case ops.Relu:
			// max(x, 0) with x first: x > 0 ? x : 0, NaN and -0 give +0.
			return g.binary(c.VMAXPS, c.VMAXPD, a[0], g.constVec(0))
		case ops.Lt, ops.Eq, ops.Ne:
			pred := map[ops.PrimName]uint8{ops.Lt: cmpLT, ops.Eq: cmpEQ, ops.Ne: cmpNEQ}[e.Prim]
			return g.sel(g.cmp(pred, a[0], a[1]), g.constVec(1), g.constVec(0))
		case ops.Where:
			return g.sel(g.cmp(cmpNEQ, a[0], g.constVec(0)), a[1], a[2])
		}
	}
	panic("asm: unsupported pointwise expression " + exprKey(e))
}

// body evaluates the map at byte offset off from the pointers and stores.
func (g *mgen) body(cp reg.Register, off int) {
	c := g.c
	v := g.eval(g.m.Expr, off)
	dst := mem(cp, off)
	if g.m.Accumulate {
		t := g.vec()
		if g.masked {
			g.loadMasked(dst, g.mask, t)
		} else {
			c.VMOVUPS(dst, t)
		}
		switch {
		case g.m.Combine != ops.NoAccum:
			t = g.goMinMax(g.m.Combine, t, v)
		case g.es == 8:
			c.VADDPD(t, v, t)
		default:
			c.VADDPS(t, v, t)
		}
		v = t
	}
	if g.masked {
		g.storeMasked(v, g.mask, dst)
	} else {
		c.VMOVUPS(v, dst)
	}
}

// goMinMax is Go's max(a, b) (or min) of the AVX2 tier: VMAXPS gives
// its second operand for NaN and for equal operands, so the two orders
// are combined (AND for max: max(+0, -0) = +0; OR for min: -0), and
// where either is NaN the result is a + b (NaN).
func (g *mgen) goMinMax(op ops.AccumName, a, b reg.VecVirtual) reg.VecVirtual {
	c := g.c
	var r1, r2, r reg.VecVirtual
	// The AVX-512 tier has no VANDPS/VORPS on ZMM without AVX512DQ: the
	// integer VPANDD/VPORD (AVX512F) combine the bits the same way.
	andOp, orOp := c.VANDPS, c.VORPS
	andOp64, orOp64 := c.VANDPD, c.VORPD
	if g.cfg.Wide {
		andOp, orOp, andOp64, orOp64 = c.VPANDD, c.VPORD, c.VPANDQ, c.VPORQ
	}
	if op == ops.AccMax {
		r1, r2 = g.binary(c.VMAXPS, c.VMAXPD, a, b), g.binary(c.VMAXPS, c.VMAXPD, b, a)
		r = g.binary(andOp, andOp64, r1, r2)
	} else {
		r1, r2 = g.binary(c.VMINPS, c.VMINPD, a, b), g.binary(c.VMINPS, c.VMINPD, b, a)
		r = g.binary(orOp, orOp64, r1, r2)
	}
	nan := g.cmp(cmpUNORD, a, b)
	return g.sel(nan, g.binary(c.VADDPS, c.VADDPD, a, b), r)
}

// emitMap adds the pointwise kernel name implementing m. In the AVX-512
// tier a map of transcend.go's primitives keeps the table constants its
// instructions only read (kreg) in registers, broadcast once before the
// loops, as many as the registers allow (hoistPlan); the others are
// broadcast where used, as before.
func emitMap(c *build.Context, cfg Config, m *MapSpec, name string, maskTab, ctab operand.Mem, coff map[uint64]int) {
	var hoist []vkey
	if cfg.Wide && m.usesTrans() {
		hoist = hoistPlan(cfg, m, name, maskTab, ctab, coff)
	}
	emitMapHoisting(c, cfg, m, name, maskTab, ctab, coff, hoist, nil)
}

// hoistPlan picks the read-only table constants of map m's kernel that
// stay in registers: the most used first (ties in order of first use),
// as many as a trial compilation of the kernel (avo's register
// allocation over the 32 ZMM registers) accepts.
func hoistPlan(cfg Config, m *MapSpec, name string, maskTab, ctab operand.Mem, coff map[uint64]int) []vkey {
	uses := map[vkey]int{}
	var order []vkey
	emitMapHoisting(build.NewContext(), cfg, m, name, maskTab, ctab, coff, nil, func(k vkey) {
		if uses[k] == 0 {
			order = append(order, k)
		}
		uses[k]++
	})
	slices.SortStableFunc(order, func(a, b vkey) int { return uses[b] - uses[a] })
	for n := len(order); n > 0; n-- {
		t := build.NewContext()
		emitMapHoisting(t, cfg, m, name, maskTab, ctab, coff, order[:n], nil)
		if f, err := t.Result(); err == nil && pass.Compile.Execute(f) == nil {
			return order[:n]
		}
	}
	return nil
}

// emitMapHoisting is emitMap with the constants hoist kept in registers;
// a non-nil record is told each read-only use of a table constant.
func emitMapHoisting(c *build.Context, cfg Config, m *MapSpec, name string, maskTab, ctab operand.Mem, coff map[uint64]int, hoist []vkey, record func(vkey)) {
	c.Function(name)
	c.Attributes(attr.NOSPLIT)
	params := []string{"c"}
	for i := range m.Stride0 {
		params = append(params, fmt.Sprintf("x%d", i))
	}
	c.SignatureExpr(fmt.Sprintf("func(%s *%s)", strings.Join(params, ", "), m.Elem))
	c.Pragma("noescape")
	c.Doc(fmt.Sprintf("%s runs a %s pointwise kernel over %d elements: %s.", name, m.Elem, m.N, mapDesc(m)))
	sp := &Spec{Elem: m.Elem}
	g := &mgen{kgen: &kgen{c: c, cfg: cfg, s: sp, op: opsFor(m.Elem, c), es: sp.elemSize(), lanes: cfg.lanes(sp), maskTab: maskTab},
		m: m, consts: map[uint64]reg.VecVirtual{}, ctab: ctab, coff: coff, tr: newVConsts(name), record: record}
	cp := c.Load(c.Param("c"), c.GP64())
	for i := range m.Stride0 {
		g.ins = append(g.ins, c.Load(c.Param(fmt.Sprintf("x%d", i)), c.GP64()))
	}
	// The constants and the stride-0 operands, once.
	for _, v := range append([]float64{0, 1}, m.preloaded()...) {
		bits := math.Float64bits(v)
		if _, done := g.consts[bits]; done {
			continue
		}
		r := g.vec()
		if g.es == 8 {
			c.VBROADCASTSD(ctab.Offset(coff[bits]), r)
		} else {
			c.VBROADCASTSS(ctab.Offset(coff[bits]), r)
		}
		g.consts[bits] = r
	}
	rowStride := func(i int) int { // operand i (-1: C), in bytes
		if m.Rows <= 1 {
			return 0
		}
		return m.RowStride[i+1] * g.es
	}
	row2Stride := func(i int) int { // operand i (-1: C), in bytes
		if m.Rows2 <= 1 {
			return 0
		}
		return m.Row2Stride[i+1] * g.es
	}
	g.bcast = make([]reg.VecVirtual, len(m.Stride0))
	// level: a stride-0 operand is broadcast once (0), per outer row (1)
	// or per row (2).
	broadcast := func(level int) {
		for i, s0 := range m.Stride0 {
			l := 0
			switch {
			case rowStride(i) != 0:
				l = 2
			case row2Stride(i) != 0:
				l = 1
			}
			if s0 && l == level {
				g.bcast[i] = g.vec()
				g.op.bcast2(mem(g.ins[i], 0), g.bcast[i])
			}
		}
	}
	broadcast(0)
	if len(hoist) > 0 {
		g.hoisted = map[vkey]reg.VecVirtual{}
		for _, k := range hoist {
			g.hoisted[k] = g.ld(g.tr.at(k))
		}
	}
	var tail reg.Register
	if r := m.N % g.lanes; r > 0 {
		tail = g.tailMask(r)
	}
	full := m.N / g.lanes
	g.loop(max(1, m.Rows2), "rowb", func() {
		broadcast(1)
		g.mapRows(cp, tail, full, rowStride, broadcast)
		if m.Rows2 > 1 {
			for i := -1; i < len(m.Stride0); i++ {
				p := cp
				if i >= 0 {
					p = g.ins[i]
				}
				if d := row2Stride(i) - max(1, m.Rows)*rowStride(i); d != 0 {
					c.ADDQ(imm(d), p)
				}
			}
		}
	})
	c.VZEROUPPER()
	c.RET()
	g.tr.emit(c)
}

// mapRows emits the rows of a map kernel (one when m.Rows <= 1): each
// row's full vectors, its tail, and the pointers' moves to the next row.
func (g *mgen) mapRows(cp, tail reg.Register, full int, rowStride func(int) int, broadcast func(int)) {
	c, m, cfg := g.c, g.m, g.cfg
	g.loop(max(1, m.Rows), "row", func() {
		broadcast(2)
		g.masked = false
		g.loop(full, "e", func() {
			g.body(cp, 0)
			c.ADDQ(imm(cfg.VecBytes), cp)
			for i, s0 := range m.Stride0 {
				if !s0 {
					c.ADDQ(imm(cfg.VecBytes), g.ins[i])
				}
			}
		})
		if tail != nil {
			g.mask, g.masked = tail, true
			g.body(cp, 0)
		}
		if m.Rows > 1 {
			back := full * cfg.VecBytes
			if d := rowStride(-1) - back; d != 0 {
				c.ADDQ(imm(d), cp)
			}
			for i, s0 := range m.Stride0 {
				d := rowStride(i)
				if !s0 {
					d -= back
				}
				if d != 0 {
					c.ADDQ(imm(d), g.ins[i])
				}
			}
		}
	})
}

// mapDesc renders the map's expression for comments.
func mapDesc(m *MapSpec) string {
	op := "="
	if m.Accumulate {
		op = "+="
		if m.Combine != ops.NoAccum {
			op = string(m.Combine) + "="
		}
	}
	return "c " + op + " " + exprKey(m.Expr)
}

// Describe is a one-line account of the pointwise kernel.
func (m *MapSpec) Describe(tiers ...Config) string {
	d := fmt.Sprintf("%s pointwise kernel over %d elements (%s)", m.Elem, m.N, mapDesc(m))
	if m.Rows2 > 1 {
		d = fmt.Sprintf("%s pointwise kernel over %dx%d rows of %d elements (%s)", m.Elem, m.Rows2, m.Rows, m.N, mapDesc(m))
	} else if m.Rows > 1 {
		d = fmt.Sprintf("%s pointwise kernel over %d rows of %d elements (%s)", m.Elem, m.Rows, m.N, mapDesc(m))
	}
	return d + ": " + strings.Join(m.tierList(tiers), ", ")
}
