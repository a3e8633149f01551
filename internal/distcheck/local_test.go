package distcheck

import (
	"testing"

	"github.com/ocannlgen/ocannlgen/rt/dist"
)

// TestLocal: on a single process (dist.Local) SyncGrads leaves the
// gradients and BroadcastParams the parameters as they are, and
// SyncGrads does not allocate (the data-parallel run under mpirun is
// TestDataParallel, with -tags mpi).
func TestLocal(t *testing.T) {
	m := new(S2)
	m.Init(3)
	x := [2][3]float32{{1, 2, 3}, {-1, 0, 1}}
	y := [2][4]float32{{1, 0, 0, 0}, {0, 0, 1, 0}}
	m.Backward(&x, &y)
	g, p := m.Grads, m.Params
	c := dist.Local()
	if err := m.SyncGrads(c); err != nil || m.Grads != g {
		t.Fatalf("SyncGrads on one process: %v, gradients changed %v", err, m.Grads != g)
	}
	if err := m.BroadcastParams(c, 0); err != nil || m.Params != p {
		t.Fatalf("BroadcastParams on one process: %v, parameters changed %v", err, m.Params != p)
	}
	if n := testing.AllocsPerRun(20, func() { _ = m.SyncGrads(c) }); n != 0 {
		t.Errorf("SyncGrads allocates %v times", n)
	}
	a := new(A2)
	if n := testing.AllocsPerRun(20, func() { _ = a.SyncGrads(c) }); n != 0 {
		t.Errorf("float64 SyncGrads allocates %v times", n)
	}
}
