package main

import (
	"math"
	"testing"
)

// TestPeakLoops runs each peak loop this CPU has (a wrong byte in the
// hand-encoded VDPBF16PS would fault here) and checks the FLOP counts
// of the models against the figures docs/benchmarks.md gives.
func TestPeakLoops(t *testing.T) {
	for _, l := range peakLoops() {
		l.run(1000)
		t.Logf("%s: ran", l.name)
	}
	if g := gptFLOP() / 1e9; math.Abs(g-69.4577) > 1e-3 {
		t.Errorf("GPT: %.4f GFLOP a step, want 69.4577 (token ids: no one-hot product)", g)
	}
	if g := resnetFLOP() / 1e9; math.Abs(g-7.8078) > 1e-3 {
		t.Errorf("ResNet-20: %.4f GFLOP a step, want 7.8078", g)
	}
}
