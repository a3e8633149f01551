package rt

import "math"

// BF16 is a bfloat16 number: the upper 16 bits of a float32 (sign, 8
// exponent bits, 7 mantissa bits), stored as a uint16.
type BF16 uint16

// BF16FromFloat32 rounds f to the nearest bfloat16, ties to even, as the
// x86 instruction VCVTNEPS2BF16 does: a zero or denormal f gives a zero
// of its sign (denormals are flushed), a NaN gives a quiet NaN with f's
// sign and upper mantissa bits, and a finite f too large rounds to
// infinity. Every tier of the bf16 kernels (package rt/bf16) rounds with
// this function or an instruction that gives the same bits.
func BF16FromFloat32(f float32) BF16 {
	u := math.Float32bits(f)
	switch {
	case u&0x7f800000 == 0: // zero or denormal
		return BF16(u>>16) & 0x8000
	case u&0x7fffffff > 0x7f800000: // NaN
		return BF16(u>>16) | 0x40
	}
	return BF16((u + 0x7fff + (u>>16)&1) >> 16)
}

// Float32 is b as a float32 (exact: every bfloat16 is a float32).
func (b BF16) Float32() float32 { return math.Float32frombits(uint32(b) << 16) }

// RoundBF16 is f rounded to bfloat16 and widened back to float32
// (BF16FromFloat32(f).Float32()).
func RoundBF16(f float32) float32 { return BF16FromFloat32(f).Float32() }

// BF16sFromFloat32s rounds src into dst (BF16FromFloat32 per element;
// the shorter length counts) and returns the number of elements written.
func BF16sFromFloat32s(dst []BF16, src []float32) int {
	n := min(len(dst), len(src))
	for i := range n {
		dst[i] = BF16FromFloat32(src[i])
	}
	return n
}

// Float32sFromBF16s widens src into dst (the shorter length counts) and
// returns the number of elements written.
func Float32sFromBF16s(dst []float32, src []BF16) int {
	n := min(len(dst), len(src))
	for i := range n {
		dst[i] = src[i].Float32()
	}
	return n
}
