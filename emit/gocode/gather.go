package gocode

import (
	"fmt"
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/ocannlgen/ocannlgen/emit/schedule"
	"github.com/ocannlgen/ocannlgen/loopir"
)

// dataNest renders a nest that reads or writes through a data-dependent
// index (a gather, `@@`, or the scatter-add of its gradient) as plain
// serial loops in the IR's order: no fusion, hoisting, kernel matching or
// parallel split, so a scatter-add sums the contributions of equal
// positions in one fixed order (the same bits on every tier and thread
// count). The gather is O(points) and memory bound; its index values
// were checked against their bounds before the kernel runs.
func (k *kgen) dataNest(s loopir.Stmt) ([]jen.Code, error) {
	switch s := s.(type) {
	case *loopir.For:
		if code, ok := k.dataRow(s); ok {
			return code, nil
		}
		before := k.varUse[s.Var]
		k.inLoop++
		var body []jen.Code
		for _, c := range s.Body {
			code, err := k.dataNest(c)
			if err != nil {
				k.inLoop--
				return nil, err
			}
			body = append(body, code...)
		}
		k.inLoop--
		return []jen.Code{k.forStmt(s.Var, 0, s.Extent, 1, k.varUse[s.Var] > before, body)}, nil
	case *loopir.Store:
		var blk []jen.Code
		v, err := k.dataExpr(s.Value, &blk)
		if err != nil {
			return nil, err
		}
		code, err := k.update(func() jen.Code { return k.directAccess(s.Tensor, s.Index) }, s.Accum, s.Accumulate, v)
		if err != nil {
			return nil, err
		}
		return append(blk, code), nil
	}
	return nil, k.fail("unexpected %T in a gather's nest", s)
}

// dataExpr renders an expression of a dataNest store.
func (k *kgen) dataExpr(e loopir.Expr, blk *[]jen.Code) (val, error) {
	switch e := e.(type) {
	case *loopir.Const:
		return k.constVal(e.Value), nil
	case *loopir.Load:
		if s := &k.ts[e.Tensor].st; s.kind == sConst {
			return k.constVal(s.value), nil
		}
		if k.bf16In[e.Tensor] {
			return val{c: k.directAccess(e.Tensor, e.Index).Dot("Float32").Call()}, nil
		}
		return val{c: k.directAccess(e.Tensor, e.Index)}, nil
	case *loopir.Apply:
		args := make([]val, len(e.Args))
		for i, a := range e.Args {
			v, err := k.dataExpr(a, blk)
			if err != nil {
				return val{}, err
			}
			args[i] = v
		}
		return k.prim(e.Prim, args, blk)
	}
	return val{}, fmt.Errorf("unknown expression %T", e)
}

// dataRow runs an innermost loop of a gather's nest with the assembly
// map kernel of its row, when the data-dependent positions do not depend
// on the loop's variable (an embedding's lookup copies a row of the
// table, its gradient adds a row into one): the kernel is chosen for the
// row with the positions taken out of the indices, and its call's base
// addresses put them back. The loop keeps its order, so the sums are
// the Go loops' (the same bits on every tier). ok is false when no
// kernel fits; the loop then runs as Go loops.
func (k *kgen) dataRow(f *loopir.For) ([]jen.Code, bool) {
	if k.asm == nil || len(f.Body) != 1 {
		return nil, false
	}
	st, ok := f.Body[0].(*loopir.Store)
	if !ok || dataMentions(st.Index, f.Var) {
		return nil, false
	}
	strip := func(idx []loopir.IndexExpr) []loopir.IndexExpr {
		out := slices.Clone(idx)
		for a := range out {
			out[a].Data = nil
		}
		return out
	}
	orig := map[*loopir.Load]*loopir.Load{}
	bad := false
	value := loopir.MapLoads(st.Value, func(l *loopir.Load) loopir.Expr {
		bad = bad || dataMentions(l.Index, f.Var)
		nl := &loopir.Load{Tensor: l.Tensor, Index: strip(l.Index)}
		orig[nl] = l
		return nl
	})
	if bad {
		return nil, false
	}
	st2 := &loopir.Store{Tensor: st.Tensor, Index: strip(st.Index), Value: value, Accum: st.Accum, Accumulate: st.Accumulate}
	f2 := &loopir.For{Var: f.Var, Extent: f.Extent, Body: []loopir.Stmt{st2}}
	q := k.query(nil)
	q.Free = map[int]bool{}
	for _, x := range append(slices.Clone(st.Index), loadIndices(st.Value)...) {
		for _, t := range x.Terms {
			if t.Var != f.Var {
				q.Free[t.Var] = true
			}
		}
	}
	ch, ok := k.tryWith(schedule.Map, []*loopir.For{f2}, st2, q)
	if !ok || len(ch.Map.Outer) > 0 {
		return nil, false
	}
	n := *ch.Map
	n.Zero = withData(n.Zero, st.Index)
	n.ZIns = slices.Clone(n.ZIns)
	for j, l := range n.Ins {
		if o := orig[l]; o != nil {
			n.ZIns[j] = withData(n.ZIns[j], o.Index)
		}
	}
	ch.Map = &n
	calls, note := k.mapCalls(ch)
	if calls == nil {
		return nil, false
	}
	before := k.varUse[f.Var]
	var blk []jen.Code
	v, err := k.dataExpr(st.Value, &blk)
	if err != nil {
		return nil, false
	}
	store, err := k.update(func() jen.Code { return k.directAccess(st.Tensor, st.Index) }, st.Accum, st.Accumulate, v)
	if err != nil {
		return nil, false
	}
	goLoop := k.forStmt(f.Var, 0, f.Extent, 1, k.varUse[f.Var] > before, append(blk, store))
	return k.dispatch(calls, note, []jen.Code{goLoop}), true
}

// withData is idx (a kernel's base address, from indices without their
// data parts) with the data parts of full put back.
func withData(idx, full []loopir.IndexExpr) []loopir.IndexExpr {
	if len(idx) != len(full) {
		return idx
	}
	out := slices.Clone(idx)
	for a := range out {
		out[a].Data = full[a].Data
	}
	return out
}

// dataMentions reports whether the data part of some index of idx
// depends on loop variable v.
func dataMentions(idx []loopir.IndexExpr, v int) bool {
	for _, x := range idx {
		if x.Data == nil {
			continue
		}
		for _, y := range x.Data.Index {
			for _, t := range y.Terms {
				if t.Var == v {
					return true
				}
			}
		}
	}
	return false
}

// loadIndices lists the indices of e's loads.
func loadIndices(e loopir.Expr) []loopir.IndexExpr {
	var out []loopir.IndexExpr
	loopir.WalkLoads(e, func(l *loopir.Load) { out = append(out, l.Index...) })
	return out
}
