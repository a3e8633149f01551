package asm

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
	"github.com/ocannlgen/ocannlgen/emit/target"
)

// The gathered broadcast form (AVX2 only) runs a Dot spec whose n axis is
// short and contiguous in C (a convolution with few input channels: n
// the output channels, k the kernel width times the channels, K2 the
// kernel rows) as a broadcast kernel: the output channels are the vector
// axis, the reduction steps (k2, k) are unrolled, and each step
// broadcasts one A cell per row of the tile. B's n stride is not 1 (the
// kernel is stored [oc][kh][kw][ic]), so the kernel first gathers B into
// its frame, one row of N elements (zero-padded to whole vectors) per
// reduction step. The dot kernel spends most of such a nest in
// horizontal sums of vectors with K of their lanes used.

// gathers reports whether tier c runs s in the gathered broadcast form.
func (s *Spec) gathers(c Config) bool { return s.Gather && !c.Wide && s.Kind == Dot }

// gatherTile is the gathered form's register tile: rows by vectors (the
// vectors cover N). Accumulators, the B vectors of one step, one
// broadcast and one spare fit the budget (at the store: the tail mask
// and a loaded C vector): 13x1 or 6x2 vectors in 16 YMM registers.
func (c Config) gatherTile(s *Spec) (rows, nv int) {
	nv = (s.N + c.lanes(s) - 1) / c.lanes(s)
	return (c.Regs - nv - 2) / nv, nv
}

// gatherFits reports whether the gathered form can run s in tier c.
func (c Config) gatherFits(s *Spec) bool {
	if s.Kind != Dot || s.CN != 1 || s.K > c.Kernels.GatherMaxK || s.K*max(1, s.K2) > c.Kernels.GatherMaxSteps {
		return false
	}
	rows, nv := c.gatherTile(s)
	return nv <= 2 && rows >= 1
}

// gatherPays reports whether the AVX2 tier should run the Dot spec s in
// the gathered form: it fits, and a cost estimate in vector steps is
// lower than the dot kernel's. The dot kernel: per C cell, ceil(K/lanes)
// steps for each of K2 plus about 3 for the horizontal sum and the store;
// the gathered form: per row, one step per vector and reduction step,
// plus one per element of B gathered. Measured against the dot kernel
// by TestGatherRule on Zen 3 (190 shapes, M 4-256, N 4-16, K 3-24, K2 1
// or 3, both element types): the estimate picks no shape where the
// gathered form is slower, and misses some at most 1.8x faster (small M
// with K2 = 3, float32 N = 4).
func gatherPays(s *Spec, kn target.Kernels) bool {
	c := AVX2()
	c.Kernels = kn
	if !c.gatherFits(s) {
		return false
	}
	l, k2 := c.lanes(s), max(1, s.K2)
	_, nv := c.gatherTile(s)
	steps := s.K * k2
	dot := s.M * s.N * ((s.K+l-1)/l*k2 + kn.DotCellSteps)
	return s.M*nv*steps+s.N*steps < dot
}

// gather emits the gathered broadcast form of a Dot spec (see above):
// gather B, then for each m tile the register tile accumulates over
// every reduction step and is added to (or stored in) C.
func (g *kgen) gather() {
	c, s := g.c, g.s
	cp, ap, bp := g.operands()
	rows, nv := g.cfg.gatherTile(s)
	k2 := max(1, s.K2)
	buf := c.AllocLocal(s.K * k2 * nv * g.cfg.VecBytes)
	bufp := c.GP64()
	c.LEAQ(buf, bufp)
	g.gatherB(bufp, bp, nv)
	aM, cM := c.GP64(), c.GP64()
	c.MOVQ(ap, aM)
	c.MOVQ(cp, cM)
	g.mTiles(rows, aM, cM, func(rows int) { g.tileGather(rows, nv, aM, bufp, cM) })
	c.VZEROUPPER()
	c.RET()
}

// gatherB copies B into the frame at bufp: row q*K+k holds
// B[n*BN + k*BK + q*BK2] for n < N, then zeros up to nv vectors. The
// padding is written first (the last vector of every row), then a loop
// over n moves the K*K2 elements of each channel.
func (g *kgen) gatherB(bufp, bp reg.Register, nv int) {
	c, s := g.c, g.s
	k2 := max(1, s.K2)
	row := nv * g.cfg.VecBytes
	if s.N%g.lanes != 0 {
		z := g.vec()
		g.zero(z)
		for q := range s.K * k2 {
			c.VMOVUPS(z, mem(bufp, q*row+(nv-1)*g.cfg.VecBytes))
		}
	}
	src, dst := c.GP64(), c.GP64()
	c.MOVQ(bp, src)
	c.MOVQ(bufp, dst)
	g.loop(s.N, "g", func() {
		for q := range k2 {
			for k := range s.K {
				off, to := (k*s.BK+q*s.BK2)*g.es, (q*s.K+k)*row
				if g.es == 8 {
					t := c.GP64()
					c.MOVQ(mem(src, off), t)
					c.MOVQ(t, mem(dst, to))
				} else {
					t := c.GP32()
					c.MOVL(mem(src, off), t)
					c.MOVL(t, mem(dst, to))
				}
			}
		}
		c.ADDQ(imm(s.BN*g.es), src)
		c.ADDQ(imm(g.es), dst)
	})
}

// tileGather is one rows x nv-vector tile of the gathered form over every
// reduction step, stored or added into C (the last vector masked when N
// is not a whole number of vectors).
func (g *kgen) tileGather(rows, nv int, aM, bufp, cM reg.Register) {
	c, s := g.c, g.s
	acc := make([][]reg.VecVirtual, rows)
	for r := range acc {
		acc[r] = make([]reg.VecVirtual, nv)
		for v := range acc[r] {
			acc[r][v] = g.vec()
			g.zero(acc[r][v])
		}
	}
	row := nv * g.cfg.VecBytes
	// step runs reduction step k of the current k2 row: A at a plus
	// aOff, the gathered B row at b plus bOff.
	step := func(a, b reg.Register, aOff, bOff int) {
		bv := make([]reg.VecVirtual, nv)
		for v := range bv {
			bv[v] = g.vec()
			c.VMOVUPS(mem(b, bOff+v*g.cfg.VecBytes), bv[v])
		}
		for r := range rows {
			t := g.vec()
			g.op.bcast2(mem(a, aOff+r*s.AM*g.es), t)
			for v := range nv {
				g.op.fma(bv[v], t, acc[r][v])
			}
		}
	}
	k2 := max(1, s.K2)
	if s.K*k2 <= g.cfg.Kernels.GatherUnroll {
		for q := range k2 {
			for k := range s.K {
				step(aM, bufp, (k*s.AK+q*s.AK2)*g.es, (q*s.K+k)*row)
			}
		}
	} else {
		a, b := c.GP64(), c.GP64()
		c.MOVQ(aM, a)
		c.MOVQ(bufp, b)
		g.loop(k2, "q", func() {
			for k := range s.K {
				step(a, b, k*s.AK*g.es, k*row)
			}
			c.ADDQ(imm(s.AK2*g.es), a)
			c.ADDQ(imm(s.K*row), b)
		})
	}
	g.storeTile(acc, rows, nv, s.N%g.lanes, cM)
}

// storeTile adds (or stores) a rows x nv-vector tile of accumulators
// into C at cM (rows CM apart); with partial > 0 the last vector has only
// that many lanes (a masked load, and stores of its pieces: a VMASKMOVPS
// store costs about as much as the tile's row of FMAs on Zen 3, and
// halved the float32 N=4 kernels' speed).
func (g *kgen) storeTile(acc [][]reg.VecVirtual, rows, nv, partial int, cM reg.Register) {
	c, s := g.c, g.s
	var mask reg.Register
	if partial > 0 && !s.Overwrite {
		mask = g.tailMask(partial)
	}
	for r := range rows {
		for v := range nv {
			addr := mem(cM, r*s.CM*g.es+v*g.cfg.VecBytes)
			if v == nv-1 && partial > 0 {
				if !s.Overwrite {
					t := g.vec()
					g.loadMasked(addr, mask, t)
					g.op.add(t, acc[r][v], acc[r][v])
				}
				g.storePartial(acc[r][v], partial, addr)
				continue
			}
			if !s.Overwrite {
				g.op.add(addr, acc[r][v], acc[r][v])
			}
			c.VMOVUPS(acc[r][v], addr)
		}
	}
}

// storePartial stores the first p lanes of x at addr (1 <= p < lanes),
// as 16-, 8- and 4-byte pieces.
func (g *kgen) storePartial(x reg.VecVirtual, p int, addr operand.Mem) {
	c := g.c
	src, base, rest := reg.Register(x.AsX()), addr, p*g.es
	if rest >= 16 {
		c.VMOVUPS(x.AsX(), base)
		rest -= 16
		if rest == 0 {
			return
		}
		hi := c.XMM()
		c.VEXTRACTF128(operand.Imm(1), x, hi)
		src, base = hi, base.Offset(16)
	}
	if rest >= 8 {
		c.VMOVQ(src, base)
		rest -= 8
		if rest > 0 {
			c.VEXTRACTPS(operand.Imm(2), src, base.Offset(8))
		}
		return
	}
	c.VMOVSS(src, base)
}
