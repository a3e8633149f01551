package cuda

import (
	"fmt"

	"github.com/ocannlgen/ocannlgen/rt"
)

// Model is a generated model's GPU twin in a session: its parameters,
// gradients and optimizer state live in resident device buffers (named as
// the model kernels name them: "p"+field, "g"+field; SGD's momentum and
// Adam's first moment "m"+field, Adam's second moment "v"+field; the
// clipping norm's partial sums "ocannl.clip."+model).
type Model struct {
	// Step counts the optimizer steps taken, as the host model's Step
	// does: Update advances it with rt.NextStep before Adam's step, whose
	// bias correction uses it. Set it from the host model (m.Step) when
	// resuming; Adam's moments start at zero on the device.
	Step int
	s    *Session
	plan *ModelPlan
}

// Model returns the GPU twin of the generated model type name (e.g.
// "ocannlMoons"). Load its parameters before running it.
func (s *Session) Model(name string) (*Model, error) {
	mp := s.plan.Model(name)
	if mp == nil {
		return nil, fmt.Errorf("cuda: the generated file has no model %s", name)
	}
	return &Model{s: s, plan: mp}, nil
}

// tensor finds the parameter of ts with the plan parameter's ID.
func (m *Model) tensor(ts []rt.Tensor, p ModelParamPlan) (any, error) {
	for i := range ts {
		if ts[i].Name != p.ID {
			continue
		}
		if m.plan.Elem == "float64" {
			return ts[i].Data64, nil
		}
		return ts[i].Data32, nil
	}
	return nil, fmt.Errorf("cuda: model %s: no tensor %s among the parameters given", m.plan.Name, p.ID)
}

// Load copies the host parameters ts (the model value's ParamTensors(),
// after Init or Load) to the device.
func (m *Model) Load(ts []rt.Tensor) error {
	for _, p := range m.plan.Params {
		v, err := m.tensor(ts, p)
		if err != nil {
			return err
		}
		if err := m.s.Upload(p.Param, m.plan.Elem, v); err != nil {
			return err
		}
	}
	return nil
}

// Save copies the device parameters into ts (the model value's
// ParamTensors()), after which the model's Save writes them to a file.
func (m *Model) Save(ts []rt.Tensor) error {
	for _, p := range m.plan.Params {
		v, err := m.tensor(ts, p)
		if err != nil {
			return err
		}
		if err := m.s.Download(p.Param, v); err != nil {
			return err
		}
	}
	return nil
}

// Run runs one of the model's kernels (an entry's, e.g.
// "ocannlMoonsPredict") on the resident parameters: io holds the entry's
// inputs by name and its result as "out" (see Session.Run).
func (m *Model) Run(kernel string, io map[string]any) error { return m.s.Run(kernel, io) }

// TrainStep is the model's TrainStep on the device: the batch (the loss
// entry's inputs by name) in, the forward and backward kernel, the loss
// out, and the model's optimizer step (SGD, Adam or AdamW, after clipping
// the gradients by their global norm when the model sets clip_norm) on
// every parameter with a gradient at learning rate lr (pass the model
// value's LearningRate() to follow its schedule): Backward, then Update.
func (m *Model) TrainStep(batch map[string]any, lr float64) (float64, error) {
	loss, err := m.Backward(batch)
	if err != nil {
		return 0, err
	}
	return loss, m.Update(lr)
}

// optimizer returns the model's optimizer settings, or why the GPU path
// cannot train it.
func (m *Model) optimizer() (*OptimPlan, error) {
	o := m.plan.Optim
	switch {
	case m.plan.Backward == "" || o == nil:
		return nil, fmt.Errorf("cuda: model %s has no loss with an optimizer (//ocannl:sgd, adam or adamw)", m.plan.Name)
	case o.Kind != "sgd" && o.Kind != "adam" && o.Kind != "adamw":
		return nil, fmt.Errorf("cuda: model %s: unknown optimizer %q", m.plan.Name, o.Kind)
	}
	return o, nil
}

// Backward runs the loss's forward and backward kernel on the batch (the
// loss entry's inputs by name) and returns the loss; the gradients stay
// on the device, for SyncGrads and Update.
func (m *Model) Backward(batch map[string]any) (float64, error) {
	if _, err := m.optimizer(); err != nil {
		return 0, err
	}
	loss := make([]float64, 1)
	io := make(map[string]any, len(batch)+1)
	for k, v := range batch {
		io[k] = v
	}
	io["loss"] = loss
	if err := m.s.Run(m.plan.Backward, io); err != nil {
		return 0, err
	}
	return loss[0], nil
}

// SyncGrads replaces the gradients of the last Backward by their mean
// across the ranks of nc, on the devices (Session.MeanAcross): a
// data-parallel step on the GPU is Backward on the rank's share of the
// batch, SyncGrads, Update. Start every rank from the same parameters
// (the host model's BroadcastParams, then Load).
func (m *Model) SyncGrads(nc *NCCL) error {
	if _, err := m.optimizer(); err != nil {
		return err
	}
	var grads []string
	for _, p := range m.plan.Params {
		if p.Grad != "" {
			grads = append(grads, p.Grad)
		}
	}
	return m.s.MeanAcross(nc, grads...)
}

// Update applies the model's optimizer step to every parameter but model
// state, at learning rate lr, as the host model's Update does (a
// parameter the loss does not reach has a zero gradient: with weight
// decay it still changes): with
// clip_norm, the gradients are first scaled by rt.ClipScale of their
// global norm (computed on the device by a fixed-order reduction:
// GradNorm); then SGD (rt.SGD), or Adam/AdamW (rt.Adam) with Step
// advanced by rt.NextStep and the bias-correction coefficients of
// rt.AdamCoeffs computed here, on the host, in the model's element type.
func (m *Model) Update(lr float64) error {
	o, err := m.optimizer()
	if err != nil {
		return err
	}
	var ps []ModelParamPlan
	for _, p := range m.plan.Params {
		if p.Grad != "" {
			ps = append(ps, p)
		}
	}
	if o.ClipNorm > 0 && len(ps) > 0 {
		if err := m.clip(ps, o.ClipNorm); err != nil {
			return err
		}
	}
	if o.WeightDecay > 0 {
		// The host's Update steps every parameter but model state, a
		// parameter the loss does not reach with a zero gradient (which
		// only weight decay turns into a change): so does this one, with
		// a zeroed resident buffer as its gradient.
		for _, p := range m.plan.Params {
			if p.Grad == "" && !p.State {
				r := m.s.resident[p.Param]
				if r == nil {
					return fmt.Errorf("cuda: model %s: parameter %s is not on the device (Load the model first)", m.plan.Name, p.Param)
				}
				z := "ocannl.zero." + p.Param[1:]
				if _, err := m.s.residentBuf(z, m.plan.Elem, r.size); err != nil {
					return err
				}
				p.Grad = z
				ps = append(ps, p)
			}
		}
	}
	if o.Kind == "sgd" {
		for _, p := range ps {
			if err := m.s.SGD(m.plan.Elem, p.Param, p.Grad, "m"+p.Param[1:], lr, o.Momentum, o.WeightDecay, o.Nesterov); err != nil {
				return err
			}
		}
		m.Step = rt.NextStep(m.Step)
		return nil
	}
	m.Step = rt.NextStep(m.Step)
	decoupled := o.Kind == "adamw"
	var k []any
	if m.plan.Elem == "float64" {
		for _, c := range rt.AdamCoeffs(m.Step, lr, o.Beta1, o.Beta2, o.Eps, o.WeightDecay, decoupled) {
			k = append(k, c)
		}
		k = append(k, o.WeightDecay)
	} else {
		for _, c := range rt.AdamCoeffs(m.Step, float32(lr), float32(o.Beta1), float32(o.Beta2), float32(o.Eps), float32(o.WeightDecay), decoupled) {
			k = append(k, c)
		}
		k = append(k, float32(o.WeightDecay))
	}
	l2 := int32(0)
	if o.WeightDecay > 0 && !decoupled {
		l2 = 1
	}
	for _, p := range ps {
		bufs, n, err := m.residents(p.Param, p.Grad, "m"+p.Param[1:], "v"+p.Param[1:])
		if err != nil {
			return err
		}
		args := append(append(bufs, k...), l2, int32(n))
		if err := m.s.optimFunc("adam", m.plan.Elem, blocks(n), 256, false, args); err != nil {
			return err
		}
	}
	return nil
}

// residents returns the resident buffers names[0] (a parameter) and
// names[1] (its gradient), which must exist, and names[2:] (optimizer
// state, created zeroed on first use) of the same size, and that size.
func (m *Model) residents(names ...string) ([]any, int, error) {
	p, g := m.s.resident[names[0]], m.s.resident[names[1]]
	if p == nil || g == nil || p.size != g.size || p.elem != m.plan.Elem || g.elem != m.plan.Elem {
		return nil, 0, fmt.Errorf("cuda: model %s: %s and %s must be resident %s buffers of one size (Load the model and run Backward first)", m.plan.Name, names[0], names[1], m.plan.Elem)
	}
	out := []any{p.ptr, g.ptr}
	for _, n := range names[2:] {
		r, err := m.s.residentBuf(n, m.plan.Elem, p.size)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, r.ptr)
	}
	return out, p.size, nil
}

// blocks is the grid of n threads in blocks of 256.
func blocks(n int) [3]int { return [3]int{max((n+255)/256, 1), 1, 1} }

// SumSqGrid is the number of blocks of the clipping reduction's partial
// sums over a gradient of n cells: one per 256 cells, at most 256 (a
// function of n alone, so the order of the sum is too).
func SumSqGrid(n int) int { return min(max((n+255)/256, 1), 256) }

// clipName is the resident buffer of the clipping reduction: the norm,
// the factor, then the partial sums (float64).
func (m *Model) clipName() string { return "ocannl.clip." + m.plan.Name }

// clip scales the gradients of ps by rt.ClipScale(norm, maxNorm), norm
// their global norm: per gradient, SumSqGrid(n) blocks each write the sum
// of the squares of a fixed strided part of it (a fixed-shape tree over
// its threads) into its own slot; one block folds the slots in order into
// the norm and the factor; every gradient is scaled by the factor. No
// atomics: the same gradients give the same bits on every run.
func (m *Model) clip(ps []ModelParamPlan, maxNorm float64) error {
	elem := m.plan.Elem
	nparts := 0
	var gs []*resident
	for _, p := range ps {
		g := m.s.resident[p.Grad]
		if g == nil || g.elem != elem {
			return fmt.Errorf("cuda: model %s: no resident %s gradient %s (run Backward first)", m.plan.Name, elem, p.Grad)
		}
		gs = append(gs, g)
		nparts += SumSqGrid(g.size)
	}
	c, err := m.s.residentBuf(m.clipName(), "float64", 2+nparts)
	if err != nil {
		return err
	}
	off := 0
	for _, g := range gs {
		nb := SumSqGrid(g.size)
		if err := m.s.optimFunc("sumsq", elem, [3]int{nb, 1, 1}, 256, true, []any{g.ptr, c.ptr, int32(off), int32(g.size)}); err != nil {
			return err
		}
		off += nb
	}
	if err := m.s.optimFunc("clipnorm", elem, [3]int{1, 1, 1}, 256, true, []any{c.ptr, int32(nparts), maxNorm}); err != nil {
		return err
	}
	for _, g := range gs {
		if err := m.s.optimFunc("clip", elem, blocks(g.size), 256, false, []any{g.ptr, c.ptr, int32(g.size)}); err != nil {
			return err
		}
	}
	return nil
}

// ResetOptimizer sets Step to 0 and zeroes the optimizer state on the
// device (SGD's momentum, Adam's moments): after it and a Load, training
// starts over exactly as in a new session.
func (m *Model) ResetOptimizer() error {
	m.Step = 0
	for _, p := range m.plan.Params {
		for _, n := range []string{"m" + p.Param[1:], "v" + p.Param[1:]} {
			if r := m.s.resident[n]; r != nil {
				if err := m.s.d.Zero(r.ptr, max(r.size, 1)*elemSize(r.elem)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// GradNorm returns the global norm of the gradients at the last Update,
// before clipping them (the host model's m.GradNorm), read from the
// device. It is an error for a model without clip_norm, or before its
// first Update.
func (m *Model) GradNorm() (float64, error) {
	r := m.s.resident[m.clipName()]
	if r == nil {
		return 0, fmt.Errorf("cuda: model %s: no gradient norm (no clip_norm, or no Update yet)", m.plan.Name)
	}
	c := make([]float64, r.size)
	if err := m.s.Download(m.clipName(), c); err != nil {
		return 0, err
	}
	return c[0], nil
}
