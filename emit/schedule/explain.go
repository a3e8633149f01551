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
// generated code for the tiers of the given CPU targets (best first): an
// assembly kernel (kind, sizes, register tile, blocking, the loops left
// to Go) or the Go loops, with the reason. It is the kernel view of the
// program's Schedule (Plan, keeping its named tensors): a nest that
// absorbs a fill is described as it runs (a reduction starting from the
// fill value, a contraction that stores).
func Explain(p *loopir.Program, elem string, targets ...target.CPU) string {
	keep := map[int]bool{}
	for _, n := range p.Graph.Named {
		keep[n.Tensor] = true
	}
	return Plan(p, Options{Elem: elem, Targets: targets, Keep: keep}).Kernels()
}

// Kernels prints the kernel of each nest, grouped by operation (the
// `ocannlgen infer --kernels` view of the schedule).
func (s *Schedule) Kernels() string {
	var b strings.Builder
	last := -1
	for _, n := range s.Nests {
		if n.Op != last {
			fmt.Fprintf(&b, "# %s\n", n.Desc)
			last = n.Op
		}
		fmt.Fprintf(&b, "  %s\n", n.kernelLine(s))
	}
	return b.String()
}

// kernelLine is the nest's kernel as one line.
func (n *Nest) kernelLine(s *Schedule) string {
	line := n.kernelForm(s)
	if n.MaskBlocks != "" {
		line += "; when the mask is causal, " + n.MaskBlocks
	}
	return line
}

// kernelForm is kernelLine without the mask's blocks.
func (n *Nest) kernelForm(s *Schedule) string {
	switch {
	case n.Data:
		return "Go loops, serial, in IR order (a gather: positions read from an index input); an innermost loop over a contiguous row runs in a map kernel when the row is long enough"
	case n.Store == nil:
		return "Go loops (not a perfect nest)"
	case n.Kernel.Family == Contraction && s.BF16 && s.Elem == "float32":
		return BF16Describe(n.Kernel.Contraction.Spec, s.BF16Operands) + outerDesc(n.Kernel.Outer())
	case n.Kernel.Family == Contraction && n.Winograd != "":
		return n.Winograd + "; Go loops when the tier is off"
	case n.Kernel.Family == Contraction:
		// As the Go emitter calls it: the reduction loops around the
		// call folded into a broadcast kernel (asm.FoldOuter).
		f := asm.FoldOuter(n.Kernel.Contraction, s.Program, s.Tiers)
		return f.Spec.Describe(s.Tiers...) + outerDesc(f.Outer) + "; Go loops when the tier is off"
	case n.Kernel.Family != GoLoops:
		return n.Kernel.Describe(s.Tiers) + outerDesc(n.Kernel.Outer()) + "; Go loops when the tier is off"
	case len(s.Tiers) > 0:
		return "Go loops (" + asm.WhyNot(s.Tiers[0].Kernels, s.Program, n.Loops, n.Store, s.Elem) + ")"
	}
	return "Go loops"
}

// outerDesc names the loops the Go code runs around a kernel call.
func outerDesc(loops []*loopir.For) string {
	if len(loops) == 0 {
		return ""
	}
	return "; Go loops around the call: " + loopList(loops)
}

// BF16Describe describes the rt/bf16 call that runs contraction sp in a
// bf16 kernel (Options.BF16): rt/bf16.Gemm, or GemmBF16 over rt.BF16
// operands, its sizes and its tier dispatch.
func BF16Describe(sp asm.Spec, operands bool) string {
	call, what := "rt/bf16.Gemm", "operands rounded to bf16 as they are packed"
	if operands {
		call, what = "rt/bf16.GemmBF16", "rt.BF16 operands packed as they are"
	}
	return fmt.Sprintf("bf16 contraction %dx%dx%d (%s: %s, float32 accumulation; "+
		"tier by the CPU at start-up, limited by OCANNLGEN_CPU: avx512bf16 (VDPBF16PS, 14x32 tile), "+
		"avx512 (widened to float32, FMA, 14x32), avx2 (widened, FMA, 6x16) or purego (6x16); the same bits in every tier)",
		sp.M, sp.N*max(1, sp.N2), sp.K*max(1, sp.K2)*max(1, sp.K3), call, what)
}
