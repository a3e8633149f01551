package zoo

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// resnetBN is testdata/resnetbn/resnetbn.json, written by make.py there:
// PyTorch's float64 twin of ResNetBN.
type resnetBN struct {
	Torch  string               `json:"torch"`
	Params map[string][]float64 `json:"params"`
	Steps  []struct {
		Images []float64            `json:"images"`
		Labels []int32              `json:"labels"`
		Loss   float64              `json:"loss"`
		Grads  map[string][]float64 `json:"grads"`
	} `json:"steps"`
	After      map[string][]float64 `json:"after"`
	EvalImages []float64            `json:"eval_images"`
	EvalLogits []float64            `json:"eval_logits"`
}

// TestResNetBNMatchesPyTorch: the generated residual network with batch
// norm equals its PyTorch twin (nn.BatchNorm2d in train and eval mode) to
// 1e-12 relative to max(1, |value|): the loss of 3 SGD steps with
// momentum, every parameter gradient of the first, every parameter and
// running statistic (and num_batches_tracked) after them, and the logits
// in evaluation mode, which use the running statistics.
func TestResNetBNMatchesPyTorch(t *testing.T) {
	const tol = 1e-12
	data, err := os.ReadFile(filepath.Join("testdata", "resnetbn", "resnetbn.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fx resnetBN
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
	m := new(ResNetBN)
	m.Init(1)
	field := func(v reflect.Value, name string) []float64 {
		f := v.FieldByName(name)
		if !f.IsValid() {
			t.Fatalf("the generated model has no field %s", name)
		}
		return flat(f)
	}
	params, grads := reflect.ValueOf(&m.Params).Elem(), reflect.ValueOf(&m.Grads).Elem()
	for name, vs := range fx.Params {
		d := field(params, name)
		if len(d) != len(vs) {
			t.Fatalf("%s: %d values in the fixture, %d in the model", name, len(vs), len(d))
		}
		copy(d, vs)
	}
	var images [4][4][4][2]float64
	for s, st := range fx.Steps {
		copy(flat(reflect.ValueOf(&images).Elem()), st.Images)
		var labels [4]int32
		copy(labels[:], st.Labels)
		l, err := m.TrainStep(&images, &labels)
		if err != nil {
			t.Fatal(err)
		}
		if d := worst([]float64{l}, []float64{st.Loss}); d > tol {
			t.Errorf("step %d: loss %.17g, PyTorch %.17g", s+1, l, st.Loss)
		}
		for name, want := range st.Grads {
			if d := worst(field(grads, name), want); d > tol {
				t.Errorf("step %d: %s's gradient: relative error %.3g against PyTorch (torch %s)", s+1, name, d, fx.Torch)
			}
		}
	}
	for name, want := range fx.After {
		if d := worst(field(params, name), want); d > tol {
			t.Errorf("%s after 3 steps: relative error %.3g against PyTorch", name, d)
		}
	}
	copy(flat(reflect.ValueOf(&images).Elem()), fx.EvalImages)
	got := m.Predict(&images)
	if d := worst(flat(reflect.ValueOf(got).Elem()), fx.EvalLogits); d > tol {
		t.Errorf("eval logits: relative error %.3g against PyTorch", d)
	}
}
