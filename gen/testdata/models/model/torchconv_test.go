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

// torchNames maps TorchConv's parameters to the PyTorch state_dict's names.
var torchNames = map[string]string{
	"c1.kernel": "conv1.weight", "c1.bias": "conv1.bias",
	"c2.kernel": "conv2.weight", "c2.bias": "conv2.bias",
}

// torchFixture reads the files make.py wrote: the state_dict, and the
// input and PyTorch's output (flattened NHWC, as make.py transposed them
// from PyTorch's NCHW).
func torchFixture(t *testing.T) (state []byte, in *[2][5][5][3]float64, out []float64) {
	t.Helper()
	state, err := os.ReadFile("testdata/torchconv/torchconv.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/torchconv/torchconv.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		InShape  []int     `json:"input_nhwc_shape"`
		In       []float64 `json:"input_nhwc"`
		OutShape []int     `json:"output_nhwc_shape"`
		Out      []float64 `json:"output_nhwc"`
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(fx.InShape, []int{2, 5, 5, 3}) || len(fx.In) != 150 || !slices.Equal(fx.OutShape, []int{2, 5, 5, 2}) || len(fx.Out) != 100 {
		t.Fatalf("fixture shapes %v (%d values), %v (%d values)", fx.InShape, len(fx.In), fx.OutShape, len(fx.Out))
	}
	in = new([2][5][5][3]float64)
	k := 0
	for b := range 2 {
		for h := range 5 {
			for w := range 5 {
				for c := range 3 {
					in[b][h][w][c] = fx.In[k]
					k++
				}
			}
		}
	}
	return state, in, fx.Out
}

// TestTorchConvPreset loads PyTorch's state_dict with Layout: LayoutPyTorch
// and the Names map alone, and matches PyTorch's output (computed in
// float64 from the same float32 weights).
func TestTorchConvPreset(t *testing.T) {
	state, in, want := torchFixture(t)
	var m TorchConv
	if err := m.LoadSafetensors(bytes.NewReader(state), &rt.SafetensorsOptions{Names: torchNames, Layout: rt.LayoutPyTorch}); err != nil {
		t.Fatal(err)
	}
	got := m.Predict(in)
	k := 0
	for b := range 2 {
		for h := range 5 {
			for w := range 5 {
				for c := range 2 {
					if d := math.Abs(got[b][h][w][c] - want[k]); d > 1e-12*(1+math.Abs(want[k])) {
						t.Errorf("output[%d][%d][%d][%d] = %.17g, PyTorch %.17g", b, h, w, c, got[b][h][w][c], want[k])
					}
					k++
				}
			}
		}
	}
	// The explicit permutations do the same.
	var p TorchConv
	perm := &rt.SafetensorsOptions{Names: torchNames, Permute: map[string][]int{"c1.kernel": rt.TorchConv2d(), "c2.kernel": rt.TorchConv2d()}}
	if err := p.LoadSafetensors(bytes.NewReader(state), perm); err != nil {
		t.Fatal(err)
	}
	if p.Params != m.Params {
		t.Error("Permute: rt.TorchConv2d() loads other parameters than Layout: rt.LayoutPyTorch")
	}
	// Saved back in PyTorch's layout, the file has the state_dict's
	// tensors, bit for bit (float64 now).
	var buf bytes.Buffer
	if err := m.SaveSafetensors(&buf, &rt.SafetensorsOptions{Names: torchNames, Layout: rt.LayoutPyTorch}); err != nil {
		t.Fatal(err)
	}
	for name, dims := range map[string][]int{"conv1.weight": {4, 3, 3, 3}, "conv2.weight": {2, 4, 3, 3}} {
		n := dims[0] * dims[1] * dims[2] * dims[3]
		orig := []rt.Tensor{{Name: name, Dims: dims, Data64: make([]float64, n)}}
		back := []rt.Tensor{{Name: name, Dims: dims, Data64: make([]float64, n)}}
		if err := rt.LoadSafetensors(bytes.NewReader(state), orig, &rt.SafetensorsOptions{IgnoreExtra: true}); err != nil {
			t.Fatal(err)
		}
		if err := rt.LoadSafetensors(bytes.NewReader(buf.Bytes()), back, &rt.SafetensorsOptions{IgnoreExtra: true}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(orig[0].Data64, back[0].Data64) {
			t.Errorf("%s saved with LayoutPyTorch differs from the state_dict's", name)
		}
	}
	// Our own file loads without options.
	var r TorchConv
	if err := r.LoadSafetensors(bytes.NewReader(buf.Bytes()), &rt.SafetensorsOptions{Names: torchNames}); err != nil || r.Params != m.Params {
		t.Errorf("reloading our PyTorch-layout file without a Layout: %v", err)
	}
}

// TestTorchConvAmbiguous: loading the state_dict by shape alone is
// refused for c1.kernel (the same shape in both layouts), with an error
// that says what to set, and nothing is loaded; c2.kernel's shape tells
// its layout, and the shape error says so.
func TestTorchConvAmbiguous(t *testing.T) {
	state, _, _ := torchFixture(t)
	for _, opt := range []*rt.SafetensorsOptions{nil, {Names: torchNames}} {
		var m TorchConv
		m.Init(1)
		before := m.Params
		err := m.LoadSafetensors(bytes.NewReader(state), opt)
		if m.Params != before {
			t.Error("a refused load changed the parameters")
		}
		if opt == nil {
			if !errors.Is(err, rt.ErrMissing) {
				t.Errorf("without names: %v", err)
			}
			continue
		}
		if !errors.Is(err, rt.ErrAmbiguousLayout) {
			t.Fatalf("the ambiguous kernel was not refused: %v", err)
		}
		msg := err.Error()
		for _, want := range []string{
			`tensor "c1.kernel" (conv kernel, file tensor "conv1.weight", shape [4 3 3 3]): the layout is ambiguous`,
			"rt.LayoutPyTorch for a PyTorch state_dict", "rt.LayoutNative",
			`tensor "c2.kernel" (file "conv2.weight"): shape mismatch: file has [2 4 3 3], expected [2 3 3 4]`,
		} {
			if !strings.Contains(msg, want) {
				t.Errorf("the error does not say %s:\n%s", want, msg)
			}
		}
	}
}
