package main

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unsafe"

	"github.com/ocannlgen/ocannlgen/bench/models"
	"github.com/ocannlgen/ocannlgen/rt/cuda"
)

// The GPU mode (-gpu, a binary built with -tags cuda on a machine with
// an NVIDIA GPU, its driver and NVRTC): the model's generated CUDA C
// (models.CUDASource) compiled with NVRTC, its parameters loaded from the
// host model after Init, then TrainStep on the device (rt/cuda.Model:
// the batch in, the forward and backward kernel, the loss out, the
// optimizer step on the resident parameters) at the host model's
// learning rate. Each step's wall time includes copying the batch in and
// waiting for the loss. After the timed steps the warmup runs again from
// the same parameters with the optimizer state zeroed: rerun_identical
// says whether its losses are the same bits.

// flat views a fixed-size float32 array (of any rank) as a slice.
func flat[A any](a *A) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(a)), unsafe.Sizeof(*a)/4)
}

// flatIDs views a fixed-size int32 array (token ids) as a slice.
func flatIDs[A any](a *A) []int32 {
	return unsafe.Slice((*int32)(unsafe.Pointer(a)), unsafe.Sizeof(*a)/4)
}

// runGPU trains each of ms (named names) on the GPU, in one session (the
// file is compiled once; each model's buffers stay allocated): warmup
// steps whose losses must be finite and decrease, then steps timed one by
// one; it prints one result line per model.
func runGPU(names []string, ms []model, warmup, steps int) error {
	t0 := time.Now()
	d, err := cuda.Open()
	if err != nil {
		return err
	}
	defer d.Close()
	s, err := d.NewSession(models.CUDASource)
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Printf("# GPU session: %s compiled (%d bytes of CUDA C) in %.1f s\n", "bench/models/ocannl_gen.cu", len(models.CUDASource), time.Since(t0).Seconds())
	for i, m := range ms {
		if err := gpuSteps(s, names[i], m, warmup, steps); err != nil {
			return err
		}
	}
	return nil
}

func gpuSteps(s *cuda.Session, name string, m model, warmup, steps int) error {
	if m.gpuName == "" {
		return fmt.Errorf("model %s has no GPU twin", name)
	}
	gm, err := s.Model(m.gpuName)
	if err != nil {
		return err
	}
	if err := gm.Load(m.params()); err != nil {
		return err
	}
	lr := m.lr()
	t0 := time.Now()
	losses := make([]float64, warmup)
	for i := range losses {
		if losses[i], err = gm.TrainStep(m.gpuBatch, lr); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	first := time.Since(t0)
	for _, l := range losses {
		if math.IsNaN(l) || math.IsInf(l, 0) {
			return fmt.Errorf("%s: a warmup step on the GPU returned a non-finite loss: %v", name, losses)
		}
	}
	if !(losses[len(losses)-1] < losses[0]) {
		return fmt.Errorf("%s: the loss did not decrease over %d GPU steps on a fixed batch: %v", name, warmup, losses)
	}
	wall := make([]float64, steps)
	for i := range wall {
		t := time.Now()
		if _, err := gm.TrainStep(m.gpuBatch, lr); err != nil {
			return err
		}
		wall[i] = time.Since(t).Seconds() * 1e3
	}
	// Run to run: the warmup again from the same parameters, the
	// optimizer state zeroed, must give the same losses, bit for bit.
	if err := gm.ResetOptimizer(); err != nil {
		return err
	}
	if err := gm.Load(m.params()); err != nil {
		return err
	}
	same := true
	for i := range losses {
		l, err := gm.TrainStep(m.gpuBatch, lr)
		if err != nil {
			return err
		}
		same = same && math.Float64bits(l) == math.Float64bits(losses[i])
	}
	w := median(wall)
	ls := make([]string, len(losses))
	for i, l := range losses {
		ls[i] = fmt.Sprintf("%.4f", l)
	}
	fmt.Printf("result impl=ocannlgen-gpu model=%s dtype=f32 steps=%d wall_ms=%.3f samples=%d samples_per_s=%.1f gflop=%.4f gflops=%.2f warmup_s=%.2f rerun_identical=%v losses=%s walls=%s\n",
		name, steps, w, m.samples, float64(m.samples)/w*1e3, m.flop/1e9, m.flop/w/1e6, first.Seconds(), same, strings.Join(ls, ","), join(wall))
	return nil
}
