package inference

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ocannlgen/ocannlgen/spec"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// OperandRank details a rank-mismatch error whose cause is an operand of
// a spec operation (an einsum or a concatenation) with a number of axes
// in one row that its slot in the spec does not allow (a convolution's
// "... | oh, ow, ..ic.." applied to a tensor with one output axis). The
// solver's own message names row variables; package model uses this to
// explain the error in terms of the layer whose argument the operand is.
type OperandRank struct {
	// Node is the operation's expression in the program: the
	// *program.Einsum or *program.Concat that Infer was given.
	Node program.Expr
	// Arg is the operand's index among the operation's operands (0-based).
	Arg int
	// Row is the row whose number of axes the slot does not allow.
	Row spec.Kind
	// Slot is the operand's slot in the operation's spec.
	Slot spec.Slot
	// Operand is the operand's tensor name, and Shape its shape as far as
	// inference had solved it when it failed.
	Operand string
	Shape   PartialShape
	// ShapeOf returns the shape of the tensor named name as far as
	// inference had solved it when it failed (false for an unknown name).
	ShapeOf func(name string) (PartialShape, bool)
}

// Wants describes the operand's slot for messages, the labels of the
// spec standing for its axes: a strided or convolution axis is written
// with the label of its output position (`1*oh=+kh` as oh), a row
// variable as written (`...`, `..ic..`), an empty batch or input row
// omitted: "... | oh, ow, ..ic..".
func (o *OperandRank) Wants() string {
	var rows [3]string
	for k := range o.Slot.Rows {
		r := &o.Slot.Rows[k]
		var items []string
		for _, a := range r.Beg {
			items = append(items, axisText(a))
		}
		if r.HasVar {
			if r.Ellipsis {
				items = append(items, "...")
			} else {
				items = append(items, ".."+r.Var+"..")
			}
		}
		for _, a := range r.End {
			items = append(items, axisText(a))
		}
		rows[k] = strings.Join(items, ", ")
	}
	return joinRows(rows)
}

// WantsCount says how many axes the slot allows in the failing row:
// "at least 2 output axes", "1 batch axis", "no input axes".
func (o *OperandRank) WantsCount() string {
	r := &o.Slot.Rows[o.Row]
	return countText(len(r.Beg)+len(r.End), r.HasVar, o.Row)
}

// fits reports whether a row of n axes (open: n axes and possibly more)
// can match the slot's row r by its number of axes.
func fits(r *spec.Row, n int, open bool) bool {
	m := len(r.Beg) + len(r.End)
	switch {
	case r.HasVar && open:
		return true
	case r.HasVar:
		return n >= m
	case open:
		return n <= m
	}
	return n == m
}

// Fits reports whether a tensor of shape p could match the operand's slot
// by its number of axes in the failing row.
func (o *OperandRank) Fits(p PartialShape) bool {
	n, open := p.Axes(o.Row)
	return fits(&o.Slot.Rows[o.Row], n, open)
}

func axisText(a spec.Axis) string {
	if a.Kind == spec.AxisAffine && a.Affine != nil {
		return a.Affine.Over
	}
	return a.String()
}

// joinRows joins printed rows as a shape is written, omitting an empty
// batch or input row.
func joinRows(rows [3]string) string {
	out := rows[spec.Output]
	if rows[spec.Input] != "" {
		out = rows[spec.Input] + " -> " + out
	}
	if rows[spec.Batch] != "" {
		out = rows[spec.Batch] + " | " + out
	}
	if out == "" {
		return "[]"
	}
	return out
}

// countText writes a number of axes of a row: "1 output axis", "at
// least 2 output axes", "no input axes".
func countText(n int, atLeast bool, k spec.Kind) string {
	var s string
	switch {
	case atLeast && n == 0:
		return fmt.Sprintf("any number of %s axes", k)
	case n == 0:
		return fmt.Sprintf("no %s axes", k)
	case n == 1:
		s = fmt.Sprintf("1 %s axis", k)
	default:
		s = fmt.Sprintf("%d %s axes", n, k)
	}
	if atLeast {
		s = "at least " + s
	}
	return s
}

// PartialShape is a tensor's shape as far as inference has solved it: a
// row may still be open (it can gain axes where its row variable stands)
// and an axis's size may be unknown.
type PartialShape struct {
	rows [3]partialRow
}

type partialRow struct {
	beg, end []string
	open     bool
}

// Axes returns the number of known axes of row k, and whether the row is
// still open (may have more).
func (p PartialShape) Axes(k spec.Kind) (n int, open bool) {
	r := p.rows[k]
	return len(r.beg) + len(r.end), r.open
}

// Count says how many axes row k has: "1 output axis", "at least 2 batch
// axes" (an open row), "no input axes".
func (p PartialShape) Count(k spec.Kind) string {
	n, open := p.Axes(k)
	return countText(n, open, k)
}

// String prints the shape in the declaration syntax, `batch | input ->
// output` with empty batch and input rows omitted, as Shape does; an
// unknown size prints as "?" and the axes an open row may still gain as
// "...".
func (p PartialShape) String() string {
	var rows [3]string
	for k, r := range p.rows {
		items := append([]string{}, r.beg...)
		if r.open {
			items = append(items, "...")
		}
		rows[k] = strings.Join(append(items, r.end...), ",")
	}
	return joinRows(rows)
}

// partialShape reads t's rows as far as the solver has solved them.
func (b *builder) partialShape(t *Tensor) PartialShape {
	var p PartialShape
	conflict := b.s.conflict
	for k := range 3 {
		r := b.s.resolveRow(t.rows[k])
		text := func(ds []dim) []string {
			out := []string{}
			for _, d := range ds {
				d = b.s.resolve(d)
				if d.k == dConst {
					out = append(out, formatConst(d.n, d.basis))
				} else {
					out = append(out, "?")
				}
			}
			return out
		}
		p.rows[k] = partialRow{beg: text(r.beg), end: text(r.end), open: r.open()}
	}
	// resolve may record a basis conflict while simplifying a term; the
	// error being explained is the one to report.
	b.s.conflict = conflict
	return p
}

// slotRef identifies the row of an operand's slot that a constraint
// equates with the operand's row (see OperandRank).
type slotRef struct {
	node program.Expr
	arg  int
	row  spec.Kind
	slot *spec.Slot
	// tensor is the operand.
	tensor int
}

// explainOperand fills err's Operand when err is a rank mismatch raised
// by the equation of an operand's row with its slot's row and the
// operand, as far as solved, has a number of axes the slot does not
// allow. It returns err.
func (b *builder) explainOperand(err error) error {
	var e *Error
	if !errors.As(err, &e) || e.slot == nil || e.Kind != KindRankMismatch {
		return err
	}
	ref := e.slot
	t := b.g.Tensors[ref.tensor]
	o := &OperandRank{Node: ref.node, Arg: ref.arg, Row: ref.row, Slot: *ref.slot, Operand: t.Name, Shape: b.partialShape(t)}
	if o.Fits(o.Shape) {
		return err
	}
	o.ShapeOf = func(name string) (PartialShape, bool) {
		id, ok := b.names[name]
		if !ok {
			return PartialShape{}, false
		}
		return b.partialShape(b.g.Tensors[id]), true
	}
	e.Operand = o
	return err
}
