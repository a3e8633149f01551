package inference_test

import (
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/inference"
)

// TestSizeLimits: tensors whose cell count would wrap around, or with
// thousands of axes, are size errors at the offending axis or operation
// (they used to infer with an element count of 0, or be reported as a
// rank cycle).
func TestSizeLimits(t *testing.T) {
	twos := strings.Repeat("2,", 63) + "2"
	ones := strings.Repeat("1,", 1999) + "1"
	for _, tc := range []struct{ name, src, want string }{
		{"two 2^32 axes", "input x : 4294967296, 4294967296 | 1 = 0\n", "1:23: the shape of x has more than 2^47 cells"},
		{"64 axes of 2", "input x : " + twos + " = 0\n", "the shape of x has more than 2^47 cells"},
		{"2000 axes", "input x : " + ones + " = 0\n", "the shape of x has more than 1024 axes"},
		{"inferred outer product", "input x : 100000 = 0\ninput y : 100000 = 0\nlet z = x +* \"i; j => i, j\" y\nlet w = z +* \"i, j; k => i, j, k\" x\n",
			"4:11: w has shape 100000,100000,100000, more than 2^47 cells"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := inference.InferSource(tc.src)
			e, ok := inference.AsError(err)
			if !ok || e.Kind != inference.KindSize || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a size error containing %q", err, tc.want)
			}
		})
	}
	// Just below the limit is fine: 2^46 cells.
	if _, err := inference.InferSource("input x : 8388608, 8388608 = 0\n"); err != nil {
		t.Fatalf("2^46 cells: %v", err)
	}
}
