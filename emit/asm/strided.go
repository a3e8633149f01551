package asm

import (
	"slices"

	"github.com/ocannlgen/ocannlgen/loopir"
)

// ClassifyStrided recognizes a contraction nest for a kernel that packs
// both operands whatever their strides (rt/bf16.GemmBF16: an
// //ocannl:einsum over rt.BF16 arrays), with no size rule: st
// accumulates by addition the product of two loads of other tensors,
// every stride is non-negative, and the loops (merged where their
// strides compose) split into an m axis (along C and A), up to two n
// axes (along C and B), up to three reduction axes (along A and B, not
// C; the longest innermost) and outer loops. It returns nil when the
// nest has no reduction axis or does not qualify; Spec.Kind is
// Broadcast (no float32 kernel runs it).
func ClassifyStrided(p *loopir.Program, loops []*loopir.For, st *loopir.Store, overwrite bool, free map[int]bool) *Nest {
	if len(loops) < 1 {
		return nil
	}
	la, lb, sc, axes, ok := productAxes(p, loops, st, free)
	if !ok || la.Tensor == lb.Tensor {
		return nil
	}
	axes = mergeAxes(axes)
	isK := func(x *axis) bool { return x.c == 0 && x.a != 0 && x.b != 0 }
	isN := func(x *axis) bool { return x.c != 0 && x.b != 0 && x.a == 0 }
	var ks, ns []*axis
	rest := slices.Clone(axes)
	take := func(ok func(*axis) bool) *axis {
		x := largest(rest, ok)
		if x != nil {
			rest = slices.DeleteFunc(rest, func(y *axis) bool { return y == x })
		}
		return x
	}
	for range 3 {
		if x := take(isK); x != nil {
			ks = append(ks, x)
		}
	}
	if len(ks) == 0 {
		return nil
	}
	m := take(func(x *axis) bool { return x.c != 0 && x.a != 0 && x.b == 0 })
	for range 2 {
		if x := take(isN); x != nil {
			ns = append(ns, x)
		}
	}
	n := &Nest{C: st.Tensor, A: la.Tensor, B: lb.Tensor}
	s := &n.Spec
	s.Kind, s.Elem, s.M, s.N = Broadcast, "float32", 1, 1
	s.K, s.AK, s.BK = ks[0].extent, ks[0].a, ks[0].b
	if len(ks) > 1 {
		s.K2, s.AK2, s.BK2 = ks[1].extent, ks[1].a, ks[1].b
	}
	if len(ks) > 2 {
		s.K3, s.AK3, s.BK3 = ks[2].extent, ks[2].a, ks[2].b
	}
	if m != nil {
		s.M, s.CM, s.AM = m.extent, m.c, m.a
	}
	if len(ns) > 0 {
		s.N, s.CN, s.BN = ns[0].extent, ns[0].c, ns[0].b
	}
	if len(ns) > 1 {
		s.N2, s.CN2, s.BN2 = ns[1].extent, ns[1].c, ns[1].b
	}
	kernelVars := map[int]bool{}
	for _, x := range axes {
		if !slices.Contains(rest, x) {
			n.Axes = append(n.Axes, slices.Clone(x.vars))
			for _, v := range x.vars {
				kernelVars[v] = true
			}
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
	s.Overwrite = overwrite
	n.Zero = map[int][]loopir.IndexExpr{}
	for _, ld := range []*loopir.Load{{Tensor: st.Tensor, Index: st.Index}, la, lb} {
		n.Zero[ld.Tensor] = zeroVars(ld.Index, kernelVars)
	}
	return n
}
