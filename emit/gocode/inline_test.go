package gocode

import (
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/desc"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
)

// TestInlineScalarTemps: a scalar temporary read only by the next store
// is inlined (and the original program is left alone); one read anywhere
// else, or a product that would meet an addition, keeps its store.
func TestInlineScalarTemps(t *testing.T) {
	ix := []loopir.IndexExpr{{Terms: []loopir.IndexTerm{{Coeff: 1, Var: 0}}}}
	ld := func(tn int) loopir.Expr {
		if tn == 0 {
			return &loopir.Load{Tensor: 0}
		}
		return &loopir.Load{Tensor: tn, Index: ix}
	}
	ap := func(p ops.PrimName, a ...loopir.Expr) loopir.Expr { return &loopir.Apply{Prim: p, Args: a} }
	one := &loopir.Const{Value: 1}
	prog := func(def loopir.Expr, use loopir.Expr, extra ...loopir.Stmt) *loopir.Program {
		body := []loopir.Stmt{&loopir.For{Var: 0, Extent: 4, Body: []loopir.Stmt{
			&loopir.Store{Tensor: 0, Value: def},
			&loopir.Store{Tensor: 2, Index: ix, Value: use, Accumulate: true, Accum: "add"},
		}}}
		return &loopir.Program{
			Tensors: []loopir.TensorInfo{{Name: "_scratch"}, {Name: "x", Dims: []int{4}, BufDims: []int{4}}, {Name: "y", Dims: []int{4}, BufDims: []int{4}}},
			Ops:     []*loopir.Operation{{Body: append(body, extra...)}},
		}
	}
	innerUse := func(p *loopir.Program) *loopir.Store {
		f := p.Ops[0].Body[0].(*loopir.For)
		return f.Body[len(f.Body)-1].(*loopir.Store)
	}
	cases := []struct {
		name   string
		p      *loopir.Program
		params []desc.Param
		inline bool
	}{
		{"next store reads it", prog(ap("add", ld(1), one), ap("where", ap("eq", ld(2), ld(0)), ld(1), one)), nil, true},
		{"read again later", prog(ap("add", ld(1), one), ap("mul", ld(0), one), &loopir.Store{Tensor: 1, Index: []loopir.IndexExpr{{}}, Value: ld(0)}), nil, false},
		{"a parameter", prog(ap("add", ld(1), one), ap("mul", ld(0), one)), []desc.Param{{Name: "s", Tensor: 0}}, false},
		{"product into a sum", prog(ap("mul", ld(1), ld(1)), ap("add", ld(0), one)), nil, false},
		{"product into a comparison", prog(ap("mul", ld(1), ld(1)), ap("eq", ld(0), one)), nil, true},
	}
	for _, c := range cases {
		before := len(c.p.Ops[0].Body[0].(*loopir.For).Body)
		q, made := inlineScalarTemps(c.p, c.params)
		if got := len(c.p.Ops[0].Body[0].(*loopir.For).Body); got != before {
			t.Errorf("%s: the original program changed (%d statements, was %d)", c.name, got, before)
		}
		st := innerUse(q)
		reads := loopir.Reads(st.Value, 0)
		n := len(q.Ops[0].Body[0].(*loopir.For).Body)
		if c.inline && (reads || n != 1 || !made[st]) {
			t.Errorf("%s: not inlined (%d statements, reads the temp: %v)", c.name, n, reads)
		}
		if !c.inline && (q != c.p || len(made) != 0) {
			t.Errorf("%s: inlined", c.name)
		}
	}
}
