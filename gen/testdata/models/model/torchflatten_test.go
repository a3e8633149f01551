package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

// flattenNames maps TorchFlatten's parameters to the state_dict's names.
var flattenNames = map[string]string{"c1.kernel": "conv1.weight", "c1.bias": "conv1.bias", "fc.w": "fc.weight", "fc.b": "fc.bias"}

// flattenOptions load and save PyTorch's layout: the conv kernel by
// Layout, the linear weight after flatten by rt.TorchFlattenLinear
// (3 channels of 4 x 5).
func flattenOptions() *rt.SafetensorsOptions {
	return &rt.SafetensorsOptions{Names: flattenNames, Layout: rt.LayoutPyTorch,
		Views: map[string]rt.View{"fc.w": rt.TorchFlattenLinear(3, 4, 5)}}
}

// TestTorchFlatten: the generated model loads the state_dict of a PyTorch
// CNN whose x.flatten(1) (NCHW) feeds a Linear with no reshaping in
// Python, and gives PyTorch's logits, loss and every parameter gradient
// to 1e-9 relative; without the View, fc.w is refused (ambiguous); saved
// back with the same options, the file holds the state_dict's tensors bit
// for bit, and it reloads without the View (the file records it).
func TestTorchFlatten(t *testing.T) {
	state, err := os.ReadFile("testdata/torchflatten/torchflatten.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/torchflatten/torchflatten.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		X      []float64 `json:"x_nhwc"`
		Y      []float64
		Logits []float64
		Loss   float64
		Grads  map[string][]float64
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	// The preset alone does not say in which order PyTorch flattened:
	// fc.w is refused, naming the View, and nothing is loaded.
	var m TorchFlatten
	m.Init(1)
	before := m.Params
	err = m.LoadSafetensors(bytes.NewReader(state), &rt.SafetensorsOptions{Names: flattenNames, Layout: rt.LayoutPyTorch})
	if !errors.Is(err, rt.ErrAmbiguousLayout) || !strings.Contains(err.Error(), `Views["fc.w"] = rt.TorchFlattenLinear(3, 4, 5)`) || m.Params != before {
		t.Errorf("LayoutPyTorch without the View: %v", err)
	}
	if err := m.LoadSafetensors(bytes.NewReader(state), flattenOptions()); err != nil {
		t.Fatal(err)
	}
	var x [2][4][5][2]float64
	var y [2][4]float64
	k := 0
	for b := range 2 {
		for h := range 4 {
			for w := range 5 {
				for c := range 2 {
					x[b][h][w][c] = fx.X[k]
					k++
				}
			}
		}
		for o := range 4 {
			y[b][o] = fx.Y[4*b+o]
		}
	}
	near := func(what string, i int, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9*math.Max(1e-3, math.Abs(want)) {
			t.Errorf("%s[%d] = %.17g, PyTorch %.17g", what, i, got, want)
		}
	}
	logits := m.Predict(&x)
	for b := range 2 {
		for o := range 4 {
			near("logits", 4*b+o, logits[b][o], fx.Logits[4*b+o])
		}
	}
	near("loss", 0, m.Backward(&x, &y), fx.Loss)
	// Our cell k of each parameter is PyTorch's cell torch(k).
	torch := map[string]func(k int) int{
		"c1.kernel": func(k int) int { // [oc][kh][kw][ic] from [oc][ic][kh][kw]
			ic, kw, kh, oc := k%2, k/2%3, k/6%3, k/18
			return ((oc*2+ic)*3+kh)*3 + kw
		},
		"fc.w": func(k int) int { // [o][h*5*3 + w*3 + c] from [o][c*4*5 + h*5 + w]
			c, w, h, o := k%3, k/3%5, k/15%4, k/60
			return o*60 + c*20 + h*5 + w
		},
		"c1.bias": func(k int) int { return k },
		"fc.b":    func(k int) int { return k },
	}
	ps, gs := m.ParamTensors(), arrays(m.Grads)
	if len(ps) != 4 {
		t.Fatalf("%d parameters, want 4", len(ps))
	}
	for i, p := range ps {
		want := fx.Grads[flattenNames[p.Name]]
		if len(gs[i]) != len(want) {
			t.Fatalf("%s: %d gradient cells, PyTorch %d", p.Name, len(gs[i]), len(want))
		}
		for k, g := range gs[i] {
			near(p.Name+" gradient", k, g, want[torch[p.Name](k)])
		}
	}
	// Saved back with the same options: the state_dict's tensors.
	var buf bytes.Buffer
	if err := m.SaveSafetensors(&buf, flattenOptions()); err != nil {
		t.Fatal(err)
	}
	for name, dims := range map[string][]int{"conv1.weight": {3, 2, 3, 3}, "conv1.bias": {3}, "fc.weight": {4, 60}, "fc.bias": {4}} {
		n := 1
		for _, d := range dims {
			n *= d
		}
		orig := []rt.Tensor{{Name: name, Dims: dims, Data64: make([]float64, n)}}
		back := []rt.Tensor{{Name: name, Dims: dims, Data64: make([]float64, n)}}
		raw := &rt.SafetensorsOptions{IgnoreExtra: true, Permute: map[string][]int{name: nil}}
		if err := rt.LoadSafetensors(bytes.NewReader(state), orig, raw); err != nil {
			t.Fatal(err)
		}
		if err := rt.LoadSafetensors(bytes.NewReader(buf.Bytes()), back, raw); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(orig[0].Data64, back[0].Data64) {
			t.Errorf("%s saved with the PyTorch options differs from the state_dict's", name)
		}
	}
	// Our file reloads with the names alone.
	var r TorchFlatten
	if err := r.LoadSafetensors(bytes.NewReader(buf.Bytes()), &rt.SafetensorsOptions{Names: flattenNames}); err != nil || r.Params != m.Params {
		t.Errorf("reloading our file without the View: %v", err)
	}
}
