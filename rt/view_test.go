package rt

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
)

// torchFlatFile writes, as PyTorch's exporter would (torchFile: no
// ocannlgen metadata), the weight of an nn.Linear(c*h*w, o) fed by
// x.flatten(1) of NCHW activations: cell [k][ch][y][x] (input index
// ch*h*w + y*w + x) holds k*1000 + ch*100 + y*10 + x.
func torchFlatFile(t *testing.T, o, c, h, w int) []byte {
	t.Helper()
	data := make([]float32, o*c*h*w)
	for k := range o {
		for ch := range c {
			for y := range h {
				for x := range w {
					data[k*c*h*w+ch*h*w+y*w+x] = float32(k*1000 + ch*100 + y*10 + x)
				}
			}
		}
	}
	return torchFile(t, []string{"fc.weight"}, [][]int{{o, c * h * w}}, [][]float32{data})
}

// checkFlatLinear checks that w : h*w*c -> o holds, at input index
// y*w*c + x*c + ch (ocannlgen's flatten of `h, w, c`), the cell
// [k][ch][y][x] of torchFlatFile.
func checkFlatLinear(t *testing.T, got []float64, o, c, h, w int) {
	t.Helper()
	for k := range o {
		for y := range h {
			for x := range w {
				for ch := range c {
					v := got[k*h*w*c+y*w*c+x*c+ch]
					if want := float64(k*1000 + ch*100 + y*10 + x); v != want {
						t.Fatalf("w[%d][%d] (y %d, x %d, channel %d) = %v, want %v", k, y*w*c+x*c+ch, y, x, ch, v, want)
					}
				}
			}
		}
	}
}

// TestTorchFlattenLinear loads a Linear weight written in PyTorch's
// flatten(1)-of-NCHW order through TorchFlattenLinear, saves it back to
// the same bytes, and reads the saved file back without options (the
// file records the View). Without the View the same shape would load in
// the wrong order, which the first check would catch.
func TestTorchFlattenLinear(t *testing.T) {
	const o, c, h, w = 2, 3, 4, 5
	file := torchFlatFile(t, o, c, h, w)
	ts := []Tensor{{Name: "fc.w", Dims: []int{o, h * w * c}, Data64: make([]float64, o*h*w*c)}}
	opt := &SafetensorsOptions{Names: map[string]string{"fc.w": "fc.weight"}, Views: map[string]View{"fc.w": TorchFlattenLinear(c, h, w)}}
	if err := LoadSafetensors(bytes.NewReader(file), ts, opt); err != nil {
		t.Fatal(err)
	}
	checkFlatLinear(t, ts[0].Data64, o, c, h, w)

	var buf bytes.Buffer
	if err := SaveSafetensors(&buf, ts, opt); err != nil {
		t.Fatal(err)
	}
	// The data is PyTorch's again: load the raw tensor and compare.
	raw := []Tensor{{Name: "fc.weight", Dims: []int{o, c * h * w}, Data64: make([]float64, o*c*h*w)}}
	if err := LoadSafetensors(bytes.NewReader(buf.Bytes()), raw, &SafetensorsOptions{Views: map[string]View{"fc.weight": {Dims: []int{o, c * h * w}, Perm: []int{0, 1}, File: []int{o, c * h * w}}}}); err != nil {
		t.Fatal(err)
	}
	orig := []Tensor{{Name: "fc.weight", Dims: []int{o, c * h * w}, Data64: make([]float64, o*c*h*w)}}
	if err := LoadSafetensors(bytes.NewReader(file), orig, nil); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(raw[0].Data64, orig[0].Data64) {
		t.Error("SaveSafetensors through the View did not write PyTorch's order back")
	}
	// Without options: the recorded View applies.
	back := []Tensor{{Name: "fc.w", Dims: []int{o, h * w * c}, Data64: make([]float64, o*h*w*c)}}
	if err := LoadSafetensors(bytes.NewReader(buf.Bytes()), back, &SafetensorsOptions{Names: opt.Names}); err != nil {
		t.Fatal(err)
	}
	checkFlatLinear(t, back[0].Data64, o, c, h, w)
	// An explicit Permute entry (nil: ocannlgen's order) overrides it.
	native := []Tensor{{Name: "fc.w", Dims: []int{o, h * w * c}, Data64: make([]float64, o*h*w*c)}}
	if err := LoadSafetensors(bytes.NewReader(buf.Bytes()), native, &SafetensorsOptions{Names: opt.Names, Permute: map[string][]int{"fc.w": nil}}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(native[0].Data64, orig[0].Data64) {
		t.Error("Permute nil did not read the file's cells in order")
	}
}

// TestViewErrors: a View that does not fit its tensor, a Views key that
// names no tensor, a tensor with both a Permute and a Views entry, and
// the reserved metadata key are ErrInvalid before anything is read; a
// file tensor of another shape is a *ShapeError naming the View; and on
// any error nothing is loaded.
func TestViewErrors(t *testing.T) {
	const o, c, h, w = 2, 3, 4, 5
	file := torchFlatFile(t, o, c, h, w)
	fresh := func() []Tensor {
		return []Tensor{{Name: "fc.weight", Dims: []int{o, h * w * c}, Data64: make([]float64, o*h*w*c)}}
	}
	for _, tc := range []struct {
		name string
		opt  *SafetensorsOptions
		want string
		is   error
	}{
		{"wrong cells", &SafetensorsOptions{Views: map[string]View{"fc.weight": TorchFlattenLinear(3, 4, 7)}}, `View dims [-1 4 7 3] do not hold its 120 cells`, ErrInvalid},
		{"two -1", &SafetensorsOptions{Views: map[string]View{"fc.weight": {Dims: []int{-1, -1}, Perm: []int{0, 1}, File: []int{-1}}}}, `View dims [-1 -1]`, ErrInvalid},
		{"not a permutation", &SafetensorsOptions{Views: map[string]View{"fc.weight": {Dims: []int{-1, 4, 5, 3}, Perm: []int{0, 2, 2, 1}, File: []int{-1, 60}}}}, `[0 2 2 1] is not a permutation`, ErrInvalid},
		{"no perm", &SafetensorsOptions{Views: map[string]View{"fc.weight": {Dims: []int{-1, 60}, File: []int{-1, 60}}}}, `View has no Perm`, ErrInvalid},
		{"names no tensor", &SafetensorsOptions{Views: map[string]View{"fc.w": TorchFlattenLinear(c, h, w)}}, `SafetensorsOptions.Views["fc.w"] names no tensor`, ErrInvalid},
		{"permute and views", &SafetensorsOptions{Permute: map[string][]int{"fc.weight": nil}, Views: map[string]View{"fc.weight": TorchFlattenLinear(c, h, w)}}, `has both a Permute and a Views entry`, ErrInvalid},
		{"file shape", &SafetensorsOptions{Views: map[string]View{"fc.weight": {Dims: []int{-1, 4, 5, 3}, Perm: []int{0, 2, 3, 1}, File: []int{-1, 3, 20}}}}, `the tensor is read through a View ([2 60] viewed as [2 4 5 3], permuted by [0 2 3 1], stored [2 3 20])`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := fresh()
			err := LoadSafetensors(bytes.NewReader(file), ts, tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("%v does not wrap %v", err, tc.is)
			}
			var se *ShapeError
			if tc.is == nil && !errors.As(err, &se) {
				t.Errorf("%v is not a *ShapeError", err)
			}
			if slices.ContainsFunc(ts[0].Data64, func(v float64) bool { return v != 0 }) {
				t.Error("a failed load changed the tensor")
			}
			if tc.is != nil {
				if err := SaveSafetensors(&bytes.Buffer{}, ts, tc.opt); err == nil || !errors.Is(err, tc.is) {
					t.Errorf("SaveSafetensors: got %v, want %v", err, tc.is)
				}
			}
		})
	}
	ts := fresh()
	err := SaveSafetensors(&bytes.Buffer{}, ts, &SafetensorsOptions{Metadata: map[string]string{ViewsMetadataKey: "{}"}})
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("Metadata[%q]: got %v, want ErrInvalid", ViewsMetadataKey, err)
	}
	// A damaged recorded View is ErrSafetensors.
	var buf bytes.Buffer
	if err := SaveSafetensors(&buf, ts, &SafetensorsOptions{Views: map[string]View{"fc.weight": TorchFlattenLinear(c, h, w)}}); err != nil {
		t.Fatal(err)
	}
	bad := bytes.Replace(buf.Bytes(), []byte(`"perm\":[0,2,3,1]`), []byte(`"perm\":[0,2,3,9]`), 1)
	if bytes.Equal(bad, buf.Bytes()) {
		t.Fatalf("the recorded View is not where the test looks: %q", buf.Bytes()[:300])
	}
	if err := LoadSafetensors(bytes.NewReader(bad), fresh(), nil); err == nil || !errors.Is(err, ErrSafetensors) || !strings.Contains(err.Error(), "is not a permutation") {
		t.Errorf("a recorded View that is not a permutation: got %v", err)
	}
	long := View{Dims: make([]int, 17), Perm: identityPerm(17), File: []int{-1}}
	for i := range long.Dims {
		long.Dims[i] = 1
	}
	long.Dims[0] = -1
	if err := LoadSafetensors(bytes.NewReader(file), fresh(), &SafetensorsOptions{Views: map[string]View{"fc.weight": long}}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "at most 16 axes") {
		t.Errorf("a View of 17 axes: got %v", err)
	}
}

// TestFlattenedAmbiguous: a linear weight whose input axis a flatten
// fills (Tensor.Flattened, as generated ParamTensors set it) is never
// read or written in PyTorch's layout by shape alone: LoadSafetensors
// refuses it with LayoutPyTorch, and with LayoutAuto from a file that
// records no layout, naming the View to set; LayoutNative, a Permute or
// Views entry, or the layout our own file records read it; and
// SaveSafetensors with LayoutPyTorch refuses it without an entry.
// Flattened on another role, or not matching the dims, is ErrInvalid.
func TestFlattenedAmbiguous(t *testing.T) {
	const o, c, h, w = 2, 3, 4, 5
	file := torchFlatFile(t, o, c, h, w)
	fresh := func() []Tensor {
		return []Tensor{{Name: "fc.w", Dims: []int{o, h * w * c}, Data64: make([]float64, o*h*w*c), Role: RoleLinearWeight, Flattened: []int{h, w, c}}}
	}
	names := map[string]string{"fc.w": "fc.weight"}
	want := `rt: safetensors: tensor "fc.w" (linear weight, file tensor "fc.weight", dims [2 60]): its input axis is a flatten of axes [4 5 3], and the file's shape cannot tell in which order the file holds them: ` +
		`PyTorch's x.flatten(1) of NCHW activations puts the channels first, ocannlgen's flatten of channels-last ones last, with the same shape; ` +
		`set SafetensorsOptions.Views["fc.w"] = rt.TorchFlattenLinear(3, 4, 5) for a PyTorch CNN's flatten(1) of NCHW, or Permute["fc.w"] = nil (or Layout rt.LayoutNative) for the order of ocannlgen's flatten: ambiguous tensor layout`
	for _, l := range []Layout{LayoutPyTorch, LayoutAuto} {
		ts := fresh()
		err := LoadSafetensors(bytes.NewReader(file), ts, &SafetensorsOptions{Names: names, Layout: l})
		if !errors.Is(err, ErrAmbiguousLayout) || err.Error() != want {
			t.Errorf("Layout %v: got %v\nwant %s", l, err, want)
		}
		if slices.ContainsFunc(ts[0].Data64, func(v float64) bool { return v != 0 }) {
			t.Error("a refused load changed the tensor")
		}
	}
	ts := fresh()
	if err := LoadSafetensors(bytes.NewReader(file), ts, &SafetensorsOptions{Names: names, Layout: LayoutPyTorch, Views: map[string]View{"fc.w": TorchFlattenLinear(c, h, w)}}); err != nil {
		t.Fatal(err)
	}
	checkFlatLinear(t, ts[0].Data64, o, c, h, w)
	for _, opt := range []*SafetensorsOptions{{Names: names, Layout: LayoutNative}, {Names: names, Permute: map[string][]int{"fc.w": nil}}} {
		if err := LoadSafetensors(bytes.NewReader(file), fresh(), opt); err != nil {
			t.Errorf("%+v: %v", opt, err)
		}
	}
	// Saving: refused in PyTorch's layout without an entry, written with
	// one; our native file records its layout and reads back by itself.
	var buf bytes.Buffer
	err := SaveSafetensors(&buf, ts, &SafetensorsOptions{Names: names, Layout: LayoutPyTorch})
	if !errors.Is(err, ErrAmbiguousLayout) || !strings.Contains(err.Error(), "PyTorch's layout does not say in which order to write them") {
		t.Errorf("SaveSafetensors with LayoutPyTorch: %v", err)
	}
	if err := SaveSafetensors(&buf, ts, &SafetensorsOptions{Names: names, Layout: LayoutPyTorch, Views: map[string]View{"fc.w": TorchFlattenLinear(c, h, w)}}); err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	if err := SaveSafetensors(&buf, ts, &SafetensorsOptions{Names: names}); err != nil {
		t.Fatal(err)
	}
	back := fresh()
	if err := LoadSafetensors(bytes.NewReader(buf.Bytes()), back, &SafetensorsOptions{Names: names}); err != nil || !slices.Equal(back[0].Data64, ts[0].Data64) {
		t.Errorf("our native file: %v", err)
	}
	for _, bad := range []Tensor{
		{Name: "b", Dims: []int{60}, Data64: make([]float64, 60), Role: RoleBias, Flattened: []int{4, 5, 3}},
		{Name: "w", Dims: []int{2, 60}, Data64: make([]float64, 120), Role: RoleLinearWeight, Flattened: []int{4, 5, 2}},
		{Name: "w", Dims: []int{2, 60}, Data64: make([]float64, 120), Role: RoleLinearWeight, Flattened: []int{60}},
	} {
		if err := SaveSafetensors(&bytes.Buffer{}, []Tensor{bad}, nil); !errors.Is(err, ErrInvalid) {
			t.Errorf("Flattened %v on %s %v: got %v, want ErrInvalid", bad.Flattened, bad.Role, bad.Dims, err)
		}
	}
}
