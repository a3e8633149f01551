package asm

import (
	"slices"

	"github.com/ocannlgen/ocannlgen/loopir"
)

// FoldOuter returns contraction n with the reduction loops around its
// call folded into the broadcast kernel's reduction axes (K2, then K3),
// when they are the innermost of its outer loops (loops of extent 1
// between them dropped) and the kernel, in every tier of tiers, runs
// its k in one block without packing B (so that folding loses no cache
// blocking). A convolution's kernel gradient, a sum over the batch per
// call with the output pixels in the loops around it, then becomes one
// call per kernel row (or part) that keeps its C tile in the registers
// over all the pixels, instead of loading and storing C after every 32
// reduction steps. The kernel sums k3, k2 and k in the loops' order;
// its register sums are added to C once (the unfolded calls added after
// each call). n is returned unchanged when nothing folds; p is the
// program the nest's tensors belong to.
func FoldOuter(n *Nest, p *loopir.Program, tiers []Config) *Nest {
	sp := n.Spec
	if sp.Kind != Broadcast || sp.folds() || len(n.Outer) == 0 {
		return n
	}
	for _, t := range tiers {
		if len(t.kBlocks(&sp)) > 1 {
			return n
		}
	}
	strides := map[int]map[int]int{}
	for _, t := range []int{n.C, n.A, n.B} {
		st, ok := loopir.FlatStrides(n.Zero[t], p.Tensors[t].BufDims)
		if !ok {
			return n
		}
		strides[t] = st
	}
	drop := map[int]bool{}
	var fold []*loopir.For // innermost first
	for i := len(n.Outer) - 1; i >= 0 && len(fold) < 2; i-- {
		l := n.Outer[i]
		if l.Extent == 1 {
			drop[l.Var] = true
			continue
		}
		if strides[n.C][l.Var] != 0 || strides[n.A][l.Var] < 0 || strides[n.B][l.Var] < 0 {
			break
		}
		drop[l.Var] = true
		fold = append(fold, l)
	}
	if len(fold) == 0 {
		return n
	}
	m := *n
	m.Axes = slices.Clone(n.Axes)
	// The reductions, the kernel's own k first, then the folded loops
	// from the inside out; the one of smallest strides runs innermost
	// (as k), the others outside it in order of their strides, so that
	// the kernel streams through A and B along their rows rather than
	// jumping a whole image per step (a convolution's kernel gradient:
	// the output columns innermost, then the rows, then the batch).
	type red struct{ n, a, b int }
	reds := []red{{sp.K, sp.AK, sp.BK}}
	for _, l := range fold {
		m.Axes = append(m.Axes, []int{l.Var})
		reds = append(reds, red{l.Extent, strides[n.A][l.Var], strides[n.B][l.Var]})
	}
	slices.SortStableFunc(reds, func(x, y red) int { return (x.a + x.b) - (y.a + y.b) })
	m.Spec.K, m.Spec.AK, m.Spec.BK = reds[0].n, reds[0].a, reds[0].b
	m.Spec.K2, m.Spec.AK2, m.Spec.BK2 = reds[1].n, reds[1].a, reds[1].b
	if len(reds) > 2 {
		m.Spec.K3, m.Spec.AK3, m.Spec.BK3 = reds[2].n, reds[2].a, reds[2].b
	}
	if !m.Spec.fitsImm32() {
		return n
	}
	m.Outer = nil
	for _, l := range n.Outer {
		if !drop[l.Var] {
			m.Outer = append(m.Outer, l)
		}
	}
	m.Zero = map[int][]loopir.IndexExpr{}
	for t, idx := range n.Zero {
		m.Zero[t] = zeroVars(idx, drop)
	}
	return &m
}
