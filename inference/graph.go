package inference

import (
	"fmt"
	"strings"

	"github.com/ocannlgen/ocannlgen/ops"
	"github.com/ocannlgen/ocannlgen/spec"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// TensorKind classifies a tensor of the graph.
type TensorKind int

// Tensor kinds.
const (
	// Input is a data leaf with a declared shape.
	Input TensorKind = iota
	// Leaf is a non-learnable leaf whose unknown rows are inferred from use.
	Leaf
	// Param is a learnable parameter; its shape is inferred from use and
	// never guessed.
	Param
	// Number is a numeric constant: a scalar with one broadcast-unit axis.
	Number
	// Literal is a tensor literal with an exact shape.
	Literal
	// DimScalar is `dim NAME`: a scalar holding a captured label's size.
	DimScalar
	// Result is the result of an operation.
	Result
	// Target is a tensor introduced by an assignment `{ t } =: ...`.
	Target
)

// String returns the kind's name as used by `ocannlgen infer`.
func (k TensorKind) String() string {
	switch k {
	case Input:
		return "input"
	case Leaf:
		return "leaf"
	case Param:
		return "param"
	case Number:
		return "number"
	case Literal:
		return "literal"
	case DimScalar:
		return "dim"
	case Result:
		return "let"
	case Target:
		return "target"
	}
	return fmt.Sprintf("TensorKind(%d)", int(k))
}

// terminal reports whether tensors of this kind are leaves for closing.
func (k TensorKind) terminal() bool {
	switch k {
	case Input, Leaf, Param, Number, Literal, DimScalar:
		return true
	}
	return false
}

// Dim is a solved dimension: a size with a basis. Basis is BasisDefault
// for unannotated axes and BasisBcast for the claim-free broadcast unit.
type Dim struct {
	Size  int
	Basis string
}

// String prints the dim as OCANNL does: the size, with ":basis" for named bases.
func (d Dim) String() string { return formatConst(d.Size, d.Basis) }

// Shape is a solved shape: three rows of dims.
type Shape struct {
	Batch, Input, Output []Dim
}

// Row returns the row of kind k.
func (s *Shape) Row(k spec.Kind) []Dim {
	switch k {
	case spec.Batch:
		return s.Batch
	case spec.Input:
		return s.Input
	}
	return s.Output
}

// Dims returns all dims in memory order: batch, output, input.
func (s *Shape) Dims() []Dim {
	out := make([]Dim, 0, len(s.Batch)+len(s.Output)+len(s.Input))
	out = append(out, s.Batch...)
	out = append(out, s.Output...)
	return append(out, s.Input...)
}

// Size returns the number of elements.
func (s *Shape) Size() int {
	n := 1
	for _, d := range s.Dims() {
		n *= d.Size
	}
	return n
}

// String prints the shape in the declaration syntax `batch | input ->
// output`, omitting empty batch and input rows ("2 -> 16", "32 | 16", "3,4");
// a shape with no axes at all prints as "[]".
func (s Shape) String() string {
	row := func(ds []Dim) string {
		p := make([]string, len(ds))
		for i, d := range ds {
			p[i] = d.String()
		}
		return strings.Join(p, ",")
	}
	out := row(s.Output)
	if len(s.Input) > 0 {
		out = row(s.Input) + " -> " + out
	}
	if len(s.Batch) > 0 {
		out = row(s.Batch) + " | " + out
	}
	if out == "" {
		return "[]"
	}
	return out
}

// Tensor is a node of the tensor graph.
type Tensor struct {
	ID   int
	Name string // user name, or a generated name for anonymous results
	Kind TensorKind
	Pos  spec.Pos
	// Op is the index of the operation producing this tensor, or -1.
	Op int
	// Shape is filled by inference.
	Shape Shape
	// Init describes how a leaf is initialized (inputs, leaves, params,
	// numbers, literals).
	Init TensorInit
	// DimName is the captured label a DimScalar reads.
	DimName string
	// DimValue is the solved value for a DimScalar (after inference).
	DimValue int
	// DimRows marks a DimScalar whose count includes a run-time rows axis
	// (BasisRows): its value is the bound, not the rows of a call.
	DimRows bool
	// IndexBound is, for an index input (`BATCH | index N`), N: its cells
	// are int32 positions in [0, N). Zero for float tensors.
	IndexBound int
	// Padding is the per-axis margin (memory order) required by padded
	// convolutions reading this tensor; nil when unpadded. Filled by
	// DeriveProjections.
	Padding []Padding
	// Split records, per row kind, how many of the row's axes belong to its
	// leading flank (anchored at the front) in the solved row; the rest
	// are anchored at the back. Broadcasting aligns flanks at these edges.
	Split [3]int

	rows       [3]row // indexed by spec.Kind
	dimCap     *capture
	uses       int
	usedInSpec bool // used as the contracted operand of * or in an einsum
}

// InitKind tells how a leaf tensor is filled.
type InitKind int

// Init kinds.
const (
	// InitZero fills with zeros (also the default for leaves and targets).
	InitZero InitKind = iota
	// InitConst fills every cell with Value.
	InitConst
	// InitRange fills each cell with its row-major offset (memory order).
	InitRange
	// InitValues fills cells from Values, given in memory order.
	InitValues
	// InitRandom is a parameter's default random initialization.
	InitRandom
	// InitDropout makes a leaf a dropout mask of probability Value
	// (rt.DropoutMask): 0 or 1/(1-Value) per cell, drawn per training step.
	InitDropout
)

// TensorInit is a leaf initializer.
type TensorInit struct {
	Kind   InitKind
	Value  float64
	Values []float64
}

// OpKind is the shape logic of an operation.
type OpKind int

// Operation kinds (OCANNL's shape logics).
const (
	// OpPointwise broadcasts its operands (unary, binary or ternary).
	OpPointwise OpKind = iota
	// OpCompose is `*`: contracts the first operand's input axes with the
	// second operand's output axes, broadcasting the rest.
	OpCompose
	// OpTranspose swaps input and output axes (~logic:"T").
	OpTranspose
	// OpEinsum is a spec-driven operation (equalities, no broadcasting).
	OpEinsum
	// OpBlock is a concatenation `++^` (a spec-driven Block).
	OpBlock
	// OpSlice is `@|`: the leftmost batch axis at a static index.
	OpSlice
	// OpStack stacks equally shaped tensors along a new leading axis.
	OpStack
	// OpGather is `x @@ "spec" ids`: an einsum whose one label of x's slot
	// that no other slot names is not iterated but read from the index
	// input ids (docs/design.md, "Index inputs and the gather").
	OpGather
	// OpFlatten is `flatten x`: the batch and input rows of x, and one
	// output axis, the product of x's output axes, indexed row-major.
	OpFlatten
)

// Op is an operation of the graph: LHS = prim(RHS...) with an accumulation.
type Op struct {
	Kind OpKind
	// Prim names the primitive (package ops's table): ops.ID, unary FUNC
	// names, ops.Add, ops.Sub, ops.Mul, ops.Div, ops.Pow, ops.Lt, ops.Eq,
	// ops.Ne, ops.Where, ops.FMA, ...; for einsum ops ops.Mul (+*),
	// ops.Add (+++), ops.ID (++, ++^, @^^) or ops.Add with max
	// accumulation (@^+).
	Prim ops.PrimName
	// Accum is the accumulation operator (package ops's accumulators):
	// ops.AccAdd (sum), AccMax, AccMin, AccMul, AccSub, AccDiv, or
	// ops.NoAccum for a plain overwrite.
	Accum ops.AccumName
	// InitNeutral reports whether the LHS is reset to the accumulator's
	// neutral element first (the `=:` forms).
	InitNeutral bool
	LHS         int
	RHS         []int
	Spec        *spec.Einsum // for OpEinsum / OpBlock
	SpecSrc     string
	// Index is the static index for OpSlice; the new axis kind for OpStack.
	Index int
	Pos   spec.Pos
	// SpecPos is the position of the spec string's first character.
	SpecPos spec.Pos
	// Desc describes the operation for messages.
	Desc string
	// Assign reports whether the op comes from an assignment statement.
	Assign bool
	// Proj is the op's projection record, filled by DeriveProjections.
	Proj *Projections
	// Labels maps each spec label of this application to its solved size.
	Labels map[string]int
	// GatherLabel is an OpGather's gathered label: the one label of its
	// first operand's slot that no other slot names.
	GatherLabel string
	// GatherAxis is the memory-order axis of the first operand that an
	// OpGather's index input selects (set by DeriveProjections).
	GatherAxis int

	origin int32
	env    *specEnv
	// node is the program expression of a spec operation (an
	// *program.Einsum or *program.Concat), for OperandRank.
	node program.Expr
}

// Graph is an elaborated program: its tensors, operations in program
// order, and the named tensors in definition order.
type Graph struct {
	Tensors []*Tensor
	Ops     []*Op
	Named   []NamedTensor

	// prov reads the provenance of the inferred shapes (Provenance);
	// nil for a graph not made by inference.
	prov *provSource
}

// NamedTensor is a user-visible name bound to a tensor.
type NamedTensor struct {
	Name   string
	Kind   TensorKind
	Tensor int
}
