package main

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/examples/internal/demo"
	"github.com/ocannlgen/ocannlgen/examples/moons/handwritten"
	"github.com/ocannlgen/ocannlgen/rt/cuda"
)

// TestDemo runs the demo as the README command does, with fewer steps.
func TestDemo(t *testing.T) {
	var out bytes.Buffer
	png := filepath.Join(t.TempDir(), "moons.png")
	acc, err := run(&out, 1200, 42, png, false)
	if err != nil {
		t.Fatal(err)
	}
	if acc < 0.95 {
		t.Errorf("held-out accuracy %.3f, want >= 0.95\n%s", acc, out.String())
	}
}

// TestGPUFallback: -gpu in a binary without the GPU path (no cuda tag, or
// no GPU) says why and trains on the CPU.
func TestGPUFallback(t *testing.T) {
	if cuda.Available {
		if d, err := cuda.Open(); err == nil {
			d.Close()
			t.Skip("a GPU is available")
		}
	}
	var out bytes.Buffer
	if _, err := run(&out, 20, 42, "", true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "GPU path unavailable, training on the CPU: cuda: ") {
		t.Errorf("no fallback message:\n%s", out.String())
	}
}

func batch(step int, points [][2]float32, labels []float32) (x [32][2]float32, y [32][1]float32) {
	for i := range x {
		k := (step*32 + i) % len(points)
		x[i] = points[k]
		y[i][0] = labels[k]
	}
	return
}

func TestTrainStepAllocs(t *testing.T) {
	points, labels := demo.Moons(64, 1, 0.1)
	x, y := batch(0, points, labels)
	m := new(Moons)
	m.Init(1)
	if n := testing.AllocsPerRun(100, func() { m.TrainStep(&x, &y) }); n != 0 {
		t.Errorf("TrainStep: %v allocs/op, want 0", n)
	}
	var p [256][2]float32
	if n := testing.AllocsPerRun(100, func() { m.Predict(&p) }); n != 0 {
		t.Errorf("Predict: %v allocs/op, want 0", n)
	}
}

// TestMatchesHandwritten checks the generated forward pass, gradients and
// SGD step against the independent hand-written network, starting from the
// same parameters.
func TestMatchesHandwritten(t *testing.T) {
	points, labels := demo.Moons(256, 3, 0.1)
	m := new(Moons)
	m.Init(7)
	var h handwritten.Net
	copyParams(&h.P, &m.Params)
	for step := 0; step < 50; step++ {
		x, y := batch(step, points, labels)
		lr := float32(m.LearningRate())
		got := m.TrainStep(&x, &y)
		want := h.TrainStep(&x, &y, lr, 0.9, 0.0001)
		if math.Abs(float64(got-want)) > 1e-4*math.Max(1, math.Abs(float64(want))) {
			t.Fatalf("step %d: loss %v, hand-written %v", step, got, want)
		}
	}
	var hp handwritten.Params
	copyParams(&hp, &m.Params)
	d := 0.0
	for o := 0; o < 16; o++ {
		for i := 0; i < 2; i++ {
			d = math.Max(d, math.Abs(float64(hp.W1[o][i]-h.P.W1[o][i])))
		}
		for i := 0; i < 16; i++ {
			d = math.Max(d, math.Abs(float64(hp.W2[o][i]-h.P.W2[o][i])))
		}
		d = math.Max(d, math.Abs(float64(hp.W3[0][o]-h.P.W3[0][o])))
	}
	if d > 1e-3 {
		t.Errorf("parameters drifted apart after 50 steps: max |diff| %g", d)
	}
}

// copyParams converts the generated flat parameters to the hand-written
// layout (both are output-major: w[o][i]).
func copyParams(dst *handwritten.Params, p *ocannlMoonsParams) {
	for o := 0; o < 16; o++ {
		for i := 0; i < 2; i++ {
			dst.W1[o][i] = p.NetW1[o*2+i]
		}
		dst.B1[o] = p.NetB1[o]
		for i := 0; i < 16; i++ {
			dst.W2[o][i] = p.NetW2[o*16+i]
		}
		dst.B2[o] = p.NetB2[o]
		dst.W3[0][o] = p.NetW3[o]
	}
	dst.B3[0] = p.NetB3[0]
}

// BenchmarkTrainStep compares, in one run, the generated training step
// with the hand-written Go implementation of the same network.
func BenchmarkTrainStep(b *testing.B) {
	points, labels := demo.Moons(1024, 1, 0.1)
	x, y := batch(0, points, labels)
	b.Run("generated", func(b *testing.B) {
		m := new(Moons)
		m.Init(1)
		b.ReportAllocs()
		for b.Loop() {
			m.TrainStep(&x, &y)
		}
	})
	b.Run("handwritten", func(b *testing.B) {
		var h handwritten.Net
		h.Init(1)
		b.ReportAllocs()
		for b.Loop() {
			h.TrainStep(&x, &y, 0.1, 0.9, 0.0001)
		}
	})
}

// TestScoreMatchesPredict checks the entry with run-time rows: for n
// points its scores are the fixed-batch Predict's first n, for n from 0 to
// the bound (at the bound, bit for bit), without allocating; 257 points is
// an error.
func TestScoreMatchesPredict(t *testing.T) {
	points, _ := demo.Moons(256, 4, 0.1)
	m := new(Moons)
	m.Init(3)
	var p [256][2]float32
	copy(p[:], points)
	want := *m.Predict(&p)
	for _, n := range []int{0, 1, 37, 255, 256} {
		got, err := m.Score(&p, n)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		for i := range n {
			if d := math.Abs(float64(got[i][0] - want[i][0])); d > 1e-6*math.Max(1, math.Abs(float64(want[i][0]))) {
				t.Errorf("n=%d: point %d scores %v, Predict %v", n, i, got[i][0], want[i][0])
			}
		}
	}
	// All 256 rows run Score's kernel for a block of 256 rows, Predict's
	// code: the same bits.
	if got, _ := m.Score(&p, 256); *got != want {
		t.Error("Score of 256 points differs from Predict")
	}
	if _, err := m.Score(&p, 257); err == nil {
		t.Error("Score(257 points): no error")
	}
	if a := testing.AllocsPerRun(50, func() { _, _ = m.Score(&p, 100) }); a != 0 {
		t.Errorf("Score: %v allocs/op, want 0", a)
	}
}
