package main

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

// TestDemo trains on the repository's docs as `go run ./examples/charlm`
// does, for 150 steps instead of 1500, and checks that the held-out loss
// is already below the unigram baseline (the model uses context).
func TestDemo(t *testing.T) {
	data, err := load("../../docs")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err := run(&out, data, 150, 1, 40)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Logf("%d steps in %v: training loss %.3f, held-out %.3f, unigram %.3f", res.Steps, res.Elapsed, res.TrainLoss, res.ValLoss, res.Unigram)
	if res.ValLoss >= res.Unigram {
		t.Errorf("held-out loss %.3f is not below the unigram baseline %.3f\n%s", res.ValLoss, res.Unigram, out.String())
	}
	if len(res.Sample) != 40 {
		t.Errorf("sample of %d bytes, want 40", len(res.Sample))
	}
}

// TestInitialLoss checks the untrained model: with the standard layers'
// initialization its loss is within 10% of ln 128, a uniform guess.
func TestInitialLoss(t *testing.T) {
	m := new(CharLM)
	m.Init(1)
	var x, y [Batch][Context]int32
	for i := range Batch {
		for j := range Context {
			x[i][j], y[i][j] = int32((7*i+j)%Vocab), int32((3*i+5*j)%Vocab)
		}
	}
	l, err := m.TrainLoss(&x, &y, causalMask())
	if err != nil {
		t.Fatal(err)
	}
	if want := math.Log(Vocab); math.Abs(float64(l)-want) > 0.1*want {
		t.Errorf("initial loss %.3f, want within 10%% of ln %d = %.3f", l, Vocab, want)
	}
}

// TestBadToken checks that a token id out of range is an *rt.IndexError
// and that TrainStep then changes nothing.
func TestBadToken(t *testing.T) {
	m := new(CharLM)
	m.Init(1)
	before := m.Params
	var x, y [Batch][Context]int32
	y[3][5] = Vocab
	_, err := m.TrainStep(&x, &y, causalMask())
	var ie *rt.IndexError
	if !errors.As(err, &ie) || ie.Input != "targets" || ie.Value != Vocab {
		t.Fatalf("TrainStep error %v, want an *rt.IndexError for targets", err)
	}
	if m.Params != before || m.Step != 0 {
		t.Fatal("a failed TrainStep changed the model")
	}
}

// BenchmarkTrainStep is one training step of the demo's model (process
// CPU time is what matters on a shared host). It does not allocate.
func BenchmarkTrainStep(b *testing.B) {
	m := new(CharLM)
	m.Init(1)
	mask := causalMask()
	var x, y [Batch][Context]int32
	for i := range Batch {
		for j := range Context {
			x[i][j], y[i][j] = int32((7*i+j)%Vocab), int32((3*i+5*j)%Vocab)
		}
	}
	if _, err := m.TrainStep(&x, &y, mask); err != nil { // starts the pool
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.TrainStep(&x, &y, mask); err != nil {
			b.Fatal(err)
		}
	}
}
