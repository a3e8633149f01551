package rt

import (
	"math"
	"testing"
)

// TestDropoutMask checks the mask's values (exactly 0 or 1/(1-p)), the
// fraction of zeros against p over 2^20 cells (within 5 standard
// deviations), that it depends on the seed, the step and the key and on
// nothing else, and that a short tail (a length not a multiple of 4) is
// the prefix of the longer mask.
func TestDropoutMask(t *testing.T) {
	key := ParamKey("net.dropout#1/mask")
	for _, p := range []float64{0, 0.1, 0.5, 0.9} {
		const n = 1 << 20
		m := make([]float32, n)
		DropoutMask(m, p, key, 7, 3)
		zeros := 0
		for i, v := range m {
			switch v {
			case 0:
				zeros++
			case float32(1 / (1 - p)):
			default:
				t.Fatalf("p=%g: cell %d is %v", p, i, v)
			}
		}
		sd := math.Sqrt(n * p * (1 - p))
		if d := math.Abs(float64(zeros) - n*p); d > 5*sd+0.5 {
			t.Errorf("p=%g: %d zeros of %d, want %g ± %g", p, zeros, n, n*p, 5*sd)
		}
	}
	a, b := make([]float64, 1001), make([]float64, 1001)
	DropoutMask(a, 0.5, key, 7, 3)
	DropoutMask(b, 0.5, key, 7, 3)
	if !equal(a, b) {
		t.Fatal("the same seed, step and key gave two masks")
	}
	short := make([]float64, 998)
	DropoutMask(short, 0.5, key, 7, 3)
	if !equal(short, a[:998]) {
		t.Fatal("a shorter mask is not the longer one's prefix")
	}
	for _, c := range []struct {
		name string
		seed uint64
		step int
		key  [4]uint32
	}{{"seed", 8, 3, key}, {"step", 7, 4, key}, {"key", 7, 3, ParamKey("net.dropout#2/mask")}} {
		DropoutMask(b, 0.5, c.key, c.seed, c.step)
		if equal(a, b) {
			t.Errorf("another %s gave the same mask", c.name)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("p = 1 did not panic")
		}
	}()
	DropoutMask(b, 1, key, 7, 3)
}

func equal(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// TestDropoutMaskAllocs checks that drawing a mask does not allocate.
func TestDropoutMaskAllocs(t *testing.T) {
	m := make([]float32, 4096)
	if a := testing.AllocsPerRun(10, func() { DropoutMask(m, 0.1, [4]uint32{1, 2, 3, 4}, 1, 2) }); a != 0 {
		t.Errorf("%v allocations per mask", a)
	}
}

// BenchmarkDropoutMask draws a mask of 2^16 float32 cells.
func BenchmarkDropoutMask(b *testing.B) {
	m := make([]float32, 1<<16)
	b.SetBytes(4 << 16)
	for i := range b.N {
		DropoutMask(m, 0.1, [4]uint32{1, 2, 3, 4}, 1, i)
	}
}
