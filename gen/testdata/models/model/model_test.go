package model

import (
	"errors"
	"math"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

func TestFit(t *testing.T) {
	first, last := Fit(new(Small), 200)
	if !(last < first/10) {
		t.Errorf("loss %v -> %v: training does not work", first, last)
	}
}

// TestUnrelatedParameter: adding a parameter does not change the initial
// values of the others (they are keyed by identity, not by position).
func TestUnrelatedParameter(t *testing.T) {
	var s Small
	var b Bigger
	s.Init(42)
	b.Init(42)
	if s.Params.NetW1 != b.Params.NetW1 || s.Params.NetW2 != b.Params.NetW2 || s.Params.NetW3 != b.Params.NetW3 {
		t.Error("net's weights differ between Small and Bigger")
	}
	var s2 Small
	s2.Init(43)
	if s2.Params.NetW1 == s.Params.NetW1 {
		t.Error("the seed does not change the weights")
	}
}

func TestSaveLoad(t *testing.T) {
	m := new(Small)
	Fit(m, 10)
	n, err := RoundTrip(m)
	if err != nil {
		t.Fatal(err)
	}
	if n.Params != m.Params {
		t.Error("parameters differ after Save/Load")
	}
	var b Bigger
	b.Init(1)
	data, err := b.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.UnmarshalBinary(data); err == nil {
		t.Error("loading Bigger's parameters into Small succeeded")
	}
	own, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.UnmarshalBinary(append(own, 0)); !errors.Is(err, rt.ErrTrailingData) {
		t.Errorf("UnmarshalBinary with a trailing byte: %v, want rt.ErrTrailingData", err)
	}
	_ = math.Abs
}

func TestAllocs(t *testing.T) {
	m := new(Small)
	m.Init(3)
	var x [4][3]float32
	var y [4][2]float32
	if n := testing.AllocsPerRun(50, func() { m.TrainStep(&x, &y) }); n != 0 {
		t.Errorf("TrainStep allocates %v times", n)
	}
}
