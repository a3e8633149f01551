package gocode

import (
	"github.com/dave/jennifer/jen"

	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/rt/wino"
)

const winoPath = "github.com/ocannlgen/ocannlgen/rt/wino"

// winoConv is a float32 contraction recognized as a 3x3 stride-1
// convolution over a padded input, which the tiers whose target has
// Winograd run in rt/wino (docs/design.md, "Winograd convolutions").
type winoConv struct {
	n    *asm.Nest
	g    wino.Geom
	row  *loopir.For   // the output row loop, folded into the call (nil for a gather)
	imgs []*loopir.For // the other loops around the call, kept in Go
}

// winograd recognizes contraction n (a dot kernel after asm.FoldOuter)
// as one image row of a convolution C[p][q][o] (=|+=) sum over i, j, c
// of A[p+i][q+j][c] * B[o][i][j][c]: the kernel's rows are q (A's
// pixels c apart, C's pixels o apart), its reduction (j, c) contiguous
// in A and B with the kernel row i as K2, and one loop around it, p,
// moves C by a row and A by AK2. Any other loops around it (the batch)
// stay Go loops; none may move B. The channels must be multiples of 16,
// the rows and columns even (wino.Geom.Check), B a parameter no
// operation of the kernel stores (its transform runs before the loops
// or the parts), and the kernel must have a scratch struct to hold the
// transform.
func (k *kgen) winograd(n *asm.Nest) (*winoConv, bool) {
	sp := n.Spec
	if k.elem != "float32" || k.k.BF16 || sp.Kind != asm.Dot || sp.Elem != "float32" || n.OuterReduces {
		return nil, false
	}
	if k.k.Scratch == "" || k.k.PoolScratch || k.free != nil && !k.parPackOK {
		return nil, false
	}
	if max(sp.K2, 1) != 3 || sp.K%3 != 0 || sp.AK != 1 || sp.BK != 1 || sp.CN != 1 || max(sp.K3, 1) != 1 || max(sp.N2, 1) != 1 {
		return nil, false
	}
	cin := sp.K / 3
	if sp.AM != cin || sp.CM != sp.N || sp.BN != 9*cin || sp.BK2 != 3*cin {
		return nil, false
	}
	if k.p.Tensors[n.B].Kind != inference.Param {
		return nil, false
	}
	strides, ok := k.nestStrides(n)
	if !ok {
		return nil, false
	}
	w := &winoConv{n: n}
	for _, l := range n.Outer {
		if l.Extent == 1 {
			continue
		}
		if w.row == nil && strides[n.A][l.Var] == sp.AK2 && strides[n.C][l.Var] >= sp.M*sp.CM {
			w.row = l
			continue
		}
		w.imgs = append(w.imgs, l)
	}
	if w.row == nil {
		return nil, false
	}
	// B's offset may depend on no variable, the part's included: its
	// transform runs once, before the parts.
	for _, s := range strides[n.B] {
		if s != 0 {
			return nil, false
		}
	}
	w.g = wino.Geom{H: w.row.Extent, W: sp.M, C: cin, O: sp.N, XRow: sp.AK2, YRow: strides[n.C][w.row.Var], Add: !sp.Overwrite}
	if w.g.Check() != nil {
		return nil, false
	}
	if k.storesTo(n.B) {
		return nil, false
	}
	return w, true
}

// nestStrides returns the flat element strides of contraction n's C, A
// and B along each variable of their indices (loopir.FlatStrides), or
// false when an index is data-dependent.
func (k *kgen) nestStrides(n *asm.Nest) (map[int]map[int]int, bool) {
	strides := map[int]map[int]int{}
	for _, t := range []int{n.C, n.A, n.B} {
		st, ok := loopir.FlatStrides(n.Zero[t], k.p.Tensors[t].BufDims)
		if !ok {
			return nil, false
		}
		strides[t] = st
	}
	return strides, true
}

// geomLit is the wino.Geom literal of g (its zero fields left out).
func geomLit(g wino.Geom) jen.Code {
	d := jen.Dict{jen.Id("H"): jen.Lit(g.H), jen.Id("W"): jen.Lit(g.W), jen.Id("C"): jen.Lit(g.C), jen.Id("O"): jen.Lit(g.O),
		jen.Id("XRow"): jen.Lit(g.XRow), jen.Id("YRow"): jen.Lit(g.YRow)}
	if g.N > 1 {
		d[jen.Id("N")], d[jen.Id("XImg")], d[jen.Id("YImg")] = jen.Lit(g.N), jen.Lit(g.XImg), jen.Lit(g.YImg)
	}
	if g.Add {
		d[jen.Id("Add")] = jen.True()
	}
	if g.Pad {
		d[jen.Id("Pad")] = jen.True()
	}
	return jen.Qual(winoPath, "Geom").Values(d)
}

// storesTo reports whether an operation of the kernel stores to tensor t.
func (k *kgen) storesTo(t int) bool {
	for _, op := range k.p.Ops {
		for _, s := range op.Body {
			stored := false
			loopir.WalkStores(s, func(st *loopir.Store, _ map[int]int) { stored = stored || st.Tensor == t })
			if stored {
				return true
			}
		}
	}
	return false
}

// winoCalls renders convolution w for the tiers running rt/wino: the
// kernel's transform into a scratch field (before the parts of a
// parallel nest, under guard, else before the loops), then wino.Conv in
// the loops around the image.
func (k *kgen) winoCalls(w *winoConv, guard func() *jen.Statement) []jen.Code {
	n := w.n
	if k.scratch == "" {
		k.scratch = k.names.fresh("scratch")
	}
	if k.free != nil {
		k.partScratch = true
	}
	name := k.names.fresh(k.nameBase(n.B) + "Wino")
	k.bf16Packs = append(k.bf16Packs, jen.Id(name).Index(jen.Lit(wino.WeightsLen(w.g.C, w.g.O))).Float32())
	field := func() *jen.Statement { return jen.Id(k.scratch).Dot(name) }
	sp := n.Spec
	weights := jen.Qual(winoPath, "Weights").Call(jen.Op("&").Add(field()).Index(jen.Lit(0)), jen.Op("&").Add(k.directAccess(n.B, n.Zero[n.B])),
		jen.Lit(w.g.O), jen.Lit(w.g.C), jen.Lit(sp.BN), jen.Lit(sp.BK2), jen.Lit(w.g.C), jen.Lit(1))
	var pre []jen.Code
	if k.free != nil {
		// Once, before the parts, under the Winograd tiers' flags.
		k.parPack = append(k.parPack, jen.If(guard()).Block(weights))
	} else {
		pre = append(pre, weights)
	}
	// The row loop runs in the call; loops of extent 1 are dropped.
	drop := map[int]bool{w.row.Var: true}
	for _, l := range n.Outer {
		if l.Extent == 1 {
			drop[l.Var] = true
		}
	}
	zero := withoutVars(n.Zero, drop)
	noRow := func(t int) []loopir.IndexExpr { return zero[t] }
	g := geomLit(w.g)
	var build func(i int) jen.Code
	build = func(i int) jen.Code {
		if i == len(w.imgs) {
			return jen.Qual(winoPath, "Conv").Call(jen.Op("&").Add(k.directAccess(n.C, noRow(n.C))), jen.Op("&").Add(k.directAccess(n.A, noRow(n.A))),
				jen.Op("&").Add(field()).Index(jen.Lit(0)), g)
		}
		l := w.imgs[i]
		before := k.varUse[l.Var]
		inner := build(i + 1)
		return k.forStmt(l.Var, 0, l.Extent, 1, k.varUse[l.Var] > before, []jen.Code{inner})
	}
	return append(pre, build(0))
}

// winoGather recognizes contraction n as a stride-1 3x3 convolution's
// input gradient, the scatter C[p+i][q+j][c] += A[p][q][o] * B[o][i][j][c]
// that bf16Gather rewrites as a gather over a copy of A with two zero
// cells around its pixels and the kernel flipped: the Winograd tiers run
// that gather in rt/wino, a convolution of the padded copy (wino.Padded)
// with the flipped, transposed kernel (wino.Weights' strides), adding
// to C's cells that the scatter reached less C's padding margins. The
// conditions are winograd's on the gather's call: channels multiples of
// 16, C's rows and columns even, B a parameter no operation stores.
func (k *kgen) winoGather(n *asm.Nest) (*winoConv, *bf16Gather, bool) {
	if k.elem != "float32" || k.k.BF16 || n.Spec.Elem != "float32" || n.Spec.Kind != asm.Broadcast || n.OuterReduces {
		return nil, nil, false
	}
	if k.p.Tensors[n.B].Kind != inference.Param {
		return nil, nil, false
	}
	g, ok := k.bf16Gather(n)
	if !ok || len(g.calls) != 1 {
		return nil, nil, false
	}
	c := g.calls[0]
	sp := c.n.Spec
	// B's offset (the flipped kernel's first tap) may depend on no
	// variable, the part's included: its transform runs once, before the
	// parts.
	bst, ok := loopir.FlatStrides(c.n.Zero[n.B], k.p.Tensors[n.B].BufDims)
	if !ok {
		return nil, nil, false
	}
	for _, s := range bst {
		if s != 0 {
			return nil, nil, false
		}
	}
	if sp.Overwrite || sp.K2 != 3 || sp.K3 != 3 || sp.AK != 1 || sp.AK2 != sp.K || sp.AM != sp.AK3 || sp.CN != 1 ||
		c.rows[0].c != sp.N || c.rows[0].a != sp.AK2 || c.rows[0].ext < 2 {
		return nil, nil, false
	}
	wg := wino.Geom{H: sp.M, W: c.rows[0].ext, C: sp.K, O: sp.N, XRow: sp.AK3, YRow: sp.CM, Add: true}
	if b := c.rows[1]; b.ext > 1 {
		wg.N, wg.XImg, wg.YImg = b.ext, b.a, b.c
	}
	if wg.Check() != nil {
		return nil, nil, false
	}
	if k.storesTo(n.B) {
		return nil, nil, false
	}
	return &winoConv{n: c.n, g: wg, imgs: c.n.Outer}, g, true
}

// winoPadGeom is the geometry of the gather w of g run on A itself
// (wino.Geom.Pad), when the padded copy would only give A's pixels the
// one zero pixel around them that a "same" convolution's windows reach:
// A unpadded and dense, its pixels as many as C's (the geometry's), and
// the call's first cell at A's pixel (-1, -1). rt/wino then copies only
// the windows of the tiles on A's edges (a stack block), not all of A
// before the parts.
func (k *kgen) winoPadGeom(w *winoConv, g *bf16Gather) (wino.Geom, bool) {
	a := &k.p.Tensors[w.n.A]
	d := g.dims
	if a.Padded() || d[0]*d[1]*d[2]*d[3] != a.Size() || len(g.calls) != 1 || g.calls[0].shift != [4]int{0, -1, -1, 0} ||
		g.pad[0] != 0 || g.pad[3] != 0 || g.pad[1] < 1 || g.pad[2] < 1 || d[1] != w.g.H || d[2] != w.g.W || d[3] != w.g.C {
		return wino.Geom{}, false
	}
	// The copy's strides: its rows, and A's first dimension the images.
	prow := (d[2] + 2*g.pad[2]) * d[3]
	if w.g.XRow != prow || w.g.N > 1 && w.g.XImg != (d[1]+2*g.pad[1])*prow {
		return wino.Geom{}, false
	}
	pg := w.g
	pg.Pad, pg.XRow = true, d[2]*d[3]
	if pg.N > 1 {
		pg.XImg = d[1] * pg.XRow
	}
	return pg, pg.Check() == nil
}

// winoGatherCalls renders the gather w of g for the tiers running
// rt/wino: the padded
// copy of A and the flipped kernel's transform (before the parts of a
// parallel nest, else before the loops), then wino.Conv in the loops
// left around the call.
func (k *kgen) winoGatherCalls(w *winoConv, g *bf16Gather, guard func() *jen.Statement) []jen.Code {
	n := w.n
	if k.scratch == "" {
		k.scratch = k.names.fresh("scratch")
	}
	if k.free != nil {
		k.partScratch = true
	}
	uName := k.names.fresh(k.nameBase(n.B) + "WinoT")
	pg, inPlace := k.winoPadGeom(w, g)
	var pName string
	k.bf16Packs = append(k.bf16Packs, jen.Id(uName).Index(jen.Lit(wino.WeightsLen(w.g.C, w.g.O))).Float32())
	if !inPlace {
		pName = k.names.fresh(k.nameBase(n.A) + "WinoPad")
		k.bf16Packs = append(k.bf16Packs, jen.Id(pName).Qual(winoPath, "Padded"))
	}
	uField := func() *jen.Statement { return jen.Id(k.scratch).Dot(uName) }
	pField := func() *jen.Statement { return jen.Id(k.scratch).Dot(pName) }
	sp := n.Spec
	arr := func(v [4]int) jen.Code {
		return jen.Index(jen.Lit(4)).Int().Values(jen.Lit(v[0]), jen.Lit(v[1]), jen.Lit(v[2]), jen.Lit(v[3]))
	}
	zero := make([]loopir.IndexExpr, len(n.Zero[n.A]))
	// The kernel: wino's output channels are B's columns (stride BN),
	// its rows and columns B's flipped ones (BK3, BK2, negative), its
	// input channels B's reduction (BK); n.Zero[B] is the flipped
	// kernel's first tap.
	prep := []jen.Code{
		jen.Qual(winoPath, "Weights").Call(jen.Op("&").Add(uField()).Index(jen.Lit(0)), jen.Op("&").Add(k.directAccess(n.B, n.Zero[n.B])),
			jen.Lit(w.g.O), jen.Lit(w.g.C), jen.Lit(sp.BN), jen.Lit(sp.BK3), jen.Lit(sp.BK2), jen.Lit(sp.BK)),
	}
	if !inPlace {
		prep = append([]jen.Code{pField().Dot("Copy").Call(jen.Op("&").Add(k.directAccess(n.A, zero)), arr(g.dims), arr(g.pad))}, prep...)
	}
	var pre []jen.Code
	if k.free != nil {
		k.parPack = append(k.parPack, jen.If(guard()).Block(prep...))
		if !inPlace && k.p.Tensors[n.A].Kind != inference.Param {
			k.parPreReads = append(k.parPreReads, n.A)
		}
	} else {
		pre = prep
	}
	gd := geomLit(w.g)
	if inPlace {
		gd = geomLit(pg)
	}
	shift := g.calls[0].shift
	var build func(i int) jen.Code
	build = func(i int) jen.Code {
		if i == len(w.imgs) {
			x := jen.Op("&").Add(k.directAccess(n.A, n.Zero[n.A]))
			if !inPlace {
				x = pField().Dot("At").Call(x, arr(shift))
			}
			return jen.Qual(winoPath, "Conv").Call(jen.Op("&").Add(k.directAccess(n.C, n.Zero[n.C])), x,
				jen.Op("&").Add(uField()).Index(jen.Lit(0)), gd)
		}
		l := w.imgs[i]
		before := k.varUse[l.Var]
		inner := build(i + 1)
		return k.forStmt(l.Var, 0, l.Extent, 1, k.varUse[l.Var] > before, []jen.Code{inner})
	}
	return append(pre, build(0))
}

// winoGrad is a convolution's kernel gradient recognized for rt/wino's
// KernelGrad.
type winoGrad struct {
	n     *asm.Nest
	g     wino.Geom
	ky    int // the kernel-row variable: the part's, or an outer loop's
	part  bool
	parts int
	so    int // the gradient's element stride along the output channels
	si    int // and along the kernel rows
}

// winoKernelGrad recognizes contraction n (a broadcast kernel after
// asm.FoldOuter) as the kernel gradient of a 3x3 stride-1 convolution,
// dW[o][i][j][c] (=|+=) sum over the images, rows p and columns q of
// dY[p][q][o] * X[p+i][q+j][c]: the kernel's rows are o (A = dY's
// channels, contiguous), its columns (j, c) contiguous in X and dW, its
// reductions q, p and the images (K, K2, K3), and the kernel row i is
// either the part of a nest split in 3 parts along it or a loop of
// extent 3 around the call; it moves dW by a row of the kernel and X by
// a row. The channels must be multiples of 16 and the rows and columns
// even (wino.Geom.Check), and the kernel must have a scratch struct (for
// the sums).
func (k *kgen) winoKernelGrad(n *asm.Nest) (*winoGrad, bool) {
	sp := n.Spec
	// (n.OuterReduces: the pixel and image loops, folded into K, K2
	// and K3; a reduction loop left around the call is refused below.)
	if k.elem != "float32" || k.k.BF16 || sp.Kind != asm.Broadcast || sp.Elem != "float32" {
		return nil, false
	}
	if k.k.Scratch == "" || k.k.PoolScratch || k.free != nil && !k.parPackOK {
		return nil, false
	}
	c := sp.BK
	if c < 16 || sp.N != 3*c || sp.CN != 1 || sp.BN != 1 || sp.AM != 1 || sp.AK != sp.M || max(sp.N2, 1) != 1 || sp.K2 < 2 {
		return nil, false
	}
	strides, ok := k.nestStrides(n)
	if !ok {
		return nil, false
	}
	w := &winoGrad{n: n, so: sp.CM, ky: -1}
	isKy := func(v int) bool {
		return strides[n.C][v] == 3*c && strides[n.B][v] == sp.BK2 && strides[n.A][v] == 0
	}
	for v := range k.free {
		if k.freeParts != 3 || !isKy(v) {
			return nil, false
		}
		w.ky, w.part, w.parts, w.si = v, true, 3, 3*c
	}
	for _, l := range n.Outer {
		switch {
		case l.Extent == 1:
		case w.ky < 0 && l.Extent == 3 && isKy(l.Var):
			w.ky, w.parts, w.si = l.Var, 1, 3*c
		default:
			return nil, false
		}
	}
	if w.ky < 0 {
		return nil, false
	}
	w.g = wino.Geom{H: sp.K2, W: sp.K, C: c, O: sp.M, XRow: sp.BK2, YRow: sp.AK2, Add: !sp.Overwrite}
	if sp.K3 > 1 {
		w.g.N, w.g.XImg, w.g.YImg = sp.K3, sp.BK3, sp.AK3
	}
	if w.g.Check() != nil {
		return nil, false
	}
	return w, true
}

// winoGradCalls renders kernel gradient w for the tiers running rt/wino: the part's
// share of the images in a wino.GradSums (the part that finishes last
// writes the gradient; one part when the nest is serial), prepared
// before the parts or the call.
func (k *kgen) winoGradCalls(w *winoGrad, guard func() *jen.Statement) []jen.Code {
	n := w.n
	if k.scratch == "" {
		k.scratch = k.names.fresh("scratch")
	}
	if k.free != nil {
		k.partScratch = true
	}
	name := k.names.fresh(k.nameBase(n.C) + "WinoSums")
	k.bf16Packs = append(k.bf16Packs, jen.Id(name).Qual(winoPath, "GradSums"))
	field := func() *jen.Statement { return jen.Id(k.scratch).Dot(name) }
	drop := map[int]bool{w.ky: true}
	for _, l := range n.Outer {
		drop[l.Var] = true
	}
	at := func(t int) jen.Code {
		return jen.Op("&").Add(k.directAccess(t, withoutVars(map[int][]loopir.IndexExpr{t: n.Zero[t]}, drop)[t]))
	}
	gd := geomLit(w.g)
	prep := field().Dot("Prepare").Call(jen.Lit(w.g.C), jen.Lit(w.g.O), jen.Lit(w.parts))
	var code []jen.Code
	part := jen.Lit(0)
	if w.part {
		part = jen.Id(k.loopName(w.ky))
		k.parPack = append(k.parPack, jen.If(guard()).Block(prep))
	} else {
		code = append(code, prep)
	}
	return append(code, field().Dot("KernelGrad").Call(at(n.C), at(n.B), at(n.A), gd,
		jen.Lit(w.so), jen.Lit(w.si), jen.Lit(w.g.C), part, jen.Lit(w.parts)))
}
