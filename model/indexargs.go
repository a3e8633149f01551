package model

import (
	"github.com/ocannlgen/ocannlgen/spec"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// hasIndexArg reports whether a layer declares an argument `NAME : index`.
func hasIndexArg(l *program.LayerStmt) bool {
	for _, a := range l.Args {
		if a.Index {
			return true
		}
	}
	return false
}

// define registers a layer definition. A second definition of a name is
// allowed once, as the other variant: exactly one of the two declares
// index arguments (docs/language.md, "Index inputs").
func (x *expander) define(d *layerDef) error {
	prev, ok := x.layers[d.st.Name]
	if !ok {
		x.layers[d.st.Name] = d
		return nil
	}
	if prev.alt != nil || hasIndexArg(prev.st) == hasIndexArg(d.st) || prev.std != d.std {
		return fail(d.st.Pos, "layer %s is defined twice (a layer may have two definitions only when exactly one of them declares arguments NAME : index)", d.st.Name)
	}
	if hasIndexArg(d.st) {
		prev.alt = d
	} else {
		d.alt = prev
		x.layers[d.st.Name] = d
	}
	return nil
}

// isIndexArg reports whether a layer application's argument is an index
// input (or a name bound to one).
func (x *expander) isIndexArg(a program.Expr, sc *scope) bool {
	id, ok := a.(*program.Ident)
	if !ok {
		return false
	}
	b, ok := sc.vars[id.Name]
	return ok && b.tensor != "" && x.indexed[b.tensor]
}

// variant picks the definition of def's name whose `: index` arguments
// match the application's arguments, and rejects an index argument
// given something else.
func (x *expander) variant(def *layerDef, args []program.Expr, site spec.Pos, sc *scope) (*program.LayerStmt, error) {
	fits := func(d *layerDef) bool {
		for i, a := range d.st.Args {
			if i < len(args) && a.Index != x.isIndexArg(args[i], sc) {
				return false
			}
		}
		return true
	}
	if def.alt != nil && !fits(def) && fits(def.alt) {
		def = def.alt
	}
	for i, a := range def.st.Args {
		if i < len(args) && a.Index && !x.isIndexArg(args[i], sc) {
			return nil, fail(x.at(sc, args[i].ExprPos()), "layer %s takes an index input as its argument %s (declared input NAME : BATCH | index N), not an expression of floats", def.st.Name, a.Name)
		}
	}
	return def.st, nil
}
