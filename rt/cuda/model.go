package cuda

import (
	"fmt"

	"github.com/ocannlgen/ocannlgen/rt"
)

// Model is a generated model's GPU twin in a session: its parameters,
// gradients and momentum live in resident device buffers (named as the
// model kernels name them: "p"+field, "g"+field, "m"+field).
type Model struct {
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
// out, and an SGD update of every parameter with a gradient at learning
// rate lr (pass the model value's LearningRate() to follow its schedule):
// Backward, then Update.
func (m *Model) TrainStep(batch map[string]any, lr float64) (float64, error) {
	loss, err := m.Backward(batch)
	if err != nil {
		return 0, err
	}
	return loss, m.Update(lr)
}

// optimizer returns the model's SGD settings, or why the GPU path cannot
// train it.
func (m *Model) optimizer() (*OptimPlan, error) {
	o := m.plan.Optim
	switch {
	case m.plan.Backward == "" || o == nil:
		return nil, fmt.Errorf("cuda: model %s has no loss with an optimizer (//ocannl:sgd)", m.plan.Name)
	case o.Kind != "sgd" || o.ClipNorm > 0:
		return nil, fmt.Errorf("cuda: model %s: the GPU path has only plain SGD (this model uses %s, clip_norm %g); train it on the CPU", m.plan.Name, o.Kind, o.ClipNorm)
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

// Update applies the SGD update to every parameter with a gradient, at
// learning rate lr.
func (m *Model) Update(lr float64) error {
	o, err := m.optimizer()
	if err != nil {
		return err
	}
	for _, p := range m.plan.Params {
		if p.Grad == "" {
			continue
		}
		if err := m.s.SGD(m.plan.Elem, p.Param, p.Grad, "m"+p.Param[1:], lr, o.Momentum, o.WeightDecay, o.Nesterov); err != nil {
			return err
		}
	}
	return nil
}
