package cuda_test

import (
	"encoding/gob"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/ocannlgen/ocannlgen/internal/cudaadam"
	"github.com/ocannlgen/ocannlgen/internal/testutil"
	"github.com/ocannlgen/ocannlgen/rt"
	rtcuda "github.com/ocannlgen/ocannlgen/rt/cuda"
)

// The optimizer tests train internal/cudaadam's models (Adam with an L2
// weight decay in float32; AdamW with clipping by global norm in float32;
// SGD with Nesterov momentum and clipping in float64) for optimSteps
// steps on the emulated device through rtcuda.Model (Load, TrainStep,
// GradNorm, Save) and on the CPU (the generated models' own TrainStep:
// the interpreter-checked CPU kernels, rt.Adam or the CPU's Adam kernel,
// rt.SumSquares, rt.ClipScale, rt.Scale), from the same parameters on
// the same batches.

const optimSteps = 3

// optimTol bounds the difference between the device's and the CPU's
// parameters, losses and gradient norms after each step (relative, or
// absolute below 1: testutil.CloseRel), by element type. The kernels'
// sums round differently from the CPU's (GEMM tiles, a tree-shaped norm),
// so the gradients differ in their last bits and Adam, which divides by
// sqrt(v), carries that into the parameters; measured on these models:
// at most 2.4e-7 (float32) and 1.2e-15 (float64).
func optimTol(elem string) float64 {
	if elem == "float64" {
		return 1e-12
	}
	return 1e-5
}

// optimModel is a generated model seen through the methods the test
// needs, its batches given as flat float64 slices.
type optimModel struct {
	name, elem string
	params     func() []rt.Tensor
	lr         func() float64
	trainStep  func(x, y []float64) float64
	gradNorm   func() float64 // nil without clip_norm
}

func optimModels() []func() optimModel {
	return []func() optimModel{
		func() optimModel {
			m := new(cudaadam.Adam32)
			m.Init(7)
			return optimModel{"ocannlAdam32", "float32", m.ParamTensors, m.LearningRate,
				func(x, y []float64) float64 { return float64(m.TrainStep(batch32x(x), batch32y(y))) }, nil}
		},
		func() optimModel {
			m := new(cudaadam.AdamWClip32)
			m.Init(8)
			return optimModel{"ocannlAdamWClip32", "float32", m.ParamTensors, m.LearningRate,
				func(x, y []float64) float64 { return float64(m.TrainStep(batch32x(x), batch32y(y))) },
				func() float64 { return m.GradNorm }}
		},
		func() optimModel {
			m := new(cudaadam.SGDClip64)
			m.Init(9)
			return optimModel{"ocannlSGDClip64", "float64", m.ParamTensors, m.LearningRate,
				func(x, y []float64) float64 {
					var xs [32][6]float64
					var ys [32][3]float64
					for i := range xs {
						copy(xs[i][:], x[6*i:])
						copy(ys[i][:], y[3*i:])
					}
					return m.TrainStep(&xs, &ys)
				},
				func() float64 { return m.GradNorm }}
		},
	}
}

func batch32x(x []float64) *[32][6]float32 {
	var xs [32][6]float32
	for i := range xs {
		for j := range xs[i] {
			xs[i][j] = float32(x[6*i+j])
		}
	}
	return &xs
}

func batch32y(y []float64) *[32][3]float32 {
	var ys [32][3]float32
	for i := range ys {
		for j := range ys[i] {
			ys[i][j] = float32(y[3*i+j])
		}
	}
	return &ys
}

// optimBatch is step's random batch (x 32x6, y 32x3 in [-1, 1) at the
// element type's precision; y scaled up so that the gradients are large
// enough for clipping to act on every step).
func optimBatch(elem string, step int) (x, y []float64) {
	r := testutil.KeyedRand("optim", uint64(step))
	draw := func(n int, scale float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = (r.Float64()*2 - 1) * scale
			if elem == "float32" {
				v[i] = float64(float32(v[i]))
			}
		}
		return v
	}
	return draw(32*6, 1), draw(32*3, 4)
}

// flat returns a tensor's cells as float64s.
func flat(tn rt.Tensor) []float64 {
	if tn.Data64 != nil {
		return append([]float64(nil), tn.Data64...)
	}
	out := make([]float64, len(tn.Data32))
	for i, v := range tn.Data32 {
		out[i] = float64(v)
	}
	return out
}

// trace is what a training run records after each step.
type trace struct {
	Loss, Norm []float64
	Params     [][][]float64 // [step][param] cells
}

// tensorCopy is a copy of model parameters (Data32 or Data64 as ts have).
func tensorCopy(ts []rt.Tensor) []rt.Tensor {
	out := make([]rt.Tensor, len(ts))
	for i, tn := range ts {
		out[i] = rt.Tensor{Name: tn.Name, Data32: append([]float32(nil), tn.Data32...), Data64: append([]float64(nil), tn.Data64...)}
		if tn.Data64 == nil {
			out[i].Data64 = nil
		} else {
			out[i].Data32 = nil
		}
	}
	return out
}

// cpuTraining takes optimSteps CPU TrainSteps of a fresh model mk on
// optimBatch's batches and returns its initial parameters, the learning
// rate of each step, and what it recorded.
func cpuTraining(mk func() optimModel) (init []rt.Tensor, lrs []float64, tr trace) {
	m := mk()
	init = tensorCopy(m.params())
	for step := range optimSteps {
		x, y := optimBatch(m.elem, step)
		lrs = append(lrs, m.lr())
		tr.Loss = append(tr.Loss, m.trainStep(x, y))
		if m.gradNorm != nil {
			tr.Norm = append(tr.Norm, m.gradNorm())
		}
		var ps [][]float64
		for _, tn := range m.params() {
			ps = append(ps, flat(tn))
		}
		tr.Params = append(tr.Params, ps)
	}
	return init, lrs, tr
}

// deviceTraining loads init into model name of session s and takes
// len(lrs) TrainSteps on optimBatch's batches (reading GradNorm when clip
// is set).
func deviceTraining(t testing.TB, s *rtcuda.Session, name, elem string, init []rt.Tensor, lrs []float64, clip bool) trace {
	t.Helper()
	m, err := s.Model(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Load(init); err != nil {
		t.Fatal(err)
	}
	var tr trace
	for step, lr := range lrs {
		x, y := optimBatch(elem, step)
		loss, err := m.TrainStep(map[string]any{"x": x, "y": y}, lr)
		if err != nil {
			t.Fatal(err)
		}
		tr.Loss = append(tr.Loss, loss)
		if clip {
			n, err := m.GradNorm()
			if err != nil {
				t.Fatal(err)
			}
			tr.Norm = append(tr.Norm, n)
		}
		if m.Step != step+1 {
			t.Errorf("%s: Step is %d after %d steps", name, m.Step, step+1)
		}
		saved := tensorCopy(init)
		if err := m.Save(saved); err != nil {
			t.Fatal(err)
		}
		var ps [][]float64
		for _, tn := range saved {
			ps = append(ps, flat(tn))
		}
		tr.Params = append(tr.Params, ps)
	}
	return tr
}

// compareTraces checks a device run against the CPU's, step by step,
// within optimTol(elem), and returns the largest difference.
func compareTraces(t testing.TB, elem string, got, want trace) float64 {
	t.Helper()
	tol := optimTol(elem)
	worst, bad := 0.0, 0
	check := func(what string, step int, g, w float64) {
		d := math.Abs(g-w) / math.Max(1, math.Max(math.Abs(g), math.Abs(w)))
		if d > worst || math.IsNaN(d) {
			worst = d
		}
		if !testutil.CloseRel(g, w, tol) {
			if bad < 5 {
				t.Errorf("step %d: %s: the device says %v, the CPU %v", step, what, g, w)
			}
			bad++
		}
	}
	for step := range want.Loss {
		check("loss", step, got.Loss[step], want.Loss[step])
		if len(want.Norm) > 0 {
			check("gradient norm", step, got.Norm[step], want.Norm[step])
		}
		for i, p := range want.Params[step] {
			for j := range p {
				check(fmt.Sprintf("parameter %d cell %d", i, j), step, got.Params[step][i][j], p[j])
			}
		}
	}
	if bad > 5 {
		t.Errorf("%d values differ in all", bad)
	}
	return worst
}

// sameBits reports whether two device runs gave the same bits.
func sameBits(a, b trace) bool {
	eq := func(x, y []float64) bool {
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
				return false
			}
		}
		return true
	}
	if !eq(a.Loss, b.Loss) || !eq(a.Norm, b.Norm) || len(a.Params) != len(b.Params) {
		return false
	}
	for s := range a.Params {
		for i := range a.Params[s] {
			if !eq(a.Params[s][i], b.Params[s][i]) {
				return false
			}
		}
	}
	return true
}

// TestEmulatedOptimizers compares each model's emulated device training
// (optimSteps TrainSteps) with the CPU model's, step by step: the loss,
// the gradient norm before clipping, every parameter (within optimTol);
// and runs it again on a fresh session, and once more in that session
// after Model.ResetOptimizer, which must give the same bits.
func TestEmulatedOptimizers(t *testing.T) {
	for _, mk := range optimModels() {
		om := mk()
		t.Run(om.name, func(t *testing.T) {
			init, lrs, want := cpuTraining(mk)
			for step, n := range want.Norm {
				if n <= 0.5 {
					t.Errorf("step %d: gradient norm %v: no clipping to test", step, n)
				}
			}
			_, s := session(t, "internal/cudaadam")
			got := deviceTraining(t, s, om.name, om.elem, init, lrs, om.gradNorm != nil)
			worst := compareTraces(t, om.elem, got, want)
			t.Logf("%d steps: largest difference from the CPU %.2g (tolerance %g)", optimSteps, worst, optimTol(om.elem))
			_, s2 := session(t, "internal/cudaadam")
			if !sameBits(got, deviceTraining(t, s2, om.name, om.elem, init, lrs, om.gradNorm != nil)) {
				t.Error("two runs differ")
			}
			// Started over in the same session (ResetOptimizer zeroes
			// the moments the last run left), a third run too.
			m, err := s2.Model(om.name)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.ResetOptimizer(); err != nil {
				t.Fatal(err)
			}
			if !sameBits(got, deviceTraining(t, s2, om.name, om.elem, init, lrs, om.gradNorm != nil)) {
				t.Error("a run after ResetOptimizer differs")
			}
		})
	}
}

// optimCase is a recorded optimizer case for the GPU tests: a model of
// internal/cudaadam, its initial parameters, learning rates and the CPU's
// trace.
type optimCase struct {
	Model, Elem string
	Clip        bool
	Init        []rt.Tensor
	LRs         []float64
	Want        trace
}

// optimCaseFile is optim.gob: internal/cudaadam's generated CUDA C and
// its models' cases.
type optimCaseFile struct {
	Source []byte
	Cases  []optimCase
}

// TestRecordGPUOptimCases writes optim.gob into the -gpucases directory
// (skipped without it) for TestGPUOptimizers.
func TestRecordGPUOptimCases(t *testing.T) {
	if *gpuCases == "" {
		t.Skip("no -gpucases directory")
	}
	if err := os.MkdirAll(*gpuCases, 0o777); err != nil {
		t.Fatal(err)
	}
	cf := optimCaseFile{Source: generate(t, "internal/cudaadam").CUDAContent}
	for _, mk := range optimModels() {
		om := mk()
		init, lrs, want := cpuTraining(mk)
		cf.Cases = append(cf.Cases, optimCase{om.name, om.elem, om.gradNorm != nil, init, lrs, want})
	}
	f, err := os.Create(filepath.Join(*gpuCases, "optim.gob"))
	if err != nil {
		t.Fatal(err)
	}
	if err := gob.NewEncoder(f).Encode(&cf); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
