package model

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"reflect"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

// torchGeluNames maps TorchGelu's parameters to PyTorch's.
var torchGeluNames = map[string]string{"l1.w": "fc1.weight", "l1.b": "fc1.bias", "l2.w": "fc2.weight", "l2.b": "fc2.bias", "l3.w": "fc3.weight", "l3.b": "fc3.bias"}

// torchGeluFixture is testdata/torchgelu's inputs, targets, and
// PyTorch's float64 loss and gradients.
type torchGeluFixture struct {
	X, Y  []float64
	Loss  float64
	Grads map[string][]float64
}

// loadTorchGelu is TorchGelu with PyTorch's parameters, and the fixture.
func loadTorchGelu(t *testing.T) (*TorchGelu, torchGeluFixture) {
	t.Helper()
	var fx torchGeluFixture
	state, err := os.ReadFile("testdata/torchgelu/torchgelu.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/torchgelu/torchgelu.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	m := new(TorchGelu)
	if err := m.LoadSafetensors(bytes.NewReader(state), &rt.SafetensorsOptions{Names: torchGeluNames, Layout: rt.LayoutPyTorch}); err != nil {
		t.Fatal(err)
	}
	return m, fx
}

// TestTorchGelu: the erf GELU and its tanh approximation, inside a small
// network, give PyTorch's loss and every parameter gradient (PyTorch's
// own float64 autograd, testdata/torchgelu) to 1e-12 relative.
func TestTorchGelu(t *testing.T) {
	m, fx := loadTorchGelu(t)
	var x [4][3]float64
	var y [4][2]float64
	for i := range 4 {
		for j := range 3 {
			x[i][j] = fx.X[3*i+j]
		}
		for j := range 2 {
			y[i][j] = fx.Y[2*i+j]
		}
	}
	if l := m.Backward(&x, &y); math.Abs(l-fx.Loss) > 1e-12*math.Abs(fx.Loss) {
		t.Errorf("loss %.17g, PyTorch %.17g", l, fx.Loss)
	}
	ps, gs := m.ParamTensors(), arrays(m.Grads)
	checked := 0
	for i, p := range ps {
		want := fx.Grads[torchGeluNames[p.Name]]
		got := gs[i]
		if len(want) != len(got) {
			t.Fatalf("%s: %d gradient cells, PyTorch %d", p.Name, len(got), len(want))
		}
		for k := range want {
			if math.Abs(got[k]-want[k]) > 1e-12*(1e-3+math.Abs(want[k])) {
				t.Errorf("%s gradient [%d] = %.17g, PyTorch %.17g", p.Name, k, got[k], want[k])
			}
		}
		checked++
	}
	if checked != 6 {
		t.Errorf("%d parameters checked, want 6", checked)
	}
}

// TestTorchGeluF32: TorchGelu's network in float32, with the float64
// parameters rounded to float32 and the same inputs, gives PyTorch's
// float64 loss to 1e-5 relative and every parameter gradient to 1e-5
// (1e-3 + |g|): the float32 tolerance (float32 rounding of the
// parameters, inputs and products; gelu within 9 ulps, docs/design.md).
func TestTorchGeluF32(t *testing.T) {
	m64, fx := loadTorchGelu(t)
	var m TorchGeluF32
	src, dst := reflect.ValueOf(&m64.Params).Elem(), reflect.ValueOf(&m.Params).Elem()
	for i := range src.NumField() {
		for k := range src.Field(i).Len() {
			dst.Field(i).Index(k).SetFloat(src.Field(i).Index(k).Float())
		}
	}
	var x [4][3]float32
	var y [4][2]float32
	for i := range 4 {
		for j := range 3 {
			x[i][j] = float32(fx.X[3*i+j])
		}
		for j := range 2 {
			y[i][j] = float32(fx.Y[2*i+j])
		}
	}
	const tol = 1e-5
	if l := float64(m.Backward(&x, &y)); math.Abs(l-fx.Loss) > tol*math.Abs(fx.Loss) {
		t.Errorf("loss %.9g, PyTorch %.17g", l, fx.Loss)
	}
	ps, gs := m.ParamTensors(), arrays(m.Grads)
	worst := 0.0
	for i, p := range ps {
		want := fx.Grads[torchGeluNames[p.Name]]
		got := gs[i]
		if len(want) != len(got) {
			t.Fatalf("%s: %d gradient cells, PyTorch %d", p.Name, len(got), len(want))
		}
		for k := range want {
			e := math.Abs(got[k]-want[k]) / (1e-3 + math.Abs(want[k]))
			worst = max(worst, e)
			if e > tol {
				t.Errorf("%s gradient [%d] = %.9g, PyTorch %.17g", p.Name, k, got[k], want[k])
			}
		}
	}
	t.Logf("largest gradient error %.3g (1e-3 + |g|)", worst)
}
