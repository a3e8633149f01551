package rt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

// The fuzz targets of the loaders. Each asserts, besides "never panics",
// the loading policy (docs/language.md, "The loading policy"): on any
// error the destination tensors are bit-identical to before (all or
// nothing), and what a loader accepts is in each tensor's Domain (and,
// for a checkpoint, a step of at most MaxStep and Adam's second moments
// not negative).

// domainSet is sampleSet's names, dims and element types with a domain
// per tensor, so that the fuzzers exercise every domain.
func domainSet() []Tensor {
	ts := blank(sampleSet())
	ts[0].Domain = DomainAny
	ts[1].Domain = DomainNonNegative
	return ts
}

// inDomain reports the first value of ts outside its tensor's Domain.
func inDomain(ts []Tensor) (string, bool) {
	for _, t := range ts {
		vs := slices.Clone(t.Data64)
		for _, v := range t.Data32 {
			vs = append(vs, float64(v))
		}
		for k, v := range vs {
			nonFinite := math.IsNaN(v) || math.IsInf(v, 0)
			if t.Domain != DomainAny && nonFinite || t.Domain == DomainNonNegative && v < 0 {
				return fmt.Sprintf("%s[%d] = %v", t.Name, k, v), false
			}
		}
	}
	return "", true
}

// checkAllOrNothing runs load on tensors like ts filled with sentinels
// and checks the policy: on an error nothing changed, on success every
// value is in its tensor's Domain. It returns the loaded tensors, or nil.
func checkAllOrNothing(t *testing.T, ts []Tensor, load func([]Tensor) error) []Tensor {
	t.Helper()
	dst, before := sentinelSet(ts)
	if err := load(dst); err != nil {
		if !sameBits(dst, before) {
			t.Fatalf("a failed load modified the tensors: %v", err)
		}
		if len(err.Error()) > 1<<16 {
			t.Fatalf("a %d-byte error message", len(err.Error()))
		}
		return nil
	}
	if where, ok := inDomain(dst); !ok {
		t.Fatalf("loaded a value outside its tensor's Domain at %s", where)
	}
	return dst
}

// FuzzLoad feeds arbitrary bytes to Load, both as they are and framed as
// a file with a valid checksum (so that mutations reach the payload
// parser instead of stopping at the CRC), into tensors of every Domain.
// Load must never panic, must leave the tensors unchanged on any error,
// must load only values in each tensor's Domain, and a successful Load
// must round-trip through Save.
func FuzzLoad(f *testing.F) {
	var buf bytes.Buffer
	if err := Save(&buf, sampleSet()); err != nil {
		f.Fatal(err)
	}
	file := buf.Bytes()
	f.Add(file)
	f.Add(file[20 : len(file)-4])
	f.Add(file[:len(file)/2])
	f.Add([]byte("OCGNPARM"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range [][]byte{data, wrap(data)} {
			for _, set := range [][]Tensor{sampleSet(), domainSet()} {
				ts := checkAllOrNothing(t, set, func(dst []Tensor) error { return Load(bytes.NewReader(in), dst) })
				if ts == nil {
					continue
				}
				var out bytes.Buffer
				if err := Save(&out, ts); err != nil {
					t.Fatalf("Save after a successful Load: %v", err)
				}
				again, _ := sentinelSet(ts)
				if err := Load(&out, again); err != nil || !sameBits(ts, again) {
					t.Fatalf("loaded tensors do not round-trip: %v", err)
				}
			}
		}
	})
}

// adamSet is a float32 parameter with Adam's moments as generated
// checkpoints name them, beside sampleSet's tensors.
func adamSet() []Tensor {
	return append(sampleSet(),
		Tensor{Name: "adam.m/Model.w1", Dims: []int{3, 2}, Data32: []float32{0.1, -0.2, 0, 1, -1, 0.5}},
		Tensor{Name: "adam.v/Model.w1", Dims: []int{3, 2}, Data32: []float32{0.01, 0.04, 0, 1, 1, 0.25}},
	)
}

// frameCheckpoint makes a checkpoint of optimizer "adam" whose step is
// the first 8 bytes of data and whose tensors are the payload in the
// rest, with valid checksums.
func frameCheckpoint(data []byte) []byte {
	if len(data) < 8 {
		return data
	}
	h := []byte("OCGNCKPT")
	h = binary.LittleEndian.AppendUint32(h, 1)
	h = append(h, data[:8]...)
	h = binary.LittleEndian.AppendUint32(h, 4)
	h = append(h, "adam"...)
	h = binary.LittleEndian.AppendUint32(h, crc32.ChecksumIEEE(h[8:]))
	return append(h, wrap(data[8:])...)
}

// FuzzLoadCheckpoint feeds arbitrary bytes to LoadCheckpoint, as they are
// and framed with valid checksums (the first 8 bytes the step, the rest
// the payload). It must never panic and must leave the tensors unchanged
// on any error; a successful load must hold a step of at most MaxStep,
// finite values and Adam's second moments not negative, and must
// round-trip through SaveCheckpoint with the same step.
func FuzzLoadCheckpoint(f *testing.F) {
	var buf bytes.Buffer
	if err := SaveCheckpoint(&buf, 17, "adam", adamSet()); err != nil {
		f.Fatal(err)
	}
	file := buf.Bytes()
	f.Add(file)
	f.Add(file[:len(file)/2])
	f.Add(file[:40])
	f.Add([]byte("OCGNCKPT"))
	// Framed: step 3, then the payload of adamSet.
	payload := saved(f, adamSet())
	f.Add(append(binary.LittleEndian.AppendUint64(nil, 3), payload[20:len(payload)-4]...))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range [][]byte{data, frameCheckpoint(data)} {
			var step int
			ts := checkAllOrNothing(t, adamSet(), func(dst []Tensor) error {
				var err error
				step, err = LoadCheckpoint(bytes.NewReader(in), "adam", dst)
				return err
			})
			if ts == nil {
				continue
			}
			if step < 0 || step > maxStep {
				t.Fatalf("loaded step %d", step)
			}
			for _, tt := range ts {
				if strings.HasPrefix(tt.Name, "adam.v/") {
					for _, v := range tt.Data32 {
						if v < 0 {
							t.Fatalf("loaded a negative second moment %v", v)
						}
					}
				}
			}
			var out bytes.Buffer
			if err := SaveCheckpoint(&out, step, "adam", ts); err != nil {
				t.Fatalf("SaveCheckpoint after a successful LoadCheckpoint: %v", err)
			}
			again, _ := sentinelSet(ts)
			if s, err := LoadCheckpoint(&out, "adam", again); err != nil || s != step || !sameBits(ts, again) {
				t.Fatalf("a loaded checkpoint does not round-trip: step %d -> %d, %v", step, s, err)
			}
		}
	})
}

// FuzzLoadSafetensors feeds arbitrary bytes to LoadSafetensors with the
// fixture's options (names, a permutation, several dtypes), and as a
// header (with the fixture's data buffer) without options, into float32
// and float64 tensors of every Domain. It must never panic, must leave
// the tensors unchanged on any error and must load only values in each
// tensor's Domain (never an infinity rounded from a finite float64).
func FuzzLoadSafetensors(f *testing.F) {
	good, err := os.ReadFile("testdata/safetensors/fixture.safetensors")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:40])
	n := binary.LittleEndian.Uint64(good)
	f.Add(good[8 : 8+n])
	f.Add([]byte(`{"w":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},"__metadata__":{"a":"b"}}`))
	f.Add([]byte(`{"w":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},"__metadata__":{"ocannlgen.layout":"native","ocannlgen.views":"{\"w\":{\"dims\":[2,1],\"perm\":[1,0],\"file\":[2]}}"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAllOrNothing(t, fixtureTensors(), func(dst []Tensor) error {
			return LoadSafetensors(bytes.NewReader(data), dst, fixtureOptions())
		})
		// As a header of a file whose data is 16 float64 bytes: 1e300 (beyond
		// float32) and -2.
		file := stFile(string(data), f64Bytes(1e300, -2))
		for _, set := range [][]Tensor{
			{{Name: "w", Dims: []int{2}, Data32: []float32{7, 7}}},
			{{Name: "w", Dims: []int{2}, Data64: []float64{7, 7}, Domain: DomainNonNegative}},
			{{Name: "w", Dims: []int{2}, Data32: []float32{7, 7}, Domain: DomainAny}},
		} {
			ts := checkAllOrNothing(t, set, func(dst []Tensor) error {
				return LoadSafetensors(bytes.NewReader(file), dst, &SafetensorsOptions{IgnoreExtra: true})
			})
			for _, tt := range ts {
				for _, v := range tt.Data32 {
					if math.IsInf(float64(v), 0) && tt.Domain != DomainAny {
						t.Fatalf("loaded %v", v)
					}
				}
			}
		}
	})
}
