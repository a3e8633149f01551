package loadcheck

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"strings"
	"testing"
	"unsafe"

	"github.com/ocannlgen/ocannlgen/rt"
)

// model is what the tests need of a generated model (TrainStep's inputs
// differ in element type, so each adapter trains on its own fixed data).
type model interface {
	Init(seed uint64)
	LearningRate() float64
	Update()
	ParamTensors() []rt.Tensor
	Save(w io.Writer) error
	Load(r io.Reader) error
	UnmarshalBinary(data []byte) error
	SaveSafetensors(w io.Writer, opt *rt.SafetensorsOptions) error
	LoadSafetensors(r io.Reader, opt *rt.SafetensorsOptions) error
	SaveCheckpoint(w io.Writer) error
	LoadCheckpoint(r io.Reader) error
	// train runs TrainStep on fixed inputs.
	train()
	// step and setStep read and write Step.
	step() int
	setStep(int)
	// state lists the tensors a checkpoint holds (checkpointTensors).
	state() []rt.Tensor
	// bits is the model's memory, to compare bit for bit.
	bits() []byte
}

// The adapters.
type (
	adamNet  struct{ AdamNet }
	adamWNet struct{ AdamWNet }
	sgdNet   struct{ SGDNet }
)

var (
	x32 = [2][3]float32{{0.5, -1, 0.25}, {-0.75, 0.5, 1}}
	y32 = [2][1]float32{{1}, {-0.5}}
	x64 = [2][3]float64{{0.5, -1, 0.25}, {-0.75, 0.5, 1}}
	y64 = [2][1]float64{{1}, {-0.5}}
)

func (m *adamNet) train()              { m.TrainStep(&x32, &y32) }
func (m *adamWNet) train()             { m.TrainStep(&x64, &y64) }
func (m *sgdNet) train()               { m.TrainStep(&x32, &y32) }
func (m *adamNet) step() int           { return m.Step }
func (m *adamWNet) step() int          { return m.Step }
func (m *sgdNet) step() int            { return m.Step }
func (m *adamNet) setStep(s int)       { m.Step = s }
func (m *adamWNet) setStep(s int)      { m.Step = s }
func (m *sgdNet) setStep(s int)        { m.Step = s }
func (m *adamNet) state() []rt.Tensor  { return m.checkpointTensors() }
func (m *adamWNet) state() []rt.Tensor { return m.checkpointTensors() }
func (m *sgdNet) state() []rt.Tensor   { return m.checkpointTensors() }
func (m *adamNet) bits() []byte        { return memory(m) }
func (m *adamWNet) bits() []byte       { return memory(m) }
func (m *sgdNet) bits() []byte         { return memory(m) }

// memory copies the bytes of *p.
func memory[T any](p *T) []byte {
	return bytes.Clone(unsafe.Slice((*byte)(unsafe.Pointer(p)), unsafe.Sizeof(*p)))
}

// topStep is the largest step a checkpoint may hold here: rt.MaxStep, or
// math.MaxInt where int is 32 bits.
const topStep = int(min(rt.MaxStep, math.MaxInt))

// subject is one model under test and its optimizer's facts.
type subject struct {
	name string
	new  func() model
	// lrLo and lrHi bound the schedule's learning rate.
	lrLo, lrHi float64
	// adam: the checkpoint holds Adam's moments (adam.v/ must not be
	// negative).
	adam bool
}

// subjects are the three models of the package, with the learning-rate
// bounds their directives give.
var subjects = []subject{
	{"AdamNet", func() model { return new(adamNet) }, 0.001, 0.01, true},
	{"AdamWNet", func() model { return new(adamWNet) }, 0.01, 0.01, true},
	{"SGDNet", func() model { return new(sgdNet) }, 0.01, 0.1, false},
}

// withStep rewrites the step of a checkpoint (bytes 12-20, see
// rt.SaveCheckpoint) and its header's CRC-32.
func withStep(ckpt []byte, step uint64) []byte {
	out := bytes.Clone(ckpt)
	binary.LittleEndian.PutUint64(out[12:], step)
	n := int(binary.LittleEndian.Uint32(out[20:]))
	binary.LittleEndian.PutUint32(out[24+n:], crc32.ChecksumIEEE(out[8:24+n]))
	return out
}

// finite reports whether every value of ts is finite.
func finite(ts []rt.Tensor) error {
	for _, t := range ts {
		for i, v := range t.Data32 {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("%s[%d] = %v", t.Name, i, v)
			}
		}
		for i, v := range t.Data64 {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s[%d] = %v", t.Name, i, v)
			}
		}
	}
	return nil
}

// trainChecked runs two training steps on m, which a loader accepted,
// and checks what issue 30 found broken: no panic (the caller's test
// fails on one), a learning rate within the schedule's bounds, a step
// counter that saturates at rt.MaxStep, and finite state after the first
// step.
func trainChecked(t *testing.T, s subject, m model) {
	t.Helper()
	for k := range 2 {
		if lr := m.LearningRate(); !(lr >= s.lrLo && lr <= s.lrHi) {
			t.Fatalf("%s: step %d: learning rate %g outside [%g, %g]", s.name, m.step(), lr, s.lrLo, s.lrHi)
		}
		before := m.step()
		m.train()
		if want := rt.NextStep(before); m.step() != want {
			t.Fatalf("%s: Step %d after a step from %d, want %d", s.name, m.step(), before, want)
		}
		if k == 0 {
			if err := finite(m.state()); err != nil {
				t.Fatalf("%s: one step from loaded state: %v", s.name, err)
			}
		}
	}
}

// TestCheckpointStepTopOfRange (class 1): a checkpoint whose step is near
// the top of int's range made Adam's TrainStep panic (the counter wrapped
// to a negative step) and SGD's learning rate explode; it is refused now,
// and rt.MaxStep, the largest step accepted, trains.
func TestCheckpointStepTopOfRange(t *testing.T) {
	for _, s := range subjects {
		src := s.new()
		src.Init(1)
		var ckpt bytes.Buffer
		if err := src.SaveCheckpoint(&ckpt); err != nil {
			t.Fatal(err)
		}
		for _, step := range []uint64{math.MaxInt64, math.MaxInt64 - 1, uint64(topStep) + 1} {
			m := s.new()
			m.Init(2)
			before := m.bits()
			err := m.LoadCheckpoint(bytes.NewReader(withStep(ckpt.Bytes(), step)))
			if err == nil {
				t.Errorf("%s: step %d loaded", s.name, step)
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("%s: TrainStep after loading step %d panics: %v", s.name, step, r)
						}
					}()
					trainChecked(t, s, m)
				}()
				continue
			}
			if !errors.Is(err, rt.ErrOutOfRange) || !bytes.Equal(m.bits(), before) {
				t.Errorf("%s: step %d: %v (model unchanged: %v), want rt.ErrOutOfRange and no change", s.name, step, err, bytes.Equal(m.bits(), before))
			}
		}
		m := s.new()
		if err := m.LoadCheckpoint(bytes.NewReader(withStep(ckpt.Bytes(), uint64(topStep)))); err != nil {
			t.Fatalf("%s: step rt.MaxStep: %v", s.name, err)
		}
		trainChecked(t, s, m)
		if m.step() != topStep {
			t.Errorf("%s: Step %d after steps from rt.MaxStep", s.name, m.step())
		}
	}
}

// TestUpdateSaturatesStep (class 1): Update never wraps the step counter
// and LearningRate stays on the schedule, whatever Step holds.
func TestUpdateSaturatesStep(t *testing.T) {
	for _, s := range subjects {
		for _, step := range []int{math.MaxInt, math.MaxInt - 1, int(min(rt.MaxStep, math.MaxInt)), -1, math.MinInt} {
			m := s.new()
			m.Init(3)
			m.setStep(step)
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s: Step %d: TrainStep panics: %v", s.name, step, r)
					}
				}()
				trainChecked(t, s, m)
			}()
		}
	}
}

// TestCheckpointNegativeSecondMoments (class 1): Adam's second moments
// are never negative; a checkpoint holding one made every parameter NaN
// after a step. LoadCheckpoint refuses it and leaves the model unchanged.
func TestCheckpointNegativeSecondMoments(t *testing.T) {
	for _, s := range subjects {
		if !s.adam {
			continue
		}
		src := s.new()
		src.Init(1)
		src.train()
		for _, st := range src.state() {
			if !strings.HasPrefix(st.Name, "adam.v/") {
				continue
			}
			if st.Data32 != nil {
				st.Data32[0] = -st.Data32[0] - 1e-3
			} else {
				st.Data64[0] = -st.Data64[0] - 1e-3
			}
			break
		}
		var ckpt bytes.Buffer
		if err := src.SaveCheckpoint(&ckpt); err != nil {
			t.Fatal(err)
		}
		m := s.new()
		m.Init(2)
		before := m.bits()
		err := m.LoadCheckpoint(&ckpt)
		if err == nil {
			m.train()
			t.Errorf("%s: a negative second moment loaded; after a step: %v", s.name, finite(m.ParamTensors()))
			continue
		}
		if !errors.Is(err, rt.ErrOutOfRange) || !bytes.Equal(m.bits(), before) {
			t.Errorf("%s: %v, want rt.ErrOutOfRange and no change", s.name, err)
		}
	}
}
