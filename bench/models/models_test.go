package models

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

// Batches filled with random one-hot labels and inputs.
func cnnBatch() (x [256][12][12][1]float32, y [256][4]float32) {
	r := rand.New(rand.NewPCG(1, 1))
	for i := range x {
		for a := range x[i] {
			for b := range x[i][a] {
				x[i][a][b][0] = r.Float32()
			}
		}
		y[i][r.IntN(4)] = 1
	}
	return
}

func revBatch() (x, y [256][8][10]float32) {
	r := rand.New(rand.NewPCG(2, 2))
	for i := range x {
		for p := range 8 {
			t := r.IntN(10)
			x[i][p][t] = 1
			y[i][7-p][t] = 1
		}
	}
	return
}

// TestThreadsBitIdentical: three training steps leave the same parameter
// bits on 1, 2 and 4 threads, and TrainStep allocates nothing.
func TestThreadsBitIdentical(t *testing.T) {
	cx, cy := cnnBatch()
	rx, ry := revBatch()
	var want [2][]byte
	for _, th := range []int{1, 2, 4} {
		p := rt.NewPool(th)
		c, r := new(CNN), new(Reverser)
		c.Init(1)
		r.Init(1)
		c.Pool, r.Pool = p, p
		for range 3 {
			c.TrainStep(&cx, &cy)
			r.TrainStep(&rx, &ry)
		}
		if n := testing.AllocsPerRun(2, func() { c.TrainStep(&cx, &cy); r.TrainStep(&rx, &ry) }); n != 0 {
			t.Errorf("%d threads: %v allocs per pair of TrainSteps", th, n)
		}
		p.Close()
		for i, m := range []interface{ MarshalBinary() ([]byte, error) }{c, r} {
			got, err := m.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if th == 1 {
				want[i] = got
			} else if !bytes.Equal(got, want[i]) {
				t.Errorf("%d threads: model %d's parameters differ from 1 thread's", th, i)
			}
		}
	}
}

// TestBackwardClears: Backward run twice on the same batch gives the
// same gradients, on 1 and 2 threads (the gradients and the scratch
// gradient arrays are cleared, in parts on the pool, before each pass:
// a clear lost or run out of order would add the first pass's values).
func TestBackwardClears(t *testing.T) {
	cx, cy := cnnBatch()
	rx, ry := revBatch()
	for _, th := range []int{1, 2} {
		p := rt.NewPool(th)
		c, r := new(CNN), new(Reverser)
		c.Init(1)
		r.Init(1)
		c.Pool, r.Pool = p, p
		c.Backward(&cx, &cy)
		r.Backward(&rx, &ry)
		cg, rg := c.Grads, r.Grads
		c.Backward(&cx, &cy)
		r.Backward(&rx, &ry)
		if c.Grads != cg {
			t.Errorf("%d threads: CNN: the second Backward's gradients differ from the first's", th)
		}
		if r.Grads != rg {
			t.Errorf("%d threads: Reverser: the second Backward's gradients differ from the first's", th)
		}
		if c.Grads == (ocannlCNNParams{}) || r.Grads == (ocannlReverserParams{}) {
			t.Errorf("%d threads: all-zero gradients", th)
		}
		p.Close()
	}
}

// BenchmarkTrainStep times the two demos' training steps on pools of 1
// and 2 threads (profile a step with -cpuprofile; bench -scaling makes
// the interleaved comparison of docs/benchmarks.md).
func BenchmarkTrainStep(b *testing.B) {
	cx, cy := cnnBatch()
	rx, ry := revBatch()
	for _, th := range []int{1, 2} {
		p := rt.NewPool(th)
		b.Run("CNN/threads="+string(rune('0'+th)), func(b *testing.B) {
			c := new(CNN)
			c.Init(1)
			c.Pool = p
			for b.Loop() {
				c.TrainStep(&cx, &cy)
			}
		})
		b.Run("attention/threads="+string(rune('0'+th)), func(b *testing.B) {
			r := new(Reverser)
			r.Init(1)
			r.Pool = p
			for b.Loop() {
				r.TrainStep(&rx, &ry)
			}
		})
		p.Close()
	}
}
