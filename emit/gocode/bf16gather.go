package gocode

import (
	"github.com/dave/jennifer/jen"

	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/loopir"
)

// bf16Gather is a transposed convolution's nest (a convolution's input
// gradient) rewritten as a gather: its call and the A operand's padded
// copy.
type bf16Gather struct {
	// calls are the gather's calls: one for a stride-1 convolution,
	// one per parity class of C's rows and columns for stride 2.
	calls []bf16GatherCall
	// dims and pad are A's dimensions (four, leading 1s) and the zero
	// margins of its padded copy (bf16.Padded).
	dims, pad [4]int
}

// bf16GatherCall is one call of a gather: its nest, the rows folded
// into it, and shift, which moves the call's A element (its pixel 0,
// 0) to its first cell in the padded copy.
type bf16GatherCall struct {
	n     *asm.Nest
	rows  [2]bf16Axis
	shift [4]int
}

// bf16Gather recognizes a transposed convolution: the two innermost
// loops of extent > 1 around the call shift C's cells (C[p][q][c] +=
// A[p-i][q-j][o] * B[o][i][j][c], the call's rows p-i and columns
// (j, c) flattened, the loops over q-j and i), so that the cells of
// successive calls overlap and bf16Fold keeps the loops: thousands of
// small calls per step. It rewrites the nest as the gather of the same
// sums, C[p][q][c] += sum over i', j', o of Apad[p+i'][q+j'][o] *
// B[o][I-1-i'][J-1-j'][c], one call whose rows are C's pixels (p, then
// q in M2, then a loop outside with distinct cells, the batch, in M3),
// its reduction (i', j', o) with B's strides negative (the flipped
// kernel), over a copy of A with I-1 and J-1 zero cells around its
// pixels (bf16.Padded, converted once before the loops or the parts).
// The cells are those the scatter reached, less C's padding margins
// when C is a padded tensor (every operation reading it resets them
// first), each the same products; the order differs: i' (the kernel row, last first),
// then j' (the column, last first), then o, where the scatter added
// the columns (last first) outside the rows (first first). Only for a
// BF16 kernel with a scratch struct; ok is false when n is not such a
// nest.
func (k *kgen) bf16Gather(n *asm.Nest) (*bf16Gather, bool) {
	if k.bf16In != nil || k.k.Scratch == "" || k.k.PoolScratch || k.free != nil && !k.parPackOK {
		return nil, false
	}
	sp := n.Spec
	if sp.Overwrite || max(sp.K2, 1) != 1 || max(sp.K3, 1) != 1 || max(sp.N2, 1) != 1 || sp.CN != 1 || sp.BN != 1 || sp.AK != 1 || sp.K < 1 {
		return nil, false
	}
	for _, t := range []int{n.C, n.A, n.B} {
		for _, x := range n.Zero[t] {
			if x.Data != nil {
				return nil, false
			}
		}
	}
	strides, ok := k.nestStrides(n)
	if !ok {
		return nil, false
	}
	// The two innermost loops of extent > 1: lw (columns) outside lh
	// (rows).
	var live []int // indices in n.Outer, innermost first
	for i := len(n.Outer) - 1; i >= 0; i-- {
		if n.Outer[i].Extent > 1 {
			live = append(live, i)
		}
	}
	if len(live) < 2 {
		return nil, false
	}
	lh, lw := n.Outer[live[0]], n.Outer[live[1]]
	ch, ah, bh := strides[n.C][lh.Var], strides[n.A][lh.Var], strides[n.B][lh.Var]
	cw, aw, bw := strides[n.C][lw.Var], strides[n.A][lw.Var], strides[n.B][lw.Var]
	if ch <= 0 || sp.CM%ch != 0 || ah != 0 || bh <= 0 || bw != 0 || cw <= 0 || aw <= 0 {
		return nil, false
	}
	// The stride: lh moves C by one row of C (the call's rows are
	// stride rows apart), lw by stride columns of cc values.
	stride := sp.CM / ch
	if stride != 1 && stride != 2 || cw%stride != 0 {
		return nil, false
	}
	cc := cw / stride
	if sp.N%cc != 0 || sp.N <= cc {
		return nil, false
	}
	eh, ew := lh.Extent, sp.N/cc // the kernel's rows and columns
	if ew < stride || eh < stride {
		return nil, false
	}
	// A's pixel axes: ia (the call's rows, all of them) and iw (lw's).
	dimsA := k.p.Tensors[n.A].BufDims
	dimsB := k.p.Tensors[n.B].BufDims
	if len(dimsA) > 4 || len(dimsA) < 3 {
		return nil, false
	}
	flat := func(dims []int) []int {
		st := make([]int, len(dims))
		m := 1
		for i := len(dims) - 1; i >= 0; i-- {
			st[i] = m
			m *= dims[i]
		}
		return st
	}
	stA := flat(dimsA)
	// B's kernel row and column axes: ib (lh's, stride bh) and jb
	// (extent ew, stride cc), to move B to the flipped kernel's first
	// step (a flat B: one axis for both).
	stB := flat(dimsB)
	ib, jb := -1, -1
	for i := range dimsB {
		x := n.Zero[n.B][i]
		if len(dimsB) == 1 {
			ib, jb = i, i
		} else if stB[i] == bh && dimsB[i] == eh && x.Offset == 0 && len(x.Terms) == 1 && x.Terms[0].Var == lh.Var && x.Terms[0].Coeff == 1 {
			ib = i
		} else if stB[i] == cc && dimsB[i] == ew && x.Offset == 0 && len(x.Terms) == 0 {
			jb = i
		}
	}
	if ib < 0 || jb < 0 || len(dimsB) == 1 && (eh-1)*bh+(ew-1)*cc >= dimsB[0] {
		return nil, false
	}
	ia, iw := -1, -1
	for i := range len(dimsA) - 1 { // (not the innermost: A's reduction)
		x := n.Zero[n.A][i]
		switch {
		case stA[i] == sp.AM && dimsA[i] == sp.M && x.Offset == 0 && len(x.Terms) == 0:
			ia = i
		case stA[i] == aw && dimsA[i] == lw.Extent && x.Offset == 0 && len(x.Terms) == 1 && x.Terms[0].Var == lw.Var && x.Terms[0].Coeff == 1:
			iw = i
		}
	}
	if ia < 0 || iw < 0 {
		return nil, false
	}
	// C's rows (and columns) of parity r sum the kernel's taps r,
	// r+stride, ...: taps(e, r) of them for a kernel extent e.
	taps := func(e, r int) int { return (e - r + stride - 1) / stride }
	var g bf16Gather
	lead := 4 - len(dimsA)
	for i := range g.dims {
		g.dims[i] = 1
	}
	copy(g.dims[lead:], dimsA)
	g.pad[lead+ia], g.pad[lead+iw] = taps(eh, 0)-1, taps(ew, 0)-1
	padded := make([]int, len(dimsA))
	for i, d := range dimsA {
		padded[i] = d + 2*g.pad[lead+i]
	}
	pst := flat(padded)
	drop := map[int]bool{lh.Var: true, lw.Var: true}
	for _, l := range n.Outer {
		if l.Extent == 1 {
			drop[l.Var] = true
		}
	}
	zeroA := make([]loopir.IndexExpr, len(dimsA))
	for a, x := range n.Zero[n.A] {
		zeroA[a].Offset = x.Offset
		for _, t := range x.Terms {
			if t.Var != lw.Var {
				zeroA[a].Terms = append(zeroA[a].Terms, t)
			}
		}
	}
	stPad, _ := loopir.FlatStrides(zeroA, padded)
	// The cells: those the scatter reached, t < stride*(M-1)+eh rows
	// and stride*(W-1)+ew columns from C's cell at the call, less C's
	// padding margins along them when C is padded (not a parameter):
	// every operation reading a padded tensor first resets its margins
	// (loopir's "pad" pass), so the margins' sums are never read.
	t0 := [2]int{0, 0}
	t1 := [2]int{stride*(sp.M-1) + eh, stride*(lw.Extent-1) + ew}
	ich, icw := -1, -1 // C's axes along the rows and columns
	tc := &k.p.Tensors[n.C]
	stC := flat(tc.BufDims)
	for i, x := range n.Zero[n.C] {
		if tc.BufDims[i] == 1 || len(x.Terms) != 1 {
			continue
		}
		switch {
		case stC[i] == ch && x.Terms[0].Var == lh.Var && x.Terms[0].Coeff == 1:
			ich = i
		case stC[i] == cc && x.Terms[0].Var == lw.Var && x.Terms[0].Coeff == stride:
			icw = i
		}
	}
	if stride != 1 && (ich < 0 || icw < 0) {
		return nil, false
	}
	if tc.Padded() && tc.Kind != inference.Param && len(tc.Padding) == len(tc.BufDims) && ich >= 0 && icw >= 0 {
		for d, i := range []int{ich, icw} {
			pd, off := tc.Padding[i], n.Zero[n.C][i].Offset
			t0[d] = max(t0[d], pd.Left-off)
			t1[d] = min(t1[d], tc.BufDims[i]-pd.Right-off)
		}
		if t0[0] >= t1[0] || t0[1] >= t1[1] {
			return nil, false
		}
	}
	// The next loop out with distinct cells and B not moving (the
	// batch) folds into M3.
	var batch bf16Axis
	cAxes := [][2]int{{t1[0] - t0[0], ch}, {cc, 1}, {t1[1] - t0[1], cc}}
	if !distinctCells(cAxes) {
		return nil, false
	}
	for i := live[1] - 1; i >= 0; i-- {
		l := n.Outer[i]
		if l.Extent == 1 {
			continue
		}
		c, b := strides[n.C][l.Var], strides[n.B][l.Var]
		grown := append(cAxes[:len(cAxes):len(cAxes)], [2]int{l.Extent, c})
		if c > 0 && b == 0 && stPad[l.Var] >= 0 && distinctCells(grown) {
			batch = bf16Axis{l.Extent, c, stPad[l.Var]}
			drop[l.Var] = true
		}
		break
	}
	var outer []*loopir.For
	for _, l := range n.Outer {
		if !drop[l.Var] {
			outer = append(outer, l)
		}
	}
	// first is the class's first u with stride*u + r >= t.
	first := func(t, r int) int { return (max(t-r, 0) + stride - 1) / stride }
	for ry := range stride {
		for rx := range stride {
			mh, mw := taps(eh, ry), taps(ew, rx)
			u0, u1 := first(t0[0], ry), first(t1[0], ry)
			v0, v1 := first(t0[1], rx), first(t1[1], rx)
			if u0 >= u1 || v0 >= v1 {
				continue
			}
			var c bf16GatherCall
			c.shift[lead+ia] = -(mh - 1) + u0
			c.shift[lead+iw] = -(mw - 1) + v0
			m := *n
			m.Spec.N = cc
			m.Spec.AM = pst[ia]
			m.Spec.K2, m.Spec.AK2, m.Spec.BK2 = mw, pst[iw], -stride*cc
			m.Spec.K3, m.Spec.AK3, m.Spec.BK3 = mh, pst[ia], -stride*bh
			m.Spec.M = u1 - u0
			c.rows = [2]bf16Axis{{v1 - v0, cw, pst[iw]}, batch}
			m.Outer = outer
			m.Zero = withoutVars(n.Zero, drop)
			// C at the class's first cell.
			if ich >= 0 {
				m.Zero[n.C][ich].Offset += stride*u0 + ry
			}
			if icw >= 0 {
				m.Zero[n.C][icw].Offset += stride*v0 + rx
			}
			// B at the flipped taps' first step.
			kr, kc := stride*(mh-1)+ry, stride*(mw-1)+rx
			if ib == jb {
				m.Zero[n.B][ib].Offset += kr*bh + kc*cc
			} else {
				m.Zero[n.B][ib].Offset += kr
				m.Zero[n.B][jb].Offset += kc
			}
			c.n = &m
			g.calls = append(g.calls, c)
		}
	}
	if len(g.calls) == 0 {
		return nil, false
	}
	return &g, true
}

// bf16Padded adds the scratch field holding gather g's padded copy of
// its A and returns A's operand form and the statement converting it.
func (k *kgen) bf16Padded(g *bf16Gather) (func(shift [4]int) jen.Code, jen.Code) {
	n := g.calls[0].n
	name := k.bf16Field(n.A)
	k.bf16Packs = append(k.bf16Packs, jen.Id(name).Qual(bf16Path, "Padded"))
	field := func() *jen.Statement { return jen.Id(k.scratch).Dot(name) }
	arr := func(v [4]int) jen.Code {
		return jen.Index(jen.Lit(4)).Int().Values(jen.Lit(v[0]), jen.Lit(v[1]), jen.Lit(v[2]), jen.Lit(v[3]))
	}
	zero := make([]loopir.IndexExpr, len(n.Zero[n.A]))
	code := field().Dot("Convert").Call(jen.Op("&").Add(k.directAccess(n.A, zero)), arr(g.dims), arr(g.pad))
	if k.free != nil && k.p.Tensors[n.A].Kind != inference.Param {
		k.parPreReads = append(k.parPreReads, n.A)
	}
	return func(shift [4]int) jen.Code {
		return field().Dot("At").Call(jen.Op("&").Add(k.directAccess(n.A, n.Zero[n.A])), arr(shift))
	}, code
}
