package schedule

import (
	"fmt"
	"strings"

	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/emit/target"
	"github.com/ocannlgen/ocannlgen/loopir"
)

// Explain describes, for every operation of a lowered program, which
// kernel each of its loop nests becomes in elem (float32 or float64)
// generated code for the tiers of the given CPU targets (best first):
// Choose's answer, an assembly kernel (kind, sizes, register tile,
// blocking, the loops left to Go) or the Go loops, with the reason.
// Nests that absorb a pre-fill are described as if they did not (the
// kernel then stores instead of adding). Single-use pointwise
// temporaries without a name are fused into their reader and scalar
// temporaries inlined first, as the Go emitter does for a kernel's
// locals (loopir.FusePointwise, InlineScalarTemps).
func Explain(p *loopir.Program, elem string, targets ...target.CPU) string {
	var tiers []asm.Config
	for _, t := range targets {
		tiers = append(tiers, asm.Tier(t))
	}
	keep := map[int]bool{}
	for _, n := range p.Graph.Named {
		keep[n.Tensor] = true
	}
	p, _ = loopir.FusePointwise(p, keep, FuseAcceptor(tiers, p, elem))
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
			lines = append(lines, explainNest(p, f, elem, tiers, inlined))
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

func explainNest(p *loopir.Program, f *loopir.For, elem string, tiers []asm.Config, inlined map[*loopir.Store]bool) string {
	loops, st, _ := loopir.PerfectNest(f)
	if st == nil {
		return "Go loops (not a perfect nest)"
	}
	c := Choose(tiers, p, loops, st, Query{Elem: elem, Inlined: inlined[st]})
	if c.Family == GoLoops {
		return "Go loops (" + asm.WhyNot(tiers[0].Kernels, p, loops, st, elem) + ")"
	}
	return c.Describe(tiers) + outerDesc(c.Outer()) + "; Go loops when the tier is off"
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
