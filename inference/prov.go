package inference

import (
	"fmt"
	"strings"

	"github.com/ocannlgen/ocannlgen/spec"
)

// This file reads back where each inferred size came from: the solver
// records, for every variable it binds, the term it bound it to (before
// path compression), the origin of the constraint that bound it and the
// stage that was running (bindDim, bindRow). A tensor's axis is a chain
// of such bindings ending in its size; its provenance is that chain.

// Step is one binding on the way from a tensor's row or axis to its
// value: which stage of inference made it, and the operation (or
// declaration, or closing rule) whose constraint made it.
type Step struct {
	// Stage is the name of the stage that made the binding (Stages):
	// "elaborate" for the online solving of the operations' constraints,
	// a closing stage ("stage4", ...) for a commitment of the closing
	// policy.
	Stage string
	// Op describes the operation, declaration or closing rule the
	// binding constraint came from (e.g. `compose "*" of w1 and x`).
	Op string
	// Pos is its position in the program source (zero when unknown);
	// SpecCol the 1-based column inside its spec string (0: none).
	Pos     spec.Pos
	SpecCol int
	// Value is what the variable was bound to, as the solver dump prints
	// terms: a size ("16"), a label ("k"), another axis ("?12"), a row.
	Value string
	// Final reports that Value is the end of the chain (a size, an
	// affine or concatenation term of sizes, a closed row).
	Final bool
}

// String renders the step as "= VALUE by OP at LINE:COL (STAGE)".
func (st Step) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "= %s by %s", st.Value, st.Op)
	if st.Pos.Line > 0 {
		fmt.Fprintf(&b, " at %d:%d", st.Pos.Line, st.Pos.Col)
		if st.SpecCol > 0 {
			fmt.Fprintf(&b, " (spec column %d)", st.SpecCol)
		}
	}
	fmt.Fprintf(&b, " [%s]", st.Stage)
	return b.String()
}

// AxisProv is the provenance of one axis of a row: its spec label (the
// first label along its chain; "" when none names it) and the bindings
// from the axis as the tensor was created to its size. No steps: the
// axis was given its size when it was created (a declaration or a
// literal).
type AxisProv struct {
	Label string
	Steps []Step
	// Given is the declaration or operation that created the axis with
	// its size, when it had one from the start ("" otherwise).
	Given string
}

// Fixed is the step that gave the axis its size (the last one), or
// false when the axis had it from the start.
func (a AxisProv) Fixed() (Step, bool) {
	if len(a.Steps) == 0 {
		return Step{}, false
	}
	return a.Steps[len(a.Steps)-1], true
}

// RowProv is the provenance of one row of a tensor: the bindings that
// fixed its number of axes (none: the row was closed when the tensor was
// created), and each axis's provenance in the row's order.
type RowProv struct {
	Steps []Step
	Axes  []AxisProv
}

// Provenance is the provenance of tensor id's three rows (batch, input,
// output), or false when g was not made by shape inference or id is out
// of range. It is computed on demand from the solver's record.
func (g *Graph) Provenance(id int) ([3]RowProv, bool) {
	var out [3]RowProv
	if g == nil || g.prov == nil || id < 0 || id >= len(g.Tensors) {
		return out, false
	}
	t := g.Tensors[id]
	for k := range 3 {
		out[k] = g.prov.row(t.rows[k])
	}
	return out, true
}

// provSource reads the solver's record of bindings.
type provSource struct {
	s      *solver
	stages []string
}

func (p *provSource) step(by int32, stage int8, value string, final bool) Step {
	s := p.s
	st := Step{Value: value, Final: final}
	if int(stage) < len(p.stages) {
		st.Stage = p.stages[stage]
	}
	if by >= 0 && int(by) < len(s.origins) {
		o := s.origins[by]
		st.Op, st.Pos, st.SpecCol = o.op, o.pos, o.specCol
	}
	return st
}

// dim follows d's chain of bindings.
func (p *provSource) dim(d dim) AxisProv {
	s := p.s
	var a AxisProv
	for n := 0; d.k == dVar && n < len(s.dims)+1; n++ {
		e := &s.dims[d.v]
		if a.Label == "" && e.name != "" {
			a.Label = e.name
		}
		if !e.solved {
			break
		}
		final := e.bound.k != dVar && e.via < 0
		a.Steps = append(a.Steps, p.step(e.by, e.stage, p.term(e.bound), final))
		d = e.bound
		if e.via >= 0 && (d.k != dVar || d.v != e.via) {
			// The value was copied from another axis: go on from there.
			d = dvar(e.via)
		}
	}
	return a
}

// term prints a bound term: a size, or the dump's name of a variable.
func (p *provSource) term(d dim) string {
	s := p.s
	switch d.k {
	case dVar:
		if n := s.dims[d.v].name; n != "" {
			return n
		}
		return fmt.Sprintf("?%d", d.v)
	case dConst:
		return p.sizeText(d)
	}
	return s.dimString(s.resolve(d))
}

func (p *provSource) sizeText(d dim) string {
	switch d.basis {
	case BasisDefault, BasisBcast:
		if d.basis == BasisBcast {
			return "1 (broadcast)"
		}
		return fmt.Sprint(d.n)
	}
	return fmt.Sprintf("%d:%s", d.n, d.basis)
}

// row follows r's chain of row bindings, collecting the axes each link
// adds (in the order resolveRow assembles them).
func (p *provSource) row(r row) RowProv {
	s := p.s
	var out RowProv
	var beg, end []AxisProv
	add := func(r row) {
		for _, d := range r.beg {
			beg = append(beg, p.axis(d))
		}
		var e []AxisProv
		for _, d := range r.end {
			e = append(e, p.axis(d))
		}
		end = append(e, end...)
	}
	add(r)
	for n := 0; r.open() && n < len(s.rows)+1; n++ {
		e := &s.rows[r.v]
		if !e.solved {
			break
		}
		out.Steps = append(out.Steps, p.step(e.by, e.stage, p.rowText(e.bound), !e.bound.open()))
		r = e.bound
		add(r)
	}
	out.Axes = append(beg, end...)
	return out
}

// axis is the provenance of one axis term of a row.
func (p *provSource) axis(d dim) AxisProv {
	if d.k == dVar {
		return p.dim(d)
	}
	return AxisProv{Given: p.term(d)}
}

// rowText prints a bound row: its axes as bound (variables by name) and
// the open rest as "..".
func (p *provSource) rowText(r row) string {
	var parts []string
	for _, d := range r.beg {
		parts = append(parts, p.term(d))
	}
	if r.open() {
		parts = append(parts, "..")
	}
	for _, d := range r.end {
		parts = append(parts, p.term(d))
	}
	n := r.flanks()
	axes := "axes"
	if n == 1 {
		axes = "axis"
	}
	if r.open() {
		return fmt.Sprintf("[%s] (at least %d %s)", strings.Join(parts, ", "), n, axes)
	}
	return fmt.Sprintf("[%s] (%d %s)", strings.Join(parts, ", "), n, axes)
}

// Conflict is a failing constraint and its two sides, each with its
// provenance: what the error page of `ocannlgen explain` shows.
type Conflict struct {
	// Constraint is the constraint as the solver dump prints it
	// (`[a, 3] = [a, 4]` for rows, `⊑` for a broadcast inequality).
	Constraint string
	// Relation is "=" (equality) or "⊑" (the result side broadcasts from
	// the operand side).
	Relation string
	// Sides are the left (result) and right (operand) sides.
	Sides [2]Side
}

// Side is one side of a failing constraint: its term as far as it was
// solved, and the provenance of its row (a row constraint) or its axis
// (a dimension constraint: Row.Axes holds the one axis).
type Side struct {
	Text string
	Row  RowProv
}

// conflictOf describes constraint c for an error.
func (s *solver) conflictOf(c constraint) *Conflict {
	p := &provSource{s: s, stages: Stages()}
	cf := &Conflict{Relation: "="}
	switch c.k {
	case cDimEq, cDimIneq:
		if c.k == cDimIneq {
			cf.Relation = "⊑"
		}
		for i, d := range [2]dim{c.d1, c.d2} {
			cf.Sides[i] = Side{Text: s.dimString(s.resolve(d)), Row: RowProv{Axes: []AxisProv{p.axis(d)}}}
		}
	case cRowEq, cRowIneq:
		if c.k == cRowIneq {
			cf.Relation = "⊑"
		}
		for i, r := range [2]row{c.r1, c.r2} {
			cf.Sides[i] = Side{Text: s.rowString(r), Row: p.row(r)}
		}
	case cAtLeast:
		cf.Relation = "≥"
		cf.Sides[0] = Side{Text: s.dimString(s.resolve(c.d1)), Row: RowProv{Axes: []AxisProv{p.axis(c.d1)}}}
		cf.Sides[1] = Side{Text: fmt.Sprint(c.n)}
	case cTotal:
		cf.Relation = "elements ="
		cf.Sides[0] = Side{Text: s.rowString(c.r1), Row: p.row(c.r1)}
		cf.Sides[1] = Side{Text: fmt.Sprint(c.n)}
	case cProduct:
		cf.Relation = "= elements of"
		cf.Sides[0] = Side{Text: s.dimString(s.resolve(c.d1)), Row: RowProv{Axes: []AxisProv{p.axis(c.d1)}}}
		cf.Sides[1] = Side{Text: s.rowString(c.r1), Row: p.row(c.r1)}
	default:
		return nil
	}
	cf.Constraint = cf.Sides[0].Text + " " + cf.Relation + " " + cf.Sides[1].Text
	return cf
}
