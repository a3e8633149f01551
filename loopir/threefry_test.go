package loopir

import (
	"math"
	"testing"
)

// The reference values are digest §7.3's (a Python port of OCANNL's
// builtins, matching test_param_shape_error.expected).
func TestThreefryReference(t *testing.T) {
	inner := InnerKey(2, DefaultSeed)
	want := [4]uint32{2147486645, 1313756091, 374868912, 2620303246}
	if inner != want {
		t.Fatalf("inner = %v, want %v", inner, want)
	}
	wantU := []float64{0.44999605, 0.39591426, 0.69485641, 0.64083511, 0.18663669, 0.24397457}
	for k, w := range wantU {
		if u := Uniform(inner, uint32(k)); math.Abs(u-w) > 1e-7 {
			t.Errorf("uniform(%d) = %.8f, want %.8f", k, u, w)
		}
	}
	// The digest prints the lone-param case as -2.50e-2.
	if v, w := DefaultInit(inner, 0), 0.5*(0.44999605-0.5); math.Abs(v-w) > 1e-7 {
		t.Errorf("default init of cell 0 = %v, want %v", v, w)
	}
}

func TestNameKey(t *testing.T) {
	// FNV-1a 32-bit test vectors.
	for _, c := range []struct {
		s    string
		want uint32
	}{{"", 0x811c9dc5}, {"a", 0xe40c292c}, {"foobar", 0xbf9cf968}} {
		if got := NameKey(c.s); got != c.want {
			t.Errorf("NameKey(%q) = %#x, want %#x", c.s, got, c.want)
		}
	}
}
