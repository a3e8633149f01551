package inference

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/ocannlgen/ocannlgen/spec"
)

// Projection inference (seed document 2; documents 3 and 4 for the derived
// indices). For each operation, independently:
//
//  1. every axis of every participating tensor occurrence gets a fresh
//     projection id (a node), so that identifications made elsewhere in
//     the program never leak into this operation ("global sizes, local
//     identities");
//  2. the operation's constraints are re-derived against the solved shapes
//     and elaborated to projection equations: Eq (co-iterate), Pin (a fixed
//     index), Iter (must be traversed: every axis, and every label of an
//     affine index, which may have no axis of its own), Force (a
//     concatenation component: iterated even at size 1); broadcasting
//     severs (the size-1 operand axis is pinned to 0 instead of unified);
//  3. the equations are solved by union-find with pins and an iterate set,
//     and each class is labeled: its pin, else a fresh iterator when
//     iterated with size > 1 (or forced), else the fixed index 0;
//  4. the second stratum evaluates derived indices against the labels:
//     affine indices (stride*over + dilation*kernel + offset - left
//     padding) and concatenations; padding margins are folded with max;
//  5. iterators are numbered i0, i1, ... in factor order, factors in order
//     of first occurrence scanning the LHS and then each RHS in memory
//     order; iterators that share a concatenated index are coupled into
//     one factor whose components run in sequence.

type peqKind uint8

const (
	peqEq peqKind = iota
	peqPin
	peqIter
	peqForce
)

// peq is one projection equation.
type peq struct {
	k    peqKind
	a, b int // node ids (b for peqEq)
	val  int // pin value
}

// derivedIdx is an index computed from other classes' labels.
type derivedIdx struct {
	affine   bool
	stride   int
	over     int // node
	conv     bool
	padded   bool
	dilation int
	kernel   int // node
	offset   int
	parts    []derivedPart // concat
	// sum, when not nil (with affine set), is a flattened index: the sum
	// of coeff*node over its terms (OpFlatten); over and kernel are -1.
	sum []derivedTerm
}

// derivedTerm is one term coeff*node of a flattened index.
type derivedTerm struct {
	coeff, node int
}

type derivedPart struct {
	node int // -1 for an integer block
	size int
}

// projProblem is the elaborated projection problem of one operation.
type projProblem struct {
	size    []int // per node
	occ     [][]int
	eqs     []peq
	derived map[int]*derivedIdx
	op      *Op
	g       *Graph
}

func (p *projProblem) node(size int) int {
	p.size = append(p.size, size)
	return len(p.size) - 1
}

func projErr(op *Op, format string, args ...any) error {
	return &Error{Kind: KindDimMismatch, Pos: op.Pos, Op: op.Desc, Msg: "projection: " + fmt.Sprintf(format, args...)}
}

// DeriveProjections computes the projection record of every operation of
// an inferred graph (Op.Proj) and the padding margins of tensors read by
// padded convolutions (Tensor.Padding).
func DeriveProjections(g *Graph) error {
	return deriveProjections(g, Order{})
}

// deriveProjections is DeriveProjections processing the operations, and
// each operation's projection equations, in the order o gives.
func deriveProjections(g *Graph, o Order) error {
	for _, t := range g.Tensors {
		t.Padding = nil
	}
	for _, op := range o.ops(g.Ops) {
		prob, err := elaborate(g, op)
		if err != nil {
			return err
		}
		prob.eqs = o.apply(prob.eqs)
		proj, pads, err := prob.solve()
		if err != nil {
			return err
		}
		if op.Kind == OpGather {
			gatherIndex(op, proj)
		}
		op.Proj = proj
		for slot, axes := range pads {
			t := g.Tensors[prob.tensorOf(slot)]
			for ax, pd := range axes {
				if pd == (Padding{}) {
					continue
				}
				if t.Padding == nil {
					t.Padding = make([]Padding, len(t.Shape.Dims()))
				}
				t.Padding[ax].Left = max(t.Padding[ax].Left, pd.Left)
				t.Padding[ax].Right = max(t.Padding[ax].Right, pd.Right)
				n := t.Shape.Dims()[ax].Size
				if overflows(float64(n) + float64(t.Padding[ax].Left) + float64(t.Padding[ax].Right)) {
					return &Error{Kind: KindDimMismatch, Pos: op.Pos, Op: op.Desc,
						Msg: fmt.Sprintf("the padded axis %d of %s is too large (size %d plus margins %d and %d overflow the integer range)", ax, t.Name, n, t.Padding[ax].Left, t.Padding[ax].Right)}
				}
			}
		}
	}
	return nil
}

// tensorOf maps an occurrence slot (0 = LHS, i+1 = RHS i) to its tensor.
func (p *projProblem) tensorOf(slot int) int {
	if slot == 0 {
		return p.op.LHS
	}
	return p.op.RHS[slot-1]
}

// rowNodes returns the nodes of row kind k of an occurrence, split into
// its leading and trailing flanks.
func (p *projProblem) rowNodes(slot int, k spec.Kind) (beg, end []int) {
	t := p.g.Tensors[p.tensorOf(slot)]
	nb, no := len(t.Shape.Batch), len(t.Shape.Output)
	var lo, hi int
	switch k {
	case spec.Batch:
		lo, hi = 0, nb
	case spec.Output:
		lo, hi = nb, nb+no
	default:
		lo, hi = nb+no, len(p.occ[slot])
	}
	nodes := p.occ[slot][lo:hi]
	split := min(t.Split[k], len(nodes))
	return nodes[:split], nodes[split:]
}

func (p *projProblem) rowAll(slot int, k spec.Kind) []int {
	b, e := p.rowNodes(slot, k)
	return append(append([]int{}, b...), e...)
}

func elaborate(g *Graph, op *Op) (*projProblem, error) {
	p := &projProblem{op: op, g: g, derived: map[int]*derivedIdx{}}
	slots := append([]int{op.LHS}, op.RHS...)
	for _, tid := range slots {
		var nodes []int
		for _, d := range g.Tensors[tid].Shape.Dims() {
			nodes = append(nodes, p.node(d.Size))
		}
		p.occ = append(p.occ, nodes)
	}
	// Rule 6 (terminal markers): every axis that exists is traversed.
	for _, nodes := range p.occ {
		for _, n := range nodes {
			p.eqs = append(p.eqs, peq{k: peqIter, a: n})
		}
	}
	switch op.Kind {
	case OpPointwise:
		for i := range op.RHS {
			for k := range 3 {
				if err := p.ineq(0, i+1, spec.Kind(k), spec.Kind(k)); err != nil {
					return nil, err
				}
			}
		}
	case OpCompose:
		steps := []struct {
			res, op int
			rk, ok  spec.Kind
		}{
			{1, 2, spec.Input, spec.Output},
			{0, 1, spec.Batch, spec.Batch},
			{0, 2, spec.Batch, spec.Batch},
			{0, 2, spec.Input, spec.Input},
			{0, 1, spec.Output, spec.Output},
		}
		for _, st := range steps {
			if err := p.ineq(st.res, st.op, st.rk, st.ok); err != nil {
				return nil, err
			}
		}
	case OpTranspose:
		for _, st := range [][2]spec.Kind{{spec.Batch, spec.Batch}, {spec.Input, spec.Output}, {spec.Output, spec.Input}} {
			if err := p.ineq(0, 1, st[0], st[1]); err != nil {
				return nil, err
			}
		}
	case OpSlice:
		lb, rb := p.rowAll(0, spec.Batch), p.rowAll(1, spec.Batch)
		if len(rb) != len(lb)+1 {
			return nil, projErr(op, "slice: batch rows of %d and %d axes", len(lb), len(rb))
		}
		p.eqs = append(p.eqs, peq{k: peqPin, a: rb[0], val: op.Index})
		if err := p.eqList(lb, rb[1:]); err != nil {
			return nil, err
		}
		for _, k := range []spec.Kind{spec.Input, spec.Output} {
			if err := p.eqList(p.rowAll(0, k), p.rowAll(1, k)); err != nil {
				return nil, err
			}
		}
	case OpStack:
		kind := spec.Kind(op.Index)
		lhs := p.rowAll(0, kind)
		if len(lhs) == 0 {
			return nil, projErr(op, "stacking: the result has no new axis")
		}
		d := &derivedIdx{}
		for range op.RHS {
			c := p.node(1)
			p.eqs = append(p.eqs, peq{k: peqForce, a: c})
			d.parts = append(d.parts, derivedPart{node: c, size: 1})
		}
		p.derived[lhs[0]] = d
		for i := range op.RHS {
			for k := range 3 {
				l := p.rowAll(0, spec.Kind(k))
				if spec.Kind(k) == kind {
					l = l[1:]
				}
				if err := p.eqList(l, p.rowAll(i+1, spec.Kind(k))); err != nil {
					return nil, err
				}
			}
		}
	case OpFlatten:
		if err := p.flatten(); err != nil {
			return nil, err
		}
	case OpEinsum, OpBlock:
		if err := p.spec(); err != nil {
			return nil, err
		}
	case OpGather:
		if err := p.spec(); err != nil {
			return nil, err
		}
		if err := p.gatherPin(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// flatten elaborates `flatten x`: the batch and input rows co-iterate, and
// the result's one output axis is the row-major offset of x's output
// axes, sum of i_k * (the product of the sizes after axis k): the axes
// keep their own iterators (rule 6) and the result's axis is derived.
func (p *projProblem) flatten() error {
	for _, k := range []spec.Kind{spec.Batch, spec.Input} {
		if err := p.eqList(p.rowAll(0, k), p.rowAll(1, k)); err != nil {
			return err
		}
	}
	lo, ro := p.rowAll(0, spec.Output), p.rowAll(1, spec.Output)
	if len(lo) != 1 || len(ro) == 0 {
		return projErr(p.op, "flatten: a result of %d output axes from an operand of %d", len(lo), len(ro))
	}
	d := &derivedIdx{affine: true, over: -1, kernel: -1, sum: make([]derivedTerm, len(ro))}
	stride := 1
	for i := len(ro) - 1; i >= 0; i-- {
		d.sum[i] = derivedTerm{coeff: stride, node: ro[i]}
		stride *= p.size[ro[i]]
	}
	if stride != p.size[lo[0]] {
		return projErr(p.op, "flatten: the result's axis has size %d, the operand's output axes %d cells", p.size[lo[0]], stride)
	}
	p.derived[lo[0]] = d
	return nil
}

func (p *projProblem) eqList(a, b []int) error {
	if len(a) != len(b) {
		return projErr(p.op, "rows of %d and %d axes cannot be matched", len(a), len(b))
	}
	for i := range a {
		p.eqs = append(p.eqs, peq{k: peqEq, a: a[i], b: b[i]})
	}
	return nil
}

// ineq elaborates a row inequality res ⊑ op (rules 2, 3, 5): the operand's
// flanks pair with the result's axes from the outer edges; a size-1 operand
// axis is severed and pinned to 0 (broadcast), other pairs co-iterate.
func (p *projProblem) ineq(resSlot, opSlot int, rk, ok spec.Kind) error {
	res := p.rowAll(resSlot, rk)
	ob, oe := p.rowNodes(opSlot, ok)
	if len(ob)+len(oe) > len(res) {
		return projErr(p.op, "operand row of %d axes against a result row of %d", len(ob)+len(oe), len(res))
	}
	pair := func(r, o int) {
		if p.size[o] == 1 && p.size[r] != 1 || p.size[o] == 1 && p.size[r] == 1 {
			p.eqs = append(p.eqs, peq{k: peqPin, a: o, val: 0})
			return
		}
		p.eqs = append(p.eqs, peq{k: peqEq, a: r, b: o})
	}
	for i, o := range ob {
		pair(res[i], o)
	}
	for i, o := range oe {
		pair(res[len(res)-len(oe)+i], o)
	}
	return nil
}

// spec elaborates an einsum or block: the spec's rows are matched against
// the occurrences' solved rows (the local re-solve: row variables take the
// middle of the row, labels take the aligned axes).
func (p *projProblem) spec() error {
	sp := p.op.Spec
	labels := map[string]int{}
	label := func(name string) int {
		if n, ok := labels[name]; ok {
			return n
		}
		n := p.node(p.op.Labels[name])
		labels[name] = n
		return n
	}
	rowvars := map[string][]int{}
	slotSpec := func(slot int) *spec.Slot {
		if slot == 0 {
			return &sp.LHS
		}
		return &sp.RHS[slot-1]
	}
	axis := func(ax spec.Axis, n int) {
		switch ax.Kind {
		case spec.AxisLabel:
			p.eqs = append(p.eqs, peq{k: peqEq, a: label(ax.Label), b: n})
		case spec.AxisFixed:
			p.eqs = append(p.eqs, peq{k: peqPin, a: n, val: ax.Fixed})
		case spec.AxisAffine:
			// The affine axis itself gets no loop (its index is computed in
			// stratum 2), but its labels are traversed: rule 6 applied to
			// the label's own range. A label that occurs only inside
			// affine indices (a pooling window written `2*o<+w` with no
			// window operand) is unified with no axis, so without this
			// marker its class would label Fix 0 and the kernel term
			// would be dropped. Its size is the label's solved dim, as for
			// a label on an RHS axis that the LHS omits (a reduction).
			a := ax.Affine
			d := &derivedIdx{affine: true, stride: a.Stride, over: label(a.Over), offset: a.Offset, kernel: -1}
			p.eqs = append(p.eqs, peq{k: peqIter, a: d.over})
			if a.Conv != nil {
				d.conv, d.padded, d.dilation, d.kernel = true, a.Conv.Padded, a.Conv.Dilation, label(a.Conv.Kernel)
				p.eqs = append(p.eqs, peq{k: peqIter, a: d.kernel})
			}
			p.derived[n] = d
		case spec.AxisConcat:
			d := &derivedIdx{}
			for _, c := range ax.Concat {
				if c.Label == "" {
					d.parts = append(d.parts, derivedPart{node: -1, size: c.Size})
					continue
				}
				ln := label(c.Label)
				p.eqs = append(p.eqs, peq{k: peqForce, a: ln})
				d.parts = append(d.parts, derivedPart{node: ln, size: p.op.Labels[c.Label]})
			}
			p.derived[n] = d
		}
	}
	for slot := range p.occ {
		ss := slotSpec(slot)
		for k := range 3 {
			r := ss.Rows[k]
			nodes := p.rowAll(slot, spec.Kind(k))
			nb, ne := len(r.Beg), len(r.End)
			if nb+ne > len(nodes) || (!r.HasVar && nb+ne != len(nodes)) {
				return projErr(p.op, "spec row %d does not match the solved row of %d axes", k, len(nodes))
			}
			for i, ax := range r.Beg {
				axis(ax, nodes[i])
			}
			for i, ax := range r.End {
				axis(ax, nodes[len(nodes)-ne+i])
			}
			if r.HasVar {
				mid := nodes[nb : len(nodes)-ne]
				if prev, ok := rowvars[r.Var]; ok {
					if err := p.eqList(prev, mid); err != nil {
						return err
					}
				} else {
					rowvars[r.Var] = mid
				}
			}
		}
	}
	return nil
}

// ufind is the union-find of the projection solver.
type ufind struct{ parent []int }

func (u *ufind) find(x int) int {
	for u.parent[x] != x {
		u.parent[x] = u.parent[u.parent[x]]
		x = u.parent[x]
	}
	return x
}

const noPin = math.MinInt

// projSolver is the state of solving one projection problem; its phases
// run in order (see solve) and each fills in the fields the next reads.
type projSolver struct {
	p     *projProblem
	u     *ufind
	pin   []int  // per class root: the fixed index, or noPin
	iter  []bool // per class root: must be traversed
	force []bool // per class root: a concatenation component
	// order lists the iterated classes in first-occurrence order; seen
	// maps a class to its position in order.
	order []int
	seen  map[int]int
	// factors lists the coupled factors, each its members' positions in
	// order.
	factors [][]int
	iterOf  map[int]int // class -> iterator number
	proj    *Projections
	pads    [][]Padding
}

// solve runs the union-find solver, labels classes, evaluates derived
// indices and assembles the projection record (Def. 7.3, stratum 2).
func (p *projProblem) solve() (*Projections, [][]Padding, error) {
	s := newProjSolver(p)
	if err := s.unite(); err != nil {
		return nil, nil, err
	}
	if err := s.mark(); err != nil {
		return nil, nil, err
	}
	s.orderClasses()
	s.couple()
	s.number()
	if err := s.indices(); err != nil {
		return nil, nil, err
	}
	s.properties()
	return s.proj, s.pads, nil
}

// newProjSolver starts a solver with every node its own class, unpinned.
func newProjSolver(p *projProblem) *projSolver {
	n := len(p.size)
	u := &ufind{parent: make([]int, n)}
	for i := range u.parent {
		u.parent[i] = i
	}
	pin := make([]int, n)
	for i := range pin {
		pin[i] = noPin
	}
	iter := make([]bool, n)
	force := make([]bool, n)
	return &projSolver{p: p, u: u, pin: pin, iter: iter, force: force}
}

// unite is pass 1: unions (size-checked). Union keeps the smallest id as
// root.
func (s *projSolver) unite() error {
	p, u := s.p, s.u
	for _, e := range p.eqs {
		if e.k != peqEq {
			continue
		}
		a, b := u.find(e.a), u.find(e.b)
		if a == b {
			continue
		}
		if p.size[a] != p.size[b] {
			return projErr(p.op, "conflicting dimensions for the same projection: %d vs %d", p.size[a], p.size[b])
		}
		if a < b {
			a, b = b, a
		}
		u.parent[a] = b
	}
	return nil
}

// mark is pass 2: pins, iterate and force sets on classes.
func (s *projSolver) mark() error {
	p, u, pin, iter, force := s.p, s.u, s.pin, s.iter, s.force
	for _, e := range p.eqs {
		r := u.find(e.a)
		switch e.k {
		case peqPin:
			if pin[r] != noPin && pin[r] != e.val {
				return &Error{Kind: KindFixedIndex, Pos: p.op.Pos, Op: p.op.Desc,
					Msg: fmt.Sprintf("projection: conflicting indices for the same axis: %d vs %d", pin[r], e.val)}
			}
			if e.val >= p.size[r] && p.size[r] > 0 {
				return &Error{Kind: KindFixedIndex, Pos: p.op.Pos, Op: p.op.Desc,
					Msg: fmt.Sprintf("projection: fixed index %d out of bounds for an axis of size %d", e.val, p.size[r])}
			}
			pin[r] = e.val
		case peqIter:
			iter[r] = true
		case peqForce:
			force[r] = true
		}
	}
	return nil
}

// gets is the labeling: whether class r gets an iterator.
func (s *projSolver) gets(r int) bool {
	p, pin, iter, force := s.p, s.pin, s.iter, s.force
	if pin[r] != noPin || p.size[r] == 0 {
		return false
	}
	return force[r] || (iter[r] && p.size[r] > 1)
}

// classesOf lists the iterated classes a node's index mentions, in order.
func (s *projSolver) classesOf(node int) []int {
	p, u, gets := s.p, s.u, s.gets
	if d, ok := p.derived[node]; ok {
		var out []int
		if d.sum != nil {
			for _, t := range d.sum {
				if r := u.find(t.node); gets(r) {
					out = append(out, r)
				}
			}
			return out
		}
		if d.affine {
			for _, x := range []int{d.over, d.kernel} {
				if x >= 0 && gets(u.find(x)) {
					out = append(out, u.find(x))
				}
			}
			return out
		}
		for _, c := range d.parts {
			if c.node >= 0 && gets(u.find(c.node)) {
				out = append(out, u.find(c.node))
			}
		}
		return out
	}
	if r := u.find(node); gets(r) {
		return []int{r}
	}
	return nil
}

// orderClasses finds the first-occurrence order of iterated classes.
func (s *projSolver) orderClasses() {
	p, classesOf := s.p, s.classesOf
	order := []int{}
	seen := map[int]int{}
	for _, nodes := range p.occ {
		for _, nd := range nodes {
			for _, c := range classesOf(nd) {
				if _, ok := seen[c]; !ok {
					seen[c] = len(order)
					order = append(order, c)
				}
			}
		}
	}
	s.order, s.seen = order, seen
}

// couple groups classes sharing a concatenated index into one factor;
// within a coupled factor, components run in concatenation order.
func (s *projSolver) couple() {
	p, classesOf, order, seen := s.p, s.classesOf, s.order, s.seen
	// Coupling: classes sharing a concatenated index form one factor.
	cu := &ufind{parent: make([]int, len(order))}
	for i := range cu.parent {
		cu.parent[i] = i
	}
	for _, nodes := range p.occ {
		for _, nd := range nodes {
			d, ok := p.derived[nd]
			if !ok || d.affine {
				continue
			}
			cs := classesOf(nd)
			for i := 1; i < len(cs); i++ {
				a, b := cu.find(seen[cs[0]]), cu.find(seen[cs[i]])
				if a != b {
					if a < b {
						a, b = b, a
					}
					cu.parent[a] = b
				}
			}
		}
	}
	factorOf := map[int]int{} // root position -> factor index
	var factors [][]int       // members (positions in order)
	for pos := range order {
		r := cu.find(pos)
		fi, ok := factorOf[r]
		if !ok {
			fi = len(factors)
			factorOf[r] = fi
			factors = append(factors, nil)
		}
		factors[fi] = append(factors[fi], pos)
	}
	// Within a coupled factor, components run in concatenation order: the
	// order of the first concatenated index (scanning LHS, then RHS) that
	// mentions them.
	concatRank := map[int]int{}
	for _, nodes := range p.occ {
		for _, nd := range nodes {
			if d, ok := p.derived[nd]; ok && !d.affine {
				for i, c := range classesOf(nd) {
					if _, ok := concatRank[c]; !ok {
						concatRank[c] = i
					}
				}
			}
		}
	}
	for _, f := range factors {
		sort.SliceStable(f, func(i, j int) bool {
			return concatRank[order[f[i]]] < concatRank[order[f[j]]]
		})
	}
	s.factors = factors
}

// number numbers the iterators i0, i1, ... in factor order and starts the
// projection record with the product space.
func (s *projSolver) number() {
	p, order, factors := s.p, s.order, s.factors
	iterOf := map[int]int{} // class -> iterator number
	proj := &Projections{}
	for _, f := range factors {
		var fac Factor
		for _, pos := range f {
			c := order[pos]
			it := proj.NumIters
			proj.NumIters++
			iterOf[c] = it
			proj.Extent = append(proj.Extent, p.size[c])
			fac.Iters = append(fac.Iters, it)
			fac.Extents = append(fac.Extents, p.size[c])
		}
		proj.Product = append(proj.Product, fac)
	}
	s.iterOf, s.proj = iterOf, proj
}

// classIndex is the index of a node's class: its pin, its iterator, or 0.
func (s *projSolver) classIndex(node int) Index {
	u, pin, iterOf := s.u, s.pin, s.iterOf
	r := u.find(node)
	if pin[r] != noPin {
		return Index{Kind: IdxFixed, Offset: pin[r]}
	}
	if it, ok := iterOf[r]; ok {
		return Index{Kind: IdxIter, Iter: it}
	}
	return Index{Kind: IdxFixed}
}

// indexOf is stratum 2 for one axis: a derived index is evaluated against
// the labels; padded convolutions record their margins in s.pads.
func (s *projSolver) indexOf(slot, ax, node int) (Index, error) {
	p, u, pads, classIndex := s.p, s.u, s.pads, s.classIndex
	d, ok := p.derived[node]
	if !ok {
		return classIndex(node), nil
	}
	if !d.affine {
		x := Index{Kind: IdxConcat}
		for _, c := range d.parts {
			if c.node < 0 {
				x.Parts = append(x.Parts, ConcatPart{Iter: -1, Size: c.size})
				continue
			}
			if c.size == 0 {
				continue
			}
			ci := classIndex(c.node)
			if ci.Kind != IdxIter {
				return Index{}, projErr(p.op, "concatenation component has no iterator")
			}
			x.Parts = append(x.Parts, ConcatPart{Iter: ci.Iter, Size: c.size})
		}
		return simplifyConcatIndex(x), nil
	}
	var terms []Term
	off := d.offset
	add := func(coeff int, x Index) {
		switch x.Kind {
		case IdxFixed:
			off += coeff * x.Offset
		case IdxIter:
			for i := range terms {
				if terms[i].Iter == x.Iter {
					terms[i].Coeff += coeff
					return
				}
			}
			terms = append(terms, Term{Coeff: coeff, Iter: x.Iter})
		}
	}
	if d.sum != nil {
		for _, t := range d.sum {
			add(t.coeff, classIndex(t.node))
		}
		return normalizeAffine(terms, off), nil
	}
	add(d.stride, classIndex(d.over))
	if d.conv {
		add(d.dilation, classIndex(d.kernel))
		if d.padded {
			// Margins for the dilated kernel's span. OCANNL uses the
			// undilated kernel size, which is too small for dilation > 1
			// (digest §4.6): reads would overrun the buffer. For
			// dilation 1 the two agree.
			k := 1 + (p.size[u.find(d.kernel)]-1)*d.dilation
			right := (k + 1) / 2
			left := k - right
			off -= left
			if pads[slot] == nil {
				pads[slot] = make([]Padding, len(p.occ[slot]))
			}
			pads[slot][ax] = Padding{Left: left, Right: right}
		}
	}
	return normalizeAffine(terms, off), nil
}

// indices is stratum 2: the index and dimension of every axis of every
// occurrence, LHS first.
func (s *projSolver) indices() error {
	p, proj, indexOf := s.p, s.proj, s.indexOf
	s.pads = make([][]Padding, len(p.occ))
	var err error
	for slot, nodes := range p.occ {
		idx := make([]Index, len(nodes))
		dims := make([]int, len(nodes))
		for ax, nd := range nodes {
			if idx[ax], err = indexOf(slot, ax, nd); err != nil {
				return err
			}
			dims[ax] = p.size[nd]
		}
		if slot == 0 {
			proj.LHS, proj.LHSDims = idx, dims
		} else {
			proj.RHS = append(proj.RHS, idx)
			proj.RHSDims = append(proj.RHSDims, dims)
		}
	}
	return nil
}

// properties decides injectivity and surjectivity and, from them, whether
// the LHS is zero-initialized and accumulated into.
func (s *projSolver) properties() {
	p, proj := s.p, s.proj
	proj.Injective = injective(proj)
	proj.Surjective = surjective(proj, p.op.Kind == OpBlock || p.op.Kind == OpStack)
	proj.ZeroInit = p.op.InitNeutral && !(proj.Injective && proj.Surjective)
	proj.Accumulate = !(p.op.InitNeutral && proj.Injective)
}

// dump describes the solver's state for debugging: every class (root,
// members, size, pin, iterate and force marks), then, once the phases
// that compute them have run, the iterated classes in first-occurrence
// order, the coupled factors and the iterator numbers.
func (s *projSolver) dump() string {
	var b strings.Builder
	members := map[int][]int{}
	var roots []int
	for nd := range s.p.size {
		r := s.u.find(nd)
		if _, ok := members[r]; !ok {
			roots = append(roots, r)
		}
		members[r] = append(members[r], nd)
	}
	b.WriteString("classes:")
	for _, r := range roots {
		fmt.Fprintf(&b, " n%d%v:%d", r, members[r], s.p.size[r])
		if s.pin[r] != noPin {
			fmt.Fprintf(&b, "=%d", s.pin[r])
		}
		if s.iter[r] {
			b.WriteString("+iter")
		}
		if s.force[r] {
			b.WriteString("+force")
		}
	}
	b.WriteString("\n")
	if s.order != nil {
		b.WriteString("order:")
		for _, c := range s.order {
			fmt.Fprintf(&b, " n%d", c)
		}
		b.WriteString("\n")
	}
	if s.factors != nil {
		b.WriteString("factors:")
		for _, f := range s.factors {
			b.WriteString(" [")
			for i, pos := range f {
				if i > 0 {
					b.WriteString(" ")
				}
				fmt.Fprintf(&b, "n%d", s.order[pos])
			}
			b.WriteString("]")
		}
		b.WriteString("\n")
	}
	if s.iterOf != nil {
		b.WriteString("iterators:")
		for _, c := range s.order {
			fmt.Fprintf(&b, " n%d=i%d", c, s.iterOf[c])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// simplifyConcatIndex turns a concatenation with a single iterator part
// into an affine index (integer components are offsets).
func simplifyConcatIndex(x Index) Index {
	var live []int
	for i, c := range x.Parts {
		if c.Iter >= 0 {
			live = append(live, i)
		}
	}
	if len(live) != 1 {
		return x
	}
	off := 0
	for _, c := range x.Parts[:live[0]] {
		off += c.Size
	}
	return normalizeAffine([]Term{{Coeff: 1, Iter: x.Parts[live[0]].Iter}}, off)
}

func normalizeAffine(terms []Term, off int) Index {
	var kept []Term
	for _, t := range terms {
		if t.Coeff != 0 {
			kept = append(kept, t)
		}
	}
	switch {
	case len(kept) == 0:
		return Index{Kind: IdxFixed, Offset: off}
	case len(kept) == 1 && kept[0].Coeff == 1 && off == 0:
		return Index{Kind: IdxIter, Iter: kept[0].Iter}
	}
	return Index{Kind: IdxAffine, Terms: kept, Offset: off}
}

// injective: no LHS cell is written twice. Every factor must be mentioned
// by the LHS (a factor the LHS omits is a reduction), and each affine LHS
// position must pass the mixed-radix test (terms sorted by |coeff|, each
// coefficient larger than the span of the smaller terms).
func injective(p *Projections) bool {
	mentioned := map[int]bool{}
	for _, x := range p.LHS {
		for _, it := range x.Iters() {
			mentioned[it] = true
		}
	}
	for _, f := range p.Product {
		ok := false
		for _, it := range f.Iters {
			if mentioned[it] {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	// Pinning fixpoint (as OCANNL's affine_injective): an iterator that
	// drives an LHS axis on its own, or is the only free symbol of an
	// affine LHS position, is determined by the LHS cell; determined
	// symbols are constants for the mixed-radix test of the others, so
	// (s1, s1+s2) is injective.
	fixed := map[int]bool{}
	for _, x := range p.LHS {
		if x.Kind == IdxIter {
			fixed[x.Iter] = true
		}
	}
	for changed := true; changed; {
		changed = false
		for _, x := range p.LHS {
			if x.Kind != IdxAffine {
				continue
			}
			free := -1
			n := 0
			for _, t := range x.Terms {
				if !fixed[t.Iter] && p.Extent[t.Iter] > 1 {
					free, n = t.Iter, n+1
				}
			}
			if n == 1 {
				fixed[free] = true
				changed = true
			}
		}
	}
	for _, x := range p.LHS {
		if x.Kind != IdxAffine {
			continue
		}
		var ts []Term
		for _, t := range x.Terms {
			if p.Extent[t.Iter] > 1 && !fixed[t.Iter] {
				ts = append(ts, t)
			}
		}
		// sort by |coeff| (insertion sort; tiny)
		for i := 1; i < len(ts); i++ {
			for j := i; j > 0 && abs(ts[j].Coeff) < abs(ts[j-1].Coeff); j-- {
				ts[j], ts[j-1] = ts[j-1], ts[j]
			}
		}
		span := 0
		for _, t := range ts {
			if abs(t.Coeff) < 1+span {
				return false
			}
			span += abs(t.Coeff) * (p.Extent[t.Iter] - 1)
		}
	}
	return true
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// surjective: every LHS cell is written. Each LHS axis must cover its range
// and no iterator may drive two LHS axes (that would write a diagonal).
// A concatenated LHS axis covers its range when every component is an
// iterator; with several concatenated axes we conservatively answer no.
func surjective(p *Projections, block bool) bool {
	used := map[int]bool{}
	concats := 0
	for ax, x := range p.LHS {
		dim := p.LHSDims[ax]
		for _, it := range x.Iters() {
			if used[it] {
				return false
			}
			used[it] = true
		}
		switch x.Kind {
		case IdxFixed:
			if dim > 1 {
				return false
			}
		case IdxIter:
			if p.Extent[x.Iter] != dim {
				return false
			}
		case IdxConcat:
			concats++
			sum := 0
			for _, c := range x.Parts {
				if c.Iter < 0 {
					return false
				}
				sum += c.Size
			}
			if sum != dim || concats > 1 {
				return false
			}
			// Every component must be sourced by some operand.
			for i, c := range x.Parts {
				if block && len(x.Parts) == len(p.RHS) {
					continue
				}
				if !rhsMentions(p, c.Iter) && !(block && i < len(p.RHS)) {
					return false
				}
			}
		case IdxAffine:
			if !affineCovers(p, x, dim) {
				return false
			}
		}
	}
	return true
}

func rhsMentions(p *Projections, it int) bool {
	for _, r := range p.RHS {
		for _, x := range r {
			for _, j := range x.Iters() {
				if j == it {
					return true
				}
			}
		}
	}
	return false
}

// affineCovers reports whether the affine index reaches every position of
// an axis of size dim, by enumeration (bounded).
func affineCovers(p *Projections, x Index, dim int) bool {
	total := 1
	for _, t := range x.Terms {
		total *= p.Extent[t.Iter]
		if total > 1<<20 {
			return false
		}
	}
	hit := make([]bool, dim)
	count := 0
	idx := make([]int, len(x.Terms))
	for range total {
		v := x.Offset
		for i, t := range x.Terms {
			v += t.Coeff * idx[i]
		}
		if v >= 0 && v < dim && !hit[v] {
			hit[v] = true
			count++
		}
		for i := range idx {
			idx[i]++
			if idx[i] < p.Extent[x.Terms[i].Iter] {
				break
			}
			idx[i] = 0
		}
	}
	return count == dim
}
