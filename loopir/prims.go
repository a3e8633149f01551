package loopir

import (
	"fmt"

	"github.com/ocannlgen/ocannlgen/ops"
)

// The primitives and accumulators are those of package ops's table.

// Arity returns the number of operands of the primitive prim, or 0 if
// prim is unknown (see package ops for the table).
func Arity(prim ops.PrimName) int { return ops.Arity(prim) }

// validAccum reports whether a is an accumulation operator (or
// ops.NoAccum, the plain store).
func validAccum(a ops.AccumName) bool { return a == ops.NoAccum || ops.LookupAccum(a) != nil }

// Neutral returns the neutral element of the accumulation operator
// accum: 0 for add, sub and the plain store ops.NoAccum, 1 for mul and div, -inf
// for max and +inf for min (digest §4.4).
func Neutral(accum ops.AccumName) float64 {
	if a := ops.LookupAccum(accum); a != nil {
		return a.Neutral
	}
	return 0
}

// ApplyPrim computes primitive prim on its operands a[0..Arity-1] exactly
// as the interpreter does (float64 arithmetic). Code generators use it to
// fold constants identically.
func ApplyPrim(prim ops.PrimName, a *[3]float64) float64 { return applyPrim(prim, a) }

func applyPrim(prim ops.PrimName, a *[3]float64) float64 {
	if p := ops.Lookup(prim); p != nil {
		return p.Eval(a)
	}
	panic(fmt.Sprintf("loopir: unknown primitive %q", prim))
}

// accumulate combines the old cell value with v.
func accumulate(accum ops.AccumName, old, v float64) float64 {
	if a := ops.LookupAccum(accum); a != nil {
		return a.Combine(old, v)
	}
	return v
}
