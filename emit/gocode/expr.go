package gocode

import (
	"fmt"
	"math"
	"strconv"

	"github.com/dave/jennifer/jen"
	"github.com/ocannlgen/ocannlgen/loopir"
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

func (k *kgen) infix(op string, a, b val) val {
	if a.untyped && b.untyped {
		a = val{c: k.typed(a)}
	}
	return val{c: jen.Add(paren(a)).Op(op).Add(paren(b)), compound: true}
}

var mathFuncs = map[string]string{
	"exp": "Exp", "log": "Log", "exp2": "Exp2", "log2": "Log2", "sin": "Sin",
	"cos": "Cos", "sqrt": "Sqrt", "tanh": "Tanh",
}

var infixOps = map[string]string{"add": "+", "sub": "-", "mul": "*", "div": "/"}

var compareOps = map[string]string{"lt": "<", "eq": "==", "ne": "!="}

// prim applies a loopir primitive to compiled operands. Primitives that
// need a branch (relu, comparisons, not, where) emit statements into blk
// and return a temporary. Mathematical functions go through float64,
// exactly as loopir's interpreter computes them.
func (k *kgen) prim(name string, args []val, blk *[]jen.Code) (val, error) {
	if n := loopir.Arity(name); n == 0 || n != len(args) {
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
	if name == "where" && args[0].konst {
		if args[0].cv != 0 {
			return args[1], nil
		}
		return args[2], nil
	}
	if op, ok := infixOps[name]; ok {
		return k.infix(op, args[0], args[1]), nil
	}
	if f, ok := mathFuncs[name]; ok {
		return val{c: k.fromF64(jen.Qual("math", f).Call(k.toF64(val{c: k.typed(args[0])})))}, nil
	}
	x := args[0]
	switch name {
	case "id":
		return x, nil
	case "neg":
		return val{c: jen.Op("-").Add(paren(x)), untyped: x.untyped, compound: true}, nil
	case "recip":
		return k.infix("/", val{c: jen.Lit(1), untyped: true}, x), nil
	case "recip_sqrt":
		return val{c: k.fromF64(jen.Lit(1).Op("/").Qual("math", "Sqrt").Call(k.toF64(val{c: k.typed(x)})))}, nil
	case "pow":
		return val{c: k.fromF64(jen.Qual("math", "Pow").Call(k.toF64(val{c: k.typed(x)}), k.toF64(val{c: k.typed(args[1])})))}, nil
	case "sat01":
		// math.Min(1, math.Max(0, x)): the builtins agree on NaN and zeros.
		return val{c: jen.Min(jen.Lit(1), jen.Max(jen.Lit(0), x.c)), untyped: x.untyped}, nil
	case "fma":
		if k.elem == "float64" {
			return val{c: jen.Add(paren(x)).Op("*").Add(paren(args[1])).Op("+").Add(paren(args[2])), compound: true}, nil
		}
		f := func(v val) jen.Code { return k.toF64(val{c: k.typed(v)}) }
		return val{c: k.fromF64(jen.Add(f(x)).Op("*").Add(f(args[1])).Op("+").Add(f(args[2])))}, nil
	case "relu":
		// x > 0 ? x : 0 (NaN gives 0, as in the interpreter).
		t := k.names.fresh("r")
		*blk = append(*blk,
			jen.Id(t).Op(":=").Add(k.typed(x)),
			jen.If(jen.Op("!").Parens(jen.Id(t).Op(">").Lit(0))).Block(jen.Id(t).Op("=").Lit(0)))
		return val{c: jen.Id(t)}, nil
	case "not":
		t := k.names.fresh("r")
		*blk = append(*blk,
			jen.Var().Id(t).Id(k.elem),
			jen.If(jen.Add(paren(x)).Op("==").Lit(0)).Block(jen.Id(t).Op("=").Lit(1)))
		return val{c: jen.Id(t)}, nil
	case "lt", "eq", "ne":
		a, b := x, args[1]
		if a.untyped && b.untyped {
			a = val{c: k.typed(a)}
		}
		t := k.names.fresh("r")
		*blk = append(*blk,
			jen.Var().Id(t).Id(k.elem),
			jen.If(jen.Add(paren(a)).Op(compareOps[name]).Add(paren(b))).Block(jen.Id(t).Op("=").Lit(1)))
		return val{c: jen.Id(t)}, nil
	case "where":
		t := k.names.fresh("r")
		*blk = append(*blk,
			jen.Id(t).Op(":=").Add(k.typed(args[2])),
			jen.If(jen.Add(paren(x)).Op("!=").Lit(0)).Block(jen.Id(t).Op("=").Add(args[1].c)))
		return val{c: jen.Id(t)}, nil
	}
	return val{}, fmt.Errorf("primitive %q is not supported", name)
}

// update is the statement combining cell with v under the accumulation
// operator (a plain store when !accumulate).
func update(cell func() jen.Code, accum string, accumulate bool, v val) jen.Code {
	if !accumulate {
		return jen.Add(cell()).Op("=").Add(v.c)
	}
	switch accum {
	case "add":
		return jen.Add(cell()).Op("+=").Add(v.c)
	case "sub":
		return jen.Add(cell()).Op("-=").Add(v.c)
	case "mul":
		return jen.Add(cell()).Op("*=").Add(v.c)
	case "div":
		return jen.Add(cell()).Op("/=").Add(v.c)
	case "max":
		return jen.Add(cell()).Op("=").Max(cell(), v.c)
	case "min":
		return jen.Add(cell()).Op("=").Min(cell(), v.c)
	}
	return jen.Add(cell()).Op("=").Add(v.c)
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
func evalPrim(prim string, a *[3]float64) float64 { return loopir.ApplyPrim(prim, a) }
