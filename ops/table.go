package ops

import "math"

// Helpers for writing derivative rules.
var (
	g = Term{Kind: TermGrad}
	y = Term{Kind: TermResult}
)

func x(i int) Term                      { return Term{Kind: TermArg, Arg: i} }
func c(v float64) Term                  { return Term{Kind: TermConst, Value: v} }
func ap(prim string, args ...Term) Term { return Term{Kind: TermApply, Prim: prim, Args: args} }
func d(v Term) *Deriv                   { return &Deriv{Value: v} }

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Recipe helpers.
func goMath(expr string) GoRecipe {
	return GoRecipe{Expr: expr, Float64: true, Imports: []string{"math"}}
}
func goExpr(expr string) GoRecipe { return GoRecipe{Expr: expr} }
func goBranch(init, cond, then string) GoRecipe {
	return GoRecipe{Branch: &GoBranch{Init: init, Cond: cond, Then: then}}
}

var (
	positive = []Domain{{Lo: 0.5, Hi: 2}}
	nonzero  = []Domain{{Lo: -2, Hi: 2, Kinks: []float64{0}, Gap: 0.5}}
	angles   = []Domain{{Lo: -3, Hi: 3}}
)

// prims is the table of pointwise primitives, in the order Prims lists
// them.
var prims = [...]Prim{
	{Name: "id", Arity: 1, Syntax: Func,
		Eval: func(a *[3]float64) float64 { return a[0] },
		Grad: []*Deriv{d(g)},
		Go:   goExpr("$0")},
	{Name: "relu", Arity: 1, Syntax: Func,
		Eval: func(a *[3]float64) float64 {
			if a[0] > 0 {
				return a[0]
			}
			return 0
		},
		// relu_gate(x, g) = x > 0 ? g : 0
		Grad:    []*Deriv{d(ap("where", ap("lt", c(0), x(0)), g, c(0)))},
		Go:      goBranch("$0", "!($r > 0)", "0"), // NaN gives 0
		Domains: []Domain{{Lo: -1, Hi: 1, Kinks: []float64{0}}}},
	{Name: "sat01", Arity: 1, Syntax: Func,
		Eval: func(a *[3]float64) float64 { return math.Min(1, math.Max(0, a[0])) },
		// sat01_gate(x, g) = 0 < x < 1 ? g : 0
		Grad: []*Deriv{d(ap("where", ap("lt", c(0), x(0)), ap("where", ap("lt", x(0), c(1)), g, c(0)), c(0)))},
		// The builtins agree with math.Min and math.Max on NaN and zeros.
		Go:      goExpr("min(1, max(0, $0))"),
		Domains: []Domain{{Lo: -0.5, Hi: 1.5, Kinks: []float64{0, 1}}}},
	{Name: "exp", Arity: 1, Syntax: Func,
		Eval: func(a *[3]float64) float64 { return math.Exp(a[0]) },
		Grad: []*Deriv{d(ap("mul", g, y))},
		Go:   goMath("math.Exp($0)")},
	{Name: "log", Arity: 1, Syntax: Func,
		Eval:    func(a *[3]float64) float64 { return math.Log(a[0]) },
		Grad:    []*Deriv{d(ap("div", g, x(0)))},
		Go:      goMath("math.Log($0)"),
		Domains: positive},
	{Name: "exp2", Arity: 1, Syntax: Func,
		Eval: func(a *[3]float64) float64 { return math.Exp2(a[0]) },
		Grad: []*Deriv{d(ap("mul", g, ap("mul", c(math.Ln2), y)))},
		Go:   goMath("math.Exp2($0)")},
	{Name: "log2", Arity: 1, Syntax: Func,
		Eval:    func(a *[3]float64) float64 { return math.Log2(a[0]) },
		Grad:    []*Deriv{d(ap("div", g, ap("mul", x(0), c(math.Ln2))))},
		Go:      goMath("math.Log2($0)"),
		Domains: positive},
	{Name: "sin", Arity: 1, Syntax: Func,
		Eval:    func(a *[3]float64) float64 { return math.Sin(a[0]) },
		Grad:    []*Deriv{d(ap("mul", g, ap("cos", x(0))))},
		Go:      goMath("math.Sin($0)"),
		Domains: angles},
	{Name: "cos", Arity: 1, Syntax: Func,
		Eval:    func(a *[3]float64) float64 { return math.Cos(a[0]) },
		Grad:    []*Deriv{d(ap("mul", g, ap("neg", ap("sin", x(0)))))},
		Go:      goMath("math.Cos($0)"),
		Domains: angles},
	{Name: "sqrt", Arity: 1, Syntax: Func,
		Eval:    func(a *[3]float64) float64 { return math.Sqrt(a[0]) },
		Grad:    []*Deriv{d(ap("div", g, ap("mul", c(2), y)))},
		Go:      goMath("math.Sqrt($0)"),
		Domains: positive},
	{Name: "recip", Arity: 1, Syntax: Func,
		Eval:    func(a *[3]float64) float64 { return 1 / a[0] },
		Grad:    []*Deriv{d(ap("mul", g, ap("neg", ap("mul", y, y))))},
		Go:      goExpr("1 / $0"),
		Domains: nonzero},
	{Name: "recip_sqrt", Arity: 1, Syntax: Func,
		Eval:    func(a *[3]float64) float64 { return 1 / math.Sqrt(a[0]) },
		Grad:    []*Deriv{d(ap("mul", g, ap("mul", c(-0.5), ap("mul", y, ap("mul", y, y)))))},
		Go:      goMath("1 / math.Sqrt($0)"),
		Domains: positive},
	{Name: "neg", Arity: 1, Syntax: Func,
		Eval: func(a *[3]float64) float64 { return -a[0] },
		Grad: []*Deriv{d(ap("neg", g))},
		Go:   goExpr("-$0")},
	{Name: "tanh", Arity: 1, Syntax: Func,
		Eval:    func(a *[3]float64) float64 { return math.Tanh(a[0]) },
		Grad:    []*Deriv{d(ap("mul", g, ap("sub", c(1), ap("mul", y, y))))},
		Go:      goMath("math.Tanh($0)"),
		Domains: []Domain{{Lo: -2, Hi: 2}}},
	{Name: "not", Arity: 1, Syntax: Func,
		Eval: func(a *[3]float64) float64 { return b2f(a[0] == 0) },
		Grad: []*Deriv{nil},
		Go:   goBranch("", "$0 == 0", "1")},
	{Name: "add", Arity: 2, Syntax: Infix, Infix: []string{"+"}, Symbol: "+",
		Eval: func(a *[3]float64) float64 { return a[0] + a[1] },
		Grad: []*Deriv{d(g), d(g)},
		Go:   goExpr("$0 + $1")},
	{Name: "sub", Arity: 2, Syntax: Infix, Infix: []string{"-"}, Symbol: "-",
		Eval: func(a *[3]float64) float64 { return a[0] - a[1] },
		Grad: []*Deriv{d(g), {Value: g, Negate: true}},
		Go:   goExpr("$0 - $1")},
	{Name: "mul", Arity: 2, Syntax: Infix, Infix: []string{"*.", "*"}, Symbol: "*",
		Eval: func(a *[3]float64) float64 { return a[0] * a[1] },
		Grad: []*Deriv{d(ap("mul", g, x(1))), d(ap("mul", x(0), g))},
		Go:   goExpr("$0 * $1")},
	{Name: "div", Arity: 2, Syntax: Infix, Infix: []string{"/.", "/"}, Symbol: "/",
		Eval: func(a *[3]float64) float64 { return a[0] / a[1] },
		// g * (-1 * x0 / x1**2)
		Grad:    []*Deriv{d(ap("div", g, x(1))), d(ap("mul", g, ap("neg", ap("div", x(0), ap("mul", x(1), x(1))))))},
		Go:      goExpr("$0 / $1"),
		Domains: []Domain{{}, nonzero[0]}},
	{Name: "pow", Arity: 2, Syntax: Infix, Infix: []string{"**."}, Symbol: "**",
		Eval: func(a *[3]float64) float64 { return math.Pow(a[0], a[1]) },
		Grad: []*Deriv{
			d(ap("mul", g, ap("mul", x(1), ap("pow", x(0), ap("sub", x(1), c(1)))))), // g * (p * x0 ** (p - 1))
			d(ap("mul", g, ap("mul", y, ap("log", x(0))))),                           // g * (y * log x0)
		},
		Go:      goMath("math.Pow($0, $1)"),
		Domains: []Domain{positive[0], {Lo: -2, Hi: 2}}},
	{Name: "lt", Arity: 2, Syntax: Infix, Infix: []string{"<"}, Symbol: "<",
		Eval: func(a *[3]float64) float64 { return b2f(a[0] < a[1]) },
		Grad: []*Deriv{nil, nil},
		Go:   goBranch("", "$0 < $1", "1")},
	{Name: "eq", Arity: 2, Syntax: Infix, Infix: []string{"="}, Symbol: "==",
		Eval: func(a *[3]float64) float64 { return b2f(a[0] == a[1]) },
		Grad: []*Deriv{nil, nil},
		Go:   goBranch("", "$0 == $1", "1")},
	{Name: "ne", Arity: 2, Syntax: Infix, Infix: []string{"<>"}, Symbol: "!=",
		Eval: func(a *[3]float64) float64 { return b2f(a[0] != a[1]) },
		Grad: []*Deriv{nil, nil},
		Go:   goBranch("", "$0 != $1", "1")},
	{Name: "where", Arity: 3, Syntax: Func,
		Eval: func(a *[3]float64) float64 {
			if a[0] != 0 {
				return a[1]
			}
			return a[2]
		},
		Grad:    []*Deriv{nil, d(ap("where", x(0), g, c(0))), d(ap("where", x(0), c(0), g))},
		Go:      goBranch("$2", "$0 != 0", "$1"),
		Domains: []Domain{{Bool: true}}},
	{Name: "fma", Arity: 3, Syntax: Func,
		Eval: func(a *[3]float64) float64 { return a[0]*a[1] + a[2] },
		Grad: []*Deriv{d(ap("mul", g, x(1))), d(ap("mul", g, x(0))), d(g)},
		// In float64, as the interpreter computes it: a float32 product
		// would be rounded before the addition.
		Go: GoRecipe{Expr: "$0*$1 + $2", Float64: true}},
}

// accums is the table of accumulators, in the order Accums lists them.
var accums = [...]Accum{
	{Name: "add", Symbol: "+", Notation: "+=", Neutral: 0, Grad: SumGrad,
		Combine: func(old, v float64) float64 { return old + v },
		Go:      GoAccum{AssignOp: "+="}},
	{Name: "sub", Symbol: "-", Notation: "-=", Neutral: 0, Grad: NegSumGrad,
		Combine: func(old, v float64) float64 { return old - v },
		Go:      GoAccum{AssignOp: "-="}},
	{Name: "mul", Symbol: "*", Notation: "*=", Neutral: 1,
		Combine: func(old, v float64) float64 { return old * v },
		Go:      GoAccum{AssignOp: "*="}},
	{Name: "div", Symbol: "/", Notation: "/=", Neutral: 1,
		Combine: func(old, v float64) float64 { return old / v },
		Go:      GoAccum{AssignOp: "/="}},
	{Name: "max", Symbol: "@^", Notation: "max=", Neutral: math.Inf(-1), Grad: SelectGrad,
		Combine: math.Max,
		Go:      GoAccum{Expr: "max($0, $1)"}},
	{Name: "min", Symbol: "@-", Notation: "min=", Neutral: math.Inf(1), Grad: SelectGrad,
		Combine: math.Min,
		Go:      GoAccum{Expr: "min($0, $1)"}},
}

// The indexes are built once from the tables and never modified.
var (
	primIndex  = indexPrims()
	accumIndex = indexAccums()
)

func indexPrims() map[string]*Prim {
	m := make(map[string]*Prim, len(prims))
	for i := range prims {
		m[prims[i].Name] = &prims[i]
	}
	return m
}

func indexAccums() map[string]*Accum {
	m := make(map[string]*Accum, 2*len(accums))
	for i := range accums {
		m[accums[i].Name] = &accums[i]
	}
	return m
}

// Lookup returns the pointwise primitive named name, or nil.
func Lookup(name string) *Prim { return primIndex[name] }

// Prims returns every pointwise primitive, in table order.
func Prims() []*Prim {
	out := make([]*Prim, len(prims))
	for i := range prims {
		out[i] = &prims[i]
	}
	return out
}

// Arity returns the number of operands of the primitive name, or 0 if
// there is no such primitive.
func Arity(name string) int {
	if p := primIndex[name]; p != nil {
		return p.Arity
	}
	return 0
}

// IsFunc reports whether name is a primitive the program language applies
// as a function with n operands (`relu x`, `where c a b`).
func IsFunc(name string, n int) bool {
	p := primIndex[name]
	return p != nil && p.Syntax == Func && p.Arity == n
}

// ByInfix returns the binary primitive the program language spells with
// the infix operator op, or nil.
func ByInfix(op string) *Prim {
	for i := range prims {
		for _, s := range prims[i].Infix {
			if s == op {
				return &prims[i]
			}
		}
	}
	return nil
}

// LookupAccum returns the accumulator named name, or nil ("" is the plain
// store, not an accumulator).
func LookupAccum(name string) *Accum { return accumIndex[name] }

// Accums returns every accumulator, in table order.
func Accums() []*Accum {
	out := make([]*Accum, len(accums))
	for i := range accums {
		out[i] = &accums[i]
	}
	return out
}

// AccumBySymbol returns the accumulator spelled sym in assignment
// operators ("+" in =+), or nil.
func AccumBySymbol(sym string) *Accum {
	for i := range accums {
		if accums[i].Symbol == sym {
			return &accums[i]
		}
	}
	return nil
}
