package inference

import (
	"errors"
	"fmt"

	"github.com/ocannlgen/ocannlgen/spec"
)

// ErrorKind classifies an inference failure. The strings are a stable
// contract (`ocannlgen infer --json`).
type ErrorKind string

// Error kinds.
const (
	KindParse        ErrorKind = "parse"
	KindName         ErrorKind = "name"
	KindArity        ErrorKind = "arity"
	KindHiddenDim    ErrorKind = "hidden-dim"
	KindRankMismatch ErrorKind = "rank-mismatch"
	KindDimMismatch  ErrorKind = "dim-mismatch"
	KindBasis        ErrorKind = "basis-mismatch"
	KindStride       ErrorKind = "stride"
	KindRankCycle    ErrorKind = "rank-cycle"
	KindConcat       ErrorKind = "concat"
	KindFixedIndex   ErrorKind = "fixed-index"
	KindTotalElems   ErrorKind = "total-elems"
	// KindIndex is a misused index input or a malformed gather.
	KindIndex ErrorKind = "index"
	// KindSize: a tensor has more axes or cells than generated code can
	// hold (MaxAxes, MaxElems).
	KindSize ErrorKind = "size"
)

// Error is an inference failure with its position and provenance.
type Error struct {
	Kind ErrorKind
	// Msg is the human-readable message, without its position and
	// without the citations of Related positions (Detail and Error
	// insert those).
	Msg string
	// Pos is where the failing constraint came from (the operation, or the
	// declaration for closing errors). Zero when unknown.
	Pos spec.Pos
	// SpecCol is the 1-based column inside the spec string when the error
	// points into a spec; 0 otherwise.
	SpecCol int
	// Related are the other positions Msg cites (the opening bracket of
	// a syntax error), in the program source.
	Related []spec.Related
	// Op describes the operation that produced the failing constraint, e.g.
	// `compose "*" of w and x`.
	Op string
	// Err is the underlying error, if any (e.g. a spec syntax error).
	Err error
	// Param names the parameter a KindHiddenDim error is about ("" when
	// the error names none): read it instead of the message, which quotes
	// the name shortened when it is long.
	Param string
	// Operand details a rank mismatch caused by an operand of a spec
	// operation whose number of axes its slot does not allow; nil
	// otherwise.
	Operand *OperandRank
	// Conflict is the failing constraint with the provenance of its two
	// sides, when the solver or a closing stage failed on one; nil
	// otherwise.
	Conflict *Conflict

	// slot is the operand slot row of the failing constraint, if any.
	slot *slotRef
}

func (e *Error) Error() string {
	if e.Pos.Line > 0 {
		return fmt.Sprintf("%d:%d: %s", e.Pos.Line, e.Pos.Col, e.Detail())
	}
	return e.Detail()
}

// Detail is the message with its citations (rendered LINE:COL) and its
// provenance, without the error's own position.
func (e *Error) Detail() string {
	msg, rel := e.Uncited()
	return spec.Cite(msg, rel, spec.Pos.String)
}

// Uncited is Detail without the citations: the message with its
// provenance, and the related positions it cites (their offsets hold in
// it). Printers that render positions their own way (package gen) start
// from it.
func (e *Error) Uncited() (string, []spec.Related) {
	if e.Op != "" {
		return e.Msg + " (in " + e.Op + ")", e.Related
	}
	return e.Msg, e.Related
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// AsError returns err as an *Error if it is or wraps one.
func AsError(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// shapeError is raised inside the solver; the driver attaches provenance.
type shapeError struct {
	kind ErrorKind
	msg  string
}

func (e *shapeError) Error() string { return e.msg }

func fail(kind ErrorKind, format string, args ...any) *shapeError {
	return &shapeError{kind: kind, msg: fmt.Sprintf(format, args...)}
}
