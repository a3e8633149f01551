package gocode

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/emit/schedule"
	"github.com/ocannlgen/ocannlgen/inference"
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
	return k.contractionCalls(ch, loops, st, init)
}

// contractionCalls renders the contraction kernel ch (asmNest). A kernel
// that stores absorbs a pre-fill with zero; otherwise the branch fills
// the tensor first and the kernel adds.
func (k *kgen) contractionCalls(ch schedule.Choice, loops []*loopir.For, st *loopir.Store, init *float64) ([][]jen.Code, string) {
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
		return k.bf16Calls(n, pre, st, loops)
	}
	// A 3x3 stride-1 convolution, its input gradient or its kernel
	// gradient runs in rt/wino in the tiers whose target has Winograd
	// (wino.go): the input gradient recognized before asm.FoldOuter (as
	// bf16Gather's gather), the others after it.
	winoTier := false
	for _, t := range k.asm.Tiers() {
		winoTier = winoTier || t.Winograd
	}
	var wc *winoConv
	var wg *bf16Gather
	var wk *winoGrad
	if winoTier {
		wc, wg, _ = k.winoGather(n)
	}
	n = asm.FoldOuter(n, k.p, k.asm.Tiers())
	if winoTier && wc == nil {
		wc, _ = k.winograd(n)
	}
	if winoTier && wc == nil {
		wk, _ = k.winoKernelGrad(n)
	}
	if wc != nil || wk != nil {
		n2 := *n
		n2.Spec.Winograd = true
		n = &n2
	}
	idx := k.asm.Add(n.Spec)
	// A contraction over a mask's zeros or into its discarded cells runs
	// in diagonal blocks when the mask is causal in the call (masks.go).
	var mplan *maskPlan
	var mIdx []int
	if wc == nil && wk == nil {
		if mplan = k.maskBlocks(n, st, loops); mplan != nil {
			for _, b := range mplan.blocks {
				mIdx = append(mIdx, k.asm.Add(b.spec))
			}
		}
	}
	call := func(name string, zero map[int][]loopir.IndexExpr) jen.Code {
		args := make([]jen.Code, 3)
		for j, t := range []int{n.C, n.A, n.B} {
			args[j] = jen.Op("&").Add(k.directAccess(t, zero[t]))
		}
		return jen.Id(name).Call(args...)
	}
	var buildIn func(inner func() []jen.Code, i int) []jen.Code
	buildIn = func(inner func() []jen.Code, i int) []jen.Code {
		if i == len(n.Outer) {
			return inner()
		}
		l := n.Outer[i]
		before := k.varUse[l.Var]
		body := buildIn(inner, i+1)
		return []jen.Code{k.forStmt(l.Var, 0, l.Extent, 1, k.varUse[l.Var] > before, body)}
	}
	build := func(name string, i int) jen.Code {
		return jen.Add(buildIn(func() []jen.Code { return []jen.Code{call(name, n.Zero)} }, i)...)
	}
	// masked is the tier's code with the blocks when the mask is causal,
	// nil when a block has no kernel in the tier.
	masked := func(t asm.Config) jen.Code {
		if mplan == nil {
			return nil
		}
		for _, i := range mIdx {
			if !k.asm.KernelIn(i, t) {
				return nil
			}
		}
		blocks := buildIn(func() []jen.Code {
			var cs []jen.Code
			for j, b := range mplan.blocks {
				cs = append(cs, call(k.asm.Name(mIdx[j], t), b.zero))
			}
			return cs
		}, 0)
		full := buildIn(func() []jen.Code { return []jen.Code{call(k.asm.Name(idx, t), n.Zero)} }, 0)
		if k.free != nil {
			k.partScratch = true
		}
		return jen.If(jen.Id(k.scratch).Dot(mplan.flag)).Block(blocks...).Else().Block(full...)
	}
	if k.free != nil {
		// A part of a parallel nest: the fill runs before the parts.
		k.parPre, pre = pre, nil
	}
	tiers := k.asm.Tiers()
	calls := make([][]jen.Code, len(tiers))
	var kernTiers []asm.Config
	var winoTiers []string
	for _, t := range tiers {
		if t.Winograd && (wc != nil || wk != nil) {
			winoTiers = append(winoTiers, t.Tier)
		}
	}
	inWino := strings.Join(winoTiers, " and ") + " in rt/wino"
	var winoCode []jen.Code
	winoGuard := func() *jen.Statement {
		var g *jen.Statement
		for _, t := range tiers {
			switch {
			case !t.Winograd:
			case g == nil:
				g = jen.Id(t.Flag())
			default:
				g.Op("||").Id(t.Flag())
			}
		}
		return g
	}
	kernNote := func() string {
		if len(kernTiers) == 0 {
			return ""
		}
		return "; " + n.Spec.Describe(kernTiers...)
	}
	for i, t := range tiers {
		switch {
		case (wc != nil || wk != nil) && t.Winograd:
			if winoCode == nil {
				// Once for all the tiers running rt/wino (the same
				// statements in each branch; what runs before the parts
				// runs once, under any of their flags).
				switch {
				case wg != nil:
					winoCode = k.winoGatherCalls(wc, wg, winoGuard)
				case wc != nil:
					winoCode = k.winoCalls(wc, winoGuard)
				default:
					winoCode = k.winoGradCalls(wk, winoGuard)
				}
			}
			calls[i] = append(append([]jen.Code(nil), pre...), winoCode...)
		case k.asm.KernelIn(idx, t): // else no kernel in this tier: dispatch skips it
			c := masked(t)
			if c == nil {
				c = build(k.asm.Name(idx, t), 0)
			}
			calls[i] = append(append([]jen.Code(nil), pre...), c)
			kernTiers = append(kernTiers, t)
		}
	}
	note := "// " + n.Spec.Describe(kernTiers...) + "."
	if mplan != nil && len(kernTiers) > 0 {
		note = "// " + n.Spec.Describe(kernTiers...) + "; when the mask is causal, " + mplan.desc + "."
	}
	key := [2]int{k.curOp, k.curStmt}
	delete(k.winoForms, key)
	switch {
	case wg != nil:
		over := "the gather over a padded copy"
		if _, inPlace := k.winoPadGeom(wc, wg); inPlace {
			over = "the gather, the edge tiles' margins zeros"
		}
		note = fmt.Sprintf("// %dx%d input gradient of a 3x3 convolution, %d -> %d channels: %s (Winograd F(2x2,3x3), %s)%s.", wc.g.H, wc.g.W, wc.g.C, wc.g.O, inWino, over, kernNote())
	case wc != nil:
		note = fmt.Sprintf("// %dx%d convolution, %d -> %d channels: %s (Winograd F(2x2,3x3))%s.", wc.g.H, wc.g.W, wc.g.C, wc.g.O, inWino, kernNote())
	case wk != nil:
		note = fmt.Sprintf("// the kernel gradient of a %dx%d 3x3 convolution, %d -> %d channels: %s (Winograd F(2x2,3x3) transposed)%s.", wk.g.H, wk.g.W, wk.g.C, wk.g.O, inWino, kernNote())
	}
	if wc != nil || wk != nil {
		if k.winoForms == nil {
			k.winoForms = map[[2]int]string{}
		}
		k.winoForms[key] = strings.TrimSuffix(strings.TrimPrefix(note, "// "), ".")
	}
	return calls, note
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
func (k *kgen) bf16Calls(n *asm.Nest, pre []jen.Code, st *loopir.Store, loops []*loopir.For) ([][]jen.Code, string) {
	// One call, or a gather's calls (one per parity class of a
	// stride-2 convolution's input gradient), inside the same loops.
	type call struct {
		n            *asm.Nest
		rows         [2]bf16Axis
		shift        [4]int
		shape        func() jen.Code
		aForm, bForm func() jen.Code
	}
	var calls []*call
	gather, isGather := k.bf16Gather(n)
	if isGather {
		for _, g := range gather.calls {
			calls = append(calls, &call{n: g.n, rows: g.rows, shift: g.shift})
		}
	} else {
		c := &call{}
		c.n, c.rows = k.bf16Fold(n)
		calls = append(calls, c)
	}
	var pack []jen.Code
	var padded func(shift [4]int) jen.Code
	var padCode jen.Code // (after B's packing)
	if isGather && k.bf16In == nil {
		padded, padCode = k.bf16Padded(gather)
	}
	shapeOf := func(sp asm.Spec, rows [2]bf16Axis) func() jen.Code {
		d := jen.Dict{}
		for _, f := range []struct {
			name string
			v    int
		}{{"M", sp.M}, {"N", sp.N}, {"K", sp.K}, {"CM", sp.CM}, {"CN", sp.CN}, {"AM", sp.AM}, {"AK", sp.AK}, {"BK", sp.BK}, {"BN", sp.BN},
			{"K2", sp.K2}, {"AK2", sp.AK2}, {"BK2", sp.BK2}, {"N2", sp.N2}, {"CN2", sp.CN2}, {"BN2", sp.BN2}, {"K3", sp.K3}, {"AK3", sp.AK3}, {"BK3", sp.BK3},
			{"M2", rows[0].ext}, {"CM2", rows[0].c}, {"AM2", rows[0].a}, {"M3", rows[1].ext}, {"CM3", rows[1].c}, {"AM3", rows[1].a}} {
			absent := f.v == 0 || f.v == 1 && (f.name == "K2" || f.name == "K3" || f.name == "N2" || f.name == "M2" || f.name == "M3") // 0 and 1 mean no such axis
			if !absent {
				d[jen.Id(f.name)] = jen.Lit(f.v)
			}
		}
		if sp.Overwrite {
			d[jen.Id("Overwrite")] = jen.True()
		}
		return func() jen.Code { return jen.Qual(bf16Path, "Shape").Values(d) }
	}
	for _, c := range calls {
		n, rows := c.n, c.rows
		// How each operand reaches rt/bf16: B packed once (a weight the
		// calls share), an operand converted once (one the calls read
		// several times), or float32 (converted in each call).
		shape := shapeOf(n.Spec, rows)
		c.shape = shape
		// (Operands that are rt.BF16 arrays, k.bf16In, are neither packed
		// nor converted ahead: bf16.GemmBF16 reads their bits as they are.)
		if k.bf16In != nil {
			continue
		}
		packed := func(t int, field func() *jen.Statement) func() jen.Code {
			return func() jen.Code {
				return jen.Qual(bf16Path, "Operand").Values(jen.Dict{jen.Id("P"): jen.Op("&").Add(field()), jen.Id("F"): jen.Op("&").Add(k.directAccess(t, n.Zero[t]))})
			}
		}
		if vars, ok := k.bf16PackVars(n, n.B); ok {
			field, code := k.bf16Pack(n, n.B, vars, shape)
			pack = append(pack, code...)
			c.bForm = packed(n.B, field)
		}
		if isGather {
			shift := c.shift
			c.aForm = func() jen.Code { return padded(shift) }
		} else if vars, ok := k.bf16PackVars(n, n.A); ok {
			field, code := k.bf16Pack(n, n.A, vars, shape)
			pack = append(pack, code...)
			c.aForm = packed(n.A, field)
		} else if field, code, ok := k.bf16Convert(n, n.A, max(rows[0].ext, 1)*max(rows[1].ext, 1)); ok {
			pack = append(pack, code...)
			c.aForm = func() jen.Code { return field().Dot("At").Call(jen.Op("&").Add(k.directAccess(n.A, n.Zero[n.A]))) }
		}
	}
	if padCode != nil {
		pack = append(pack, padCode)
	}
	// One plain call over a mask's zeros or discarded cells runs in
	// diagonal blocks when the mask is causal in the call (masks.go).
	var mplan *maskPlan
	if len(calls) == 1 && !isGather && k.bf16In == nil && calls[0].aForm == nil && calls[0].bForm == nil && calls[0].rows[0].ext <= 1 && calls[0].rows[1].ext <= 1 {
		mplan = k.maskBlocks(calls[0].n, st, loops)
	}
	emit := func(c *call) jen.Code {
		n := c.n
		if c.aForm == nil && c.bForm == nil {
			gemm := func(zero map[int][]loopir.IndexExpr, shape func() jen.Code) jen.Code {
				args := make([]jen.Code, 4)
				for j, t := range []int{n.C, n.A, n.B} {
					args[j] = jen.Op("&").Add(k.directAccess(t, zero[t]))
				}
				args[3] = shape()
				if k.bf16In != nil {
					return jen.Qual(bf16Path, "GemmBF16").Call(args...)
				}
				return jen.Qual(bf16Path, "Gemm").Call(args...)
			}
			if mplan != nil {
				var blocks []jen.Code
				for _, b := range mplan.blocks {
					blocks = append(blocks, gemm(b.zero, shapeOf(b.spec, c.rows)))
				}
				if k.free != nil {
					k.partScratch = true
				}
				return jen.If(jen.Id(k.scratch).Dot(mplan.flag)).Block(blocks...).Else().Block(gemm(n.Zero, c.shape))
			}
			return gemm(n.Zero, c.shape)
		}
		ops := make([]jen.Code, 2)
		for j, f := range []func() jen.Code{c.aForm, c.bForm} {
			if f != nil {
				ops[j] = f()
			} else {
				t := []int{n.A, n.B}[j]
				ops[j] = jen.Qual(bf16Path, "Operand").Values(jen.Dict{jen.Id("F"): jen.Op("&").Add(k.directAccess(t, n.Zero[t]))})
			}
		}
		return jen.Qual(bf16Path, "GemmOps").Call(jen.Op("&").Add(k.directAccess(n.C, n.Zero[n.C])), ops[0], ops[1], c.shape())
	}
	outer := calls[0].n.Outer // (the same loops for all the calls)
	var build func(i int) []jen.Code
	build = func(i int) []jen.Code {
		if i == len(outer) {
			var body []jen.Code
			for _, c := range calls {
				body = append(body, emit(c))
			}
			return body
		}
		l := outer[i]
		before := k.varUse[l.Var]
		inner := build(i + 1)
		return []jen.Code{k.forStmt(l.Var, 0, l.Extent, 1, k.varUse[l.Var] > before, inner)}
	}
	if k.free != nil {
		k.parPre, pre = pre, nil
		k.parPack = append(k.parPack, pack...)
		pack = nil
	}
	stmts := append(append(append([]jen.Code(nil), pre...), pack...), build(0)...)
	out := make([][]jen.Code, len(k.asm.Tiers()))
	for i := range out {
		out[i] = stmts
	}
	mark := bf16Mark
	if k.bf16In != nil {
		mark = bf16OperandsMark
	}
	// The note: the product's size (a gather's in all its calls).
	var m, nn, kk int
	for _, c := range calls {
		sp, rows := c.n.Spec, c.rows
		m += sp.M * max(rows[0].ext, 1) * max(rows[1].ext, 1)
		nn = sp.N * max(1, sp.N2)
		kk = max(kk, sp.K*max(1, sp.K2)*max(1, sp.K3))
	}
	note := fmt.Sprintf("// %s: %dx%dx%d.", mark, m, nn, kk)
	if mplan != nil {
		note = fmt.Sprintf("// %s: %dx%dx%d; when the mask is causal, %s.", mark, m, nn, kk, mplan.desc)
	}
	if len(calls) > 1 {
		note = fmt.Sprintf("// %s: %dx%dx%d, %d calls (the parity classes of the rows and columns, each of their taps).", mark, m, nn, kk, len(calls))
	}
	return out, note
}

// maxPacks is the most Packed values one contraction keeps (one per
// value of the outer loops B's offset depends on).
const maxPacks = 64

// bf16PackVars decides whether contraction n of a BF16 kernel packs its
// operand t (B: rt/bf16.Pack, or A: rt/bf16.PackA) once for the calls
// of its outer loops or of its parallel parts, and returns the outer
// loops t's offset depends on (one Packed per value of them). t's
// offset must not depend on a part's number or on data, the kernel must
// have a scratch struct to hold the packed copies, and each copy must
// serve more than one call. Either t is a parameter the kernel never
// stores (a weight: the packing may run before the nest's loops, or
// before its parts or a chain of parallel nests), or the nest runs in
// parts that all read t whole (an activation or a gradient: the
// product of a weight's gradient, whose parts cut the weight's rows or
// columns, reads the other operand whole; a product split along its
// columns reads A whole): t then joins what the code before the parts
// writes (schedule.Unit.PreWrites), so that the nest does not chain
// after a nest touching t. An A whose shape swaps the operands (C
// contiguous along m) is left to the calls.
func (k *kgen) bf16PackVars(n *asm.Nest, t int) ([]*loopir.For, bool) {
	if k.k.Scratch == "" || k.k.PoolScratch || k.free != nil && !k.parPackOK {
		return nil, false
	}
	param := k.p.Tensors[t].Kind == inference.Param
	sp := n.Spec
	if !param && (k.free == nil || t == n.C || sp.CN != 1 && sp.CM == 1 && max(sp.N2, 1) == 1) || t == n.A && param && k.free == nil {
		// (A weight as A outside parts keeps the previous code.)
		return nil, false
	}
	uses := map[int]bool{}
	for _, x := range n.Zero[t] {
		if x.Data != nil {
			return nil, false
		}
		for _, tm := range x.Terms {
			if tm.Coeff != 0 {
				uses[tm.Var] = true
			}
		}
	}
	var vars []*loopir.For
	calls, copies := 1, 1
	for _, l := range n.Outer {
		calls *= l.Extent
		if uses[l.Var] {
			vars = append(vars, l)
			copies *= l.Extent
			delete(uses, l.Var)
		}
	}
	if len(uses) > 0 || copies > maxPacks || calls <= copies && k.free == nil {
		return nil, false
	}
	if !param {
		k.parPreReads = append(k.parPreReads, t)
		return vars, true
	}
	if k.storesTo(t) {
		return nil, false
	}
	return vars, true
}

// bf16Pack adds the scratch field holding contraction n's packed
// operand t (B or A; one bf16.Packed per value of vars) and returns the
// field's element for the calls and the statements packing it.
func (k *kgen) bf16Pack(n *asm.Nest, t int, vars []*loopir.For, shape func() jen.Code) (func() *jen.Statement, []jen.Code) {
	key, reusable := k.bf16PackKey(n, t, vars, shape)
	if name, ok := k.bf16Reuse[key]; ok && reusable {
		// Packed already, with nothing stored to t's storage since.
		k.partScratch = true
		return func() *jen.Statement { return jen.Id(k.scratch).Dot(name) }, nil
	}
	name := k.bf16Field(t)
	if reusable {
		if k.bf16Reuse == nil {
			k.bf16Reuse = map[string]string{}
		}
		k.bf16Reuse[key] = name
	}
	typ := jen.Qual(bf16Path, "Packed")
	for i := len(vars) - 1; i >= 0; i-- {
		typ = jen.Index(jen.Lit(vars[i].Extent)).Add(typ)
	}
	k.bf16Packs = append(k.bf16Packs, jen.Id(name).Add(typ))
	elem := func() *jen.Statement {
		e := jen.Id(k.scratch).Dot(name)
		for _, l := range vars {
			e = e.Index(jen.Id(k.loopName(l.Var)))
		}
		return e
	}
	fn := "Pack"
	if t == n.A {
		fn = "PackA"
	}
	args := []jen.Code{jen.Op("&").Add(elem()), jen.Op("&").Add(k.directAccess(t, n.Zero[t])), shape()}
	if k.free != nil && k.freeParts > 1 {
		// Before the parts of a parallel nest: the packing runs in as
		// many parts on the region (rt/bf16.PackIn, PackAIn).
		if k.region == "" {
			k.region = k.names.fresh("region")
		}
		fn += "In"
		args = append(append([]jen.Code{jen.Id(k.region)}, args...), jen.Lit(k.freeParts))
	}
	var body jen.Code = jen.Qual(bf16Path, fn).Call(args...)
	for i := len(vars) - 1; i >= 0; i-- {
		body = k.forStmt(vars[i].Var, 0, vars[i].Extent, 1, true, []jen.Code{body})
	}
	return elem, []jen.Code{body}
}

// bf16PackKey returns the key of bf16Reuse for contraction n's packing
// of operand t, and whether such a packing may be reused: one Packed
// (no vars) packed before parallel parts at the function's top level
// (k.inLoop == 0, so that it runs on every path before the later
// contraction), of a storage the current operation does not store.
// The key holds the storage, the element the packing starts at, the
// shape, the operand (A or B) and the number of parts.
func (k *kgen) bf16PackKey(n *asm.Nest, t int, vars []*loopir.For, shape func() jen.Code) (string, bool) {
	st := k.ts[t].st.name
	if len(vars) > 0 || k.free == nil || k.freeParts <= 1 || k.inLoop > 0 || st == "" || k.bf16Stored[st] {
		return "", false
	}
	return fmt.Sprintf("%s|%v|%#v|%#v|%d", st, t == n.A, jen.Null().Add(k.directAccess(t, n.Zero[t])), jen.Null().Add(shape()), k.freeParts), true
}

// bf16Invalidate drops from bf16Reuse the packings of every storage
// operation o stores, and sets bf16Stored to those storages: called
// before and after emitting o, so that no packing made before o, or
// within o, serves a contraction after o stored to what it packed.
func (k *kgen) bf16Invalidate(o *loopir.Operation) {
	k.bf16Stored = map[string]bool{}
	mark := func(t int) {
		if t >= 0 && t < len(k.ts) {
			k.bf16Stored[k.ts[t].st.name] = true
		}
	}
	loopir.WalkStmts(o.Body, func(s loopir.Stmt) {
		switch s := s.(type) {
		case *loopir.Store:
			mark(s.Tensor)
		case *loopir.Fill:
			mark(s.Tensor)
		case *loopir.ResetPadding:
			mark(s.Tensor)
		case *loopir.FetchStmt:
			mark(s.Tensor)
		}
	})
	for key := range k.bf16Reuse {
		if k.bf16Stored[key[:strings.IndexByte(key, '|')]] {
			delete(k.bf16Reuse, key)
		}
	}
}

// bf16Field names a new scratch field for a bf16 form of tensor t.
func (k *kgen) bf16Field(t int) string {
	if k.scratch == "" {
		k.scratch = k.names.fresh("scratch")
	}
	if k.free != nil {
		k.partScratch = true
	}
	return k.names.fresh(k.nameBase(t) + "BF16")
}

// bf16Convert decides whether contraction n of a BF16 kernel converts
// operand t (its A) to bf16 once, before its outer loops or its
// parallel parts (a bf16.Converted in the scratch), instead of in each
// call: when its calls read t's cells at least twice over on average
// (a convolution's input, which 9 output pixels read; an activation
// that each part reads whole; rows is the number of (m2, m3) row blocks
// of each call). It returns the field and the statement converting t. In parts, t joins what the code before the parts
// writes (schedule.Unit.PreWrites), so that the nest does not chain
// after a nest touching t (the conversion would then run before it).
func (k *kgen) bf16Convert(n *asm.Nest, t int, rows int) (func() *jen.Statement, []jen.Code, bool) {
	if k.k.Scratch == "" || k.k.PoolScratch || k.free != nil && !k.parPackOK {
		return nil, nil, false
	}
	for _, x := range n.Zero[t] {
		if x.Data != nil {
			return nil, nil, false
		}
	}
	sp := n.Spec
	if sp.AK != 1 || sp.K < 8 || sp.CN != 1 && sp.CM == 1 && max(sp.N2, 1) == 1 {
		// rt/bf16 copies a converted A's rows in runs along the
		// reduction; other layouts (and B) pack faster from float32.
		return nil, nil, false
	}
	calls := max(k.freeParts, 1)
	for _, l := range n.Outer {
		calls *= l.Extent
	}
	kt := sp.K * max(sp.K2, 1) * max(sp.K3, 1)
	cols := sp.N * max(sp.N2, 1)
	reads := calls * kt * rows
	if t == n.A {
		reads *= sp.M * ((cols + 511) / 512) // A is packed again per block of 512 columns
	} else {
		reads *= cols
	}
	size := k.ts[t].st.size
	if size <= 0 || reads < 2*size {
		return nil, nil, false
	}
	name := k.bf16Field(t)
	k.bf16Packs = append(k.bf16Packs, jen.Id(name).Qual(bf16Path, "Converted"))
	field := func() *jen.Statement { return jen.Id(k.scratch).Dot(name) }
	zero := make([]loopir.IndexExpr, len(n.Zero[t]))
	code := field().Dot("Convert").Call(jen.Op("&").Add(k.directAccess(t, zero)), jen.Lit(size))
	if k.free != nil && k.p.Tensors[t].Kind != inference.Param {
		k.parPreReads = append(k.parPreReads, t)
	}
	return field, []jen.Code{code}, true
}

// bf16Axis is a loop folded into a bf16 call's row axes (rt/bf16's M2
// and M3): its extent and the element strides of C and A along it.
type bf16Axis struct{ ext, c, a int }

// bf16Fold returns contraction n with loops around its call folded into
// the call, innermost first while each loop folds (loops of extent 1
// dropped): a reduction loop (C does not depend on it) into the free
// reduction axes K2, then K3; a loop B does not depend on into the row
// axes M2, then M3 (returned: asm.Spec has none); a loop A does not
// depend on into the column axis N2 when free; in each case only while
// the cells of C stay distinct (a transposed convolution's input
// gradient, whose pixels overlap, keeps its loops). A convolution's
// kernel gradient, a sum over the batch in each call and over the
// output pixels in the loops around it, becomes one call per part
// instead of one per pixel, and a forward convolution one call whose
// rows are the batch times the pixels. Each cell's sum runs in the same
// order (the reduction loops' order, the call's reduction innermost).
func (k *kgen) bf16Fold(n *asm.Nest) (*asm.Nest, [2]bf16Axis) {
	var rows [2]bf16Axis
	sp := n.Spec
	kSlots := 0
	switch {
	case max(sp.K2, 1) == 1 && max(sp.K3, 1) == 1:
		kSlots = 2
	case max(sp.K3, 1) == 1:
		kSlots = 1
	}
	nSlot := max(sp.N2, 1) == 1
	// rt/bf16 swaps the operands of a C contiguous along m only (not
	// with row axes): such a call keeps its row loops.
	mSlots := 2
	if sp.CN != 1 && sp.CM == 1 && nSlot {
		mSlots = 0
	}
	strides := map[int]map[int]int{}
	for _, t := range []int{n.C, n.A, n.B} {
		st, ok := loopir.FlatStrides(n.Zero[t], k.p.Tensors[t].BufDims)
		if !ok {
			return n, rows
		}
		strides[t] = st
	}
	// C's axes (extent, stride), for the distinctness check.
	cAxes := [][2]int{{sp.M, sp.CM}, {sp.N, sp.CN}, {max(sp.N2, 1), sp.CN2}}
	drop := map[int]bool{}
	var fold, nFold []*loopir.For // innermost first
	var mFold []*loopir.For
	for i := len(n.Outer) - 1; i >= 0; i-- {
		l := n.Outer[i]
		c, a, b := strides[n.C][l.Var], strides[n.A][l.Var], strides[n.B][l.Var]
		if l.Extent == 1 {
			drop[l.Var] = true
			continue
		}
		if c < 0 || a < 0 || b < 0 {
			break
		}
		grown := append(cAxes[:len(cAxes):len(cAxes)], [2]int{l.Extent, c})
		switch {
		case c == 0 && len(fold) < kSlots:
			fold = append(fold, l)
		case c == 0:
			i = -1
			continue
		case b == 0 && len(mFold) < mSlots && distinctCells(grown):
			mFold = append(mFold, l)
			cAxes = grown
		case a == 0 && nSlot && len(nFold) == 0 && distinctCells(grown):
			nFold = append(nFold, l)
			cAxes = grown
		default:
			i = -1
			continue
		}
		drop[l.Var] = true
	}
	if len(fold)+len(mFold)+len(nFold) == 0 {
		return n, rows
	}
	m := *n
	m.Outer = nil
	for _, l := range n.Outer {
		if !drop[l.Var] {
			m.Outer = append(m.Outer, l)
		}
	}
	for _, l := range fold {
		a, b := strides[n.A][l.Var], strides[n.B][l.Var]
		if max(m.Spec.K2, 1) == 1 {
			m.Spec.K2, m.Spec.AK2, m.Spec.BK2 = l.Extent, a, b
		} else {
			m.Spec.K3, m.Spec.AK3, m.Spec.BK3 = l.Extent, a, b
		}
	}
	for i, l := range mFold {
		rows[i] = bf16Axis{l.Extent, strides[n.C][l.Var], strides[n.A][l.Var]}
	}
	for _, l := range nFold {
		m.Spec.N2, m.Spec.CN2, m.Spec.BN2 = l.Extent, strides[n.C][l.Var], strides[n.B][l.Var]
		if m.Spec.BN == 1 && m.Spec.BN2 != 1 {
			// B's unit-stride column axis innermost (rt/bf16 runs n2
			// innermost): a panel's columns then run in contiguous
			// groups, which packBGroups converts with cvtPairs16m
			// (the first convolution's kernel gradient: 3 kernel
			// columns x 3 channels). The cells' sums do not change.
			sp := &m.Spec
			sp.N, sp.CN, sp.BN, sp.N2, sp.CN2, sp.BN2 = sp.N2, sp.CN2, sp.BN2, sp.N, sp.CN, sp.BN
		}
	}
	m.Zero = withoutVars(n.Zero, drop)
	return &m, rows
}

// distinctCells reports whether the axes (extent, non-negative stride)
// reach distinct offsets: sorted by stride, each stride passes the span
// of the axes below it (a sufficient condition).
func distinctCells(axes [][2]int) bool {
	var live [][2]int
	for _, x := range axes {
		if x[0] > 1 {
			if x[1] < 0 {
				return false
			}
			live = append(live, x)
		}
	}
	sort.Slice(live, func(i, j int) bool { return live[i][1] < live[j][1] })
	span := 1
	for _, x := range live {
		if x[1] < span {
			return false
		}
		span += (x[0] - 1) * x[1]
	}
	return true
}

// withoutVars is a nest's zero-fill indices (Zero) without the terms of
// the loops in drop (loops folded into a call's axes).
func withoutVars(zero map[int][]loopir.IndexExpr, drop map[int]bool) map[int][]loopir.IndexExpr {
	res := map[int][]loopir.IndexExpr{}
	for t, idx := range zero {
		out := make([]loopir.IndexExpr, len(idx))
		for a, x := range idx {
			out[a].Offset = x.Offset
			for _, term := range x.Terms {
				if !drop[term.Var] {
					out[a].Terms = append(out[a].Terms, term)
				}
			}
		}
		res[t] = out
	}
	return res
}
