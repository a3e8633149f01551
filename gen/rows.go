package gen

import (
	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/model"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// Run-time rows (docs/language.md, "Run-time batch sizes"): an entry
// whose inputs declare their leftmost batch axis `<=N` is inferred twice:
// as declared, where the rows axis is an axis of size N with a basis of
// its own (inference.BasisRows), to check the entry and size the
// method's arrays; and with one row, for the kernel the method calls on
// each of the first n rows.

// entryRows returns the bound of entry e's run-time rows axis, 0 when it
// has none.
func (ms *modelSrc) entryRows(e *model.Entry) (int, *Error) {
	rows := 0
	for _, in := range e.Inputs {
		if in.Shape == nil || in.Shape.Batch == nil {
			continue
		}
		for _, d := range in.Shape.Batch.Dims {
			if !d.Max {
				continue
			}
			if e.Loss {
				return 0, ms.errAt(d.Pos, "loss %s: run-time rows (<=%d) are supported in predictor entries only, not yet in a loss", e.Name, d.Size)
			}
			if rows != 0 && d.Size != rows {
				return 0, ms.errAt(d.Pos, "entry %s: every run-time rows axis of an entry has the same bound: <=%d here, <=%d before", e.Name, d.Size, rows)
			}
			rows = d.Size
		}
	}
	return rows, nil
}

// hasRows reports whether a shape's leftmost axis is a run-time rows axis.
func hasRows(s inference.Shape) bool {
	ds := s.Dims()
	return len(ds) > 0 && ds[0].Basis == inference.BasisRows
}

// rowsAxis returns the position of a shape's run-time rows axis in
// memory order, or -1.
func rowsAxis(s inference.Shape) int {
	for i, d := range s.Dims() {
		if d.Basis == inference.BasisRows {
			return i
		}
	}
	return -1
}

// checkRows checks that entry e (graph g, projections derived) computes
// its rows independently: the rows axis is the leftmost axis of every
// tensor carrying it, the result included, every operation indexes it one
// to one with a single iterator, none reduces it, no parameter has it and
// no dim counts it.
func (ms *modelSrc) checkRows(e *model.Entry, g *inference.Graph) *Error {
	at := func(p inference.Pos) program.Pos { return program.Pos{Line: p.Line, Col: p.Col} }
	for _, t := range g.Tensors {
		if t.Kind == inference.DimScalar && t.DimRows {
			return ms.errAt(at(t.Pos), "entry %s: dim %s counts the run-time rows (<=N): its value would be the bound, not the rows of a call; not supported", e.Name, t.DimName)
		}
		if a := rowsAxis(t.Shape); a > 0 {
			return ms.errAt(at(t.Pos), "entry %s: %s has the run-time rows axis at position %d of %s: it must stay the leftmost axis", e.Name, t.Name, a, t.Shape)
		}
	}
	for _, id := range e.Params {
		if t := model.Tensor(g, id); t >= 0 && rowsAxis(g.Tensors[t].Shape) >= 0 {
			return ms.errAt(e.ParamPos[id], "entry %s: parameter %s would have the run-time rows axis (%s)", e.Name, id, g.Tensors[t].Shape)
		}
	}
	for _, op := range g.Ops {
		lhs := hasRows(g.Tensors[op.LHS].Shape)
		it := -1
		if lhs && op.Proj != nil && len(op.Proj.LHS) > 0 && op.Proj.LHS[0].Kind == inference.IdxIter {
			it = op.Proj.LHS[0].Iter
		}
		for j, r := range op.RHS {
			if !hasRows(g.Tensors[r].Shape) {
				continue
			}
			if !lhs {
				return ms.errAt(at(op.Pos), "entry %s: %s reduces the run-time rows (<=N) of %s: rows must be computed independently (a mean over the batch, a batch norm: not supported)", e.Name, op.Desc, g.Tensors[r].Name)
			}
			if op.Proj == nil || j >= len(op.Proj.RHS) || len(op.Proj.RHS[j]) == 0 || it < 0 ||
				op.Proj.RHS[j][0].Kind != inference.IdxIter || op.Proj.RHS[j][0].Iter != it {
				return ms.errAt(at(op.Pos), "entry %s: %s does not read the run-time rows of %s one to one: rows must be computed independently", e.Name, op.Desc, g.Tensors[r].Name)
			}
		}
	}
	if t := model.Tensor(g, e.Result); t >= 0 && !hasRows(g.Tensors[t].Shape) {
		return ms.errAt(e.ResultPos, "entry %s: its result %s has no run-time rows axis (<=N) as its leftmost axis", e.Name, g.Tensors[t].Shape)
	}
	return nil
}

// rowsKernelGraph returns the graph to generate entry i's kernel from: g
// itself, or for an entry with run-time rows, checked by checkRows, the
// entry inferred with one row (projections derived); and the rows bound.
func (ms *modelSrc) rowsKernelGraph(inf *model.Inferred, i int, g *inference.Graph) (*inference.Graph, int, *Error) {
	e := inf.Entries[i]
	rows, err := ms.entryRows(e)
	if err != nil || rows == 0 {
		return g, 0, err
	}
	if err := ms.checkRows(e, g); err != nil {
		return nil, 0, err
	}
	kg, ierr := inf.InferOneRow(i)
	if ierr == nil {
		ierr = inference.DeriveProjections(kg)
		if ierr != nil {
			ierr = &model.EntryError{Entry: e.Name, Err: ierr}
		}
	}
	if ierr != nil {
		return nil, 0, ms.modelErr(ierr)
	}
	return kg, rows, nil
}
