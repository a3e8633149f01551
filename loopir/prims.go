package loopir

import (
	"fmt"
	"math"
)

// Arity returns the number of operands of the primitive prim, or 0 if
// prim is unknown. Unary: id relu sat01 exp log exp2 log2 sin cos sqrt
// recip recip_sqrt neg tanh not. Binary: add sub mul div pow lt eq ne.
// Ternary: where (a != 0 ? b : c), fma (a*b + c).
func Arity(prim string) int {
	switch prim {
	case "id", "relu", "sat01", "exp", "log", "exp2", "log2", "sin", "cos",
		"sqrt", "recip", "recip_sqrt", "neg", "tanh", "not":
		return 1
	case "add", "sub", "mul", "div", "pow", "lt", "eq", "ne":
		return 2
	case "where", "fma":
		return 3
	}
	return 0
}

// validAccum reports whether a is an accumulation operator.
func validAccum(a string) bool {
	switch a {
	case "", "add", "sub", "mul", "div", "max", "min":
		return true
	}
	return false
}

// Neutral returns the neutral element of the accumulation operator
// accum: 0 for add, sub and the plain store "", 1 for mul and div, -inf
// for max and +inf for min (digest §4.4).
func Neutral(accum string) float64 {
	switch accum {
	case "mul", "div":
		return 1
	case "max":
		return math.Inf(-1)
	case "min":
		return math.Inf(1)
	}
	return 0
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// applyPrim computes prim over the first Arity(prim) elements of a.
// ApplyPrim computes primitive prim on its operands a[0..Arity-1] exactly
// as the interpreter does (float64 arithmetic). Code generators use it to
// fold constants identically.
func ApplyPrim(prim string, a *[3]float64) float64 { return applyPrim(prim, a) }

func applyPrim(prim string, a *[3]float64) float64 {
	x := a[0]
	switch prim {
	case "id":
		return x
	case "relu":
		if x > 0 {
			return x
		}
		return 0
	case "sat01":
		return math.Min(1, math.Max(0, x))
	case "exp":
		return math.Exp(x)
	case "log":
		return math.Log(x)
	case "exp2":
		return math.Exp2(x)
	case "log2":
		return math.Log2(x)
	case "sin":
		return math.Sin(x)
	case "cos":
		return math.Cos(x)
	case "sqrt":
		return math.Sqrt(x)
	case "recip":
		return 1 / x
	case "recip_sqrt":
		return 1 / math.Sqrt(x)
	case "neg":
		return -x
	case "tanh":
		return math.Tanh(x)
	case "not":
		return b2f(x == 0)
	case "add":
		return x + a[1]
	case "sub":
		return x - a[1]
	case "mul":
		return x * a[1]
	case "div":
		return x / a[1]
	case "pow":
		return math.Pow(x, a[1])
	case "lt":
		return b2f(x < a[1])
	case "eq":
		return b2f(x == a[1])
	case "ne":
		return b2f(x != a[1])
	case "where":
		if x != 0 {
			return a[1]
		}
		return a[2]
	case "fma":
		return x*a[1] + a[2]
	}
	panic(fmt.Sprintf("loopir: unknown primitive %q", prim))
}

// accumulate combines the old cell value with v.
func accumulate(accum string, old, v float64) float64 {
	switch accum {
	case "add":
		return old + v
	case "sub":
		return old - v
	case "mul":
		return old * v
	case "div":
		return old / v
	case "max":
		return math.Max(old, v)
	case "min":
		return math.Min(old, v)
	}
	return v
}
