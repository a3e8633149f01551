package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"testing"

	"github.com/ocannlgen/ocannlgen/examples/internal/demo"
	"github.com/ocannlgen/ocannlgen/rt"
)

// topStep is the largest step a checkpoint may hold here: rt.MaxStep, or
// math.MaxInt where int is 32 bits.
const topStep = int(min(rt.MaxStep, math.MaxInt))

// withStep rewrites the step of a checkpoint (bytes 12-20, see
// rt.SaveCheckpoint) and its header's CRC-32.
func withStep(ckpt []byte, step uint64) []byte {
	out := bytes.Clone(ckpt)
	binary.LittleEndian.PutUint64(out[12:], step)
	n := int(binary.LittleEndian.Uint32(out[20:]))
	binary.LittleEndian.PutUint32(out[24+n:], crc32.ChecksumIEEE(out[8:24+n]))
	return out
}

// TestCheckpointStepOverflow is issue 30's reproduction: a checkpoint
// whose step is near the top of int's range loaded, and the next steps
// wrapped the counter, so the learning rate exploded (4e14) and the
// parameters became NaN. A step above rt.MaxStep is refused and leaves
// the model unchanged; at rt.MaxStep the counter saturates and the
// learning rate stays on its schedule.
func TestCheckpointStepOverflow(t *testing.T) {
	points, labels := demo.Moons(64, 1, 0.1)
	x, y := batch(0, points, labels)
	src := new(Moons)
	src.Init(1)
	var ckpt bytes.Buffer
	if err := src.SaveCheckpoint(&ckpt); err != nil {
		t.Fatal(err)
	}
	for _, step := range []uint64{math.MaxInt64, math.MaxInt64 - 1, uint64(topStep) + 1} {
		m := new(Moons)
		m.Init(2)
		before := *m
		err := m.LoadCheckpoint(bytes.NewReader(withStep(ckpt.Bytes(), step)))
		if err == nil {
			for range 2 {
				m.TrainStep(&x, &y)
			}
			t.Errorf("step %d: loaded; two steps later Step %d, learning rate %g, w1[0] %g", step, m.Step, m.LearningRate(), m.Params.NetW1[0])
			continue
		}
		if !errors.Is(err, rt.ErrOutOfRange) || m.Params != before.Params || m.momentum != before.momentum || m.Step != before.Step {
			t.Errorf("step %d: %v (model changed: %v), want rt.ErrOutOfRange and no change", step, err, m.Params != before.Params)
		}
	}
	m := new(Moons)
	if err := m.LoadCheckpoint(bytes.NewReader(withStep(ckpt.Bytes(), uint64(topStep)))); err != nil {
		t.Fatal(err)
	}
	// The schedule ends at lr_end=0.01 (up to rounding).
	for range 3 {
		m.TrainStep(&x, &y)
		if lr := m.LearningRate(); math.Abs(lr-0.01) > 1e-12 || m.Step != topStep {
			t.Fatalf("at the top of the step range: Step %d, learning rate %g; want rt.MaxStep and 0.01", m.Step, lr)
		}
	}
	for _, w := range m.Params.NetW1 {
		if math.IsNaN(float64(w)) || math.IsInf(float64(w), 0) {
			t.Fatalf("parameters %v", m.Params.NetW1)
		}
	}
	// Update saturates a Step set out of range by hand too, and the
	// schedule reads a negative Step as 0.
	m.Step = math.MaxInt
	m.Update()
	if m.Step != topStep {
		t.Errorf("Update from Step MaxInt: Step %d, want rt.MaxStep", m.Step)
	}
	m.Step = -5
	if lr := m.LearningRate(); lr != 0.1 {
		t.Errorf("learning rate at Step -5: %g, want 0.1", lr)
	}
}
