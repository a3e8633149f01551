package asm

import (
	"fmt"
	"slices"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// vecOps are the element-type-specific instructions.
type vecOps struct {
	fma, add, addS, hadd, mask func(a, b, c operand.Op)
	bcast2, movS2              func(a, b operand.Op)
}

// v3 adapts a variadic instruction to three operands.
func v3(f func(...operand.Op)) func(a, b, c operand.Op) {
	return func(a, b, c operand.Op) { f(a, b, c) }
}

func opsFor(elem string, c *build.Context) vecOps {
	if elem == "float64" {
		return vecOps{
			fma: v3(c.VFMADD231PD), add: v3(c.VADDPD), addS: v3(c.VADDSD), hadd: c.VHADDPD, mask: c.VMASKMOVPD,
			bcast2: func(a, b operand.Op) { c.VBROADCASTSD(a, b) },
			movS2:  func(a, b operand.Op) { c.VMOVSD(a, b) },
		}
	}
	return vecOps{
		fma: v3(c.VFMADD231PS), add: v3(c.VADDPS), addS: v3(c.VADDSS), hadd: c.VHADDPS, mask: c.VMASKMOVPS,
		bcast2: func(a, b operand.Op) { c.VBROADCASTSS(a, b) },
		movS2:  func(a, b operand.Op) { c.VMOVSS(a, b) },
	}
}

// kgen emits one kernel function into a build.Context.
type kgen struct {
	c      *build.Context
	cfg    Config
	s      *Spec
	op     vecOps
	es     int // element size
	lanes  int
	labels int
	// pfB: the offset the B prefetches of a tile add to its B row (0:
	// none; see nextSweepB).
	pfB int
	// pack: the broadcast kernel copies each B sliver into its frame;
	// transB: it transposes them (a dot spec in the transposed-B
	// broadcast form, transb.go).
	pack, transB bool
	// maskTab is the tail-mask table: lanes all-ones elements then lanes
	// zeros; loading a vector at (lanes-r)*es gives the mask of r lanes.
	maskTab operand.Mem
}

func (g *kgen) label(stem string) string {
	g.labels++
	return fmt.Sprintf("%s%d", stem, g.labels)
}

// imm is a sign-extended immediate of the smallest form ADDQ takes.
func imm(v int) operand.Constant {
	if v >= -128 && v <= 127 {
		return operand.I8(v)
	}
	return operand.I32(v)
}

func mem(base reg.Register, disp int) operand.Mem { return operand.Mem{Base: base, Disp: disp} }

// loop emits body count times with a down-counting register (nothing
// when count is 0, no loop when it is 1).
func (g *kgen) loop(count int, stem string, body func()) {
	switch count {
	case 0:
		return
	case 1:
		body()
		return
	}
	n := g.c.GP64()
	g.c.MOVQ(operand.U32(count), n)
	l := g.label(stem)
	g.c.Label(l)
	body()
	g.c.DECQ(n)
	g.c.JNZ(operand.LabelRef(l))
}

// tailMask is the mask of the first r lanes: a vector loaded from the
// mask table (AVX2), or an opmask register (AVX-512).
func (g *kgen) tailMask(r int) reg.Register {
	if g.cfg.Wide {
		t, k := g.c.GP32(), g.c.K()
		g.c.MOVL(operand.U32(uint32(1)<<r-1), t)
		g.c.KMOVW(t, k)
		return k
	}
	m := g.c.YMM()
	g.c.VMOVUPS(g.maskTab.Offset((g.lanes-r)*g.es), m)
	return m
}

// vec is a new vector register of the tier's width.
func (g *kgen) vec() reg.VecVirtual {
	if g.cfg.Wide {
		return g.c.ZMM()
	}
	return g.c.YMM()
}

// zero clears v. On ZMM, VXORPS needs AVX512DQ, and avo does not know
// that VPXORD v, v, v reads nothing (the register would be live from the
// function's entry), so the AVX512F idiom is VPSUBD v, v, v.
func (g *kgen) zero(v reg.Register) {
	if g.cfg.Wide {
		g.c.VPSUBD(v, v, v)
		return
	}
	g.c.VXORPS(v, v, v)
}

// loadMasked loads the lanes of mask (the others become zero).
func (g *kgen) loadMasked(m operand.Mem, mask, dst reg.Register) {
	if g.cfg.Wide {
		// The opmask selects elements of the instruction's width.
		if g.es == 8 {
			g.c.VMOVUPD_Z(m, mask, dst)
		} else {
			g.c.VMOVUPS_Z(m, mask, dst)
		}
		return
	}
	g.op.mask(m, mask, dst)
}

// storeMasked stores the lanes of mask.
func (g *kgen) storeMasked(src, mask reg.Register, m operand.Mem) {
	if g.cfg.Wide {
		if g.es == 8 {
			g.c.VMOVUPD(src, mask, m)
		} else {
			g.c.VMOVUPS(src, mask, m)
		}
		return
	}
	g.op.mask(src, mask, m)
}

// hsum reduces the vector x to the sum of its lanes, in lane 0 of the
// returned XMM register. The AVX-512 sequence uses only EVEX-encodable
// instructions, since the register may be one of X16-X31.
func (g *kgen) hsum(x reg.VecVirtual) reg.Register {
	c := g.c
	if !g.cfg.Wide {
		hi := c.XMM()
		c.VEXTRACTF128(operand.Imm(1), x, hi)
		g.op.add(hi, x.AsX(), x.AsX())
		g.op.hadd(x.AsX(), x.AsX(), x.AsX())
		if g.es == 4 {
			g.op.hadd(x.AsX(), x.AsX(), x.AsX())
		}
		return x.AsX()
	}
	y, t := c.ZMM(), c.ZMM()
	c.VEXTRACTF64X4(operand.Imm(1), x, y.AsY())
	g.op.add(y.AsY(), x.AsY(), y.AsY())
	c.VEXTRACTF32X4(operand.Imm(1), y.AsY(), t.AsX())
	g.op.add(t.AsX(), y.AsX(), y.AsX())
	if g.es == 4 {
		c.VPERMILPS(operand.Imm(0x4e), y.AsX(), t.AsX())
		c.VADDPS(t.AsX(), y.AsX(), y.AsX())
		c.VPERMILPS(operand.Imm(0xb1), y.AsX(), t.AsX())
		c.VADDPS(t.AsX(), y.AsX(), y.AsX())
	} else {
		c.VPERMILPD(operand.Imm(1), y.AsX(), t.AsX())
		c.VADDPD(t.AsX(), y.AsX(), y.AsX())
	}
	return y.AsX()
}

// broadcast emits a Broadcast kernel: for each k block, for each n
// sliver of the tile's width, for each m tile, the register tile
// accumulates over the block's k and is added to (or stored in) C. A
// kernel that adds and has a K3 axis runs it outermost, around the n
// slivers (k3Outside): each k3 step (a convolution's image) adds its
// sums into C, so that the tiles re-read one step's A and B, which
// stay in L2, rather than all of them.
func (g *kgen) broadcast() {
	c, s := g.c, g.s
	cp, ap, bp := g.operands()
	if g.k3Outside() {
		g.loop(s.K3, "r", func() {
			g.broadcastBlocks(cp, ap, bp)
			c.ADDQ(imm(s.AK3*g.es), ap)
			c.ADDQ(imm(s.BK3*g.es), bp)
		})
	} else {
		g.broadcastBlocks(cp, ap, bp)
	}
	c.VZEROUPPER()
	c.RET()
}

// k3Outside reports whether the broadcast kernel runs its K3 axis
// around the tiles (broadcast) rather than inside each (reductions).
func (g *kgen) k3Outside() bool { return g.s.K3 > 1 && !g.s.Overwrite }

// broadcastBlocks is the broadcast kernel's k blocks, n slivers and m
// tiles over C, A and B at cp, ap and bp.
func (g *kgen) broadcastBlocks(cp, ap, bp reg.Register) {
	c, s := g.c, g.s
	nr := g.cfg.NRVec * g.lanes
	var buf operand.Mem
	if g.pack {
		buf = c.AllocLocal(slices.Max(g.cfg.kBlocks(s)) * nr * g.es)
	}
	k0 := 0
	for kb, kc := range g.cfg.kBlocks(s) {
		accumulate := !s.Overwrite || kb > 0
		bN, cN := c.GP64(), c.GP64()
		c.LEAQ(mem(bp, k0*s.BK*g.es), bN)
		c.MOVQ(cp, cN)
		aOff := k0 * s.AK * g.es
		sweep := func(nv, partial int) {
			var bT reg.Register = bN
			switch {
			case g.transB:
				bT = g.packBT(buf, bN, nv, kc)
			case g.pack:
				ahead := 0
				if g.cfg.Wide && kb+1 < len(g.cfg.kBlocks(s)) {
					ahead = kc * s.BK * g.es
				}
				bT = g.packB(buf, bN, nv, partial, kc, ahead)
			}
			aM, cM := c.GP64(), c.GP64()
			c.LEAQ(mem(ap, aOff), aM)
			c.MOVQ(cN, cM)
			tile := func(rows int) {
				g.tileBroadcast(rows, nv, partial, kc, accumulate, aM, bT, cM)
			}
			if pf := g.nextSweepB(kc, partial); pf != 0 && s.M >= 2*g.cfg.MR {
				// The first m tile prefetches the B the next sweep reads.
				g.pfB = pf
				tile(g.cfg.MR)
				g.pfB = 0
				c.ADDQ(imm(g.cfg.MR*s.AM*g.es), aM)
				c.ADDQ(imm(g.cfg.MR*s.CM*g.es), cM)
				g.mTilesFrom(1, g.cfg.MR, aM, cM, tile)
			} else {
				g.mTiles(g.cfg.MR, aM, cM, tile)
			}
		}
		g.loop(s.N/nr, "n", func() {
			sweep(g.cfg.NRVec, 0)
			c.ADDQ(imm(nr*s.BN*g.es), bN)
			c.ADDQ(imm(nr*g.es), cN)
		})
		if r := s.N % nr; r > 0 {
			sweep((r+g.lanes-1)/g.lanes, r%g.lanes)
		}
		k0 += kc
	}
}

// packB copies the kc x nv-vector sliver of B at bN into the frame
// buffer buf, rows nr elements apart (the lanes past a partial vector
// become zero), and returns the buffer's address. Unpacked, the sliver's
// rows are B's row stride apart, often a multiple of 2 KiB, so that they
// fall into a few L1 sets and evict each other across the m tiles. With
// ahead != 0 it also prefetches into L2 the same sliver of the next k
// block (ahead bytes on), which the kernel packs N/nr slivers later: a
// pack of a sliver from memory (kc rows BK apart) otherwise stalls the
// kernel for the whole copy.
func (g *kgen) packB(buf operand.Mem, bN reg.Register, nv, partial, kc, ahead int) reg.Register {
	c, s := g.c, g.s
	nr := g.cfg.NRVec * g.lanes
	dst0 := c.GP64()
	c.LEAQ(buf, dst0)
	src, dst := c.GP64(), c.GP64()
	c.MOVQ(bN, src)
	c.MOVQ(dst0, dst)
	var mask reg.Register
	if partial > 0 {
		mask = g.tailMask(partial)
	}
	g.loop(kc, "p", func() {
		for v := range nv {
			t := g.vec()
			if v == nv-1 && partial > 0 {
				g.loadMasked(mem(src, v*g.cfg.VecBytes), mask, t)
			} else {
				c.VMOVUPS(mem(src, v*g.cfg.VecBytes), t)
			}
			c.VMOVUPS(t, mem(dst, v*g.cfg.VecBytes))
			if ahead != 0 {
				c.PREFETCHT1(mem(src, ahead+v*g.cfg.VecBytes))
			}
		}
		c.ADDQ(imm(s.BK*g.es), src)
		c.ADDQ(imm(nr*g.es), dst)
	})
	return dst0
}

// nextSweepB is the offset in bytes from the B rows a sweep of a kernel
// that streams B (streamsB) reads (kc steps of one sliver) to those the
// next sweep reads, the next sliver's (after the last sliver of a k
// block, the prefetch runs past the sliver: harmless); 0 when the
// kernel does not stream B or its tiles do not prefetch (prefetches).
func (g *kgen) nextSweepB(kc, partial int) int {
	s := g.s
	if g.transB || partial > 0 || !g.prefetches(kc) || !g.cfg.streamsB(s) {
		return 0
	}
	return g.cfg.NRVec * g.lanes * s.BN * g.es
}

// bStride is the distance in bytes between consecutive k rows of the B
// the tiles read: the packed buffer's or B's own.
func (g *kgen) bStride() int {
	if g.pack {
		return g.cfg.NRVec * g.cfg.VecBytes
	}
	return g.s.BK * g.es
}

// prefetchKAhead is how many k steps ahead a broadcast tile whose A is
// strided along k (A[k][m], rows AK apart) prefetches A's line.
const prefetchKAhead = 16

// prefetches reports whether the broadcast tiles of a k block of kc
// steps prefetch (the AVX-512 tier, where it was measured): at the start of a tile its C cells; at each k step,
// when A is contiguous along k, the next m tile's rows of A at the same
// k (each row's line every 16 steps: the hardware prefetchers do not
// follow six or eight short runs, kc elements long, AM apart), else A
// prefetchKAhead steps on. Measured on the decoder's shapes (Zen 5,
// TestGemmMeasure, operands cold in memory): 5% to 40% faster cold,
// unchanged with the operands in cache; short k blocks (the ResNet's
// K = 16 or 32 kernels, called in Go loops over the pixels) lost up to
// 15% and do not prefetch, nor do folding kernels.
func (g *kgen) prefetches(kc int) bool {
	return g.cfg.Wide && kc >= 64 && !g.s.folds() && g.s.M >= 2*g.cfg.MR
}

// tileBroadcast is one rows x nv-vector register tile over kc steps of
// k; with partial > 0 the last vector has only that many lanes.
func (g *kgen) tileBroadcast(rows, nv, partial, kc int, accumulate bool, aM, bN, cM reg.Register) {
	c, s := g.c, g.s
	acc := make([][]reg.VecVirtual, rows)
	for r := range acc {
		acc[r] = make([]reg.VecVirtual, nv)
		for v := range acc[r] {
			acc[r][v] = g.vec()
			g.zero(acc[r][v])
		}
	}
	var mask reg.Register
	if partial > 0 {
		mask = g.tailMask(partial)
	}
	// Prefetching (see prefetches): C's tile, to be added to at the end.
	pf := g.prefetches(kc)
	if pf && accumulate {
		for r := range rows {
			for v := range nv {
				c.PREFETCHT0(mem(cM, r*s.CM*g.es+v*g.cfg.VecBytes))
			}
		}
	}
	a, b := c.GP64(), c.GP64()
	c.MOVQ(aM, a)
	c.MOVQ(bN, b)
	g.reductions(kc, a, b, func() {
		bv := make([]reg.VecVirtual, nv)
		for v := range bv {
			bv[v] = g.vec()
			if v == nv-1 && partial > 0 {
				g.loadMasked(mem(b, v*g.cfg.VecBytes), mask, bv[v])
			} else {
				c.VMOVUPS(mem(b, v*g.cfg.VecBytes), bv[v])
			}
		}
		if pf && s.AK != 1 {
			c.PREFETCHT0(mem(a, prefetchKAhead*s.AK*g.es))
		}
		if g.pfB != 0 {
			for v := range nv {
				c.PREFETCHT1(mem(b, g.pfB+v*g.cfg.VecBytes))
			}
		}
		for r := range rows {
			t := g.vec()
			g.op.bcast2(mem(a, r*s.AM*g.es), t)
			for v := range nv {
				g.op.fma(bv[v], t, acc[r][v])
			}
			if pf && s.AK == 1 && rows == g.cfg.MR {
				c.PREFETCHT0(mem(a, (r+rows)*s.AM*g.es))
			}
		}
	})
	for r := range rows {
		for v := range nv {
			addr := mem(cM, r*s.CM*g.es+v*g.cfg.VecBytes)
			if v == nv-1 && partial > 0 {
				if accumulate {
					t := g.vec()
					g.loadMasked(addr, mask, t)
					g.op.add(t, acc[r][v], acc[r][v])
				}
				g.storeMasked(acc[r][v], mask, addr)
				continue
			}
			if accumulate {
				g.op.add(addr, acc[r][v], acc[r][v])
			}
			c.VMOVUPS(acc[r][v], addr)
		}
	}
}

// reductions runs step once per reduction step of a broadcast tile: kc
// steps of k (A and B advanced by a row after each), inside the K2 then
// (unless k3Outside) K3 loops of a kernel with folded reduction axes
// (the caller's loops around a call, summed in the registers), each
// moving A and B on by its strides from where the inner loop left them.
func (g *kgen) reductions(kc int, a, b reg.Register, step func()) {
	c, s := g.c, g.s
	body := func() {
		g.loop(kc, "k", func() {
			step()
			c.ADDQ(imm(s.AK*g.es), a)
			c.ADDQ(imm(g.bStride()), b)
		})
	}
	// Where the inner loops leave A and B after one pass, relative to
	// where they began.
	aDone, bDone := kc*s.AK*g.es, kc*g.bStride()
	for i, x := range []struct{ n, as, bs int }{{s.K2, s.AK2, s.BK2}, {s.K3, s.AK3, s.BK3}} {
		if x.n <= 1 || i == 1 && g.k3Outside() {
			continue
		}
		inner, ad, bd := body, aDone, bDone
		body = func() {
			g.loop(x.n, "r", func() {
				inner()
				if v := x.as*g.es - ad; v != 0 {
					c.ADDQ(imm(v), a)
				}
				if v := x.bs*g.es - bd; v != 0 {
					c.ADDQ(imm(v), b)
				}
			})
		}
		aDone, bDone = x.n*x.as*g.es, x.n*x.bs*g.es
	}
	body()
}

// dot emits a Dot kernel: for each m tile, for each n tile, the
// accumulators collect vector partial sums along k (a masked last step
// for the k tail), then each is reduced horizontally and added to (or
// stored in) its C cell.
func (g *kgen) dot() {
	c, s := g.c, g.s
	cp, ap, bp := g.operands()
	mr, nr := g.cfg.DotMR, g.cfg.DotNR
	// k blocks (dotKBlocks): each sweeps every tile over its part of k
	// and adds its sums into C (the first stores them when the kernel
	// overwrites C), so that a tile's rows stay in L1 while the n sweep
	// reuses the A rows.
	k0 := 0
	for kb, kc := range g.cfg.dotKBlocks(s) {
		accumulate := !s.Overwrite || kb > 0
		aM, cM := c.GP64(), c.GP64()
		g.offset(ap, k0*g.es, aM)
		c.MOVQ(cp, cM)
		bOff := k0 * g.es
		rowsweep := func(rows int) {
			bN, cN := c.GP64(), c.GP64()
			g.offset(bp, bOff, bN)
			c.MOVQ(cM, cN)
			g.loop(s.N/nr, "n", func() {
				g.tileDot(rows, nr, kc, accumulate, aM, bN, cN)
				c.ADDQ(imm(nr*s.BN*g.es), bN)
				c.ADDQ(imm(nr*s.CN*g.es), cN)
			})
			if r := s.N % nr; r > 0 {
				g.tileDot(rows, r, kc, accumulate, aM, bN, cN)
			}
		}
		g.mTiles(mr, aM, cM, rowsweep)
		k0 += kc
	}
	c.VZEROUPPER()
	c.RET()
}

// offset sets dst to base plus off bytes (a copy when off is 0).
func (g *kgen) offset(base reg.Register, off int, dst reg.Register) {
	if off == 0 {
		g.c.MOVQ(base, dst)
		return
	}
	g.c.LEAQ(mem(base, off), dst)
}

// operands loads the kernel's three pointer parameters: c, a and b.
func (g *kgen) operands() (cp, ap, bp reg.Register) {
	c := g.c
	return c.Load(c.Param("c"), c.GP64()), c.Load(c.Param("a"), c.GP64()), c.Load(c.Param("b"), c.GP64())
}

// mTiles walks the m axis in tiles of rows rows: tile(rows) for each
// full tile, advancing aM and cM by its rows of A and C, then tile(r)
// for the r rows left.
func (g *kgen) mTiles(rows int, aM, cM reg.Register, tile func(rows int)) {
	g.mTilesFrom(0, rows, aM, cM, tile)
}

// mTilesFrom is mTiles from full tile first on (the earlier ones run).
func (g *kgen) mTilesFrom(first, rows int, aM, cM reg.Register, tile func(rows int)) {
	c, s := g.c, g.s
	g.loop(s.M/rows-first, "m", func() {
		tile(rows)
		c.ADDQ(imm(rows*s.AM*g.es), aM)
		c.ADDQ(imm(rows*s.CM*g.es), cM)
	})
	if r := s.M % rows; r > 0 {
		tile(r)
	}
}

// tileDot is one rows x cols dot tile over kc steps of k (all of K but
// in a blocked kernel); accumulate adds its sums to C instead of storing
// them.
func (g *kgen) tileDot(rows, cols, kc int, accumulate bool, aM, bN, cN reg.Register) {
	c, s := g.c, g.s
	acc := make([][]reg.VecVirtual, rows)
	for r := range acc {
		acc[r] = make([]reg.VecVirtual, cols)
		for j := range acc[r] {
			acc[r][j] = g.vec()
			g.zero(acc[r][j])
		}
	}
	// The k loop (with its masked tail), for each k2 step.
	a, b := c.GP64(), c.GP64()
	c.MOVQ(aM, a)
	c.MOVQ(bN, b)
	g.loop(max(1, s.K2), "q", func() {
		g.loop(kc/g.lanes, "k", func() {
			av := make([]reg.VecVirtual, rows)
			for r := range av {
				av[r] = g.vec()
				c.VMOVUPS(mem(a, r*s.AM*g.es), av[r])
			}
			for j := range cols {
				bv := g.vec()
				c.VMOVUPS(mem(b, j*s.BN*g.es), bv)
				for r := range rows {
					g.op.fma(av[r], bv, acc[r][j])
				}
			}
			c.ADDQ(imm(g.cfg.VecBytes), a)
			c.ADDQ(imm(g.cfg.VecBytes), b)
		})
		if rem := kc % g.lanes; rem > 0 {
			mask := g.tailMask(rem)
			for r := range rows {
				av := g.vec()
				g.loadMasked(mem(a, r*s.AM*g.es), mask, av)
				for j := range cols {
					bv := g.vec()
					g.loadMasked(mem(b, j*s.BN*g.es), mask, bv)
					g.op.fma(av, bv, acc[r][j])
				}
			}
		}
		// Back to the row starts, then one k2 step on.
		if s.K2 > 1 {
			back := (kc / g.lanes) * g.cfg.VecBytes
			c.ADDQ(imm(s.AK2*g.es-back), a)
			c.ADDQ(imm(s.BK2*g.es-back), b)
		}
	})
	if g.cfg.Wide && g.es == 4 && rows == 4 && cols == 4 && s.CN == 1 {
		g.treeStore(acc, cN, accumulate)
		return
	}
	for r := range rows {
		for j := range cols {
			x := g.hsum(acc[r][j])
			addr := mem(cN, r*s.CM*g.es+j*s.CN*g.es)
			if accumulate {
				g.op.addS(addr, x, x)
			}
			g.op.movS2(x, addr)
		}
	}
}

// treeStore reduces a full 4x4 float32 tile of ZMM partial sums at once
// and adds (or stores) the 16 sums into C, whose columns are contiguous:
// four rounds of lane shuffles and adds (VSHUFF32X4 on 128-bit lanes,
// then VSHUFPS within them) fold 16 vectors into one whose 128-bit lane
// r holds row r's 4 sums, about 3.5 instructions per sum instead of 10.
func (g *kgen) treeStore(acc [][]reg.VecVirtual, cN reg.Register, accumulate bool) {
	c, s := g.c, g.s
	// v[4*j+r] is the tile's cell (r, j).
	v := make([]reg.Register, 16)
	for r := range 4 {
		for j := range 4 {
			v[4*j+r] = acc[r][j]
		}
	}
	fold := func(shuf func(...operand.Op), lo, hi uint8, in []reg.Register) []reg.Register {
		out := make([]reg.Register, len(in)/2)
		for p := range out {
			x, y := in[2*p], in[2*p+1]
			a, b := c.ZMM(), c.ZMM()
			shuf(operand.Imm(uint64(lo)), y, x, a)
			shuf(operand.Imm(uint64(hi)), y, x, b)
			c.VADDPS(a, b, a)
			out[p] = a
		}
		return out
	}
	// Round 1: lanes (x0+x2, x1+x3, y0+y2, y1+y3); round 2: lane k holds
	// 4 partials of accumulator 4q+k; rounds 3 and 4 sum within lanes.
	v = fold(c.VSHUFF32X4, 0x44, 0xee, v)
	v = fold(c.VSHUFF32X4, 0x88, 0xdd, v)
	v = fold(c.VSHUFPS, 0x44, 0xee, v)
	v = fold(c.VSHUFPS, 0x88, 0xdd, v)
	sum := v[0].(reg.VecVirtual)
	// Every lane is extracted to its own register: an operation on
	// sum's XMM part would clear the upper lanes.
	for r := range 4 {
		t := c.ZMM()
		c.VEXTRACTF32X4(operand.Imm(uint64(r)), sum, t.AsX())
		x := t.AsX()
		addr := mem(cN, r*s.CM*g.es)
		if accumulate {
			c.VADDPS(addr, x, x)
		}
		c.VMOVUPS(x, addr)
	}
}

// emitKernel adds the function name implementing s to the context.
func emitKernel(c *build.Context, cfg Config, s *Spec, name string, maskTab operand.Mem) {
	if s.transposes(cfg) {
		v := s.transposed()
		cfg = cfg.shaped(&v)
		g := &kgen{c: c, cfg: cfg, s: &v, op: opsFor(s.Elem, c), es: s.elemSize(), lanes: cfg.lanes(s), maskTab: maskTab, pack: true, transB: true}
		c.Function(name)
		c.SignatureExpr(fmt.Sprintf("func(c, a, b *%s)", s.Elem))
		c.Pragma("noescape")
		c.Doc(fmt.Sprintf("%s runs a %s dot spec as a broadcast kernel over B transposed into the frame, M=%d N=%d K=%d (%dx%d tile); strides C %d,%d A %d,%d B %d,%d.",
			name, s.Elem, s.M, s.N, s.K, cfg.MR, cfg.NRVec*g.lanes, s.CM, s.CN, s.AM, s.AK, s.BK, s.BN))
		g.broadcast()
		return
	}
	cfg = cfg.shaped(s)
	g := &kgen{c: c, cfg: cfg, s: s, op: opsFor(s.Elem, c), es: s.elemSize(), lanes: cfg.lanes(s), maskTab: maskTab}
	g.pack = s.Kind == Broadcast && cfg.packs(s)
	c.Function(name)
	if !g.pack && !s.gathers(cfg) {
		// A packing (or gathering) kernel's frame holds B: too large for
		// NOSPLIT, so it gets the stack check.
		c.Attributes(attr.NOSPLIT)
	}
	c.SignatureExpr(fmt.Sprintf("func(c, a, b *%s)", s.Elem))
	c.Pragma("noescape")
	mr, nr := cfg.tile(s)
	if s.gathers(cfg) {
		k, k2 := fmt.Sprint(s.K), ""
		if s.K2 > 1 {
			k, k2 = fmt.Sprintf("%dx%d", s.K, s.K2), fmt.Sprintf(", k2 A %d B %d", s.AK2, s.BK2)
		}
		c.Doc(fmt.Sprintf("%s runs a %s dot spec as a gathered broadcast kernel, M=%d N=%d K=%s (%dx%d tile, B gathered into the frame); strides C %d,%d A %d,%d B %d,%d%s.",
			name, s.Elem, s.M, s.N, k, mr, nr, s.CM, s.CN, s.AM, s.AK, s.BK, s.BN, k2))
		g.gather()
		return
	}
	if s.Kind == MVec {
		c.Doc(fmt.Sprintf("%s runs a %s m-vector kernel, M=%d N=%dx%d K=%dx%dx%d; strides C %d,%d,%d A %d,%d,%d,%d B %d,%d,%d,%d,%d.",
			name, s.Elem, s.M, s.N, s.N2, s.K, s.K2, s.K3, s.CM, s.CN, s.CN2, s.AM, s.AK, s.AK2, s.AK3, s.BN, s.BN2, s.BK, s.BK2, s.BK3))
		g.mvec()
		return
	}
	if s.folds() {
		c.Doc(fmt.Sprintf("%s runs a %s %s kernel, M=%d N=%d K=%dx%dx%d (%dx%d tile); strides C %d,%d A %d,%d,%d,%d B %d,%d,%d,%d.",
			name, s.Elem, s.Kind, s.M, s.N, s.K, max(1, s.K2), max(1, s.K3), mr, nr, s.CM, s.CN, s.AM, s.AK, s.AK2, s.AK3, s.BK, s.BK2, s.BK3, s.BN))
	} else {
		c.Doc(fmt.Sprintf("%s runs a %s %s kernel, M=%d N=%d K=%d (%dx%d tile); strides C %d,%d A %d,%d B %d,%d.",
			name, s.Elem, s.Kind, s.M, s.N, s.K, mr, nr, s.CM, s.CN, s.AM, s.AK, s.BK, s.BN))
	}
	if s.Kind == Dot {
		g.dot()
	} else {
		g.broadcast()
	}
}
