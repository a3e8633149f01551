package asm

import (
	"fmt"
	"slices"

	"github.com/ocannlgen/ocannlgen/emit/target"
	"github.com/ocannlgen/ocannlgen/loopir"
)

// Kind is the shape of a contraction micro-kernel.
type Kind int

const (
	// Broadcast is C[m,n] += A[m,k] * B[k,n] with n unit-stride in C and
	// B: each step broadcasts one A cell per row of the tile and runs one
	// FMA per vector of B (A's strides are arbitrary, so a transposed A
	// works as well).
	Broadcast Kind = iota
	// Dot is C[m,n] += A[m,k] * B[n,k] with k unit-stride in A and B:
	// the tile accumulates vector partial sums along k and reduces them
	// horizontally at the end (the NT product of a gradient).
	Dot
	// MVec (AVX2 only, mvec.go) is C[m,n,n2] += A[m,k,k2,k3] *
	// B[n,n2,k,k2,k3] with m unit-stride in A: the vector runs along m,
	// each of the N*N2 columns broadcasts one B cell per reduction step,
	// and the sums are scattered into C at the end (a convolution's
	// kernel gradient: m the output channels, the columns the kernel
	// window, the reduction the batch and the output pixels).
	MVec
)

// String names the kind as the explain output prints it.
func (k Kind) String() string {
	switch k {
	case Dot:
		return "dot"
	case MVec:
		return "m-vector"
	}
	return "broadcast"
}

// Spec is one specialized contraction kernel: every size and stride is a
// constant of the generated code. Strides count elements, from the base
// addresses the caller passes (C, A, B in that order).
type Spec struct {
	Elem    string // "float32" or "float64"
	Kind    Kind
	M, N, K int
	// CM, CN: C's strides along m and n; AM, AK: A's; BK, BN: B's.
	// Broadcast has CN == BN == 1; Dot has AK == BK == 1.
	CM, CN, AM, AK, BK, BN int
	// K2 is a second reduction axis of the dot kernel, with A's and B's
	// strides AK2 and BK2 (K2 is 1 when there is none): a convolution's
	// kernel rows, summed in the registers instead of by calls that add
	// into C. A broadcast kernel takes K2 and K3 too (the caller folds
	// the reduction loops around its call into them: a convolution's
	// kernel gradient, summed over the output pixels), run outside k
	// (k3, k2, then k innermost) in one k block, B not packed.
	K2, AK2, BK2 int
	// Overwrite: the kernel stores the products instead of adding them
	// to C (the caller's pre-fill with 0 is absorbed).
	Overwrite bool
	// Gather: the AVX2 tier runs this Dot spec in the gathered broadcast
	// form (gather.go); the AVX-512 tier keeps the dot kernel.
	Gather bool
	// MVec only: a second column axis N2 (C and B strides CN2, BN2). MVec
	// and Broadcast: a third reduction axis K3 (A and B strides AK3,
	// BK3); N2 and K3 are 1 (or 0) when there is none. The reduction runs
	// k3, k2, then k innermost.
	N2, CN2, BN2 int
	K3, AK3, BK3 int
	// Winograd: the tiers whose target has Winograd run this
	// convolution in rt/wino (emit/gocode), so they have no kernel for
	// it.
	Winograd bool
	// tb marks the broadcast view of a dot spec in the transposed-B
	// form (transposed; never set in a spec the classifier makes).
	tb bool
}

// EmitsIn reports whether the kernel exists in tier t: the MVec kind is
// AVX2 only (AVX-512 machines run the AVX2 kernel); a Winograd spec has
// none in the tiers that run rt/wino instead.
func (s *Spec) EmitsIn(t Config) bool {
	return !(s.Winograd && t.Winograd) && (!t.Wide || s.Kind != MVec)
}

// folds reports whether a broadcast kernel has reduction axes besides
// k (K2, K3).
func (s *Spec) folds() bool { return s.Kind == Broadcast && (s.K2 > 1 || s.K3 > 1) }

// elemSize is the size of one element in bytes.
func (s *Spec) elemSize() int {
	if s.Elem == "float64" {
		return 8
	}
	return 4
}

// fitsImm32 reports whether every byte offset the kernel forms from its
// base addresses fits a 32-bit displacement (the kernels use constant
// displacements and immediates).
func (s *Spec) fitsImm32() bool {
	es := s.elemSize()
	span := func(ext, stride int) int { return max(0, ext-1) * stride }
	total := es * (span(s.M, s.CM+s.AM) + span(s.N, s.CN+s.BN) + span(s.K, s.AK+s.BK) + span(s.K2, s.AK2+s.BK2) +
		span(s.N2, s.CN2+s.BN2) + span(s.K3, s.AK3+s.BK3) + 64)
	return total < 1<<30
}

// Flops is the number of floating-point operations of one call.
func (s *Spec) Flops() int {
	return 2 * s.M * s.N * max(1, s.N2) * s.K * max(1, s.K2) * max(1, s.K3)
}

// Nest is a perfect loop nest the classifier recognized: the loops the
// Go code keeps around the kernel call (Outer, in nest order) and the
// kernel. A call runs the kernel with C, A and B's addresses at the
// index each tensor has when every loop variable of the kernel's axes is
// zero (Zero).
type Nest struct {
	Spec Spec
	// Outer are the loops the Go code runs around the call, outermost
	// first.
	Outer []*loopir.For
	// C, A, B are the tensors (C is the stored one).
	C, A, B int
	// Zero maps each of C, A and B to its index expressions with the
	// kernel's loop variables set to zero.
	Zero map[int][]loopir.IndexExpr
	// OuterReduces: an outer loop is a reduction (C does not depend on
	// it), so the kernel must accumulate.
	OuterReduces bool
	// Axes are the loop variables of each of the kernel's axes,
	// outermost first: more than one where loops merged (a token axis of
	// batch and position).
	Axes [][]int
}

// axis is one loop (or several merged loops) of a nest, with the flat
// element stride of each tensor along it.
type axis struct {
	vars    []int // the loop variables, outermost first
	extent  int
	c, a, b int
}

// Classify recognizes a perfect nest (loops outermost first, ending in
// st) that is a contraction an assembly kernel can run: st accumulates
// by addition the product of two loads of other tensors, every stride is
// non-negative, and the loops split into the kernel's m, n and k axes
// (merging loops whose strides compose, e.g. a convolution's kernel
// width with its input channels) and outer loops. overwrite asks for a
// kernel that stores instead of adding (the nest absorbs a pre-fill with
// zero). It returns nil when the nest does not qualify.
func Classify(kn target.Kernels, p *loopir.Program, loops []*loopir.For, st *loopir.Store, elem string, overwrite bool) *Nest {
	return ClassifyFree(kn, p, loops, st, elem, overwrite, nil)
}

// ClassifyFree is Classify where the indices may also mention the
// variables of free, bound outside the nest (a part number of a loop
// split between threads): they stay in the call's base addresses.
func ClassifyFree(kn target.Kernels, p *loopir.Program, loops []*loopir.For, st *loopir.Store, elem string, overwrite bool, free map[int]bool) *Nest {
	if elem != "float32" && elem != "float64" || len(loops) < 2 {
		return nil
	}
	la, lb, sc, axes, ok := productAxes(p, loops, st, free)
	if !ok {
		return nil
	}
	axes = mergeAxes(axes)
	// The broadcast kernel unless its n axis is short and a dot kernel
	// has a longer k.
	var n *pick
	b, d := pickBroadcast(axes, kn), pickDot(axes, kn)
	switch {
	case b != nil && (d == nil || b.Spec.N >= kn.DotMaxN || b.Spec.N >= d.Spec.K):
		n = b
	case d != nil:
		n = d
	}
	lanes := AVX2().lanes(&Spec{Elem: elem})
	if v := pickMVec(axes, lanes, kn); mvecPays(v, n, lanes, kn) {
		v.Spec.Elem = elem
		if v.Spec.Flops() >= kn.MinFlops && v.Spec.fitsImm32() {
			n = v
		}
	}
	if n == nil || n.Spec.Flops() < kn.MinFlops || !n.Spec.fitsImm32() {
		return nil
	}
	n.C, n.A, n.B = st.Tensor, la.Tensor, lb.Tensor
	if n.swapped {
		n.A, n.B = n.B, n.A
	}
	n.Spec.Elem = elem
	n.Spec.Gather = n.Spec.Kind == Dot && gatherPays(&n.Spec, kn)
	kernelVars := map[int]bool{}
	for _, x := range n.axes {
		n.Axes = append(n.Axes, slices.Clone(x.vars))
		for _, v := range x.vars {
			kernelVars[v] = true
		}
	}
	for _, l := range loops {
		if !kernelVars[l.Var] {
			n.Outer = append(n.Outer, l)
			if sc[l.Var] == 0 {
				n.OuterReduces = true
			}
		}
	}
	if overwrite && n.OuterReduces {
		return nil
	}
	n.Spec.Overwrite = overwrite
	n.Zero = map[int][]loopir.IndexExpr{}
	for _, ld := range []*loopir.Load{{Tensor: st.Tensor, Index: st.Index}, la, lb} {
		n.Zero[ld.Tensor] = zeroVars(ld.Index, kernelVars)
	}
	return &n.Nest
}

// zeroVars drops the terms of the kernel's variables.
func zeroVars(idx []loopir.IndexExpr, vars map[int]bool) []loopir.IndexExpr {
	out := make([]loopir.IndexExpr, len(idx))
	for a, x := range idx {
		out[a].Offset = x.Offset
		for _, t := range x.Terms {
			if !vars[t.Var] {
				out[a].Terms = append(out[a].Terms, t)
			}
		}
	}
	return out
}

// mergeAxes merges pairs of axes u (outer) and v whose strides compose
// (u's stride is v's times v's extent in every tensor), so that they run
// as one axis of extent u*v, until no pair merges. Pairs are tried in
// nest order, so the result is deterministic.
func mergeAxes(axes []*axis) []*axis {
	for {
		merged := false
		for i := 0; i < len(axes) && !merged; i++ {
			for j := 0; j < len(axes) && !merged; j++ {
				u, v := axes[i], axes[j]
				if i == j || (v.c == 0 && v.a == 0 && v.b == 0) {
					continue
				}
				if u.c == v.c*v.extent && u.a == v.a*v.extent && u.b == v.b*v.extent {
					v.vars = append(slices.Clone(u.vars), v.vars...)
					v.extent *= u.extent
					axes = slices.Delete(axes, i, i+1)
					merged = true
				}
			}
		}
		if !merged {
			return axes
		}
	}
}

// pick is a candidate kernel for a nest.
type pick struct {
	Nest
	axes    []*axis
	swapped bool
}

// largest returns the axis of largest extent satisfying ok (the first
// on ties).
func largest(axes []*axis, ok func(*axis) bool) *axis {
	var best *axis
	for _, x := range axes {
		if ok(x) && (best == nil || x.extent > best.extent) {
			best = x
		}
	}
	return best
}

// dotRows picks the dot kernel's m axis (along C and A only): the
// longest (ties to the smaller C stride), unless an axis with a smaller
// C stride is at least 8 long (two 4-row tiles) and a quarter of the
// longest; then the one of those with the smallest C stride. A
// convolution's batch and its output pixels are both m candidates: with
// the batch as m, C's tile rows lie a whole image apart (64, 32 and
// 16 KiB in the ResNet-20's three stages), so they share L1 sets and
// every call walks the batch's images; the pixels' rows are one pixel's
// channels apart, and A's rows overlap in the window (the rows of the
// bf16 runtime's rowAxes, docs/design.md "Rows, runs and windows"). Each
// cell's sum keeps its order, so the bits do not change.
func dotRows(axes []*axis) *axis {
	var best *axis
	for _, x := range axes {
		if x.c == 0 || x.a == 0 || x.b != 0 {
			continue
		}
		if best == nil || x.extent > best.extent || x.extent == best.extent && x.c < best.c {
			best = x
		}
	}
	longest := best
	for _, x := range axes {
		if x.c == 0 || x.a == 0 || x.b != 0 {
			continue
		}
		if x.extent >= 8 && 4*x.extent >= longest.extent && x.c < best.c {
			best = x
		}
	}
	return best
}

// pickBroadcast finds a Broadcast kernel: an n axis of unit stride in C
// and one operand (B, swapping the operands if needed), a k axis that C
// does not depend on, and an m axis (or none) along C and A only.
func pickBroadcast(axes []*axis, kn target.Kernels) *pick {
	for _, swapped := range []bool{false, true} {
		opA := func(x *axis) int {
			if swapped {
				return x.b
			}
			return x.a
		}
		opB := func(x *axis) int {
			if swapped {
				return x.a
			}
			return x.b
		}
		n := largest(axes, func(x *axis) bool { return x.c == 1 && opB(x) == 1 && opA(x) == 0 })
		k := largest(axes, func(x *axis) bool { return x.c == 0 && opA(x) != 0 && opB(x) != 0 })
		if n == nil || k == nil || n.extent < kn.MinBroadcastN {
			continue
		}
		m := largest(axes, func(x *axis) bool { return x.c != 0 && opA(x) != 0 && opB(x) == 0 && x.c >= n.extent })
		p := &pick{swapped: swapped, axes: []*axis{n, k}}
		p.Spec = Spec{Kind: Broadcast, M: 1, N: n.extent, K: k.extent, CN: 1, AK: opA(k), BK: opB(k), BN: 1}
		if m != nil {
			p.axes = append(p.axes, m)
			p.Spec.M, p.Spec.CM, p.Spec.AM = m.extent, m.c, opA(m)
		}
		return p
	}
	return nil
}

// pickDot finds a Dot kernel: a k axis of unit stride in both operands
// that C does not depend on, and m and n axes along C and one operand
// each (at least one of them), with C's cells distinct.
func pickDot(axes []*axis, kn target.Kernels) *pick {
	k := largest(axes, func(x *axis) bool { return x.c == 0 && x.a == 1 && x.b == 1 })
	if k == nil {
		return nil
	}
	m := dotRows(axes)
	n := largest(axes, func(x *axis) bool { return x.c != 0 && x.b != 0 && x.a == 0 })
	if m == nil && n == nil {
		return nil
	}
	// The kernel's n tiles run innermost and its full tiles store their
	// sums with one vector store per row when C's n stride is 1
	// (treeStore); with C contiguous along m instead (a product written
	// transposed: the MLP's 1536 outputs per token, stored token-major),
	// the operands swap roles, so that C's unit-stride axis is n and the
	// n sweep re-reads the weight rows rather than all the tokens (the
	// GPT's 1024x1536x384 product: 140 -> 201 GFLOP/s, docs/benchmarks.md,
	// "The GPT's contractions and optimizer step").
	p := &pick{axes: []*axis{k}}
	ma, nb := func(x *axis) int { return x.a }, func(x *axis) int { return x.b }
	if m != nil && n != nil && m.c == 1 && n.c != 1 {
		m, n = n, m
		ma, nb = nb, ma
		p.swapped = true
	}
	p.Spec = Spec{Kind: Dot, M: 1, N: 1, K: k.extent, AK: 1, BK: 1}
	if m != nil {
		p.axes = append(p.axes, m)
		p.Spec.M, p.Spec.CM, p.Spec.AM = m.extent, m.c, ma(m)
	}
	if n != nil {
		p.axes = append(p.axes, n)
		p.Spec.N, p.Spec.CN, p.Spec.BN = n.extent, n.c, nb(n)
	}
	if m != nil && n != nil && !(m.c >= n.c*n.extent || n.c >= m.c*m.extent) {
		return nil // C's cells of the tile overlap
	}
	p.Spec.K2 = 1
	if k2 := largest(axes, func(x *axis) bool { return x != k && x.c == 0 && x.a != 0 && x.b != 0 }); k2 != nil {
		p.axes = append(p.axes, k2)
		p.Spec.K2, p.Spec.AK2, p.Spec.BK2 = k2.extent, k2.a, k2.b
		if p.swapped {
			p.Spec.AK2, p.Spec.BK2 = k2.b, k2.a
		}
	}
	if red := p.Spec.K * p.Spec.K2; red < kn.MinDotK || (p.Spec.M < 2 || p.Spec.N < 2) && red < kn.MinDotKVector {
		return nil
	}
	return p
}

// Describe is a one-line account of the kernel for comments and the
// explain output, with each tier's register tile and blocking.
func (s *Spec) Describe(tiers ...Config) string {
	d := fmt.Sprintf("%s %s kernel M=%d N=%d", s.Elem, s.Kind, s.M, s.N)
	if s.N2 > 1 {
		d += fmt.Sprintf("x%d", s.N2)
	}
	d += fmt.Sprintf(" K=%d", s.K)
	if s.K2 > 1 {
		d += fmt.Sprintf("x%d", s.K2)
	}
	if s.K3 > 1 {
		d += fmt.Sprintf("x%d", s.K3)
	}
	tiers = slices.DeleteFunc(slices.Clone(tiers), func(c Config) bool { return !s.EmitsIn(c) })
	for i, c := range tiers {
		mr, nr := c.tile(s)
		sep := ": "
		if i > 0 {
			sep = "; "
		}
		form := ""
		if s.gathers(c) {
			form = "gathered broadcast "
		}
		if s.transposes(c) {
			form = "broadcast "
		}
		d += fmt.Sprintf("%s%s %s%dx%d tile, %s", sep, c.Tier, form, mr, nr, c.blocking(s))
	}
	if s.Kind == MVec && len(tiers) > 0 {
		d += " (also on AVX-512 machines)"
	}
	return d
}

// productAxes reads the product nest ending in st (loops outermost
// first): the two loads st accumulates the product of (other tensors
// than st's), C's flattened strides per variable, and one axis per loop
// with its strides along C, A and B (not yet merged). ok is false when
// st is not such a product, a stride is negative, or an index mentions a
// variable bound outside the nest that is not in free.
func productAxes(p *loopir.Program, loops []*loopir.For, st *loopir.Store, free map[int]bool) (la, lb *loopir.Load, sc map[int]int, axes []*axis, ok bool) {
	la, lb, ok = loopir.ProductOf(st)
	if !ok || la.Tensor == st.Tensor || lb.Tensor == st.Tensor {
		return nil, nil, nil, nil, false
	}
	sc, okc := loopir.FlatStrides(st.Index, p.Tensors[st.Tensor].BufDims)
	sa, oka := loopir.FlatStrides(la.Index, p.Tensors[la.Tensor].BufDims)
	sb, okb := loopir.FlatStrides(lb.Index, p.Tensors[lb.Tensor].BufDims)
	if !okc || !oka || !okb {
		return nil, nil, nil, nil, false
	}
	inNest := map[int]bool{}
	for _, l := range loops {
		if inNest[l.Var] || l.Extent < 1 {
			return nil, nil, nil, nil, false
		}
		inNest[l.Var] = true
		x := &axis{vars: []int{l.Var}, extent: l.Extent, c: sc[l.Var], a: sa[l.Var], b: sb[l.Var]}
		if x.c < 0 || x.a < 0 || x.b < 0 {
			return nil, nil, nil, nil, false
		}
		axes = append(axes, x)
	}
	for _, m := range []map[int]int{sc, sa, sb} {
		for v, s := range m {
			if s != 0 && !inNest[v] && !free[v] {
				return nil, nil, nil, nil, false // an index over a variable bound outside the nest
			}
		}
	}
	return la, lb, sc, axes, true
}
