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
	n    *asm.Nest
	rows [2]bf16Axis
	// dims and pad are A's dimensions (four, leading 1s) and the zero
	// margins of its padded copy (bf16.Padded); shift moves the call's
	// A element (its pixel 0, 0) to the first cell of the margins.
	dims, pad, shift [4]int
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
	strides := map[int]map[int]int{}
	for _, t := range []int{n.C, n.A, n.B} {
		st, ok := loopir.FlatStrides(n.Zero[t], k.p.Tensors[t].BufDims)
		if !ok {
			return nil, false
		}
		strides[t] = st
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
	if ch != sp.CM || ah != 0 || bh <= 0 || bw != 0 || cw <= 0 || aw <= 0 || sp.N%cw != 0 || sp.N <= cw {
		return nil, false
	}
	eh, ew := lh.Extent, sp.N/cw // the kernel's rows and columns
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
	// (extent ew, stride cw), to move B to the flipped kernel's first
	// step (a flat B: one axis for both).
	stB := flat(dimsB)
	ib, jb := -1, -1
	for i := range dimsB {
		x := n.Zero[n.B][i]
		if len(dimsB) == 1 {
			ib, jb = i, i
		} else if stB[i] == bh && dimsB[i] == eh && x.Offset == 0 && len(x.Terms) == 1 && x.Terms[0].Var == lh.Var && x.Terms[0].Coeff == 1 {
			ib = i
		} else if stB[i] == cw && dimsB[i] == ew && x.Offset == 0 && len(x.Terms) == 0 {
			jb = i
		}
	}
	if ib < 0 || jb < 0 || len(dimsB) == 1 && (eh-1)*bh+(ew-1)*cw >= dimsB[0] {
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
	var g bf16Gather
	lead := 4 - len(dimsA)
	for i := range g.dims {
		g.dims[i] = 1
	}
	copy(g.dims[lead:], dimsA)
	g.pad[lead+ia], g.pad[lead+iw] = eh-1, ew-1
	g.shift[lead+ia], g.shift[lead+iw] = -(eh - 1), -(ew - 1)
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
	// The cells: those the scatter reached, p < M+eh-1 and q <
	// W+ew-1 from C's cell at the call, less C's padding margins
	// along them when C is padded (not a parameter): every
	// operation reading a padded tensor first resets its margins
	// (loopir's "pad" pass), so the margins' sums are never read.
	p0, p1 := 0, sp.M+eh-1
	q0, q1 := 0, lw.Extent+ew-1
	ich, icw := -1, -1 // C's axes along p and q
	tc := &k.p.Tensors[n.C]
	stC := flat(tc.BufDims)
	for i, x := range n.Zero[n.C] {
		if tc.BufDims[i] == 1 || len(x.Terms) != 1 {
			continue
		}
		switch {
		case stC[i] == sp.CM && x.Terms[0].Var == lh.Var:
			ich = i
		case stC[i] == cw && x.Terms[0].Var == lw.Var:
			icw = i
		}
	}
	if tc.Padded() && tc.Kind != inference.Param && len(tc.Padding) == len(tc.BufDims) && ich >= 0 && icw >= 0 {
		for _, a := range []struct {
			i      int
			lo, hi *int
		}{{ich, &p0, &p1}, {icw, &q0, &q1}} {
			pd, off := tc.Padding[a.i], n.Zero[n.C][a.i].Offset
			*a.lo = max(*a.lo, pd.Left-off)
			*a.hi = min(*a.hi, tc.BufDims[a.i]-pd.Right-off)
		}
		if p0 >= p1 || q0 >= q1 {
			return nil, false
		}
	}
	g.shift[lead+ia] += p0
	g.shift[lead+iw] += q0
	m := *n
	m.Spec.N = cw
	m.Spec.AM = pst[ia]
	m.Spec.K2, m.Spec.AK2, m.Spec.BK2 = ew, pst[iw], -cw
	m.Spec.K3, m.Spec.AK3, m.Spec.BK3 = eh, pst[ia], -bh
	m.Spec.M = p1 - p0
	g.rows[0] = bf16Axis{q1 - q0, cw, pst[iw]}
	cAxes := [][2]int{{m.Spec.M, sp.CM}, {cw, 1}, {g.rows[0].ext, cw}}
	if !distinctCells(cAxes) {
		return nil, false
	}
	// The next loop out with distinct cells and B not moving (the
	// batch) folds into M3.
	for i := live[1] - 1; i >= 0; i-- {
		l := n.Outer[i]
		if l.Extent == 1 {
			continue
		}
		c, b := strides[n.C][l.Var], strides[n.B][l.Var]
		grown := append(cAxes[:len(cAxes):len(cAxes)], [2]int{l.Extent, c})
		if c > 0 && b == 0 && stPad[l.Var] >= 0 && distinctCells(grown) {
			g.rows[1] = bf16Axis{l.Extent, c, stPad[l.Var]}
			drop[l.Var] = true
		}
		break
	}
	m.Outer = nil
	for _, l := range n.Outer {
		if !drop[l.Var] {
			m.Outer = append(m.Outer, l)
		}
	}
	m.Zero = withoutVars(n.Zero, drop)
	// C at the first cell (p0, q0).
	if ich >= 0 {
		m.Zero[n.C][ich].Offset += p0
	}
	if icw >= 0 {
		m.Zero[n.C][icw].Offset += q0
	}
	// B at the flipped kernel's first step: row eh-1, column ew-1.
	if ib == jb {
		m.Zero[n.B][ib].Offset += (eh-1)*bh + (ew-1)*cw
	} else {
		m.Zero[n.B][ib].Offset += eh - 1
		m.Zero[n.B][jb].Offset += ew - 1
	}
	g.n = &m
	return &g, true
}

// bf16Padded adds the scratch field holding gather g's padded copy of
// its A and returns A's operand form and the statement converting it.
func (k *kgen) bf16Padded(g *bf16Gather) (func() jen.Code, jen.Code) {
	n := g.n
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
	return func() jen.Code {
		return field().Dot("At").Call(jen.Op("&").Add(k.directAccess(n.A, n.Zero[n.A])), arr(g.shift))
	}, code
}
