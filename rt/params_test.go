package rt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"slices"
	"strings"
	"testing"
)

// sampleSet is a mixed-precision parameter set with awkward (finite:
// Load refuses NaN and infinities, see TestLoadRejectsNonFinite) values:
// the largest float32, negative zero and a subnormal.
func sampleSet() []Tensor {
	return []Tensor{
		{Name: "Model.w1", Dims: []int{3, 2}, Data32: []float32{1, -2, 0.5, math.MaxFloat32, float32(math.Copysign(0, -1)), math.Float32frombits(0x00000123)}},
		{Name: "Model.b1", Dims: []int{2}, Data64: []float64{math.Pi, -1e300}},
		{Name: "scalar", Dims: nil, Data32: []float32{42}},
		{Name: "empty64", Dims: []int{0, 5}, Data64: []float64{}},
	}
}

// blank returns tensors with ts' names, dims and element types and
// sentinel data.
func blank(ts []Tensor) []Tensor {
	out := make([]Tensor, len(ts))
	for i, t := range ts {
		out[i] = Tensor{Name: t.Name, Dims: slices.Clone(t.Dims)}
		if t.Data64 != nil {
			out[i].Data64 = make([]float64, len(t.Data64))
			for k := range out[i].Data64 {
				out[i].Data64[k] = 7
			}
		} else {
			out[i].Data32 = make([]float32, len(t.Data32))
			for k := range out[i].Data32 {
				out[i].Data32[k] = 7
			}
		}
	}
	return out
}

func sameBits(a, b []Tensor) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || !slices.Equal(a[i].Dims, b[i].Dims) || len(a[i].Data32) != len(b[i].Data32) || len(a[i].Data64) != len(b[i].Data64) {
			return false
		}
		for k := range a[i].Data32 {
			if math.Float32bits(a[i].Data32[k]) != math.Float32bits(b[i].Data32[k]) {
				return false
			}
		}
		for k := range a[i].Data64 {
			if math.Float64bits(a[i].Data64[k]) != math.Float64bits(b[i].Data64[k]) {
				return false
			}
		}
	}
	return true
}

func saved(t testing.TB, ts []Tensor) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Save(&buf, ts); err != nil {
		t.Fatalf("Save: %v", err)
	}
	return buf.Bytes()
}

func TestSaveLoadRoundTrip(t *testing.T) {
	src := sampleSet()
	file := saved(t, src)
	dst := blank(src)
	slices.Reverse(dst) // order does not matter
	if err := Load(bytes.NewReader(file), dst); err != nil {
		t.Fatalf("Load: %v", err)
	}
	slices.Reverse(dst)
	if !sameBits(src, dst) {
		t.Errorf("round trip changed the tensors:\n got %+v\nwant %+v", dst, src)
	}
	// Only-float32 and only-float64 sets.
	for _, set := range [][]Tensor{src[:1], src[1:2]} {
		d := blank(set)
		if err := Load(bytes.NewReader(saved(t, set)), d); err != nil || !sameBits(set, d) {
			t.Errorf("round trip of %s: err %v, got %+v", set[0].Name, err, d)
		}
	}
	// Load reads exactly one file: two files back to back load in turn.
	two := append(saved(t, src[:1]), saved(t, src[1:2])...)
	r := bytes.NewReader(two)
	a, b := blank(src[:1]), blank(src[1:2])
	if err := Load(r, a); err != nil {
		t.Fatalf("first of two files: %v", err)
	}
	if err := Load(r, b); err != nil || !sameBits(b, src[1:2]) {
		t.Fatalf("second of two files: %v", err)
	}
}

// TestFileLayout pins the format against bytes written out by hand from
// Save's documentation.
func TestFileLayout(t *testing.T) {
	got := saved(t, []Tensor{{Name: "b", Dims: []int{2}, Data32: []float32{1, -2}}})
	var want []byte
	want = append(want, "OCGNPARM"...)
	want = append(want, 1, 0, 0, 0)                         // version
	want = append(want, 30, 0, 0, 0, 0, 0, 0, 0)            // payload length
	want = append(want, 1, 0, 0, 0)                         // count
	want = append(want, 1, 0, 0, 0, 'b')                    // name
	want = append(want, 1)                                  // float32
	want = append(want, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0) // rank 1, dim 2
	want = append(want, 0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0)    // 1.0, -2.0
	want = binary.LittleEndian.AppendUint32(want, crc32.ChecksumIEEE(want[8:]))
	if !bytes.Equal(got, want) {
		t.Errorf("file bytes\n got % x\nwant % x", got, want)
	}
}

// loadErr loads file into a fresh blank copy of want and returns the
// error, checking that the tensors were left untouched.
func loadErr(t *testing.T, file []byte, want []Tensor) error {
	t.Helper()
	dst := blank(want)
	orig := blank(want)
	err := Load(bytes.NewReader(file), dst)
	if err != nil && !sameBits(dst, orig) {
		t.Errorf("failed Load modified the tensors")
	}
	return err
}

func TestLoadShapeMismatch(t *testing.T) {
	src := sampleSet()
	want := sampleSet()
	want[0].Dims = []int{2, 3}
	err := loadErr(t, saved(t, src), want)
	var se *ShapeError
	if !errors.As(err, &se) {
		t.Fatalf("Load with wrong dims: %v, want a *ShapeError", err)
	}
	if se.Name != "Model.w1" || !slices.Equal(se.File, []int{3, 2}) || !slices.Equal(se.Want, []int{2, 3}) {
		t.Errorf("ShapeError = %+v", se)
	}
	for _, s := range []string{`"Model.w1"`, "[3 2]", "[2 3]", "shape mismatch"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %s", err, s)
		}
	}
	// Rank mismatch: [2] stored, [2 1] expected.
	want = sampleSet()
	want[1].Dims = []int{2, 1}
	if err := loadErr(t, saved(t, src), want); !errors.As(err, &se) || !strings.Contains(err.Error(), "file has [2], expected [2 1]") {
		t.Errorf("rank mismatch: %v", err)
	}
}

func TestLoadMissingExtra(t *testing.T) {
	src := sampleSet()
	err := loadErr(t, saved(t, src[:3]), src)
	if !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), `"empty64"`) {
		t.Errorf("missing tensor: %v", err)
	}
	err = loadErr(t, saved(t, src), src[1:])
	if !errors.Is(err, ErrExtra) || !strings.Contains(err.Error(), `"Model.w1"`) {
		t.Errorf("extra tensor: %v", err)
	}
	// Several problems are all reported.
	renamed := sampleSet()
	renamed[2].Name = "scalar2"
	renamed[0].Dims = []int{6}
	err = loadErr(t, saved(t, src), renamed)
	var se *ShapeError
	if !errors.Is(err, ErrMissing) || !errors.Is(err, ErrExtra) || !errors.As(err, &se) {
		t.Errorf("several problems: %v", err)
	}
}

func TestLoadElemType(t *testing.T) {
	src := sampleSet()
	want := sampleSet()
	want[1].Data64, want[1].Data32 = nil, make([]float32, 2)
	err := loadErr(t, saved(t, src), want)
	if !errors.Is(err, ErrElemType) || !strings.Contains(err.Error(), `"Model.b1": file holds float64 data, expected float32`) {
		t.Errorf("float64 file into float32 tensor: %v", err)
	}
}

func TestLoadTruncated(t *testing.T) {
	src := sampleSet()
	file := saved(t, src)
	for n := 0; n < len(file); n++ {
		if err := loadErr(t, file[:n], src); !errors.Is(err, ErrTruncated) {
			t.Fatalf("file cut to %d of %d bytes: %v, want ErrTruncated", n, len(file), err)
		}
	}
}

func TestLoadCorruptByte(t *testing.T) {
	src := sampleSet()
	file := saved(t, src)
	for i := range file {
		bad := slices.Clone(file)
		bad[i] ^= 0x10
		err := loadErr(t, bad, src)
		var want error
		switch {
		case i < 8:
			want = ErrBadMagic
		case i < 12:
			want = ErrVersion
		case i < 20: // the length: longer is truncated, shorter fails the CRC
			if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrChecksum) {
				t.Errorf("byte %d (length) flipped: %v", i, err)
			}
			continue
		default:
			want = ErrChecksum
		}
		if !errors.Is(err, want) {
			t.Errorf("byte %d flipped: %v, want %v", i, err, want)
		}
	}
}

func TestLoadBadMagic(t *testing.T) {
	src := sampleSet()
	file := saved(t, src)
	for _, in := range [][]byte{[]byte("PK\x03\x04 a zip file, not params"), []byte("{}"), append([]byte("OCGNPARX"), file[8:]...)} {
		if err := loadErr(t, in, src); !errors.Is(err, ErrBadMagic) {
			t.Errorf("Load(%q...): %v, want ErrBadMagic", in[:2], err)
		}
	}
}

// wrap frames a payload as a file with a valid checksum.
func wrap(payload []byte) []byte {
	f := []byte("OCGNPARM")
	f = binary.LittleEndian.AppendUint32(f, FormatVersion)
	f = binary.LittleEndian.AppendUint64(f, uint64(len(payload)))
	f = append(f, payload...)
	return binary.LittleEndian.AppendUint32(f, crc32.ChecksumIEEE(f[8:]))
}

func TestLoadMalformedPayload(t *testing.T) {
	src := sampleSet()
	good := saved(t, src)
	payload := good[20 : len(good)-4]
	le := binary.LittleEndian
	entry := func(name string, elem byte, dims []uint64, data int) []byte {
		var b []byte
		b = le.AppendUint32(b, uint32(len(name)))
		b = append(b, name...)
		b = append(b, elem)
		b = le.AppendUint32(b, uint32(len(dims)))
		for _, d := range dims {
			b = le.AppendUint64(b, d)
		}
		return append(b, make([]byte, data)...)
	}
	one := func(e []byte) []byte { return append(le.AppendUint32(nil, 1), e...) }
	for name, p := range map[string][]byte{
		"stray byte":      append(slices.Clone(payload), 0),
		"count too large": append(le.AppendUint32(nil, 1000), payload[4:]...),
		"elem code 3":     one(entry("x", 3, []uint64{1}, 4)),
		"short data":      one(entry("x", 1, []uint64{2}, 4)),
		"huge dims":       one(entry("x", 2, []uint64{1 << 31, 1 << 31, 1 << 31}, 8)),
		"dim over MaxInt": one(entry("x", 2, []uint64{0, 1 << 63}, 0)),
		"empty name":      one(entry("", 1, nil, 4)),
		"duplicate name":  append(le.AppendUint32(nil, 2), append(entry("x", 1, nil, 4), entry("x", 1, nil, 4)...)...),
		"empty":           {},
	} {
		if err := loadErr(t, wrap(p), src); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
	if err := loadErr(t, wrap(payload), src); err != nil {
		t.Errorf("re-wrapped good payload: %v", err)
	}
}

func TestSaveLoadInvalidTensors(t *testing.T) {
	for name, ts := range map[string][]Tensor{
		"dims vs data":   {{Name: "w", Dims: []int{2, 2}, Data32: make([]float32, 3)}},
		"both data":      {{Name: "w", Dims: []int{1}, Data32: []float32{1}, Data64: []float64{1}}},
		"duplicate name": {{Name: "w", Data32: []float32{1}}, {Name: "w", Data32: []float32{1}}},
		"empty name":     {{Data32: []float32{1}}},
		"negative dim":   {{Name: "w", Dims: []int{-1}, Data32: []float32{}}},
	} {
		if err := Save(&bytes.Buffer{}, ts); !errors.Is(err, ErrInvalid) {
			t.Errorf("Save %s: %v, want ErrInvalid", name, err)
		}
		if err := Load(bytes.NewReader(saved(t, sampleSet())), ts); !errors.Is(err, ErrInvalid) {
			t.Errorf("Load %s: %v, want ErrInvalid", name, err)
		}
	}
}

func TestVersion(t *testing.T) {
	file := saved(t, sampleSet())
	binary.LittleEndian.PutUint32(file[8:], 2)
	err := loadErr(t, file, sampleSet())
	if !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("version 2 file: %v", err)
	}
}

// TestLoadRejectsNonFinite: Save writes NaN and infinities, Load refuses
// them with ErrNonFinite naming the tensor, and leaves ts unchanged.
func TestLoadRejectsNonFinite(t *testing.T) {
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		src := []Tensor{
			{Name: "ok", Dims: []int{2}, Data32: []float32{1, 2}},
			{Name: "w", Dims: []int{3}, Data64: []float64{0, bad, bad}},
		}
		var buf bytes.Buffer
		if err := Save(&buf, src); err != nil {
			t.Fatal(err)
		}
		dst := []Tensor{
			{Name: "ok", Dims: []int{2}, Data32: []float32{7, 7}},
			{Name: "w", Dims: []int{3}, Data64: []float64{7, 7, 7}},
		}
		err := Load(bytes.NewReader(buf.Bytes()), dst)
		if !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), `tensor "w": 2 NaN or infinite value(s), the first at offset 1`) {
			t.Fatalf("value %v: error %v", bad, err)
		}
		if dst[0].Data32[0] != 7 || dst[1].Data64[0] != 7 {
			t.Fatalf("value %v: a failed load modified the tensors", bad)
		}
	}
}

// TestUnmarshalExact: Unmarshal loads a byte slice holding exactly one
// file, and refuses one with bytes after the file (ErrTrailingData)
// without touching the tensors; a shorter slice is Load's truncation.
func TestUnmarshalExact(t *testing.T) {
	ts := sampleSet()
	file := saved(t, ts)
	got := blank(ts)
	if err := Unmarshal(file, got); err != nil || !sameBits(got, ts) {
		t.Fatalf("Unmarshal of an exact file: %v", err)
	}
	for _, extra := range [][]byte{{0}, []byte("OCGNPARM"), file} {
		got := blank(ts)
		err := Unmarshal(append(slices.Clone(file), extra...), got)
		if !errors.Is(err, ErrTrailingData) || !strings.Contains(err.Error(), "after the") {
			t.Errorf("%d trailing byte(s): %v, want ErrTrailingData", len(extra), err)
		}
		if !sameBits(got, blank(ts)) {
			t.Errorf("%d trailing byte(s): the tensors were modified", len(extra))
		}
	}
	if err := Unmarshal(file[:len(file)-1], blank(ts)); !errors.Is(err, ErrTruncated) {
		t.Errorf("one byte short: %v, want ErrTruncated", err)
	}
	if err := Unmarshal(nil, blank(ts)); !errors.Is(err, ErrBadMagic) && !errors.Is(err, ErrTruncated) {
		t.Errorf("empty: %v", err)
	}
}
