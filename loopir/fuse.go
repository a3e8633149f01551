package loopir

import (
	"fmt"
	"math"
	"slices"

	"github.com/ocannlgen/ocannlgen/ops"
)

// FusePointwise returns p with its single-use pointwise temporaries
// fused into their reader: a top-level perfect nest storing
// `t[i0,...] = e` into every cell of a temporary t once (each axis of t
// indexed by its own loop), followed by the one top-level perfect nest
// that reads t, once per cell of t at one load (each axis by its own
// loop), becomes that reader with e in place of the load (its variables
// renamed to the reader's) and the writer goes. A bias add then a relu
// make one pass over memory instead of two. t is not in keep (the
// kernel's parameters), is unpadded, and nothing but those two nests
// touches it (no other reader: a training step's forward temporaries,
// read again by the backward pass, stay), except a zero fill (+0) before
// a writer that adds `t[i0,...] += e` (autodiff's first gradient
// contribution), fused as `e + 0` (the same bits: +0 + -0 is +0); nothing
// between the two writes a tensor e reads, and the reader does not store
// into one. p itself is not modified: the operations whose bodies change
// are copied. accept, when not nil, approves the fusion given the
// writer, the reader and the fused reader (the emitter asks that a nest
// an assembly kernel ran stays one). A reader that accumulates (a
// reduction: a layer norm's squares into their row sum) fuses only with
// an acceptor, which then requires a kernel (a sum of exps would lose
// the vector exp of the map before it); without one the reader stores.
// A temporary of more than MaxRecomputeSmall cells read by several such
// nests fuses into each of them when its writer is cheap to compute
// again (recomputeCheap: a bias add whose sum the GELU and its backward
// both read). The number of temporaries fused is returned.
func FusePointwise(p *Program, keep map[int]bool, accept Acceptor) (*Program, int) {
	q := *p
	q.Ops = append([]*Operation(nil), p.Ops...)
	fused := 0
	for t := range p.Tensors {
		if keep[t] || !fuseCandidate(&q.Tensors[t]) {
			continue
		}
		if fuseOne(&q, t, accept) {
			fused++
		}
	}
	if fused == 0 {
		return p, 0
	}
	return &q, fused
}

// Acceptor approves a fusion of FusePointwise: the writer nest, the
// reader nest, and the reader's store once fused (over the reader's
// loops).
type Acceptor func(wLoops []*For, w *Store, rLoops []*For, r, fused *Store) bool

// fuseCandidate: an unpadded array.
func fuseCandidate(ti *TensorInfo) bool {
	if len(ti.Dims) == 0 || len(ti.Dims) != len(ti.BufDims) {
		return false
	}
	for a := range ti.Dims {
		if ti.Dims[a] != ti.BufDims[a] {
			return false
		}
	}
	return true
}

// stmtRef locates a top-level statement: operation op, statement i.
type stmtRef struct{ op, i int }

// fuseOne fuses temporary t in q (whose Ops slice it may rewrite) when
// the rule of FusePointwise holds.
func fuseOne(q *Program, t int, accept Acceptor) bool {
	var touch []stmtRef
	for oi, o := range q.Ops {
		for i, s := range o.Body {
			if Touches(s, t) {
				touch = append(touch, stmtRef{oi, i})
			}
		}
	}
	// A writer through a zero fill: the fill, then t += e over every cell.
	var fill *stmtRef
	if len(touch) == 0 {
		return false
	}
	if f, ok := q.Ops[touch[0].op].Body[touch[0].i].(*Fill); ok && len(touch) == 3 {
		if f.Value != 0 || math.Signbit(f.Value) {
			return false
		}
		fill, touch = &touch[0], touch[1:]
	}
	if len(touch) > 2 && fill == nil {
		return recomputeCheap(q, t, touch, accept)
	}
	if len(touch) != 2 {
		return false
	}
	w, r := touch[0], touch[1]
	if StmtDynamic(q.Ops[w.op].Body[w.i]) || StmtDynamic(q.Ops[r.op].Body[r.i]) {
		return false // gathers and scatters stay as they are
	}
	wLoops, wSt, ok := PerfectNest(q.Ops[w.op].Body[w.i])
	if !ok || wSt.Tensor != t || exprReads(wSt.Value, t) {
		return false
	}
	wAdds := wSt.Accumulate && wSt.Accum != ops.NoAccum
	if fill == nil && wAdds || fill != nil && (!wAdds || wSt.Accum != ops.AccAdd) {
		return false
	}
	rLoops, rSt, ok := PerfectNest(q.Ops[r.op].Body[r.i])
	if !ok || rSt.Tensor == t || rSt.Accumulate && rSt.Accum != ops.NoAccum && accept == nil {
		return false
	}
	dims := q.Tensors[t].Dims
	wAxis, ok := axisLoops(wSt.Index, wLoops, dims)
	if !ok {
		return false
	}
	var load *Load
	loads := 0
	WalkLoads(rSt.Value, func(l *Load) {
		if l.Tensor == t {
			load, loads = l, loads+1
		}
	})
	if loads != 1 {
		return false
	}
	if _, ok := axisLoops(load.Index, rLoops, dims); !ok {
		return false
	}
	// What e reads must not change between the two nests, nor be the
	// reader's own store.
	reads := map[int]bool{}
	WalkLoads(wSt.Value, func(l *Load) { reads[l.Tensor] = true })
	if reads[rSt.Tensor] || writesBetween(q, w, r, reads) {
		return false
	}
	// e at the reader's point: the writer's loop of axis a becomes the
	// load's index along a.
	sub := map[int]IndexExpr{}
	for a, l := range wAxis {
		sub[l.Var] = load.Index[a]
	}
	e := renameExpr(wSt.Value, sub)
	if fill != nil {
		// 0 + e, as the kernel that absorbs the fill adds (+0 + -0 is +0).
		e = &Apply{Prim: ops.Add, Args: []Expr{e, &Const{Value: 0}}}
	}
	st := *rSt
	st.Value = substLoad(rSt.Value, t, e)
	if accept != nil && !accept(wLoops, wSt, rLoops, rSt, &st) {
		return false
	}
	ro := *q.Ops[r.op]
	ro.Body = append([]Stmt(nil), ro.Body...)
	ro.Body[r.i] = rebuildNest(rLoops, &st)
	ro.Desc = fmt.Sprintf("%s, with %s fused", ro.Desc, q.Ops[w.op].Desc)
	q.Ops[r.op] = &ro
	wo := *q.Ops[w.op]
	if w.op == r.op {
		wo = ro
	}
	wo.Body = append(append([]Stmt(nil), wo.Body[:w.i]...), wo.Body[w.i+1:]...)
	q.Ops[w.op] = &wo
	if fill != nil {
		// The fill goes too (read afresh: it may share the writer's
		// operation, whose copy is in q.Ops now; it precedes the writer).
		fo := *q.Ops[fill.op]
		fo.Body = append(append([]Stmt(nil), fo.Body[:fill.i]...), fo.Body[fill.i+1:]...)
		q.Ops[fill.op] = &fo
	}
	return true
}

// MaxRecomputeSmall is the most cells a broadcast operand of a cheap
// temporary may have (recomputeCheap): a bias or a scale row, read from
// the cache by every reader.
const MaxRecomputeSmall = 1 << 16

// recomputeCheap fuses temporary t into each of its several readers
// when its writer is cheap (FusePointwise's multi-reader rule): the
// writer, touch[0], is a top-level perfect nest `t[i0,...] = e` over
// every cell of t where e adds, subtracts, multiplies or negates loads
// and constants, and loads exactly one array of t's size (each axis by
// its own loop, the big operand), its other loads arrays of at most
// MaxRecomputeSmall cells. Every other statement touching t reads it
// as fuseOne's reader does (each cell once, at one index, which a
// square loads twice; not its own store, e's tensors unchanged since
// the writer, accepted). Each reader then computes e itself and the
// writer goes: the same operations on the same values, so the same
// bits, and one pass over memory less (a bias add before a GELU whose
// backward reads the pre-activation: the forward map reads the product
// and adds the bias, and so does the backward's). All readers fuse or
// none.
func recomputeCheap(q *Program, t int, touch []stmtRef, accept Acceptor) bool {
	w := touch[0]
	if StmtDynamic(q.Ops[w.op].Body[w.i]) {
		return false
	}
	wLoops, wSt, ok := PerfectNest(q.Ops[w.op].Body[w.i])
	if !ok || wSt.Tensor != t || wSt.Accumulate && wSt.Accum != ops.NoAccum || exprReads(wSt.Value, t) {
		return false
	}
	dims := q.Tensors[t].Dims
	wAxis, ok := axisLoops(wSt.Index, wLoops, dims)
	if !ok || !cheapBroadcast(q, wSt.Value, wLoops, prod(dims)) {
		return false
	}
	reads := map[int]bool{}
	WalkLoads(wSt.Value, func(l *Load) { reads[l.Tensor] = true })
	type fused struct {
		r  stmtRef
		st Stmt
	}
	var out []fused
	for _, r := range touch[1:] {
		if StmtDynamic(q.Ops[r.op].Body[r.i]) {
			return false
		}
		rLoops, rSt, ok := PerfectNest(q.Ops[r.op].Body[r.i])
		if !ok || rSt.Tensor == t || reads[rSt.Tensor] || rSt.Accumulate && rSt.Accum != ops.NoAccum && accept == nil {
			return false
		}
		// Every load of t at one cell (a square reads it twice).
		var load *Load
		same := true
		WalkLoads(rSt.Value, func(l *Load) {
			if l.Tensor == t {
				if load != nil && !slices.EqualFunc(l.Index, load.Index, func(x, y IndexExpr) bool {
					return x.Offset == y.Offset && slices.Equal(x.Terms, y.Terms)
				}) {
					same = false
				}
				load = l
			}
		})
		if load == nil || !same {
			return false
		}
		if _, ok := axisLoops(load.Index, rLoops, dims); !ok || writesBetween(q, w, r, reads) {
			return false
		}
		sub := map[int]IndexExpr{}
		for a, l := range wAxis {
			sub[l.Var] = load.Index[a]
		}
		st := *rSt
		st.Value = substLoad(rSt.Value, t, renameExpr(wSt.Value, sub))
		if accept != nil && !accept(wLoops, wSt, rLoops, rSt, &st) {
			return false
		}
		out = append(out, fused{r, rebuildNest(rLoops, &st)})
	}
	wDesc := q.Ops[w.op].Desc
	for _, f := range out {
		ro := *q.Ops[f.r.op]
		ro.Body = append([]Stmt(nil), ro.Body...)
		ro.Body[f.r.i] = f.st
		ro.Desc = fmt.Sprintf("%s, with %s recomputed", ro.Desc, wDesc)
		q.Ops[f.r.op] = &ro
	}
	wo := *q.Ops[w.op]
	wo.Body = append(append([]Stmt(nil), wo.Body[:w.i]...), wo.Body[w.i+1:]...)
	q.Ops[w.op] = &wo
	return true
}

// cheapBroadcast reports whether e, the value stored over loops into
// every cell of a temporary of size cells, is cheap to compute again:
// additions, subtractions, multiplications and negations of constants
// and loads, exactly one load of an array of size cells indexing each
// axis by its own loop, the others of arrays of at most
// MaxRecomputeSmall cells.
func cheapBroadcast(q *Program, e Expr, loops []*For, size int) bool {
	ok, big := true, 0
	WalkExpr(e, func(x Expr) {
		switch x := x.(type) {
		case *Apply:
			switch x.Prim {
			case ops.Add, ops.Sub, ops.Mul, ops.Neg:
			default:
				ok = false
			}
		case *Load:
			ti := &q.Tensors[x.Tensor]
			switch n := prod(ti.BufDims); {
			case n == size && prod(ti.Dims) == size:
				if _, each := axisLoops(x.Index, loops, ti.Dims); !each {
					ok = false
				}
				big++
			case n > MaxRecomputeSmall:
				ok = false
			}
		case *Const:
		default:
			ok = false
		}
	})
	return ok && big == 1 && size > MaxRecomputeSmall
}

// rebuildNest is the perfect nest of loops (copied) around st.
func rebuildNest(loops []*For, st *Store) Stmt {
	var s Stmt = st
	for i := len(loops) - 1; i >= 0; i-- {
		s = &For{Var: loops[i].Var, Extent: loops[i].Extent, Body: []Stmt{s}}
	}
	return s
}

// axisLoops maps each axis of an index over a nest to the loop that
// alone drives it (coefficient 1, offset 0, the loop's extent the
// axis's size), every loop of the nest driving one axis; ok is false
// otherwise (the nest then does not visit each cell exactly once).
func axisLoops(idx []IndexExpr, loops []*For, dims []int) ([]*For, bool) {
	if len(idx) != len(dims) || len(loops) != len(dims) {
		return nil, false
	}
	byVar := map[int]*For{}
	for _, l := range loops {
		byVar[l.Var] = l
	}
	out := make([]*For, len(idx))
	seen := map[int]bool{}
	for a, x := range idx {
		if len(x.Terms) != 1 || x.Terms[0].Coeff != 1 || x.Offset != 0 {
			return nil, false
		}
		l := byVar[x.Terms[0].Var]
		if l == nil || seen[l.Var] || l.Extent != dims[a] {
			return nil, false
		}
		seen[l.Var] = true
		out[a] = l
	}
	return out, true
}

// writesBetween reports whether a top-level statement after w and
// before r writes (stores, fills, resets or fetches into) a tensor of ts.
func writesBetween(q *Program, w, r stmtRef, ts map[int]bool) bool {
	found := false
	for oi := w.op; oi <= r.op; oi++ {
		for i, s := range q.Ops[oi].Body {
			if oi == w.op && i <= w.i || oi == r.op && i >= r.i {
				continue
			}
			visitStmtWrites(s, func(t int) { found = found || ts[t] })
		}
	}
	return found
}

// visitStmtWrites calls f with every tensor s writes.
func visitStmtWrites(s Stmt, f func(int)) {
	switch s := s.(type) {
	case *For:
		for _, c := range s.Body {
			visitStmtWrites(c, f)
		}
	case *Store:
		f(s.Tensor)
	case *Fill:
		f(s.Tensor)
	case *ResetPadding:
		f(s.Tensor)
	case *FetchStmt:
		f(s.Tensor)
	}
}

// Touches reports whether s reads or writes tensor t (stores, loads,
// fills, padding resets, fetches), at any depth.
func Touches(s Stmt, t int) bool {
	found := false
	WalkStmts([]Stmt{s}, func(s Stmt) {
		switch s := s.(type) {
		case *For:
		case *Store:
			found = found || s.Tensor == t || exprReads(s.Value, t)
		default:
			visitStmtWrites(s, func(u int) { found = found || u == t })
		}
	})
	return found
}

// renameExpr is e with each loop variable v of its indices replaced by
// the affine index sub[v] (variables not in sub stay).
func renameExpr(e Expr, sub map[int]IndexExpr) Expr {
	switch e := e.(type) {
	case *Load:
		idx := make([]IndexExpr, len(e.Index))
		for a, x := range e.Index {
			idx[a] = renameIndex(x, sub)
		}
		return &Load{Tensor: e.Tensor, Index: idx}
	case *Apply:
		args := make([]Expr, len(e.Args))
		for i, x := range e.Args {
			args[i] = renameExpr(x, sub)
		}
		return &Apply{Prim: e.Prim, Args: args}
	}
	return e
}

// renameIndex substitutes sub into x: c*v becomes c*sub[v].
func renameIndex(x IndexExpr, sub map[int]IndexExpr) IndexExpr {
	out := IndexExpr{Offset: x.Offset}
	coef := map[int]int{}
	var order []int
	add := func(v, c int) {
		if _, ok := coef[v]; !ok {
			order = append(order, v)
		}
		coef[v] += c
	}
	for _, tm := range x.Terms {
		s, ok := sub[tm.Var]
		if !ok {
			add(tm.Var, tm.Coeff)
			continue
		}
		out.Offset += tm.Coeff * s.Offset
		for _, u := range s.Terms {
			add(u.Var, tm.Coeff*u.Coeff)
		}
	}
	for _, v := range order {
		if coef[v] != 0 {
			out.Terms = append(out.Terms, IndexTerm{Coeff: coef[v], Var: v})
		}
	}
	return out
}
