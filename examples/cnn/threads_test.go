package main

import (
	"bytes"
	"math"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

// threadRun trains a model on its own pool of the given threads and
// returns its saved parameters, the losses and a prediction.
func threadRun(t *testing.T, threads int) ([]byte, []float32, *[evalB][classes]float32) {
	t.Helper()
	x, y := testBatch()
	var p [evalB]image
	for i := range p {
		p[i] = x[i%batch]
	}
	m := new(CNN)
	m.Init(3)
	m.Pool = rt.NewPool(threads)
	defer m.Pool.Close()
	var losses []float32
	for range 4 {
		losses = append(losses, m.TrainStep(&x, &y))
	}
	pred := *m.Predict(&p)
	data, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// Allocation-free on several threads too (the first calls above
	// filled the task record lists).
	if n := testing.AllocsPerRun(5, func() { m.TrainStep(&x, &y) }); n != 0 {
		t.Errorf("%d threads: TrainStep %v allocs/op, want 0", threads, n)
	}
	if n := testing.AllocsPerRun(5, func() { m.Predict(&p) }); n != 0 {
		t.Errorf("%d threads: Predict %v allocs/op, want 0", threads, n)
	}
	return data, losses, &pred
}

// TestThreadsBitIdentical: training and prediction give the same bits on
// 1, 2 and 4 threads (the parallel nests split their loops into parts
// fixed by the generator). Run it under -race too.
func TestThreadsBitIdentical(t *testing.T) {
	data1, losses1, pred1 := threadRun(t, 1)
	for _, th := range []int{2, 4} {
		data, losses, pred := threadRun(t, th)
		for i := range losses {
			if math.Float32bits(losses[i]) != math.Float32bits(losses1[i]) {
				t.Errorf("%d threads: step %d loss %v, 1 thread %v", th, i, losses[i], losses1[i])
			}
		}
		if !bytes.Equal(data, data1) {
			t.Errorf("%d threads: parameters after training differ from 1 thread's", th)
		}
		for i := range pred {
			for c := range pred[i] {
				if math.Float32bits(pred[i][c]) != math.Float32bits(pred1[i][c]) {
					t.Fatalf("%d threads: prediction [%d][%d] = %v, 1 thread %v", th, i, c, pred[i][c], pred1[i][c])
				}
			}
		}
	}
}
