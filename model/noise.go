package model

import (
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// Noise is a dropout mask of a loss entry: the leaf Name of the entry's
// program, 0 with probability P and 1/(1-P) otherwise in each cell, drawn
// afresh at every training step (rt.DropoutMask keyed by the model's
// seed, its step and rt.ParamKey(Name)).
type Noise struct {
	Name string
	P    float64
}

// noise expands `{NAME = dropout(p)}`: in a loss entry a dropout-mask
// leaf (recorded in the entry's Noise), elsewhere a leaf of ones, so that
// the dropout is the identity there (PyTorch's eval mode). The leaf's
// shape comes from its use, as a parameter's does.
func (x *expander) noise(e *program.InlineParam, call *program.Call, sc *scope) (program.Expr, error) {
	p := x.at(sc, e.Pos)
	if len(call.Args) != 1 || len(e.Fields) > 0 {
		return nil, fail(x.at(sc, call.Pos), "a dropout mask is written {%s = dropout(p)}, with one probability and no fields", e.Name)
	}
	prob, err := x.numberArg(call.Args[0], sc, "dropout(p): p")
	if err != nil {
		return nil, err
	}
	if !(prob >= 0 && prob < 1) {
		return nil, fail(x.at(sc, call.Pos), "dropout(%g): the probability of dropping a cell must be in [0, 1)", prob)
	}
	name := sc.prefix + e.Name
	if x.names[name] || x.isInput(name) {
		return nil, fail(p, "dropout mask {%s}: %s is already the name of a tensor in entry %s", e.Name, name, x.entry.Name)
	}
	x.names[name] = true
	init := &program.Init{Pos: p, Kind: program.InitNumber, Number: 1}
	if x.entry.Loss {
		for _, in := range x.entry.Inputs {
			if in.Shape != nil && in.Shape.Batch != nil && len(in.Shape.Batch.Dims) > 0 && in.Shape.Batch.Dims[0].Max {
				return nil, fail(p, "dropout in a loss with run-time rows (<=%d) is not supported yet: declare the batch size", in.Shape.Batch.Dims[0].Size)
			}
		}
		init = &program.Init{Pos: p, Kind: program.InitDropout, Number: prob}
		x.entry.Noise = append(x.entry.Noise, Noise{Name: name, P: prob})
	}
	x.out = append(x.out, &program.LeafStmt{Pos: p, Name: name, Init: init})
	return &program.Ident{Pos: p, Name: name}, nil
}

// numberArg is the value of a number, or of a name bound to a numeric
// configuration argument (what, in errors).
func (x *expander) numberArg(e program.Expr, sc *scope, what string) (float64, error) {
	switch a := e.(type) {
	case *program.Number:
		return a.Value, nil
	case *program.Ident:
		b, ok := sc.vars[a.Name]
		if !ok || b.cfg == nil || b.cfg.isStr {
			return 0, fail(x.at(sc, a.Pos), "%s: %s is not a numeric configuration argument", what, a.Name)
		}
		return b.cfg.num, nil
	}
	return 0, fail(x.at(sc, e.ExprPos()), "%s must be a number or a configuration argument", what)
}
