package cpu

import (
	"os"
	"testing"
)

func TestParseTier(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Tier
		bad  bool
	}{
		{"", AVX512BF16, false}, {"avx512", AVX512, false}, {"AVX512BF16", AVX512BF16, false}, {"AVX2", AVX2, false}, {" purego ", Purego, false},
		{"go", Purego, false}, {"sse", Purego, true},
	} {
		got, err := ParseTier(c.in)
		if got != c.want || (err != nil) != c.bad {
			t.Errorf("ParseTier(%q) = %v, %v; want %v (error: %v)", c.in, got, err, c.want, c.bad)
		}
	}
}

// TestLimit: the limit is what the environment asks for, and Enabled
// never exceeds it.
func TestLimit(t *testing.T) {
	want, _ := ParseTier(os.Getenv(EnvVar))
	if got, _ := Limit(); got != want {
		t.Fatalf("Limit() = %v, want %v", got, want)
	}
	if want < AVX2 && Enabled(AVX2) {
		t.Errorf("Enabled(AVX2) under %s=%s", EnvVar, os.Getenv(EnvVar))
	}
	if Supported("NOSUCHISA") || Enabled(Purego, "NOSUCHISA") {
		t.Error("an unknown instruction set is supported")
	}
	if !Enabled(Purego) {
		t.Error("the purego tier is always enabled")
	}
}
