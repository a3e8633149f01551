package main

import (
	"bytes"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/ocannlgen/ocannlgen/examples/internal/demo"
)

// TestDemo runs the demo as `go run ./examples/attention` does, with 300
// steps instead of 600 (a few seconds).
func TestDemo(t *testing.T) {
	var out bytes.Buffer
	res, err := run(&out, 300, 1)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Logf("%d steps in %v: loss %.4f, token accuracy %.1f%%, sequence accuracy %.1f%%",
		res.Steps, res.Elapsed.Round(time.Millisecond), res.Loss, 100*res.TokenAcc, 100*res.SeqAcc)
	if res.Loss > 0.5*res.Chance {
		t.Errorf("final loss %.4f, want < %.4f (half of chance ln %d)\n%s", res.Loss, 0.5*res.Chance, vocab, out.String())
	}
	if res.TokenAcc < 0.9 {
		t.Errorf("held-out token accuracy %.3f, want >= 0.9\n%s", res.TokenAcc, out.String())
	}
}

func trainBatch(step int) (x, y [batch][seqLen][vocab]float32) {
	in, out := demo.ReverseTask(batch, seqLen, vocab, uint64(100+step))
	for i := range batch {
		encode(&x[i], in[i])
		encode(&y[i], out[i])
	}
	return
}

// TestInitialLoss checks that the untrained model's loss, a mean over
// every token of the batch, is close to chance.
func TestInitialLoss(t *testing.T) {
	x, y := trainBatch(0)
	m := new(Reverser)
	m.Init(1)
	if l := float64(m.TrainLoss(&x, &y)); math.Abs(l-math.Log(vocab)) > 0.5 {
		t.Errorf("initial loss %.4f, want about ln %d = %.4f", l, vocab, math.Log(vocab))
	}
}

func TestTrainStepAllocs(t *testing.T) {
	x, y := trainBatch(0)
	m := new(Reverser)
	m.Init(1)
	if n := testing.AllocsPerRun(20, func() { m.TrainStep(&x, &y) }); n != 0 {
		t.Errorf("TrainStep: %v allocs/op, want 0", n)
	}
	var p [evalB][seqLen][vocab]float32
	if n := testing.AllocsPerRun(20, func() { m.Predict(&p) }); n != 0 {
		t.Errorf("Predict: %v allocs/op, want 0", n)
	}
}

func BenchmarkTrainStep(b *testing.B) {
	x, y := trainBatch(0)
	m := new(Reverser)
	m.Init(1)
	b.ReportAllocs()
	for b.Loop() {
		m.TrainStep(&x, &y)
	}
}

// TestGradient checks Backward against the loss: for every parameter p,
// moving p by ±eps·g (g its gradient) changes the loss by about 2·eps·|g|²,
// which covers the positional embedding's gradient, summed over the batch
// axis B it is broadcast along.
func TestGradient(t *testing.T) {
	x, y := trainBatch(1)
	m := new(Reverser)
	m.Init(3)
	for i := range 20 { // away from the initialization
		a, b := trainBatch(10 + i)
		m.TrainStep(&a, &b)
	}
	m.Backward(&x, &y)
	var gv Reverser // its parameters are m's gradients, for ParamTensors
	gv.Params = m.Grads
	grads := gv.ParamTensors()
	for k, p := range m.ParamTensors() {
		g := grads[k].Data32
		saved := append([]float32(nil), p.Data32...)
		var norm2 float64
		for _, v := range g {
			norm2 += float64(v) * float64(v)
		}
		if norm2 == 0 {
			t.Errorf("%s: zero gradient", p.Name)
			continue
		}
		eps := 1e-2 / math.Sqrt(norm2)
		shift := func(s float64) float64 {
			for i := range g {
				p.Data32[i] = saved[i] + float32(s*eps)*g[i]
			}
			return float64(m.TrainLoss(&x, &y))
		}
		fd := (shift(1) - shift(-1)) / (2 * eps)
		copy(p.Data32, saved)
		t.Logf("%-28s directional derivative %.6g, |grad|² %.6g", p.Name, fd, norm2)
		if math.Abs(fd-norm2) > 0.02*norm2+1e-6 {
			t.Errorf("%s: directional derivative %.6g, |grad|² %.6g", p.Name, fd, norm2)
		}
	}
}

// TestSaveLoad checks that a saved model predicts the same after Load.
func TestSaveLoad(t *testing.T) {
	x, y := trainBatch(2)
	m := new(Reverser)
	m.Init(5)
	m.TrainStep(&x, &y)
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		t.Fatal(err)
	}
	m2 := new(Reverser)
	if err := m2.Load(&buf); err != nil {
		t.Fatal(err)
	}
	var p [evalB][seqLen][vocab]float32
	in, _ := demo.ReverseTask(evalB, seqLen, vocab, 9)
	for i := range evalB {
		encode(&p[i], in[i])
	}
	want := *m.Predict(&p)
	got := m2.Predict(&p)
	for i := range evalB {
		for k := range seqLen {
			if !slices.Equal(got[i][k][:], want[i][k][:]) {
				t.Fatalf("sequence %d position %d: logits %v after Load, %v before", i, k, got[i][k], want[i][k])
			}
		}
	}
}
