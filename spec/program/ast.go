// Package program parses the ocannlgen tensor-program language: the text
// held by `//ocannl:` directives and by .ocl files. It is modelled on
// OCANNL's %op / %cd syntax; see docs/language.md for the grammar.
//
// The parser is purely syntactic. Names are resolved, shapes inferred and
// specs parsed by package inference.
package program

import "github.com/ocannlgen/ocannlgen/spec"

// Program is a parsed program: its statements in source order.
type Program struct {
	Stmts []Stmt
}

// Stmt is a statement. Concrete types: *InputStmt, *LeafStmt, *ParamStmt,
// *LetStmt, *DimStmt, *AssignStmt, and the model statements *LayerStmt,
// *EntryStmt and *OptimStmt.
type Stmt interface {
	StmtPos() spec.Pos
}

// InputStmt is `input NAME : shape [= init]`: a data leaf with exactly the
// given shape.
type InputStmt struct {
	Pos   spec.Pos
	Name  string
	Shape *ShapeDecl
	Init  *Init // nil when absent (zeros)
}

// LeafStmt is `leaf NAME [: shape] [= init]`: a non-learnable leaf whose
// unknown ('?') or absent rows are inferred from use.
type LeafStmt struct {
	Pos   spec.Pos
	Name  string
	Shape *ShapeDecl // nil when absent: all rows unknown
	Init  *Init      // nil when absent
}

// ParamStmt is `param NAME [= init] { field }`: a learnable parameter
// whose shape is inferred from use.
type ParamStmt struct {
	Pos    spec.Pos
	Name   string
	Init   *Init // nil: default random init
	Fields []Field
}

// LetStmt is `[let] NAME = expr`.
type LetStmt struct {
	Pos  spec.Pos
	Name string
	Expr Expr
}

// DimStmt is `dim NAME = INT`: sets the size of a captured label. Inside
// a layer the value may name a configuration argument instead
// (`dim h = heads`): then ValueName is set and Value is 0.
type DimStmt struct {
	Pos       spec.Pos
	Name      string
	Value     int
	ValueName string
}

// LayerStmt is a layer definition:
//
//	layer NAME [ '[' cfg, ... ']' ] '(' x, ... ')' = EXPR
//	layer NAME [ '[' cfg, ... ']' ] '(' x, ... ')' :
//	    STMT ...
//	    return EXPR
type LayerStmt struct {
	Pos    spec.Pos
	Name   string
	Config []ConfigParam
	Args   []Name
	Body   []Stmt // *LetStmt and *DimStmt
	Result Expr
	// Block is true for the multi-line form.
	Block bool
}

// Name is a name with its position.
type Name struct {
	Pos  spec.Pos
	Name string
	// Index marks a layer's tensor argument declared `NAME : index`: it
	// takes an index input (docs/language.md, "Index inputs").
	Index bool
}

// ConfigParam is a configuration argument of a layer, with an optional
// default value.
type ConfigParam struct {
	Pos     spec.Pos
	Name    string
	Default *ConfigValue // nil: required
}

// ConfigValue is a configuration value: a number, a string, or (inside a
// layer) the name of one of the layer's configuration arguments.
type ConfigValue struct {
	Pos    spec.Pos
	Number *Number // set for a number
	Str    string  // the string's contents when IsStr
	IsStr  bool
	Ref    string // a configuration argument's name when neither of the above
}

// EntryStmt is an entry point of a model, a predictor (`entry`) or a
// scalar loss (`loss`):
//
//	entry NAME :
//	    input x : SHAPE
//	    STMT ...
//	    return EXPR
type EntryStmt struct {
	Pos    spec.Pos
	Name   string
	Loss   bool
	Body   []Stmt // *InputStmt, *LetStmt, *DimStmt
	Result Expr
}

// OptimStmt is the optimizer's settings, `sgd lr=0.1 momentum=0.9
// nesterov weight_decay=1e-4 lr_end=0.01 steps=1000` or `adam lr=1e-3
// beta2=0.99 clip_norm=1`.
type OptimStmt struct {
	Pos      spec.Pos
	Kind     string // "sgd", "adam" or "adamw"
	Settings []Setting
}

// Setting is `NAME=NUMBER` or a bare flag `NAME` (Value nil).
type Setting struct {
	Pos   spec.Pos
	Name  string
	Value *Number
	// Word is a value written as a name (schedule=cosine); Value is
	// then nil. WordPos is its position.
	Word    string
	WordPos spec.Pos
}

// AssignStmt is an assignment in the producer regime (OCANNL's %cd):
// `target ACCUM rhs [~logic:"..."]`.
type AssignStmt struct {
	Pos spec.Pos
	// Target is the assigned tensor's name; Inline is true when written
	// `{ NAME }` (a new tensor introduced by this assignment).
	Target    string
	TargetPos spec.Pos
	Inline    bool
	// Accum is the assignment operator as written: "=:", "=+", "=:+",
	// "=-", "=:-", "=*", "=:*", "=/", "=:/", "=@^", "=:@^", "=@-", "=:@-".
	Accum string
	// Op is the primitive applied to the operands: a FUNC name for a unary
	// primitive ("id", "relu", ...), a binary operator ("+", "-", "*",
	// "/", "*.", "/.", "**.", "<", "=", "<>") or "" when the right-hand
	// side is a bare expression (identity).
	Op string
	// Args are the operands: one for unary/identity, two for binary.
	Args []Expr
	// Logic is the ~logic string: "." (default), "@", "T" or an einsum spec.
	// It is "" (and LogicPos zero) when no ~logic clause is written.
	Logic    string
	LogicPos spec.Pos // position of the string literal's opening quote; zero if absent
}

// StmtPos implements Stmt.
func (s *InputStmt) StmtPos() spec.Pos { return s.Pos }

// StmtPos implements Stmt.
func (s *LeafStmt) StmtPos() spec.Pos { return s.Pos }

// StmtPos implements Stmt.
func (s *ParamStmt) StmtPos() spec.Pos { return s.Pos }

// StmtPos implements Stmt.
func (s *LetStmt) StmtPos() spec.Pos { return s.Pos }

// StmtPos implements Stmt.
func (s *DimStmt) StmtPos() spec.Pos { return s.Pos }

// StmtPos implements Stmt.
func (s *AssignStmt) StmtPos() spec.Pos { return s.Pos }

// StmtPos implements Stmt.
func (s *LayerStmt) StmtPos() spec.Pos { return s.Pos }

// StmtPos implements Stmt.
func (s *EntryStmt) StmtPos() spec.Pos { return s.Pos }

// StmtPos implements Stmt.
func (s *OptimStmt) StmtPos() spec.Pos { return s.Pos }

// ShapeDecl is a declared shape `[batch |] [input ->] output`. A nil row
// pointer means the kind was omitted (an empty row).
type ShapeDecl struct {
	Pos    spec.Pos
	Batch  *RowDecl
	Input  *RowDecl
	Output *RowDecl
	// Index is the bound of an index input, `BATCH | index N`: the tensor
	// holds int32 values in [0, N) that index an axis of size N through a
	// gather (`@@`); its shape is the batch row with no input or output
	// axes (Output is then an empty row). Nil for float tensors.
	Index *DimDecl
}

// RowDecl is one declared row: '?' (Unknown) or a list of dims (possibly empty).
type RowDecl struct {
	Pos     spec.Pos
	Unknown bool
	Dims    []DimDecl
}

// DimDecl is `INT[:basis]` or `NAME[:basis]`. A size written as a name
// (a Go model's package-level integer constant) has Name set and Size 0
// until the generator resolves it; shape inference rejects an unresolved
// name. `<=INT` (or `<=NAME`) is a number of rows chosen at run time, at
// most Size (docs/language.md, "Run-time batch sizes").
type DimDecl struct {
	Pos   spec.Pos
	Size  int
	Name  string // the size's name, "" for a literal
	Basis string // "" when not written (the default basis)
	Max   bool   // written <=Size
}

// InitKind tells how a declared tensor is initialized.
type InitKind int

// Init kinds.
const (
	// InitRange fills each cell with its row-major offset (memory order
	// batch, output, input).
	InitRange InitKind = iota
	// InitNumber fills every cell with Number.
	InitNumber
	// InitLiteral fills the cells from Literal, whose nesting also gives the shape.
	InitLiteral
	// InitDropout (`leaf NAME = dropout P`, what the model layer dropout
	// expands to in a loss entry) makes the leaf a dropout mask: each cell
	// is 0 with probability P and 1/(1-P) otherwise, drawn afresh at every
	// training step (rt.DropoutMask). Number holds P.
	InitDropout
)

// Init is an initializer.
type Init struct {
	Pos     spec.Pos
	Kind    InitKind
	Number  float64
	Literal *Literal
}

// Field is a parameter field `o=[16]`, `i=[2;3]` or `b=[4]`. Inside a
// layer a size may name a configuration argument (`o=[hidden]`): then
// Names[i] is that name and Dims[i] is 0. Names is nil when every size is
// a number.
type Field struct {
	Pos   spec.Pos
	Kind  byte // 'o', 'i' or 'b'
	Dims  []int
	Names []string
}

// Expr is an expression. Concrete types: *Ident, *Number, *Literal,
// *Unary, *Binary, *Pow, *Einsum, *Concat, *Slice, *Ternary,
// *InlineParam, *DimRef, and in models *Call and *Instance.
type Expr interface {
	ExprPos() spec.Pos
}

// Ident is a reference to a named tensor.
type Ident struct {
	Pos  spec.Pos
	Name string
}

// Number is a numeric constant: a scalar whose single axis is the
// claim-free broadcast unit.
type Number struct {
	Pos   spec.Pos
	Value float64
	Text  string
}

// LitKind is the axis kind a literal container introduces.
type LitKind int

// Literal container kinds.
const (
	// LitOutput is `[ a; b ]`.
	LitOutput LitKind = iota
	// LitInput is `( a, b )`.
	LitInput
	// LitBatch is `[| a; b |]`.
	LitBatch
)

// Literal is a tensor literal. Items are *Number for numeric cells, nested
// *Literal for higher rank, or arbitrary expressions (then the literal
// stacks them along a new axis of its kind).
type Literal struct {
	Pos   spec.Pos
	Kind  LitKind
	Items []Expr
}

// Unary is a function application `FUNC expr` (relu, exp, neg, ...).
// Unary minus on a non-numeric operand is parsed as Func "neg" (ops.Neg).
type Unary struct {
	Pos  spec.Pos
	Func string
	X    Expr
}

// Binary is an infix operation: "*" (compose / matmul), "*." (pointwise
// multiply), "/." (pointwise divide), "+", "-", and the comparisons
// "<", "=", "<>".
type Binary struct {
	Pos  spec.Pos // position of the operator
	Op   string
	X, Y Expr
}

// Pow is `expr **. NUMBER`.
type Pow struct {
	Pos spec.Pos
	X   Expr
	Exp float64
}

// Capture is one entry of a capture list `["h"; "d"]`.
type Capture struct {
	Pos  spec.Pos // position of the string literal's opening quote
	Name string
}

// Einsum is a spec-carrying operation:
// binary "+*", "@^+", "+++", "@@" (Y != nil) and unary "++", "@^^" (Y == nil).
// "@@" is the gather: Y is an index tensor whose values select positions
// of the one axis of X's slot that no other slot names.
type Einsum struct {
	Pos      spec.Pos // position of the operator
	Op       string
	Spec     string
	SpecPos  spec.Pos // position of the spec string's opening quote
	Captures []Capture
	X, Y     Expr
}

// Concat is `(e1, e2, ...) ++^ "spec" [captures]`.
type Concat struct {
	Pos      spec.Pos // position of the operator
	Operands []Expr
	Spec     string
	SpecPos  spec.Pos
	Captures []Capture
}

// Slice is `expr @| INT`: the leftmost batch axis taken at a static index.
type Slice struct {
	Pos   spec.Pos
	X     Expr
	Index int
}

// Ternary is `where c a b` or `fma a b c`.
type Ternary struct {
	Pos     spec.Pos
	Op      string // "where" or "fma"
	A, B, C Expr
}

// InlineParam is `{ NAME [= expr] { ; field } }`: a learnable parameter
// declared inline (OCANNL's `{ w }`, `{ b = 0.; o=[16] }`).
type InlineParam struct {
	Pos    spec.Pos
	Name   string
	Init   Expr // nil when absent; a *Number or *Literal in practice
	Fields []Field
}

// Call applies a layer: `NAME(args)` (an instance bound by `let`, or a
// layer applied as a fresh anonymous instance) or `LAYER[cfg](args)`.
// Callee is an *Ident or an *Instance.
type Call struct {
	Pos    spec.Pos
	Callee Expr
	Args   []Expr
}

// Instance is `LAYER[ arg, ... ]`: an instance of a layer with its
// configuration. As the whole right-hand side of a `let` it binds an
// instance; as a Call's callee it is an anonymous instance.
type Instance struct {
	Pos   spec.Pos
	Layer string
	Args  []ConfigArg
}

// ConfigArg is one configuration argument of an instance, positional
// (Name "") or named.
type ConfigArg struct {
	Pos   spec.Pos
	Name  string
	Value ConfigValue
}

// DimRef is `dim NAME`: a scalar holding a captured label's solved size.
type DimRef struct {
	Pos  spec.Pos
	Name string
}

// ExprPos implements Expr.
func (e *Ident) ExprPos() spec.Pos { return e.Pos }

// ExprPos implements Expr.
func (e *Number) ExprPos() spec.Pos { return e.Pos }

// ExprPos implements Expr.
func (e *Literal) ExprPos() spec.Pos { return e.Pos }

// ExprPos implements Expr.
func (e *Unary) ExprPos() spec.Pos { return e.Pos }

// ExprPos implements Expr.
func (e *Binary) ExprPos() spec.Pos { return e.Pos }

// ExprPos implements Expr.
func (e *Pow) ExprPos() spec.Pos { return e.Pos }

// ExprPos implements Expr.
func (e *Einsum) ExprPos() spec.Pos { return e.Pos }

// ExprPos implements Expr.
func (e *Concat) ExprPos() spec.Pos { return e.Pos }

// ExprPos implements Expr.
func (e *Slice) ExprPos() spec.Pos { return e.Pos }

// ExprPos implements Expr.
func (e *Ternary) ExprPos() spec.Pos { return e.Pos }

// ExprPos implements Expr.
func (e *InlineParam) ExprPos() spec.Pos { return e.Pos }

// ExprPos implements Expr.
func (e *DimRef) ExprPos() spec.Pos { return e.Pos }

// ExprPos implements Expr.
func (e *Call) ExprPos() spec.Pos { return e.Pos }

// ExprPos implements Expr.
func (e *Instance) ExprPos() spec.Pos { return e.Pos }

// Error is a syntax error at a position.
type Error struct {
	Pos spec.Pos
	// Msg is the message without the citations of Related positions.
	Msg string
	// Related are the other positions Msg cites (the opening bracket a
	// missing closing bracket belongs to).
	Related []spec.Related
}

// Error renders the error as LINE:COL: message, citing related
// positions as LINE:COL.
func (e *Error) Error() string { return e.Pos.String() + ": " + e.Message() }

// Message is the message with its citations, without the error's own
// position.
func (e *Error) Message() string { return spec.Cite(e.Msg, e.Related, spec.Pos.String) }
