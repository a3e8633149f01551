package inference

import (
	"fmt"

	"github.com/ocannlgen/ocannlgen/spec"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// The closing policy (seed document 1, "The closing policy"; formal core
// Def. 6.1), staged as in OCANNL (digest §3.3) so that every commitment
// happens only after bounds have propagated to a fixpoint:
//
//	stage  dimension variables              row variables
//	1      (online, per operation: unify and propagate only)
//	3      -                                leaf row vars fixed by a lone Total_elems n
//	                                        -> one axis [n]; leaf row vars with caps ->
//	                                        the join of their caps (closed caps first)
//	4      leaf dims with a cap -> the cap  leaf row vars without caps -> empty
//	                                        (a parameter's contracted row: error)
//	5      leaf dims without a cap -> 1_∅ (0 if discardable, m for a fixed-index
//	       bound m); parameters: "forgot to specify the hidden dimension",
//	       unless something closing later still feeds the axis
//	       (fedByInterior): then stage 7 judges it
//	6      -                                interior row vars -> empty; then stages 3-5
//	                                        again for the leaves that waited for them
//	7      interiors close downward: 1_∅, 0 if discardable, m for a
//	       fixed-index bound m > 1 (its cap if it has one); parameters last
//
// A leaf tied by a deferred row constraint to a still-open interior row
// (rowFedByInterior, dimFedByInterior) waits at stages 3-5 for that
// interior to close at stage 6. After each commitment the solver re-runs
// to a fixpoint, so committed values propagate before the next commitment.
//
// Each stage is a named value (closeStages) whose state can be printed
// after it runs (InferObserved, `ocannlgen infer --dump=STAGE`):
// "settle" (solve to a fixpoint, check dim captures, close unused
// parameters), "stage3", "stage4", "stage5" (leaves that do not wait),
// "stage6" (interior rows), "stage3-waited", "stage4-waited",
// "stage5-waited" (the leaves that waited), "stage6-rest" (every row
// left), "stage7" (dimensions) and "leftovers" (what could not be
// settled is an error).

// markOwnership flags the variables occurring in leaf tensors' rows.
func (b *builder) markOwnership() {
	s := b.s
	for _, t := range b.g.Tensors {
		if !t.Kind.terminal() {
			continue
		}
		param := t.Kind == Param
		for k := range 3 {
			r := s.resolveRow(t.rows[k])
			if r.open() {
				e := &s.rows[r.v]
				e.leaf = true
				e.param = e.param || param
				if param || e.owner < 0 {
					e.owner, e.kindIdx = int32(t.ID), int8(k)
				}
			}
			for _, d := range r.flat() {
				b.markDim(s.resolve(d), param, t.ID)
			}
		}
	}
}

func (b *builder) markDim(d dim, param bool, tid int) {
	switch d.k {
	case dVar:
		e := &b.s.dims[d.v]
		e.leaf = true
		e.param = e.param || param
	case dConcat:
		// A concatenation's components belong to the operation that
		// concatenates, not to the parameter: they are leaves, but sizing
		// them is not the parameter's "hidden dimension".
		for _, p := range d.parts {
			b.markDim(p, false, tid)
		}
	}
}

// A stage is one named stage of shape inference: elaboration (the online
// stage 1), each stage of the closing policy, and reading the shapes
// back. Infer runs them in order; the state after each can be printed
// (builder.dump, `ocannlgen infer --dump=STAGE`).
type stage struct {
	name string
	run  func(*builder) error
}

// stages lists the stages of shape inference on p in order:
// elaboration, the closing stages, and reading the shapes back.
func stages(p *program.Program) []stage {
	elaborate := stage{"elaborate", func(b *builder) error { return b.elaborate(p) }}
	finish := stage{"shapes", (*builder).finish}
	return append(append([]stage{elaborate}, closeStages()...), finish)
}

// closeStages lists the stages of the closing policy in order (see the
// table at the top of this file). Stages 3-5 run twice: first for the
// leaves that do not wait for an interior, then, after the interiors
// close at stage 6, for those that waited.
func closeStages() []stage {
	return []stage{
		{"settle", (*builder).settle},
		{"stage3", func(b *builder) error { return b.stage3(true) }},
		{"stage4", func(b *builder) error { return b.stage4(true) }},
		{"stage5", func(b *builder) error { return b.stage5(true) }},
		{"stage6", (*builder).stage6Interiors},
		{"stage3-waited", func(b *builder) error { return b.stage3(false) }},
		{"stage4-waited", func(b *builder) error { return b.stage4(false) }},
		{"stage5-waited", func(b *builder) error { return b.stage5(false) }},
		{"stage6-rest", (*builder).stage6Rest},
		{"stage7", (*builder).stage7},
		{"leftovers", (*builder).leftovers},
	}
}

// close runs the closing stages.
func (b *builder) close() error {
	for _, st := range closeStages() {
		if err := st.run(b); err != nil {
			return err
		}
	}
	return nil
}

// elaborate is stage 1: every statement becomes tensors and operations
// whose constraints are solved online.
func (b *builder) elaborate(p *program.Program) error {
	for _, st := range p.Stmts {
		if err := b.stmt(st); err != nil {
			return err
		}
	}
	return nil
}

// settle solves to a fixpoint, checks that every `dim` names a capture,
// and closes parameters that no operation uses to a lone broadcast unit.
func (b *builder) settle() error {
	s := b.s
	s.tensors = b.g.Tensors
	if err := s.run(); err != nil {
		return err
	}
	if len(b.pending) > 0 {
		// Report the first in the source (map order is random).
		first := ""
		for name, pd := range b.pending {
			f := b.pending[first]
			if first == "" || pd.pos.Line < f.pos.Line || pd.pos.Line == f.pos.Line && (pd.pos.Col < f.pos.Col || pd.pos.Col == f.pos.Col && name < first) {
				first = name
			}
		}
		return errAt(KindName, b.pending[first].pos, "dim %s: no spec captures a label or row variable named %s", spec.Clip(first), spec.Quote(first))
	}
	// Parameters never used by any operation close to a lone broadcast unit.
	for _, t := range b.g.Tensors {
		if t.Kind == Param && t.uses == 0 {
			o := b.s.addOrigin(origin{op: "unused parameter " + t.Name, pos: t.Pos})
			s.push(constraint{k: cRowEq, r1: t.rows[spec.Input], r2: closedRow(), origin: o})
			r := s.resolveRow(t.rows[spec.Output])
			if r.open() && r.flanks() == 0 {
				s.push(constraint{k: cRowEq, r1: r, r2: closedRow(bcastUnit), origin: o})
			}
		}
	}
	return s.run()
}

// Stages 3-5 close leaves. A leaf that a deferred row constraint ties to
// a still-open interior row is decided (or further capped) by that
// interior, which closes only at stage 6: such leaves wait (postpone),
// and are closed by the second run of stages 3-5 right after the
// interiors (as parameter axes fed by an interior axis wait for stage 7).

// stage6Interiors closes the interior row variables downward, to the
// empty row.
func (b *builder) stage6Interiors() error {
	s := b.s
	b.markOwnership()
	for v := 0; v < len(s.rows); v++ { // by index: closing appends variables
		e := &s.rows[v]
		if e.solved || e.leaf {
			continue
		}
		if err := b.commitRow(int32(v), closedRow()); err != nil {
			return err
		}
	}
	return nil
}

// stage6Rest closes every row variable still open to the empty row.
func (b *builder) stage6Rest() error {
	s := b.s
	for v := 0; v < len(s.rows); v++ { // by index: closing appends variables
		e := &s.rows[v]
		if e.solved {
			continue
		}
		if err := b.commitRow(int32(v), closedRow()); err != nil {
			return err
		}
	}
	return nil
}

// stage7 closes the remaining dimension variables: discardable
// components first, then interiors and plain leaves, then parameters.
func (b *builder) stage7() error {
	s := b.s
	b.markOwnership()
	if err := b.guessDiscardable(false); err != nil {
		return err
	}
	for pass := range 2 { // interiors and plain leaves first, then parameters
		for v := 0; v < len(s.dims); v++ { // by index: closing appends variables
			e := &s.dims[v]
			if e.solved || b.inOpenConcat(int32(v)) || e.param != (pass == 1) {
				continue
			}
			if e.param && e.atLeast == 0 && !e.hasLB {
				return b.hiddenDimErr(int32(v))
			}
			// A cap is a use demanding this size: commit to it, except for a
			// reduced axis written as a fixed index 0 (At_least 1), which
			// closes to the broadcast unit so that the reduction broadcasts back.
			d := guessDim(e)
			if e.hasLB && e.atLeast > 1 {
				d = e.lb
			}
			if err := b.commitDim(int32(v), d, e.origin); err != nil {
				return err
			}
		}
	}
	return nil
}

// leftovers reports what closing could not settle: a concatenation with
// several unknown components, or any other deferred constraint.
func (b *builder) leftovers() error {
	s := b.s
	for v := 0; v < len(s.dims); v++ { // by index: closing appends variables
		if !s.dims[v].solved {
			for _, c := range s.deferred {
				if c.k == cDimEq && (occurs(int32(v), s.resolve(c.d1)) || occurs(int32(v), s.resolve(c.d2))) {
					return s.wrap(fail(KindConcat, "cannot infer the sizes of the concatenation's components: %s = %s leaves more than one component unknown; set them with a capture and dim, or pin them by use",
						s.dimString(s.resolve(c.d1)), s.dimString(s.resolve(c.d2))), c.origin)
				}
			}
		}
	}
	if len(s.deferred) > 0 {
		c := s.deferred[0]
		var err *shapeError
		switch c.k {
		case cTotal:
			err = fail(KindTotalElems, "cannot satisfy the total-elements constraint %d on %s", c.n, s.rowString(c.r1))
		case cRowEq, cRowIneq:
			err = fail(KindRankCycle, "unresolvable row constraint %v", c)
		case cAtLeast:
			err = fail(KindFixedIndex, "cannot check that a fixed index %d fits the axis %s", c.n-1, s.dimString(s.resolve(c.d1)))
		case cProduct:
			err = fail(KindHiddenDim, "flatten: cannot infer the sizes of the axes %s it flattens (into an axis of size %s); give the operand's output axes by use or by a declared shape",
				s.rowString(s.resolveRow(c.r1)), s.dimString(s.resolve(c.d1)))
		default:
			err = fail(KindStride, "unresolvable dimension constraint %v", c)
		}
		return s.wrap(err, c.origin)
	}
	return nil
}

// stage3 closes leaf row variables upward: rows fixed by a total first,
// then to the join of their caps. With postpone, a leaf that waits for
// an interior (rowFedByInterior) is left for the second run: closing the
// interior may still add to its caps, or decide it outright.
func (b *builder) stage3(postpone bool) error {
	s := b.s
	// Commit a leaf only once its caps can no longer grow
	// (Remark 6.3's discipline), as far as the order can tell: rows fixed
	// by a total first, then leaves whose caps are all closed, then leaves
	// with a cap that is still open on an unsolved variable (whose value
	// the earlier commitments may have extended: a conv's bias capped by
	// [oh, ow, ..oc..] waits until the kernel's output row ..oc.. is fixed
	// by its total).
	b.markOwnership()
	if err := b.closeTotals(); err != nil {
		return err
	}
	for pass := range 2 {
		for v := 0; v < len(s.rows); v++ { // by index: closing appends variables
			e := &s.rows[v]
			if e.solved || !e.leaf || len(e.lbs) == 0 || (pass == 0 && b.hasOpenCap(int32(v))) ||
				(postpone && b.rowFedByInterior(int32(v))) {
				continue
			}
			if err := b.closeRowToJoin(int32(v)); err != nil {
				return err
			}
		}
	}
	return b.closeTotals()
}

// stage4 closes leaf dimensions with a cap to the cap, capped variables
// of deferred equations to their caps, and leaf rows to the join of
// their caps or to the empty row (a parameter's undetermined row is an
// error). With postpone, leaves waiting for an interior are left.
func (b *builder) stage4(postpone bool) error {
	s := b.s
	b.markOwnership()
	for v := 0; v < len(s.dims); v++ { // by index: closing appends variables
		e := &s.dims[v]
		if e.solved || !e.leaf || !e.hasLB || (postpone && b.dimFedByInterior(int32(v))) {
			continue
		}
		if err := b.commitDim(int32(v), e.lb, e.lbOrigin); err != nil {
			return err
		}
	}
	if err := b.commitDeferredCaps(); err != nil {
		return err
	}
	for v := 0; v < len(s.rows); v++ { // by index: closing appends variables
		e := &s.rows[v]
		if e.solved || !e.leaf {
			continue
		}
		if postpone && b.rowFedByInterior(int32(v)) {
			continue // decided by the interior at stage 6
		}
		if len(e.lbs) > 0 {
			if err := b.closeRowToJoin(int32(v)); err != nil {
				return err
			}
			continue
		}
		if e.param && !e.template {
			if err := b.paramRowGuard(int32(v)); err != nil {
				return err
			}
		}
		if err := b.commitRow(int32(v), closedRow()); err != nil {
			return err
		}
	}
	return nil
}

// stage5 guesses the remaining leaf dimensions: discardable components
// to 0 first, then each leaf to its cap or downward (1_∅, or m for a
// fixed-index bound m); a parameter's undetermined axis is an error
// unless an interior decides it at stage 7. With postpone, leaves
// waiting for an interior are left.
func (b *builder) stage5(postpone bool) error {
	s := b.s
	b.markOwnership()
	if err := b.guessDiscardable(true); err != nil {
		return err
	}
	for v := 0; v < len(s.dims); v++ { // by index: closing appends variables
		e := &s.dims[v]
		if e.solved || !e.leaf || b.inOpenConcat(int32(v)) {
			continue
		}
		if postpone && b.dimFedByInterior(int32(v)) {
			continue // decided by the interior at stage 6
		}
		if e.hasLB {
			if err := b.commitDim(int32(v), e.lb, e.lbOrigin); err != nil {
				return err
			}
			continue
		}
		if e.param && e.atLeast == 0 {
			if b.fedByInterior(int32(v)) {
				continue // decided by the interior at stage 7
			}
			return b.hiddenDimErr(int32(v))
		}
		if err := b.commitDim(int32(v), guessDim(e), e.origin); err != nil {
			return err
		}
	}
	return nil
}

// rowFedByInterior reports whether leaf row variable v is one side of a
// deferred row constraint whose other side is open on an unsolved interior
// row variable: a split-surplus equality such as [a]·⟨c⟩ ≈ ⟨t⟩·[4,5] (an
// einsum operand "a, ..c.." equated with the row of tanh x, whose deficit
// template t is an interior) or a cross-flank inequality. Closing the
// interior (stage 6, to the empty row) settles the constraint, which
// determines v or adds to its caps: v is not a forgotten hidden dimension,
// and closing it first (to the empty row, or to the join of the caps it
// has so far) could make the constraint fail or commit more axes than the
// least solution has.
//
// So is a leaf row variable bounded above, along a chain of ⊑ edges
// through unsolved row variables, by an unsolved interior row variable
// that waits in a deferred row constraint: settling the constraint at
// stage 6 may give the interior axes, which the leaf must then have too
// (ρ ⊑ σ needs ρ to have at least σ's axes). In {w} * maxpool (relu y),
// w's input row is [x1, x2]·⟨tw⟩ (tw a deficit template, no caps) with
// tw ⊑ the pool's channel row ..c.., which the pool's split-surplus
// equation with relu's template row decides; closing tw to empty at stage
// 4 lost the channel axis. (Edges from below only add caps: an interior
// below the leaf, closing to the empty row, would cap it with nothing, so
// a leaf does not wait for those, as the closing policy has leaves close
// first.)
func (b *builder) rowFedByInterior(v int32) bool {
	return b.rowWaitsOnDeferred(v) || b.rowAdjInterior(v) || b.capWaits(v)
}

// capWaits reports whether a cap of row variable v is open on a row
// variable that stage 6 decides (as in rowAdjInterior): the cap can still
// grow, so v waits (Remark 6.3). A depthwise convolution's unannotated
// bias on relu x is capped by [oh, ow]·⟨t⟩, t ⊑ c the channel row decided
// with relu's template; closing the bias first dropped the channel axis
// that it gets when c is known in time (on x itself).
func (b *builder) capWaits(v int32) bool {
	s := b.s
	for _, lb := range s.rows[v].lbs {
		r := s.resolveRow(lb.r)
		if !r.open() || r.v == v || s.rows[r.v].solved {
			continue
		}
		if (s.isInteriorRow(r.v) && b.inDeferredRow(r.v)) || b.rowWaitsOnDeferred(r.v) || b.rowAdjInterior(r.v) {
			return true
		}
	}
	return false
}

// rowWaitsOnDeferred reports whether row variable v is one side of a
// deferred row constraint whose other side is open on an unsolved
// interior row variable.
func (b *builder) rowWaitsOnDeferred(v int32) bool {
	s := b.s
	for _, c := range s.deferred {
		if c.k != cRowEq && c.k != cRowIneq {
			continue
		}
		r1, r2 := s.resolveRow(c.r1), s.resolveRow(c.r2)
		if r2.v == v {
			r1, r2 = r2, r1
		}
		if r1.v == v && r2.open() && r2.v != v && s.isInteriorRow(r2.v) {
			return true
		}
	}
	return false
}

// rowAdjInterior reports whether row variable v is bounded above, along
// ⊑ edges through unsolved row variables, by one that stage 6 decides: an
// unsolved interior row variable that is one side of a deferred row
// constraint, or a leaf that waits for one (rowWaitsOnDeferred; in
// relu x, a depthwise convolution whose channel row ..c.. is its kernel's
// output row, then relu and a convolution, the second kernel's input row
// is bounded above by ..c..).
func (b *builder) rowAdjInterior(v int32) bool {
	s := b.s
	seen := map[int32]bool{v: true}
	stack := []int32{v}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, u := range s.rows[x].up {
			if seen[u.to] || s.rows[u.to].solved {
				continue
			}
			if (s.isInteriorRow(u.to) && b.inDeferredRow(u.to)) || b.rowWaitsOnDeferred(u.to) {
				return true
			}
			seen[u.to] = true
			stack = append(stack, u.to)
		}
	}
	return false
}

// inDeferredRow reports whether row variable v is the open variable of
// one side of a deferred row constraint.
func (b *builder) inDeferredRow(v int32) bool {
	s := b.s
	for _, c := range s.deferred {
		if c.k != cRowEq && c.k != cRowIneq {
			continue
		}
		r1, r2 := s.resolveRow(c.r1), s.resolveRow(c.r2)
		if (r1.open() && r1.v == v) || (r2.open() && r2.v == v) {
			return true
		}
	}
	return false
}

// dimFedByInterior reports whether leaf dimension variable v occurs in a
// deferred row constraint that waits for an unsolved interior row
// variable: closing the interior decides the constraint's alignment, and
// with it v.
func (b *builder) dimFedByInterior(v int32) bool {
	s := b.s
	for _, c := range s.deferred {
		if c.k != cRowEq && c.k != cRowIneq {
			continue
		}
		r1, r2 := s.resolveRow(c.r1), s.resolveRow(c.r2)
		if !(r1.open() && s.isInteriorRow(r1.v)) && !(r2.open() && s.isInteriorRow(r2.v)) {
			continue
		}
		for _, r := range []row{r1, r2} {
			for _, d := range r.flat() {
				if occurs(v, s.resolve(d)) {
					return true
				}
			}
		}
	}
	return false
}

func (s *solver) isInteriorRow(v int32) bool {
	e := &s.rows[v]
	return !e.solved && !e.leaf
}

// guessDim is the downward (minimal) value of an unforced dimension.
func guessDim(e *dimEntry) dim {
	switch {
	case e.atLeast > 1:
		return dconst(e.atLeast, BasisDefault)
	case e.discardable:
		return dconst(0, BasisDefault)
	}
	return bcastUnit
}

func (b *builder) commitDim(v int32, d dim, o int32) error {
	s := b.s
	s.cur = o
	if err := s.unifyDim(dvar(v), d); err != nil {
		s.failed = &constraint{k: cDimEq, d1: dvar(v), d2: d, origin: o}
		return s.wrap(err, o)
	}
	return s.run()
}

func (b *builder) commitRow(v int32, r row) error {
	s := b.s
	o := s.rows[v].origin
	s.cur = o
	if err := s.unifyRow(openRow(v), r); err != nil {
		s.failed = &constraint{k: cRowEq, r1: openRow(v), r2: r, origin: o}
		return s.wrap(err, o)
	}
	return s.run()
}

// closeRowToJoin closes a leaf row variable upward to the join of its caps
// (Prop. 2.7): as many fresh axes as the caps' common flanks, each then
// bounded by re-emitting the caps, so that the dimension rules compute the
// per-axis join (equal atoms stay, distinct atoms collapse to 1_∅, holes
// are guessed later).
func (b *builder) closeRowToJoin(v int32) error {
	s := b.s
	e := &s.rows[v]
	begLen, endLen := -1, -1
	for _, lb := range e.lbs {
		r := s.resolveRow(lb.r)
		if begLen < 0 || len(r.beg) < begLen {
			begLen = len(r.beg)
		}
		if endLen < 0 || len(r.end) < endLen {
			endLen = len(r.end)
		}
	}
	val := row{v: -1}
	for range begLen {
		val.beg = append(val.beg, s.newDim("", e.origin))
	}
	for range endLen {
		val.end = append(val.end, s.newDim("", e.origin))
	}
	param := e.param
	for _, d := range append(append([]dim{}, val.beg...), val.end...) {
		s.dims[d.v].leaf = true
		s.dims[d.v].param = param
	}
	return b.commitRow(v, val)
}

// closeTotals closes row variables whose only information is a total
// number of elements to a single axis of that size.
func (b *builder) closeTotals() error {
	s := b.s
	for {
		progress := false
		for _, c := range s.deferred {
			if c.k != cTotal {
				continue
			}
			r := s.resolveRow(c.r1)
			if !r.open() || len(s.rows[r.v].lbs) > 0 {
				continue
			}
			prod := 1
			known := true
			for _, d := range r.flat() {
				d = s.resolve(d)
				if d.k != dConst || overflows(float64(prod)*float64(d.n)) {
					known = false
					break
				}
				prod *= d.n
			}
			if !known || prod == 0 || c.n%prod != 0 {
				continue
			}
			val := closedRow()
			if n := c.n / prod; n != 1 {
				val = closedRow(dconst(n, BasisDefault))
			}
			if err := b.commitRow(r.v, val); err != nil {
				return err
			}
			progress = true
			break
		}
		if !progress {
			return nil
		}
	}
}

// paramRowGuard fails when a parameter's row would close to "no axes"
// although nothing determined it, except for input rows used only pointwise.
func (b *builder) paramRowGuard(v int32) error {
	s := b.s
	e := &s.rows[v]
	if e.owner < 0 {
		return nil
	}
	t := s.tensors[e.owner]
	if t.Kind != Param {
		return nil
	}
	k := spec.Kind(e.kindIdx)
	if k == spec.Input && !t.usedInSpec {
		return nil
	}
	return &Error{Kind: KindHiddenDim, Pos: t.Pos, Param: t.Name,
		Msg: fmt.Sprintf("You forgot to specify the hidden dimension(s) of parameter %s: its %s row is not determined by how it is used; give it explicitly, e.g. { %s; %c=[...] }",
			spec.Quote(t.Name), k, spec.Clip(t.Name), k.String()[0])}
}

func (b *builder) hiddenDimErr(v int32) error {
	s := b.s
	// Find the parameter owning this variable.
	for _, t := range b.g.Tensors {
		if t.Kind != Param {
			continue
		}
		for k := range 3 {
			r := s.resolveRow(t.rows[k])
			for _, d := range r.flat() {
				if occurs(v, s.resolve(d)) {
					return &Error{Kind: KindHiddenDim, Pos: t.Pos, Param: t.Name,
						Msg: fmt.Sprintf("You forgot to specify the hidden dimension(s) of parameter %s: an axis of its %s row %s is not determined by how it is used; give it explicitly, e.g. { %s; %c=[...] }",
							spec.Quote(t.Name), spec.Kind(k), s.rowString(r), spec.Clip(t.Name), spec.Kind(k).String()[0])}
				}
			}
		}
	}
	e := &s.dims[v]
	return s.wrap(fail(KindHiddenDim, "You forgot to specify the hidden dimension(s): a parameter's axis is not determined by how it is used"), e.origin)
}

// commitDeferredCaps commits capped variables of deferred (affine or
// concat) size equations to their caps before any guessing: a use demanding
// a size is better evidence than a guess of 1.
func (b *builder) commitDeferredCaps() error {
	s := b.s
	for {
		var todo []int32
		for _, c := range s.deferred {
			if c.k != cDimEq {
				continue
			}
			collectVars(s.resolve(c.d1), &todo)
			collectVars(s.resolve(c.d2), &todo)
		}
		progress := false
		for _, v := range todo {
			e := &s.dims[v]
			if e.solved || !e.hasLB || e.atLeast == 1 {
				continue
			}
			if err := b.commitDim(v, e.lb, e.lbOrigin); err != nil {
				return err
			}
			progress = true
		}
		if !progress {
			return nil
		}
	}
}

func collectVars(d dim, out *[]int32) {
	switch d.k {
	case dVar:
		*out = append(*out, d.v)
	case dAffine:
		collectVars(d.aff.over, out)
		if d.aff.conv {
			collectVars(d.aff.kernel, out)
		}
	case dConcat:
		for _, p := range d.parts {
			collectVars(p, out)
		}
	}
}

// guessDiscardable closes unforced discardable components to 0 (the unit of
// the coproduct) before any other guess, so that the remaining component of
// a concatenation is solved by arithmetic rather than guessed.
//
// A discardable component is not guessed when every unknown component of
// its concatenation is discardable, they must add up to a positive size,
// and a sized component lies between them: its offset would depend on
// which of them is non-empty, so the equation is reported as
// underdetermined instead of silently picking a split. (As in
// "a^b^c => a" or "a^b^c => c", where the split of the discarded rest
// cannot change the result, the discardables are guessed.)
func (b *builder) guessDiscardable(leavesOnly bool) error {
	s := b.s
	blocked := map[int32]bool{}
	for _, c := range s.deferred {
		if c.k != cDimEq {
			continue
		}
		d1, d2 := s.resolve(c.d1), s.resolve(c.d2)
		if d1.k != dConcat {
			d1, d2 = d2, d1
		}
		if d1.k != dConcat || d2.k != dConst {
			continue
		}
		residual := d2.n
		var unknown []int32
		allDisc := true
		knownAfter := false   // a sized component placed after an unknown one
		knownBetween := false // ... and before another unknown one
		for _, p := range d1.parts {
			switch p.k {
			case dConst:
				residual -= p.n
				if len(unknown) > 0 && p.n > 0 {
					knownAfter = true
				}
			case dVar:
				if knownAfter {
					knownBetween = true
				}
				unknown = append(unknown, p.v)
				allDisc = allDisc && s.dims[p.v].discardable
			default:
				allDisc = false
			}
		}
		// The split matters only when it moves a component lying between
		// unknown ones (its offset depends on the split): "a^b^c => b" with
		// b known; "a^b^c => c" is fine (c's offset is 7 - |c| anyway).
		if allDisc && len(unknown) >= 2 && residual > 0 && knownBetween {
			for _, v := range unknown {
				blocked[v] = true
			}
		}
	}
	for v := 0; v < len(s.dims); v++ { // by index: closing appends variables
		e := &s.dims[v]
		if e.solved || !e.discardable || e.hasLB || (leavesOnly && !e.leaf) || e.param || blocked[int32(v)] {
			continue
		}
		if err := b.commitDim(int32(v), dconst(0, BasisDefault), e.origin); err != nil {
			return err
		}
	}
	return nil
}

// inOpenConcat reports whether v is a component of a deferred concatenation
// equation that still has several unknown components: guessing one of them
// would pick an arbitrary split.
func (b *builder) inOpenConcat(v int32) bool {
	s := b.s
	for _, c := range s.deferred {
		if c.k != cDimEq {
			continue
		}
		for _, d := range []dim{s.resolve(c.d1), s.resolve(c.d2)} {
			if d.k != dConcat || !occurs(v, d) {
				continue
			}
			var vs []int32
			collectVars(d, &vs)
			if len(vs) > 1 {
				return true
			}
		}
	}
	return false
}

// fedByInterior reports whether a parameter's axis without a cap may
// still be decided by closing something that closes before the
// parameters: an axis of a non-parameter tensor (closed at stage 7, to the
// broadcast unit or its cap, as in `2 *. {hey = 7.0}` where hey follows
// the result's axis), or an axis occurring in a deferred constraint (an
// affine or concatenation size equation, or a row constraint waiting for
// an interior row that closes at stage 6). Such an axis is not (yet) a
// forgotten hidden dimension: its holes are judged at stage 7, after every
// interior that feeds it has closed.
//
// The axis is fed not only by its direct neighbours: the ⊑ edges between
// unsolved axes are followed in both directions (a commitment propagates
// along an edge either way: a bound below caps, a value above pins), so
// in relu x, then a convolution, then `{w} * h`, w's axis ⊑ h's axis ⊑
// the convolution's output axis, which is decided only when the deferred
// equation with the template row of relu x is settled at stage 6.
func (b *builder) fedByInterior(v int32) bool {
	s := b.s
	seen := map[int32]bool{v: true}
	stack := []int32{v}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		e := &s.dims[x]
		if x != v && !e.param {
			return true
		}
		if b.inDeferred(x) {
			return true
		}
		for _, es := range [][]edge{e.up, e.down} {
			for _, d := range es {
				if !seen[d.to] && !s.dims[d.to].solved {
					seen[d.to] = true
					stack = append(stack, d.to)
				}
			}
		}
	}
	return false
}

// inDeferred reports whether dimension variable v occurs in a deferred
// constraint.
func (b *builder) inDeferred(v int32) bool {
	s := b.s
	var dims []dim
	var rows []row
	for _, c := range s.deferred {
		dims, rows = dims[:0], rows[:0]
		switch c.k {
		case cDimEq, cDimIneq:
			dims = append(dims, c.d1, c.d2)
		case cAtLeast:
			dims = append(dims, c.d1)
		case cRowEq, cRowIneq:
			rows = append(rows, c.r1, c.r2)
		case cTotal:
			rows = append(rows, c.r1)
		case cProduct:
			dims = append(dims, c.d1)
			rows = append(rows, c.r1)
		}
		for _, r := range rows {
			dims = append(dims, s.resolveRow(r).flat()...)
		}
		for _, d := range dims {
			if occurs(v, s.resolve(d)) {
				return true
			}
		}
	}
	return false
}

// hasOpenCap reports whether a cap of row variable v is still open.
func (b *builder) hasOpenCap(v int32) bool {
	s := b.s
	for _, lb := range s.rows[v].lbs {
		if s.resolveRow(lb.r).open() {
			return true
		}
	}
	return false
}
