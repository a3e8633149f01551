package loopir

import (
	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/ops"
)

// Stmt is a loop-IR statement: *For, *Store, *Fill, *ResetPadding or
// *FetchStmt.
type Stmt interface{ isStmt() }

// For is a loop: the body runs with loop variable i<Var> taking the
// values 0..Extent-1 in increasing order.
type For struct {
	// Var numbers the loop variable (printed i<Var>). Within one
	// operation, the loops of the components of one coupled factor share
	// a variable (they run one after another, never nested).
	Var    int
	Extent int
	Body   []Stmt
}

// Store writes Value into Tensor at Index. With Accumulate, the cell
// becomes accum(old, Value) for the accumulation operator Accum
// (ops.AccAdd, AccSub, AccMul, AccDiv, AccMax, AccMin); otherwise (or
// when Accum is ops.NoAccum) it is overwritten.
type Store struct {
	Tensor     int
	Index      []IndexExpr
	Value      Expr
	Accum      ops.AccumName
	Accumulate bool
}

// Fill sets every cell of Tensor's buffer, padding margins included, to
// Value.
type Fill struct {
	Tensor int
	Value  float64
}

// ResetPadding sets the padding margins of Tensor's buffer (and only the
// margins) to Value, the neutral element of the operation about to read
// the tensor.
type ResetPadding struct {
	Tensor int
	Value  float64
}

// FetchKind tells how a FetchStmt fills a tensor.
type FetchKind int

// Fetch kinds.
const (
	// FetchZero fills with zeros.
	FetchZero FetchKind = iota
	// FetchConst fills every cell with Value.
	FetchConst
	// FetchRange fills each cell with its row-major offset in memory order.
	FetchRange
	// FetchValues fills cell k with Values[k mod len(Values)] (memory
	// order; OCANNL's Constant_fill).
	FetchValues
	// FetchRandom is the default parameter initializer:
	// 0.5*(uniform-0.5) with uniform from the light Threefry-4x32 keyed
	// by Key and Seed, exactly rt.DefaultInit (see RandomInit).
	FetchRandom
	// FetchDropout is a dropout mask of probability Value
	// (rt.DropoutMask keyed by Key, with Seed and step 0 here: generated
	// models fill the mask of each training step themselves).
	FetchDropout
)

// String names the kind as Dump prints it.
func (k FetchKind) String() string {
	switch k {
	case FetchZero:
		return "zeros"
	case FetchConst:
		return "constant"
	case FetchRange:
		return "range over offsets"
	case FetchValues:
		return "values"
	case FetchRandom:
		return "random"
	case FetchDropout:
		return "dropout mask"
	}
	return "?"
}

// FetchStmt initializes the cells of Tensor (its unpadded interior, in
// memory order).
type FetchStmt struct {
	Tensor int
	Kind   FetchKind
	// Value is the constant of FetchConst.
	Value float64
	// Values are FetchValues' cells.
	Values []float64
	// Key and Seed key FetchRandom: Key is rt.ParamKey of the tensor's
	// name, Seed the global seed (rt.DefaultSeed).
	Key  [4]uint32
	Seed uint64
}

func (*For) isStmt()          {}
func (*Store) isStmt()        {}
func (*Fill) isStmt()         {}
func (*ResetPadding) isStmt() {}
func (*FetchStmt) isStmt()    {}

// Expr is a loop-IR expression: *Const, *Load or *Apply.
type Expr interface{ isExpr() }

// Const is a constant.
type Const struct{ Value float64 }

// Load reads Tensor at Index.
type Load struct {
	Tensor int
	Index  []IndexExpr
}

// Apply applies the primitive Prim (see Arity for the names) to Args.
type Apply struct {
	Prim ops.PrimName
	Args []Expr
}

func (*Const) isExpr() {}
func (*Load) isExpr()  {}
func (*Apply) isExpr() {}

// IndexTerm is Coeff * i<Var>.
type IndexTerm struct {
	Coeff int
	Var   int
}

// IndexExpr is an affine index over loop variables: sum(Terms) + Offset,
// plus, for a gathered axis, the int32 value Data reads.
type IndexExpr struct {
	Terms  []IndexTerm
	Offset int
	// Data, when not nil, adds the value of an index input at an affine
	// index (a gather's selected position, docs/design.md "Index inputs
	// and the gather"). Passes that analyse or rewrite affine indices
	// treat such an index as opaque (see Dynamic).
	Data *DataIndex
}

// DataIndex is the data-dependent part of an index: the int32 cell of
// index tensor Tensor at Index (affine, never itself dynamic).
type DataIndex struct {
	Tensor int
	Index  []IndexExpr
	// Name is the index tensor's name, for printing.
	Name string
	// Scale multiplies the value read (a backend's flattened view of the
	// indexed tensor); 0 means 1.
	Scale int
}

// Dynamic reports whether the index depends on data.
func (x IndexExpr) Dynamic() bool { return x.Data != nil }

// AnyDynamic reports whether some index of idx depends on data.
func AnyDynamic(idx []IndexExpr) bool {
	for _, x := range idx {
		if x.Data != nil {
			return true
		}
	}
	return false
}

// TensorInfo describes a tensor's storage.
type TensorInfo struct {
	Name string
	Kind inference.TensorKind
	// Dims are the unpadded dims in memory order (batch, output, input).
	Dims []int
	// Padding is the per-axis margin (nil when unpadded).
	Padding []inference.Padding
	// BufDims are the buffer's dims: Dims plus the margins once the "pad"
	// pass has run, Dims before.
	BufDims []int
	// IndexBound is, for an index input, the bound of its int32 cells
	// (inference.Tensor.IndexBound); zero for float tensors.
	IndexBound int
}

// Size is the number of unpadded cells.
func (t *TensorInfo) Size() int { return prod(t.Dims) }

// Padded reports whether the tensor has a non-zero margin.
func (t *TensorInfo) Padded() bool {
	for _, p := range t.Padding {
		if p.Left != 0 || p.Right != 0 {
			return true
		}
	}
	return false
}

// Operation is one lowered unit: a leaf initialization or a graph
// operation, with its loop-IR statements.
type Operation struct {
	// Desc is the header Dump prints.
	Desc string
	// Op is the graph operation's index, or -1 for a fetch.
	Op int
	// Assignment is the assignment this operation was lowered from.
	Assignment Assignment
	Body       []Stmt
}

// Program is the state of lowering: the graph, its tensors, the
// assignments, and once the "loops" pass has run, the operations in
// execution order (fetches in tensor order, then graph operations in
// program order).
type Program struct {
	Graph       *inference.Graph
	Tensors     []TensorInfo
	Assignments []Assignment
	Ops         []*Operation
	// Done lists the names of the passes run so far, in order (for
	// messages and dumps; ask Reached what the program holds).
	Done []string
	// reached is the union of the stages of the passes run.
	reached Stage
}

// Reached reports whether the passes run so far have established every
// fact of s (for instance Reached(Looped|Padded): the program is fully
// lowered and its padding applied).
func (p *Program) Reached(s Stage) bool { return p.reached&s == s }

func prod(ds []int) int {
	n := 1
	for _, d := range ds {
		n *= d
	}
	return n
}
