package main

import (
	"sync"
	"testing"
)

// TestRunnerConcurrent runs Predict (whose kernel keeps its activations
// in a scratch struct) from several goroutines, one runner each, over one
// trained model and compares every result with the model's own
// single-threaded Predict. Run it with -race (.ci/run does).
func TestRunnerConcurrent(t *testing.T) {
	x, y := testBatch()
	m := trainedModel(1, &x, &y)
	imgs, _, _ := glyphs(2*evalB, testSeed)
	var in [2][evalB]image
	var want [2][evalB][classes]float32
	for b := range in {
		copy(in[b][:], imgs[b*evalB:])
		want[b] = *m.Predict(&in[b])
	}
	const workers, rounds = 4, 2
	var wg sync.WaitGroup
	bad := make([]bool, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := m.NewRunner()
			for k := range rounds * len(in) {
				b := (w + k) % len(in)
				if *r.Predict(&in[b]) != want[b] {
					bad[w] = true
				}
			}
		}()
	}
	wg.Wait()
	for w, b := range bad {
		if b {
			t.Errorf("runner %d: Predict differs from the model's", w)
		}
	}
}

func TestRunnerAllocs(t *testing.T) {
	var p [evalB]image
	m := new(CNN)
	m.Init(1)
	r := m.NewRunner()
	if n := testing.AllocsPerRun(5, func() { r.Predict(&p) }); n != 0 {
		t.Errorf("runner Predict: %v allocs/op, want 0", n)
	}
}
