package main

import (
	"math"
	"sync"
	"testing"

	"github.com/ocannlgen/ocannlgen/examples/internal/demo"
)

// TestRunnerConcurrent runs Predict, Classify and Score from many goroutines,
// one runner each, over one trained model, and compares every result
// with the model's own single-threaded methods. Run it with -race (.ci/run
// does) to check that runners share nothing but the read-only parameters.
func TestRunnerConcurrent(t *testing.T) {
	points, labels := demo.Moons(512, 5, 0.1)
	m := new(Moons)
	m.Init(3)
	for s := range 30 {
		x, y := batch(s, points, labels)
		m.TrainStep(&x, &y)
	}
	const batches = 4
	var in [batches][256][2]float32
	var want [batches][256][1]float32
	var wantOne [batches][1]float32
	for b := range in {
		for i := range in[b] {
			in[b][i] = points[(b*256+i*7)%len(points)]
		}
		want[b] = *m.Predict(&in[b])
		one := [1][2]float32{in[b][b]}
		wantOne[b] = m.Classify(&one)[0]
	}
	const workers, rounds = 8, 6
	var wg sync.WaitGroup
	errs := make(chan string, workers*rounds*batches)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := m.NewRunner()
			for k := range rounds * batches {
				b := (w + k) % batches
				if got := r.Predict(&in[b]); *got != want[b] {
					errs <- "Predict"
				}
				one := [1][2]float32{in[b][b]}
				if got := r.Classify(&one); got[0] != wantOne[b] {
					errs <- "Classify"
				}
				// Score's rows are chosen at run time: its first n rows are
				// Predict's, up to float rounding (Score runs kernels for
				// blocks of fewer rows and a one-row kernel, which may add
				// in another order than Predict's kernel of 256 rows).
				n := (w*37 + k*11) % 257
				got, err := r.Score(&in[b], n)
				if err != nil {
					errs <- "Score"
					continue
				}
				for i := range n {
					if d := float64(got[i][0] - want[b][i][0]); math.Abs(d) > 1e-5*math.Max(1, math.Abs(float64(want[b][i][0]))) {
						errs <- "Score"
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("a runner's %s differs from the model's", e)
	}
	// The runners only read the model: its own results are unchanged.
	if *m.Predict(&in[0]) != want[0] {
		t.Error("the model's Predict changed")
	}
}

func TestRunnerAllocs(t *testing.T) {
	m := new(Moons)
	m.Init(1)
	r := m.NewRunner()
	var p [256][2]float32
	var q [1][2]float32
	if n := testing.AllocsPerRun(100, func() { r.Predict(&p); r.Classify(&q); _, _ = r.Score(&p, 100) }); n != 0 {
		t.Errorf("runner calls: %v allocs/op, want 0", n)
	}
}
