package rt

import (
	"math"
	"testing"
)

// TestBF16FromFloat32: round to nearest even on the bits, specials as
// VCVTNEPS2BF16 treats them, and the result is the nearest bfloat16
// (checked against the two neighbours in float64).
func TestBF16FromFloat32(t *testing.T) {
	for _, c := range []struct {
		in   uint32
		want BF16
	}{
		{0x3f800000, 0x3f80}, // 1
		{0x3f808000, 0x3f80}, // tie, even stays
		{0x3f818000, 0x3f82}, // tie, odd rounds up
		{0x3f808001, 0x3f81}, // above the tie
		{0x3f807fff, 0x3f80}, // below the tie
		{0x80000000, 0x8000}, // -0
		{0x00000001, 0x0000}, // denormal flushed
		{0x807fffff, 0x8000}, // negative denormal flushed
		{0x7f800000, 0x7f80}, // +Inf
		{0xff800000, 0xff80}, // -Inf
		{0x7f7fffff, 0x7f80}, // MaxFloat32 rounds to +Inf
		{0x7f800001, 0x7fc0}, // signalling NaN quieted
		{0xffc00000, 0xffc0}, // quiet NaN kept
	} {
		if got := BF16FromFloat32(math.Float32frombits(c.in)); got != c.want {
			t.Errorf("BF16FromFloat32(%#08x) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
	s := uint32(12345)
	for range 100000 {
		s = s*1664525 + 1013904223
		u := s&0x3fffffff | 0x00800000 // normal, finite, positive
		f := math.Float32frombits(u)
		b := BF16FromFloat32(f)
		lo, hi := BF16(u>>16).Float32(), BF16(u>>16+1).Float32()
		d, dlo, dhi := float64(b.Float32()), float64(f)-float64(lo), float64(hi)-float64(f)
		if d != float64(lo) && d != float64(hi) || math.Abs(float64(f)-d) > min(dlo, dhi) {
			t.Fatalf("BF16FromFloat32(%v) = %v, not the nearest of %v, %v", f, b.Float32(), lo, hi)
		}
		if dlo == dhi && b&1 != 0 {
			t.Fatalf("BF16FromFloat32(%v): a tie rounded to odd %#04x", f, b)
		}
	}
	x := []float32{1.5, -3.25, 1e-3}
	y := make([]BF16, 3)
	z := make([]float32, 3)
	if BF16sFromFloat32s(y, x) != 3 || Float32sFromBF16s(z, y) != 3 || z[0] != 1.5 || z[1] != -3.25 || z[2] != RoundBF16(1e-3) {
		t.Errorf("slice conversions: %v -> %v -> %v", x, y, z)
	}
}
