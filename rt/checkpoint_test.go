package rt

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

func savedCheckpoint(t *testing.T, step int, opt string, ts []Tensor) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := SaveCheckpoint(&buf, step, opt, ts); err != nil {
		t.Fatalf("SaveCheckpoint: %v", err)
	}
	return buf.Bytes()
}

func TestCheckpointRoundTrip(t *testing.T) {
	src := sampleSet()
	for _, step := range []int{0, 1, 12345, math.MaxInt32} {
		file := savedCheckpoint(t, step, "adam", src)
		// The layout: magic, version, step, the name, its CRC, then a
		// parameter file.
		if string(file[:8]) != "OCGNCKPT" || file[8] != CheckpointVersion || int(file[12])|int(file[13])<<8|int(file[14])<<16|int(file[15])<<24 != step ||
			file[20] != 4 || string(file[24:28]) != "adam" || !bytes.Equal(file[32:], saved(t, src)) {
			t.Fatalf("step %d: layout % x", step, file[:40])
		}
		ts := blank(src)
		got, err := LoadCheckpoint(bytes.NewReader(file), "adam", ts)
		if err != nil || got != step || !sameBits(ts, src) {
			t.Fatalf("step %d: LoadCheckpoint = %d, %v; tensors equal: %v", step, got, err, sameBits(ts, src))
		}
	}
}

// loadCkptErr loads file into blank tensors of src and checks that a
// failing load leaves them unchanged.
func loadCkptErr(t *testing.T, file []byte, opt string, src []Tensor) error {
	t.Helper()
	ts := blank(src)
	_, err := LoadCheckpoint(bytes.NewReader(file), opt, ts)
	if err != nil && !sameBits(ts, blank(src)) {
		t.Fatalf("a failed LoadCheckpoint modified the tensors (%v)", err)
	}
	return err
}

func TestCheckpointOptimizerMismatch(t *testing.T) {
	src := sampleSet()
	file := savedCheckpoint(t, 3, "sgd momentum", src)
	err := loadCkptErr(t, file, "adam", src)
	if !errors.Is(err, ErrOptimizer) || !strings.Contains(err.Error(), `optimizer "sgd momentum", expected "adam"`) {
		t.Errorf("err = %v", err)
	}
}

func TestCheckpointTensorMismatch(t *testing.T) {
	src := sampleSet()
	file := savedCheckpoint(t, 3, "adam", src)
	other := sampleSet()
	other[0].Dims = []int{2, 3}
	other[1].Name = "Model.b2"
	err := loadCkptErr(t, file, "adam", other)
	var se *ShapeError
	if !errors.As(err, &se) || se.Name != "Model.w1" || !errors.Is(err, ErrMissing) || !errors.Is(err, ErrExtra) {
		t.Errorf("err = %v", err)
	}
}

func TestCheckpointNotAParameterFile(t *testing.T) {
	src := sampleSet()
	err := loadCkptErr(t, saved(t, src), "adam", src)
	if !errors.Is(err, ErrBadMagic) || !strings.Contains(err.Error(), "parameter file") {
		t.Errorf("a parameter file: %v", err)
	}
	// And Load refuses a checkpoint.
	if err := Load(bytes.NewReader(savedCheckpoint(t, 1, "adam", src)), blank(src)); !errors.Is(err, ErrBadMagic) {
		t.Errorf("Load of a checkpoint: %v", err)
	}
}

func TestCheckpointTruncated(t *testing.T) {
	src := sampleSet()
	file := savedCheckpoint(t, 9, "adamw", src)
	for n := range len(file) {
		if err := loadCkptErr(t, file[:n], "adamw", src); !errors.Is(err, ErrTruncated) {
			t.Fatalf("checkpoint cut to %d of %d bytes: %v, want ErrTruncated", n, len(file), err)
		}
	}
}

func TestCheckpointCorruptByte(t *testing.T) {
	src := sampleSet()
	file := savedCheckpoint(t, 9, "adamw", src)
	const hdr = 8 + 4 + 8 + 4 + len("adamw") + 4
	for i := range file {
		bad := slices.Clone(file)
		bad[i] ^= 0x10
		err := loadCkptErr(t, bad, "adamw", src)
		switch {
		case err == nil:
			t.Errorf("byte %d flipped: loaded", i)
		case i < 8:
			if !errors.Is(err, ErrBadMagic) {
				t.Errorf("byte %d (magic) flipped: %v", i, err)
			}
		case i < 12:
			if !errors.Is(err, ErrVersion) {
				t.Errorf("byte %d (version) flipped: %v", i, err)
			}
		case i >= 20 && i < 24: // the name length: longer is truncated or corrupt, shorter fails the CRC
			if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrChecksum) && !errors.Is(err, ErrCorrupt) {
				t.Errorf("byte %d (name length) flipped: %v", i, err)
			}
		case i < hdr:
			if !errors.Is(err, ErrChecksum) {
				t.Errorf("byte %d (header) flipped: %v", i, err)
			}
		}
	}
}

func TestSaveCheckpointInvalid(t *testing.T) {
	for _, c := range []struct {
		step int
		opt  string
		ts   []Tensor
	}{
		{-1, "adam", sampleSet()},
		{0, strings.Repeat("x", 257), sampleSet()},
		{0, "\xff", sampleSet()},
		{0, "adam", []Tensor{{Name: "a", Dims: []int{2}, Data32: []float32{1}}}},
	} {
		var buf bytes.Buffer
		if err := SaveCheckpoint(&buf, c.step, c.opt, c.ts); !errors.Is(err, ErrInvalid) {
			t.Errorf("SaveCheckpoint(%d, %.10q): %v, want ErrInvalid", c.step, c.opt, err)
		}
	}
}
