package cuda_test

import (
	"math"
	"testing"

	"github.com/ocannlgen/ocannlgen/internal/cudaadam"
	"github.com/ocannlgen/ocannlgen/internal/testutil"
	"github.com/ocannlgen/ocannlgen/rt"
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

// gpuTrace is what one emulated run records after each step.
type gpuTrace struct {
	loss, norm []float64
	params     [][][]float64 // [step][param] cells
}

// emulatedTraining loads fresh model mk's parameters into a new emulated
// session and takes optimSteps TrainSteps at the CPU model's learning
// rate; cpu, when set, takes each step on the CPU too.
func emulatedTraining(t *testing.T, mk func() optimModel, cpu func(step int, m optimModel, x, y []float64)) gpuTrace {
	t.Helper()
	om := mk()
	_, s := session(t, "internal/cudaadam")
	m, err := s.Model(om.name)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Load(om.params()); err != nil {
		t.Fatal(err)
	}
	var tr gpuTrace
	for step := range optimSteps {
		x, y := optimBatch(om.elem, step)
		loss, err := m.TrainStep(map[string]any{"x": x, "y": y}, om.lr())
		if err != nil {
			t.Fatal(err)
		}
		tr.loss = append(tr.loss, loss)
		if om.gradNorm != nil {
			n, err := m.GradNorm()
			if err != nil {
				t.Fatal(err)
			}
			tr.norm = append(tr.norm, n)
		}
		if m.Step != step+1 {
			t.Errorf("%s: Step is %d after %d steps", om.name, m.Step, step+1)
		}
		ts := om.params() // the CPU model's tensors: Save into copies
		saved := make([]rt.Tensor, len(ts))
		for i, tn := range ts {
			saved[i] = rt.Tensor{Name: tn.Name}
			if tn.Data64 != nil {
				saved[i].Data64 = make([]float64, len(tn.Data64))
			} else {
				saved[i].Data32 = make([]float32, len(tn.Data32))
			}
		}
		if err := m.Save(saved); err != nil {
			t.Fatal(err)
		}
		var ps [][]float64
		for _, tn := range saved {
			ps = append(ps, flat(tn))
		}
		tr.params = append(tr.params, ps)
		if cpu != nil {
			cpu(step, om, x, y)
		}
	}
	return tr
}

// TestEmulatedOptimizers compares each model's emulated device training
// (optimSteps TrainSteps) with the CPU model's, step by step: the loss,
// the gradient norm before clipping, every parameter (within optimTol);
// and runs it again on a fresh session, which must give the same bits.
func TestEmulatedOptimizers(t *testing.T) {
	for _, mk := range optimModels() {
		om := mk()
		t.Run(om.name, func(t *testing.T) {
			tol := optimTol(om.elem)
			worst := 0.0
			check := func(what string, got, want float64) {
				t.Helper()
				d := math.Abs(got-want) / math.Max(1, math.Max(math.Abs(got), math.Abs(want)))
				worst = max(worst, d)
				if !testutil.CloseRel(got, want, tol) {
					t.Errorf("%s: the emulated device says %v, the CPU %v", what, got, want)
				}
			}
			var cpuLoss, cpuNorm []float64
			var cpuParams [][][]float64
			tr := emulatedTraining(t, mk, func(step int, m optimModel, x, y []float64) {
				cpuLoss = append(cpuLoss, m.trainStep(x, y))
				if m.gradNorm != nil {
					cpuNorm = append(cpuNorm, m.gradNorm())
				}
				var ps [][]float64
				for _, tn := range m.params() {
					ps = append(ps, flat(tn))
				}
				cpuParams = append(cpuParams, ps)
			})
			for step := range optimSteps {
				check("loss", tr.loss[step], cpuLoss[step])
				if om.gradNorm != nil {
					check("gradient norm", tr.norm[step], cpuNorm[step])
					if cpuNorm[step] <= 0.5 {
						t.Errorf("step %d: gradient norm %v: no clipping to test", step, cpuNorm[step])
					}
				}
				for i, p := range cpuParams[step] {
					for j := range p {
						check("param", tr.params[step][i][j], p[j])
					}
				}
			}
			t.Logf("%d steps: largest difference from the CPU %.2g (tolerance %g)", optimSteps, worst, tol)
			again := emulatedTraining(t, mk, nil)
			for step := range optimSteps {
				same := math.Float64bits(tr.loss[step]) == math.Float64bits(again.loss[step])
				for i := range tr.norm {
					same = same && math.Float64bits(tr.norm[i]) == math.Float64bits(again.norm[i])
				}
				for i, p := range tr.params[step] {
					for j := range p {
						same = same && math.Float64bits(p[j]) == math.Float64bits(again.params[step][i][j])
					}
				}
				if !same {
					t.Errorf("step %d: two runs differ", step)
				}
			}
		})
	}
}
