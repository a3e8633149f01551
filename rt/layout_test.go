package rt

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// torchFile writes a safetensors file as PyTorch's exporter does (F32, no
// ocannlgen metadata), independently of SaveSafetensors: names[i] has
// shape shapes[i] and data data[i].
func torchFile(t *testing.T, names []string, shapes [][]int, data [][]float32) []byte {
	t.Helper()
	var hdr bytes.Buffer
	hdr.WriteString(`{"__metadata__":{"format":"pt"}`)
	off := 0
	for i, n := range names {
		sh, _ := json.Marshal(shapes[i])
		fmt.Fprintf(&hdr, `,%q:{"dtype":"F32","shape":%s,"data_offsets":[%d,%d]}`, n, sh, off, off+4*len(data[i]))
		off += 4 * len(data[i])
	}
	hdr.WriteByte('}')
	out := binary.LittleEndian.AppendUint64(nil, uint64(hdr.Len()))
	out = append(out, hdr.Bytes()...)
	for _, d := range data {
		for _, v := range d {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(v))
		}
	}
	return out
}

// torchConvWeight is an nn.Conv2d weight [oc][ic][kh][kw] whose element
// is oc*1000 + ic*100 + kh*10 + kw.
func torchConvWeight(oc, ic, kh, kw int) []float32 {
	var w []float32
	for o := range oc {
		for i := range ic {
			for h := range kh {
				for x := range kw {
					w = append(w, float32(o*1000+i*100+h*10+x))
				}
			}
		}
	}
	return w
}

// checkConvKernel checks that k, [oc][kh][kw][ic], holds the values of
// torchConvWeight transposed.
func checkConvKernel(t *testing.T, k []float32, oc, ic, kh, kw int) {
	t.Helper()
	for o := range oc {
		for h := range kh {
			for x := range kw {
				for i := range ic {
					got := k[((o*kh+h)*kw+x)*ic+i]
					if want := float32(o*1000 + i*100 + h*10 + x); got != want {
						t.Fatalf("kernel[oc=%d][kh=%d][kw=%d][ic=%d] = %v, want %v", o, h, x, i, got, want)
					}
				}
			}
		}
	}
}

// squareConv is a model's parameters with a conv kernel whose shape is
// the same in both layouts ([4][3][3][3]: 3 input channels, 3x3 window)
// and a bias, filled with the sentinel 7.
func squareConv() []Tensor {
	k := make([]float32, 4*3*3*3)
	b := make([]float32, 4)
	for i := range k {
		k[i] = 7
	}
	for i := range b {
		b[i] = 7
	}
	return []Tensor{
		{Name: "c1.kernel", Dims: []int{4, 3, 3, 3}, Data32: k, Role: RoleConvKernel, Spatial: []int{1, 2}},
		{Name: "c1.bias", Dims: []int{4}, Data32: b, Role: RoleBias},
	}
}

var squareNames = map[string]string{"c1.kernel": "conv1.weight", "c1.bias": "conv1.bias"}

// squareTorchFile is the PyTorch state_dict of squareConv's nn.Conv2d.
func squareTorchFile(t *testing.T) []byte {
	return torchFile(t, []string{"conv1.weight", "conv1.bias"}, [][]int{{4, 3, 3, 3}, {4}},
		[][]float32{torchConvWeight(4, 3, 3, 3), {0.5, 1.5, 2.5, 3.5}})
}

func allSentinel(ts []Tensor) bool {
	for _, t := range ts {
		for _, v := range t.Data32 {
			if v != 7 {
				return false
			}
		}
	}
	return true
}

func TestPyTorchPerm(t *testing.T) {
	for _, c := range []struct {
		t    Tensor
		want []int
	}{
		{Tensor{Dims: []int{8, 3, 3, 1}, Role: RoleConvKernel}, TorchConv2d()},
		{Tensor{Dims: []int{8, 3, 3, 1}, Role: RoleConvKernel, Spatial: []int{1, 2}}, TorchConv2d()},
		// conv1d `k, ic -> oc`, [oc][k][ic]: PyTorch's [oc][ic][k].
		{Tensor{Dims: []int{8, 5, 2}, Role: RoleConvKernel, Spatial: []int{1}}, []int{0, 2, 1}},
		// Window axis already last: no permutation.
		{Tensor{Dims: []int{8, 2, 5}, Role: RoleConvKernel, Spatial: []int{2}}, nil},
		// conv3d [oc][kd][kh][kw][ic]: PyTorch's [oc][ic][kd][kh][kw].
		{Tensor{Dims: []int{8, 3, 3, 3, 2}, Role: RoleConvKernel, Spatial: []int{1, 2, 3}}, []int{0, 2, 3, 4, 1}},
		{Tensor{Dims: []int{8, 3}, Role: RoleLinearWeight}, nil},
		{Tensor{Dims: []int{8, 3, 3, 1}, Role: RoleUnknown}, nil},
		{Tensor{Dims: []int{8}, Role: RoleBias}, nil},
	} {
		if got := c.t.PyTorchPerm(); !slices.Equal(got, c.want) {
			t.Errorf("%v %v spatial %v: PyTorchPerm %v, want %v", c.t.Role, c.t.Dims, c.t.Spatial, got, c.want)
		}
	}
}

func TestRoleValidation(t *testing.T) {
	for _, bad := range []Tensor{
		{Name: "a", Dims: []int{2, 2}, Data32: make([]float32, 4), Role: RoleBias, Spatial: []int{1}},
		{Name: "a", Dims: []int{2, 2}, Data32: make([]float32, 4), Role: RoleConvKernel, Spatial: []int{2}},
		{Name: "a", Dims: []int{2, 2, 2}, Data32: make([]float32, 8), Role: RoleConvKernel, Spatial: []int{2, 1}},
		{Name: "a", Dims: []int{2}, Data32: make([]float32, 2), Role: RoleOther + 1},
	} {
		if err := SaveSafetensors(new(bytes.Buffer), []Tensor{bad}, nil); !errors.Is(err, ErrInvalid) {
			t.Errorf("role %v spatial %v: %v, want ErrInvalid", bad.Role, bad.Spatial, err)
		}
	}
	ts := squareConv()
	if err := SaveSafetensors(new(bytes.Buffer), ts, &SafetensorsOptions{Layout: LayoutPyTorch + 1}); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown Layout: %v, want ErrInvalid", err)
	}
	if err := LoadSafetensors(bytes.NewReader(squareTorchFile(t)), ts, &SafetensorsOptions{Layout: 9}); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown Layout: %v, want ErrInvalid", err)
	}
}

// TestSafetensorsAmbiguousRefused: a 3x3 kernel on 3 channels has the
// same shape in both layouts; without a Layout, a Permute or a recorded
// layout it is refused, and nothing is loaded (not even the bias).
func TestSafetensorsAmbiguousRefused(t *testing.T) {
	file := squareTorchFile(t)
	for _, opt := range []*SafetensorsOptions{{Names: squareNames}, {Names: squareNames, Layout: LayoutAuto}} {
		ts := squareConv()
		err := LoadSafetensors(bytes.NewReader(file), ts, opt)
		if !errors.Is(err, ErrAmbiguousLayout) {
			t.Fatalf("ambiguous kernel loaded by shape: %v", err)
		}
		msg := err.Error()
		for _, want := range []string{`"c1.kernel"`, "conv kernel", `file tensor "conv1.weight"`, "layout is ambiguous",
			"[out][kh][kw][in]", "[out][in][kh][kw]", "Layout to rt.LayoutPyTorch for a PyTorch state_dict", "rt.LayoutNative for a file in ocannlgen's order"} {
			if !strings.Contains(msg, want) {
				t.Errorf("the error does not say %s:\n%s", want, msg)
			}
		}
		if !allSentinel(ts) {
			t.Error("a refused load modified the tensors")
		}
	}
	// Hand-built tensors (no role) keep loading by shape.
	ts := squareConv()
	ts[0].Role, ts[0].Spatial, ts[1].Role = RoleUnknown, nil, RoleUnknown
	if err := LoadSafetensors(bytes.NewReader(file), ts, &SafetensorsOptions{Names: squareNames}); err != nil {
		t.Errorf("a tensor of unknown role: %v", err)
	}
	if got := ts[0].Data32[1]; got != 1 { // file offset 1: [0][0][0][1]
		t.Errorf("unknown role: element 1 = %v, want the file's element 1 (1)", got)
	}
}

// TestSafetensorsPyTorchPreset: with Layout: LayoutPyTorch the state_dict
// loads with the Names map alone; an explicit Permute entry overrides
// the layout; LayoutNative reads the file's order unchanged.
func TestSafetensorsPyTorchPreset(t *testing.T) {
	file := squareTorchFile(t)
	ts := squareConv()
	if err := LoadSafetensors(bytes.NewReader(file), ts, &SafetensorsOptions{Names: squareNames, Layout: LayoutPyTorch}); err != nil {
		t.Fatal(err)
	}
	checkConvKernel(t, ts[0].Data32, 4, 3, 3, 3)
	if want := []float32{0.5, 1.5, 2.5, 3.5}; !slices.Equal(ts[1].Data32, want) {
		t.Errorf("bias %v, want %v", ts[1].Data32, want)
	}
	// The same through an explicit Permute, without Layout.
	ts = squareConv()
	if err := LoadSafetensors(bytes.NewReader(file), ts, &SafetensorsOptions{Names: squareNames, Permute: map[string][]int{"c1.kernel": TorchConv2d()}}); err != nil {
		t.Fatal(err)
	}
	checkConvKernel(t, ts[0].Data32, 4, 3, 3, 3)
	// LayoutNative, and a nil Permute entry overriding LayoutPyTorch,
	// read the file's order as it is.
	want := torchConvWeight(4, 3, 3, 3)
	for _, opt := range []*SafetensorsOptions{
		{Names: squareNames, Layout: LayoutNative},
		{Names: squareNames, Layout: LayoutPyTorch, Permute: map[string][]int{"c1.kernel": nil}},
	} {
		ts = squareConv()
		if err := LoadSafetensors(bytes.NewReader(file), ts, opt); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ts[0].Data32, want) {
			t.Errorf("layout %v, permute %v: the kernel is not the file's order", opt.Layout, opt.Permute)
		}
	}
	// A non-square kernel in PyTorch order, [16][1][3][3] for [16][3][3][1].
	k := Tensor{Name: "c1.kernel", Dims: []int{16, 3, 3, 1}, Data32: make([]float32, 144), Role: RoleConvKernel}
	f := torchFile(t, []string{"conv1.weight"}, [][]int{{16, 1, 3, 3}}, [][]float32{torchConvWeight(16, 1, 3, 3)})
	if err := LoadSafetensors(bytes.NewReader(f), []Tensor{k}, &SafetensorsOptions{Names: map[string]string{"c1.kernel": squareNames["c1.kernel"]}, Layout: LayoutPyTorch, IgnoreExtra: true}); err != nil {
		t.Fatal(err)
	}
	checkConvKernel(t, k.Data32, 16, 1, 3, 3)
}

// TestSafetensorsRecordedLayout: files written by SaveSafetensors record
// their layout and load without options, in either layout; a Layout
// option that contradicts the record is refused; tensors a Permute entry
// wrote otherwise are not vouched for.
func TestSafetensorsRecordedLayout(t *testing.T) {
	src := squareConv()
	for i := range src[0].Data32 {
		src[0].Data32[i] = float32(i)
	}
	for _, layout := range []Layout{LayoutAuto, LayoutNative, LayoutPyTorch} {
		var buf bytes.Buffer
		opt := &SafetensorsOptions{Names: squareNames, Layout: layout, Metadata: map[string]string{"format": "pt"}}
		if err := SaveSafetensors(&buf, src, opt); err != nil {
			t.Fatal(err)
		}
		file := buf.Bytes()
		written := "native"
		if layout == LayoutPyTorch {
			written = "pytorch"
		}
		for _, want := range []string{`"ocannlgen.layout":"` + written + `"`, `"format":"pt"`} {
			if !bytes.Contains(file, []byte(want)) {
				t.Errorf("layout %v: the metadata lacks %s: %.200s", layout, want, file[8:])
			}
		}
		back := squareConv()
		if err := LoadSafetensors(bytes.NewReader(file), back, &SafetensorsOptions{Names: squareNames}); err != nil {
			t.Fatalf("layout %v: loading our own file without a Layout: %v", layout, err)
		}
		if !slices.Equal(back[0].Data32, src[0].Data32) {
			t.Errorf("layout %v: the round trip is not the identity", layout)
		}
		// The bytes of the kernel are in the layout asked for: read them
		// as a hand-built tensor of the file's order.
		raw := []Tensor{{Name: "conv1.weight", Dims: []int{4, 3, 3, 3}, Data32: make([]float32, 108)}}
		if err := LoadSafetensors(bytes.NewReader(file), raw, &SafetensorsOptions{IgnoreExtra: true}); err != nil {
			t.Fatal(err)
		}
		// Element [oc=1][ic=2][kh=0][kw=1] of PyTorch's order is element
		// [1][0][1][2] of the kernel, at offset ((1*3+0)*3+1)*3+2 = 32.
		at := ((1*3+2)*3+0)*3 + 1
		wantAt := float32(at) // native: the same offset
		if layout == LayoutPyTorch {
			wantAt = 32
		}
		if raw[0].Data32[at] != wantAt {
			t.Errorf("layout %v: file element %d is %v, want %v", layout, at, raw[0].Data32[at], wantAt)
		}
		// A Layout contradicting the record is refused.
		other := LayoutPyTorch
		if layout == LayoutPyTorch {
			other = LayoutNative
		}
		back = squareConv()
		err := LoadSafetensors(bytes.NewReader(file), back, &SafetensorsOptions{Names: squareNames, Layout: other})
		if !errors.Is(err, ErrLayoutConflict) || !strings.Contains(err.Error(), `"c1.kernel"`) || !allSentinel(back) {
			t.Errorf("layout %v read as %v: %v", layout, other, err)
		}
	}
	// A Permute entry that writes the kernel otherwise than the layout:
	// the file does not vouch for it, and the ambiguity rule applies.
	var buf bytes.Buffer
	if err := SaveSafetensors(&buf, src, &SafetensorsOptions{Permute: map[string][]int{"c1.kernel": TorchConv2d()}}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte(`"ocannlgen.permuted":"[\"c1.kernel\"]"`)) {
		t.Errorf("the metadata does not list the permuted tensor: %.200s", buf.Bytes()[8:])
	}
	back := squareConv()
	if err := LoadSafetensors(bytes.NewReader(buf.Bytes()), back, nil); !errors.Is(err, ErrAmbiguousLayout) {
		t.Errorf("a tensor written by a Permute entry loaded without one: %v", err)
	}
	if err := LoadSafetensors(bytes.NewReader(buf.Bytes()), back, &SafetensorsOptions{Permute: map[string][]int{"c1.kernel": TorchConv2d()}}); err != nil || !slices.Equal(back[0].Data32, src[0].Data32) {
		t.Errorf("with the same Permute: %v", err)
	}
	// Metadata may not contradict the recorded layout.
	err := SaveSafetensors(new(bytes.Buffer), src, &SafetensorsOptions{Metadata: map[string]string{LayoutMetadataKey: "pytorch"}})
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("Metadata contradicting the layout: %v", err)
	}
	if err := SaveSafetensors(new(bytes.Buffer), src, &SafetensorsOptions{Layout: LayoutPyTorch, Metadata: map[string]string{LayoutMetadataKey: "pytorch"}}); err != nil {
		t.Errorf("Metadata agreeing with the layout: %v", err)
	}
}

// TestSafetensorsShapeHints: a file in PyTorch's conv order where
// ocannlgen's is expected says what to set, and names the file tensor.
func TestSafetensorsShapeHints(t *testing.T) {
	file := torchFile(t, []string{"conv1.weight"}, [][]int{{16, 1, 3, 3}}, [][]float32{torchConvWeight(16, 1, 3, 3)})
	names := map[string]string{"c1.kernel": "conv1.weight"}
	kernel := func(role Role) []Tensor {
		return []Tensor{{Name: "c1.kernel", Dims: []int{16, 3, 3, 1}, Data32: make([]float32, 144), Role: role}}
	}
	cases := []struct {
		name string
		ts   []Tensor
		opt  *SafetensorsOptions
		file []byte
		want []string
	}{
		{"conv kernel", kernel(RoleConvKernel), &SafetensorsOptions{Names: names}, file,
			[]string{`tensor "c1.kernel" (file "conv1.weight"): shape mismatch: file has [16 1 3 3], expected [16 3 3 1]`,
				"PyTorch's layout [out][in][kh][kw]", "Layout = rt.LayoutPyTorch", `Permute["c1.kernel"] = rt.TorchConv2d()`}},
		{"unknown role", kernel(RoleUnknown), &SafetensorsOptions{Names: names}, file,
			[]string{`(file "conv1.weight")`, "nn.Conv2d layout [out][in][kh][kw]", `Permute["c1.kernel"] = rt.TorchConv2d()`}},
		{"native file read as PyTorch", kernel(RoleConvKernel), &SafetensorsOptions{Layout: LayoutPyTorch},
			torchFile(t, []string{"c1.kernel"}, [][]int{{16, 3, 3, 1}}, [][]float32{make([]float32, 144)}),
			[]string{`tensor "c1.kernel": shape mismatch: file has [16 3 3 1], expected [16 1 3 3]`, "ocannlgen's order", "rt.LayoutNative"}},
		{"other permutation", []Tensor{{Name: "w", Dims: []int{2, 3}, Data32: make([]float32, 6), Role: RoleLinearWeight}}, nil,
			torchFile(t, []string{"w"}, [][]int{{3, 2}}, [][]float32{make([]float32, 6)}),
			[]string{"permutation of the expected one", `Permute["w"]`}},
	}
	for _, c := range cases {
		err := LoadSafetensors(bytes.NewReader(c.file), c.ts, c.opt)
		var se *ShapeError
		if !errors.As(err, &se) {
			t.Errorf("%s: %v, want a *ShapeError", c.name, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: the error does not say %s:\n%v", c.name, w, err)
			}
		}
	}
	// No hint when the shapes are not permutations of each other.
	ts := []Tensor{{Name: "c1.kernel", Dims: []int{16, 3, 3, 2}, Data32: make([]float32, 288), Role: RoleConvKernel}}
	var se *ShapeError
	if err := LoadSafetensors(bytes.NewReader(file), ts, &SafetensorsOptions{Names: names}); !errors.As(err, &se) || se.Hint != "" || se.FileName != "conv1.weight" {
		t.Errorf("unrelated shapes: %v (hint %q)", err, se.Hint)
	}
}

// TestLoadHints: each loader, given another loader's file, says which
// function reads it; Load's shape mismatch in PyTorch's conv order says
// how to convert it.
func TestLoadHints(t *testing.T) {
	// Every message is also pinned whole in testdata/loaderrors.golden.
	var golden strings.Builder
	defer func() { compareGolden(t, "loaderrors.golden", golden.String()) }()
	src := sampleSet()
	params := saved(t, src)
	ckpt := savedCheckpoint(t, 3, "sgd", src)
	var st bytes.Buffer
	if err := SaveSafetensors(&st, src, nil); err != nil {
		t.Fatal(err)
	}
	_, ckErr := LoadCheckpoint(bytes.NewReader(st.Bytes()), "sgd", blank(src))
	for _, c := range []struct {
		what string
		err  error
		is   error
		want string
	}{
		{"Load of a checkpoint", Load(bytes.NewReader(ckpt), blank(src)), ErrBadMagic, "this is a training checkpoint (written by SaveCheckpoint); read it with LoadCheckpoint"},
		{"Unmarshal of a checkpoint", Unmarshal(ckpt, blank(src)), ErrBadMagic, "read it with LoadCheckpoint"},
		{"Load of a safetensors file", Load(bytes.NewReader(st.Bytes()), blank(src)), ErrBadMagic, "this is a safetensors file; read it with LoadSafetensors"},
		{"LoadCheckpoint of a safetensors file", ckErr, ErrBadMagic, "read it with LoadSafetensors"},
		{"LoadSafetensors of a parameter file", LoadSafetensors(bytes.NewReader(params), blank(src), nil), ErrSafetensors, "this is a parameter file (written by Save); read it with Load"},
		{"LoadSafetensors of a checkpoint", LoadSafetensors(bytes.NewReader(ckpt), blank(src), nil), ErrSafetensors, "read it with LoadCheckpoint"},
	} {
		if !errors.Is(c.err, c.is) || c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want %v saying %q", c.what, c.err, c.is, c.want)
			continue
		}
		fmt.Fprintf(&golden, "%s:\n\t%v\n", c.what, c.err)
	}
	// Garbage still gives the plain message.
	if err := Load(bytes.NewReader([]byte("GARBAGE!more bytes")), blank(src)); !errors.Is(err, ErrBadMagic) || strings.Contains(err.Error(), "read it with") {
		t.Errorf("garbage: %v", err)
	}

	// A parameter file holding a conv kernel in PyTorch's order.
	torch := []Tensor{{Name: "c1.kernel", Dims: []int{16, 1, 3, 3}, Data32: torchConvWeight(16, 1, 3, 3)}}
	hints := map[Role]string{}
	for role, hint := range map[Role][]string{
		RoleConvKernel: {"PyTorch's layout [out][in][kh][kw] of this conv kernel", "Layout: rt.LayoutPyTorch", "rt.TorchConv2d()"},
		RoleUnknown:    {"nn.Conv2d layout [out][in][kh][kw]", `Permute: {"c1.kernel": rt.TorchConv2d()}`},
	} {
		want := []Tensor{{Name: "c1.kernel", Dims: []int{16, 3, 3, 1}, Data32: make([]float32, 144), Role: role}}
		err := Load(bytes.NewReader(saved(t, torch)), want)
		var se *ShapeError
		if !errors.As(err, &se) {
			t.Errorf("role %v: %v, want a *ShapeError", role, err)
			continue
		}
		for _, h := range hint {
			if !strings.Contains(err.Error(), h) {
				t.Errorf("role %v: the error does not say %s:\n%v", role, h, err)
			}
		}
		hints[role] = err.Error()
	}
	for _, role := range []Role{RoleConvKernel, RoleUnknown} {
		fmt.Fprintf(&golden, "Load of a PyTorch-order conv kernel (%v):\n\t%s\n", role, hints[role])
	}
	// A safetensors file with mapped names: the message names the file's
	// tensor and says which layout would fit.
	var tf bytes.Buffer
	if err := SaveSafetensors(&tf, torch, &SafetensorsOptions{Names: map[string]string{"c1.kernel": "conv1.weight"}}); err != nil {
		t.Fatal(err)
	}
	conv := []Tensor{{Name: "c1.kernel", Dims: []int{16, 3, 3, 1}, Data32: make([]float32, 144), Role: RoleConvKernel, Spatial: []int{1, 2}}}
	fmt.Fprintf(&golden, "LoadSafetensors of a PyTorch-order kernel, names mapped:\n\t%v\n",
		LoadSafetensors(bytes.NewReader(tf.Bytes()), conv, &SafetensorsOptions{Names: map[string]string{"c1.kernel": "conv1.weight"}}))
	// A 2x2 kernel of a padded convolution from a PyTorch state_dict.
	even := torchFile(t, []string{"conv1.weight", "conv1.bias"}, [][]int{{4, 3, 2, 2}, {4}},
		[][]float32{torchConvWeight(4, 3, 2, 2), {0.5, 1.5, 2.5, 3.5}})
	fmt.Fprintf(&golden, "LoadSafetensors with rt.LayoutPyTorch of an even kernel of a padded convolution:\n\t%v\n",
		LoadSafetensors(bytes.NewReader(even), evenConv(), &SafetensorsOptions{Names: squareNames, Layout: LayoutPyTorch}))
}

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// compareGolden compares got with testdata/name, or rewrites it with
// -update.
func compareGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./rt -run %s -update to create it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test ./rt -run %s -update if intended):\n--- got\n%s--- want\n%s", name, t.Name(), got, want)
	}
}

// evenConv is a model's parameters with a 2x2 conv kernel of a padded
// convolution ([4][2][2][3]: both window axes even) and a bias, filled
// with the sentinel 7.
func evenConv() []Tensor {
	k := make([]float32, 4*2*2*3)
	b := make([]float32, 4)
	for i := range k {
		k[i] = 7
	}
	for i := range b {
		b[i] = 7
	}
	return []Tensor{
		{Name: "c1.kernel", Dims: []int{4, 2, 2, 3}, Data32: k, Role: RoleConvKernel, Spatial: []int{1, 2}, EvenPadded: []int{1, 2}},
		{Name: "c1.bias", Dims: []int{4}, Data32: b, Role: RoleBias},
	}
}

// TestSafetensorsEvenKernelPadding (issue 27, item 4): LayoutPyTorch
// refuses a conv kernel whose padded convolution has an even window,
// saying why (ocannlgen pads the extra cell on the left, PyTorch's
// padding='same' on the right) and how to confirm, with the load's other
// problems and nothing loaded; AllowEvenKernelPadding confirms it; odd
// kernels, ocannlgen's own files, LayoutNative and a Permute entry need
// no confirmation.
func TestSafetensorsEvenKernelPadding(t *testing.T) {
	file := torchFile(t, []string{"conv1.weight", "conv1.bias"}, [][]int{{4, 3, 2, 2}, {4}},
		[][]float32{torchConvWeight(4, 3, 2, 2), {0.5, 1.5, 2.5, 3.5}})
	opt := &SafetensorsOptions{Names: squareNames, Layout: LayoutPyTorch}
	ts := evenConv()
	err := LoadSafetensors(bytes.NewReader(file), ts, opt)
	if !errors.Is(err, ErrEvenKernelPadding) {
		t.Fatalf("an even padded kernel loaded from PyTorch's layout: %v", err)
	}
	for _, want := range []string{`tensor "c1.kernel" (conv kernel, file tensor "conv1.weight")`, "padded convolution (=+) has an even window on axes kh, kw",
		"ocannlgen pads the extra cell of an even window on the left (seed 002's rule", "PyTorch's padding='same' pads it on the right",
		"shifted by one cell", "SafetensorsOptions.AllowEvenKernelPadding", "odd kernel"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %s:\n%v", want, err)
		}
	}
	if !allSentinel(ts) {
		t.Error("a refused load modified the tensors")
	}
	// Listed with the load's other problems, in one error.
	extra := torchFile(t, []string{"conv1.weight", "conv1.bias", "fc.weight"}, [][]int{{4, 3, 2, 2}, {4}, {1}},
		[][]float32{torchConvWeight(4, 3, 2, 2), {0.5, 1.5, 2.5, 3.5}, {1}})
	err = LoadSafetensors(bytes.NewReader(extra), ts, opt)
	if !errors.Is(err, ErrEvenKernelPadding) || !errors.Is(err, ErrExtra) || !allSentinel(ts) {
		t.Errorf("with an extra tensor: %v", err)
	}
	// One even axis: only it is named.
	one := evenConv()
	one[0].EvenPadded = []int{2}
	if err := LoadSafetensors(bytes.NewReader(file), one, opt); !errors.Is(err, ErrEvenKernelPadding) || !strings.Contains(err.Error(), "even window on axis kw:") {
		t.Errorf("one even axis: %v", err)
	}

	// Confirmed: the kernel loads, converted from PyTorch's layout.
	ts = evenConv()
	confirmed := &SafetensorsOptions{Names: squareNames, Layout: LayoutPyTorch, AllowEvenKernelPadding: true}
	if err := LoadSafetensors(bytes.NewReader(file), ts, confirmed); err != nil {
		t.Fatal(err)
	}
	checkConvKernel(t, ts[0].Data32, 4, 3, 2, 2)

	// The same kernel without EvenPadded (an odd window, or a valid
	// convolution) loads without confirmation.
	ts = evenConv()
	ts[0].EvenPadded = nil
	if err := LoadSafetensors(bytes.NewReader(file), ts, opt); err != nil {
		t.Errorf("a kernel without even padded windows: %v", err)
	}
	// ocannlgen's own files, in either layout, and LayoutNative.
	src := evenConv()
	for i := range src[0].Data32 {
		src[0].Data32[i] = float32(i)
	}
	for _, layout := range []Layout{LayoutNative, LayoutPyTorch} {
		var buf bytes.Buffer
		if err := SaveSafetensors(&buf, src, &SafetensorsOptions{Layout: layout}); err != nil {
			t.Fatal(err)
		}
		for _, read := range []Layout{LayoutAuto, layout} {
			back := evenConv()
			if err := LoadSafetensors(bytes.NewReader(buf.Bytes()), back, &SafetensorsOptions{Layout: read}); err != nil || !slices.Equal(back[0].Data32, src[0].Data32) {
				t.Errorf("our file in layout %v read with %v: %v", layout, read, err)
			}
		}
	}
	native := torchFile(t, []string{"conv1.weight", "conv1.bias"}, [][]int{{4, 2, 2, 3}, {4}}, [][]float32{make([]float32, 48), make([]float32, 4)})
	for _, o := range []*SafetensorsOptions{{Names: squareNames}, {Names: squareNames, Layout: LayoutNative}} {
		if err := LoadSafetensors(bytes.NewReader(native), evenConv(), o); err != nil {
			t.Errorf("a file in ocannlgen's order, layout %v: %v", o.Layout, err)
		}
	}
	// A Permute entry with PyTorch's permutation reads PyTorch's weights
	// as well: refused alike, loaded once confirmed.
	ts = evenConv()
	perm := map[string][]int{"c1.kernel": TorchConv2d()}
	if err := LoadSafetensors(bytes.NewReader(file), ts, &SafetensorsOptions{Names: squareNames, Permute: perm}); !errors.Is(err, ErrEvenKernelPadding) || !allSentinel(ts) {
		t.Errorf("with a PyTorch Permute entry: %v", err)
	}
	if err := LoadSafetensors(bytes.NewReader(file), ts, &SafetensorsOptions{Names: squareNames, Permute: perm, AllowEvenKernelPadding: true}); err != nil {
		t.Errorf("with a PyTorch Permute entry, confirmed: %v", err)
	}
	checkConvKernel(t, ts[0].Data32, 4, 3, 2, 2)
	// A Permute entry of ocannlgen's order (nil) is not PyTorch's.
	if err := LoadSafetensors(bytes.NewReader(native), evenConv(), &SafetensorsOptions{Names: squareNames, Permute: map[string][]int{"c1.kernel": nil}}); err != nil {
		t.Errorf("with a Permute entry in ocannlgen's order: %v", err)
	}
}

// TestEvenPaddedValidation: EvenPadded belongs to a conv kernel and
// lists increasing window axes.
func TestEvenPaddedValidation(t *testing.T) {
	for _, bad := range []Tensor{
		{Name: "a", Dims: []int{2}, Data32: make([]float32, 2), Role: RoleBias, EvenPadded: []int{0}},
		{Name: "a", Dims: []int{2, 2, 2, 2}, Data32: make([]float32, 16), Role: RoleConvKernel, EvenPadded: []int{3}},
		{Name: "a", Dims: []int{2, 2, 2, 2}, Data32: make([]float32, 16), Role: RoleConvKernel, EvenPadded: []int{2, 1}},
		{Name: "a", Dims: []int{2, 2, 2}, Data32: make([]float32, 8), Role: RoleConvKernel, Spatial: []int{1}, EvenPadded: []int{2}},
	} {
		if err := SaveSafetensors(new(bytes.Buffer), []Tensor{bad}, nil); !errors.Is(err, ErrInvalid) {
			t.Errorf("role %v spatial %v even-padded %v: %v, want ErrInvalid", bad.Role, bad.Spatial, bad.EvenPadded, err)
		}
	}
	ok := Tensor{Name: "a", Dims: []int{2, 2, 2, 2}, Data32: make([]float32, 16), Role: RoleConvKernel, EvenPadded: []int{1, 2}}
	if err := SaveSafetensors(new(bytes.Buffer), []Tensor{ok}, nil); err != nil {
		t.Errorf("a rank-4 kernel's default window axes: %v", err)
	}
}
