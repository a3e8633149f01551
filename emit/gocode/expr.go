package gocode

import (
	"fmt"
	"math"
	"strconv"

	"github.com/dave/jennifer/jen"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
)

// val is a compiled expression.
type val struct {
	c jen.Code
	// untyped: an untyped Go constant (it takes its type from the other
	// operand, and must be converted where it stands alone).
	untyped bool
	// compound: an operator expression, parenthesized as an operand.
	compound bool
	// konst: a constant known at generation time, of value cv (already
	// rounded to the element type).
	konst bool
	cv    float64
}

// typed converts an untyped constant to the element type.
func (k *kgen) typed(v val) jen.Code {
	if v.untyped {
		return jen.Id(k.elem).Call(v.c)
	}
	return v.c
}

func paren(v val) jen.Code {
	if v.compound {
		return jen.Parens(v.c)
	}
	return v.c
}

// floatText formats v as a Go floating-point constant of the element
// type, or reports that it has none (NaN, infinities, negative zero).
func (k *kgen) floatText(v float64) (string, bool) {
	bits := 64
	if k.elem == "float32" {
		v = float64(float32(v))
		bits = 32
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || (v == 0 && math.Signbit(v)) {
		return "", false
	}
	return strconv.FormatFloat(v, 'g', -1, bits), true
}

// constVal is the constant v of the element type (as the interpreter
// stores it: rounded to float32 for float32 kernels).
func (k *kgen) constVal(v float64) val {
	if k.elem == "float32" {
		v = float64(float32(v))
	}
	if s, ok := k.floatText(v); ok {
		return val{c: jen.Id(s), untyped: true, compound: s[0] == '-', konst: true, cv: v}
	}
	var c jen.Code
	switch {
	case math.IsNaN(v):
		c = jen.Qual("math", "NaN").Call()
	case math.IsInf(v, 1):
		c = jen.Qual("math", "Inf").Call(jen.Lit(1))
	case math.IsInf(v, -1):
		c = jen.Qual("math", "Inf").Call(jen.Lit(-1))
	default: // negative zero
		c = jen.Qual("math", "Copysign").Call(jen.Lit(0), jen.Lit(-1))
	}
	return val{c: k.fromF64(c), konst: true, cv: v}
}

// toF64 converts an element-typed value to float64 (for package math).
func (k *kgen) toF64(v val) jen.Code {
	if k.elem == "float64" {
		return v.c
	}
	return jen.Id("float64").Call(v.c)
}

// fromF64 converts a float64 result back to the element type.
func (k *kgen) fromF64(c jen.Code) jen.Code {
	if k.elem == "float64" {
		return c
	}
	return jen.Id(k.elem).Call(c)
}

// prim applies a primitive to compiled operands through its recipe in
// package ops's table (recipe.go). Operands that are all constants are
// folded exactly as loopir's interpreter computes them; a branch recipe
// (relu, comparisons, not, where) emits statements into blk and returns
// a temporary.
func (k *kgen) prim(name ops.PrimName, args []val, blk *[]jen.Code) (val, error) {
	p := ops.Lookup(name)
	if p == nil || p.Arity != len(args) {
		return val{}, fmt.Errorf("primitive %q applied to %d operand(s)", name, len(args))
	}
	konst := true
	var cvs [3]float64
	for i, a := range args {
		konst = konst && a.konst
		cvs[i] = a.cv
	}
	if konst {
		// Folded as the interpreter computes it: in float64, rounded
		// once to the element type.
		return k.constVal(evalPrim(name, &cvs)), nil
	}
	if name == ops.Where && args[0].konst {
		if args[0].cv != 0 {
			return args[1], nil
		}
		return args[2], nil
	}
	return k.applyRecipe(p, args, blk)
}

// update is the statement combining cell with v under the accumulation
// operator (a plain store when !accumulate).
func (k *kgen) update(cell func() jen.Code, accum ops.AccumName, accumulate bool, v val) (jen.Code, error) {
	if a := ops.LookupAccum(accum); a != nil && accumulate {
		return k.accumRecipe(a, cell, v)
	}
	return jen.Add(cell()).Op("=").Add(v.c), nil
}

// literal is a composite literal of the array type with the given dims
// holding vals in row-major order.
func (k *kgen) literal(dims []int, vals []float64) jen.Code {
	var typ []jen.Code
	for _, d := range dims {
		typ = append(typ, jen.Index(jen.Lit(d)))
	}
	return jen.Add(typ...).Id(k.elem).Add(k.literalBody(dims, vals))
}

func (k *kgen) literalBody(dims []int, vals []float64) jen.Code {
	multi := jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}
	if len(dims) <= 1 {
		items := make([]jen.Code, len(vals))
		for i, v := range vals {
			if s, ok := k.floatText(v); ok {
				items[i] = jen.Id(s)
			} else {
				items[i] = k.constVal(v).c
			}
		}
		if len(items) <= 16 {
			return jen.Values(items...)
		}
		var rows []jen.Code
		for i := 0; i < len(items); i += 16 {
			rows = append(rows, jen.List(items[i:min(i+16, len(items))]...))
		}
		return jen.Custom(multi, rows...)
	}
	n := len(vals) / dims[0]
	rows := make([]jen.Code, dims[0])
	for i := range rows {
		rows[i] = k.literalBody(dims[1:], vals[i*n:(i+1)*n])
	}
	return jen.Custom(multi, rows...)
}

// evalPrim computes a primitive on constants exactly as loopir's
// interpreter does (the same function), so folded constants match.
func evalPrim(prim ops.PrimName, a *[3]float64) float64 { return loopir.ApplyPrim(prim, a) }
