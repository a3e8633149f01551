package asm

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The transposed-B broadcast form (AVX-512, float32). A dot spec (k of
// unit stride in A and B: `C[m][n] += A[m][k] B[n][k]`, the decoder's
// `x W^T` products) whose C is contiguous along n runs as a broadcast
// kernel: for each k block and n sliver the kernel transposes the
// sliver's rows of B (n) into its frame as kc rows of the sliver's width
// (16x16 blocks transposed in registers), then the broadcast tiles run
// over it, broadcasting A[m][k] (contiguous along k in each row). The dot
// kernel loads a vector of A and of B per 16 multiply-adds of a 4x4
// tile and ends each tile with a horizontal reduction; the broadcast
// tile loads 10 vectors per 24 FMAs and stores its sums directly.

// transMinM is the least M for which the transposed form replaces the
// dot kernel: the transposition of B (a pass over B per call) is
// amortized over the m tiles.
const transMinM = 64

// transposes reports whether tier c runs the dot spec s in the
// transposed-B broadcast form: float32 on the AVX-512 tier, one
// reduction axis, C contiguous along n, N a multiple of 16, M at least
// transMinM, and every k block of the broadcast view a multiple of 16.
func (s *Spec) transposes(c Config) bool {
	if !c.Wide || s.Kind != Dot || s.Elem != "float32" || s.K2 > 1 || s.K3 > 1 || s.CN != 1 || s.AK != 1 || s.BK != 1 {
		return false
	}
	if s.M < transMinM || s.N%16 != 0 || s.K%16 != 0 {
		return false
	}
	v := s.transposed()
	for _, kc := range c.kBlocks(&v) {
		if kc%16 != 0 {
			return false
		}
	}
	return true
}

// transposed is the broadcast view of a dot spec that transposes: A's k
// stride 1, B read at stride 1 along k and BN along n (by the packing
// only; the tiles read the frame).
func (s *Spec) transposed() Spec {
	v := *s
	v.Kind = Broadcast
	v.AK, v.BK = 1, 1
	v.tb = true
	return v
}

// packBT transposes the sliver of B at bN (nv*16 rows of B, BN apart,
// each kc elements along k) into the frame buffer buf as kc rows of nr
// elements and returns the buffer's address.
func (g *kgen) packBT(buf operand.Mem, bN reg.Register, nv, kc int) reg.Register {
	c, s := g.c, g.s
	nr := g.cfg.NRVec * g.lanes
	dst0 := c.GP64()
	c.LEAQ(buf, dst0)
	srcV, dstV := c.GP64(), c.GP64()
	c.MOVQ(bN, srcV)
	c.MOVQ(dst0, dstV)
	g.loop(nv, "t", func() {
		src, dst := c.GP64(), c.GP64()
		c.MOVQ(srcV, src)
		c.MOVQ(dstV, dst)
		g.loop(kc/16, "u", func() {
			r := make([]reg.Register, 16)
			for i := range r {
				r[i] = c.ZMM()
				c.VMOVUPS(mem(src, i*s.BN*g.es), r[i])
			}
			for i, x := range g.transpose16(r) {
				c.VMOVUPS(x, mem(dst, i*nr*g.es))
			}
			c.ADDQ(imm(64), src)
			c.ADDQ(imm(16*nr*g.es), dst)
		})
		c.ADDQ(imm(16*s.BN*g.es), srcV)
		c.ADDQ(imm(64), dstV)
	})
	return dst0
}

// transpose16 transposes the 16x16 float32 matrix whose rows are r (one
// ZMM each) and returns its columns: lane pairs (VUNPCKLPS/VUNPCKHPS),
// then pairs of pairs (VUNPCKLPD/VUNPCKHPD), then 128-bit lanes twice
// (VSHUFF32X4).
func (g *kgen) transpose16(r []reg.Register) []reg.Register {
	c := g.c
	t := make([]reg.Register, 16)
	for i := range 8 {
		t[2*i], t[2*i+1] = c.ZMM(), c.ZMM()
		c.VUNPCKLPS(r[2*i+1], r[2*i], t[2*i])
		c.VUNPCKHPS(r[2*i+1], r[2*i], t[2*i+1])
	}
	u := make([]reg.Register, 16)
	for i := range 4 {
		for j, p := range [][2]int{{0, 2}, {1, 3}} {
			lo, hi := c.ZMM(), c.ZMM()
			c.VUNPCKLPD(t[4*i+p[1]], t[4*i+p[0]], lo)
			c.VUNPCKHPD(t[4*i+p[1]], t[4*i+p[0]], hi)
			u[4*i+2*j], u[4*i+2*j+1] = lo, hi
		}
	}
	w := make([]reg.Register, 16)
	for _, i := range []int{0, 1, 2, 3, 8, 9, 10, 11} {
		w[i], w[i+4] = c.ZMM(), c.ZMM()
		c.VSHUFF32X4(operand.Imm(0x88), u[i+4], u[i], w[i])
		c.VSHUFF32X4(operand.Imm(0xdd), u[i+4], u[i], w[i+4])
	}
	x := make([]reg.Register, 16)
	for i := range 8 {
		x[i], x[i+8] = c.ZMM(), c.ZMM()
		c.VSHUFF32X4(operand.Imm(0x88), w[i+8], w[i], x[i])
		c.VSHUFF32X4(operand.Imm(0xdd), w[i+8], w[i], x[i+8])
	}
	return x
}
