package model

import (
	"math"
	"reflect"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

// trainer is what the optimizer tests need of a generated model.
type trainer[T float32 | float64] interface {
	Init(seed uint64)
	Backward(x *[4][3]T, y *[4][2]T) T
	Update()
	TrainStep(x *[4][3]T, y *[4][2]T) T
	LearningRate() float64
	ParamTensors() []rt.Tensor
}

// hyper are the optimizer settings the reference applies, as written in
// the models' directives (optim.go).
type hyper struct {
	kind                               string // sgd, adam, adamw
	lr, lrEnd                          float64
	steps                              int    // schedule length; 0: constant lr
	schedule                           string // "" (linear with steps, else constant), cosine, step
	warmup, stepSize                   int
	gamma                              float64
	momentum                           float64
	nesterov                           bool
	beta1, beta2, eps, decay, clipNorm float64
}

// reference is a float64 transcription of the published update rules,
// independent of rt: SGD with momentum as OCANNL's sgd_one, Adam as
// Kingma & Ba's Algorithm 1 (with the bias-corrected moments m̂ and v̂),
// L2 weight decay added to the gradient (Adam, SGD), decoupled weight
// decay as Loshchilov & Hutter's AdamW with PyTorch's scaling of the
// decay by the learning rate, and clipping by global norm as
// torch.nn.utils.clip_grad_norm_ (coefficient max/(norm+1e-6), capped at
// 1), applied to the raw gradients before the weight decay.
type reference struct {
	h    hyper
	t    int
	m, v [][]float64
	norm float64 // the last step's gradient norm
}

func (r *reference) step(p, g [][]float64) {
	h := &r.h
	if r.m == nil {
		for _, gi := range g {
			r.m = append(r.m, make([]float64, len(gi)))
			r.v = append(r.v, make([]float64, len(gi)))
		}
	}
	lr := h.rate(r.t)
	coef := 1.0
	if h.clipNorm > 0 {
		ss := 0.0
		for _, gi := range g {
			for _, x := range gi {
				ss += x * x
			}
		}
		r.norm = math.Sqrt(ss)
		coef = math.Min(1, h.clipNorm/(r.norm+1e-6))
	}
	r.t++
	for i := range p {
		for k := range p[i] {
			theta := p[i][k]
			grad := g[i][k] * coef
			if h.kind != "adamw" {
				grad += h.decay * theta
			}
			switch h.kind {
			case "sgd":
				r.m[i][k] = h.momentum*r.m[i][k] + grad
				d := r.m[i][k]
				if h.nesterov {
					d = grad + h.momentum*r.m[i][k]
				}
				p[i][k] = theta - lr*d
			default:
				r.m[i][k] = h.beta1*r.m[i][k] + (1-h.beta1)*grad
				r.v[i][k] = h.beta2*r.v[i][k] + (1-h.beta2)*grad*grad
				mHat := r.m[i][k] / (1 - math.Pow(h.beta1, float64(r.t)))
				vHat := r.v[i][k] / (1 - math.Pow(h.beta2, float64(r.t)))
				if h.kind == "adamw" {
					theta -= lr * h.decay * p[i][k]
				}
				p[i][k] = theta - lr*mHat/(math.Sqrt(vHat)+h.eps)
			}
		}
	}
}

// rate is the learning rate of step s (0 first): PyTorch's schedulers'
// closed forms (LinearLR, CosineAnnealingLR, StepLR), after a warmup
// rising as LinearLR from 1/(warmup+1) to 1 would.
func (h *hyper) rate(s int) float64 {
	if s < h.warmup {
		return h.lr * float64(s+1) / float64(h.warmup+1)
	}
	t, n := s-h.warmup, h.steps-h.warmup
	switch {
	case h.schedule == "cosine":
		return h.lrEnd + (h.lr-h.lrEnd)*(1+math.Cos(math.Pi*float64(min(t, n))/float64(n)))/2
	case h.schedule == "step":
		return h.lr * math.Pow(h.gamma, float64(t/h.stepSize))
	case h.steps > 0:
		return h.lr + (h.lrEnd-h.lr)*float64(min(t, n))/float64(n)
	}
	return h.lr
}

// arrays returns a struct of flat arrays (Params, Grads) as float64
// copies, field by field (the fields are in ParamTensors' order).
func arrays(s any) [][]float64 {
	v := reflect.ValueOf(s)
	var out [][]float64
	for i := range v.NumField() {
		f := v.Field(i)
		c := make([]float64, f.Len())
		for k := range c {
			c[k] = f.Index(k).Float()
		}
		out = append(out, c)
	}
	return out
}

func toyData[T float32 | float64]() (x *[4][3]T, y *[4][2]T) {
	x, y = new([4][3]T), new([4][2]T)
	for i := range x {
		for j := range x[i] {
			x[i][j] = T(i+2*j)/3 - 0.7
		}
		y[i] = [2]T{T(i) - 1, 2 - T(i)*T(i)/4}
	}
	return x, y
}

// checkOptimizer runs Backward and Update for some steps and compares
// every parameter after each Update with the reference's step from the
// same parameters and gradients; the reference keeps its own moments and
// step count. params and grads return m.Params and m.Grads.
func checkOptimizer[T float32 | float64](t *testing.T, m trainer[T], h hyper, params, grads func() any, gradNorm func() float64, tol float64) {
	t.Helper()
	x, y := toyData[T]()
	m.Init(7)
	ref := &reference{h: h}
	clipped := 0
	for s := range 25 {
		if got, want := m.LearningRate(), h.rate(s); math.Abs(got-want) > 1e-15*want {
			t.Fatalf("step %d: learning rate %v, want %v", s, got, want)
		}
		m.Backward(x, y)
		p, g := arrays(params()), arrays(grads())
		ref.step(p, g)
		m.Update()
		got := arrays(params())
		worst := 0.0
		for i := range p {
			for k := range p[i] {
				worst = max(worst, math.Abs(got[i][k]-p[i][k])/(math.Abs(p[i][k])+h.lr))
			}
		}
		if worst > tol {
			t.Fatalf("step %d: parameters differ from the reference by %g (relative to |p|+lr), over %g", s+1, worst, tol)
		}
		if h.clipNorm > 0 {
			if n := gradNorm(); math.Abs(n-ref.norm) > 1e-6*ref.norm {
				t.Fatalf("step %d: GradNorm %v, reference %v", s+1, n, ref.norm)
			}
			if ref.norm > h.clipNorm {
				clipped++
			}
		}
	}
	if h.clipNorm > 0 && (clipped == 0 || clipped == 25) {
		t.Errorf("clipping applied at %d of 25 steps: the test covers only one side", clipped)
	}
	// Training works: the loss falls.
	m.Init(7)
	first := m.TrainStep(x, y)
	for range 200 {
		m.TrainStep(x, y)
	}
	if last := m.Backward(x, y); !(last < first/2) {
		t.Errorf("loss %v -> %v: training does not work", first, last)
	}
	if n := testing.AllocsPerRun(20, func() { m.TrainStep(x, y) }); n != 0 {
		t.Errorf("TrainStep allocates %v times", n)
	}
}

func TestAdam(t *testing.T) {
	m := new(Adam64)
	h := hyper{kind: "adam", lr: 0.01, beta1: 0.8, beta2: 0.99, eps: 1e-6, decay: 0.01, clipNorm: 13}
	checkOptimizer[float64](t, m, h, func() any { return m.Params }, func() any { return m.Grads }, func() float64 { return m.GradNorm }, 1e-12)
}

func TestAdamW(t *testing.T) {
	m := new(AdamW64)
	h := hyper{kind: "adamw", lr: 0.02, lrEnd: 0.005, steps: 10, beta1: 0.9, beta2: 0.999, eps: 1e-8, decay: 0.01}
	checkOptimizer[float64](t, m, h, func() any { return m.Params }, func() any { return m.Grads }, nil, 1e-12)
}

func TestAdamWFloat32(t *testing.T) {
	m := new(AdamW32)
	h := hyper{kind: "adamw", lr: 0.01, beta1: 0.9, beta2: 0.999, eps: 1e-8, decay: 0.1, clipNorm: 8}
	checkOptimizer[float32](t, m, h, func() any { return m.Params }, func() any { return m.Grads }, func() float64 { return m.GradNorm }, 1e-5)
}

func TestSGDClip(t *testing.T) {
	m := new(SGDClip64)
	h := hyper{kind: "sgd", lr: 0.05, momentum: 0.9, nesterov: true, decay: 0.001, clipNorm: 5}
	checkOptimizer[float64](t, m, h, func() any { return m.Params }, func() any { return m.Grads }, func() float64 { return m.GradNorm }, 1e-12)
}

// TestSchedules: AdamW on a cosine schedule with warmup and SGD on a step
// decay with warmup take the learning rate of each step from the
// schedule (checked before every step, past the cosine's end too).
func TestSchedules(t *testing.T) {
	c := new(Cosine64)
	h := hyper{kind: "adamw", lr: 0.02, lrEnd: 0.002, steps: 20, schedule: "cosine", warmup: 3, beta1: 0.9, beta2: 0.999, eps: 1e-8, decay: 0.01}
	checkOptimizer[float64](t, c, h, func() any { return c.Params }, func() any { return c.Grads }, nil, 1e-12)
	s := new(StepSGD64)
	h = hyper{kind: "sgd", lr: 0.05, momentum: 0.9, schedule: "step", stepSize: 4, gamma: 0.5, warmup: 2}
	checkOptimizer[float64](t, s, h, func() any { return s.Params }, func() any { return s.Grads }, nil, 1e-12)
}
