// Package spec parses OCANNL's einsum / axis-label specification language:
// the strings written after einsum operators (`"b|i->o; i->h => b|h"`),
// in `~logic:` clauses and in capture lists.
//
// A spec is a list of right-hand-side slots separated by ';', then '=>',
// then the left-hand-side (result) slot. Each slot has up to three rows,
// written `batch | input -> output`; an omitted kind is an empty row.
// A row is a leading flank of axes, an optional row variable ('...' or
// '..name..'), and a trailing flank. A row with no row variable puts all
// its axes in the trailing flank.
//
// Parsing is purely syntactic: sizes and variables are the business of
// package inference.
package spec

import "fmt"

// Kind is the axis kind of a row: batch, input or output.
type Kind int

// The three row kinds, in spec order. Memory order is Batch, Output, Input.
const (
	Batch Kind = iota
	Input
	Output
)

// String returns "batch", "input" or "output".
func (k Kind) String() string {
	switch k {
	case Batch:
		return "batch"
	case Input:
		return "input"
	case Output:
		return "output"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// MemoryOrder lists the kinds in memory order: batch, output, input.
var MemoryOrder = [3]Kind{Batch, Output, Input}

// AxisKind tells which form an axis takes.
type AxisKind int

// Axis forms.
const (
	// AxisLabel is a dimension label such as `i`, `oh` or `_`.
	AxisLabel AxisKind = iota
	// AxisFixed is an integer fixed index such as `0` or `2`.
	AxisFixed
	// AxisAffine is a strided or convolution axis such as `2*o<+k`.
	AxisAffine
	// AxisConcat is a concatenation such as `a^b` or `3^a`.
	AxisConcat
)

// Axis is one axis position of a row.
type Axis struct {
	Kind AxisKind
	// Col is the 1-based byte column of the axis's first character in the spec string.
	Col int
	// Label is the dimension label for AxisLabel (may be "_").
	Label string
	// Fixed is the index for AxisFixed.
	Fixed int
	// Affine is set for AxisAffine.
	Affine *Affine
	// Concat lists the components for AxisConcat (at least two).
	Concat []ConcatPart
}

// Affine is a strided or convolution axis:
// `Stride*Over + Offset` (no kernel) or
// `Stride*Over {=|<}+ Dilation*Kernel` plus an optional offset.
// The size of the indexed (operand) axis is Stride*size(Over) for pure
// striding and padded convolution, and Stride*(size(Over)-1) + 1 +
// (size(Kernel)-1)*Dilation for valid convolution.
type Affine struct {
	Stride  int    // >= 1
	Over    string // label iterated by the output position
	OverCol int    // 1-based column of Over
	Offset  int    // stride offset, >= 0
	Conv    *Conv  // nil for pure striding
}

// Conv is the kernel part of a convolution axis.
type Conv struct {
	Dilation  int    // >= 1
	Kernel    string // kernel label
	KernelCol int    // 1-based column of Kernel
	Padded    bool   // true for '=+' (padded, "same"), false for '<+' (valid)
}

// ConcatPart is one component of a concatenation axis: a label, or an
// integer-sized component (Label == "") whose Size is given.
type ConcatPart struct {
	Label string
	Size  int
	Col   int
}

// Row is one row (batch, input or output) of a slot.
type Row struct {
	// Beg is the leading flank: axes written before the row variable,
	// anchored at the front. Empty when the row has no row variable.
	Beg []Axis
	// HasVar reports whether the row has a row variable.
	HasVar bool
	// Var is the row variable's name: the kind name ("batch", "input",
	// "output") for '...', the written name for '..name..'.
	Var string
	// Ellipsis reports whether the row variable was written '...'.
	Ellipsis bool
	// VarCol is the 1-based column of the row variable.
	VarCol int
	// End is the trailing flank: axes after the row variable (or all axes
	// of a row without one), anchored at the back.
	End []Axis
}

// Axes returns the row's axes in order (Beg then End).
func (r *Row) Axes() []Axis {
	out := make([]Axis, 0, len(r.Beg)+len(r.End))
	out = append(out, r.Beg...)
	return append(out, r.End...)
}

// Slot is one operand or result of a spec: three rows.
type Slot struct {
	Rows [3]Row // indexed by Kind
	Col  int    // 1-based column where the slot starts
}

// Row returns the row of kind k.
func (s *Slot) Row(k Kind) *Row { return &s.Rows[k] }

// Einsum is a parsed einsum spec `rhs1; rhs2; ... => lhs`.
type Einsum struct {
	Src       string
	Multichar bool // whether the spec was read in multichar mode
	RHS       []Slot
	LHS       Slot
}

// Error is a spec syntax error. Col is the 1-based byte column in Spec.
type Error struct {
	Spec string
	Col  int
	Msg  string
}

// Error formats the error as `column C of spec "S": message`.
func (e *Error) Error() string {
	return fmt.Sprintf("column %d of spec %s: %s", e.Col, Quote(e.Spec), e.Msg)
}
