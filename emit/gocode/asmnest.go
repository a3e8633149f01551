package gocode

import (
	"fmt"

	"github.com/dave/jennifer/jen"
	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/emit/schedule"
	"github.com/ocannlgen/ocannlgen/loopir"
)

// asmNest returns, for each tier of the kernel set, the call of an
// assembly kernel running a perfect nest, wrapped in the Go loops the
// kernel leaves outside, and a comment
// describing the kernel; nil when the kernel set is off or the nest is
// not a contraction it handles. init is the pre-fill value the nest
// absorbs: only a plain zero can be absorbed (the kernel stores instead
// of adding).
func (k *kgen) asmNest(loops []*loopir.For, st *loopir.Store, init *float64) ([][]jen.Code, string) {
	ch, ok := k.try(schedule.Contraction, loops, st, init)
	if !ok {
		return nil, ""
	}
	return k.contractionCalls(ch, init)
}

// contractionCalls renders the contraction kernel ch (asmNest). A kernel
// that stores absorbs a pre-fill with zero; otherwise the branch fills
// the tensor first and the kernel adds.
func (k *kgen) contractionCalls(ch schedule.Choice, init *float64) ([][]jen.Code, string) {
	n := ch.Contraction
	var pre []jen.Code
	if ch.PreFill {
		bd := k.p.Tensors[n.C].BufDims
		pre = k.regionFill(n.C, make([]int, len(bd)), bd, *init)
	}
	if k.bf16In != nil && (!k.bf16In[n.A] || !k.bf16In[n.B]) {
		return nil, "" // an operand that is not rt.BF16: the Go loops widen
	}
	if k.k.BF16 && k.elem == "float32" {
		return k.bf16Calls(n, pre)
	}
	idx := k.asm.Add(n.Spec)
	var build func(name string, i int) jen.Code
	build = func(name string, i int) jen.Code {
		if i == len(n.Outer) {
			args := make([]jen.Code, 3)
			for j, t := range []int{n.C, n.A, n.B} {
				args[j] = jen.Op("&").Add(k.directAccess(t, n.Zero[t]))
			}
			return jen.Id(name).Call(args...)
		}
		l := n.Outer[i]
		before := k.varUse[l.Var]
		inner := build(name, i+1)
		return k.forStmt(l.Var, 0, l.Extent, 1, k.varUse[l.Var] > before, []jen.Code{inner})
	}
	if k.free != nil {
		// A part of a parallel nest: the fill runs before the parts.
		k.parPre, pre = pre, nil
	}
	tiers := k.asm.Tiers()
	calls := make([][]jen.Code, len(tiers))
	for i, t := range tiers {
		if k.asm.KernelIn(idx, t) { // else no kernel in this tier: dispatch skips it
			calls[i] = append(append([]jen.Code(nil), pre...), build(k.asm.Name(idx, t), 0))
		}
	}
	return calls, "// " + n.Spec.Describe(tiers...) + "."
}

// asmFillElision finds an operation whose pre-fill with zero an assembly
// kernel can absorb although the Go loops cannot: [resets,] fill T with
// +0, one perfect nest that stores into every cell of the unpadded T
// once per reduction (an overwriting kernel). The Go branch then fills
// and runs the loops.
func (k *kgen) asmFillElision(o *loopir.Operation) *elision {
	return schedule.AsmElideFill(k.tiers(), k.p, o, k.elem, k.isConst)
}

// chainAsmFill emits a nest whose pre-fill the assembly kernel absorbs:
// the kernels store, the Go branch fills, then runs the loops.
func (k *kgen) chainAsmFill(loops []*loopir.For, st *loopir.Store, fill *loopir.Fill) ([]jen.Code, error) {
	if code, ok, err := k.parChain(loops, st, nil, fill); ok || err != nil {
		return code, err
	}
	zero := 0.0
	calls, note := k.asmNest(loops, st, &zero)
	code := k.fill(fill)
	goCode, err := k.chainGo(loops, st, nil)
	if err != nil {
		return nil, err
	}
	code = append(code, goCode...)
	return k.dispatch(calls, note, code), nil
}

// asmMapNest is asmNest for a pointwise map (asm.ClassifyMap): the call
// of the kernel for each tier, in the Go loops it leaves outside, and
// its comment; nil when the nest is not such a map. A nest absorbing a
// pre-fill is left to the Go loops.
func (k *kgen) asmMapNest(loops []*loopir.For, st *loopir.Store, init *float64) ([][]jen.Code, string) {
	ch, ok := k.try(schedule.Map, loops, st, init)
	if !ok {
		return nil, ""
	}
	return k.mapCalls(ch)
}

// mapCalls renders the map kernel ch (asmMapNest). Constant leaves are
// constants of the kernel (a max-pool's zero window: x + 0), not
// operands; a nest made perfect by inlining a scalar temporary (see
// inlineScalarTemps), or one with constant leaves folded, runs in a new
// form (in every tier, as a plain map).
func (k *kgen) mapCalls(ch schedule.Choice) ([][]jen.Code, string) {
	n := ch.Map
	idx := k.asm.AddMap(n.Spec)
	var build func(name string, i int) jen.Code
	build = func(name string, i int) jen.Code {
		if i == len(n.Outer) {
			args := []jen.Code{jen.Op("&").Add(k.directAccess(n.C, n.Zero))}
			for j, l := range n.Ins {
				args = append(args, jen.Op("&").Add(k.directAccess(l.Tensor, n.ZIns[j])))
			}
			return jen.Id(name).Call(args...)
		}
		l := n.Outer[i]
		before := k.varUse[l.Var]
		inner := build(name, i+1)
		return k.forStmt(l.Var, 0, l.Extent, 1, k.varUse[l.Var] > before, []jen.Code{inner})
	}
	tiers := k.asm.Tiers()
	calls := make([][]jen.Code, len(tiers))
	for i, t := range tiers {
		if k.asm.MapIn(idx, t) { // else no kernel in this tier: dispatch skips it
			calls[i] = []jen.Code{build(k.asm.MapName(idx, t), 0)}
		}
	}
	return calls, "// " + n.Spec.Describe(tiers...) + "."
}

// asmRegionFill is regionFill's box [lo, hi) of t's buffer set to v as a
// pointwise kernel without operands (in every tier): its contiguous run
// (the trailing whole axes and the next one), as rows along the longest
// other axis when the run is short, the other axes in Go loops around
// the call. nil when the kernel set is off or the box is too small for
// a call (see asm.MinMapElems).
func (k *kgen) asmRegionFill(t int, lo, hi []int, v float64) ([][]jen.Code, string) {
	if k.asm == nil || k.ts[t].st.kind == sConst {
		return nil, ""
	}
	bd := k.p.Tensors[t].BufDims
	n := len(bd)
	stride := make([]int, n)
	for a, s := n-1, 1; a >= 0; a-- {
		stride[a] = s
		s *= bd[a]
	}
	run, first := 1, n
	for a := n - 1; a >= 0; a-- {
		run *= hi[a] - lo[a]
		first = a
		if lo[a] != 0 || hi[a] != bd[a] {
			break
		}
	}
	spec := asm.MapSpec{Elem: k.elem, N: run, Expr: &loopir.Const{Value: v}, Stride0: []bool{}}
	rows := -1
	if run < k.tgt.Kernels.MinMapElems {
		for b := range first {
			if hi[b]-lo[b] > 1 && (rows < 0 || hi[b]-lo[b] > hi[rows]-lo[rows]) {
				rows = b
			}
		}
		if rows < 0 || run < k.tgt.Kernels.MinMapRow || run*(hi[rows]-lo[rows]) < k.tgt.Kernels.MinMapElems {
			return nil, ""
		}
		spec.Rows, spec.RowStride = hi[rows]-lo[rows], []int{stride[rows]}
	}
	if int64(run)*8 >= 1<<30 {
		return nil, ""
	}
	idx := make([]loopir.IndexExpr, n)
	vars := make([]int, n)
	for a := range n {
		idx[a] = loopir.IndexExpr{Offset: lo[a]}
		vars[a] = -1
		if a < first && a != rows && hi[a]-lo[a] > 1 {
			vars[a] = k.synthVar()
			idx[a] = loopir.IndexExpr{Terms: []loopir.IndexTerm{{Coeff: 1, Var: vars[a]}}}
		}
	}
	if len(k.fillOff0) > 0 {
		idx[0].Terms = append(idx[0].Terms, k.fillOff0...)
	}
	i := k.asm.AddMap(spec)
	tiers := k.asm.Tiers()
	calls := make([][]jen.Code, len(tiers))
	for j, tier := range tiers {
		if !spec.EmitsIn(tier) {
			continue
		}
		var body jen.Code = jen.Id(k.asm.MapName(i, tier)).Call(jen.Op("&").Add(k.directAccess(t, idx)))
		for a := n - 1; a >= 0; a-- {
			if vars[a] >= 0 {
				body = k.forStmt(vars[a], lo[a], hi[a], 1, true, []jen.Code{body})
			}
		}
		calls[j] = []jen.Code{body}
	}
	return calls, "// " + spec.Describe(tiers...) + "."
}

// foldConstLoads returns e with the loads of constant leaves (sConst)
// replaced by their value (e itself when it has none).
func (k *kgen) foldConstLoads(e loopir.Expr) loopir.Expr {
	return schedule.FoldConsts(e, func(t int) (float64, bool) {
		s := &k.ts[t].st
		return s.value, s.kind == sConst
	})
}

// bf16Path is the import path of the bf16 contractions (rt/bf16).
const bf16Path = "github.com/ocannlgen/ocannlgen/rt/bf16"

// bf16Mark marks the note of a contraction that runs through rt/bf16
// (dispatch then emits the call alone: rt/bf16 picks the tier itself,
// its Go tier included, so that every tier rounds alike).
const bf16Mark = "bf16 operands, float32 accumulation (rt/bf16.Gemm)"

// bf16OperandsMark is bf16Mark for operands that are rt.BF16 arrays
// (desc.Kernel.BF16Operands): the call is rt/bf16.GemmBF16.
const bf16OperandsMark = "bf16 operands, float32 accumulation (rt/bf16.GemmBF16)"

// bf16Calls renders contraction n of a BF16 kernel as a call of
// bf16.Gemm with the spec's sizes and strides, in the Go loops the
// kernel leaves outside; the same call for every tier.
func (k *kgen) bf16Calls(n *asm.Nest, pre []jen.Code) ([][]jen.Code, string) {
	sp := n.Spec
	d := jen.Dict{}
	for _, f := range []struct {
		name string
		v    int
	}{{"M", sp.M}, {"N", sp.N}, {"K", sp.K}, {"CM", sp.CM}, {"CN", sp.CN}, {"AM", sp.AM}, {"AK", sp.AK}, {"BK", sp.BK}, {"BN", sp.BN},
		{"K2", sp.K2}, {"AK2", sp.AK2}, {"BK2", sp.BK2}, {"N2", sp.N2}, {"CN2", sp.CN2}, {"BN2", sp.BN2}, {"K3", sp.K3}, {"AK3", sp.AK3}, {"BK3", sp.BK3}} {
		absent := f.v == 0 || f.v == 1 && (f.name == "K2" || f.name == "K3" || f.name == "N2") // 0 and 1 mean no such axis
		if !absent {
			d[jen.Id(f.name)] = jen.Lit(f.v)
		}
	}
	if sp.Overwrite {
		d[jen.Id("Overwrite")] = jen.True()
	}
	var build func(i int) jen.Code
	build = func(i int) jen.Code {
		if i == len(n.Outer) {
			args := make([]jen.Code, 4)
			for j, t := range []int{n.C, n.A, n.B} {
				args[j] = jen.Op("&").Add(k.directAccess(t, n.Zero[t]))
			}
			args[3] = jen.Qual(bf16Path, "Shape").Values(d)
			if k.bf16In != nil {
				return jen.Qual(bf16Path, "GemmBF16").Call(args...)
			}
			return jen.Qual(bf16Path, "Gemm").Call(args...)
		}
		l := n.Outer[i]
		before := k.varUse[l.Var]
		inner := build(i + 1)
		return k.forStmt(l.Var, 0, l.Extent, 1, k.varUse[l.Var] > before, []jen.Code{inner})
	}
	if k.free != nil {
		k.parPre, pre = pre, nil
	}
	call := append(append([]jen.Code(nil), pre...), build(0))
	calls := make([][]jen.Code, len(k.asm.Tiers()))
	for i := range calls {
		calls[i] = call
	}
	mark := bf16Mark
	if k.bf16In != nil {
		mark = bf16OperandsMark
	}
	return calls, fmt.Sprintf("// %s: %dx%dx%d.", mark, sp.M, sp.N*max(1, sp.N2), sp.K*max(1, sp.K2)*max(1, sp.K3))
}
