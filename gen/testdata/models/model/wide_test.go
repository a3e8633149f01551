package model

import (
	"math"
	"testing"
)

func wideData() (x *[512][3]float32, y *[512][2]float32, p *[1024][3]float32) {
	x, y, p = new([512][3]float32), new([512][2]float32), new([1024][3]float32)
	for i := range p {
		for j := range p[i] {
			p[i][j] = float32((i*7+j*5)%17)/17 - 0.4
		}
	}
	for i := range x {
		x[i] = p[i]
		y[i] = [2]float32{x[i][0] - x[i][1], x[i][2] * 0.5}
	}
	return x, y, p
}

// TestWideScratch: the kernels with scratch structs give the results of
// the kernel without one, and the same results when called again on the
// garbage their previous call left (the scratch is not zeroed between
// calls: what the program reads or accumulates into before writing must
// be cleared by the kernel).
func TestWideScratch(t *testing.T) {
	x, y, p := wideData()
	m := new(Wide)
	m.Init(5)
	out := *m.Predict(p)
	for _, i := range []int{0, 1, 511, 1023} {
		q := [1][3]float32{p[i]}
		one := m.One(&q)
		for j := range 2 {
			if d := math.Abs(float64(one[0][j] - out[i][j])); d > 1e-5 {
				t.Errorf("Predict row %d, output %d: %v; One: %v", i, j, out[i][j], one[0][j])
			}
		}
	}
	l1 := m.Backward(x, y)
	g1 := m.Grads
	m.TrainLoss(x, y) // leaves its own garbage in its scratch
	if again := *m.Predict(p); again != out {
		t.Error("a second Predict differs from the first")
	}
	if l2 := m.Backward(x, y); l2 != l1 || m.Grads != g1 {
		t.Errorf("a second Backward differs from the first: loss %v, then %v", l1, l2)
	}
	if l := m.TrainLoss(x, y); math.Abs(float64(l-l1)) > 1e-4*math.Abs(float64(l1)) {
		t.Errorf("Train: loss %v, Backward: %v", l, l1)
	}
	first := m.TrainStep(x, y)
	for range 20 {
		m.TrainStep(x, y)
	}
	if last := m.TrainLoss(x, y); !(last < first) {
		t.Errorf("loss %v -> %v: training does not work", first, last)
	}
}

func TestWideAllocs(t *testing.T) {
	x, y, p := wideData()
	m := new(Wide)
	m.Init(3)
	if n := testing.AllocsPerRun(5, func() { m.Predict(p) }); n != 0 {
		t.Errorf("Predict allocates %v times", n)
	}
	if n := testing.AllocsPerRun(5, func() { m.TrainStep(x, y) }); n != 0 {
		t.Errorf("TrainStep allocates %v times", n)
	}
}

// TestWideRunners: runners (Predict with a scratch struct, One without)
// used from concurrent goroutines give the model's own results, and do
// not allocate.
func TestWideRunners(t *testing.T) {
	x, y, p := wideData()
	m := new(Wide)
	m.Init(5)
	for range 3 {
		m.TrainStep(x, y)
	}
	want := *m.Predict(p)
	q := [1][3]float32{p[17]}
	wantOne := *m.One(&q)
	done := make(chan bool)
	for range 4 {
		go func() {
			r := m.NewRunner()
			ok := true
			for range 3 {
				ok = ok && *r.Predict(p) == want
				q := [1][3]float32{p[17]}
				ok = ok && *r.One(&q) == wantOne
			}
			done <- ok
		}()
	}
	for range 4 {
		if !<-done {
			t.Error("a runner's result differs from the model's")
		}
	}
	r := m.NewRunner()
	if n := testing.AllocsPerRun(5, func() { r.Predict(p); r.One(&q) }); n != 0 {
		t.Errorf("runner calls allocate %v times", n)
	}
}
