package model

import "testing"

// TestSideParameter: the gradient of a parameter the loss does not use
// is zero, and a training step leaves that parameter as it was, while
// the loss's own parameter moves: loss = sum x·w·x, so d/dw_j = sum_b x_bj².
func TestSideParameter(t *testing.T) {
	var m Side
	m.Init(3)
	m.Grads.V = [3]float32{9, 9, 9} // Backward must not leave stale values either
	v, w := m.Params.V, m.Params.W
	x := [4][3]float32{{1, 2, 3}, {0, 1, 0}, {-1, 0, 2}, {1, 1, 1}}
	m.TrainStep(&x)
	if m.Params.V != v {
		t.Errorf("v changed from %v to %v", v, m.Params.V)
	}
	for j := range 3 {
		var g float32
		for b := range 4 {
			g += x[b][j] * x[b][j]
		}
		if m.Grads.W[j] != g || m.Params.W[j] != w[j]-0.1*g {
			t.Errorf("w[%d]: gradient %v, want %v; value %v, want %v", j, m.Grads.W[j], g, m.Params.W[j], w[j]-0.1*g)
		}
	}
}
