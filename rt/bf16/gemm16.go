package bf16

import (
	"unsafe"

	"github.com/ocannlgen/ocannlgen/rt"
)

// GemmBF16 is Gemm over operands that are already bfloat16 (the
// generated code of an //ocannl:einsum over rt.BF16 arrays calls it):
// GemmOps with both operands in their bf16 form (Operand.H), so the
// packing copies their bits without rounding, and the result is float32,
// computed in the order, the tiers and the blocking Gemm documents (so
// GemmBF16 over the rounded operands gives Gemm's bits). Sizes and
// strides must be non-negative; C must not overlap A or B.
func GemmBF16(c *float32, a, b *rt.BF16, s Shape) { runOps(best, c, bf16Operand(a), bf16Operand(b), s) }

// GemmBF16Tier is GemmBF16 in tier t, or in the best available tier
// below it when the CPU does not have t (Available).
func GemmBF16Tier(t Tier, c *float32, a, b *rt.BF16, s Shape) {
	t = usable(t)
	runOps(t, c, bf16Operand(a), bf16Operand(b), s)
}

// bf16Operand is the Operand of bf16 values at p (rt.BF16 is a uint16).
func bf16Operand(p *rt.BF16) Operand { return Operand{H: (*uint16)(unsafe.Pointer(p))} }
