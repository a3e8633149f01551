package asm

import (
	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The Adam kernel: one float32 Adam or AdamW update (rt.Adam without L2
// weight decay) over n elements, n a multiple of the tier's lanes, with
// the per-step coefficients rt.AdamCoeffs computes:
//
//	p *= decay
//	m  = beta1*m + (1-beta1)*g
//	v  = beta2*v + ((1-beta2)*g)*g
//	p -= (step*m) / (sqrt(v)/sqrtC2 + eps)
//
// Each operation is the IEEE single-precision operation rt.Adam's Go
// loop does, in the same order (no fused multiply-add; the square root
// correctly rounded, as float32(math.Sqrt(float64(v))) is), so the
// kernel's results are rt.Adam's bits. The generated Update runs it over
// each parameter's whole vectors and rt.Adam over the rest.

// AddAdam asks for the Adam kernel in every tier.
func (s *Set) AddAdam() { s.adam = true }

// HasAdam reports whether the set has the Adam kernel.
func (s *Set) HasAdam() bool { return s.adam }

// AdamName is the function implementing the Adam kernel in tier t.
func (s *Set) AdamName(t Config) string { return "ocannlAdam" + t.Tier }

// AdamLanes is the number of elements of one vector of tier t: the
// kernel's n is a multiple of it.
func AdamLanes(t Config) int { return t.VecBytes / 4 }

// AdamSignature is the Go signature of the Adam kernel (without the name;
// no parameter is called g, which the Go assembler reads as the goroutine
// register).
const AdamSignature = "(param, grad, m, v *float32, n int, k *[8]float32)"

// emitAdam adds the Adam kernel of tier t to c: k holds beta1, 1-beta1,
// beta2, 1-beta2, the step size lr/c1, sqrt(c2), eps and the decay.
func emitAdam(c *build.Context, t Config, name string) {
	c.Function(name)
	c.Attributes(attr.NOSPLIT)
	c.SignatureExpr("func" + AdamSignature)
	c.Pragma("noescape")
	c.Doc(name + " applies one float32 Adam update to n elements (n a multiple of the vector's lanes); " +
		"k: beta1, 1-beta1, beta2, 1-beta2, lr/c1, sqrt(c2), eps, decay (rt.AdamCoeffs).")
	vec := func() reg.VecVirtual {
		if t.Wide {
			return c.ZMM()
		}
		return c.YMM()
	}
	p := c.Load(c.Param("param"), c.GP64())
	g := c.Load(c.Param("grad"), c.GP64())
	m := c.Load(c.Param("m"), c.GP64())
	v := c.Load(c.Param("v"), c.GP64())
	n := c.Load(c.Param("n"), c.GP64())
	kp := c.Load(c.Param("k"), c.GP64())
	k := make([]reg.VecVirtual, 8)
	for i := range k {
		k[i] = vec()
		c.VBROADCASTSS(mem(kp, 4*i), k[i])
	}
	b1, omb1, b2, omb2, step, sqrtC2, eps, decay := k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7]
	lanes := AdamLanes(t)
	c.SHRQ(operand.U8(log2(lanes)), n)
	c.JZ(operand.LabelRef(name + "_done"))
	c.Label(name + "_loop")
	pv, gv, mv, vv := vec(), vec(), vec(), vec()
	c.VMOVUPS(mem(p, 0), pv)
	c.VMOVUPS(mem(g, 0), gv)
	c.VMOVUPS(mem(m, 0), mv)
	c.VMOVUPS(mem(v, 0), vv)
	c.VMULPS(decay, pv, pv)
	// m = beta1*m + (1-beta1)*g (two temporaries in all: the AVX2 tier
	// has 16 registers, 8 of them the coefficients)
	t1, t2 := vec(), vec()
	c.VMULPS(mv, b1, t1)
	c.VMULPS(gv, omb1, t2)
	c.VADDPS(t2, t1, mv)
	// v = beta2*v + ((1-beta2)*g)*g
	c.VMULPS(gv, omb2, t1)
	c.VMULPS(gv, t1, t1)
	c.VMULPS(vv, b2, t2)
	c.VADDPS(t1, t2, vv)
	c.VMOVUPS(mv, mem(m, 0))
	c.VMOVUPS(vv, mem(v, 0))
	// p -= (step*m) / (sqrt(v)/sqrtC2 + eps)
	c.VSQRTPS(vv, t1)
	c.VDIVPS(sqrtC2, t1, t1)
	c.VADDPS(eps, t1, t1)
	c.VMULPS(mv, step, t2)
	c.VDIVPS(t1, t2, t2)
	c.VSUBPS(t2, pv, pv)
	c.VMOVUPS(pv, mem(p, 0))
	for _, r := range []reg.Register{p, g, m, v} {
		c.ADDQ(operand.U32(t.VecBytes), r)
	}
	c.DECQ(n)
	c.JNZ(operand.LabelRef(name + "_loop"))
	c.Label(name + "_done")
	c.VZEROUPPER()
	c.RET()
}

// log2 is the base-2 logarithm of a power of two.
func log2(x int) int {
	n := 0
	for x > 1 {
		x >>= 1
		n++
	}
	return n
}
