// Package explain builds the explanation page of `ocannlgen explain
// --html`: for a program, a model or an annotated function, every
// entry's tensor graph with each tensor's inferred shape, where each
// row and axis got its size (the solver's record of bindings: which
// constraint, from which operation and source position, at which stage),
// each operation's projections and CPU schedule, the parameters, and,
// when inference fails, the failing constraint with the provenance of
// its two sides.
//
// Build* collect a Page, a plain value that holds only strings and
// numbers; Render writes it as one self-contained HTML file (no network,
// no external scripts or fonts; readable without JavaScript).
// Generation is deterministic: the same input gives the same bytes.
package explain

import "strconv"

// Page is everything one explanation page shows.
type Page struct {
	// Title names what the page explains (a file, or a package and the
	// model or function in it).
	Title string
	// Command is the command line that made the page, as the page cites
	// it (no absolute paths, so that pages are reproducible).
	Command string
	// Sources are the source views the page links into.
	Sources []Source
	// Units are the programs, models and functions explained, in source
	// order.
	Units []Unit
}

// Source is the text of one source file (or the part of it holding
// directives) as the page shows it.
type Source struct {
	// ID is the anchor prefix of its lines ("src1": lines are
	// "src1-L12").
	ID string
	// Name is the file name as given (relative).
	Name string
	// FirstLine is the file's line number of Lines[0] (1 for a whole
	// file).
	FirstLine int
	Lines     []string
}

// Pos is a position in a source: the file line and column (1-based) and
// the column inside the operation's spec string (0: none). Source is
// the Source.ID it points into ("" when unknown: Line is 0).
type Pos struct {
	Source  string
	Line    int
	Col     int
	SpecCol int
}

// Anchor is the fragment of the position's line in the source view
// ("src1-L12"), or "" when the position is unknown.
func (p Pos) Anchor() string {
	if p.Source == "" || p.Line <= 0 {
		return ""
	}
	return p.Source + "-L" + strconv.Itoa(p.Line)
}

// String is "LINE:COL" (with " spec column N" when set), or "" when
// unknown.
func (p Pos) String() string {
	if p.Line <= 0 {
		return ""
	}
	s := strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Col)
	if p.SpecCol > 0 {
		s += " (spec column " + strconv.Itoa(p.SpecCol) + ")"
	}
	return s
}

// Unit is one explained program, model or annotated function.
type Unit struct {
	// ID is its anchor ("u1").
	ID string
	// Name is the model type or function name, or the file name of a
	// program; Kind is "program", "model" or "function".
	Name string
	Kind string
	// Pos is where it is declared.
	Pos Pos
	// Params are the parameters (a model's: shared by its entries), in
	// declaration order; MemoryBytes is the total of their bytes plus,
	// for a model, the optimizer state and gradients it keeps
	// (Memory lists the parts).
	Params      []Param
	MemoryBytes int64
	Memory      []MemoryPart
	// Elem is the element type ("float32", "float64"; "bf16" for a
	// //ocannl:model bf16, "rt.BF16 inputs, float32 output" for an
	// //ocannl:einsum over rt.BF16 arrays).
	Elem string
	// Entries are its entry points (a program or function has one).
	Entries []Entry
	// Failure is set when inference (or a later check) failed: the page
	// still renders the source and what is known.
	Failure *Failure
}

// MemoryPart is one line of a unit's memory total.
type MemoryPart struct {
	What  string
	Bytes int64
}

// Param is one parameter of a unit.
type Param struct {
	Name  string
	Shape Shape
	Cells int64
	Bytes int64
	// Init is the initialization rule as the page states it (e.g.
	// "normal, std 1/sqrt(fan-in 16)", "constant 0").
	Init string
	// State marks model state that is not trained (running statistics,
	// step counters).
	State bool
	// SizedBy lists, per axis of the parameter (batch, input, output
	// axes in order), the use that fixed its size: the operation and
	// position (from the entry that sized it).
	SizedBy []AxisSource
	Pos     Pos
}

// AxisSource names which use of a parameter sized one of its axes.
type AxisSource struct {
	// Axis is "input 1", "output 1", ... (the row kind and the 1-based
	// axis in the row).
	Axis string
	Size string
	// Entry is the entry whose inference fixed it, Step the binding.
	Entry string
	Step  Step
	// Given: the declaration gave the size (no step).
	Given bool
}

// Entry is one entry point: its tensors and operations.
type Entry struct {
	// ID is its anchor ("u1-e2").
	ID string
	// Name is the entry's name; Kind is "loss", "entry" or "program";
	// Result names the result tensor.
	Name   string
	Kind   string
	Result string
	// Tensors are every tensor of the entry's graph (named and
	// intermediate), indexed by Tensor.ID.
	Tensors []Tensor
	// Ops are the operations in program order, indexed by Op.ID.
	Ops []Op
	// ScheduleHeader is the schedule's first line (element type,
	// parallelism, target and tiers); "" when no schedule was made.
	ScheduleHeader string
	// Note says why something is missing (e.g. no schedule for an
	// entry with run-time rows), or "".
	Note string
}

// Tensor is one tensor of an entry's graph.
type Tensor struct {
	ID int
	// Name is the user's name or a generated one (`_h1.2`); Named
	// reports a user name; Kind is "input", "param", "let", "leaf", ...
	Name  string
	Named bool
	Kind  string
	// Aliases are the tensor's other user names (`let b = a` names a's
	// tensor b too).
	Aliases []string
	// Shape is its inferred shape with provenance.
	Shape Shape
	// Index is an index input's bound N (0 for float tensors).
	Index int
	// Op is the operation producing it (-1: a leaf); Uses the
	// operations reading it.
	Op   int
	Uses []int
	Pos  Pos
}

// Shape is an inferred shape: its three rows, and the text `ocannlgen
// infer` prints ("batch | input -> output").
type Shape struct {
	Text string
	// Rows are batch, input, output.
	Rows [3]Row
}

// Row is one row of a shape.
type Row struct {
	// Kind is "batch", "input" or "output".
	Kind string
	Axes []Axis
	// Steps are the bindings that fixed the row's number of axes (none:
	// it was given when the tensor was made).
	Steps []Step
}

// Axis is one axis of a row.
type Axis struct {
	// Label is the spec label that names the axis ("" when none does);
	// Basis a named basis (a named axis), "" for the default one.
	Label string
	Basis string
	Size  int
	// Broadcast reports a broadcast unit (size 1 that stands for any).
	Broadcast bool
	// Given is the declaration that created the axis with its size
	// (e.g. "16" of `o=[16]`), "" when its size was inferred.
	Given string
	// Steps are the bindings from the axis to its size, in order: the
	// first is the operation that tied this tensor's axis, the last the
	// one that fixed the size.
	Steps []Step
}

// Step is one binding in the provenance of a row or an axis.
type Step struct {
	// Stage is the stage of inference that made it ("elaborate", or a
	// closing stage: "stage4", ...); StageRule what that stage does.
	Stage     string
	StageRule string
	// Op describes the operation, declaration or rule whose constraint
	// made it; At is its position.
	Op string
	At Pos
	// Value is what was bound ("16", another axis "?12", a row).
	Value string
	// Final: Value is a size or a closed row (the chain ends here).
	Final bool
	// Elided > 0 marks a placeholder for that many bindings left out of
	// a long chain (through the operations between the tensor and where
	// its size came from); its other fields are empty. A chain keeps its
	// first MaxSteps-1 steps and its last one (the operation that tied
	// the tensor's axis, and where its size came from).
	Elided int
}

// MaxSteps is the most steps a row's or an axis's provenance lists
// before the middle ones become one Elided placeholder: a deep model's
// batch axis is tied through every operation back to its input, and
// listing each would make the page quadratic in the depth.
const MaxSteps = 3

// Op is one operation of an entry's graph.
type Op struct {
	ID int
	// Desc is the operation as messages describe it (`compose "*" of
	// w1, points`); Kind is "pointwise", "compose", "einsum", ...; Spec
	// the einsum spec when it has one.
	Desc string
	Kind string
	Spec string
	// LHS is the tensor it writes, RHS the tensors it reads.
	LHS int
	RHS []int
	At  Pos
	// Proj is its projections (nil when not derived).
	Proj *Projection
	// Schedule is how the generated CPU code runs its loop nests
	// (empty when it runs fused into another operation's nest: FusedInto
	// names that operation's result).
	Schedule  []Nest
	FusedInto string
	// Backward is how a loss's training step (TrainStep's backward
	// pass) runs the gradients of the operation's operands: the nests
	// of its backprop; empty outside a loss or for an operation without
	// a differentiable operand.
	Backward []Nest
}

// Projection is an operation's projections: the product space, the
// index of every operand, which iterators are co-iterated by several
// operands and which are reduced.
type Projection struct {
	// Product is the product space's iterators ("i0<32"; coupled
	// factors joined by ^).
	Product []string
	// LHS is the result's index ("[i0, i1]"), RHS each operand's, in
	// the order of Op.RHS.
	LHS string
	RHS []string
	// Reduced are the iterators the result does not index (summed or
	// accumulated over); CoIterated the iterators indexing more than one
	// tensor.
	Reduced    []string
	CoIterated []string
	// Affine lists the indices that are affine (strided, convolution)
	// or concatenation indices, as "tensor: index".
	Affine []string
	// ZeroInit, Accumulate: the result is reset first; the operation
	// accumulates.
	ZeroInit, Accumulate bool
}

// Nest is the schedule of one loop nest.
type Nest struct {
	// Loops lists the nest's loops ("i0<32, i1<16, i2<2").
	Loops string
	// Family is the kernel family ("contraction", "pointwise map",
	// "reduction", "Go loops", ...); Kernel the kernel line (tile,
	// blocking, tiers).
	Family string
	Kernel string
	// Lines are the rest of the schedule's description (fill, Go loop
	// order and mode, parallel split, chain).
	Lines []string
}

// Failure is an inference or check failure.
type Failure struct {
	// Kind is the error kind (`dim-mismatch`, ...); Message the line the
	// CLI prints (`file:line:col: kind: message`).
	Kind    string
	Message string
	At      Pos
	// Op describes the operation whose constraint failed.
	Op string
	// Entry names the entry the failure is in ("" for a program).
	Entry string
	// Constraint is the failing constraint as the solver states it;
	// Relation its relation ("=", "⊑"); Sides its result and operand
	// sides with their provenance. Empty when the failure is not a
	// constraint's (a syntax error, a name error).
	Constraint string
	Relation   string
	Sides      []Side
	// Related are other positions the message cites.
	Related []Related
}

// Side is one side of a failing constraint.
type Side struct {
	// Text is the side as far as it was solved; Row its provenance (the
	// row's steps and axes, or one axis for a dimension constraint).
	Text string
	Row  Row
}

// Related is a position a message cites.
type Related struct {
	At  Pos
	Msg string
}
