package model

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

// resumable is what the resume test needs of a generated model whose
// parameters and optimizer state are comparable with ==.
type resumable[T float32 | float64, S comparable] interface {
	Init(seed uint64)
	TrainStep(x *[4][3]T, y *[4][2]T) T
	SaveCheckpoint(w io.Writer) error
	LoadCheckpoint(r io.Reader) error
	Save(w io.Writer) error
	Load(r io.Reader) error
}

// checkResume trains k steps, checkpoints, resumes in a fresh model and
// trains n more; the parameters, the state (state returns Params, the
// optimizer's buffers and Step) and every loss must equal k+n
// uninterrupted steps bit for bit. Resuming from the parameters alone
// (Save/Load) must not, or the optimizer state would be untested.
func checkResume[T float32 | float64, S comparable](t *testing.T, fresh func() resumable[T, S], state func(resumable[T, S]) S, k, n int) {
	t.Helper()
	x, y := toyData[T]()
	whole := fresh()
	whole.Init(11)
	var losses []T
	for range k + n {
		losses = append(losses, whole.TrainStep(x, y))
	}

	first := fresh()
	first.Init(11)
	for range k {
		first.TrainStep(x, y)
	}
	var ckpt, params bytes.Buffer
	if err := first.SaveCheckpoint(&ckpt); err != nil {
		t.Fatal(err)
	}
	if err := first.Save(&params); err != nil {
		t.Fatal(err)
	}
	resumed := fresh()
	resumed.Init(99) // different values everywhere: the load must replace them all
	if err := resumed.LoadCheckpoint(&ckpt); err != nil {
		t.Fatal(err)
	}
	if state(resumed) != state(first) {
		t.Fatal("the loaded state differs from the saved one")
	}
	for i := range n {
		if l := resumed.TrainStep(x, y); l != losses[k+i] {
			t.Fatalf("resumed step %d: loss %v, uninterrupted %v", k+i, l, losses[k+i])
		}
	}
	if state(resumed) != state(whole) {
		t.Error("after resuming, the training state differs from uninterrupted training")
	}

	paramsOnly := fresh()
	paramsOnly.Init(11)
	if err := paramsOnly.Load(&params); err != nil {
		t.Fatal(err)
	}
	for range n {
		paramsOnly.TrainStep(x, y)
	}
	if state(paramsOnly) == state(whole) {
		t.Error("resuming from the parameters alone also matches: the test does not exercise the optimizer state")
	}
}

type smallState struct {
	p, mom ocannlSmallParams
	step   int
}

type adamState struct {
	p, m, v ocannlAdam64Params
	step    int
}

type adamW32State struct {
	p, m, v ocannlAdamW32Params
	step    int
}

func TestResumeSGDMomentum(t *testing.T) {
	checkResume(t, func() resumable[float32, smallState] { return new(Small) },
		func(r resumable[float32, smallState]) smallState {
			m := r.(*Small)
			return smallState{m.Params, m.momentum, m.Step}
		}, 7, 9)
}

func TestResumeAdam(t *testing.T) {
	checkResume(t, func() resumable[float64, adamState] { return new(Adam64) },
		func(r resumable[float64, adamState]) adamState {
			m := r.(*Adam64)
			return adamState{m.Params, m.adamM, m.adamV, m.Step}
		}, 7, 9)
}

func TestResumeAdamWFloat32(t *testing.T) {
	checkResume(t, func() resumable[float32, adamW32State] { return new(AdamW32) },
		func(r resumable[float32, adamW32State]) adamW32State {
			m := r.(*AdamW32)
			return adamW32State{m.Params, m.adamM, m.adamV, m.Step}
		}, 5, 12)
}

// TestCheckpointErrors: a damaged checkpoint, another optimizer's, and
// another model's are refused with clear errors and change nothing.
func TestCheckpointErrors(t *testing.T) {
	x, y := toyData[float64]()
	src := new(Adam64)
	src.Init(1)
	for range 3 {
		src.TrainStep(x, y)
	}
	var b bytes.Buffer
	if err := src.SaveCheckpoint(&b); err != nil {
		t.Fatal(err)
	}
	file := b.Bytes()

	dst := new(Adam64)
	dst.Init(2)
	dst.TrainStep(x, y)
	before := adamState{dst.Params, dst.adamM, dst.adamV, dst.Step}
	unchanged := func(what string) {
		t.Helper()
		if (adamState{dst.Params, dst.adamM, dst.adamV, dst.Step}) != before {
			t.Errorf("%s: the failed load changed the model", what)
		}
	}
	damaged := bytes.Clone(file)
	damaged[len(damaged)-100] ^= 1
	if err := dst.LoadCheckpoint(bytes.NewReader(damaged)); !errors.Is(err, rt.ErrChecksum) {
		t.Errorf("damaged: %v", err)
	}
	unchanged("damaged")
	if err := dst.LoadCheckpoint(bytes.NewReader(file[:len(file)/2])); !errors.Is(err, rt.ErrTruncated) {
		t.Errorf("truncated: %v", err)
	}
	unchanged("truncated")
	var p bytes.Buffer
	src.Save(&p)
	if err := dst.LoadCheckpoint(&p); !errors.Is(err, rt.ErrBadMagic) || !strings.Contains(err.Error(), "Load") {
		t.Errorf("a parameter file: %v", err)
	}
	unchanged("parameter file")

	// The same parameters with AdamW: another optimizer.
	w := new(AdamW64)
	w.Init(1)
	if err := w.LoadCheckpoint(bytes.NewReader(file)); !errors.Is(err, rt.ErrOptimizer) || !strings.Contains(err.Error(), `"adam", expected "adamw"`) {
		t.Errorf("adam checkpoint into adamw: %v", err)
	}
	// Bigger has one more parameter (and momentum): every difference is listed.
	var s bytes.Buffer
	small := new(Small)
	small.Init(1)
	small.SaveCheckpoint(&s)
	big := new(Bigger)
	big.Init(1)
	bigBefore := big.Params
	err := big.LoadCheckpoint(&s)
	if !errors.Is(err, rt.ErrMissing) || !strings.Contains(err.Error(), `"extra.w"`) || !strings.Contains(err.Error(), `"momentum/extra.b"`) {
		t.Errorf("Small's checkpoint into Bigger: %v", err)
	}
	if big.Params != bigBefore || big.Step != 0 {
		t.Error("the failed load changed Bigger")
	}
}
