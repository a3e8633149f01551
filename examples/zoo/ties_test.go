package zoo

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// lenetTies is testdata/lenetties/lenetties.json, written by make.py
// there: PyTorch's float64 twin of LeNet on images whose zero background
// makes most max-pool windows tie.
type lenetTies struct {
	Torch      string               `json:"torch"`
	Images     []float64            `json:"images"`
	Labels     []float64            `json:"labels"`
	Params     map[string][]float64 `json:"params"`
	Loss       float64              `json:"loss"`
	Grads      map[string][]float64 `json:"grads"`
	TieGrads   map[string][]float64 `json:"tie_grads"`
	StepLosses []float64            `json:"step_losses"`
	After      map[string][]float64 `json:"params_after_3_steps"`
}

// TestLeNetTiesMatchPyTorch (issue 27): with most pool windows tied, the
// generated LeNet's loss, every parameter gradient, and the parameters
// after three SGD steps equal PyTorch's (max_pool2d's first-winner rule)
// to 1e-12, relative to max(1, |value|). The fixture also holds the
// gradients under the former all-ties rule; the test first checks that
// they differ from PyTorch's, so that it would catch that rule.
func TestLeNetTiesMatchPyTorch(t *testing.T) {
	const tol = 1e-12
	data, err := os.ReadFile(filepath.Join("testdata", "lenetties", "lenetties.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fx lenetTies
	if err := json.Unmarshal(data, &fx); err != nil {
		t.Fatal(err)
	}
	worst := func(a, b []float64) float64 {
		w := 0.0
		for i := range a {
			w = math.Max(w, math.Abs(a[i]-b[i])/math.Max(1, math.Abs(b[i])))
		}
		return w
	}
	if d := worst(fx.TieGrads["NetConv2dValid1Bias"], fx.Grads["NetConv2dValid1Bias"]); d < 0.1 {
		t.Fatalf("the fixture's all-ties conv1 bias gradient is within %g of PyTorch's: it has too few ties to test the rule", d)
	}

	m := new(LeNet)
	params := reflect.ValueOf(&m.Params).Elem()
	grads := reflect.ValueOf(&m.Grads).Elem()
	field := func(v reflect.Value, name string) []float64 {
		f := v.FieldByName(name)
		if !f.IsValid() {
			t.Fatalf("the generated model has no field %s", name)
		}
		return flat(f)
	}
	for name, vs := range fx.Params {
		d := field(params, name)
		if len(d) != len(vs) {
			t.Fatalf("%s: %d values in the fixture, %d in the model", name, len(vs), len(d))
		}
		copy(d, vs)
	}
	var images [4][14][14][1]float64
	var labels [4][3]float64
	copy(flat(reflect.ValueOf(&images).Elem()), fx.Images)
	copy(flat(reflect.ValueOf(&labels).Elem()), fx.Labels)

	loss := m.Backward(&images, &labels)
	if d := worst([]float64{loss}, []float64{fx.Loss}); d > tol {
		t.Errorf("loss %.17g, PyTorch %.17g", loss, fx.Loss)
	}
	for name, want := range fx.Grads {
		if d := worst(field(grads, name), want); d > tol {
			t.Errorf("%s's gradient: relative error %.3g against PyTorch (torch %s)", name, d, fx.Torch)
		}
	}

	m2 := new(LeNet)
	p2 := reflect.ValueOf(&m2.Params).Elem()
	for name, vs := range fx.Params {
		copy(field(p2, name), vs)
	}
	for s, want := range fx.StepLosses {
		if l := m2.TrainStep(&images, &labels); math.Abs(l-want) > tol*math.Max(1, math.Abs(want)) {
			t.Errorf("step %d: loss %.17g, PyTorch %.17g", s+1, l, want)
		}
	}
	for name, want := range fx.After {
		if d := worst(field(p2, name), want); d > tol {
			t.Errorf("%s after 3 SGD steps: relative error %.3g against PyTorch", name, d)
		}
	}
}
