package rt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

// fixtureTensors are the parameters the committed fixture maps to (see
// testdata/safetensors/make_fixture.py), under model-style names.
func fixtureTensors() []Tensor {
	return []Tensor{
		{Name: "net.w", Dims: []int{3, 2}, Data32: make([]float32, 6)},
		{Name: "net.b", Dims: []int{3}, Data32: make([]float32, 3)},
		{Name: "conv.k", Dims: []int{4, 3, 3, 2}, Data32: make([]float32, 72)},
		{Name: "half", Dims: []int{2}, Data64: make([]float64, 2)},
		{Name: "w64", Dims: []int{2, 2}, Data64: make([]float64, 4)},
	}
}

func fixtureOptions() *SafetensorsOptions {
	return &SafetensorsOptions{
		Names:   map[string]string{"net.w": "fc.weight", "net.b": "fc.bias", "conv.k": "conv.weight"},
		Permute: map[string][]int{"conv.k": TorchConv2d()},
	}
}

func readFixture(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/safetensors/fixture.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLoadSafetensorsFixture loads the file written by the Python script
// and checks every value against the script's formulas, the conv kernel
// transposed from [oc][ic][kh][kw] to [oc][kh][kw][ic].
func TestLoadSafetensorsFixture(t *testing.T) {
	ts := fixtureTensors()
	if err := LoadSafetensors(bytes.NewReader(readFixture(t)), ts, fixtureOptions()); err != nil {
		t.Fatal(err)
	}
	for i, v := range ts[0].Data32 {
		if want := float32(float64(i)*0.25 - 0.5); v != want {
			t.Errorf("net.w[%d] = %v, want %v", i, v, want)
		}
	}
	if want := []float32{1, -2.5, 0.15625}; !slices.Equal(ts[1].Data32, want) {
		t.Errorf("net.b = %v, want %v (from BF16)", ts[1].Data32, want)
	}
	k := ts[2].Data32
	for oc := range 4 {
		for kh := range 3 {
			for kw := range 3 {
				for ic := range 2 {
					got := k[((oc*3+kh)*3+kw)*2+ic]
					if want := float32(oc*1000 + ic*100 + kh*10 + kw); got != want {
						t.Fatalf("conv.k[%d][%d][%d][%d] = %v, want %v", oc, kh, kw, ic, got, want)
					}
				}
			}
		}
	}
	if want := []float64{0.5, -1.25}; !slices.Equal(ts[3].Data64, want) {
		t.Errorf("half = %v, want %v (from F16)", ts[3].Data64, want)
	}
	if want := []float64{1e-300, 2, 3, 4}; !slices.Equal(ts[4].Data64, want) {
		t.Errorf("w64 = %v, want %v", ts[4].Data64, want)
	}
}

// TestSafetensorsRoundTrip saves the loaded fixture and loads it again:
// the values, and with the same options the file's own layout, survive.
func TestSafetensorsRoundTrip(t *testing.T) {
	ts := fixtureTensors()
	opt := fixtureOptions()
	if err := LoadSafetensors(bytes.NewReader(readFixture(t)), ts, opt); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	opt.Metadata = map[string]string{"format": "pt"}
	if err := SaveSafetensors(&buf, ts, opt); err != nil {
		t.Fatal(err)
	}
	if n := binary.LittleEndian.Uint64(buf.Bytes()); (8+n)%8 != 0 {
		t.Errorf("header length %d is not padded to 8", n)
	}
	back := fixtureTensors()
	if err := LoadSafetensors(bytes.NewReader(buf.Bytes()), back, opt); err != nil {
		t.Fatal(err)
	}
	for i := range ts {
		if !slices.Equal(ts[i].Data32, back[i].Data32) || !slices.Equal(ts[i].Data64, back[i].Data64) {
			t.Errorf("%s changed in the round trip", ts[i].Name)
		}
	}
	// The saved conv kernel is in PyTorch's layout again: element
	// [oc=1][ic=1][kh=2][kw=0] is at offset ((1*2+1)*3+2)*3+0.
	raw := fixtureTensors()[2:3]
	raw[0].Name = "conv.weight"
	raw[0].Dims = []int{4, 2, 3, 3}
	if err := LoadSafetensors(bytes.NewReader(buf.Bytes()), raw, &SafetensorsOptions{IgnoreExtra: true}); err != nil {
		t.Fatal(err)
	}
	if got := raw[0].Data32[((1*2+1)*3+2)*3]; got != 1120 {
		t.Errorf("saved layout: got %v at [1][1][2][0], want 1120", got)
	}
}

// TestLoadSafetensorsMismatch: every mismatching tensor is listed, and
// nothing is written.
func TestLoadSafetensorsMismatch(t *testing.T) {
	ts := fixtureTensors()
	ts[0].Dims, ts[0].Data32 = []int{2, 3}, make([]float32, 6) // transposed
	ts[2].Dims = []int{4, 3, 2, 3}                             // wrong kernel layout
	ts = append(ts, Tensor{Name: "absent", Dims: []int{1}, Data32: []float32{7}})
	for i := range ts {
		for k := range ts[i].Data32 {
			ts[i].Data32[k] = 42
		}
		for k := range ts[i].Data64 {
			ts[i].Data64[k] = 42
		}
	}
	opt := fixtureOptions()
	delete(opt.Names, "net.b") // fc.bias becomes an extra tensor, net.b missing
	err := LoadSafetensors(bytes.NewReader(readFixture(t)), ts, opt)
	if err == nil {
		t.Fatal("no error")
	}
	var shapes []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var se *ShapeError
		if errors.As(e, &se) {
			shapes = append(shapes, se.Name)
		}
	}
	if !slices.Equal(shapes, []string{"net.w", "conv.k"}) {
		t.Errorf("shape errors for %v, want net.w and conv.k; error:\n%v", shapes, err)
	}
	msg := err.Error()
	for _, want := range []string{`"net.b"`, `"absent"`, `"fc.bias" (BF16 [3]) is in the file`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not mention %s:\n%s", want, msg)
		}
	}
	if !errors.Is(err, ErrMissing) || !errors.Is(err, ErrExtra) {
		t.Errorf("error should wrap ErrMissing and ErrExtra: %v", err)
	}
	for _, tt := range ts {
		for _, v := range tt.Data32 {
			if v != 42 && v != 7 {
				t.Fatalf("%s was modified by a failed load", tt.Name)
			}
		}
		for _, v := range tt.Data64 {
			if v != 42 {
				t.Fatalf("%s was modified by a failed load", tt.Name)
			}
		}
	}
}

// TestLoadSafetensorsDamaged: truncations and corrupted headers give
// ErrSafetensors, never a panic.
func TestLoadSafetensorsDamaged(t *testing.T) {
	good := readFixture(t)
	for n := 0; n < len(good); n += 7 {
		ts := fixtureTensors()
		if err := LoadSafetensors(bytes.NewReader(good[:n]), ts, fixtureOptions()); err == nil {
			t.Fatalf("truncated to %d bytes: no error", n)
		}
	}
	huge := slices.Clone(good)
	binary.LittleEndian.PutUint64(huge, math.MaxUint64)
	if err := LoadSafetensors(bytes.NewReader(huge), fixtureTensors(), fixtureOptions()); !errors.Is(err, ErrSafetensors) {
		t.Errorf("huge header length: %v", err)
	}
	trailing := append(slices.Clone(good), 0)
	if err := LoadSafetensors(bytes.NewReader(trailing), fixtureTensors(), fixtureOptions()); !errors.Is(err, ErrSafetensors) {
		t.Errorf("trailing byte: %v", err)
	}
}
