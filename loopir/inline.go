package loopir

import "github.com/ocannlgen/ocannlgen/ops"

// InlineScalarTemps returns p with its scalar temporaries inlined: a
// store `s = e` of a scalar tensor s (no dims, not in keep) immediately
// followed, in the same body, by a store whose value reads s, becomes
// that one store with e in place of s (autodiff's max rule stores the
// point's value into `_scratch` before comparing it with the maximum).
// The nest then is perfect, so the kernel classifiers see it. It applies
// only when every load of s in the program is in such a following store
// and e reads neither s nor the following store's tensor's cell being
// written (e is evaluated at the same point either way); a temporary
// that is an operand of an addition or subtraction keeps its store when
// e is a product (Go may fuse the two into an FMA, which the store
// prevented). p itself is not modified: the operations whose bodies
// change are copied. The stores the inlining made are returned.
//
// The Go emitter applies it to every kernel (keep: the parameters), and
// the kernel explanation does too.
func InlineScalarTemps(p *Program, keep map[int]bool) (*Program, map[*Store]bool) {
	cand := map[int]bool{}
	for t := range p.Tensors {
		if len(p.Tensors[t].Dims) == 0 && len(p.Tensors[t].BufDims) == 0 && !keep[t] {
			cand[t] = true
		}
	}
	if len(cand) == 0 {
		return p, nil
	}
	// Drop every candidate read anywhere but right after its store, or
	// touched by anything but a plain store.
	for _, o := range p.Ops {
		checkTemps(o.Body, cand)
	}
	if len(cand) == 0 {
		return p, nil
	}
	q := *p
	q.Ops = make([]*Operation, len(p.Ops))
	made := map[*Store]bool{}
	for i, o := range p.Ops {
		if body, changed := inlineBody(o.Body, cand, made); changed {
			c := *o
			c.Body = body
			q.Ops[i] = &c
			continue
		}
		q.Ops[i] = o
	}
	return &q, made
}

// tempStore reports whether s is a plain store of candidate temp t
// whose value reads no candidate temp.
func tempStore(s Stmt, cand map[int]bool) (*Store, bool) {
	st, ok := s.(*Store)
	if !ok || !cand[st.Tensor] || st.Accumulate && st.Accum != ops.NoAccum {
		return nil, false
	}
	reads := false
	WalkLoads(st.Value, func(l *Load) { reads = reads || cand[l.Tensor] })
	return st, !reads
}

// checkTemps removes from cand each temp read or written in body other
// than as an inlinable pair (see InlineScalarTemps).
func checkTemps(body []Stmt, cand map[int]bool) {
	var prev *Store
	for _, s := range body {
		var def *Store
		switch s := s.(type) {
		case *For:
			checkTemps(s.Body, cand)
		case *Fill:
			delete(cand, s.Tensor)
		case *ResetPadding:
			delete(cand, s.Tensor)
		case *FetchStmt:
			delete(cand, s.Tensor)
		case *Store:
			if st, ok := tempStore(s, cand); ok {
				def = st
			} else if cand[s.Tensor] {
				delete(cand, s.Tensor)
			}
			WalkLoads(s.Value, func(l *Load) {
				if !cand[l.Tensor] {
					return
				}
				if prev == nil || prev.Tensor != l.Tensor || s.Tensor == l.Tensor || !inlinable(s.Value, l.Tensor, prev.Value) || exprReads(prev.Value, s.Tensor) {
					delete(cand, l.Tensor)
				}
			})
		}
		prev = def
	}
}

// inlinable reports whether the loads of t in e may become v: none is an
// operand of an addition or subtraction when v is a product.
func inlinable(e Expr, t int, v Expr) bool {
	if a, ok := v.(*Apply); !ok || a.Prim != ops.Mul {
		return true
	}
	ok := true
	WalkExpr(e, func(e Expr) {
		a, isApply := e.(*Apply)
		if !isApply {
			return
		}
		for _, x := range a.Args {
			if l, isLoad := x.(*Load); isLoad && l.Tensor == t && (a.Prim == ops.Add || a.Prim == ops.Sub) {
				ok = false
			}
		}
	})
	return ok
}

// inlineBody rewrites the pairs of body (recursively) and reports
// whether anything changed; unchanged loops are shared.
func inlineBody(body []Stmt, cand map[int]bool, made map[*Store]bool) ([]Stmt, bool) {
	var out []Stmt
	changed := false
	for i := 0; i < len(body); i++ {
		s := body[i]
		if f, ok := s.(*For); ok {
			if b, ch := inlineBody(f.Body, cand, made); ch {
				g := *f
				g.Body = b
				out = append(out, &g)
				changed = true
				continue
			}
		}
		if def, ok := tempStore(s, cand); ok && i+1 < len(body) {
			if use, isStore := body[i+1].(*Store); isStore && exprReads(use.Value, def.Tensor) {
				u := *use
				u.Value = substLoad(use.Value, def.Tensor, def.Value)
				out = append(out, &u)
				made[&u] = true
				i++
				changed = true
				continue
			}
		}
		out = append(out, s)
	}
	return out, changed
}

// substLoad returns e with every load of tensor t replaced by v.
func substLoad(e Expr, t int, v Expr) Expr {
	switch e := e.(type) {
	case *Load:
		if e.Tensor == t {
			return v
		}
	case *Apply:
		args := make([]Expr, len(e.Args))
		for i, a := range e.Args {
			args[i] = substLoad(a, t, v)
		}
		return &Apply{Prim: e.Prim, Args: args}
	}
	return e
}

// exprReads reports whether e loads tensor t.
func exprReads(e Expr, t int) bool {
	found := false
	WalkLoads(e, func(l *Load) { found = found || l.Tensor == t })
	return found
}
