package model

import (
	"fmt"
	"slices"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/ops"
	"github.com/ocannlgen/ocannlgen/spec"
)

// Run-time rows (docs/language.md, "Run-time batch sizes"): an entry
// whose inputs declare their leftmost batch axis `<=N` is inferred twice:
// as declared, where the rows axis is an axis of size N with a basis of
// its own (inference.BasisRows), to check the entry (checkRowsGraph) and
// size the method's arrays; with one row (InferOneRow), for the kernel
// the method calls on single rows; and with each block of rows of
// RowBlocks (InferRows), for the kernels the method calls on blocks of
// contiguous rows. Compile runs them all (kernelGraph, compileBlocks).

// errAt is an *Error at p.
func errAt(p spec.Pos, format string, args ...any) *Error {
	return &Error{Pos: p, Msg: fmt.Sprintf(format, args...)}
}

// rowsBound returns the bound of the entry's run-time rows axis, 0 when
// it has none; an *Error when two of its inputs' rows axes have different
// bounds.
func (e *Entry) rowsBound() (int, error) {
	rows := 0
	for _, in := range e.Inputs {
		if in.Shape == nil || in.Shape.Batch == nil {
			continue
		}
		for _, d := range in.Shape.Batch.Dims {
			if !d.Max {
				continue
			}
			if rows != 0 && d.Size != rows {
				return 0, errAt(d.Pos, "entry %s: every run-time rows axis of an entry has the same bound: <=%d here, <=%d before", e.Name, d.Size, rows)
			}
			rows = d.Size
		}
	}
	return rows, nil
}

// HasRows reports whether a shape's leftmost axis is a run-time rows axis.
func HasRows(s inference.Shape) bool {
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

// checkRowsGraph checks an entry with run-time rows on its graph g as
// declared, whose projections are derived: the entry must compute its
// rows independently (checkRows), and a loss must be a sum of per-row
// terms, possibly divided by a count of the rows (checkLossRows). It
// returns, for a loss, whether it divides by the number of rows (a mean),
// and an *Error positioned at what breaks the rules.
func (e *Entry) checkRowsGraph(g *inference.Graph) (mean bool, err error) {
	if err := e.checkRows(g); err != nil {
		return false, err
	}
	if !e.Loss {
		return false, nil
	}
	mean, lerr := e.checkLossRows(g)
	if lerr != nil {
		return false, lerr
	}
	return mean, nil
}

// checkRows checks that entry e (graph g, projections derived) computes
// its rows independently: the rows axis is the leftmost axis of every
// tensor carrying it, the result included, every operation indexes it one
// to one with a single iterator, none reduces it, no parameter has it and
// no dim counts it.
func (e *Entry) checkRows(g *inference.Graph) *Error {
	for _, t := range g.Tensors {
		if t.Kind == inference.DimScalar && t.DimRows && !e.Loss {
			return errAt(t.Pos, "entry %s: dim %s counts the run-time rows (<=N): its value would be the bound, not the rows of a call; not supported", e.Name, t.DimName)
		}
		if a := rowsAxis(t.Shape); a > 0 {
			return errAt(t.Pos, "entry %s: %s has the run-time rows axis at position %d of %s: it must stay the leftmost axis", e.Name, t.Name, a, t.Shape)
		}
	}
	for _, id := range e.Params {
		if t := Tensor(g, id); t >= 0 && rowsAxis(g.Tensors[t].Shape) >= 0 {
			return errAt(e.ParamPos[id], "entry %s: parameter %s would have the run-time rows axis (%s)", e.Name, id, g.Tensors[t].Shape)
		}
	}
	for _, op := range g.Ops {
		if e.Loss && op == lossReduction(g) {
			continue // checked by checkLossRows
		}
		lhs := HasRows(g.Tensors[op.LHS].Shape)
		it := -1
		if lhs && op.Proj != nil && len(op.Proj.LHS) > 0 && op.Proj.LHS[0].Kind == inference.IdxIter {
			it = op.Proj.LHS[0].Iter
		}
		for j, r := range op.RHS {
			if !HasRows(g.Tensors[r].Shape) {
				continue
			}
			if !lhs {
				return errAt(op.Pos, "entry %s: %s reduces the run-time rows (<=N) of %s: rows must be computed independently (a mean over the batch, a batch norm: not supported)", e.Name, op.Desc, g.Tensors[r].Name)
			}
			if op.Proj == nil || j >= len(op.Proj.RHS) || len(op.Proj.RHS[j]) == 0 || it < 0 ||
				op.Proj.RHS[j][0].Kind != inference.IdxIter || op.Proj.RHS[j][0].Iter != it {
				return errAt(op.Pos, "entry %s: %s does not read the run-time rows of %s one to one: rows must be computed independently", e.Name, op.Desc, g.Tensors[r].Name)
			}
		}
	}
	if e.Loss {
		return nil
	}
	if t := Tensor(g, e.Result); t >= 0 && !HasRows(g.Tensors[t].Shape) {
		return errAt(e.ResultPos, "entry %s: its result %s has no run-time rows axis (<=N) as its leftmost axis", e.Name, g.Tensors[t].Shape)
	}
	return nil
}

// lossReduction returns the first operation of g that reduces the
// run-time rows (an operand has them, the result not), or nil.
func lossReduction(g *inference.Graph) *inference.Op {
	for _, op := range g.Ops {
		if HasRows(g.Tensors[op.LHS].Shape) {
			continue
		}
		for _, r := range op.RHS {
			if HasRows(g.Tensors[r].Shape) {
				return op
			}
		}
	}
	return nil
}

// checkLossRows checks that a loss with run-time rows is a sum of per-row
// terms, possibly divided by a count of the rows: L(rows) = c * (sum over
// the rows of s_row) / dim b^k, k in {0, 1}, where dim b counts the rows
// (and possibly other batch axes). Then the loss on n rows is
// (sum of the one-row losses) / n^k, and its gradient likewise: the rows
// are reduced by exactly one operation, a sum (++), and every operation
// after it, up to the result, is a division by a dim counting the rows
// (at most once), a multiplication or division by a number, a negation or
// a copy, each of one value in a chain. It returns whether the loss
// divides by the rows (k = 1).
func (e *Entry) checkLossRows(g *inference.Graph) (bool, *Error) {
	red := lossReduction(g)
	if red == nil {
		return false, errAt(e.ResultPos, "loss %s: the loss does not sum over its run-time rows (<=N)", e.Name)
	}
	if red.Kind != inference.OpEinsum || red.Prim != ops.ID || red.Accum != ops.AccAdd || len(red.RHS) != 1 {
		return false, errAt(red.Pos, "loss %s: %s reduces the run-time rows (<=N) but is not a sum (++): a loss with run-time rows must be a sum of per-row terms, or their mean", e.Name, red.Desc)
	}
	result := Tensor(g, e.Result)
	cur, divided := red.LHS, false
	var divOp *inference.Op // the division by a dim counting the rows
	isConst := func(t int) bool {
		k := g.Tensors[t].Kind
		return k == inference.Number
	}
	for cur != result {
		var next *inference.Op
		for _, op := range g.Ops {
			if !slices.Contains(op.RHS, cur) {
				continue
			}
			if next != nil {
				return false, errAt(op.Pos, "loss %s: the sum over the run-time rows is used more than once (%s and %s): a loss with run-time rows must be a sum of per-row terms, or their mean", e.Name, next.Desc, op.Desc)
			}
			next = op
		}
		if next == nil {
			return false, errAt(e.ResultPos, "loss %s: the loss does not come from the sum over its run-time rows", e.Name)
		}
		ok := false
		if next.Kind == inference.OpPointwise {
			switch {
			case len(next.RHS) == 1 && (next.Prim == ops.Neg || next.Prim == ops.ID):
				ok = true
			case len(next.RHS) == 2 && next.RHS[0] == cur && next.Prim == ops.Div && g.Tensors[next.RHS[1]].Kind == inference.DimScalar && g.Tensors[next.RHS[1]].DimRows && !divided:
				ok, divided, divOp = true, true, next
			case len(next.RHS) == 2 && next.RHS[0] == cur && (next.Prim == ops.Div || next.Prim == ops.Mul) && isConst(next.RHS[1]),
				len(next.RHS) == 2 && next.RHS[1] == cur && next.Prim == ops.Mul && isConst(next.RHS[0]):
				ok = true
			}
		}
		if !ok {
			return false, errAt(next.Pos, "loss %s: %s after the sum over the run-time rows: only a division by a dim counting the rows, a product or quotient by a number, or a negation may follow it", e.Name, next.Desc)
		}
		cur = next.LHS
	}
	for _, t := range g.Tensors {
		if t.Kind == inference.DimScalar && t.DimRows {
			used := false
			for _, op := range g.Ops {
				if slices.Contains(op.RHS, t.ID) && op != divOp {
					used = true
				}
			}
			if used {
				return false, errAt(t.Pos, "loss %s: dim %s counts the run-time rows (<=N): it may only divide the sum over the rows", e.Name, t.DimName)
			}
		}
	}
	return divided, nil
}
