package loopir

import (
	"fmt"

	"github.com/ocannlgen/ocannlgen/ops"
)

// ElideCopies returns p without its whole-array copies: a tensor t whose
// first touch is a top-level perfect nest copying a tensor s of the same
// dims cell for cell (`t[i..] = s[i..]`, or a zero fill of t followed by
// `t[i..] += s[i..]`: autodiff's first gradient contribution through an
// addition, a bias or a reshape-free identity) reads s instead:
//
//   - when nothing writes t after the copy and nothing writes s from the
//     copy to t's last read, t's loads become loads of s (s keeps its
//     buffer and t's is never touched);
//   - else, when s is not kept and, after the copy, only read and only
//     before t's next write, t becomes s from the copy on (its later
//     contributions add into s's buffer once s's last reader has run: a
//     residual stream's gradient, read by its branch, then summed into).
//
// A broadcast copy (`t[i, j, k] = s[i, j, 0]`, autodiff's gradient of a
// row sum spread over the row, or any copy reading s at an affine index
// of its loops other than t's cell) goes only in the first case, when
// every later statement touching t is loops and stores: each load of t
// reads s at the copy's index of s, with the copy's loops replaced by the
// load's index.
//
// The copy (and its fill) goes. t and s are unpadded float arrays, t is
// not in keep (the kernel's parameters and outputs), and t becoming s
// needs a copy that reads s only at t's cell. A copy through a zero fill and an addition stored
// +0 where s held -0; the elided one reads s's -0 (equal values, the sign
// of a zero may differ downstream, docs/design.md "Copies elided"). p
// itself is not modified: the operations whose bodies change are copied.
// The number of copies elided is returned.
func ElideCopies(p *Program, keep map[int]bool) (*Program, int) {
	q := *p
	q.Ops = append([]*Operation(nil), p.Ops...)
	elided := 0
	for t := range p.Tensors {
		if keep[t] || p.Tensors[t].IndexBound != 0 || !fuseCandidate(&q.Tensors[t]) {
			continue
		}
		if elideOne(&q, t, keep) {
			elided++
		}
	}
	if elided == 0 {
		return p, 0
	}
	return &q, elided
}

// elideOne elides the copy into t in q (whose Ops slice it may rewrite)
// when the rule of ElideCopies holds.
func elideOne(q *Program, t int, keep map[int]bool) bool {
	var touch []stmtRef
	for oi, o := range q.Ops {
		for i, s := range o.Body {
			if Touches(s, t) {
				touch = append(touch, stmtRef{oi, i})
			}
		}
	}
	if len(touch) < 2 {
		return false
	}
	stmt := func(r stmtRef) Stmt { return q.Ops[r.op].Body[r.i] }
	var drop []stmtRef
	c := 0
	if f, ok := stmt(touch[0]).(*Fill); ok {
		if f.Value != 0 {
			return false
		}
		drop = append(drop, touch[0])
		c = 1
	}
	cs := stmt(touch[c])
	if StmtDynamic(cs) {
		return false
	}
	loops, st, ok := PerfectNest(cs)
	if !ok || st.Tensor != t {
		return false
	}
	plain := !st.Accumulate || st.Accum == ops.NoAccum
	if c == 0 && !plain || c == 1 && (plain || st.Accum != ops.AccAdd) {
		return false
	}
	load, ok := st.Value.(*Load)
	if !ok || load.Tensor == t || q.Tensors[load.Tensor].IndexBound != 0 || !fuseCandidate(&q.Tensors[load.Tensor]) {
		return false
	}
	s := load.Tensor
	dims := q.Tensors[t].Dims
	tl, ok := axisLoops(st.Index, loops, dims)
	if !ok {
		return false
	}
	// bcast: not a cell-for-cell copy but a broadcast (t[i, j, k] =
	// s[i, j, 0], a row sum's gradient spread over its row); t's loads
	// may then read s at the copy's index, renamed, and nothing else.
	bcast := !sameInts(dims, q.Tensors[s].Dims)
	if !bcast {
		sl, ok := axisLoops(load.Index, loops, dims)
		for a := range tl {
			bcast = bcast || !ok || tl[a] != sl[a]
		}
	}
	if bcast && !affineIn(load.Index, loops) {
		return false
	}
	copyAt := touch[c]
	drop = append(drop, copyAt)
	rest := touch[c+1:]
	// Nothing writes t after the copy: its loads read s, unless s changes
	// before t's last read.
	tWritten := false
	for _, r := range rest {
		visitStmtWrites(stmt(r), func(u int) { tWritten = tWritten || u == t })
	}
	mode := 0
	if !tWritten {
		mode = 1
		if len(rest) > 0 && writesBetween(q, copyAt, stmtRef{rest[len(rest)-1].op, rest[len(rest)-1].i + 1}, map[int]bool{s: true}) {
			mode = 0
		}
	}
	if bcast && (mode != 1 || !plainLoads(q, rest, t)) {
		return false
	}
	if mode == 0 {
		// s only read after the copy, and only before t's next write: t
		// becomes s.
		firstW := stmtRef{-1, -1}
		for _, r := range rest {
			written := false
			visitStmtWrites(stmt(r), func(u int) { written = written || u == t })
			if written {
				firstW = r
				break
			}
		}
		if keep[s] || firstW.op < 0 || !sReadOnlyBefore(q, copyAt, firstW, s) {
			return false
		}
		mode = 2
	}
	desc := q.Ops[copyAt.op].Desc
	own := map[int]*Operation{}
	op := func(oi int) *Operation {
		if own[oi] == nil {
			o := *q.Ops[oi]
			o.Body = append([]Stmt(nil), o.Body...)
			q.Ops[oi] = &o
			own[oi] = &o
		}
		return own[oi]
	}
	for _, r := range rest {
		o := op(r.op)
		if bcast {
			o.Body[r.i] = broadcastLoads(o.Body[r.i], t, load, tl)
			continue
		}
		o.Body[r.i] = renameTensor(o.Body[r.i], t, s, mode == 1)
	}
	// Remove the dropped statements, last first so earlier indices hold.
	for k := len(drop) - 1; k >= 0; k-- {
		r := drop[k]
		o := op(r.op)
		o.Body = append(o.Body[:r.i:r.i], o.Body[r.i+1:]...)
		if r == copyAt {
			o.Desc = fmt.Sprintf("%s (the copy elided: %s reads %s)", desc, q.Tensors[t].Name, q.Tensors[s].Name)
		}
	}
	return true
}

// affineIn reports whether every term of idx (affine, not dynamic) is a
// variable of loops.
func affineIn(idx []IndexExpr, loops []*For) bool {
	in := map[int]bool{}
	for _, l := range loops {
		in[l.Var] = true
	}
	for _, x := range idx {
		if x.Data != nil {
			return false
		}
		for _, tm := range x.Terms {
			if !in[tm.Var] {
				return false
			}
		}
	}
	return true
}

// plainLoads reports whether the statements at rs are loops and stores
// only, whose loads of t are affine (a broadcast copy's readers, which
// broadcastLoads rewrites).
func plainLoads(q *Program, rs []stmtRef, t int) bool {
	ok := true
	for _, r := range rs {
		WalkStmts([]Stmt{q.Ops[r.op].Body[r.i]}, func(s Stmt) {
			switch s := s.(type) {
			case *For:
			case *Store:
				WalkLoads(s.Value, func(l *Load) { ok = ok && (l.Tensor != t || !AnyDynamic(l.Index)) })
			default:
				ok = false
			}
		})
	}
	return ok
}

// broadcastLoads is s (copied) with each load of t read from the source
// of the broadcast copy instead: t's axis a, driven by loop tl[a] in the
// copy, is the load's index a, substituted into the copy's load of the
// source.
func broadcastLoads(s Stmt, t int, src *Load, tl []*For) Stmt {
	re := func(e Expr) Expr {
		return MapLoads(e, func(l *Load) Expr {
			if l.Tensor != t {
				return l
			}
			sub := map[int]IndexExpr{}
			for a, lp := range tl {
				sub[lp.Var] = l.Index[a]
			}
			idx := make([]IndexExpr, len(src.Index))
			for a, x := range src.Index {
				idx[a] = renameIndex(x, sub)
			}
			return &Load{Tensor: src.Tensor, Index: idx}
		})
	}
	switch s := s.(type) {
	case *For:
		body := make([]Stmt, len(s.Body))
		for i, c := range s.Body {
			body[i] = broadcastLoads(c, t, src, tl)
		}
		return &For{Var: s.Var, Extent: s.Extent, Body: body}
	case *Store:
		st := *s
		st.Value = re(s.Value)
		return &st
	}
	return s
}

// sReadOnlyBefore reports whether every top-level statement after at
// that touches s only reads it and comes before w.
func sReadOnlyBefore(q *Program, at, w stmtRef, s int) bool {
	passed := false
	for oi := at.op; oi < len(q.Ops); oi++ {
		for i, st := range q.Ops[oi].Body {
			if oi == at.op && i <= at.i {
				continue
			}
			if oi == w.op && i == w.i {
				passed = true
			}
			if !Touches(st, s) {
				continue
			}
			written := false
			visitStmtWrites(st, func(u int) { written = written || u == s })
			if passed || written {
				return false
			}
		}
	}
	return true
}

// renameTensor is s (copied) with tensor from replaced by to: in loads
// only when loadsOnly, else in stores, fills and padding resets too.
func renameTensor(s Stmt, from, to int, loadsOnly bool) Stmt {
	re := func(e Expr) Expr {
		return MapLoads(e, func(l *Load) Expr {
			if l.Tensor == from {
				return &Load{Tensor: to, Index: l.Index}
			}
			return l
		})
	}
	tensor := func(u int) int {
		if u == from && !loadsOnly {
			return to
		}
		return u
	}
	switch s := s.(type) {
	case *For:
		body := make([]Stmt, len(s.Body))
		for i, c := range s.Body {
			body[i] = renameTensor(c, from, to, loadsOnly)
		}
		return &For{Var: s.Var, Extent: s.Extent, Body: body}
	case *Store:
		st := *s
		st.Tensor = tensor(s.Tensor)
		st.Value = re(s.Value)
		return &st
	case *Fill:
		return &Fill{Tensor: tensor(s.Tensor), Value: s.Value}
	case *ResetPadding:
		return &ResetPadding{Tensor: tensor(s.Tensor), Value: s.Value}
	case *FetchStmt:
		f := *s
		f.Tensor = tensor(s.Tensor)
		return &f
	}
	return s
}

func sameInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
