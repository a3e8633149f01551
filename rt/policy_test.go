package rt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The regression tests of issue 30's loader classes: state that loads but
// cannot train (class 1), one loading policy for every format (2), strict
// safetensors headers (3), memory bounded by the input (4), bounded error
// messages (5) and option mistakes (6).

// rawCheckpoint writes a checkpoint by hand from the format documented at
// SaveCheckpoint, with any step (SaveCheckpoint refuses some), followed by
// the tensors as Save writes them.
func rawCheckpoint(t *testing.T, step uint64, optimizer string, ts []Tensor) []byte {
	t.Helper()
	h := []byte("OCGNCKPT")
	h = binary.LittleEndian.AppendUint32(h, 1)
	h = binary.LittleEndian.AppendUint64(h, step)
	h = binary.LittleEndian.AppendUint32(h, uint32(len(optimizer)))
	h = append(h, optimizer...)
	h = binary.LittleEndian.AppendUint32(h, crc32.ChecksumIEEE(h[8:]))
	return append(h, saved(t, ts)...)
}

// sentinelSet returns tensors like ts filled with 7s (blank), and a copy
// to compare with after a refused load.
func sentinelSet(ts []Tensor) (dst, before []Tensor) {
	dst = blank(ts)
	before = blank(ts)
	for i := range dst {
		dst[i].Domain = ts[i].Domain
	}
	return dst, before
}

// TestLoadCheckpointStepRange (class 1): a step above MaxStep is refused
// (ErrOutOfRange) and nothing is loaded; MaxStep itself loads;
// SaveCheckpoint refuses to write a step LoadCheckpoint would refuse.
func TestLoadCheckpointStepRange(t *testing.T) {
	for _, step := range []uint64{uint64(maxStep) + 1, math.MaxInt64 - 1, math.MaxInt64, math.MaxUint64} {
		dst, before := sentinelSet(sampleSet())
		got, err := LoadCheckpoint(bytes.NewReader(rawCheckpoint(t, step, "adam", sampleSet())), "adam", dst)
		if !errors.Is(err, ErrOutOfRange) {
			t.Errorf("step %d: got step %d, error %v; want ErrOutOfRange", step, got, err)
		}
		if !sameBits(dst, before) {
			t.Errorf("step %d: a refused checkpoint modified the tensors", step)
		}
	}
	dst, _ := sentinelSet(sampleSet())
	got, err := LoadCheckpoint(bytes.NewReader(rawCheckpoint(t, uint64(maxStep), "adam", sampleSet())), "adam", dst)
	if err != nil || got != maxStep {
		t.Errorf("step MaxStep: got %d, %v", got, err)
	}
	if math.MaxInt > MaxStep {
		big := int(min(math.MaxInt, MaxStep+1))
		if err := SaveCheckpoint(io.Discard, big, "adam", sampleSet()); !errors.Is(err, ErrInvalid) {
			t.Errorf("SaveCheckpoint of step %d: %v, want ErrInvalid", big, err)
		}
	}
}

// TestNextStep (class 1): the step counter saturates at MaxStep and never
// goes below 1, so Adam's step argument is always valid.
func TestNextStep(t *testing.T) {
	top := int(min(MaxStep, math.MaxInt))
	for _, c := range []struct{ in, want int }{
		{0, 1}, {1, 2}, {41, 42}, {top - 1, top}, {top, top}, {math.MaxInt, top}, {-1, 1}, {math.MinInt, 1},
	} {
		if got := NextStep(c.in); got != c.want {
			t.Errorf("NextStep(%d) = %d, want %d", c.in, got, c.want)
		}
	}
}

// adamState is a parameter and Adam's moments for it, as generated
// checkpoints name them.
func adamState(v float32) []Tensor {
	return []Tensor{
		{Name: "w", Dims: []int{2}, Data32: []float32{0.5, -0.25}},
		{Name: "adam.m/w", Dims: []int{2}, Data32: []float32{0.1, -0.1}},
		{Name: "adam.v/w", Dims: []int{2}, Data32: []float32{0.01, v}},
	}
}

// TestLoadCheckpointAdamMoments (class 1): Adam's second moments must not
// be negative (sqrt of a negative is NaN): LoadCheckpoint of an "adam" or
// "adamw" checkpoint refuses them, and the state it accepts trains to
// finite values.
func TestLoadCheckpointAdamMoments(t *testing.T) {
	for _, opt := range []string{"adam", "adamw"} {
		dst, before := sentinelSet(adamState(0))
		_, err := LoadCheckpoint(bytes.NewReader(rawCheckpoint(t, 3, opt, adamState(-0.5))), opt, dst)
		if !errors.Is(err, ErrOutOfRange) || !strings.Contains(err.Error(), `"adam.v/w"`) {
			t.Errorf("%s: negative second moment: %v, want ErrOutOfRange naming adam.v/w", opt, err)
		}
		if !sameBits(dst, before) {
			t.Errorf("%s: a refused checkpoint modified the tensors", opt)
		}
		// -0 is not negative.
		dst, _ = sentinelSet(adamState(0))
		step, err := LoadCheckpoint(bytes.NewReader(rawCheckpoint(t, 3, opt, adamState(float32(math.Copysign(0, -1))))), opt, dst)
		if err != nil {
			t.Fatalf("%s: -0 second moment: %v", opt, err)
		}
		step = NextStep(step)
		Adam(dst[0].Data32, []float32{1, 1}, dst[1].Data32, dst[2].Data32, step, 0.01, 0.9, 0.999, 1e-8, 0, opt == "adamw")
		for _, v := range dst[0].Data32 {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Errorf("%s: a step from accepted state gives %v", opt, dst[0].Data32)
			}
		}
	}
	// The rule belongs to Adam's state: a tensor of that name in another
	// optimizer's checkpoint is only checked for finiteness...
	dst, _ := sentinelSet(adamState(0))
	if _, err := LoadCheckpoint(bytes.NewReader(rawCheckpoint(t, 3, "sgd", adamState(-0.5))), "sgd", dst); err != nil {
		t.Errorf("sgd checkpoint with a negative value: %v", err)
	}
	// ...and Load applies it to a tensor whose Domain says so.
	dst, before := sentinelSet(adamState(0))
	dst[2].Domain = DomainNonNegative
	if err := Load(bytes.NewReader(saved(t, adamState(-0.5))), dst); !errors.Is(err, ErrOutOfRange) {
		t.Errorf("Load of a negative value into DomainNonNegative: %v", err)
	}
	if !sameBits(dst, before) {
		t.Error("a refused Load modified the tensors")
	}
}

// stFile assembles a safetensors file from its JSON header and data.
func stFile(header string, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	b = append(b, header...)
	return append(b, data...)
}

func f32Bytes(vs ...float32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

func f64Bytes(vs ...float64) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

// TestLoadSafetensorsNonFinite (class 2): LoadSafetensors refuses NaN and
// infinities as Load and LoadCheckpoint do, in every dtype, unless the
// tensor's Domain is DomainAny.
func TestLoadSafetensorsNonFinite(t *testing.T) {
	nan16 := []byte{0x00, 0x7e}  // F16 NaN
	inf16 := []byte{0x00, 0x7c}  // F16 +Inf
	nanBF := []byte{0xc0, 0x7f}  // BF16 NaN
	ninfBF := []byte{0x80, 0xff} // BF16 -Inf
	cases := []struct {
		dtype string
		data  []byte
	}{
		{"F32", f32Bytes(1, float32(math.NaN()))},
		{"F32", f32Bytes(float32(math.Inf(1)), 0)},
		{"F64", f64Bytes(math.Inf(-1), 0)},
		{"F64", f64Bytes(0, math.NaN())},
		{"F16", append([]byte{0, 0}, nan16...)},
		{"F16", append(inf16, 0, 0)},
		{"BF16", append(nanBF, 0, 0)},
		{"BF16", append([]byte{0, 0}, ninfBF...)},
	}
	for _, c := range cases {
		hdr := fmt.Sprintf(`{"w":{"dtype":%q,"shape":[2],"data_offsets":[0,%d]}}`, c.dtype, len(c.data))
		for _, elem := range []string{"float32", "float64"} {
			ts := []Tensor{{Name: "w", Dims: []int{2}, Data32: []float32{7, 7}}}
			if elem == "float64" {
				ts = []Tensor{{Name: "w", Dims: []int{2}, Data64: []float64{7, 7}}}
			}
			before := blank(ts)
			err := LoadSafetensors(bytes.NewReader(stFile(hdr, c.data)), ts, nil)
			if !errors.Is(err, ErrNonFinite) || !sameBits(ts, before) {
				t.Errorf("%s %x into %s: %v (loaded %v %v), want ErrNonFinite and nothing loaded", c.dtype, c.data, elem, err, ts[0].Data32, ts[0].Data64)
			}
			ts[0].Domain = DomainAny
			if err := LoadSafetensors(bytes.NewReader(stFile(hdr, c.data)), ts, nil); err != nil {
				t.Errorf("%s %x into %s with DomainAny: %v", c.dtype, c.data, elem, err)
				continue
			}
			v := append(slices.Clone(ts[0].Data64), float64(0))
			if elem == "float32" {
				v = []float64{float64(ts[0].Data32[0]), float64(ts[0].Data32[1])}
			}
			if !math.IsNaN(v[0]) && !math.IsInf(v[0], 0) && !math.IsNaN(v[1]) && !math.IsInf(v[1], 0) {
				t.Errorf("%s %x into %s with DomainAny: loaded %v", c.dtype, c.data, elem, v)
			}
		}
	}
	// Load and LoadCheckpoint let non-finite values through with DomainAny
	// too.
	src := []Tensor{{Name: "w", Dims: []int{2}, Data32: []float32{float32(math.NaN()), float32(math.Inf(-1))}}}
	dst := []Tensor{{Name: "w", Dims: []int{2}, Data32: []float32{7, 7}, Domain: DomainAny}}
	if err := Load(bytes.NewReader(saved(t, src)), dst); err != nil || !sameBits(dst, src[:1:1]) && !math.IsNaN(float64(dst[0].Data32[0])) {
		t.Errorf("Load with DomainAny: %v, %v", err, dst[0].Data32)
	}
	dst[0].Data32 = []float32{7, 7}
	if _, err := LoadCheckpoint(bytes.NewReader(rawCheckpoint(t, 1, "sgd", src)), "sgd", dst); err != nil || !math.IsInf(float64(dst[0].Data32[1]), -1) {
		t.Errorf("LoadCheckpoint with DomainAny: %v, %v", err, dst[0].Data32)
	}
	dst[0].Domain = DomainFinite
	if _, err := LoadCheckpoint(bytes.NewReader(rawCheckpoint(t, 1, "sgd", src)), "sgd", dst); !errors.Is(err, ErrNonFinite) {
		t.Errorf("LoadCheckpoint of NaN: %v", err)
	}
}

// TestLoadSafetensorsOutOfRange (class 2): a float64 value beyond float32's
// range is refused when loading into a float32 tensor, never rounded to
// an infinity (whatever the Domain); one that rounds to the largest
// float32 loads.
func TestLoadSafetensorsOutOfRange(t *testing.T) {
	over := []float64{1e300, -1e39, math.MaxFloat32 * (1 + 0x1p-23)}
	for _, v := range over {
		data := f64Bytes(0.5, v)
		hdr := `{"w":{"dtype":"F64","shape":[2],"data_offsets":[0,16]}}`
		for _, d := range []Domain{DomainFinite, DomainAny} {
			ts := []Tensor{{Name: "w", Dims: []int{2}, Data32: []float32{7, 7}, Domain: d}}
			err := LoadSafetensors(bytes.NewReader(stFile(hdr, data)), ts, nil)
			if !errors.Is(err, ErrOutOfRange) || ts[0].Data32[0] != 7 {
				t.Errorf("F64 %g into float32 (domain %d): %v, loaded %v; want ErrOutOfRange and nothing loaded", v, d, err, ts[0].Data32)
			}
		}
		ts := []Tensor{{Name: "w", Dims: []int{2}, Data64: []float64{7, 7}}}
		if err := LoadSafetensors(bytes.NewReader(stFile(`{"w":{"dtype":"F64","shape":[2],"data_offsets":[0,16]}}`, data)), ts, nil); err != nil || ts[0].Data64[1] != v {
			t.Errorf("F64 %g into float64: %v, %v", v, err, ts[0].Data64)
		}
	}
	// Rounds to MaxFloat32: in range.
	v := math.MaxFloat32 * (1 + 0x1p-25)
	ts := []Tensor{{Name: "w", Dims: []int{1}, Data32: []float32{7}}}
	if err := LoadSafetensors(bytes.NewReader(stFile(`{"w":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}}`, f64Bytes(v))), ts, nil); err != nil || ts[0].Data32[0] != math.MaxFloat32 {
		t.Errorf("F64 %g into float32: %v, %v", v, err, ts[0].Data32)
	}
}

// TestSafetensorsStrictHeader (class 3): headers the reference reader
// (the Rust safetensors crate) refuses are refused, where encoding/json
// would take the last duplicate or match a field case-insensitively.
func TestSafetensorsStrictHeader(t *testing.T) {
	data := f32Bytes(1, 2)
	good := `{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`
	ts := func() []Tensor { return []Tensor{{Name: "w", Dims: []int{2}, Data32: []float32{7, 7}}} }
	if err := LoadSafetensors(bytes.NewReader(stFile(good, data)), ts(), nil); err != nil {
		t.Fatalf("good header: %v", err)
	}
	bad := map[string]string{
		"duplicate tensor":             `{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`,
		"duplicate dtype":              `{"w":{"dtype":"F64","dtype":"F32","shape":[2],"data_offsets":[0,8]}}`,
		"duplicate shape":              `{"w":{"dtype":"F32","shape":[1],"shape":[2],"data_offsets":[0,8]}}`,
		"duplicate offsets":            `{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4],"data_offsets":[0,8]}}`,
		"DTYPE":                        `{"w":{"DTYPE":"F32","shape":[2],"data_offsets":[0,8]}}`,
		"Shape":                        `{"w":{"dtype":"F32","Shape":[2],"data_offsets":[0,8]}}`,
		"Data_Offsets":                 `{"w":{"dtype":"F32","shape":[2],"Data_Offsets":[0,8]}}`,
		"three offsets":                `{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8,8]}}`,
		"one offset":                   `{"w":{"dtype":"F32","shape":[2],"data_offsets":[8]}}`,
		"no offsets":                   `{"w":{"dtype":"F32","shape":[2]}}`,
		"no dtype":                     `{"w":{"shape":[2],"data_offsets":[0,8]}}`,
		"no shape":                     `{"w":{"dtype":"F32","data_offsets":[0,8]}}`,
		"null offsets":                 `{"w":{"dtype":"F32","shape":[2],"data_offsets":null}}`,
		"null shape":                   `{"w":{"dtype":"F32","shape":null,"data_offsets":[0,8]}}`,
		"float offset":                 `{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8.0]}}`,
		"exponent dim":                 `{"w":{"dtype":"F32","shape":[2e0],"data_offsets":[0,8]}}`,
		"negative dim":                 `{"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`,
		"unknown field":                `{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}}`,
		"entry not an object":          `{"w":[1,2]}`,
		"null entry":                   `{"w":null}`,
		"null metadata":                `{"__metadata__":null,"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`,
		"metadata array":               `{"__metadata__":["a"],"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`,
		"metadata string":              `{"__metadata__":"a","w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`,
		"metadata number value":        `{"__metadata__":{"a":1},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`,
		"metadata null value":          `{"__metadata__":{"a":null},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`,
		"repeated metadata":            `{"__metadata__":{},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"__metadata__":{}}`,
		"duplicate metadata key":       `{"__metadata__":{"a":"1","a":"2"},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`,
		"top level array":              `[{"dtype":"F32","shape":[2],"data_offsets":[0,8]}]`,
		"trailing JSON":                good + `{}`,
		"dtype number":                 `{"w":{"dtype":4,"shape":[2],"data_offsets":[0,8]}}`,
		"offset beyond int64":          `{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,18446744073709551624]}}`,
		"unterminated":                 `{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}`,
		"case-folded duplicate fields": `{"w":{"dtype":"F32","Dtype":"F64","shape":[2],"data_offsets":[0,8]}}`,
	}
	for what, hdr := range bad {
		dst := ts()
		err := LoadSafetensors(bytes.NewReader(stFile(hdr, data)), dst, &SafetensorsOptions{IgnoreExtra: true})
		if !errors.Is(err, ErrSafetensors) {
			t.Errorf("%s: %v, want ErrSafetensors", what, err)
		}
		if dst[0].Data32[0] != 7 {
			t.Errorf("%s: loaded %v", what, dst[0].Data32)
		}
	}
}

// allocated returns the bytes f allocates (runtime.MemStats.TotalAlloc).
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// zeros is an endless stream of zero bytes, limited by N.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	if z.n <= 0 {
		return 0, io.EOF
	}
	k := int(min(int64(len(p)), z.n))
	clear(p[:k])
	z.n -= int64(k)
	return k, nil
}

// TestLoadersMemoryBounded (class 4): what a loader allocates is bounded
// by the bytes the input actually holds and by the tensors it loads,
// never by a length the file claims or by a stream that goes on: each
// case may allocate at most 16 KiB (fixed costs: maps, messages, the
// decoder) plus 16 times the bytes the loader must keep (the header, the
// loaded tensors' data, or what the input holds of them).
func TestLoadersMemoryBounded(t *testing.T) {
	within := func(what string, kept int, load func() error, sentinel error) {
		t.Helper()
		var err error
		n := allocated(func() { err = load() })
		if sentinel == nil && err != nil || sentinel != nil && !errors.Is(err, sentinel) {
			t.Errorf("%s: %.200v, want %v", what, err, sentinel)
		}
		if limit := uint64(16<<10 + 16*kept); n > limit {
			t.Errorf("%s: allocated %d bytes, more than %d", what, n, limit)
		} else {
			t.Logf("%s: allocated %d bytes (limit %d)", what, n, limit)
		}
	}
	ts := func() []Tensor { return []Tensor{{Name: "w", Dims: []int{2}, Data32: []float32{7, 7}}} }
	const stream = 16 << 20

	// A 383-byte safetensors file that claims a 100 MiB header.
	small := stFile(strings.Repeat(" ", 375), nil)
	binary.LittleEndian.PutUint64(small, 100<<20)
	within("LoadSafetensors of a 383-byte file claiming a 100 MiB header", len(small),
		func() error { return LoadSafetensors(bytes.NewReader(small), ts(), nil) }, ErrSafetensors)
	// A valid file followed by a 16 MiB stream.
	file := stFile(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, f32Bytes(1, 2))
	within("LoadSafetensors of a valid file followed by 16 MiB", len(file),
		func() error { return LoadSafetensors(io.MultiReader(bytes.NewReader(file), &zeros{stream}), ts(), nil) }, ErrSafetensors)
	// A header declaring a 16 MiB tensor the model does not have
	// (IgnoreExtra): skipped, not buffered.
	hdr := fmt.Sprintf(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"x":{"dtype":"F32","shape":[%d],"data_offsets":[8,%d]}}`, stream/4, 8+stream)
	big := stFile(hdr, f32Bytes(1, 2))
	within("LoadSafetensors skipping an extra 16 MiB tensor", len(big), func() error {
		return LoadSafetensors(io.MultiReader(bytes.NewReader(big), &zeros{stream}), ts(), &SafetensorsOptions{IgnoreExtra: true})
	}, nil)

	// A parameter file whose payload claims 1 TiB and holds 16 MiB.
	pf := saved(t, ts())
	binary.LittleEndian.PutUint64(pf[12:], 1<<40)
	within("Load of a payload claiming 1 TiB, 16 MiB present", len(pf),
		func() error { return Load(io.MultiReader(bytes.NewReader(pf), &zeros{stream}), ts()) }, ErrTruncated)
	// A parameter file and a checkpoint with a 16 MiB tensor the model
	// does not have.
	withExtra := []Tensor{{Name: "w", Dims: []int{2}, Data32: []float32{1, 2}}, {Name: "x", Dims: []int{stream / 4}, Data32: make([]float32, stream/4)}}
	extra := saved(t, withExtra)
	within("Load of a file with an extra 16 MiB tensor", 100,
		func() error { return Load(bytes.NewReader(extra), ts()) }, ErrExtra)
	ck := rawCheckpoint(t, 1, "sgd", withExtra)
	within("LoadCheckpoint of a file with an extra 16 MiB tensor", 100, func() error {
		_, err := LoadCheckpoint(bytes.NewReader(ck), "sgd", ts())
		return err
	}, ErrExtra)
	// A tensor the model has, in a file cut short: the buffer grows with
	// what the file holds, not with the tensor's size.
	huge := []Tensor{{Name: "w", Dims: []int{stream / 4}, Data32: make([]float32, stream/4)}}
	cut := saved(t, huge)[:4096]
	within("Load of a 4 KiB file holding the start of a 16 MiB tensor", len(cut),
		func() error { return Load(bytes.NewReader(cut), huge) }, ErrTruncated)
	stCut := stFile(fmt.Sprintf(`{"w":{"dtype":"F32","shape":[%d],"data_offsets":[0,%d]}}`, stream/4, stream), make([]byte, 4096))
	within("LoadSafetensors of a 4 KiB file holding the start of a 16 MiB tensor", len(stCut),
		func() error { return LoadSafetensors(bytes.NewReader(stCut), huge, nil) }, ErrSafetensors)
	// A whole file of the 16 MiB tensor loads, keeping its data once.
	whole := saved(t, huge)
	// (Its buffer doubles as the data arrives: about twice the data.)
	within("Load of a 16 MiB tensor", len(whole)/4, func() error { return Load(bytes.NewReader(whole), huge) }, nil)
}

// TestLoaderErrorsBounded (class 5): an error quotes at most a bounded
// part of what the file holds (names, dtypes, metadata), and lists a
// bounded number of problems.
func TestLoaderErrorsBounded(t *testing.T) {
	const limit = 4096
	long := strings.Repeat("n", 10<<20)
	ts := func() []Tensor { return []Tensor{{Name: "w", Dims: []int{2}, Data32: []float32{7, 7}}} }
	check := func(what string, err error, sentinel error) {
		t.Helper()
		if err == nil || sentinel != nil && !errors.Is(err, sentinel) {
			t.Errorf("%s: %.300v, want %v", what, err, sentinel)
			return
		}
		if msg := err.Error(); len(msg) > limit {
			t.Errorf("%s: a %d-byte message (starts %.200q)", what, len(msg), msg)
		}
	}
	w := `"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}`
	check("safetensors extra tensor with a 10 MiB name",
		LoadSafetensors(bytes.NewReader(stFile(`{`+w+`,"`+long+`":{"dtype":"F32","shape":[0],"data_offsets":[8,8]}}`, f32Bytes(1, 2))), ts(), nil), ErrExtra)
	check("safetensors 10 MiB dtype",
		LoadSafetensors(bytes.NewReader(stFile(`{"w":{"dtype":"`+long+`","shape":[2],"data_offsets":[0,8]}}`, f32Bytes(1, 2))), ts(), nil), ErrDType)
	check("safetensors 10 MiB layout metadata",
		LoadSafetensors(bytes.NewReader(stFile(`{"__metadata__":{"ocannlgen.layout":"`+long+`"},`+w+`}`, f32Bytes(1, 2))), ts(), nil), ErrSafetensors)
	check("safetensors 10 MiB field name",
		LoadSafetensors(bytes.NewReader(stFile(`{"w":{"`+long+`":"F32","shape":[2],"data_offsets":[0,8]}}`, f32Bytes(1, 2))), ts(), nil), ErrSafetensors)
	check("safetensors rank 1M",
		LoadSafetensors(bytes.NewReader(stFile(`{"w":{"dtype":"F32","shape":[2`+strings.Repeat(",1", 1<<20)+`],"data_offsets":[0,8]}}`, f32Bytes(1, 2))), ts(), nil), nil)
	check("parameter file extra tensor with a 10 MiB name",
		Load(bytes.NewReader(saved(t, []Tensor{{Name: "w", Dims: []int{2}, Data32: []float32{1, 2}}, {Name: long, Data32: []float32{1}}})), ts()), ErrExtra)
	many := []Tensor{{Name: "w", Dims: []int{2}, Data32: []float32{1, 2}}}
	for i := range 5000 {
		many = append(many, Tensor{Name: fmt.Sprintf("extra%d", i), Data32: []float32{1}})
	}
	check("parameter file with 5000 extra tensors", Load(bytes.NewReader(saved(t, many)), ts()), ErrExtra)
	check("parameter file rank 100k",
		Load(bytes.NewReader(saved(t, []Tensor{{Name: "w", Dims: append([]int{2}, make([]int, 100000)...), Data32: []float32{}}})), []Tensor{{Name: "w", Dims: []int{2}, Data32: []float32{7, 7}}}), nil)
}

// TestSafetensorsOptionErrors (class 6): option keys that name no
// parameter and two parameters mapped to one file tensor are errors
// (ErrInvalid) for LoadSafetensors as for SaveSafetensors, before
// anything is read or written.
func TestSafetensorsOptionErrors(t *testing.T) {
	ts := func() []Tensor {
		return []Tensor{
			{Name: "a", Dims: []int{2, 3}, Data32: []float32{1, 2, 3, 4, 5, 6}},
			{Name: "b", Dims: []int{2}, Data32: []float32{1, 2}},
		}
	}
	var file bytes.Buffer
	if err := SaveSafetensors(&file, ts(), nil); err != nil {
		t.Fatal(err)
	}
	bad := map[string]*SafetensorsOptions{
		"two parameters, one file tensor":     {Names: map[string]string{"a": "x", "b": "x"}},
		"mapped onto another parameter's own": {Names: map[string]string{"a": "b"}},
		"Names key names no parameter":        {Names: map[string]string{"typo": "a"}},
		"Permute key names no parameter":      {Permute: map[string][]int{"aa": {1, 0}}},
		"file name __metadata__":              {Names: map[string]string{"a": "__metadata__"}},
		"empty file name":                     {Names: map[string]string{"a": ""}},
	}
	for what, opt := range bad {
		dst := blank(ts())
		before := blank(ts())
		if err := LoadSafetensors(bytes.NewReader(file.Bytes()), dst, opt); !errors.Is(err, ErrInvalid) {
			t.Errorf("LoadSafetensors, %s: %v, want ErrInvalid", what, err)
		}
		if !sameBits(dst, before) {
			t.Errorf("LoadSafetensors, %s: loaded", what)
		}
		var out bytes.Buffer
		if err := SaveSafetensors(&out, ts(), opt); !errors.Is(err, ErrInvalid) || out.Len() != 0 {
			t.Errorf("SaveSafetensors, %s: %v (%d bytes written), want ErrInvalid", what, err, out.Len())
		}
	}
	// Swapping two names is no conflict.
	swap := &SafetensorsOptions{Names: map[string]string{"a": "b", "b": "a"}, Permute: map[string][]int{"a": {1, 0}}}
	var out bytes.Buffer
	if err := SaveSafetensors(&out, ts(), swap); err != nil {
		t.Fatal(err)
	}
	dst := blank(ts())
	if err := LoadSafetensors(&out, dst, swap); err != nil || !sameBits(dst, ts()) {
		t.Errorf("swapped names: %v", err)
	}
}
