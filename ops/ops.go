// Package ops is the table of primitive operations: the pointwise
// primitives (unary, binary and ternary functions and operators) and the
// reduction accumulators. Each entry says everything the rest of the
// project needs to know about one operation: its name and arity, how the
// program language spells it, how the interpreter evaluates it, its
// derivative rule, and the recipe each code generator emits for it.
//
// The lexer and parser (spec/program), elaboration (inference), the
// go:generate driver's reserved words (gen), arity checks, the pseudo-code
// printer and the interpreter (loopir), backpropagation (autodiff) and the
// Go emitter (emit/gocode) all read this table; none of them lists the
// operations again, and names an entry only through the PrimName and
// AccumName constants of names.go. Adding a pointwise primitive that the
// program language spells as a function application (`softplus x`)
// therefore touches this package only. New infix operators also need the grammar (their
// precedence lives in spec/program's parser).
//
// The package imports nothing of the project, so every stage of the
// pipeline may import it without breaking the one-way data flow. The
// table is read-only: the pointers Prim and Accum return point into it
// and must not be modified.
package ops

import (
	"math"
	"math/rand/v2"
)

// Syntax is how the program language spells a primitive.
type Syntax int

const (
	// Internal primitives have no spelling of their own in the program
	// language (the lowering or autodiff introduces them).
	Internal Syntax = iota
	// Func primitives are applied as `NAME a` (unary) or `NAME a b c`
	// (ternary); their names are reserved words of the language.
	Func
	// Infix primitives are binary operators spelled by Prim.Infix.
	Infix
)

// Prim is a pointwise primitive: result = Eval(operands), broadcast over
// the operation's product space.
type Prim struct {
	// Name is the primitive's name in the IRs (Add, Tanh, Where).
	Name PrimName
	// Arity is the number of operands (1, 2 or 3).
	Arity int
	// Syntax says how the program language spells the primitive: Func
	// primitives are reserved words applied to Arity atoms (only unary
	// and ternary ones: the grammar has no binary application), Infix
	// ones are the operators listed in Infix.
	Syntax Syntax
	// Infix lists the program language's infix spellings of a binary
	// primitive ("*." and "*" for mul: in an expression "*" composes;
	// the primitive is still mul).
	Infix []string
	// Symbol is the infix symbol the pseudo-code printers use for a
	// binary primitive ("+", "**", "!="); empty prints as a call.
	Symbol string
	// Eval computes the primitive on a[0..Arity-1] in float64, exactly as
	// the interpreter does and as code generators fold constants.
	Eval func(a *[3]float64) float64
	// Grad holds the derivative rule of each operand, Arity entries; a
	// nil entry marks an operand with no gradient (a condition, a
	// comparison's operands).
	Grad []*Deriv
	// Go is the Go emitter's recipe.
	Go GoRecipe
	// Recipes holds the recipes of backends still to come (the vector
	// lowering of emit/asm), keyed by backend name; nil today. A
	// backend that lands adds its key, or a typed field beside Go, and a
	// completeness test requiring it for every primitive. CUDA's recipes
	// are the column in cuda.go (Prim.CUDA).
	Recipes map[string]string
	// Domains says where tests draw each operand's values (where the
	// primitive is defined and smooth); nil, or a zero entry, is [-1, 1).
	Domains []Domain
}

// Deriv is the gradient contribution of one operand: Value, a term over
// the incoming gradient, the operands and the result, is added to the
// operand's gradient, or subtracted when Negate is set (digest §5.2).
type Deriv struct {
	Value  Term
	Negate bool
}

// TermKind is the kind of a node of a derivative rule.
type TermKind int

const (
	// TermGrad is the incoming gradient g of the result.
	TermGrad TermKind = iota
	// TermArg is operand Arg (0-based) at the point.
	TermArg
	// TermResult is the primitive's value at the point.
	TermResult
	// TermConst is the constant Value.
	TermConst
	// TermApply applies primitive Prim to Args.
	TermApply
)

// Term is a node of a derivative rule's expression tree.
type Term struct {
	Kind  TermKind
	Arg   int
	Value float64
	Prim  PrimName
	Args  []Term
}

// GoRecipe says how the Go emitter computes a primitive. Templates are Go
// expressions over the operands $0, $1, $2; a selector pkg.F names a
// function of an imported package, which must be listed in Imports.
//
// An expression recipe (Expr) is the value itself. A branch recipe
// (Branch) declares a temporary $r, sets it to Branch.Init (or to zero
// when Init is empty), assigns Branch.Then when Branch.Cond holds, and
// yields $r.
//
// Operands are used as they are: a constant takes its type from the
// other side of its operator, from the other arguments of the builtin
// min and max, or from $r; compound operands of an operator are
// parenthesized. An argument of a package function and the initializer
// of $r are converted to the element type first. With Float64 the
// expression is computed in float64, as the interpreter computes it: in
// a float32 kernel every operand is converted with float64(...) and the
// result back to float32. Float32, when set, is the expression a float32
// kernel computes instead of Expr, in float32 (the float32 GELU calls
// package rt's float32 functions, which the assembly kernels repeat bit
// for bit).
type GoRecipe struct {
	Expr    string
	Branch  *GoBranch
	Float64 bool
	Float32 string
	Imports []string
}

// GoBranch is the statement form of a GoRecipe.
type GoBranch struct {
	Init, Cond, Then string
}

// Domain is where tests draw an operand's values: uniform in [Lo, Hi)
// ([-1, 1) when both are zero), at least Gap (default 0.05) away from
// each of Kinks; with Bool, 0 or 1.
type Domain struct {
	Lo, Hi float64
	Kinks  []float64
	Gap    float64
	Bool   bool
}

// Draw returns a value of the domain.
func (d Domain) Draw(r *rand.Rand) float64 {
	if d.Bool {
		return float64(r.IntN(2))
	}
	lo, hi := d.Lo, d.Hi
	if lo == 0 && hi == 0 {
		lo, hi = -1, 1
	}
	gap := d.Gap
	if gap == 0 {
		gap = 0.05
	}
	for {
		v := lo + (hi-lo)*r.Float64()
		ok := true
		for _, k := range d.Kinks {
			if math.Abs(v-k) < gap {
				ok = false
			}
		}
		if ok {
			return v
		}
	}
}

// Domain returns the domain of operand i.
func (p *Prim) Domain(i int) Domain {
	if i < len(p.Domains) {
		return p.Domains[i]
	}
	return Domain{}
}

// Accum is a reduction accumulator: a store combines the cell's old
// value with the new one as Combine(old, v). The plain store (NoAccum)
// is not an entry.
type Accum struct {
	// Name is the accumulator's name in the IRs (AccAdd, AccMax).
	Name AccumName
	// Symbol is the program language's spelling after "=" or "=:" in an
	// assignment operator ("+" in =+ and =:+, "@^" in =@^).
	Symbol string
	// Notation is the store operator the pseudo-code printer uses
	// ("+=", "max=").
	Notation string
	// Neutral is the neutral element the `=:` forms fill with first
	// (digest §4.4).
	Neutral float64
	// Combine computes the new cell value.
	Combine func(old, v float64) float64
	// Grad says how backpropagation treats the accumulation.
	Grad AccumGrad
	// Go is the Go emitter's recipe.
	Go GoAccum
}

// AccumGrad is how backpropagation differentiates through an accumulator.
type AccumGrad int

const (
	// NoAccumGrad: accumulations by this operator are not differentiated.
	NoAccumGrad AccumGrad = iota
	// SumGrad: each contribution's gradient is the incoming gradient.
	SumGrad
	// NegSumGrad: as SumGrad, negated when the store accumulates.
	NegSumGrad
	// SelectGrad: the gradient flows to the contributions equal to the
	// result (max and min; ties each receive the whole gradient).
	SelectGrad
)

// GoAccum is the Go emitter's recipe for an accumulator: the assignment
// operator AssignOp (cell += v), or cell = Expr where Expr is a template
// over the old value $0 and the new value $1.
type GoAccum struct {
	AssignOp string
	Expr     string
}
