package model

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

func TestSafetensorsRoundTrip(t *testing.T) {
	m := new(Small)
	Fit(m, 10)
	names := map[string]string{"net.w1": "fc1.weight", "net.b1": "fc1.bias"}
	var b bytes.Buffer
	if err := m.SaveSafetensors(&b, &rt.SafetensorsOptions{Names: names}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b.Bytes(), []byte(`"fc1.weight"`)) || !bytes.Contains(b.Bytes(), []byte(`"net.w2"`)) {
		t.Errorf("the file's names: %.300s", b.Bytes()[8:])
	}
	n := new(Small)
	n.Init(2)
	if err := n.LoadSafetensors(bytes.NewReader(b.Bytes()), &rt.SafetensorsOptions{Names: names}); err != nil {
		t.Fatal(err)
	}
	if n.Params != m.Params {
		t.Error("parameters differ after SaveSafetensors/LoadSafetensors")
	}
	// Without the names, the renamed tensors are missing and extra.
	n.Init(2)
	before := n.Params
	err := n.LoadSafetensors(bytes.NewReader(b.Bytes()), nil)
	if !errors.Is(err, rt.ErrMissing) || !errors.Is(err, rt.ErrExtra) || n.Params != before {
		t.Errorf("loading renamed tensors without Names: %v (parameters changed: %v)", err, n.Params != before)
	}
}

// TestSafetensorsShapeMismatch: Wide's parameters have Small's names and
// other shapes (all but net.b3): loading them lists every mismatching
// tensor and leaves Small unchanged.
func TestSafetensorsShapeMismatch(t *testing.T) {
	w := new(Wide)
	w.Init(1)
	var b bytes.Buffer
	if err := w.SaveSafetensors(&b, nil); err != nil {
		t.Fatal(err)
	}
	s := new(Small)
	s.Init(1)
	before := s.Params
	err := s.LoadSafetensors(&b, nil)
	if err == nil {
		t.Fatal("Wide's parameters loaded into Small")
	}
	var got []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var se *rt.ShapeError
		if !errors.As(e, &se) {
			t.Errorf("not a shape error: %v", e)
			continue
		}
		got = append(got, se.Name)
	}
	slices.Sort(got)
	if want := []string{"net.b1", "net.b2", "net.w1", "net.w2", "net.w3"}; !slices.Equal(got, want) {
		t.Errorf("mismatches %v, want %v:\n%v", got, want, err)
	}
	if !strings.Contains(err.Error(), "[8 3]") || !strings.Contains(err.Error(), "[64 3]") {
		t.Errorf("the error does not give both shapes: %v", err)
	}
	if s.Params != before {
		t.Error("the failed load changed the parameters")
	}
}

// TestSafetensorsTorchLinear loads weights laid out as PyTorch's
// nn.Linear stores them (weight [out][in], bias [out]) under PyTorch
// names and checks Predict against the network computed by hand from
// those arrays: an `in -> out` parameter's memory order is [out][in].
func TestSafetensorsTorchLinear(t *testing.T) {
	sizes := [][2]int{{8, 3}, {8, 8}, {2, 8}} // [out][in] of fc1, fc2, fc3
	var ts []rt.Tensor
	weights := make([][]float32, 3)
	biases := make([][]float32, 3)
	for l, sz := range sizes {
		weights[l] = make([]float32, sz[0]*sz[1])
		for k := range weights[l] {
			weights[l][k] = float32(math.Sin(float64(7*l+k))) / 2
		}
		biases[l] = make([]float32, sz[0])
		for k := range biases[l] {
			biases[l][k] = float32(k%3) / 10
		}
		name := "fc" + string(rune('1'+l))
		ts = append(ts, rt.Tensor{Name: name + ".weight", Dims: []int{sz[0], sz[1]}, Data32: weights[l]},
			rt.Tensor{Name: name + ".bias", Dims: []int{sz[0]}, Data32: biases[l]})
	}
	var b bytes.Buffer
	if err := rt.SaveSafetensors(&b, ts, nil); err != nil {
		t.Fatal(err)
	}
	m := new(Small)
	opt := &rt.SafetensorsOptions{Names: map[string]string{
		"net.w1": "fc1.weight", "net.b1": "fc1.bias", "net.w2": "fc2.weight", "net.b2": "fc2.bias", "net.w3": "fc3.weight", "net.b3": "fc3.bias"}}
	if err := m.LoadSafetensors(&b, opt); err != nil {
		t.Fatal(err)
	}
	p := [1][3]float32{{0.3, -0.7, 1.1}}
	got := m.Predict(&p)
	h := p[0][:]
	for l, sz := range sizes {
		next := make([]float32, sz[0])
		for o := range sz[0] {
			s := biases[l][o]
			for i := range sz[1] {
				s += weights[l][o*sz[1]+i] * h[i]
			}
			if l < 2 {
				s = max(s, 0)
			}
			next[o] = s
		}
		h = next
	}
	for o := range 2 {
		if math.Abs(float64(got[0][o]-h[o])) > 1e-5 {
			t.Errorf("output %d: Predict %v, by hand from the PyTorch layout %v", o, got[0][o], h[o])
		}
	}
}
