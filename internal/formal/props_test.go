package formal

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/spec"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// The properties. Each is a function of one generated program that
// returns nil when the program satisfies it (or is not a subject: it
// fails shape inference) and records what it checked in stats. Test*
// run a fixed number of programs; Fuzz* take the generator's choices.

// perms is the number of random processing orders each order property
// compares with the program order.
const perms = 4

// subject is a generated program, inferred.
type subject struct {
	src  string
	prog *program.Program
	g    *inference.Graph
	err  error
	rng  *rand.Rand // processing orders, seeded by the program
}

func newSubject(src string) *subject {
	h := fnv.New64a()
	h.Write([]byte(src))
	s := &subject{src: src, rng: rand.New(rand.NewPCG(h.Sum64(), 7))}
	s.prog, s.err = program.Parse(src)
	if s.err != nil {
		return s
	}
	s.g, s.err = inference.Infer(s.prog)
	return s
}

// order is a random processing order.
func (s *subject) order() inference.Order {
	return inference.Order{Perm: func(n int) []int { return s.rng.Perm(n) }}
}

// features of a program's specs.
type features struct {
	affine, padded, concat, block bool
	zeroClosed                    bool // a concatenation component closed to 0
	unitClosed                    bool // an axis closed to 1_∅ (a guess or the broadcast top)
}

func (f features) stratified() bool { return f.affine || f.concat || f.block }

func featuresOf(g *inference.Graph) features {
	var f features
	for _, op := range g.Ops {
		if op.Kind == inference.OpBlock {
			f.block = true
		}
		if op.Spec == nil {
			continue
		}
		for _, sl := range append(append([]spec.Slot{}, op.Spec.RHS...), op.Spec.LHS) {
			for k := range 3 {
				for _, ax := range sl.Rows[k].Axes() {
					switch ax.Kind {
					case spec.AxisAffine:
						f.affine = true
						if ax.Affine.Conv != nil && ax.Affine.Conv.Padded {
							f.padded = true
						}
					case spec.AxisConcat:
						f.concat = true
						for _, p := range ax.Concat {
							if p.Label != "" && op.Labels[p.Label] == 0 {
								f.zeroClosed = true
							}
						}
					}
				}
			}
		}
	}
	for _, t := range g.Tensors {
		for _, d := range t.Shape.Dims() {
			if IsTop(d) && t.Kind != inference.Number && t.Kind != inference.DimScalar {
				f.unitClosed = true
			}
		}
	}
	return f
}

// ---------------------------------------------------------------------
// Canonicity of projections (Thm. 7.4; Conj. 8.2 with affine and
// concatenation terms) and of padding margins (Prop. 8.1).

// projRecord is what projection inference gives a graph: every
// operation's record and every tensor's margins.
type projRecord struct {
	ops  []*inference.Projections
	pads [][]inference.Padding
}

func snapshot(g *inference.Graph) projRecord {
	var r projRecord
	for _, op := range g.Ops {
		r.ops = append(r.ops, op.Proj)
	}
	for _, t := range g.Tensors {
		r.pads = append(r.pads, slices.Clone(t.Padding))
	}
	return r
}

// sameUpToRenaming compares two projection records of one operation up
// to a bijective renaming of the iterators (Thm. 7.4: the product space,
// the iterator partition, every index map and the reductions).
func sameUpToRenaming(a, b *inference.Projections) error {
	if a.NumIters != b.NumIters || len(a.Product) != len(b.Product) {
		return fmt.Errorf("%d iterators in %d factors vs %d in %d", a.NumIters, len(a.Product), b.NumIters, len(b.Product))
	}
	ab, ba := map[int]int{}, map[int]int{}
	bind := func(x, y int) error {
		if x < 0 || y < 0 {
			if x != y {
				return fmt.Errorf("block %d vs iterator %d", x, y)
			}
			return nil
		}
		if v, ok := ab[x]; ok && v != y {
			return fmt.Errorf("i%d renamed to both i%d and i%d", x, v, y)
		}
		if v, ok := ba[y]; ok && v != x {
			return fmt.Errorf("i%d and i%d both renamed to i%d", v, x, y)
		}
		ab[x], ba[y] = y, x
		return nil
	}
	index := func(x, y inference.Index) error {
		if x.Kind != y.Kind || x.Offset != y.Offset || len(x.Terms) != len(y.Terms) || len(x.Parts) != len(y.Parts) {
			return fmt.Errorf("index %v vs %v", x, y)
		}
		switch x.Kind {
		case inference.IdxIter:
			return bind(x.Iter, y.Iter)
		case inference.IdxAffine:
			// Terms are a sum: match them as a multiset under the renaming.
			used := make([]bool, len(y.Terms))
			for _, t := range x.Terms {
				found := false
				for j, u := range y.Terms {
					if used[j] || u.Coeff != t.Coeff {
						continue
					}
					if v, ok := ab[t.Iter]; ok && v != u.Iter {
						continue
					}
					if err := bind(t.Iter, u.Iter); err == nil {
						used[j], found = true, true
						break
					}
				}
				if !found {
					return fmt.Errorf("index %v vs %v", x, y)
				}
			}
		case inference.IdxConcat:
			for i := range x.Parts {
				if x.Parts[i].Size != y.Parts[i].Size {
					return fmt.Errorf("index %v vs %v", x, y)
				}
				if err := bind(x.Parts[i].Iter, y.Parts[i].Iter); err != nil {
					return err
				}
			}
		}
		return nil
	}
	indices := func(what string, xs, ys []inference.Index, xd, yd []int) error {
		if len(xs) != len(ys) || !slices.Equal(xd, yd) {
			return fmt.Errorf("%s: %v %v vs %v %v", what, xs, xd, ys, yd)
		}
		for i := range xs {
			if err := index(xs[i], ys[i]); err != nil {
				return fmt.Errorf("%s axis %d: %w", what, i, err)
			}
		}
		return nil
	}
	// Index maps first (they fix the renaming), then the product space.
	if err := indices("LHS", a.LHS, b.LHS, a.LHSDims, b.LHSDims); err != nil {
		return err
	}
	if len(a.RHS) != len(b.RHS) {
		return fmt.Errorf("%d vs %d operands", len(a.RHS), len(b.RHS))
	}
	for i := range a.RHS {
		if err := indices(fmt.Sprintf("RHS %d", i), a.RHS[i], b.RHS[i], a.RHSDims[i], b.RHSDims[i]); err != nil {
			return err
		}
	}
	for f := range a.Product {
		x, y := a.Product[f], b.Product[f]
		if len(x.Iters) != len(y.Iters) || !slices.Equal(x.Extents, y.Extents) {
			return fmt.Errorf("factor %d: %v vs %v", f, x, y)
		}
		for i := range x.Iters {
			if err := bind(x.Iters[i], y.Iters[i]); err != nil {
				return fmt.Errorf("factor %d: %w", f, err)
			}
		}
	}
	for i := range a.NumIters {
		if j, ok := ab[i]; !ok || a.Extent[i] != b.Extent[j] {
			return fmt.Errorf("i%d (extent %d) has no counterpart of the same extent", i, a.Extent[i])
		}
	}
	// Reductions: the factors no LHS index mentions (Def. 7.5).
	red := func(p *inference.Projections) map[int]bool {
		m := map[int]bool{}
		for i := range p.NumIters {
			m[i] = true
		}
		for _, x := range p.LHS {
			for _, it := range x.Iters() {
				delete(m, it)
			}
		}
		return m
	}
	ra, rb := red(a), red(b)
	if len(ra) != len(rb) {
		return fmt.Errorf("reductions %v vs %v", ra, rb)
	}
	for i := range ra {
		if !rb[ab[i]] {
			return fmt.Errorf("i%d is a reduction in one order only", i)
		}
	}
	if a.Injective != b.Injective || a.Surjective != b.Surjective || a.ZeroInit != b.ZeroInit || a.Accumulate != b.Accumulate {
		return fmt.Errorf("flags %v/%v/%v/%v vs %v/%v/%v/%v", a.Injective, a.Surjective, a.ZeroInit, a.Accumulate, b.Injective, b.Surjective, b.ZeroInit, b.Accumulate)
	}
	return nil
}

// checkCanonicity: projection inference under random processing orders
// (operations and equations) gives every operation the same record up
// to renaming (Thm. 7.4; Conj. 8.2 when the program has affine or
// concatenation terms). Projection inference must succeed on every
// program whose shapes were inferred (Lemma 7.7).
func checkCanonicity(s *subject, st *stats) error {
	if s.err != nil {
		return nil
	}
	if err := inference.DeriveProjections(s.g); err != nil {
		return fmt.Errorf("shapes inferred but projections failed (Lemma 7.7): %w", err)
	}
	base := snapshot(s.g)
	for range perms {
		if err := inference.DeriveProjectionsOrdered(s.g, s.order()); err != nil {
			return fmt.Errorf("projections failed in another order: %w", err)
		}
		got := snapshot(s.g)
		for i, op := range s.g.Ops {
			if err := sameUpToRenaming(base.ops[i], got.ops[i]); err != nil {
				return fmt.Errorf("%s: the order changed the projections: %w", op.Desc, err)
			}
		}
	}
	st.add("canonicity", s.g)
	return nil
}

// specAxes calls f on every axis of op's spec with its slot (0 the
// result, i+1 operand i) and its position in the tensor's memory order.
func specAxes(g *inference.Graph, op *inference.Op, f func(slot, pos int, ax spec.Axis)) {
	if op.Spec == nil {
		return
	}
	slots := append([]spec.Slot{op.Spec.LHS}, op.Spec.RHS...)
	ids := append([]int{op.LHS}, op.RHS...)
	for j, sl := range slots {
		if j >= len(ids) {
			return
		}
		t := g.Tensors[ids[j]]
		for k := range 3 {
			r := sl.Rows[k]
			row := t.Shape.Row(spec.Kind(k))
			base := map[spec.Kind]int{spec.Batch: 0, spec.Output: len(t.Shape.Batch), spec.Input: len(t.Shape.Batch) + len(t.Shape.Output)}[spec.Kind(k)]
			if r.HasVar {
				for i, ax := range r.Beg {
					f(j, base+i, ax)
				}
				for i, ax := range r.End {
					f(j, base+len(row)-len(r.End)+i, ax)
				}
				continue
			}
			for i, ax := range r.Axes() {
				f(j, base+i, ax)
			}
		}
	}
}

// derivedAxes lists the (slot, axis) positions of op written as affine
// or concatenated axes.
func derivedAxes(g *inference.Graph, op *inference.Op) map[[2]int]bool {
	out := map[[2]int]bool{}
	specAxes(g, op, func(slot, pos int, ax spec.Axis) {
		if ax.Kind == spec.AxisAffine || ax.Kind == spec.AxisConcat {
			out[[2]int{slot, pos}] = true
		}
	})
	return out
}

// expectedPadding folds, independently of projection inference, the
// margins of every padded convolution axis (Prop. 8.1: the margin of an
// axis is the max over the operations addressing it of their kernel
// extents; a window spanning k = 1 + (K−1)·d cells reads ⌊k/2⌋ cells
// before and ⌈k/2⌉ after, docs/language.md and docs/design.md).
func expectedPadding(g *inference.Graph) [][]inference.Padding {
	out := make([][]inference.Padding, len(g.Tensors))
	for _, op := range g.Ops {
		ids := append([]int{op.LHS}, op.RHS...)
		specAxes(g, op, func(slot, pos int, ax spec.Axis) {
			a := ax.Affine
			if ax.Kind != spec.AxisAffine || a.Conv == nil || !a.Conv.Padded {
				return
			}
			t := g.Tensors[ids[slot]]
			span := 1 + (op.Labels[a.Conv.Kernel]-1)*a.Conv.Dilation
			if out[t.ID] == nil {
				out[t.ID] = make([]inference.Padding, len(t.Shape.Dims()))
			}
			p := &out[t.ID][pos]
			p.Left = max(p.Left, span/2)
			p.Right = max(p.Right, (span+1)/2)
		})
	}
	return out
}

// checkPadding: the margins are the same under random processing orders
// and equal the independent fold (Prop. 8.1).
func checkPadding(s *subject, st *stats) error {
	if s.err != nil {
		return nil
	}
	if err := inference.DeriveProjections(s.g); err != nil {
		return fmt.Errorf("shapes inferred but projections failed (Lemma 7.7): %w", err)
	}
	base := snapshot(s.g)
	want := expectedPadding(s.g)
	for i, t := range s.g.Tensors {
		if !slices.Equal(base.pads[i], want[i]) {
			return fmt.Errorf("%s: margins %v, the fold over the padded convolutions gives %v", t.Name, base.pads[i], want[i])
		}
	}
	for range perms {
		if err := inference.DeriveProjectionsOrdered(s.g, s.order()); err != nil {
			return fmt.Errorf("projections failed in another order: %w", err)
		}
		for i, t := range s.g.Tensors {
			if !slices.Equal(base.pads[i], t.Padding) {
				return fmt.Errorf("%s: margins %v in program order, %v in another", t.Name, base.pads[i], t.Padding)
			}
		}
	}
	st.add("padding", s.g)
	return nil
}

// ---------------------------------------------------------------------
// Bounded addressing (Thm. 7.8).

// maxPoints bounds the product-space enumeration per operation.
const maxPoints = 1 << 16

// checkBounds: for every operation, each Iter component drives an axis
// of exactly its iterator's extent, each Fixed index is inside its axis,
// each concatenation's parts fill its axis, and at every point of the
// product space every index lies inside its axis (affine ones inside
// the axis widened by the tensor's margins). Then the lowered program
// runs in the interpreter, which checks every access (statically, the
// "check" pass, and at run time).
func checkBounds(s *subject, st *stats) error {
	if s.err != nil {
		return nil
	}
	g := s.g
	if err := inference.DeriveProjections(g); err != nil {
		return fmt.Errorf("shapes inferred but projections failed (Lemma 7.7): %w", err)
	}
	points := 0
	for _, op := range g.Ops {
		p := op.Proj
		slots := append([]int{op.LHS}, op.RHS...)
		idxs := append([][]inference.Index{p.LHS}, p.RHS...)
		dims := append([][]int{p.LHSDims}, p.RHSDims...)
		factorOf := map[int]int{}
		for f, fac := range p.Product {
			for _, it := range fac.Iters {
				factorOf[it] = f
			}
			if !slices.Equal(fac.Extents, func() []int {
				var e []int
				for _, it := range fac.Iters {
					e = append(e, p.Extent[it])
				}
				return e
			}()) {
				return fmt.Errorf("%s: factor %v extents disagree with the iterators' %v", op.Desc, fac, p.Extent)
			}
		}
		// Static: components against axis sizes.
		derived := derivedAxes(g, op)
		for j, id := range slots {
			t := g.Tensors[id]
			sz := t.Shape.Dims()
			if len(idxs[j]) != len(sz) {
				return fmt.Errorf("%s: %s has %d axes, %d indices", op.Desc, t.Name, len(sz), len(idxs[j]))
			}
			for ax, x := range idxs[j] {
				n := sz[ax].Size
				if dims[j][ax] != n {
					return fmt.Errorf("%s: %s axis %d: the record says size %d, the shape %d", op.Desc, t.Name, ax, dims[j][ax], n)
				}
				switch x.Kind {
				case inference.IdxIter:
					// A derived axis (affine, concatenation) may simplify
					// to an iterator that covers part of it, or reaches
					// into its margins: the points below check it. Only a
					// label's axis is covered exactly.
					if derived[[2]int{j, ax}] {
						continue
					}
					if p.Extent[x.Iter] != n {
						return fmt.Errorf("%s: %s axis %d (size %d) driven by i%d of extent %d", op.Desc, t.Name, ax, n, x.Iter, p.Extent[x.Iter])
					}
				case inference.IdxFixed:
					if lo, hi := axisRange(t, ax, derived[[2]int{j, ax}]); x.Offset < lo || x.Offset >= hi {
						if t.Shape.Size() == 0 {
							continue // an empty tensor is never addressed (below)
						}
						return fmt.Errorf("%s: %s axis %d (size %d) at the fixed index %d", op.Desc, t.Name, ax, n, x.Offset)
					}
				case inference.IdxConcat:
					sum := 0
					for _, pt := range x.Parts {
						sum += pt.Size
						if pt.Iter >= 0 && p.Extent[pt.Iter] != pt.Size {
							return fmt.Errorf("%s: %s axis %d: part i%d of size %d has extent %d", op.Desc, t.Name, ax, pt.Iter, pt.Size, p.Extent[pt.Iter])
						}
					}
					if sum != n {
						return fmt.Errorf("%s: %s axis %d (size %d): the concatenation's parts sum to %d", op.Desc, t.Name, ax, n, sum)
					}
				}
			}
		}
		// Dynamic: every point of the product space. A coupled factor
		// runs one component at a time; an index mentioning an inactive
		// component is not evaluated at that point (nothing is read or
		// written there), as in lowering.
		total := 1
		for _, fac := range p.Product {
			e := 0
			for _, x := range fac.Extents {
				e += x
			}
			total *= max(e, 1)
			if total > maxPoints {
				break
			}
		}
		if total > maxPoints || g.Tensors[op.LHS].Shape.Size() == 0 {
			continue
		}
		val := make([]int, p.NumIters)
		active := make([]bool, p.NumIters)
		var walk func(f int) error
		walk = func(f int) error {
			if f == len(p.Product) {
				points++
				return evalPoint(g, op, slots, idxs, val, active, factorOf, derived)
			}
			fac := p.Product[f]
			for k, it := range fac.Iters {
				for _, o := range fac.Iters {
					active[o] = false
				}
				active[it] = true
				for v := range fac.Extents[k] {
					val[it] = v
					if err := walk(f + 1); err != nil {
						return err
					}
				}
			}
			for _, o := range fac.Iters {
				active[o] = false
			}
			return nil
		}
		if err := walk(0); err != nil {
			return err
		}
	}
	lp, err := loopir.Lower(g)
	if err != nil {
		if strings.Contains(err.Error(), "ambiguous") {
			st.addN("bounds-ambiguous", 1)
			return nil // a concatenation both operands write: rejected, as FuzzInfer allows
		}
		return fmt.Errorf("lowering: %w", err)
	}
	if _, err := loopir.Run[float64](lp); err != nil {
		return fmt.Errorf("interpreter: %w", err)
	}
	st.add("bounds", g)
	st.addN("bounds-points", points)
	return nil
}

// axisRange is the range an index on axis ax of t may take: the axis, or
// for a derived (affine, concatenated) axis the axis widened by the
// tensor's margins.
func axisRange(t *inference.Tensor, ax int, derived bool) (lo, hi int) {
	n := t.Shape.Dims()[ax].Size
	if derived && t.Padding != nil {
		return -t.Padding[ax].Left, n + t.Padding[ax].Right
	}
	return 0, n
}

// evalPoint checks every active index at one point.
func evalPoint(g *inference.Graph, op *inference.Op, slots []int, idxs [][]inference.Index, val []int, active []bool, factorOf map[int]int, derived map[[2]int]bool) error {
	p := op.Proj
	iter := func(it int) (int, bool) {
		if _, ok := factorOf[it]; ok {
			return val[it], active[it]
		}
		// Not in the product space: a size-one iterator sits at 0.
		return 0, p.Extent[it] <= 1
	}
	for j, id := range slots {
		t := g.Tensors[id]
	axes:
		for ax, x := range idxs[j] {
			lo, hi := axisRange(t, ax, derived[[2]int{j, ax}] || x.Kind == inference.IdxAffine)
			var v int
			switch x.Kind {
			case inference.IdxFixed:
				v = x.Offset
			case inference.IdxIter:
				w, ok := iter(x.Iter)
				if !ok {
					continue axes
				}
				v = w
			case inference.IdxAffine:
				v = x.Offset
				for _, tm := range x.Terms {
					w, ok := iter(tm.Iter)
					if !ok {
						continue axes
					}
					v += tm.Coeff * w
				}
			case inference.IdxConcat:
				off, found := 0, false
				for _, pt := range x.Parts {
					if pt.Iter >= 0 {
						if w, ok := iter(pt.Iter); ok && pt.Size > 0 {
							v, found = off+w, true
							if w >= pt.Size {
								return fmt.Errorf("%s: %s axis %d: part i%d = %d outside its size %d", op.Desc, t.Name, ax, pt.Iter, w, pt.Size)
							}
						}
					}
					off += pt.Size
				}
				if !found {
					continue axes
				}
			}
			if v < lo || v >= hi {
				return fmt.Errorf("%s: %s axis %d index %v = %d at %v outside [%d, %d)", op.Desc, t.Name, ax, x, v, val, lo, hi)
			}
		}
	}
	return nil
}

// ---------------------------------------------------------------------
// Soundness of closing (Prop. 6.2).

// checkSound: the closed shapes satisfy every input constraint,
// checked by the independent checker (broadcast.go) — in program order,
// and in random processing orders of the shape solver (Prop. 6.2 holds
// for every fair run); those orders may fail where program order
// succeeds only by a policy rejection, which the experiments count.
func checkSound(s *subject, st *stats, orders int) error {
	if s.prog == nil {
		return nil
	}
	run := func(g *inference.Graph, what string) error {
		rep := Check(s.prog, g)
		if len(rep.Violations) > 0 {
			return fmt.Errorf("%s: the closed shapes violate %d input constraint(s), first: %v", what, len(rep.Violations), rep.Violations[0])
		}
		if rep.Checked == 0 {
			return fmt.Errorf("%s: nothing checked", what)
		}
		st.addN("sound-constraints", rep.Checked)
		st.addN("sound-marked-only-flat", rep.Marked)
		if len(rep.Skipped) > 0 {
			st.addN("sound-skipped", len(rep.Skipped))
		}
		return nil
	}
	if s.err == nil {
		if err := run(s.g, "program order"); err != nil {
			return err
		}
		st.add("sound", s.g)
	}
	for i := range orders {
		o := s.order()
		o.Batch = i%2 == 0
		g, err := inference.InferOrdered(s.prog, o)
		if err != nil {
			continue
		}
		if err := run(g, "another order"); err != nil {
			return err
		}
		st.addN("sound-orders", 1)
	}
	return nil
}

// ---------------------------------------------------------------------
// The shape solver's determinacy under processing orders (experiments
// of Conjs. 8.2 and 8.3): recorded, not asserted (Remark 2.15(v):
// placements, and hence possibly shapes, may depend on the order).

// shapeKey prints every tensor's closed shape with bases and splits.
func shapeKey(g *inference.Graph, splits bool) string {
	var b strings.Builder
	for _, t := range g.Tensors {
		fmt.Fprintf(&b, "%s:", t.Name)
		for k := range 3 {
			fmt.Fprintf(&b, "%s", dimsString(t.Shape.Row(spec.Kind(k))))
			if splits {
				fmt.Fprintf(&b, "/%d", t.Split[k])
			}
		}
		b.WriteString(" ")
	}
	return b.String()
}

// orderOutcome compares shape inference in program order with random
// orders; the first difference is counted in stats under its class
// (verdict: one order fails, the other succeeds; shapes: the closed
// shapes differ; splits: only the markers differ) and kept as an
// example.
func orderOutcome(s *subject, st *stats, orders int) {
	if s.prog == nil {
		return
	}
	for i := range orders {
		o := s.order()
		o.Batch = i%2 == 0
		g, err := inference.InferOrdered(s.prog, o)
		st.addN("orders", 1)
		class, d := "", ""
		switch {
		case (err == nil) != (s.err == nil):
			class, d = "verdict", fmt.Sprintf("program order: %v\nanother order (batch %v): %v", s.err, o.Batch, err)
		case err != nil:
			continue
		case shapeKey(g, false) != shapeKey(s.g, false):
			class, d = "shapes", fmt.Sprintf("shapes differ (batch %v):\n%s\n%s", o.Batch, shapeKey(s.g, false), shapeKey(g, false))
		case shapeKey(g, true) != shapeKey(s.g, true):
			class, d = "splits", fmt.Sprintf("splits differ (batch %v):\n%s\n%s", o.Batch, shapeKey(s.g, true), shapeKey(g, true))
		default:
			continue
		}
		st.addN("orders-"+class+"-differ", 1)
		st.example("order-"+class, s.src+"\n"+d)
		return
	}
}

// ---------------------------------------------------------------------
// Statistics: what the properties checked. A long fuzz run writes them
// when OCANNLGEN_FORMAL_STATS names a directory (one file per target and
// worker process, rewritten at most once a second).

type stats struct {
	mu       sync.Mutex
	n        map[string]int
	examples map[string][]string // a few programs per finding
	target   string
	last     time.Time
}

func newStats(target string) *stats {
	return &stats{n: map[string]int{}, examples: map[string][]string{}, target: target}
}

// example keeps a program showing a finding (the first few, and the
// shortest seen).
func (st *stats) example(kind, text string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	ex := st.examples[kind]
	switch {
	case len(ex) < 4:
		st.examples[kind] = append(ex, text)
	case len(text) < len(ex[len(ex)-1]):
		ex[len(ex)-1] = text
	}
	slices.SortFunc(st.examples[kind], func(a, b string) int { return len(a) - len(b) })
}

func (st *stats) logExamples(t *testing.T) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for kind, ex := range st.examples {
		t.Logf("%s: %d example(s), the shortest:\n%s", kind, len(ex), ex[0])
	}
}

func (st *stats) addN(key string, n int) {
	st.mu.Lock()
	st.n[key] += n
	st.mu.Unlock()
}

// add counts a checked program under key and its fragment.
func (st *stats) add(key string, g *inference.Graph) {
	f := featuresOf(g)
	st.addN(key, 1)
	if f.stratified() {
		st.addN(key+"-affine-or-concat", 1)
	} else {
		st.addN(key+"-core", 1)
	}
	if f.padded {
		st.addN(key+"-padded", 1)
	}
	if f.zeroClosed {
		st.addN(key+"-zero-closed", 1)
	}
	if f.zeroClosed && f.unitClosed {
		st.addN(key+"-zero-and-unit-closed", 1)
	}
}

func (st *stats) flush(force bool) {
	dir := os.Getenv("OCANNLGEN_FORMAL_STATS")
	if dir == "" {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if !force && time.Since(st.last) < time.Second {
		return
	}
	st.last = time.Now()
	b, _ := json.Marshal(map[string]any{"counts": st.n, "examples": st.examples})
	name := filepath.Join(dir, fmt.Sprintf("%s-%d.json", st.target, os.Getpid()))
	_ = os.WriteFile(name+".tmp", b, 0o644)
	_ = os.Rename(name+".tmp", name)
}

func (st *stats) String() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	keys := make([]string, 0, len(st.n))
	for k := range st.n {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%d ", k, st.n[k])
	}
	return b.String()
}
