package gocode

import (
	"fmt"

	"github.com/dave/jennifer/jen"

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
