package schedule

import (
	"slices"

	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/emit/target"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
)

// Parallel nests (Options.Parallel). A perfect nest worth it runs as a
// fixed number of parts on an rt.Pool: one loop L (extent E) that is not
// a reduction and alone drives an axis of the stored tensor is split as
// L = (E/P)*part + L', so part p writes its own cells and only them; the
// other loops, reductions included, run whole inside each part, so every
// cell receives its updates in the serial order. P depends only on E,
// never on the number of threads: the results are the same bits on any
// number of threads (an assembly kernel, specialized for the part's
// size, may round differently from the unsplit kernel, but identically
// on 1 or 64 threads).
//
// The rule (Worth): a nest runs in parallel when it does at least
// Parallel.MinGoIters iterations of Go loops, MinAsmIters multiply-adds
// of an assembly contraction or MinMapIters elements of an assembly
// pointwise map (target.Parallel of the kernel's target), and when every tensor it touches is a
// parameter, a constant, a scratch field or a local array Go allocates on
// the heap anyway (over 128 KiB: a standalone kernel's padded copy of a
// large input); a stack local cannot be shared with the pool's goroutines
// without escaping to the heap.
// The loop split is, among the splittable loops (not the innermost of
// the nest nor of the emitted order, unless a broadcast kernel's n
// axis), the one that keeps a merged kernel axis whole in each part's
// call, then one the assembly kernel leaves
// outside its call if there is one, else a broadcast kernel's n axis
// when its parts are multiples of 32 elements, else any; the longest,
// the outermost among equals. P is the largest divisor of E in 2..8, else in
// 9..16 (Parallel.PartRanges); a loop with none is not split. A broadcast
// kernel's n axis takes the largest P in 2..8 whose parts are multiples
// of 32 (SliverParts; Parallel.MaxSliverParts and SliverElems).
// Parts is the number of parts of a loop of extent e (0: none).
func Parts(pt target.Parallel, e int) int {
	for _, r := range pt.PartRanges {
		for p := r[0]; p >= r[1]; p-- {
			if e%p == 0 {
				return p
			}
		}
	}
	return 0
}

// Worth applies the size rule to the perfect nest loops (storing st) of
// p in elem code with the given assembly tiers and target t; n0 is the
// nest's contraction kernel, if any. Go loops count GoCost iterations per
// iteration. A model's kernels (model) divide the thresholds by
// Parallel.ModelDiv.
func Worth(tiers []asm.Config, t target.CPU, p *loopir.Program, loops []*loopir.For, st *loopir.Store, elem string, model bool) (n0 *asm.Nest, ok bool) {
	pt := t.Parallel
	div := 1
	if model {
		div = pt.ModelDiv
	}
	iters := 1
	for _, l := range loops {
		iters *= l.Extent
	}
	switch ch := Choose(tiers, p, loops, st, Query{Elem: elem}); ch.Family {
	case Contraction:
		// A short reduction (a layer's input gradient through 4 logits:
		// 256x400 cells, K=4) is memory work: its cells count as a map's
		// elements.
		return ch.Contraction, iters >= pt.MinAsmIters/div || StoredCells(loops, st) >= pt.MinMapIters/div
	case Map:
		return nil, iters >= pt.MinMapIters/div
	}
	return nil, iters*GoCost(pt, st.Value) >= pt.MinGoIters/div
}

// MinGoIters is the Go-loop threshold of Worth: Parallel.MinGoIters,
// divided by ModelDiv in a model's kernels.
func MinGoIters(pt target.Parallel, model bool) int {
	if model {
		return pt.MinGoIters / pt.ModelDiv
	}
	return pt.MinGoIters
}

// StoredCells is the number of cells a perfect nest stores into: the
// product of the extents of the loops its store's index mentions.
func StoredCells(loops []*loopir.For, st *loopir.Store) int {
	n := 1
	for _, l := range StoreLoops(loops, st) {
		n *= l.Extent
	}
	return n
}

// StoreLoops are the loops whose variables the store's index mentions
// (a contraction's without its reductions).
func StoreLoops(loops []*loopir.For, st *loopir.Store) []*loopir.For {
	used := map[int]bool{}
	for _, x := range st.Index {
		for _, tm := range x.Terms {
			used[tm.Var] = true
		}
	}
	var out []*loopir.For
	for _, l := range loops {
		if used[l.Var] {
			out = append(out, l)
		}
	}
	return out
}

// GoCost is the cost of computing e once in Go loops, in iterations:
// 1, plus Parallel.TranscendentalCost per transcendental primitive.
func GoCost(pt target.Parallel, e loopir.Expr) int {
	c := 1
	loopir.WalkExpr(e, func(e loopir.Expr) {
		if a, ok := e.(*loopir.Apply); ok {
			switch a.Prim {
			case ops.Exp, ops.Log, ops.Exp2, ops.Log2, ops.Sin, ops.Cos, ops.Tanh, ops.Pow, ops.Erf, ops.Gelu, ops.GeluTanh:
				c += pt.TranscendentalCost
			}
		}
	})
	return c
}

// SplitLoop picks the loop of a nest worth splitting (Worth) and its
// parts: among the splittable loops (not reductions, owning an axis of
// the store, not the innermost of the nest nor of pl's emitted order
// unless it is a broadcast kernel's n axis), the best balanced, then
// the one breaking the kernel n0's merged axes into the fewest calls,
// then one n0 leaves outside its call, else a broadcast kernel's n
// axis in slivers of whole vectors, else any; then the longest, the
// outermost among equals. nil when none qualifies. packsBoth says the
// contraction runs in rt/bf16, which packs both operands (a //ocannl:model
// bf16 kernel): a part then packs again the operand its split does not
// cut, so the n axis is not preferred when m is at least as long (the
// parts cut m and pack the shorter B again).
func SplitLoop(pt target.Parallel, loops []*loopir.For, st *loopir.Store, pl *LoopPlan, n0 *asm.Nest, packsBoth bool) (*loopir.For, int) {
	outer := map[int]bool{}
	if n0 != nil {
		for _, l := range n0.Outer {
			outer[l.Var] = true
		}
	}
	// A broadcast kernel's n axis (unit stride in C) cut into slivers of
	// whole vectors keeps m whole: no B sliver packed again per part and
	// no extra m tail tiles.
	nVar := -1
	if n0 != nil && n0.Spec.Kind == asm.Broadcast && len(st.Index) > 0 && !(packsBoth && n0.Spec.M >= n0.Spec.N*max(1, n0.Spec.N2)) {
		if x := st.Index[len(st.Index)-1]; len(x.Terms) == 1 && x.Terms[0].Coeff == 1 {
			nVar = x.Terms[0].Var
		}
	}
	rank := func(l *loopir.For) int {
		switch {
		case outer[l.Var]:
			return 2
		case l.Var == nVar:
			return 1
		}
		return 0
	}
	parts := func(l *loopir.For) int {
		if l.Var == nVar {
			return SliverParts(pt, l.Extent)
		}
		return Parts(pt, l.Extent)
	}
	// A loop of a kernel axis merged from several loops (batch and
	// position as one token axis) keeps the loops inside it in the
	// kernel's axis, part of its extent, and leaves the loops outside it
	// around the call: broken is their product (1 when the split keeps
	// the axis whole in each part's kernel, which runs one call of M=128
	// where splitting the inner loop runs 8 calls of M=16).
	extents := map[int]int{}
	for _, l := range loops {
		extents[l.Var] = l.Extent
	}
	kernelAxis := func(l *loopir.For) (inner, broken int) {
		inner, broken = l.Extent, 1
		if n0 == nil {
			return
		}
		for _, vars := range n0.Axes {
			i := slices.Index(vars, l.Var)
			if i < 0 {
				continue
			}
			inner = 1
			for j, v := range vars {
				switch {
				case j < i:
					broken *= extents[v]
				default:
					inner *= extents[v]
				}
			}
		}
		return
	}
	// A contraction kernel's own axis counts its balance only when its
	// parts stay Parallel.MinKernelPart long (a kernel gradient's 8 output
	// channels in 8 parts would make 8 kernels of one row).
	bal := func(l *loopir.For) int {
		if inner, _ := kernelAxis(l); n0 != nil && rank(l) == 0 && inner/parts(l) < pt.MinKernelPart {
			return 0
		}
		return Balance(parts(l))
	}
	broken := func(l *loopir.For) int {
		_, b := kernelAxis(l)
		return b
	}
	var best *loopir.For
	for i, l := range loops {
		if i == len(loops)-1 && (l.Var != nVar || broken(l) > 1) {
			// The innermost loop, unless a broadcast kernel's n axis
			// that is one loop (a convolution's kernel gradient merges
			// its kernel width with the input channels there: split on
			// the channels, each part would run 3 calls of 32 columns).
			continue
		}
		if pl.Red[l.Var] || !loopir.OwnsAxis(l.Var, st.Index) || Parts(pt, l.Extent) == 0 {
			continue
		}
		if l.Var == nVar && SliverParts(pt, l.Extent) == 0 {
			continue
		}
		if n0 != nil && n0.Spec.Kind == asm.MVec && !outer[l.Var] {
			// An m-vector kernel split on its own axes loses vector
			// lanes (m) or columns; partial sums over the reduction
			// (parReduce) keep its tile whole.
			continue
		}
		if l.Var == pl.Loops[len(pl.Loops)-1].Var && l.Var != nVar {
			continue
		}
		if best == nil || better(bal(l), broken(l), rank(l), l.Extent, bal(best), broken(best), rank(best), best.Extent) {
			best = l
		}
	}
	if best == nil {
		return nil, 0
	}
	return best, parts(best)
}

// Balance grades a number of parts by how evenly 2 and 4 threads share
// them: 2 for a multiple of 4, 1 for even, 0 for odd (5 parts on 2
// threads leave one idle a fifth of the nest: the convolutions split on
// 5 or 10 output rows, where their batch splits in 8).
func Balance(parts int) int {
	switch {
	case parts%4 == 0:
		return 2
	case parts%2 == 0:
		return 1
	}
	return 0
}

// better orders the loops SplitLoop may split: by balance, then by the
// calls a part's kernel axis breaks into (fewer first), then by rank (a
// loop around the kernel call, then a broadcast kernel's n axis), then
// by extent.
func better(bal, broken, rank, ext, bal0, broken0, rank0, ext0 int) bool {
	if bal != bal0 {
		return bal > bal0
	}
	if broken != broken0 {
		return broken < broken0
	}
	if rank != rank0 {
		return rank > rank0
	}
	return ext > ext0
}

// SliverParts is the number of parts of a broadcast kernel's n loop of extent
// e: the largest divisor of e in 2..MaxSliverParts whose parts are
// multiples of SliverElems elements (whole vectors in every tier), 0 if
// none.
func SliverParts(pt target.Parallel, e int) int {
	for p := pt.MaxSliverParts; p >= 2; p-- {
		if e%p == 0 && (e/p)%pt.SliverElems == 0 {
			return p
		}
	}
	return 0
}

// SplitIndex rewrites the terms of v as (c*size)*part + c*v.
func SplitIndex(idx []loopir.IndexExpr, v, part, size int) []loopir.IndexExpr {
	out := make([]loopir.IndexExpr, len(idx))
	for a, x := range idx {
		y := loopir.IndexExpr{Offset: x.Offset}
		for _, t := range x.Terms {
			y.Terms = append(y.Terms, t)
			if t.Var == v && t.Coeff != 0 {
				y.Terms = append(y.Terms, loopir.IndexTerm{Coeff: t.Coeff * size, Var: part})
			}
		}
		out[a] = y
	}
	return out
}

// SplitExpr is e with its loads' indices rewritten by SplitIndex.
func SplitExpr(e loopir.Expr, v, part, size int) loopir.Expr {
	return loopir.MapIndices(e, func(idx []loopir.IndexExpr) []loopir.IndexExpr { return SplitIndex(idx, v, part, size) })
}

// PartialSplit picks the reduction loop a nest's fixed partial sums split
// (its outermost reduction loop with Parts), and the parts; nil when
// none. The caller checks the rest of the rule: an additive reduction
// worth splitting, covering every cell of an unpadded output of at most
// Parallel.MaxPartialCells cells (pl.Bijective, not pl.Reads).
func PartialSplit(pt target.Parallel, loops []*loopir.For, pl *LoopPlan) (*loopir.For, int) {
	for _, l := range loops {
		if pl.Red[l.Var] && Parts(pt, l.Extent) > 0 {
			return l, Parts(pt, l.Extent)
		}
	}
	return nil, 0
}
