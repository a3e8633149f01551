package gradcheck

import "testing"

// TestHarnessDetectsMismatch makes sure the check fails when an analytic
// gradient is off by more than the tolerance.
func TestHarnessDetectsMismatch(t *testing.T) {
	for _, delta := range []float64{1e-4, 1e-5} {
		c := gcase{name: "relu_corrupted", m: new(Tanh), seed: 1, corrupt: func(g [][]float64) { g[0][5] += delta }}
		r := check(t, &c)
		if r.worst <= tol || r.cell != 5 {
			t.Errorf("a gradient off by %g was not detected: %s", delta, r)
		}
	}
	c := gcase{name: "tanh", m: new(Tanh), seed: 1}
	if r := check(t, &c); r.worst > tol {
		t.Errorf("uncorrupted check failed: %s", r)
	}
}

// TestBackwardZeroesGrads checks that Backward overwrites m.Grads rather
// than accumulating into them, and that Init is deterministic.
func TestBackwardZeroesGrads(t *testing.T) {
	var x [2][3]float64
	var r [2][4]float64
	for i := range 2 {
		for j := range 3 {
			x[i][j] = float64(i+j) / 5
		}
		for j := range 4 {
			r[i][j] = float64(j-2*i) / 4
		}
	}
	var m1, m2 SaveA
	m1.Init(11)
	m2.Init(11)
	if m1.Params != m2.Params {
		t.Fatal("Init is not deterministic")
	}
	l1 := m1.Backward(&x, &r)
	g1 := m1.Grads
	l2 := m1.Backward(&x, &r)
	if l1 != l2 || m1.Grads != g1 {
		t.Errorf("a second Backward changed the loss or the gradients (accumulation?)")
	}
	if l := m2.ObjectiveLoss(&x, &r); l != l1 {
		t.Errorf("Objective %v, Backward %v", l, l1)
	}
}
