package inference

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ocannlgen/ocannlgen/spec"
)

// This file holds the solver core: the environment of dimension and row
// variables and the rewrite rules of the formal core (seed document 5,
// Defs. 4.2–4.5). Orientation follows the formal core: 1_∅ is the top of
// the dimension order, and an inequality res ⊑ opnd relates a result-side
// term (below) to an operand-side term (above).
//
//   DE-*           unifyDim
//   DI-*           solveDimIneq (pin, pin-top, cap and cap collapse, adjacency)
//   row ≈ (a)-(d)  unifyRow
//   row ⊑ (i)-(iv) solveRowIneq (residue caps, deficit rule)
//   rank graph     rankGraph (Def. 4.5)

type ckind uint8

const (
	cDimEq ckind = iota
	cDimIneq
	cRowEq
	cRowIneq
	cTotal   // product of r1's dims equals n
	cAtLeast // d1's size is at least n (a fixed index met an unresolved term)
	cProduct // d1 is the product of r1's dims (flatten)
)

// constraint is one atomic constraint with its provenance.
type constraint struct {
	k      ckind
	d1, d2 dim // cDimEq: d1 = d2; cDimIneq: d1 ⊑ d2 (result ⊑ operand)
	r1, r2 row // cRowEq: r1 ≈ r2; cRowIneq: r1 ⊑ r2; cTotal: r1
	n      int // cTotal
	origin int32
}

func (c constraint) String() string {
	switch c.k {
	case cDimEq:
		return fmt.Sprintf("%v = %v", c.d1, c.d2)
	case cDimIneq:
		return fmt.Sprintf("%v ⊑ %v", c.d1, c.d2)
	case cRowEq:
		return fmt.Sprintf("%v ≈ %v", c.r1, c.r2)
	case cRowIneq:
		return fmt.Sprintf("%v ⊑ %v", c.r1, c.r2)
	case cTotal:
		return fmt.Sprintf("elems%v = %d", c.r1, c.n)
	case cProduct:
		return fmt.Sprintf("%v = elems%v", c.d1, c.r1)
	}
	return "?"
}

type edge struct {
	to     int32
	origin int32
}

// dimEntry is what the environment knows of a dimension variable.
type dimEntry struct {
	solved bool
	val    dim
	// lb is the atom lower bound (the "cap" d ⊑ α), if hasLB.
	hasLB    bool
	lb       dim
	lbOrigin int32
	up       []edge // α ⊑ β
	down     []edge // γ ⊑ α
	atLeast  int    // fixed-index lower bound on the size (0: none)
	atOrigin int32
	// Closing information, filled from tensor ownership before closing.
	leaf, param bool
	discardable bool
	name        string // the spec label it came from, for messages
	label       bool   // it is a spec label's own variable (not a copy of its name)
	origin      int32
	// bound is what bindDim bound the variable to (val before path
	// compression), by the origin of the constraint that bound it, at
	// stage: the provenance Graph.Provenance reads.
	bound dim
	by    int32
	stage int8
	// via is the variable whose binding gave bound its value when the
	// binding copied a solved term (-1: none): the provenance goes on
	// from there.
	via int32
	// last is, plus one, the last variable of the chain of bound terms
	// from this one (lastVar's memo; 0: not known yet).
	last int32
}

// rowEntry is what the environment knows of a row variable.
type rowEntry struct {
	solved bool
	val    row
	lbs    []rowBound // residue caps R ⊑ ρ
	up     []edge     // ρ ⊑ σ
	down   []edge     // γ ⊑ ρ
	// template marks variables minted by the deficit rule: safe to close
	// to the empty row even inside a parameter.
	template    bool
	leaf, param bool
	owner       int32 // tensor whose row this variable was created for, or -1
	kindIdx     int8  // row kind of the owner (batch/input/output), -1 if none
	origin      int32
	// bound, by and stage: as for dimEntry (the value before path
	// compression, the binding constraint's origin, the stage).
	bound row
	by    int32
	stage int8
}

type rowBound struct {
	r      row
	origin int32
}

// origin describes where a constraint came from.
type origin struct {
	op      string // human description of the operation
	pos     spec.Pos
	specCol int
	// slot is set on the equations of an operand's row with its slot's
	// row (OperandRank).
	slot *slotRef
}

// solver is one inference problem.
type solver struct {
	dims     []dimEntry
	rows     []rowEntry
	queue    []constraint
	head     int
	deferred []constraint
	origins  []origin
	rank     rankGraph
	bindings int // number of variable bindings so far (progress counter)
	cur      int32
	tensors  []*Tensor
	// conflict records a basis conflict found while simplifying a term
	// (resolve cannot return errors); run reports it.
	conflict *shapeError
	steps    int
	maxSteps int
	// perm, when not nil, reorders pending constraints (Order.Perm):
	// each round of the queue (the constraints queued when the round
	// starts) and each retry of the deferred constraints. roundEnd is
	// where the current round ends.
	perm     func(n int) []int
	roundEnd int
	// hold makes run a no-op (InferOrdered during elaboration): every
	// operation's constraints stay queued for the first run after it.
	hold bool
	// stage is the index of the running stage of inference (stages), for
	// the provenance of bindings.
	stage int8
	// failed is the constraint whose processing failed (run, commits),
	// for the conflict an error reports; nil when none.
	failed *constraint
	// via is the variable the next bindDim copies its value from (set
	// by unifyDim and solveDimIneq; -1: none).
	via int32
}

func newSolver() *solver {
	s := &solver{maxSteps: 2_000_000, via: -1}
	s.origins = append(s.origins, origin{op: "inference"})
	return s
}

func (s *solver) addOrigin(o origin) int32 {
	s.origins = append(s.origins, o)
	return int32(len(s.origins) - 1)
}

func (s *solver) newDim(name string, o int32) dim {
	s.dims = append(s.dims, dimEntry{name: name, origin: o, discardable: false})
	return dvar(int32(len(s.dims) - 1))
}

func (s *solver) newRowVar(owner int32, kind int8, o int32) int32 {
	s.rows = append(s.rows, rowEntry{owner: owner, kindIdx: kind, origin: o})
	s.rank.grow(len(s.rows))
	return int32(len(s.rows) - 1)
}

func (s *solver) push(c constraint) { s.queue = append(s.queue, c) }

// run processes the queue to a fixpoint, retrying deferred constraints
// while bindings make progress.
func (s *solver) run() error {
	if s.hold {
		return nil
	}
	for {
		for s.head < len(s.queue) {
			if s.perm != nil && s.head >= s.roundEnd {
				s.permute(s.queue[s.head:])
				s.roundEnd = len(s.queue)
			}
			c := s.queue[s.head]
			s.head++
			s.steps++
			if s.steps > s.maxSteps+200*len(s.origins) {
				return s.wrap(fail(KindRankCycle, "shape inference did not converge (step limit reached); this is a bug, please report it"), c.origin)
			}
			if err := s.process(c); err != nil {
				s.fail(c)
				return s.wrap(err, c.origin)
			}
			if s.conflict != nil {
				s.fail(c)
				return s.wrap(s.conflict, c.origin)
			}
		}
		s.queue = s.queue[:0]
		s.head, s.roundEnd = 0, 0
		if len(s.deferred) == 0 {
			return nil
		}
		before := s.bindings
		d := s.deferred
		s.deferred = nil
		if s.perm != nil {
			s.permute(d)
		}
		for _, c := range d {
			if err := s.process(c); err != nil {
				s.fail(c)
				return s.wrap(err, c.origin)
			}
		}
		if s.bindings == before && s.head >= len(s.queue) {
			return nil
		}
	}
}

// permute reorders cs by s.perm (Order.Perm).
func (s *solver) permute(cs []constraint) {
	if len(cs) < 2 {
		return
	}
	cp := slices.Clone(cs)
	for i, j := range s.perm(len(cs)) {
		cs[i] = cp[j]
	}
}

// fail records c as the constraint that failed (a copy: taking the
// address of the loop's variable would move every constraint processed
// to the heap).
func (s *solver) fail(c constraint) { s.failed = &c }

func (s *solver) wrap(err error, o int32) error {
	se, ok := err.(*shapeError)
	if !ok {
		return err
	}
	or := s.origins[o]
	e := &Error{Kind: se.kind, Msg: se.msg, Pos: or.pos, Op: or.op, SpecCol: or.specCol, slot: or.slot}
	if s.failed != nil {
		e.Conflict = s.conflictOf(*s.failed)
		s.failed = nil
	}
	return e
}

func (s *solver) process(c constraint) error {
	s.cur = c.origin
	switch c.k {
	case cDimEq:
		return s.unifyDim(c.d1, c.d2)
	case cDimIneq:
		return s.solveDimIneq(c.d1, c.d2)
	case cRowEq:
		return s.unifyRow(c.r1, c.r2)
	case cRowIneq:
		return s.solveRowIneq(c.r1, c.r2)
	case cTotal:
		return s.checkTotal(c)
	case cAtLeast:
		return s.applyAtLeast(c.d1, c.n, c.origin)
	case cProduct:
		return s.checkProduct(c)
	}
	return nil
}

// ---------------------------------------------------------------------------
// Dimensions

// resolve substitutes solved variables and simplifies affine and concat terms.
func (s *solver) resolve(d dim) dim {
	switch d.k {
	case dVar:
		e := &s.dims[d.v]
		if !e.solved {
			return d
		}
		r := s.resolve(e.val)
		e.val = r
		return r
	case dAffine:
		a := *d.aff
		a.over = s.resolve(a.over)
		if a.conv {
			a.kernel = s.resolve(a.kernel)
		}
		d, err := simplifyAffine(a)
		if err != nil && s.conflict == nil {
			s.conflict = err
		}
		return d
	case dConcat:
		var parts []dim
		for _, p := range d.parts {
			p = s.resolve(p)
			if p.k == dConcat {
				parts = append(parts, p.parts...)
			} else {
				parts = append(parts, p)
			}
		}
		d, err := simplifyConcat(parts)
		if err != nil && s.conflict == nil {
			s.conflict = err
		}
		return d
	}
	return d
}

// mergeBasis combines the bases of dimensions fused into one (a
// convolution's output and kernel, a concatenation's components): a named
// basis wins over the reserved ones (default, the broadcast unit); two
// different named bases conflict (ok is false).
func mergeBasis(a, b string) (string, bool) {
	reserved := func(x string) bool { return x == BasisDefault || x == BasisBcast }
	switch {
	case reserved(b):
		if a == BasisBcast {
			return BasisDefault, true
		}
		return a, true
	case reserved(a), a == b:
		return b, true
	}
	return a, false
}

// simplifyAffine evaluates an affine dimension whose parts are known. A
// basis conflict between the output and the kernel is returned as an
// error (the dimension is then left unsimplified).
func simplifyAffine(a affineDim) (dim, *shapeError) {
	// A padded axis also holds its margins (about the kernel's span).
	if a.conv && a.padded && a.over.k == dConst && a.kernel.k == dConst &&
		overflows(float64(a.stride)*float64(a.over.n)+float64(a.kernel.n)*float64(a.dilation)) {
		return dim{k: dAffine, aff: &a}, errTooLarge()
	}
	if a.stride == 1 && (!a.conv || a.padded) {
		return a.over, nil
	}
	if a.over.k == dConst {
		o := a.over.n
		basis, _ := mergeBasis(a.over.basis, BasisDefault)
		if !a.conv || a.padded {
			if overflows(float64(a.stride) * float64(o)) {
				return dim{k: dAffine, aff: &a}, errTooLarge()
			}
			return dconst(a.stride*o, basis), nil
		}
		if a.kernel.k == dConst {
			k := a.kernel.n
			var ok bool
			if basis, ok = mergeBasis(basis, a.kernel.basis); !ok {
				return dim{k: dAffine, aff: &a}, fail(KindBasis, "convolution: conflicting dimension bases between stride and kernel: %s vs %s", a.over.basis, a.kernel.basis)
			}
			if overflows(float64(a.stride)*float64(o-1) + float64(k-1)*float64(a.dilation)) {
				return dim{k: dAffine, aff: &a}, errTooLarge()
			}
			return dconst(a.stride*(o-1)+1+(k-1)*a.dilation, basis), nil
		}
	}
	return dim{k: dAffine, aff: &a}, nil
}

// simplifyConcat sums a concatenation whose components are all known and
// drops empty components. Conflicting named bases are an error.
func simplifyConcat(parts []dim) (dim, *shapeError) {
	sum := 0
	basis := BasisDefault
	allConst := true
	var kept []dim
	for _, p := range parts {
		if p.k == dConst {
			if overflows(float64(sum) + float64(p.n)) {
				return dim{k: dConcat, parts: parts}, errTooLarge()
			}
			sum += p.n
			var ok bool
			if basis, ok = mergeBasis(basis, p.basis); !ok {
				return dim{k: dConcat, parts: parts}, fail(KindBasis, "concat: conflicting dimension bases: %s vs %s", basis, p.basis)
			}
			if p.n == 0 {
				continue
			}
		} else {
			allConst = false
		}
		kept = append(kept, p)
	}
	if len(kept) == 1 {
		// One non-empty component: 0 is the unit of concatenation, so
		// the axis is that component, its basis included (1_∅^0 is 1_∅;
		// merging bases made it 1_default once the parts were known,
		// while a partly unknown 1_∅^k erased to the component:
		// docs/formal.md, finding 2).
		return kept[0], nil
	}
	if allConst {
		return dconst(sum, basis), nil
	}
	return dim{k: dConcat, parts: kept}, nil
}

func dimEqual(a, b dim) bool {
	if a.k != b.k {
		return false
	}
	switch a.k {
	case dVar:
		return a.v == b.v
	case dConst:
		return a.n == b.n && a.basis == b.basis
	case dAffine:
		x, y := a.aff, b.aff
		return x.stride == y.stride && x.conv == y.conv && x.padded == y.padded &&
			x.dilation == y.dilation && x.offset == y.offset && dimEqual(x.over, y.over) &&
			(!x.conv || dimEqual(x.kernel, y.kernel))
	case dConcat:
		return slices.EqualFunc(a.parts, b.parts, dimEqual)
	}
	return false
}

func occurs(v int32, d dim) bool {
	switch d.k {
	case dVar:
		return d.v == v
	case dAffine:
		return occurs(v, d.aff.over) || (d.aff.conv && occurs(v, d.aff.kernel))
	case dConcat:
		for _, p := range d.parts {
			if occurs(v, p) {
				return true
			}
		}
	}
	return false
}

// constMismatch reports two different ground dimensions. As in OCANNL's
// unify_dim and solve_dim_ineq, bases are compared before sizes: axes with
// different bases are a basis mismatch whatever their sizes.
func constMismatch(a, b dim) *shapeError {
	if a.basis != b.basis {
		if a.n == b.n {
			return fail(KindBasis, "axes of size %d have different bases: %s vs %s", a.n, basisName(a.basis), basisName(b.basis))
		}
		return fail(KindBasis, "dimension mismatch: %s vs %s, with different bases: %s vs %s", a, b, basisName(a.basis), basisName(b.basis))
	}
	return fail(KindDimMismatch, "dimension mismatch: %s vs %s", a, b)
}

func basisName(b string) string {
	switch b {
	case BasisBcast:
		return "the broadcast unit (no basis)"
	case BasisDefault:
		return "default"
	}
	return b
}

func (s *solver) unifyDim(a0, b0 dim) error {
	a, b := s.resolve(a0), s.resolve(b0)
	if dimEqual(a, b) {
		return nil
	}
	if a.k == dVar {
		s.via = s.lastVar(b0)
		return s.bindDim(a.v, b)
	}
	if b.k == dVar {
		s.via = s.lastVar(a0)
		return s.bindDim(b.v, a)
	}
	if a.k == dConst && b.k == dConst {
		return constMismatch(a, b)
	}
	if a.k == dAffine || b.k == dAffine {
		return s.unifyAffine(a, b)
	}
	return s.unifyConcat(a, b)
}

// lastVar is the last variable of d's chain of bindings (following what
// each was bound to, not the compressed values), when d is a solved
// variable; -1 otherwise.
func (s *solver) lastVar(d dim) int32 {
	if d.k != dVar {
		return -1
	}
	v := d.v
	for n := 0; n <= len(s.dims); n++ {
		e := &s.dims[v]
		if !e.solved {
			return -1
		}
		if e.last > 0 {
			v = e.last - 1
			break
		}
		if e.bound.k != dVar {
			break
		}
		v = e.bound.v
	}
	// A solved chain never changes (bound is never rewritten): remember
	// its end on each variable of it, so that long chains are walked once.
	for u := d.v; u != v; {
		e := &s.dims[u]
		if e.last == v+1 {
			break
		}
		e.last = v + 1
		if e.bound.k != dVar {
			break
		}
		u = e.bound.v
	}
	return v
}

func (s *solver) bindDim(v int32, t dim) error {
	via := s.via
	s.via = -1
	if occurs(v, t) {
		return fail(KindRankCycle, "occurs check failed: dimension variable occurs in its own definition (%v = %v)", dvar(v), t)
	}
	e := &s.dims[v]
	e.solved = true
	e.val = t
	e.bound, e.by, e.stage, e.via = t, s.cur, s.stage, via
	s.bindings++
	if e.atLeast > 0 {
		if err := s.applyAtLeast(t, e.atLeast, e.atOrigin); err != nil {
			return err
		}
	}
	if t.k == dVar {
		te := &s.dims[t.v]
		te.discardable = te.discardable && e.discardable
		if te.name == "" {
			te.name = e.name
		}
	}
	if e.hasLB {
		s.push(constraint{k: cDimIneq, d1: e.lb, d2: t, origin: e.lbOrigin})
	}
	for _, u := range e.up {
		s.push(constraint{k: cDimIneq, d1: t, d2: dvar(u.to), origin: u.origin})
	}
	for _, dn := range e.down {
		s.push(constraint{k: cDimIneq, d1: dvar(dn.to), d2: t, origin: dn.origin})
	}
	e.up, e.down = nil, nil
	return nil
}

// applyAtLeast enforces a fixed-index size lower bound on t.
func (s *solver) applyAtLeast(t dim, m int, o int32) error {
	t = s.resolve(t)
	switch t.k {
	case dConst:
		if t.n < m {
			return fail(KindFixedIndex, "fixed index %d is out of bounds for an axis of size %d (the axis needs at least %d)", m-1, t.n, m)
		}
	case dVar:
		e := &s.dims[t.v]
		if m > e.atLeast {
			e.atLeast = m
			e.atOrigin = o
		}
		if e.hasLB && e.lb.k == dConst && e.lb.n < m {
			// The variable must equal its bound or the broadcast unit: both too small.
			return fail(KindFixedIndex, "fixed index %d is out of bounds for an axis of size at most %d", m-1, e.lb.n)
		}
	case dAffine:
		// ceil(m/stride) positions of the output suffice for pure striding
		// and padded convolution.
		a := t.aff
		if !a.conv || a.padded {
			return s.applyAtLeast(a.over, (m+a.stride-1)/a.stride, o)
		}
		// A valid convolution's size depends on both parts: check it once
		// it is known.
		s.deferred = append(s.deferred, constraint{k: cAtLeast, d1: t, n: m, origin: o})
	case dConcat:
		s.deferred = append(s.deferred, constraint{k: cAtLeast, d1: t, n: m, origin: o})
	}
	return nil
}

// solveDimIneq processes res ⊑ opnd (Def. 4.2).
func (s *solver) solveDimIneq(res, op0 dim) error {
	res, op := s.resolve(res), s.resolve(op0)
	switch {
	case dimEqual(res, op): // DI-refl
		return nil
	case op.isBcast(): // DI-top
		return nil
	case res.isBcast(): // DI-pin-top
		return s.unifyDim(op, bcastUnit)
	case res.k == dAffine || op.k == dAffine || res.k == dConcat || op.k == dConcat:
		return s.unifyDim(res, op)
	case res.k == dVar && op.k == dVar: // DI-adj
		return s.addDimAdj(res.v, op.v)
	case op.k == dVar: // DI-cap
		return s.addDimLB(op.v, res)
	case res.k == dVar: // DI-pin
		s.via = s.lastVar(op0)
		return s.bindDim(res.v, op)
	}
	// DI-ground
	return constMismatch(res, op)
}

func (s *solver) addDimLB(v int32, d dim) error {
	e := &s.dims[v]
	if e.hasLB {
		if dimEqual(e.lb, d) {
			return nil
		}
		// DI-cap collapse: two distinct atoms meet only at the top.
		return s.bindDim(v, bcastUnit)
	}
	if e.atLeast > 0 && d.n < e.atLeast {
		return fail(KindFixedIndex, "fixed index %d is out of bounds: the axis is used where its size is %d", e.atLeast-1, d.n)
	}
	e.hasLB = true
	e.lb = d
	e.lbOrigin = s.cur
	for _, u := range e.up {
		s.push(constraint{k: cDimIneq, d1: d, d2: dvar(u.to), origin: u.origin})
	}
	return nil
}

func (s *solver) addDimAdj(a, b int32) error {
	ea := &s.dims[a]
	for _, u := range ea.up {
		if u.to == b {
			return nil
		}
	}
	// DI-antisym: an adjacency closing a cycle forces equality.
	if s.dimReaches(b, a) {
		return s.unifyDim(dvar(a), dvar(b))
	}
	ea.up = append(ea.up, edge{to: b, origin: s.cur})
	s.dims[b].down = append(s.dims[b].down, edge{to: a, origin: s.cur})
	if ea.hasLB {
		s.push(constraint{k: cDimIneq, d1: ea.lb, d2: dvar(b), origin: ea.lbOrigin})
	}
	return nil
}

// dimReaches reports whether to is reachable from from along ⊑ edges.
func (s *solver) dimReaches(from, to int32) bool {
	if len(s.dims[from].up) == 0 {
		return false
	}
	seen := map[int32]bool{from: true}
	stack := []int32{from}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, u := range s.dims[x].up {
			if u.to == to {
				return true
			}
			if !seen[u.to] && !s.dims[u.to].solved {
				seen[u.to] = true
				stack = append(stack, u.to)
			}
		}
	}
	return false
}

// unifyAffine handles equalities with a strided / convolution input dimension.
func (s *solver) unifyAffine(a, b dim) error {
	if a.k != dAffine {
		a, b = b, a
	}
	x := a.aff
	switch b.k {
	case dConst:
		n := b.n
		if !x.conv || x.padded {
			if n%x.stride != 0 {
				return fail(KindStride, "incompatible stride: an axis of size %d is not divisible by stride %d", n, x.stride)
			}
			return s.unifyDim(x.over, dconst(n/x.stride, b.basis))
		}
		// Valid convolution: n = stride*(o-1) + 1 + (k-1)*dilation.
		if x.kernel.k == dConst {
			if overflows(float64(x.kernel.n-1) * float64(x.dilation)) {
				return errTooLarge()
			}
			span := 1 + (x.kernel.n-1)*x.dilation
			if n < span {
				return fail(KindStride, "incompatible stride: an input axis of size %d is smaller than the kernel's span %d (kernel %d, dilation %d)", n, span, x.kernel.n, x.dilation)
			}
			if (n-span)%x.stride != 0 {
				return fail(KindStride, "incompatible stride: input size %d minus kernel span %d is not divisible by stride %d", n, span, x.stride)
			}
			basis, ok := mergeBasis(b.basis, x.kernel.basis)
			if !ok {
				return fail(KindBasis, "convolution: conflicting dimension bases between input and kernel: %s vs %s", b.basis, x.kernel.basis)
			}
			return s.unifyDim(x.over, dconst((n-span)/x.stride+1, basis))
		}
		if x.over.k == dConst {
			if overflows(float64(x.stride) * float64(x.over.n-1)) {
				return errTooLarge()
			}
			num := n - x.stride*(x.over.n-1) - 1
			if num < 0 || num%x.dilation != 0 {
				return fail(KindStride, "cannot infer kernel dimension: input %d, output %d, stride %d, dilation %d", n, x.over.n, x.stride, x.dilation)
			}
			return s.unifyDim(x.kernel, dconst(num/x.dilation+1, b.basis))
		}
		s.deferred = append(s.deferred, constraint{k: cDimEq, d1: a, d2: b, origin: s.cur})
		return nil
	case dAffine:
		y := b.aff
		if x.stride == y.stride && x.conv == y.conv && x.padded == y.padded && x.dilation == y.dilation {
			if !x.conv || x.padded {
				// n = s·o on both sides: the overs are equal.
				return s.unifyDim(x.over, y.over)
			}
			// Valid convolutions: s·o_x + d·k_x = s·o_y + d·k_y entails
			// o_x = o_y only when the kernels are equal, and k_x = k_y
			// only when the overs are; otherwise the equation waits for
			// a size (unifying both was a guess: two valid convolutions
			// with kernels 2 and 3 on one axis of 6 failed when the
			// axis was not yet known, docs/formal.md).
			switch {
			case dimEqual(x.kernel, y.kernel):
				return s.unifyDim(x.over, y.over)
			case dimEqual(x.over, y.over):
				return s.unifyDim(x.kernel, y.kernel)
			}
		} else if !x.conv && !y.conv {
			// stride_x * o_x = stride_y * o_y: one over is a stride multiple of the other.
			if x.stride%y.stride == 0 {
				return s.unifyDim(y.over, dim{k: dAffine, aff: &affineDim{stride: x.stride / y.stride, over: x.over}})
			}
			if y.stride%x.stride == 0 {
				return s.unifyDim(x.over, dim{k: dAffine, aff: &affineDim{stride: y.stride / x.stride, over: y.over}})
			}
			// Neither divides the other (2·o_x = 3·o_y): satisfiable
			// (o_x = 3t, o_y = 2t), so the equation waits for a size
			// rather than failing.
		}
	}
	s.deferred = append(s.deferred, constraint{k: cDimEq, d1: a, d2: b, origin: s.cur})
	return nil
}

// unifyConcat handles equalities with a concatenated dimension.
func (s *solver) unifyConcat(a, b dim) error {
	if a.k != dConcat {
		a, b = b, a
	}
	var xs, ys []dim
	xs = a.parts
	if b.k == dConcat {
		ys = b.parts
	} else {
		ys = []dim{b}
	}
	// Cancel structurally equal components.
	xs = slices.Clone(xs)
	ys = slices.Clone(ys)
	for i := 0; i < len(xs); i++ {
		if xs[i].k == dConst {
			continue
		}
		for j := 0; j < len(ys); j++ {
			if dimEqual(xs[i], ys[j]) {
				xs = slices.Delete(xs, i, i+1)
				ys = slices.Delete(ys, j, j+1)
				i--
				break
			}
		}
	}
	sumX, sumY := 0, 0
	var vx, vy []dim
	basis := BasisDefault
	for _, d := range xs {
		if d.k == dConst {
			if overflows(float64(sumX) + float64(d.n)) {
				return errTooLarge()
			}
			sumX += d.n
			var ok bool
			if basis, ok = mergeBasis(basis, d.basis); !ok {
				return fail(KindBasis, "concat: conflicting dimension bases: %s vs %s", basis, d.basis)
			}
		} else {
			vx = append(vx, d)
		}
	}
	for _, d := range ys {
		if d.k == dConst {
			if overflows(float64(sumY) + float64(d.n)) {
				return errTooLarge()
			}
			sumY += d.n
			var ok bool
			if basis, ok = mergeBasis(basis, d.basis); !ok {
				return fail(KindBasis, "concat: conflicting dimension bases: %s vs %s", basis, d.basis)
			}
		} else {
			vy = append(vy, d)
		}
	}
	switch {
	case len(vx) == 0 && len(vy) == 0:
		if sumX != sumY {
			return fail(KindConcat, "concatenation size mismatch: components add up to %d but the axis has size %d", sumX, sumY)
		}
		return nil
	case len(vx) == 1 && len(vy) == 0:
		if sumY < sumX {
			return fail(KindConcat, "concat: components exceed the concatenated size (%d > %d)", sumX, sumY)
		}
		return s.unifyDim(vx[0], dconst(sumY-sumX, basis))
	case len(vy) == 1 && len(vx) == 0:
		if sumX < sumY {
			return fail(KindConcat, "concat: components exceed the concatenated size (%d > %d)", sumY, sumX)
		}
		return s.unifyDim(vy[0], dconst(sumX-sumY, basis))
	case len(vx) == 0 && sumX < sumY, len(vy) == 0 && sumY < sumX:
		return fail(KindConcat, "concat: components exceed the concatenated size")
	case len(vx) == len(vy) && sumX == 0 && sumY == 0 && b.k == dConcat && allVars(vx) && allVars(vy):
		for i := range vx {
			if err := s.unifyDim(vx[i], vy[i]); err != nil {
				return err
			}
		}
		return nil
	case len(vy) == 1 && vy[0].k == dVar && sumY == 0 && b.k != dConcat:
		d, err := simplifyConcat(xs)
		if err != nil {
			return err
		}
		return s.bindDim(vy[0].v, d)
	}
	s.deferred = append(s.deferred, constraint{k: cDimEq, d1: a, d2: b, origin: s.cur})
	return nil
}

func allVars(ds []dim) bool {
	for _, d := range ds {
		if d.k != dVar {
			return false
		}
	}
	return true
}

// ---------------------------------------------------------------------------
// Rows

// resolveRow splices solved row variables (Def. 3.2).
func (s *solver) resolveRow(r row) row {
	for r.open() {
		e := &s.rows[r.v]
		if !e.solved {
			break
		}
		val := s.resolveRow(e.val)
		e.val = val
		beg := make([]dim, 0, len(r.beg)+len(val.beg))
		beg = append(beg, r.beg...)
		beg = append(beg, val.beg...)
		end := make([]dim, 0, len(r.end)+len(val.end))
		end = append(end, val.end...)
		end = append(end, r.end...)
		r = row{beg: beg, v: val.v, end: end}
	}
	return r
}

// maxAxes bounds the number of axes of any row: a backstop that turns a
// diverging (rank-growing) run into an error. Real programs stay far below.
const maxAxes = 1024

func (s *solver) bindRow(v int32, val row) error {
	if val.flanks() > maxAxes {
		return fail(KindRankCycle, "Infinite number of axes: a row grew beyond %d axes (a rank cycle among row variables)", maxAxes)
	}
	if val.open() {
		if val.v == v {
			return fail(KindRankCycle, "Infinite number of axes by self-reference")
		}
		if err := s.rank.add(v, val.v, val.flanks()); err != nil {
			return err
		}
	}
	e := &s.rows[v]
	e.solved = true
	e.val = val
	e.bound, e.by, e.stage = val, s.cur, s.stage
	s.bindings++
	if val.open() {
		te := &s.rows[val.v]
		if te.owner < 0 {
			te.owner, te.kindIdx = e.owner, e.kindIdx
		}
	}
	for _, b := range e.lbs {
		s.push(constraint{k: cRowIneq, r1: b.r, r2: val, origin: b.origin})
	}
	for _, u := range e.up {
		s.push(constraint{k: cRowIneq, r1: val, r2: openRow(u.to), origin: u.origin})
	}
	for _, d := range e.down {
		s.push(constraint{k: cRowIneq, r1: openRow(d.to), r2: val, origin: d.origin})
	}
	e.lbs, e.up, e.down = nil, nil, nil
	return nil
}

func rankErr(a, b row) *shapeError {
	return fail(KindRankMismatch, "number of axes mismatch: %d axes %v vs %d axes %v", a.flanks(), a, b.flanks(), b)
}

// unifyRow processes r1 ≈ r2 (Def. 4.3, equality cases (a)–(d)).
func (s *solver) unifyRow(r1, r2 row) error {
	r1, r2 = s.resolveRow(r1), s.resolveRow(r2)
	if !r1.open() && r2.open() {
		r1, r2 = r2, r1
	}
	switch {
	case !r1.open(): // (a) both closed
		f1, f2 := r1.flat(), r2.flat()
		if len(f1) != len(f2) {
			return rankErr(r1, r2)
		}
		return s.unifyDims(f1, f2, r1, r2)
	case !r2.open(): // (b) open vs closed
		f := r2.flat()
		l, r := len(r1.beg), len(r1.end)
		if l+r > len(f) {
			return rankErr(r1, r2)
		}
		if err := s.unifyDims(r1.beg, f[:l], r1, r2); err != nil {
			return err
		}
		if err := s.unifyDims(r1.end, f[len(f)-r:], r1, r2); err != nil {
			return err
		}
		mid := f[l : len(f)-r]
		split := len(r2.beg)
		var val row
		val.v = -1
		if split >= l && split <= len(f)-r {
			val.beg = slices.Clone(f[l:split])
			val.end = slices.Clone(f[split : len(f)-r])
		} else {
			val.end = slices.Clone(mid)
		}
		return s.bindRow(r1.v, val)
	case r1.v == r2.v: // (d) same variable
		if r1.flanks() != r2.flanks() {
			return fail(KindRankCycle, "Infinite number of axes by self-reference: %v ≈ %v", r1, r2)
		}
		if len(r1.beg) == len(r2.beg) {
			if err := s.unifyDims(r1.beg, r2.beg, r1, r2); err != nil {
				return err
			}
			return s.unifyDims(r1.end, r2.end, r1, r2)
		}
		s.deferred = append(s.deferred, constraint{k: cRowEq, r1: r1, r2: r2, origin: s.cur})
		return nil
	}
	// (c) both open, different variables.
	lo := min(len(r1.beg), len(r2.beg))
	ro := min(len(r1.end), len(r2.end))
	if err := s.unifyDims(r1.beg[:lo], r2.beg[:lo], r1, r2); err != nil {
		return err
	}
	if err := s.unifyDims(r1.end[len(r1.end)-ro:], r2.end[len(r2.end)-ro:], r1, r2); err != nil {
		return err
	}
	sl1, sl2 := r1.beg[lo:], r2.beg[lo:]
	sr1, sr2 := r1.end[:len(r1.end)-ro], r2.end[:len(r2.end)-ro]
	sur1 := len(sl1)+len(sr1) > 0
	sur2 := len(sl2)+len(sr2) > 0
	switch {
	case sur1 && sur2: // split surpluses: defer
		s.deferred = append(s.deferred, constraint{k: cRowEq, r1: r1, r2: r2, origin: s.cur})
		return nil
	case sur1:
		return s.bindRow(r2.v, row{beg: slices.Clone(sl1), v: r1.v, end: slices.Clone(sr1)})
	case sur2:
		return s.bindRow(r1.v, row{beg: slices.Clone(sl2), v: r2.v, end: slices.Clone(sr2)})
	}
	if r1.v < r2.v {
		return s.bindRow(r2.v, openRow(r1.v))
	}
	return s.bindRow(r1.v, openRow(r2.v))
}

func (s *solver) unifyDims(a, b []dim, ra, rb row) error {
	for i := range a {
		if err := s.unifyDim(a[i], b[i]); err != nil {
			se, ok := err.(*shapeError)
			if !ok {
				return err
			}
			// Name the spec label the sizes disagree on, and show the
			// spec's row by its labels.
			if se.kind == KindDimMismatch {
				if m := s.labelMismatch(a[i], b[i], ra, rb); m != "" {
					return fail(se.kind, "%s", m)
				}
				if m := s.labelMismatch(b[i], a[i], rb, ra); m != "" {
					return fail(se.kind, "%s", m)
				}
			}
			return fail(se.kind, "%s (matching rows %s and %s)", se.msg, s.rowString(ra), s.rowString(rb))
		}
	}
	return nil
}

// labelMismatch describes a size mismatch between the spec label l
// (the variable of a label of spec row rl) and the axis t of row rt, or
// returns "" when l is not a label or the sizes are not both known.
func (s *solver) labelMismatch(l, t dim, rl, rt row) string {
	name := s.labelOf(l)
	vl, vt := s.resolve(l), s.resolve(t)
	if name == "" || vl.k != dConst || vt.k != dConst {
		return ""
	}
	name = spec.Clip(name)
	return fmt.Sprintf("dimension mismatch for label %s: %s is %s but the matching axis is %s (spec row %s against %s)",
		name, name, vl, vt, s.labelRowString(rl), s.rowString(rt))
}

// labelOf returns the spec label whose own variable d is, or "".
func (s *solver) labelOf(d dim) string {
	if d.k == dVar && s.dims[d.v].label {
		return s.dims[d.v].name
	}
	return ""
}

// labelRowString prints a spec row for messages: its labels by name, its
// other dims as rowString does.
func (s *solver) labelRowString(r row) string {
	one := func(d dim) string {
		if l := s.labelOf(d); l != "" {
			return l
		}
		return s.dimString(s.resolve(d))
	}
	var beg, end []string
	for _, d := range r.beg {
		beg = append(beg, one(d))
	}
	mid := ""
	if r.open() {
		mid = "..."
	}
	for _, d := range r.end {
		end = append(end, one(d))
	}
	return rowText(beg, mid, end)
}

func (s *solver) ineqDims(res, op []dim, rr, ro row) error {
	for i := range res {
		if err := s.solveDimIneq(res[i], op[i]); err != nil {
			if se, ok := err.(*shapeError); ok {
				return fail(se.kind, "%s (result row %s, operand row %s)", se.msg, s.rowString(rr), s.rowString(ro))
			}
			return err
		}
	}
	return nil
}

// rowString prints a row for messages: solved dims as sizes, unsolved
// variables by their spec label (or "?").
func (s *solver) rowString(r row) string {
	r = s.resolveRowDims(r)
	var beg, end []string
	for _, d := range r.beg {
		beg = append(beg, s.dimString(d))
	}
	mid := ""
	if r.open() {
		mid = "..."
	}
	for _, d := range r.end {
		end = append(end, s.dimString(d))
	}
	return rowText(beg, mid, end)
}

func (s *solver) dimString(d dim) string {
	switch d.k {
	case dVar:
		if n := s.dims[d.v].name; n != "" {
			return n
		}
		return "?"
	case dAffine:
		c := *d.aff
		c.over = dconst(0, "")
		x := dim{k: dAffine, aff: &c}.String()
		x = strings.Replace(x, "0", s.dimString(d.aff.over), 1)
		if c.conv {
			x = strings.Replace(x, d.aff.kernel.String(), s.dimString(d.aff.kernel), 1)
		}
		return x
	case dConcat:
		p := make([]string, len(d.parts))
		for i, x := range d.parts {
			p[i] = s.dimString(x)
		}
		return strings.Join(p, "^")
	}
	return d.String()
}

// resolveRowDims resolves a row and its dimensions.
func (s *solver) resolveRowDims(r row) row {
	r = s.resolveRow(r)
	out := row{v: r.v, beg: make([]dim, len(r.beg)), end: make([]dim, len(r.end))}
	for i, d := range r.beg {
		out.beg[i] = s.resolve(d)
	}
	for i, d := range r.end {
		out.end[i] = s.resolve(d)
	}
	return out
}

// solveRowIneq processes res ⊑ op (Def. 4.3, inequality cases (i)–(iv)).
func (s *solver) solveRowIneq(res, op row) error {
	res, op = s.resolveRow(res), s.resolveRow(op)
	if !res.open() {
		return s.ineqClosedResult(res, op)
	}
	// Result open.
	if op.open() && op.v == res.v {
		return s.ineqSameVar(res, op)
	}
	lb, le := len(op.beg), len(op.end)
	rb, re := len(res.beg), len(res.end)
	if k := lb + le - rb - re; k > 0 {
		return s.ineqDeficit(res, op, k)
	}
	if lb > rb || le > re {
		return s.ineqCrossFlank(res, op)
	}
	return s.ineqOpenResult(res, op)
}

// ineqClosedResult is res ⊑ op for a closed result (cases (i) and (ii)).
func (s *solver) ineqClosedResult(res, op row) error {
	f := res.flat()
	lb, le := len(op.beg), len(op.end)
	if lb+le > len(f) {
		return fail(KindRankMismatch, "too many axes in an operand: the operand has %d axes %s but the result only %d %s (maybe use *. instead of *?)",
			lb+le, s.rowString(op), len(f), s.rowString(res))
	}
	if err := s.ineqDims(f[:lb], op.beg, res, op); err != nil {
		return err
	}
	if err := s.ineqDims(f[len(f)-le:], op.end, res, op); err != nil {
		return err
	}
	if !op.open() {
		return nil // (ii) the operand's inserted positions are unconstrained
	}
	// (i) residue cap on the operand's variable, inheriting the result's split.
	var val row
	val.v = -1
	split := len(res.beg)
	if split >= lb && split <= len(f)-le {
		val.beg = slices.Clone(f[lb:split])
		val.end = slices.Clone(f[split : len(f)-le])
	} else {
		val.end = slices.Clone(f[lb : len(f)-le])
	}
	return s.addRowLB(op.v, val)
}

// ineqSameVar is res ⊑ op for an open result whose variable is the
// operand's.
func (s *solver) ineqSameVar(res, op row) error {
	if op.flanks() > res.flanks() {
		// ρ must have more axes than itself: the self-cyclic divergence.
		return fail(KindRankCycle, "Infinite number of axes by self-reference: %s ⊑ %s", s.rowString(res), s.rowString(op))
	}
	if len(res.beg) == len(op.beg) && len(res.end) == len(op.end) {
		if err := s.ineqDims(res.beg, op.beg, res, op); err != nil {
			return err
		}
		return s.ineqDims(res.end, op.end, res, op)
	}
	s.deferred = append(s.deferred, constraint{k: cRowIneq, r1: res, r2: op, origin: s.cur})
	return nil
}

// ineqDeficit is res ⊑ op for an open result shorter than the operand's
// known flanks by k > 0 axes in total (case (iv)).
func (s *solver) ineqDeficit(res, op row, k int) error {
	le := len(op.end)
	re := len(res.end)
	// (iv) deficit rule: the result is shorter than the operand's known
	// flanks by k axes in total, so its variable grows by exactly k
	// fresh axes (Def. 4.3(iv); the result row is read flat, as in the
	// closed-result case above). The fresh axes go to the trailing
	// flank as far as the operand's trailing flank overhangs the
	// result's, the rest to the leading flank (OCANNL's budget). They
	// are not sized per flank: a result flank that is longer than the
	// operand's already faces the operand's other flank once the
	// variable closes (x ++ "a, ..o.. => a, ..o.." is [4]·◇·[3] and
	// meets a [4,3] operand at rank 2), and growing each flank
	// separately would commit axes that no constraint asks for.
	kr := min(k, max(0, le-re))
	kl := k - kr
	if op.open() {
		if err := s.rank.add(res.v, op.v, k); err != nil {
			return err
		}
	}
	tv := s.newRowVar(s.rows[res.v].owner, s.rows[res.v].kindIdx, s.cur)
	s.rows[tv].template = true
	val := row{v: tv}
	for range kl {
		val.beg = append(val.beg, s.newDim("", s.cur))
	}
	for range kr {
		val.end = append(val.end, s.newDim("", s.cur))
	}
	if err := s.bindRow(res.v, val); err != nil {
		return err
	}
	// Re-process at once (not at the back of the queue): the residue's
	// zero-weight anchor edge must be in the rank graph before any other
	// constraint grows the operand's variable, or a rank cycle could
	// spiral without ever closing a cycle in the graph.
	return s.solveRowIneq(res, op)
}

// ineqCrossFlank is res ⊑ op for an open result with as many known axes as
// the operand's flanks where one of the operand's flanks overhangs the
// result's.
func (s *solver) ineqCrossFlank(res, op row) error {
	lb, le := len(op.beg), len(op.end)
	rb, re := len(res.beg), len(res.end)
	// Cross-flank: the result has as many known axes as the operand's
	// flanks, but one of the operand's flanks overhangs the result's
	// flank on its side, so the overhanging operand axes face either the
	// result variable's content or the result's other flank, depending
	// on the variable's value. Only the outer overlaps are certain; the
	// rest waits until the variable is solved, or closed at stage 6 (the
	// least-material value), where the constraint becomes the
	// closed-result case above (formal core §10, "the open-result /
	// closed-operand cross-flank cases defer ..., reducing to (2) at
	// closing"; an open operand defers likewise, since its residue cap
	// depends on the same value).
	ob, oe := min(lb, rb), min(le, re)
	if err := s.ineqDims(res.beg[:ob], op.beg[:ob], res, op); err != nil {
		return err
	}
	if err := s.ineqDims(res.end[re-oe:], op.end[le-oe:], res, op); err != nil {
		return err
	}
	if !op.open() && s.allBcastDims(op.beg[ob:]) && s.allBcastDims(op.end[:le-oe]) {
		// The overhanging operand axes are claim-free units (a number
		// broadcast into the row): whatever result axes they face, t ⊑ 1_∅
		// holds (DI-top), so nothing waits for the variable.
		return nil
	}
	if op.open() && lb+le == rb+re {
		// Equal known totals entail rank(ρ_res) ≥ rank(ρ_op).
		if err := s.rank.add(res.v, op.v, 0); err != nil {
			return err
		}
	}
	s.deferred = append(s.deferred, constraint{k: cRowIneq, r1: res, r2: op, origin: s.cur})
	return nil
}

// ineqOpenResult is res ⊑ op for an open result whose flanks cover the
// operand's (case (iii)): the residue bounds the operand's variable.
func (s *solver) ineqOpenResult(res, op row) error {
	lb, le := len(op.beg), len(op.end)
	if err := s.ineqDims(res.beg[:lb], op.beg, res, op); err != nil {
		return err
	}
	if err := s.ineqDims(res.end[len(res.end)-le:], op.end, res, op); err != nil {
		return err
	}
	if !op.open() {
		return nil
	}
	residue := row{beg: slices.Clone(res.beg[lb:]), v: res.v, end: slices.Clone(res.end[:len(res.end)-le])}
	if residue.flanks() == 0 {
		return s.addRowAdj(res.v, op.v)
	}
	return s.addRowLB(op.v, residue)
}

func (s *solver) addRowLB(v int32, r row) error {
	e := &s.rows[v]
	for _, b := range e.lbs {
		if rowTermEqual(s.resolveRow(b.r), r) {
			return nil
		}
	}
	e.lbs = append(e.lbs, rowBound{r: r, origin: s.cur})
	for _, u := range e.up {
		s.push(constraint{k: cRowIneq, r1: r, r2: openRow(u.to), origin: u.origin})
	}
	return nil
}

func (s *solver) addRowAdj(a, b int32) error {
	ea := &s.rows[a]
	for _, u := range ea.up {
		if u.to == b {
			return nil
		}
	}
	for _, u := range s.rows[b].up {
		if u.to == a { // one-step row antisymmetry
			return s.unifyRow(openRow(a), openRow(b))
		}
	}
	if err := s.rank.add(a, b, 0); err != nil {
		return err
	}
	ea.up = append(ea.up, edge{to: b, origin: s.cur})
	s.rows[b].down = append(s.rows[b].down, edge{to: a, origin: s.cur})
	for _, lb := range ea.lbs {
		s.push(constraint{k: cRowIneq, r1: lb.r, r2: openRow(b), origin: lb.origin})
	}
	return nil
}

func rowTermEqual(a, b row) bool {
	return a.v == b.v && slices.EqualFunc(a.beg, b.beg, dimEqual) && slices.EqualFunc(a.end, b.end, dimEqual)
}

// checkTotal enforces that the product of a row's dims equals c.n.
func (s *solver) checkTotal(c constraint) error {
	r := s.resolveRow(c.r1)
	prod := 1
	var unknown []dim
	for _, d := range r.flat() {
		d = s.resolve(d)
		if d.k == dConst {
			if overflows(float64(prod) * float64(d.n)) {
				return fail(KindTotalElems, "total elements constraint: the axes %s have too many elements", s.rowString(r))
			}
			prod *= d.n
		} else {
			unknown = append(unknown, d)
		}
	}
	if prod == 0 || (c.n%prod != 0) {
		return fail(KindTotalElems, "total elements constraint: %d is not divisible by the known axes' product %d", c.n, prod)
	}
	if !r.open() && len(unknown) == 0 {
		if prod != c.n {
			return fail(KindTotalElems, "total elements mismatch: the axes %s have %d elements, expected %d", s.rowString(r), prod, c.n)
		}
		return nil
	}
	if !r.open() && len(unknown) == 1 {
		return s.unifyDim(unknown[0], dconst(c.n/prod, BasisDefault))
	}
	s.deferred = append(s.deferred, constraint{k: cTotal, r1: r, n: c.n, origin: c.origin})
	return nil
}

// checkProduct enforces c.d1 = the product of c.r1's dims (flatten: the
// result's axis and the operand's output row). A closed row of known dims
// gives d1 its product; a closed row of one axis is that axis (keeping
// its basis, or its variable); a closed row with a single unknown dim
// and a known d1 gives that dim by division. Anything else waits.
func (s *solver) checkProduct(c constraint) error {
	r := s.resolveRow(c.r1)
	ds := r.flat()
	if !r.open() && len(ds) == 0 {
		return fail(KindRankMismatch, "flatten: the operand has no output axes to flatten")
	}
	if !r.open() && len(ds) == 1 {
		return s.unifyDim(c.d1, ds[0])
	}
	prod := 1
	var unknown []dim
	for _, d := range ds {
		d = s.resolve(d)
		if d.k != dConst {
			unknown = append(unknown, d)
			continue
		}
		if overflows(float64(prod) * float64(d.n)) {
			return fail(KindSize, "flatten: the axes %s have too many elements", s.rowString(r))
		}
		prod *= d.n
	}
	if !r.open() && len(unknown) == 0 {
		return s.unifyDim(c.d1, dconst(prod, BasisDefault))
	}
	if t := s.resolve(c.d1); t.k == dConst {
		if t.n%prod != 0 {
			return fail(KindTotalElems, "flatten: the result's axis has size %d, not a multiple of %d, the product of the known axes of %s", t.n, prod, s.rowString(r))
		}
		if !r.open() && len(unknown) == 1 {
			return s.unifyDim(unknown[0], dconst(t.n/prod, BasisDefault))
		}
	}
	s.deferred = append(s.deferred, constraint{k: cProduct, d1: c.d1, r1: r, origin: c.origin})
	return nil
}

func (s *solver) allBcastDims(ds []dim) bool {
	for _, d := range ds {
		if !s.resolve(d).isBcast() {
			return false
		}
	}
	return true
}

// overflows reports an axis size (or element count) beyond what an int
// holds with room to spare: no such tensor can be allocated, and the
// integer arithmetic would wrap around.
func overflows(x float64) bool { return x >= 1<<62 || x <= -(1<<62) }

func errTooLarge() *shapeError {
	return fail(KindDimMismatch, "an axis size is too large (it overflows the integer range)")
}
