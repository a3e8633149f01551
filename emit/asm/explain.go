package asm

import (
	"fmt"
	"strings"

	"github.com/ocannlgen/ocannlgen/emit/target"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
)

// Explain describes, for every operation of a lowered program, which
// kernel each of its loop nests becomes in elem (float32 or float64)
// generated code for the tiers: an assembly kernel (kind, sizes,
// register tile, blocking, the loops left to Go) or the Go loops, with
// the reason. Nests that absorb a pre-fill are described as if they did
// not (the kernel then stores instead of adding). Single-use pointwise
// temporaries without a name are fused into their reader and scalar
// temporaries inlined first, as the Go emitter does for a kernel's
// locals (loopir.FusePointwise, InlineScalarTemps). The kernels are
// chosen with the first target's Kernels limits.
func Explain(p *loopir.Program, elem string, targets ...target.CPU) string {
	var tiers []Config
	for _, t := range targets {
		tiers = append(tiers, Tier(t))
	}
	kn := tiers[0].Kernels
	keep := map[int]bool{}
	for _, n := range p.Graph.Named {
		keep[n.Tensor] = true
	}
	p, _ = loopir.FusePointwise(p, keep, FuseAcceptor(kn, p, elem))
	p, inlined := loopir.InlineScalarTemps(p, nil)
	var b strings.Builder
	for _, o := range p.Ops {
		if _, ok := o.Assignment.(*loopir.Fetch); ok {
			continue
		}
		var lines []string
		for _, s := range o.Body {
			f, ok := s.(*loopir.For)
			if !ok {
				continue
			}
			lines = append(lines, explainNest(kn, p, f, elem, tiers, inlined))
		}
		if len(lines) == 0 {
			continue
		}
		fmt.Fprintf(&b, "# %s\n", strings.ReplaceAll(o.Desc, "\n", " "))
		for _, l := range lines {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	return b.String()
}

func explainNest(kn target.Kernels, p *loopir.Program, f *loopir.For, elem string, tiers []Config, inlined map[*loopir.Store]bool) string {
	loops, st, _ := loopir.PerfectNest(f)
	if st == nil {
		return "Go loops (not a perfect nest)"
	}
	n := Classify(kn, p, loops, st, elem, false)
	if n == nil {
		if m := ClassifyMapNew(kn, p, loops, st, elem, nil, inlined[st]); m != nil {
			if inlined[st] {
				m.Spec.AVX2Only = true
			}
			return m.Spec.Describe(tiers...) + outerDesc(m.Outer) + "; Go loops when the tier is off"
		}
		if r := ClassifyReduce(kn, p, loops, st, elem); r != nil {
			return r.Spec.Describe() + outerDesc(r.Outer) + "; Go loops when the tier is off"
		}
		return "Go loops (" + whyNot(kn, p, loops, st, elem) + ")"
	}
	return n.Spec.Describe(tiers...) + outerDesc(n.Outer) + "; Go loops when the tier is off"
}

// outerDesc names the loops the Go code runs around a kernel call.
func outerDesc(loops []*loopir.For) string {
	if len(loops) == 0 {
		return ""
	}
	var outer []string
	for _, l := range loops {
		outer = append(outer, fmt.Sprintf("i%d<%d", l.Var, l.Extent))
	}
	return "; Go loops around the call: " + strings.Join(outer, ", ")
}

// whyNot names the first condition a nest fails.
func whyNot(kn target.Kernels, p *loopir.Program, loops []*loopir.For, st *loopir.Store, elem string) string {
	ap, ok := st.Value.(*loopir.Apply)
	isProd := ok && ap.Prim == ops.Mul && len(ap.Args) == 2
	switch {
	case st.Accumulate && redAccums[st.Accum] && !isProd:
		return fmt.Sprintf("no reduction kernel: it needs a reduced axis of unit stride in the operands (at least %d long) or a kept one in C (at least %d), "+
			"an expression over the pointwise primitives and %d elements per call", kn.MinReduceN, kn.MinAcrossN, kn.MinReduceElems)
	case !st.Accumulate || st.Accum != ops.AccAdd:
		return "not a contraction, and not a pointwise map of a contiguous axis of at least " + fmt.Sprint(kn.MinMapElems) + " elements (" + fmt.Sprint(kn.MinCostlyMapElems) + " with exp, log or tanh) over the supported primitives, fitting the registers"
	case !ok || ap.Prim != ops.Mul || len(ap.Args) != 2:
		return "not a sum of products of two tensors"
	}
	work := 2
	for _, l := range loops {
		work *= l.Extent
	}
	if work < kn.MinFlops {
		return fmt.Sprintf("%d flops, below the %d worth a kernel call", work, kn.MinFlops)
	}
	return "no unit-stride axis for a broadcast or dot kernel, or too short"
}

// FuseAcceptor is the loopir.FusePointwise acceptor of code with the
// assembly kernels: the fused nest must be a map kernel when either nest
// was one (a fused tree the kernels cannot run, such as one of more than
// 6 operands, would fall back to Go loops).
func FuseAcceptor(kn target.Kernels, p *loopir.Program, elem string) loopir.Acceptor {
	isMap := func(loops []*loopir.For, st *loopir.Store) bool {
		return ClassifyMapNew(kn, p, loops, st, elem, nil, true) != nil
	}
	return func(wl []*loopir.For, w *loopir.Store, rl []*loopir.For, r, fused *loopir.Store) bool {
		return isMap(rl, fused) || !isMap(wl, w) && !isMap(rl, r)
	}
}
