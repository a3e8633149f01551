package asm

import (
	"slices"

	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
	"github.com/ocannlgen/ocannlgen/emit/target"
)

// The m-vector kind (AVX2 only) runs a contraction whose m axis has unit
// stride in A and whose columns are few: a convolution's kernel gradient
// dW[oc][kh][kw] += g[b][oh][ow][oc] * x[b][oh+kh][ow+kw], where the
// broadcast kernel's vector would run along kw (3 of 8 lanes) with the
// batch as its only reduction, called once per output pixel and kernel
// row. Here the vector runs along oc (A's unit stride), every column
// (kh, kw) keeps its accumulators, the whole reduction (batch, oh, ow)
// runs in one call streaming through A, and the sums are scattered into
// C at the end (C is small).

// mvecShape is the tile of an MVec spec: vectors along m, columns.
func (c Config) mvecShape(s *Spec) (nv, cols int) {
	return (s.M + c.lanes(s) - 1) / c.lanes(s), s.N * max(1, s.N2)
}

// mvecFits reports whether tier c can run the MVec spec s: at most two
// vectors along m, and the accumulators of one set within Kernels.MVecMaxAcc.
func (c Config) mvecFits(s *Spec) bool {
	nv, cols := c.mvecShape(s)
	return nv <= 2 && nv*cols <= c.Kernels.MVecMaxAcc
}

// mvecSets is the number of independent accumulator sets the innermost
// reduction loop rotates through (FMA latency times throughput wants 8
// independent chains), within the register budget.
func (c Config) mvecSets(s *Spec) int {
	nv, cols := c.mvecShape(s)
	acc := nv * cols
	u := max(1, min((c.Regs-nv-2)/acc, (8+acc-1)/acc))
	return min(u, s.K)
}

// mvec emits an MVec kernel: the accumulator sets over the reduction
// (k3, k2, k, the innermost unrolled over the sets), then the sets
// summed and scattered into C.
func (g *kgen) mvec() {
	c, s := g.c, g.s
	cp, ap, bp := g.operands()
	nv, cols := g.cfg.mvecShape(s)
	u := g.cfg.mvecSets(s)
	buf := c.AllocLocal(nv * g.cfg.VecBytes)
	acc := make([][][]reg.VecVirtual, u)
	for i := range acc {
		acc[i] = make([][]reg.VecVirtual, cols)
		for j := range acc[i] {
			acc[i][j] = make([]reg.VecVirtual, nv)
			for v := range acc[i][j] {
				acc[i][j][v] = g.vec()
				g.zero(acc[i][j][v])
			}
		}
	}
	partial := s.M % g.lanes
	var mask reg.Register
	if partial > 0 {
		mask = g.tailMask(partial)
	}
	// step is one reduction step into set i: A's vectors at a+aOff, one
	// broadcast of B per column at b+bOff.
	step := func(i int, a, b reg.Register, aOff, bOff int) {
		va := make([]reg.VecVirtual, nv)
		for v := range va {
			va[v] = g.vec()
			addr := mem(a, aOff+v*g.cfg.VecBytes)
			if v == nv-1 && partial > 0 {
				g.loadMasked(addr, mask, va[v])
			} else {
				c.VMOVUPS(addr, va[v])
			}
		}
		for j := range cols {
			j1, j2 := j%s.N, j/s.N
			t := g.vec()
			g.op.bcast2(mem(b, bOff+(j1*s.BN+j2*s.BN2)*g.es), t)
			for v := range nv {
				g.op.fma(va[v], t, acc[i][j][v])
			}
		}
	}
	a3, b3 := c.GP64(), c.GP64()
	c.MOVQ(ap, a3)
	c.MOVQ(bp, b3)
	g.loop(max(1, s.K3), "r", func() {
		a2, b2 := c.GP64(), c.GP64()
		c.MOVQ(a3, a2)
		c.MOVQ(b3, b2)
		g.loop(max(1, s.K2), "q", func() {
			a, b := c.GP64(), c.GP64()
			c.MOVQ(a2, a)
			c.MOVQ(b2, b)
			g.loop(s.K/u, "k", func() {
				for i := range u {
					step(i, a, b, i*s.AK*g.es, i*s.BK*g.es)
				}
				c.ADDQ(imm(u*s.AK*g.es), a)
				c.ADDQ(imm(u*s.BK*g.es), b)
			})
			for i := range s.K % u {
				step(i, a, b, i*s.AK*g.es, i*s.BK*g.es)
			}
			c.ADDQ(imm(s.AK2*g.es), a2)
			c.ADDQ(imm(s.BK2*g.es), b2)
		})
		c.ADDQ(imm(s.AK3*g.es), a3)
		c.ADDQ(imm(s.BK3*g.es), b3)
	})
	for i := 1; i < u; i++ {
		for j := range cols {
			for v := range nv {
				g.op.add(acc[i][j][v], acc[0][j][v], acc[0][j][v])
			}
		}
	}
	g.scatter(acc[0], buf, cp)
	c.VZEROUPPER()
	c.RET()
}

// scatter adds (or stores) each column's sums into C: the vectors go to
// the frame buffer buf, then lane l of column (j1, j2) to
// C[l*CM + j1*CN + j2*CN2], one scalar at a time.
func (g *kgen) scatter(acc [][]reg.VecVirtual, buf operand.Mem, cp reg.Register) {
	c, s := g.c, g.s
	for j := range acc {
		j1, j2 := j%s.N, j/s.N
		for v, x := range acc[j] {
			c.VMOVUPS(x, buf.Offset(v*g.cfg.VecBytes))
		}
		for l := range s.M {
			t := c.XMM()
			g.op.movS2(buf.Offset(l*g.es), t)
			addr := mem(cp, (l*s.CM+j1*s.CN+j2*s.CN2)*g.es)
			if !s.Overwrite {
				g.op.addS(addr, t, t)
			}
			g.op.movS2(t, addr)
		}
	}
}

// pickMVec finds an MVec kernel: an m axis of unit stride in one operand
// (A, swapping the operands if needed) that the other does not depend
// on, at most 2 vectors long; one or two column axes along C and B only
// (the longest whose accumulators fit); one to three reduction axes
// along A and B (the longest; the one of smallest A stride innermost);
// C's cells distinct. Other loops stay in Go around the call. Of the
// two operand orders, the one whose m fills more of its vectors wins
// (the first on ties).
func pickMVec(axes []*axis, lanes int, kn target.Kernels) *pick {
	var best *pick
	fill := func(p *pick) int { // lanes used per 1000
		return 1000 * p.Spec.M / ((p.Spec.M + lanes - 1) / lanes * lanes)
	}
	for _, swapped := range []bool{false, true} {
		if p := pickMVecOrder(axes, lanes, swapped, kn); p != nil && (best == nil || fill(p) > fill(best)) {
			best = p
		}
	}
	return best
}

// pickMVecOrder is pickMVec for one operand order.
func pickMVecOrder(axes []*axis, lanes int, swapped bool, kn target.Kernels) *pick {
	opA, opB := func(x *axis) int { return x.a }, func(x *axis) int { return x.b }
	if swapped {
		opA, opB = opB, opA
	}
	m := largest(axes, func(x *axis) bool { return x.c != 0 && opA(x) == 1 && opB(x) == 0 })
	if m == nil || m.extent > 2*lanes {
		return nil
	}
	nv := (m.extent + lanes - 1) / lanes
	byExtent := slices.Clone(axes)
	slices.SortStableFunc(byExtent, func(x, y *axis) int { return y.extent - x.extent })
	var cols, reds []*axis
	width := nv
	for _, x := range byExtent {
		switch {
		case x == m:
		case x.c != 0 && opA(x) == 0 && opB(x) != 0 && len(cols) < 2 && width*x.extent <= kn.MVecMaxAcc:
			cols = append(cols, x)
			width *= x.extent
		case x.c == 0 && opA(x) != 0 && opB(x) != 0 && len(reds) < 3:
			reds = append(reds, x)
		}
	}
	if len(cols) == 0 || len(reds) == 0 {
		return nil
	}
	slices.SortStableFunc(reds, func(x, y *axis) int { return opA(x) - opA(y) }) // innermost first
	p := &pick{swapped: swapped, axes: append(append([]*axis{m}, cols...), reds...)}
	sp := Spec{Kind: MVec, M: m.extent, CM: m.c, AM: 1, N2: 1, K2: 1, K3: 1}
	sp.N, sp.CN, sp.BN = cols[0].extent, cols[0].c, opB(cols[0])
	if len(cols) > 1 {
		sp.N2, sp.CN2, sp.BN2 = cols[1].extent, cols[1].c, opB(cols[1])
	}
	sp.K, sp.AK, sp.BK = reds[0].extent, opA(reds[0]), opB(reds[0])
	if len(reds) > 1 {
		sp.K2, sp.AK2, sp.BK2 = reds[1].extent, opA(reds[1]), opB(reds[1])
	}
	if len(reds) > 2 {
		sp.K3, sp.AK3, sp.BK3 = reds[2].extent, opA(reds[2]), opB(reds[2])
	}
	if !sp.cellsDistinct() {
		return nil
	}
	p.Spec = sp
	return p
}

// cellsDistinct reports whether an MVec spec's C cells are distinct.
func (s *Spec) cellsDistinct() bool {
	seen := map[int]bool{}
	for l := range s.M {
		for j1 := range s.N {
			for j2 := range s.N2 {
				o := l*s.CM + j1*s.CN + j2*s.CN2
				if seen[o] {
					return false
				}
				seen[o] = true
			}
		}
	}
	return true
}

// mvecPays reports whether the MVec pick v replaces the kernel n the
// classifier chose: a broadcast kernel whose vector is mostly idle (n
// under a vector), where v's reduction is long enough to amortize the
// scatter into C.
func mvecPays(v, n *pick, lanes int, kn target.Kernels) bool {
	return v != nil && n != nil && n.Spec.Kind == Broadcast && n.Spec.N < lanes &&
		v.Spec.K*v.Spec.K2*v.Spec.K3 >= kn.MVecMinSteps
}
