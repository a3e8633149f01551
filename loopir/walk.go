package loopir

import (
	"slices"

	"github.com/ocannlgen/ocannlgen/ops"
	"github.com/ocannlgen/ocannlgen/rt"
)

// The walkers and nest analyses the backends share.

// WalkStmts calls f on every statement of body, depth first: a loop
// before the statements of its body.
func WalkStmts(body []Stmt, f func(Stmt)) {
	for _, s := range body {
		f(s)
		if l, ok := s.(*For); ok {
			WalkStmts(l.Body, f)
		}
	}
}

// WalkExpr calls f on e and every expression inside it, depth first: an
// application before its arguments, left to right.
func WalkExpr(e Expr, f func(Expr)) {
	f(e)
	if a, ok := e.(*Apply); ok {
		for _, x := range a.Args {
			WalkExpr(x, f)
		}
	}
}

// WalkLoads calls f on every load of e, left to right.
func WalkLoads(e Expr, f func(*Load)) {
	switch e := e.(type) {
	case *Load:
		f(e)
	case *Apply:
		for _, a := range e.Args {
			WalkLoads(a, f)
		}
	}
}

// WalkStores calls f on every store of s, in order, with the extents of
// the loops around it by loop variable. The map is reused: f must not
// keep it.
func WalkStores(s Stmt, f func(st *Store, ext map[int]int)) {
	ext := map[int]int{}
	var walk func(s Stmt)
	walk = func(s Stmt) {
		switch s := s.(type) {
		case *For:
			ext[s.Var] = s.Extent
			for _, c := range s.Body {
				walk(c)
			}
			delete(ext, s.Var)
		case *Store:
			f(s, ext)
		}
	}
	walk(s)
}

// WalkStoreLoads calls f on every load of the values of the stores of s,
// in order.
func WalkStoreLoads(s Stmt, f func(*Load)) {
	WalkStores(s, func(st *Store, _ map[int]int) { WalkLoads(st.Value, f) })
}

// PerfectNest returns the loops and the store of a perfect nest: loops
// each holding exactly one statement, the innermost a store. ok is false
// (and the loops and store nil) for anything else, a lone store included.
func PerfectNest(s Stmt) (loops []*For, st *Store, ok bool) {
	for {
		switch x := s.(type) {
		case *For:
			if len(x.Body) != 1 {
				return nil, nil, false
			}
			loops = append(loops, x)
			s = x.Body[0]
		case *Store:
			if len(loops) == 0 {
				return nil, nil, false
			}
			return loops, x, true
		default:
			return nil, nil, false
		}
	}
}

// Nonzero is x without its terms of coefficient 0.
func (x IndexExpr) Nonzero() IndexExpr {
	y := IndexExpr{Offset: x.Offset, Data: x.Data}
	for _, t := range x.Terms {
		if t.Coeff != 0 {
			y.Terms = append(y.Terms, t)
		}
	}
	return y
}

// OwnsAxis reports whether loop variable v alone drives one axis of
// every index of idxs, as the same c*v + offset (c != 0, terms of
// coefficient 0 ignored) on the same axis of each: then two values of v
// never reach one cell through these indices, so the loop over v may be
// split (into parts or across threads). idxs must not be empty.
func OwnsAxis(v int, idxs ...[]IndexExpr) bool {
	for a := range idxs[0] {
		x := idxs[0][a].Nonzero()
		if len(x.Terms) != 1 || x.Terms[0].Var != v || x.Data != nil {
			continue
		}
		same := true
		for _, y := range idxs[1:] {
			same = same && len(y) == len(idxs[0]) && sameNonzero(y[a], x)
		}
		if same {
			return true
		}
	}
	return false
}

// OwnsFirstAxis is the CUDA emitter's stricter form of OwnsAxis: v
// alone (exactly one term, c*v + offset with c != 0; a term of
// coefficient 0 is not ignored) indexes the first axis of the first
// index it drives, and the same axis with the same coefficient and
// offset in every other index (which may differ in rank). Only that
// first axis is tried. It is kept beside OwnsAxis, not merged, so that
// the generated CUDA kernels stay as they are; false when idxs is empty.
func OwnsFirstAxis(v int, idxs ...[]IndexExpr) bool {
	axis, coeff, off := -1, 0, 0
	for i, idx := range idxs {
		found := false
		for a, x := range idx {
			if len(x.Terms) == 1 && x.Terms[0].Var == v && x.Terms[0].Coeff != 0 && x.Data == nil {
				if i == 0 && !found {
					axis, coeff, off, found = a, x.Terms[0].Coeff, x.Offset, true
				} else if a == axis && x.Terms[0].Coeff == coeff && x.Offset == off {
					found = true
				}
			}
		}
		if !found {
			return false
		}
	}
	return len(idxs) > 0
}

// sameNonzero reports whether a and b are equal but for terms of
// coefficient 0.
func sameNonzero(a, b IndexExpr) bool {
	a, b = a.Nonzero(), b.Nonzero()
	return a.Offset == b.Offset && slices.Equal(a.Terms, b.Terms) && a.Data == nil && b.Data == nil
}

// Reads reports whether e loads tensor t.
func Reads(e Expr, t int) bool {
	found := false
	WalkLoads(e, func(l *Load) { found = found || l.Tensor == t })
	return found
}

// FetchCells returns the n cells (memory order, unpadded) a fetch of a
// constant, a range, literal values or random values puts in its tensor,
// as float64 at the precision of elem ("float32" or "float64"; random
// cells are drawn at that precision, as generated code draws them). A
// FetchZero, or FetchValues without values, gives zeros. The Go and CUDA
// emitters materialize constant leaves with it.
func FetchCells(f *FetchStmt, n int, elem string) []float64 {
	out := make([]float64, n)
	switch f.Kind {
	case FetchConst:
		for i := range out {
			out[i] = f.Value
		}
	case FetchRange:
		for i := range out {
			out[i] = float64(i)
		}
	case FetchValues:
		if len(f.Values) > 0 {
			for i := range out {
				out[i] = f.Values[i%len(f.Values)]
			}
		}
	case FetchDropout:
		if elem == "float32" {
			vs := make([]float32, n)
			rt.DropoutMask(vs, f.Value, f.Key, f.Seed, 0)
			for i, v := range vs {
				out[i] = float64(v)
			}
		} else {
			rt.DropoutMask(out, f.Value, f.Key, f.Seed, 0)
		}
	case FetchRandom:
		if elem == "float32" {
			vs := make([]float32, n)
			RandomInit(vs, f.Key, f.Seed)
			for i, v := range vs {
				out[i] = float64(v)
			}
		} else {
			RandomInit(out, f.Key, f.Seed)
		}
	}
	return out
}

// FlatStrides returns each loop variable's element stride in a buffer of
// dims bufDims indexed by idx (row-major: the sum over axes of the term's
// coefficient times the axis's stride); ok is false when idx and bufDims
// differ in rank. Variables idx does not mention are absent (stride 0).
func FlatStrides(idx []IndexExpr, bufDims []int) (map[int]int, bool) {
	if len(idx) != len(bufDims) || AnyDynamic(idx) {
		return nil, false
	}
	st := map[int]int{}
	mul := 1
	for a := len(idx) - 1; a >= 0; a-- {
		for _, t := range idx[a].Terms {
			st[t.Var] += t.Coeff * mul
		}
		mul *= bufDims[a]
	}
	return st, true
}

// ProductOf matches a store that accumulates by addition the product of
// two loads (a matmul-class contraction's body: c += a * b), returning
// the loads.
func ProductOf(st *Store) (a, b *Load, ok bool) {
	if !st.Accumulate || st.Accum != ops.AccAdd {
		return nil, nil, false
	}
	ap, isApply := st.Value.(*Apply)
	if !isApply || ap.Prim != ops.Mul || len(ap.Args) != 2 {
		return nil, nil, false
	}
	a, okA := ap.Args[0].(*Load)
	b, okB := ap.Args[1].(*Load)
	return a, b, okA && okB
}

// MapIndices copies e with every load's index replaced by f(index); the
// other leaves are shared. The rewrites of a nest's body (a parallel
// part's split index, an unrolled copy's substituted variable) use it.
func MapIndices(e Expr, f func([]IndexExpr) []IndexExpr) Expr {
	return MapLoads(e, func(l *Load) Expr { return &Load{Tensor: l.Tensor, Index: f(l.Index)} })
}

// MapLoads copies e with every load replaced by f(load); the other leaves
// are shared (schedule.Pack points loads at a packed copy with it).
func MapLoads(e Expr, f func(*Load) Expr) Expr {
	switch e := e.(type) {
	case *Load:
		return f(e)
	case *Apply:
		args := make([]Expr, len(e.Args))
		for i, a := range e.Args {
			args[i] = MapLoads(a, f)
		}
		return &Apply{Prim: e.Prim, Args: args}
	}
	return e
}

// Written is the set of tensors some store or fill of p writes.
func Written(p *Program) map[int]bool {
	w := map[int]bool{}
	for _, o := range p.Ops {
		WalkStmts(o.Body, func(s Stmt) {
			switch s := s.(type) {
			case *Store:
				w[s.Tensor] = true
			case *Fill:
				w[s.Tensor] = true
			}
		})
	}
	return w
}

// StmtDynamic reports whether a store or load inside s indexes through
// data (a gather or its scatter): the backends run such a nest as plain
// serial loops and leave it out of fusion and kernel matching.
func StmtDynamic(s Stmt) bool {
	found := false
	WalkStmts([]Stmt{s}, func(s Stmt) {
		st, ok := s.(*Store)
		if !ok || found {
			return
		}
		found = AnyDynamic(st.Index)
		WalkLoads(st.Value, func(l *Load) { found = found || AnyDynamic(l.Index) })
	})
	return found
}
