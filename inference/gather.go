package inference

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ocannlgen/ocannlgen/spec"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// Index inputs and the gather (docs/design.md, "Index inputs and the
// gather"). An index input `ids : B | index N` is a tensor of shape `B |`
// whose int32 cells are positions in [0, N). It is read only by a gather
// `x @@ "spec" ids`: an einsum whose one label of x's slot that no other
// slot names (the gathered label) is not iterated; its position is the
// value of ids at the point. Shape inference treats the gather as the
// einsum it would be with that label summed, plus one equation: the
// gathered label's size is N. Projections pin the gathered axis like a
// fixed index and then replace the pin by an IdxData index.

// setIndexBound records an index input's bound and rejects initializers
// (an index input is data, filled by the caller).
func (b *builder) setIndexBound(t *Tensor, st *program.InputStmt) error {
	d := st.Shape.Index
	if d == nil {
		return nil
	}
	if d.Name != "" && d.Size == 0 {
		return errAt(KindName, d.Pos, "the bound %s of index input %s is not a number: write an integer literal (a Go model may also name a package-level integer constant)", d.Name, t.Name)
	}
	if d.Size <= 0 {
		return errAt(KindIndex, d.Pos, "index input %s: the bound must be positive (the size of the axis its values select), not %d", t.Name, d.Size)
	}
	if d.Size > 1<<31-1 {
		return errAt(KindIndex, d.Pos, "index input %s: the bound %d does not fit an int32", t.Name, d.Size)
	}
	if st.Init != nil {
		return errAt(KindIndex, st.Pos, "index input %s cannot have an initializer: its positions are given by the caller", t.Name)
	}
	t.IndexBound = d.Size
	return nil
}

// checkIndexOperands rejects an index input where a float tensor is
// needed: anywhere but as the last operand of a gather, and as an
// assignment's target.
func (b *builder) checkIndexOperands(op *Op) error {
	if op.Assign {
		if t := b.g.Tensors[op.LHS]; t.IndexBound > 0 {
			return &Error{Kind: KindIndex, Pos: op.Pos, Op: op.Desc,
				Msg: fmt.Sprintf("%s is an index input and cannot be assigned to: its positions are given by the caller", t.Name)}
		}
	}
	for i, r := range op.RHS {
		t := b.g.Tensors[r]
		isIdx := op.Kind == OpGather && i == len(op.RHS)-1
		switch {
		case t.IndexBound > 0 && !isIdx:
			return &Error{Kind: KindIndex, Pos: op.Pos, Op: op.Desc,
				Msg: fmt.Sprintf("%s is an index input (int32 positions in [0, %d)), used here where a float tensor is needed: an index input only selects positions, as the last operand of a gather x @@ \"spec\" %s", t.Name, t.IndexBound, t.Name)}
		case isIdx && t.IndexBound == 0:
			return &Error{Kind: KindIndex, Pos: op.Pos, Op: op.Desc,
				Msg: fmt.Sprintf("the last operand of a gather must be an index input (declared input NAME : BATCH | index N), but %s is a float tensor", t.Name)}
		}
	}
	return nil
}

// slotNames lists a slot's labels with their spec columns, and its row
// variables.
func slotNames(sl *spec.Slot) (labels []labelRef, rowVars []string) {
	for k := range 3 {
		r := sl.Rows[k]
		if r.HasVar {
			rowVars = append(rowVars, r.Var)
		}
		for _, ax := range r.Axes() {
			labels = append(labels, axisLabels(ax)...)
		}
	}
	return labels, rowVars
}

// gatherError is a KindIndex error at column col of op's spec.
func gatherError(op *Op, col int, format string, args ...any) error {
	p := op.SpecPos
	p.Col += col - 1
	return &Error{Kind: KindIndex, Pos: p, SpecCol: col, Op: op.Desc, Msg: fmt.Sprintf(format, args...)}
}

// gatherBound checks a gather's spec and equates its gathered label's size
// with the index input's bound.
func (b *builder) gatherBound(op *Op, env *specEnv) error {
	sp := op.Spec
	ids := b.g.Tensors[op.RHS[1]]
	xl, xr := slotNames(&sp.RHS[0])
	il, ir := slotNames(&sp.RHS[1])
	ll, lr := slotNames(&sp.LHS)
	has := func(refs []labelRef, name string) bool {
		return slices.ContainsFunc(refs, func(r labelRef) bool { return r.name == name })
	}
	for _, v := range ir {
		if !slices.Contains(lr, v) {
			return gatherError(op, sp.RHS[1].Col, "in gather %s, the index slot's row variable ..%s.. must appear in the result: a gather keeps every position of its index input", spec.Quote(op.SpecSrc), v)
		}
	}
	for _, l := range il {
		if !has(ll, l.name) {
			return gatherError(op, l.col, "in gather %s, the index slot's label %s must appear in the result: a gather keeps every position of its index input", spec.Quote(op.SpecSrc), spec.Quote(l.name))
		}
	}
	for _, v := range xr {
		if !slices.Contains(lr, v) && !slices.Contains(ir, v) {
			return gatherError(op, sp.RHS[0].Col, "in gather %s, the row variable ..%s.. of the gathered operand appears in no other slot: a gather selects one axis and sums over none", spec.Quote(op.SpecSrc), v)
		}
	}
	var free []labelRef
	for _, l := range xl {
		if !has(ll, l.name) && !has(il, l.name) && !has(free, l.name) {
			free = append(free, l)
		}
	}
	switch {
	case len(free) == 0:
		return gatherError(op, sp.RHS[0].Col, "gather %s has no gathered axis: the first slot must have exactly one label that neither the index slot nor the result names (the axis the index input selects)", spec.Quote(op.SpecSrc))
	case len(free) > 1:
		names := make([]string, len(free))
		for i, f := range free {
			names[i] = spec.Quote(f.name)
		}
		return gatherError(op, free[1].col, "gather %s has more than one gathered axis (%s): exactly one label of the first slot may be missing from the index slot and the result, the axis the index input selects; a gather sums over nothing", spec.Quote(op.SpecSrc), strings.Join(names, ", "))
	}
	k := free[0]
	if n := countPlainLabel(&sp.RHS[0], k.name); n != 1 {
		return gatherError(op, k.col, "in gather %s, the gathered label %s must be one plain axis of the first slot (not part of a stride, convolution or concatenation, and not repeated)", spec.Quote(op.SpecSrc), spec.Quote(k.name))
	}
	op.GatherLabel = k.name
	o := b.s.addOrigin(origin{op: fmt.Sprintf("%s: %s is an index input with bound %d", op.Desc, ids.Name, ids.IndexBound), pos: op.Pos})
	b.s.push(constraint{k: cDimEq, d1: env.labels[k.name], d2: dconst(ids.IndexBound, BasisDefault), origin: o})
	return nil
}

// countPlainLabel counts the plain axes labelled name in a slot, or -1 when
// the label also occurs inside a compound axis.
func countPlainLabel(sl *spec.Slot, name string) int {
	n := 0
	for k := range 3 {
		for _, ax := range sl.Rows[k].Axes() {
			if ax.Kind == spec.AxisLabel {
				if ax.Label == name {
					n++
				}
				continue
			}
			for _, l := range axisLabels(ax) {
				if l.name == name {
					return -1
				}
			}
		}
	}
	return n
}

// gatherPin pins the node of a gather's gathered axis (occurrence slot 1,
// the first operand) so that it gets no iterator, and records the axis.
func (p *projProblem) gatherPin() error {
	op := p.op
	sl := &op.Spec.RHS[0]
	for k := range 3 {
		r := sl.Rows[k]
		nodes := p.rowAll(1, spec.Kind(k))
		ne := len(r.End)
		find := func(axes []spec.Axis, at func(i int) int) (int, bool) {
			for i, ax := range axes {
				if ax.Kind == spec.AxisLabel && ax.Label == op.GatherLabel {
					return at(i), true
				}
			}
			return 0, false
		}
		pos, ok := find(r.Beg, func(i int) int { return i })
		if !ok {
			pos, ok = find(r.End, func(i int) int { return len(nodes) - ne + i })
		}
		if !ok {
			continue
		}
		node := nodes[pos]
		op.GatherAxis = slices.Index(p.occ[1], node)
		p.eqs = append(p.eqs, peq{k: peqPin, a: node, val: 0})
		return nil
	}
	return projErr(op, "gather: the gathered label %s is not an axis of the first operand", op.GatherLabel)
}

// gatherIndex replaces the pinned gathered axis of a gather's first
// operand by the IdxData index reading the index input.
func gatherIndex(op *Op, proj *Projections) {
	data := slices.Clone(proj.RHS[1])
	proj.RHS[0][op.GatherAxis] = Index{Kind: IdxData, Data: op.RHS[1], DataIndex: data}
}

// ShapeText is the tensor's shape as a declaration writes it: the shape,
// and for an index input its bound (`8, 128 | index 256`).
func (t *Tensor) ShapeText() string {
	if t.IndexBound > 0 {
		return strings.TrimSpace(t.Shape.String()) + " index " + fmt.Sprint(t.IndexBound)
	}
	return t.Shape.String()
}
