package loadcheck

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

// special are the values FuzzCheckpointTrain gives a state element for
// the fuzzed bytes 240 to 255; a byte b below 240 gives (b-120)/10, in
// [-12, 11.9].
var special = [16]float64{
	math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1),
	math.MaxFloat32, -math.MaxFloat32, 1e30, -1e30,
	math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 1e-30, -1e-3,
	1e3, -1e3, 1e6, -1e6,
}

// valueOf is the state value fuzzed byte b stands for.
func valueOf(b byte) float64 {
	if b >= 240 {
		return special[b-240]
	}
	return (float64(b) - 120) / 10
}

// trainBound is the magnitude of loaded values below which one training
// step must give finite state: beyond it, a finite state may overflow in
// the network's forward pass (numerics, not a loader's concern), so only
// "no panic" and the learning rate are checked.
const trainBound = 1e3

// FuzzCheckpointTrain builds checkpoints of the generated models from
// fuzzed field values (the step, and every element of the parameters and
// the optimizer's state: momentum, Adam's moments), loads them with the
// generated LoadCheckpoint and checks issue 30's class 1 both ways: a
// state the optimizer can run (step at most rt.MaxStep, finite values,
// Adam's second moments not negative) loads, any other is refused with
// the model unchanged; and after every successful load, TrainStep never
// panics, the learning rate stays on the schedule, the step counter
// saturates, and, for values of moderate magnitude, one step leaves every
// parameter and optimizer state finite.
func FuzzCheckpointTrain(f *testing.F) {
	f.Add(uint8(0), uint64(5), []byte{130, 110, 125})
	f.Add(uint8(1), uint64(math.MaxInt64), []byte{})
	f.Add(uint8(2), uint64(math.MaxInt64-1), []byte{121})
	f.Add(uint8(0), uint64(topStep), []byte{140, 100})
	f.Add(uint8(0), uint64(rt.MaxStep+1), []byte{140, 100})
	f.Add(uint8(1), uint64(0), []byte{100, 251}) // a negative moment
	f.Add(uint8(2), uint64(7), []byte{240, 120}) // NaN
	f.Add(uint8(0), uint64(1), []byte{252})      // 1e3: at the bound
	f.Fuzz(func(t *testing.T, which uint8, step uint64, values []byte) {
		s := subjects[int(which)%len(subjects)]
		src := s.new()
		src.Init(1)
		src.train()
		// Runnable unless a value or the step says otherwise.
		runnable, moderate := step <= uint64(topStep), true
		k := 0
		for _, st := range src.state() {
			secondMoment := strings.HasPrefix(st.Name, "adam.v/")
			for i := range len(st.Data32) + len(st.Data64) {
				if len(values) == 0 {
					break
				}
				v := valueOf(values[k%len(values)])
				k++
				if st.Data32 != nil {
					st.Data32[i] = float32(v)
					v = float64(st.Data32[i])
				} else {
					st.Data64[i] = v
				}
				switch {
				case math.IsNaN(v) || math.IsInf(v, 0):
					runnable = false
				case secondMoment && v < 0:
					runnable = false
				case math.Abs(v) > trainBound:
					moderate = false
				}
			}
		}
		src.setStep(0)
		var ckpt bytes.Buffer
		if err := src.SaveCheckpoint(&ckpt); err != nil {
			t.Fatal(err)
		}
		m := s.new()
		m.Init(2)
		before := m.bits()
		err := m.LoadCheckpoint(bytes.NewReader(withStep(ckpt.Bytes(), step)))
		if err != nil {
			if runnable {
				t.Fatalf("%s: a runnable checkpoint (step %d) is refused: %v", s.name, step, err)
			}
			if !bytes.Equal(m.bits(), before) {
				t.Fatalf("%s: a refused checkpoint changed the model: %v", s.name, err)
			}
			return
		}
		if !runnable {
			t.Fatalf("%s: a checkpoint the optimizer cannot run (step %d) is accepted", s.name, step)
		}
		if uint64(m.step()) != step {
			t.Fatalf("%s: loaded step %d, want %d", s.name, m.step(), step)
		}
		if moderate {
			trainChecked(t, s, m)
			return
		}
		for range 2 {
			if lr := m.LearningRate(); !(lr >= s.lrLo && lr <= s.lrHi) {
				t.Fatalf("%s: learning rate %g outside [%g, %g]", s.name, lr, s.lrLo, s.lrHi)
			}
			m.train()
		}
	})
}

// frame wraps payload as a parameter file with valid checksums.
func frame(payload []byte) []byte {
	b := []byte("OCGNPARM")
	b = binary.LittleEndian.AppendUint32(b, 1)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(payload)))
	b = append(b, payload...)
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b[8:]))
}

// frameCheckpoint makes a checkpoint of optimizer whose step is the first
// 8 bytes of data and whose tensors are the payload in the rest, with
// valid checksums.
func frameCheckpoint(optimizer string, data []byte) []byte {
	if len(data) < 8 {
		return data
	}
	h := []byte("OCGNCKPT")
	h = binary.LittleEndian.AppendUint32(h, 1)
	h = append(h, data[:8]...)
	h = binary.LittleEndian.AppendUint32(h, uint32(len(optimizer)))
	h = append(h, optimizer...)
	h = binary.LittleEndian.AppendUint32(h, crc32.ChecksumIEEE(h[8:]))
	return append(h, frame(data[8:])...)
}

// optimizerName is the optimizer a subject's checkpoints record.
func optimizerName(s subject) string {
	switch s.name {
	case "AdamNet":
		return "adam"
	case "AdamWNet":
		return "adamw"
	}
	return "sgd momentum"
}

// FuzzModelLoaders calls every loader method of the generated models
// (Load, UnmarshalBinary, LoadCheckpoint, LoadSafetensors without options
// and with PyTorch's layout) on fuzzed bytes, as they are and framed with
// valid checksums (a payload, a step and a payload). Each must leave the
// model bit-identical on any error; what one accepts must follow the
// loading policy (finite values, Adam's second moments not negative, a
// step of at most rt.MaxStep), and the model must then take a training
// step without panicking.
func FuzzModelLoaders(f *testing.F) {
	for i, s := range subjects {
		m := s.new()
		m.Init(uint64(i))
		m.train()
		var params, ckpt, st bytes.Buffer
		if err := m.Save(&params); err != nil {
			f.Fatal(err)
		}
		if err := m.SaveCheckpoint(&ckpt); err != nil {
			f.Fatal(err)
		}
		if err := m.SaveSafetensors(&st, nil); err != nil {
			f.Fatal(err)
		}
		p := params.Bytes()
		f.Add(uint8(i), p)
		f.Add(uint8(i), p[20:len(p)-4])
		c := ckpt.Bytes()
		f.Add(uint8(i), c)
		n := 24 + int(binary.LittleEndian.Uint32(c[20:])) + 4 // the checkpoint header
		f.Add(uint8(i), append(bytes.Clone(c[12:20]), c[n+20:len(c)-4]...))
		f.Add(uint8(i), st.Bytes())
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		s := subjects[int(which)%len(subjects)]
		loaders := []struct {
			name string
			load func(model) error
		}{
			{"Load", func(m model) error { return m.Load(bytes.NewReader(data)) }},
			{"Load framed", func(m model) error { return m.Load(bytes.NewReader(frame(data))) }},
			{"UnmarshalBinary", func(m model) error { return m.UnmarshalBinary(data) }},
			{"LoadCheckpoint", func(m model) error { return m.LoadCheckpoint(bytes.NewReader(data)) }},
			{"LoadCheckpoint framed", func(m model) error {
				return m.LoadCheckpoint(bytes.NewReader(frameCheckpoint(optimizerName(s), data)))
			}},
			{"LoadSafetensors", func(m model) error { return m.LoadSafetensors(bytes.NewReader(data), nil) }},
			{"LoadSafetensors PyTorch", func(m model) error {
				return m.LoadSafetensors(bytes.NewReader(data), &rt.SafetensorsOptions{Layout: rt.LayoutPyTorch})
			}},
		}
		for _, l := range loaders {
			m := s.new()
			m.Init(3)
			m.train()
			before := m.bits()
			if err := l.load(m); err != nil {
				if !bytes.Equal(m.bits(), before) {
					t.Fatalf("%s.%s failed (%v) and changed the model", s.name, l.name, err)
				}
				continue
			}
			if err := finite(m.state()); err != nil {
				t.Fatalf("%s.%s loaded a non-finite value: %v", s.name, l.name, err)
			}
			for _, st := range m.state() {
				if !strings.HasPrefix(st.Name, "adam.v/") {
					continue
				}
				for _, v := range append(st.Data64, float64s(st.Data32)...) {
					if v < 0 {
						t.Fatalf("%s.%s loaded a negative second moment %v", s.name, l.name, v)
					}
				}
			}
			if step := m.step(); step < 0 || step > topStep {
				t.Fatalf("%s.%s loaded step %d", s.name, l.name, step)
			}
			if lr := m.LearningRate(); !(lr >= s.lrLo && lr <= s.lrHi) {
				t.Fatalf("%s.%s: learning rate %g outside [%g, %g]", s.name, l.name, lr, s.lrLo, s.lrHi)
			}
			m.train()
		}
	})
}

func float64s(vs []float32) []float64 {
	out := make([]float64, len(vs))
	for i, v := range vs {
		out[i] = float64(v)
	}
	return out
}
