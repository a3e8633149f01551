package model

import (
	"errors"
	"fmt"
	"slices"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/spec"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// Inferred is a model after shape inference: one graph per entry, and
// each parameter's shape (the same in every entry that uses it).
type Inferred struct {
	*Model
	// Graphs[i] is the graph of Entries[i].
	Graphs []*inference.Graph
	// Shapes maps a parameter's identity to its shape.
	Shapes map[string]inference.Shape
}

// EntryError is an inference error inside one entry point.
type EntryError struct {
	Entry string
	Err   error // an *inference.Error
}

func (e *EntryError) Error() string { return fmt.Sprintf("entry %s: %v", e.Entry, e.Err) }

// Unwrap returns the inference error.
func (e *EntryError) Unwrap() error { return e.Err }

// Infer infers the shapes of every entry. Each entry is inferred as its
// own program, so its intermediate shapes are derived with fresh
// variables. A parameter an entry leaves undetermined (a hidden
// dimension error) takes the shape another entry inferred for it, so a
// predictor can rely on the loss for the output width. A parameter
// inferred differently by two entries is an error naming both.
func (m *Model) Infer() (*Inferred, error) {
	r := &Inferred{Model: m, Graphs: make([]*inference.Graph, len(m.Entries)), Shapes: map[string]inference.Shape{}}
	from := map[string]int{} // parameter -> entry that inferred it
	done := make([]bool, len(m.Entries))
	pinned := make([]map[string]bool, len(m.Entries))
	var firstErr error
	for progress := true; progress; {
		progress = false
		firstErr = nil
		for i, e := range m.Entries {
			if done[i] {
				continue
			}
			if pinned[i] == nil {
				pinned[i] = map[string]bool{}
			}
			g, err := inferPinned(e, r.Shapes, pinned[i])
			for err != nil {
				// A hidden dimension of a parameter another entry knows:
				// pin it and retry.
				id, ok := hiddenParam(err, e)
				if !ok || pinned[i][id] {
					break
				}
				if _, known := r.Shapes[id]; !known {
					break
				}
				pinned[i][id] = true
				g, err = inferPinned(e, r.Shapes, pinned[i])
			}
			if err != nil {
				if firstErr == nil {
					firstErr = &EntryError{Entry: e.Name, Err: err}
					if be := batchMismatch(e, r.Shapes, pinned[i], err); be != nil {
						firstErr = be
					} else if ae := argShapeError(e, err); ae != nil {
						firstErr = ae
					}
				}
				continue
			}
			for _, id := range e.Params {
				s := paramShape(g, id)
				if old, ok := r.Shapes[id]; ok && old.String() != s.String() {
					o := m.Entries[from[id]]
					m := new(spec.Message).Printf("parameter %s has shape %s in entry %s (used", id, s, e.Name).Cite(e.ParamPos[id], "use in entry "+e.Name).
						Printf(") but shape %s in entry %s (used", old, o.Name).Cite(o.ParamPos[id], "use in entry "+o.Name).Printf(")")
					msg, rel := m.Done()
					return nil, &Error{Pos: e.ParamPos[id], Msg: msg, Related: rel}
				}
				if _, ok := r.Shapes[id]; !ok {
					r.Shapes[id] = s
					from[id] = i
				}
			}
			r.Graphs[i], done[i], progress = g, true, true
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	if err := r.stateShapes(); err != nil {
		return nil, err
	}
	return r, nil
}

// stateShapes gives each running statistic's state parameter its
// statistic's shape (the loss entry does not read the state, so no entry
// may have inferred it; an evaluation entry that did must agree), and
// each update counter no axes (one cell).
func (r *Inferred) stateShapes() error {
	for i, e := range r.Model.Entries {
		for _, tr := range e.Tracks {
			s := r.Graphs[i].Tensors[Tensor(r.Graphs[i], tr.Stat)].Shape
			if old, ok := r.Shapes[tr.State]; ok && old.String() != s.String() {
				return &Error{Pos: e.Pos, Msg: fmt.Sprintf("running statistic %s has shape %s in entry %s, but its state %s has shape %s in another entry", tr.Stat, s, e.Name, tr.State, old)}
			}
			r.Shapes[tr.State] = s
		}
	}
	for _, p := range r.Model.Params {
		if p.Counter {
			r.Shapes[p.ID] = inference.Shape{} // a scalar, as PyTorch's
		}
	}
	return nil
}

// batchMismatch explains an entry's shape error caused by inputs
// declared with different batch sizes: when giving every input the first
// input's batch row makes the entry infer, the error names the two inputs
// and their batch sizes (rather than the tensors of an inlined layer where
// the sizes first met, such as train.hinge#1/scores), at the second
// input's batch row. It returns nil when that is not the cause.
func batchMismatch(e *Entry, shapes map[string]inference.Shape, pin map[string]bool, err error) *Error {
	var ie *inference.Error
	if !errors.As(err, &ie) || ie.Kind != inference.KindDimMismatch && ie.Kind != inference.KindRankMismatch || len(e.Inputs) < 2 {
		return nil
	}
	first := e.Inputs[0]
	var other *program.InputStmt
	for _, in := range e.Inputs[1:] {
		if rowText(in.Shape.Batch) != rowText(first.Shape.Batch) {
			other = in
			break
		}
	}
	if other == nil {
		return nil
	}
	saved := make([]*program.ShapeDecl, len(e.Inputs))
	for k, in := range e.Inputs {
		saved[k] = in.Shape
		sd := *in.Shape
		sd.Batch = first.Shape.Batch
		in.Shape = &sd
	}
	_, cerr := inferPinned(e, shapes, pin)
	for k, in := range e.Inputs {
		in.Shape = saved[k]
	}
	if cerr != nil {
		return nil
	}
	pos := other.Pos
	if other.Shape.Batch != nil {
		pos = other.Shape.Batch.Pos
	}
	m := new(spec.Message).Printf("input %s has batch size %s but input %s has batch size %s, and entry %s combines them",
		other.Name, batchText(other.Shape.Batch), first.Name, batchText(first.Shape.Batch), e.Name)
	if ie.Pos.Line > 0 {
		m.Printf(" (").Cite(ie.Pos, "the operation combining them").Printf(")")
	}
	msg, rel := m.Printf("; declare the same batch size for both").Done()
	return &Error{Pos: pos, Msg: msg, Related: rel}
}

// batchText describes a declared batch row for messages.
func batchText(r *program.RowDecl) string {
	if t := rowText(r); t != "" {
		return t
	}
	return "none (no batch row)"
}

// hiddenParam reports the parameter a hidden-dimension error is about.
func hiddenParam(err error, e *Entry) (string, bool) {
	var ie *inference.Error
	if !errors.As(err, &ie) || ie.Kind != inference.KindHiddenDim {
		return "", false
	}
	if ie.Param != "" && slices.Contains(e.Params, ie.Param) {
		return ie.Param, true
	}
	return "", false
}

// inferPinned infers e's program with the parameters in pin given the
// shapes in shapes (as explicit fields).
func inferPinned(e *Entry, shapes map[string]inference.Shape, pin map[string]bool) (*inference.Graph, error) {
	nodes := e.paramNodes()
	saved := map[*program.InlineParam][]program.Field{}
	for id := range pin {
		n := nodes[id]
		if n == nil {
			continue
		}
		saved[n] = n.Fields
		s := shapes[id]
		n.Fields = []program.Field{field('b', s.Batch, n.Pos), field('i', s.Input, n.Pos), field('o', s.Output, n.Pos)}
	}
	defer func() {
		for n, f := range saved {
			n.Fields = f
		}
	}()
	return inference.Infer(e.Prog)
}

func field(k byte, ds []inference.Dim, p spec.Pos) program.Field {
	f := program.Field{Pos: p, Kind: k, Dims: []int{}}
	for _, d := range ds {
		f.Dims = append(f.Dims, d.Size)
	}
	return f
}

// paramNodes finds the inline parameter node declaring each parameter.
func (e *Entry) paramNodes() map[string]*program.InlineParam {
	out := map[string]*program.InlineParam{}
	for _, s := range e.Prog.Stmts {
		l, ok := s.(*program.LetStmt)
		if !ok {
			continue
		}
		program.Inspect(l.Expr, func(x program.Expr) bool {
			if ip, ok := x.(*program.InlineParam); ok {
				if _, seen := out[ip.Name]; !seen {
					out[ip.Name] = ip
				}
			}
			return true
		})
	}
	return out
}

// paramShape returns the shape of the tensor named id in g.
func paramShape(g *inference.Graph, id string) inference.Shape {
	if t := Tensor(g, id); t >= 0 {
		return g.Tensors[t].Shape
	}
	return inference.Shape{}
}

// Tensor returns the id of the tensor named name in g, or -1.
func Tensor(g *inference.Graph, name string) int {
	t := -1
	for _, n := range g.Named {
		if n.Name == name {
			t = n.Tensor
		}
	}
	return t
}

// InferOneRow infers entry i's program with every run-time rows axis of
// its inputs (`<=N`, program.DimDecl.Max) declared as a single row, and
// its parameters pinned to their inferred shapes: the graph of the kernel
// that computes one row of an entry with run-time rows (docs/language.md,
// "Run-time batch sizes").
func (r *Inferred) InferOneRow(i int) (*inference.Graph, error) {
	return r.InferRows(i, 1)
}

// InferRows is InferOneRow with rows rows (1 <= rows <= N) instead of
// one: the graph of the kernel that computes a block of rows contiguous
// rows at once.
func (r *Inferred) InferRows(i, rows int) (*inference.Graph, error) {
	e := r.Entries[i]
	var changed []*program.DimDecl
	for _, in := range e.Inputs {
		if in.Shape == nil || in.Shape.Batch == nil {
			continue
		}
		for k := range in.Shape.Batch.Dims {
			if d := &in.Shape.Batch.Dims[k]; d.Max {
				changed = append(changed, d)
			}
		}
	}
	sizes := make([]int, len(changed))
	for k, d := range changed {
		sizes[k] = d.Size
		d.Size, d.Max = rows, false
	}
	defer func() {
		for k, d := range changed {
			d.Size, d.Max = sizes[k], true
		}
	}()
	pin := map[string]bool{}
	for _, id := range e.Params {
		if _, ok := r.Shapes[id]; ok {
			pin[id] = true
		}
	}
	g, err := inferPinned(e, r.Shapes, pin)
	if err != nil {
		return nil, &EntryError{Entry: e.Name, Err: err}
	}
	return g, nil
}
