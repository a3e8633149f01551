// Package autodiff builds the backward pass of an inferred tensor graph:
// reverse-mode differentiation in OCANNL's style, where every gradient
// assignment reuses its forward operation's projections with the slots
// permuted (seed document 2, digest §4.2 and §5.2) and no shape or
// projection inference is run again.
//
// For a forward operation `t =:+ f(v1, ..., vn)` with projection record P
// (product space, LHS map L, RHS maps R1..Rn) the gradient of operand i is
// the assignment
//
//	gi[Ri] =+ df/dvi(v1[R1], ..., vn[Rn]) * g[L]      over P's product space
//
// (a loopir.Compute): its LHS takes the forward RHS i's map, the incoming
// gradient g and the forward value t are read at the forward LHS map, the
// operands at their own maps. Contractions move by themselves: the
// gradient's LHS map omits the iterators it must sum over (for a matmul
// g1 = g * v2 sums over the forward's output column, for a broadcast
// operand the broadcast axes). Concatenation and stacking scatter the
// incoming gradient back to their sources with a loopir.RevBlock
// (OCANNL's Rev_sides) built from the forward Block's coupled projection.
//
// Supported: every differentiable primitive (id add sub mul div pow relu
// sat01 exp log exp2 log2 sin cos sqrt recip recip_sqrt tanh neg where
// fma), sum reductions (compose `*`, `+*`, `++`, `+++`), max and min
// reductions (`@^^`, `@^+`, `=:@^`, `=:@-`: the whole gradient of each
// output cell goes to the first point, in iteration order, whose value
// attains the maximum, as PyTorch's max_pool2d; see winner),
// concatenation `++^`, stacking, batch slices `@|`, transposes, padded,
// strided and dilated convolutions, broadcasting, and assignment
// statements that accumulate by sum or difference (`=+`, `=:+`, `=-`,
// `=:-`), overwrite injectively (`=:`) or take a max/min with a reset
// (`=:@^`, `=:@-`). Assignments may update inputs and earlier results in
// place: the gradient of a tensor that an assignment modifies is, at the
// end, the gradient of its initial value; an assignment with `:` (which
// erases the old value) zeroes its target's gradient after propagating
// it. When a gradient needs the value a tensor had at an operation and a
// later assignment modifies that tensor, the forward pass saves a
// snapshot (NAME@k) right after that operation. Comparisons, `not` and
// `where`'s condition have no gradient; numbers, literals and dim scalars
// get no gradient tensor.
//
// Not supported (Backward reports an error when the loss depends on
// them): assignments accumulating by product or quotient (`=*`, `=/`),
// or by max/min without a reset (`=@^`, `=@-`); overwrites (`=:`) through
// a non-injective projection (the last write wins); and an operation
// whose operand is its own target (`t =+ t *. x`).
//
// The max rule first records each output cell's winner: the least
// ordinal, among the reduced iterators, of a point whose value equals the
// stored maximum (NAME.argmax@k, a min reduction over the forward product
// space, the point's value stored into a scalar scratch cell `_scratch`
// first so that the comparison is exact in float32 runs as well); the
// gradient assignments then send g to the point whose ordinal is the
// winner's. Ties thus send the whole gradient to one cell, on every tier
// and thread count (a minimum is exact and order-free).
package autodiff

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
)

// Gradients is a lowered program computing the forward pass and then the
// gradients of a scalar loss.
type Gradients struct {
	Graph *inference.Graph
	// Program runs the forward operations (Program.Ops[:Forward]) and then
	// the backward pass: zero every gradient, set the loss's gradient to 1,
	// and each forward operation's gradient assignments in reverse program
	// order. Run it with loopir.Run or loopir.RunWith.
	Program *loopir.Program
	// Loss is the loss tensor (a graph tensor id).
	Loss int
	// Forward is the number of forward operations at the start of
	// Program.Ops (fetches and graph operations).
	Forward int
	grad    []int
}

// Of returns the program tensor holding the gradient of graph tensor t,
// or -1 when the loss does not depend on t (or t is a constant).
func (gr *Gradients) Of(t int) int {
	if t < 0 || t >= len(gr.grad) {
		return -1
	}
	return gr.grad[t]
}

// Tensors lists the graph tensors that have a gradient, in id order.
func (gr *Gradients) Tensors() []int {
	var out []int
	for t, g := range gr.grad {
		if g >= 0 {
			out = append(out, t)
		}
	}
	return out
}

// Backward returns the backward pass's operations (Program.Ops after
// the forward ones).
func (gr *Gradients) Backward() []*loopir.Operation { return gr.Program.Ops[gr.Forward:] }

// Dump prints the backward pass's loop nests in loopir's pseudo-code.
func (gr *Gradients) Dump(w io.Writer) { io.WriteString(w, gr.String()) }

// String returns Dump's output.
func (gr *Gradients) String() string { return gr.Program.DumpOps(gr.Backward()) }

// Error is a failure to build the backward pass.
type Error struct {
	// Op is the graph operation involved, or -1.
	Op   int
	Desc string
	Msg  string
	// Err is the sentinel the error matches with errors.Is, if any
	// (ErrNoParameter).
	Err error
}

// Unwrap returns the sentinel the error matches, if any.
func (e *Error) Unwrap() error { return e.Err }

// ErrNoParameter is matched (errors.Is) by the error of BackwardParams
// for a loss that depends on no parameter: training it would change
// nothing.
var ErrNoParameter = errors.New("the loss depends on no parameter")

func (e *Error) Error() string {
	if e.Op >= 0 {
		return fmt.Sprintf("autodiff: op %d (%s): %s", e.Op, e.Desc, e.Msg)
	}
	return "autodiff: " + e.Msg
}

// hasGrad reports whether tensors of kind k get a gradient tensor.
func hasGrad(k inference.TensorKind) bool {
	switch k {
	case inference.Number, inference.Literal, inference.DimScalar:
		return false
	}
	return true
}

// leafKind reports whether tensors of kind k hold a value before any
// operation writes them.
func leafKind(k inference.TensorKind) bool {
	switch k {
	case inference.Input, inference.Leaf, inference.Param:
		return true
	}
	return false
}

// differentiable reports whether operand i of op has a gradient.
func differentiable(op *inference.Op, i int) bool {
	if op.Kind == inference.OpBlock || op.Kind == inference.OpStack {
		return true
	}
	if op.Kind == inference.OpGather {
		// The index input selects positions; only the gathered operand
		// has a gradient (scattered back to the selected positions).
		return i == 0
	}
	if p := ops.Lookup(op.Prim); p != nil && i < len(p.Grad) {
		return p.Grad[i] != nil
	}
	return true
}

type builder struct {
	g    *inference.Graph
	p    *loopir.Program
	need []bool
	grad []int
	// first and last writer of each tensor (op index, -1 if none).
	first, last []int
	scratch     int
	// ords are the ordinal tables of max/min reductions' winner records
	// by dims, ordFetch their initializations.
	ords     map[string]int
	ordFetch []loopir.Assignment
	// bwd collects the backward assignments; snaps the snapshots taken
	// after forward operations (snapAt[k] lists op k's).
	bwd    []loopir.Assignment
	snaps  map[[2]int]int
	snapAt map[int][]loopir.Assignment
}

// Backward builds the forward and backward program for the scalar tensor
// loss of g, which must have been through inference and
// inference.DeriveProjections. Every tensor the loss depends on through
// differentiable operands gets a gradient tensor (named NAME.grad),
// zeroed once; the loss's gradient is set to 1; then each forward
// operation, in reverse program order, accumulates (`=+`) into the
// gradients of its operands using its own projections.
func Backward(g *inference.Graph, loss int) (*Gradients, error) {
	return buildBackward(g, loss, false)
}

// BackwardParams is Backward restricted to what training needs: only
// tensors through which a parameter influences the loss get gradients,
// so data inputs (and everything computed from data alone) get none and
// their gradient loops are not generated.
func BackwardParams(g *inference.Graph, loss int) (*Gradients, error) {
	return buildBackward(g, loss, true)
}

func buildBackward(g *inference.Graph, loss int, paramsOnly bool) (*Gradients, error) {
	if g == nil {
		return nil, &Error{Op: -1, Msg: "no graph"}
	}
	if loss < 0 || loss >= len(g.Tensors) {
		return nil, &Error{Op: -1, Msg: fmt.Sprintf("loss tensor %d does not exist", loss)}
	}
	for i, op := range g.Ops {
		if op.Proj == nil {
			return nil, &Error{Op: i, Desc: op.Desc, Msg: "the operation has no projections (run inference.DeriveProjections first)"}
		}
	}
	lt := g.Tensors[loss]
	if !hasGrad(lt.Kind) {
		return nil, &Error{Op: -1, Msg: fmt.Sprintf("the loss %s is a constant (%s)", lt.Name, lt.Kind)}
	}
	if n := lt.Shape.Size(); n != 1 {
		return nil, &Error{Op: -1, Msg: fmt.Sprintf("the loss %s must have a single cell, its shape %s has %d", lt.Name, lt.Shape, n)}
	}
	b := &builder{g: g, scratch: -1, ords: map[string]int{}}
	b.analyze(loss)
	if paramsOnly {
		b.pruneToParams()
		if !b.need[loss] {
			return nil, &Error{Op: -1, Msg: fmt.Sprintf("the loss %s depends on no parameter (through differentiable operations), so it has no gradient to train with", lt.Name), Err: ErrNoParameter}
		}
	}
	gr := &Gradients{Graph: g, Loss: loss}
	p, err := loopir.LowerWith(g, loopir.ExtendedPasses("backward", func(p *loopir.Program) error {
		b.p = p
		n, err := b.build(loss)
		gr.Forward = n
		return err
	}), nil)
	if err != nil {
		return nil, err
	}
	gr.Program = p
	gr.grad = b.grad
	return gr, nil
}

// analyze finds the writers of every tensor and the tensors the loss
// depends on (scanning the operations backwards: an over-approximation
// when assignments modify tensors in place, which is harmless).
func (b *builder) analyze(loss int) {
	g := b.g
	n := len(g.Tensors)
	b.first, b.last = make([]int, n), make([]int, n)
	for i := range n {
		b.first[i], b.last[i] = -1, -1
	}
	for k, op := range g.Ops {
		if b.first[op.LHS] < 0 {
			b.first[op.LHS] = k
		}
		b.last[op.LHS] = k
	}
	b.need = make([]bool, n)
	b.need[loss] = true
	for k := len(g.Ops) - 1; k >= 0; k-- {
		op := g.Ops[k]
		if !b.need[op.LHS] {
			continue
		}
		for i, r := range op.RHS {
			if differentiable(op, i) && hasGrad(g.Tensors[r].Kind) {
				b.need[r] = true
			}
		}
	}
}

// pruneToParams keeps b.need only for tensors that depend on a parameter
// through differentiable operands.
func (b *builder) pruneToParams() {
	g := b.g
	reach := make([]bool, len(g.Tensors))
	for t, tt := range g.Tensors {
		reach[t] = tt.Kind == inference.Param
	}
	for changed := true; changed; {
		changed = false
		for _, op := range g.Ops {
			if reach[op.LHS] {
				continue
			}
			for i, r := range op.RHS {
				if reach[r] && differentiable(op, i) {
					reach[op.LHS], changed = true, true
					break
				}
			}
		}
	}
	for t := range b.need {
		b.need[t] = b.need[t] && reach[t]
	}
}

// build adds the gradient tensors and the backward assignments to the
// program, inserts the snapshots the backward pass needs after their
// forward operations, and returns the number of forward assignments.
func (b *builder) build(loss int) (int, error) {
	g, p := b.g, b.p
	nFwd := len(p.Assignments)
	nFetch := nFwd - len(g.Ops)
	b.snaps = map[[2]int]int{}
	b.snapAt = map[int][]loopir.Assignment{}
	b.grad = make([]int, len(g.Tensors))
	var all []int
	for t := range g.Tensors {
		b.grad[t] = -1
		if !b.need[t] {
			continue
		}
		ti := p.Tensors[t]
		b.grad[t] = p.AddTensor(loopir.TensorInfo{
			Name: ti.Name + ".grad", Kind: inference.Result, Dims: ti.Dims, Padding: ti.Padding,
		})
		all = append(all, b.grad[t])
	}
	b.bwd = append(b.bwd, &loopir.Clear{Desc: "zero the gradients", Tensors: all})
	b.bwd = append(b.bwd, &loopir.Compute{
		Desc: p.Tensors[b.grad[loss]].Name + " = 1", Op: -1, Proj: &inference.Projections{},
		Stores: []*loopir.ComputeStore{{Tensor: b.grad[loss], Index: zeroIndex(len(p.Tensors[loss].Dims)), Value: &loopir.ProjConst{Value: 1}}},
	})
	for k := len(g.Ops) - 1; k >= 0; k-- {
		if err := b.backprop(k); err != nil {
			return 0, err
		}
	}
	fwd := append([]loopir.Assignment(nil), p.Assignments[:nFetch]...)
	fwd = append(fwd, b.ordFetch...)
	for k := range g.Ops {
		fwd = append(fwd, p.Assignments[nFetch+k])
		fwd = append(fwd, b.snapAt[k]...)
	}
	p.Assignments = append(fwd, b.bwd...)
	return len(fwd), nil
}

func zeroIndex(n int) []inference.Index {
	out := make([]inference.Index, n)
	for i := range out {
		out[i] = inference.Index{Kind: inference.IdxFixed}
	}
	return out
}

// value returns the tensor holding t's value as of forward operation k:
// t itself, or a snapshot taken right after op k when a later operation
// modifies t.
func (b *builder) value(k, t int) int {
	if b.last[t] <= k {
		return t
	}
	key := [2]int{k, t}
	if s, ok := b.snaps[key]; ok {
		return s
	}
	p := b.p
	ti := p.Tensors[t]
	s := p.AddTensor(loopir.TensorInfo{
		Name: fmt.Sprintf("%s@%d", ti.Name, k), Kind: inference.Result, Dims: ti.Dims, Padding: ti.Padding,
	})
	b.snaps[key] = s
	pr := &inference.Projections{}
	var idx []inference.Index
	for a, d := range ti.Dims {
		pr.Product = append(pr.Product, inference.Factor{Iters: []int{a}, Extents: []int{d}})
		pr.Extent = append(pr.Extent, d)
		idx = append(idx, inference.Index{Kind: inference.IdxIter, Iter: a})
	}
	pr.NumIters = len(ti.Dims)
	pr.LHS, pr.LHSDims = idx, ti.Dims
	pr.RHS, pr.RHSDims = [][]inference.Index{idx}, [][]int{ti.Dims}
	pr.Injective, pr.Surjective = true, true
	b.snapAt[k] = append(b.snapAt[k], &loopir.Compute{
		Desc: fmt.Sprintf("snapshot %s = %s as of op %d (op %d modifies %s later)", p.Tensors[s].Name, ti.Name, k, b.last[t], ti.Name),
		Op:   -1, Proj: pr,
		Stores: []*loopir.ComputeStore{{Tensor: s, Index: idx, Value: &loopir.ProjLoad{Tensor: t, Index: idx}}},
	})
	return s
}

// opBuilder builds the gradient assignments of one forward operation.
type opBuilder struct {
	*builder
	k     int
	op    *inference.Op
	desc  string
	names map[loopir.ProjExpr]string
	pad   map[int]float64
}

func (o *opBuilder) fail(format string, args ...any) error {
	return &Error{Op: o.k, Desc: o.op.Desc, Msg: fmt.Sprintf(format, args...)}
}

// load reads tensor t at idx, remembering its slot name for descriptions.
func (o *opBuilder) load(name string, t int, idx []inference.Index) loopir.ProjExpr {
	l := &loopir.ProjLoad{Tensor: t, Index: idx}
	o.names[l] = name
	return l
}

// g, t and v read the incoming gradient, the forward value and operand i
// (0-based) at their forward maps.
func (o *opBuilder) G() loopir.ProjExpr { return o.load("g", o.grad[o.op.LHS], o.op.Proj.LHS) }
func (o *opBuilder) T() loopir.ProjExpr {
	t := o.value(o.k, o.op.LHS)
	o.usePad(t)
	return o.load("t", t, o.op.Proj.LHS)
}
func (o *opBuilder) V(i int) loopir.ProjExpr {
	t := o.value(o.k, o.op.RHS[i])
	o.usePad(t)
	return o.load(fmt.Sprintf("v%d", i+1), t, o.op.Proj.RHS[i])
}

// usePad records that a forward value is re-read: its margins must hold
// the forward operation's neutral element.
func (o *opBuilder) usePad(t int) {
	if o.p.Tensors[t].Padding != nil {
		o.pad[t] = loopir.Neutral(o.op.Accum)
	}
}

func (b *builder) backprop(k int) error {
	g := b.g
	op := g.Ops[k]
	if b.grad[op.LHS] < 0 {
		return nil
	}
	o := &opBuilder{builder: b, k: k, op: op, names: map[loopir.ProjExpr]string{}}
	lhsName := g.Tensors[op.LHS].Name
	o.desc = fmt.Sprintf("backprop of op %d (%s = %s)", k, lhsName, op.Desc)
	var targets []int
	for i, r := range op.RHS {
		if differentiable(op, i) && b.grad[r] >= 0 {
			targets = append(targets, i)
		}
	}
	// A reset of the target (the `=:` forms) erases the old value: its
	// gradient must not flow further back. Only needed if something
	// earlier holds that old value.
	reset := op.InitNeutral && (b.first[op.LHS] < k || leafKind(g.Tensors[op.LHS].Kind))
	for _, r := range op.RHS {
		if r == op.LHS && (len(targets) > 0 || reset) {
			return o.fail("the operation reads its own target %s; in-place updates are not differentiated", lhsName)
		}
	}
	if len(targets) > 0 {
		var err error
		if op.Kind == inference.OpBlock || op.Kind == inference.OpStack {
			err = o.revBlock()
		} else {
			err = o.accum(targets)
		}
		if err != nil {
			return err
		}
	}
	if reset {
		b.bwd = append(b.bwd, &loopir.Clear{
			Desc:    fmt.Sprintf("%s: %s = 0 (the operation overwrites %s)", o.desc, b.p.Tensors[b.grad[op.LHS]].Name, lhsName),
			Tensors: []int{b.grad[op.LHS]},
		})
	}
	return nil
}

// revBlock scatters the incoming gradient back to the sources of a
// concatenation or stacking (Rev_sides).
func (o *opBuilder) revBlock() error {
	op := o.op
	if op.Accum != ops.AccAdd && op.Accum != ops.NoAccum {
		return o.fail("concatenation accumulating by %q is not differentiated", op.Accum)
	}
	dst := make([]int, len(op.RHS))
	var names []string
	for i, r := range op.RHS {
		dst[i] = -1
		if differentiable(op, i) {
			dst[i] = o.grad[r]
		}
		if dst[i] >= 0 {
			names = append(names, o.p.Tensors[dst[i]].Name)
		} else {
			names = append(names, "_")
		}
	}
	o.bwd = append(o.bwd, &loopir.RevBlock{
		Desc:       fmt.Sprintf("%s: (%s) =+ rev_sides(g)", o.desc, strings.Join(names, ", ")),
		Op:         o.k,
		Src:        o.grad[op.LHS],
		Dst:        dst,
		Accumulate: true,
		Proj:       op.Proj,
	})
	return nil
}

// accum emits one gradient assignment per differentiable operand of an
// accumulating operation.
func (o *opBuilder) accum(targets []int) error {
	op := o.op
	storeAcc := op.Proj.Accumulate && op.Accum != ops.NoAccum
	maxRule := false
	acc := ops.LookupAccum(op.Accum)
	switch {
	case op.Accum == ops.NoAccum:
		if !op.Proj.Injective {
			return o.fail("an overwrite (`=:`) through a non-injective projection keeps the last write; it is not differentiated")
		}
	case acc != nil && (acc.Grad == ops.SumGrad || acc.Grad == ops.NegSumGrad):
	case acc != nil && acc.Grad == ops.SelectGrad:
		if !op.InitNeutral {
			return o.fail("accumulating by %s into an existing value (without `:`) is not differentiated", op.Accum)
		}
		maxRule = true
	default:
		return o.fail("accumulating by %q is not differentiated", op.Accum)
	}
	var win *winnerRecord
	for _, i := range targets {
		o.pad = map[int]float64{}
		var stores []*loopir.ComputeStore
		v := func(j int) loopir.ProjExpr { return o.V(j) }
		vs := func() []loopir.ProjExpr {
			out := make([]loopir.ProjExpr, len(op.RHS))
			for j := range out {
				out[j] = v(j)
			}
			return out
		}
		// y is the value the primitive produced at the point: the
		// forward result itself when it was stored exactly once and is
		// not modified afterwards, otherwise recomputed from the operands.
		var y func() loopir.ProjExpr
		var cond loopir.ProjExpr
		switch {
		case maxRule:
			// At the winner the primitive's value is the stored
			// maximum itself.
			y = o.T
			if win == nil {
				var err error
				if win, err = o.winner(vs); err != nil {
					return err
				}
			}
			if win.w >= 0 {
				cond = apply(ops.Eq, o.load("ord", win.ord, win.ordIdx), o.load("w", win.w, op.Proj.LHS))
			}
		case !storeAcc && o.last[op.LHS] == o.k:
			y = o.T
		default:
			y = func() loopir.ProjExpr { return &loopir.ProjApply{Prim: op.Prim, Args: vs()} }
		}
		val, negate, err := o.rule(i, v, y)
		if err != nil {
			return err
		}
		if cond != nil {
			val = apply(ops.Where, cond, val, cnst(0))
		}
		if acc != nil && acc.Grad == ops.NegSumGrad && storeAcc {
			negate = !negate
		}
		accum := ops.AccAdd
		if negate {
			accum = ops.AccSub
		}
		gi := o.grad[op.RHS[i]]
		stores = append(stores, &loopir.ComputeStore{Tensor: gi, Index: op.Proj.RHS[i], Value: val, Accum: accum, Accumulate: true})
		sym := "=+"
		if negate {
			sym = "=-"
		}
		var parts []string
		for _, s := range stores[:len(stores)-1] {
			parts = append(parts, "s = "+o.format(s.Value))
		}
		parts = append(parts, fmt.Sprintf("g%d %s %s", i+1, sym, o.format(val)))
		o.bwd = append(o.bwd, &loopir.Compute{
			Desc:   fmt.Sprintf("%s: %s; g%d is %s", o.desc, strings.Join(parts, "; "), i+1, o.p.Tensors[gi].Name),
			Op:     o.k,
			Proj:   op.Proj,
			Stores: stores,
			Pad:    o.pad,
		})
	}
	return nil
}

// winnerRecord is the record of a max or min reduction's winners: w
// holds, per output cell, the ordinal of the first point (in iteration
// order over the reduced iterators) whose value attains the stored
// maximum; ord, read at ordIdx, is each point's ordinal. w < 0 means the
// operation reduces nothing (every output cell has a single point).
type winnerRecord struct {
	w, ord int
	ordIdx []inference.Index
}

// maxOrdinals bounds the points of one reduction: ordinals are stored in
// the program's precision, and float32 represents every integer up to
// 2^24 exactly.
const maxOrdinals = 1 << 24

// winner emits, before the operation's gradient assignments, the pass
// that records the winner of each output cell of a max or min reduction
// (PyTorch's max_pool2d rule: the first maximal cell in iteration order
// takes the whole gradient):
//
//	w =:@- where(f(v1, ..., vn) == t, ord, N)      over the forward product space
//
// where ord is the point's ordinal among the reduced iterators (a
// constant table read at the reduced iterators, row-major in the order of
// the product space) and N the number of reduced points. The minimum is
// exact and independent of iteration order, so every tier and thread
// count records the same winner; the gradient assignments then route the
// gradient through where(ord == w, ..., 0).
func (o *opBuilder) winner(vs func() []loopir.ProjExpr) (*winnerRecord, error) {
	op := o.op
	pr := op.Proj
	inLHS := map[int]bool{}
	for _, x := range pr.LHS {
		for _, it := range x.Iters() {
			inLHS[it] = true
		}
	}
	var dims []int
	var idx []inference.Index
	n := 1
	for _, f := range pr.Product {
		reduced := true
		for _, it := range f.Iters {
			reduced = reduced && !inLHS[it]
		}
		if !reduced {
			continue
		}
		ext := 0
		x := inference.Index{Kind: inference.IdxIter, Iter: f.Iters[0]}
		if len(f.Iters) > 1 {
			x = inference.Index{Kind: inference.IdxConcat}
			for k, it := range f.Iters {
				x.Parts = append(x.Parts, inference.ConcatPart{Iter: it, Size: f.Extents[k]})
			}
		}
		for _, e := range f.Extents {
			ext += e
		}
		dims = append(dims, ext)
		idx = append(idx, x)
		n *= ext
		if n > maxOrdinals {
			return nil, o.fail("the %s reduces over more than %d points per output cell; its winners cannot be recorded", op.Accum, maxOrdinals)
		}
	}
	if len(dims) == 0 {
		return &winnerRecord{w: -1}, nil
	}
	saved := o.pad
	o.pad = map[int]float64{}
	defer func() { o.pad = saved }()
	rec := &winnerRecord{ord: o.ordinals(dims), ordIdx: idx}
	lhs := o.p.Tensors[o.value(o.k, op.LHS)]
	rec.w = o.p.AddTensor(loopir.TensorInfo{
		Name: fmt.Sprintf("%s.argmax@%d", o.g.Tensors[op.LHS].Name, o.k), Kind: inference.Result, Dims: lhs.Dims,
	})
	var stores []*loopir.ComputeStore
	var point loopir.ProjExpr
	if op.Prim == ops.ID {
		point = o.V(0)
	} else {
		// Materialize the point's value in the program's precision so
		// that it compares equal to the stored maximum.
		s := o.scratchTensor()
		stores = append(stores, &loopir.ComputeStore{Tensor: s, Value: &loopir.ProjApply{Prim: op.Prim, Args: vs()}})
		point = o.load("s", s, nil)
	}
	ord := o.load("ord", rec.ord, idx)
	val := apply(ops.Where, apply(ops.Eq, point, o.T()), ord, cnst(float64(n)))
	stores = append(stores, &loopir.ComputeStore{Tensor: rec.w, Index: pr.LHS, Value: val, Accum: ops.AccMin, Accumulate: true})
	var parts []string
	for _, s := range stores[:len(stores)-1] {
		parts = append(parts, "s = "+o.format(s.Value))
	}
	parts = append(parts, "w =@- "+o.format(val))
	name := o.p.Tensors[rec.w].Name
	o.bwd = append(o.bwd,
		&loopir.Clear{Desc: fmt.Sprintf("%s: %s = %d (no winner yet)", o.desc, name, n), Tensors: []int{rec.w}, Value: float64(n)},
		&loopir.Compute{
			Desc:   fmt.Sprintf("%s: the winners: %s; w is %s", o.desc, strings.Join(parts, "; "), name),
			Op:     o.k,
			Proj:   pr,
			Stores: stores,
			Pad:    o.pad,
		})
	return rec, nil
}

// ordinals returns the constant table of a reduction's point ordinals
// over dims (each cell holds its row-major offset), one per distinct
// dims, initialized with the program's fetches.
func (o *opBuilder) ordinals(dims []int) int {
	key := fmt.Sprint(dims)
	if t, ok := o.ords[key]; ok {
		return t
	}
	t := o.p.AddTensor(loopir.TensorInfo{Name: fmt.Sprintf("_ordinals.%d", len(o.ords)+1), Kind: inference.Literal, Dims: dims})
	o.ords[key] = t
	o.ordFetch = append(o.ordFetch, &loopir.Fetch{Desc: fmt.Sprintf("init %s (the ordinals of %v reduced points)", o.p.Tensors[t].Name, dims), Tensor: t, Kind: loopir.FetchRange})
	return t
}

// scratchTensor returns the program's scalar scratch cell.
func (o *opBuilder) scratchTensor() int {
	if o.scratch < 0 {
		o.scratch = o.p.AddTensor(loopir.TensorInfo{Name: "_scratch", Kind: inference.Result})
	}
	return o.scratch
}

func apply(prim ops.PrimName, args ...loopir.ProjExpr) loopir.ProjExpr {
	return &loopir.ProjApply{Prim: prim, Args: args}
}

func cnst(v float64) loopir.ProjExpr { return &loopir.ProjConst{Value: v} }

// rule returns the gradient contribution of operand i (0-based) of the
// primitive, given the operands v and the primitive's value y at the
// point; negate asks for subtraction (digest §5.2). The rule is the
// primitive's derivative in package ops's table.
func (o *opBuilder) rule(i int, v func(int) loopir.ProjExpr, y func() loopir.ProjExpr) (val loopir.ProjExpr, negate bool, err error) {
	g := o.G()
	p := ops.Lookup(o.op.Prim)
	if p == nil || i >= len(p.Grad) || p.Grad[i] == nil {
		return nil, false, o.fail("no gradient rule for primitive %q", o.op.Prim)
	}
	return expand(p.Grad[i].Value, g, v, y), p.Grad[i].Negate, nil
}

// expand builds a derivative rule's term over the incoming gradient g,
// the operands v and the result y, depth first from the left (the order
// in which operands and results are read matters for the snapshots they
// may take).
func expand(t ops.Term, g loopir.ProjExpr, v func(int) loopir.ProjExpr, y func() loopir.ProjExpr) loopir.ProjExpr {
	switch t.Kind {
	case ops.TermGrad:
		return g
	case ops.TermArg:
		return v(t.Arg)
	case ops.TermResult:
		return y()
	case ops.TermConst:
		return cnst(t.Value)
	}
	args := make([]loopir.ProjExpr, len(t.Args))
	for k, a := range t.Args {
		args[k] = expand(a, g, v, y)
	}
	return apply(t.Prim, args...)
}

// infix returns the infix symbol of a binary primitive, or "".
func infix(prim ops.PrimName) string {
	if p := ops.Lookup(prim); p != nil {
		return p.Symbol
	}
	return ""
}

// format prints an expression with slot names (g, t, v1, ...).
func (o *opBuilder) format(e loopir.ProjExpr) string {
	switch e := e.(type) {
	case *loopir.ProjConst:
		return fmt.Sprintf("%g", e.Value)
	case *loopir.ProjLoad:
		if n, ok := o.names[e]; ok {
			return n
		}
		return o.p.Tensors[e.Tensor].Name
	case *loopir.ProjApply:
		args := make([]string, len(e.Args))
		for i, a := range e.Args {
			args[i] = o.format(a)
			if ap, ok := a.(*loopir.ProjApply); ok && infix(ap.Prim) != "" {
				args[i] = "(" + args[i] + ")"
			}
		}
		if op := infix(e.Prim); op != "" && len(args) == 2 {
			return args[0] + " " + op + " " + args[1]
		}
		return string(e.Prim) + "(" + strings.Join(args, ", ") + ")"
	}
	return "?"
}

// Names returns the gradient tensors' names mapped to the graph tensors
// they belong to (for inspection).
func (gr *Gradients) Names() map[string]int {
	out := map[string]int{}
	for t, g := range gr.grad {
		if g >= 0 {
			out[gr.Program.Tensors[g].Name] = t
		}
	}
	return out
}
