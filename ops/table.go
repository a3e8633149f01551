package ops

import (
	"math"
	"strconv"
)

// Helpers for writing derivative rules.
var (
	g = Term{Kind: TermGrad}
	y = Term{Kind: TermResult}
)

func x(i int) Term                        { return Term{Kind: TermArg, Arg: i} }
func c(v float64) Term                    { return Term{Kind: TermConst, Value: v} }
func ap(prim PrimName, args ...Term) Term { return Term{Kind: TermApply, Prim: prim, Args: args} }
func d(v Term) *Deriv                     { return &Deriv{Value: v} }

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// The GELU constants: geluK = √(2/π), geluA the cubic coefficient of
// the tanh approximation, geluT its tanh term as a derivative term.
const (
	geluK = 0.7978845608028654
	geluA = 0.044715
)

var geluT = ap(Tanh, ap(Mul, c(geluK), ap(Add, x(0), ap(Mul, c(geluA), ap(Mul, x(0), ap(Mul, x(0), x(0)))))))

// geluErf is x Φ(x) as the Go recipe computes it.
func geluErf(x float64) float64 { return 0.5 * x * (1 + math.Erf(x*0.7071067811865476)) }

// geluGrad is gelu's derivative Φ(x) + x φ(x) as the float64 Go recipe
// computes it: the expression of gelu's derivative rule before gelu_grad
// existed, so that float64 results keep their bits.
func geluGrad(x float64) float64 {
	return 0.5*(1+math.Erf(x*(1/math.Sqrt2))) + x*(1/math.Sqrt(2*math.Pi)*math.Exp(-0.5*(x*x)))
}

// geluGradGo is geluGrad as a Go recipe.
var geluGradGo = "0.5*(1+math.Erf($0*" + strconv.FormatFloat(1/math.Sqrt2, 'g', -1, 64) + ")) + $0*(" +
	strconv.FormatFloat(1/math.Sqrt(2*math.Pi), 'g', -1, 64) + "*math.Exp(-0.5*($0*$0)))"

// geluRecipe is a recipe computing f64 in float64 and calling f32 (a
// function of package rt) in float32 kernels.
func geluRecipe(f64, f32 string) GoRecipe {
	return GoRecipe{Expr: f64, Float64: true, Float32: f32, Imports: []string{"math", "github.com/ocannlgen/ocannlgen/rt"}}
}

// geluTanh is the tanh approximation as the Go recipe computes it.
func geluTanh(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(geluK*(x+geluA*x*x*x)))
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
	{Name: ID, Arity: 1, Syntax: Func,
		Eval: func(a *[3]float64) float64 { return a[0] },
		Grad: []*Deriv{d(g)},
		Go:   goExpr("$0")},
	{Name: Relu, Arity: 1, Syntax: Func,
		Eval: func(a *[3]float64) float64 {
			if a[0] > 0 {
				return a[0]
			}
			return 0
		},
		// relu_gate(y, g) = y > 0 ? g : 0, on the result: y > 0 exactly
		// when x > 0 (NaN and -0 give y = +0), and a bias add before the
		// relu is then read only by it and fuses into its pass
		// (loopir.FusePointwise).
		Grad:    []*Deriv{d(ap(Where, ap(Lt, c(0), y), g, c(0)))},
		Go:      goBranch("$0", "!($r > 0)", "0"), // NaN gives 0
		Domains: []Domain{{Lo: -1, Hi: 1, Kinks: []float64{0}}}},
	{Name: Sat01, Arity: 1, Syntax: Func,
		Eval: func(a *[3]float64) float64 { return math.Min(1, math.Max(0, a[0])) },
		// sat01_gate(x, g) = 0 < x < 1 ? g : 0
		Grad: []*Deriv{d(ap(Where, ap(Lt, c(0), x(0)), ap(Where, ap(Lt, x(0), c(1)), g, c(0)), c(0)))},
		// The builtins agree with math.Min and math.Max on NaN and zeros.
		Go:      goExpr("min(1, max(0, $0))"),
		Domains: []Domain{{Lo: -0.5, Hi: 1.5, Kinks: []float64{0, 1}}}},
	{Name: Exp, Arity: 1, Syntax: Func,
		Eval: func(a *[3]float64) float64 { return math.Exp(a[0]) },
		Grad: []*Deriv{d(ap(Mul, g, y))},
		Go:   goMath("math.Exp($0)")},
	{Name: Log, Arity: 1, Syntax: Func,
		Eval:    func(a *[3]float64) float64 { return math.Log(a[0]) },
		Grad:    []*Deriv{d(ap(Div, g, x(0)))},
		Go:      goMath("math.Log($0)"),
		Domains: positive},
	{Name: Exp2, Arity: 1, Syntax: Func,
		Eval: func(a *[3]float64) float64 { return math.Exp2(a[0]) },
		Grad: []*Deriv{d(ap(Mul, g, ap(Mul, c(math.Ln2), y)))},
		Go:   goMath("math.Exp2($0)")},
	{Name: Log2, Arity: 1, Syntax: Func,
		Eval:    func(a *[3]float64) float64 { return math.Log2(a[0]) },
		Grad:    []*Deriv{d(ap(Div, g, ap(Mul, x(0), c(math.Ln2))))},
		Go:      goMath("math.Log2($0)"),
		Domains: positive},
	{Name: Sin, Arity: 1, Syntax: Func,
		Eval:    func(a *[3]float64) float64 { return math.Sin(a[0]) },
		Grad:    []*Deriv{d(ap(Mul, g, ap(Cos, x(0))))},
		Go:      goMath("math.Sin($0)"),
		Domains: angles},
	{Name: Cos, Arity: 1, Syntax: Func,
		Eval:    func(a *[3]float64) float64 { return math.Cos(a[0]) },
		Grad:    []*Deriv{d(ap(Mul, g, ap(Neg, ap(Sin, x(0)))))},
		Go:      goMath("math.Cos($0)"),
		Domains: angles},
	{Name: Sqrt, Arity: 1, Syntax: Func,
		Eval:    func(a *[3]float64) float64 { return math.Sqrt(a[0]) },
		Grad:    []*Deriv{d(ap(Div, g, ap(Mul, c(2), y)))},
		Go:      goMath("math.Sqrt($0)"),
		Domains: positive},
	{Name: Recip, Arity: 1, Syntax: Func,
		Eval:    func(a *[3]float64) float64 { return 1 / a[0] },
		Grad:    []*Deriv{d(ap(Mul, g, ap(Neg, ap(Mul, y, y))))},
		Go:      goExpr("1 / $0"),
		Domains: nonzero},
	{Name: RecipSqrt, Arity: 1, Syntax: Func,
		Eval:    func(a *[3]float64) float64 { return 1 / math.Sqrt(a[0]) },
		Grad:    []*Deriv{d(ap(Mul, g, ap(Mul, c(-0.5), ap(Mul, y, ap(Mul, y, y)))))},
		Go:      goMath("1 / math.Sqrt($0)"),
		Domains: positive},
	{Name: Neg, Arity: 1, Syntax: Func,
		Eval: func(a *[3]float64) float64 { return -a[0] },
		Grad: []*Deriv{d(ap(Neg, g))},
		Go:   goExpr("-$0")},
	{Name: Tanh, Arity: 1, Syntax: Func,
		Eval:    func(a *[3]float64) float64 { return math.Tanh(a[0]) },
		Grad:    []*Deriv{d(ap(Mul, g, ap(Sub, c(1), ap(Mul, y, y))))},
		Go:      goMath("math.Tanh($0)"),
		Domains: []Domain{{Lo: -2, Hi: 2}}},
	{Name: Erf, Arity: 1, Syntax: Func,
		Eval: func(a *[3]float64) float64 { return math.Erf(a[0]) },
		// d erf x = 2/√π e^(-x²)
		Grad:    []*Deriv{d(ap(Mul, g, ap(Mul, c(2/math.SqrtPi), ap(Exp, ap(Neg, ap(Mul, x(0), x(0)))))))},
		Go:      goMath("math.Erf($0)"),
		Domains: []Domain{{Lo: -3, Hi: 3}}},
	// gelu x = x Φ(x) = x (1 + erf(x/√2))/2, PyTorch's default GELU.
	{Name: Gelu, Arity: 1, Syntax: Func,
		Eval: func(a *[3]float64) float64 { return geluErf(a[0]) },
		// d gelu x = Φ(x) + x φ(x), φ(x) = e^(-x²/2)/√(2π): gelu_grad.
		Grad: []*Deriv{d(ap(Mul, g, ap(GeluGrad, x(0))))},
		// float32: rt.Gelu32, x Φ(x) in float32 operations that the
		// assembly kernels repeat bit for bit (docs/design.md).
		Go:      geluRecipe("0.5 * $0 * (1 + math.Erf($0*0.7071067811865476))", "rt.Gelu32($0)"),
		Domains: []Domain{{Lo: -4, Hi: 4}}},
	// gelu_grad x = Φ(x) + x φ(x), gelu's derivative (autodiff introduces
	// it). In float64 the former derivative expression, in float32
	// rt.GeluGrad32.
	{Name: GeluGrad, Arity: 1, Syntax: Internal,
		Eval: func(a *[3]float64) float64 { return geluGrad(a[0]) },
		// φ(x) (2 - x²)
		Grad: []*Deriv{d(ap(Mul, g, ap(Mul, ap(Mul, c(1/math.Sqrt(2*math.Pi)), ap(Exp, ap(Mul, c(-0.5), ap(Mul, x(0), x(0))))),
			ap(Sub, c(2), ap(Mul, x(0), x(0))))))},
		Go:      geluRecipe(geluGradGo, "rt.GeluGrad32($0)"),
		Domains: []Domain{{Lo: -4, Hi: 4}}},
	// gelu_tanh x = x (1 + tanh(√(2/π) (x + 0.044715 x³)))/2, PyTorch's
	// GELU(approximate="tanh").
	{Name: GeluTanh, Arity: 1, Syntax: Func,
		Eval: func(a *[3]float64) float64 { return geluTanh(a[0]) },
		// With u = √(2/π) (x + 0.044715 x³) and t = tanh u:
		// (1 + t)/2 + x (1 - t²) √(2/π) (1 + 3·0.044715 x²)/2.
		Grad: []*Deriv{d(ap(Mul, g, ap(Add,
			ap(Mul, c(0.5), ap(Add, c(1), geluT)),
			ap(Mul, ap(Mul, c(0.5*geluK), x(0)), ap(Mul, ap(Sub, c(1), ap(Mul, geluT, geluT)), ap(Add, c(1), ap(Mul, c(3*geluA), ap(Mul, x(0), x(0)))))))))},
		Go:      goMath("0.5 * $0 * (1 + math.Tanh(0.7978845608028654*($0+0.044715*$0*$0*$0)))"),
		Domains: []Domain{{Lo: -4, Hi: 4}}},
	{Name: Not, Arity: 1, Syntax: Func,
		Eval: func(a *[3]float64) float64 { return b2f(a[0] == 0) },
		Grad: []*Deriv{nil},
		Go:   goBranch("", "$0 == 0", "1")},
	{Name: Add, Arity: 2, Syntax: Infix, Infix: []string{"+"}, Symbol: "+",
		Eval: func(a *[3]float64) float64 { return a[0] + a[1] },
		Grad: []*Deriv{d(g), d(g)},
		Go:   goExpr("$0 + $1")},
	{Name: Sub, Arity: 2, Syntax: Infix, Infix: []string{"-"}, Symbol: "-",
		Eval: func(a *[3]float64) float64 { return a[0] - a[1] },
		Grad: []*Deriv{d(g), {Value: g, Negate: true}},
		Go:   goExpr("$0 - $1")},
	{Name: Mul, Arity: 2, Syntax: Infix, Infix: []string{"*.", "*"}, Symbol: "*",
		Eval: func(a *[3]float64) float64 { return a[0] * a[1] },
		Grad: []*Deriv{d(ap(Mul, g, x(1))), d(ap(Mul, x(0), g))},
		Go:   goExpr("$0 * $1")},
	{Name: Div, Arity: 2, Syntax: Infix, Infix: []string{"/.", "/"}, Symbol: "/",
		Eval: func(a *[3]float64) float64 { return a[0] / a[1] },
		// g * (-1 * x0 / x1**2)
		Grad:    []*Deriv{d(ap(Div, g, x(1))), d(ap(Mul, g, ap(Neg, ap(Div, x(0), ap(Mul, x(1), x(1))))))},
		Go:      goExpr("$0 / $1"),
		Domains: []Domain{{}, nonzero[0]}},
	{Name: Pow, Arity: 2, Syntax: Infix, Infix: []string{"**."}, Symbol: "**",
		Eval: func(a *[3]float64) float64 { return math.Pow(a[0], a[1]) },
		Grad: []*Deriv{
			d(ap(Mul, g, ap(Mul, x(1), ap(Pow, x(0), ap(Sub, x(1), c(1)))))), // g * (p * x0 ** (p - 1))
			d(ap(Mul, g, ap(Mul, y, ap(Log, x(0))))),                         // g * (y * log x0)
		},
		Go:      goMath("math.Pow($0, $1)"),
		Domains: []Domain{positive[0], {Lo: -2, Hi: 2}}},
	{Name: Lt, Arity: 2, Syntax: Infix, Infix: []string{"<"}, Symbol: "<",
		Eval: func(a *[3]float64) float64 { return b2f(a[0] < a[1]) },
		Grad: []*Deriv{nil, nil},
		Go:   goBranch("", "$0 < $1", "1")},
	{Name: Eq, Arity: 2, Syntax: Infix, Infix: []string{"="}, Symbol: "==",
		Eval: func(a *[3]float64) float64 { return b2f(a[0] == a[1]) },
		Grad: []*Deriv{nil, nil},
		Go:   goBranch("", "$0 == $1", "1")},
	{Name: Ne, Arity: 2, Syntax: Infix, Infix: []string{"<>"}, Symbol: "!=",
		Eval: func(a *[3]float64) float64 { return b2f(a[0] != a[1]) },
		Grad: []*Deriv{nil, nil},
		Go:   goBranch("", "$0 != $1", "1")},
	{Name: Where, Arity: 3, Syntax: Func,
		Eval: func(a *[3]float64) float64 {
			if a[0] != 0 {
				return a[1]
			}
			return a[2]
		},
		Grad:    []*Deriv{nil, d(ap(Where, x(0), g, c(0))), d(ap(Where, x(0), c(0), g))},
		Go:      goBranch("$2", "$0 != 0", "$1"),
		Domains: []Domain{{Bool: true}}},
	{Name: FMA, Arity: 3, Syntax: Func,
		Eval: func(a *[3]float64) float64 { return a[0]*a[1] + a[2] },
		Grad: []*Deriv{d(ap(Mul, g, x(1))), d(ap(Mul, g, x(0))), d(g)},
		// In float64, as the interpreter computes it: a float32 product
		// would be rounded before the addition.
		Go: GoRecipe{Expr: "$0*$1 + $2", Float64: true}},
}

// accums is the table of accumulators, in the order Accums lists them.
var accums = [...]Accum{
	{Name: AccAdd, Symbol: "+", Notation: "+=", Neutral: 0, Grad: SumGrad,
		Combine: func(old, v float64) float64 { return old + v },
		Go:      GoAccum{AssignOp: "+="}},
	{Name: AccSub, Symbol: "-", Notation: "-=", Neutral: 0, Grad: NegSumGrad,
		Combine: func(old, v float64) float64 { return old - v },
		Go:      GoAccum{AssignOp: "-="}},
	{Name: AccMul, Symbol: "*", Notation: "*=", Neutral: 1,
		Combine: func(old, v float64) float64 { return old * v },
		Go:      GoAccum{AssignOp: "*="}},
	{Name: AccDiv, Symbol: "/", Notation: "/=", Neutral: 1,
		Combine: func(old, v float64) float64 { return old / v },
		Go:      GoAccum{AssignOp: "/="}},
	{Name: AccMax, Symbol: "@^", Notation: "max=", Neutral: math.Inf(-1), Grad: SelectGrad,
		Combine: math.Max,
		Go:      GoAccum{Expr: "max($0, $1)"}},
	{Name: AccMin, Symbol: "@-", Notation: "min=", Neutral: math.Inf(1), Grad: SelectGrad,
		Combine: math.Min,
		Go:      GoAccum{Expr: "min($0, $1)"}},
}

// The indexes are built once from the tables and never modified.
var (
	primIndex  = indexPrims()
	accumIndex = indexAccums()
)

func indexPrims() map[PrimName]*Prim {
	m := make(map[PrimName]*Prim, len(prims))
	for i := range prims {
		m[prims[i].Name] = &prims[i]
	}
	return m
}

func indexAccums() map[AccumName]*Accum {
	m := make(map[AccumName]*Accum, 2*len(accums))
	for i := range accums {
		m[accums[i].Name] = &accums[i]
	}
	return m
}

// Lookup returns the pointwise primitive named name, or nil.
func Lookup(name PrimName) *Prim { return primIndex[name] }

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
func Arity(name PrimName) int {
	if p := primIndex[name]; p != nil {
		return p.Arity
	}
	return 0
}

// IsFunc reports whether name is a primitive the program language applies
// as a function with n operands (`relu x`, `where c a b`).
func IsFunc(name PrimName, n int) bool {
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

// LookupAccum returns the accumulator named name, or nil (NoAccum is the
// plain store, not an accumulator).
func LookupAccum(name AccumName) *Accum { return accumIndex[name] }

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
