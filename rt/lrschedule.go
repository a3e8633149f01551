package rt

import "math"

// ScheduleKind is the shape of a learning-rate schedule (LRSchedule).
type ScheduleKind int

// The schedules, each equal to the torch.optim.lr_scheduler named.
const (
	// ConstantLR: LR at every step.
	ConstantLR ScheduleKind = iota
	// Linear: from LR to LREnd over the steps after the warmup, then
	// LREnd (LinearLR with end_factor LREnd/LR).
	Linear
	// Cosine: half a cosine from LR down to LREnd over the steps after
	// the warmup, then LREnd (CosineAnnealingLR with eta_min LREnd over
	// its first T_max steps; PyTorch's rises again after them).
	Cosine
	// StepDecay: LR times Gamma to the number of whole StepSize-step
	// periods since the warmup (StepLR).
	StepDecay
)

// String is the schedule's name in the model language (schedule=NAME).
func (k ScheduleKind) String() string {
	switch k {
	case ConstantLR:
		return "constant"
	case Linear:
		return "linear"
	case Cosine:
		return "cosine"
	case StepDecay:
		return "step"
	}
	return "ScheduleKind(?)"
}

// LRSchedule is a learning-rate schedule: the learning rate of each
// optimizer step, as a function of the step number (0 for the first
// step; a generated model's Step field before its Update). A generated
// model's LearningRate evaluates the schedule of its optimizer line.
//
// With Warmup W > 0, step s < W runs at LR*(s+1)/(W+1), rising linearly
// to LR at step W (PyTorch's LinearLR from 1/(W+1) to 1 over W steps,
// followed by the schedule through SequentialLR with milestone W); the
// schedule proper then runs with t = s-W. Steps counts the warmup: a
// Linear or Cosine schedule ends at step Steps. A step number below 0
// counts as 0.
type LRSchedule struct {
	Kind ScheduleKind
	// LR is the peak learning rate; LREnd the final one of Linear and
	// Cosine.
	LR, LREnd float64
	// Warmup and Steps are numbers of steps (Steps > Warmup for Linear
	// and Cosine).
	Warmup, Steps int
	// StepSize and Gamma are StepDecay's period and factor.
	StepSize int
	Gamma    float64
}

// At is the learning rate of step s.
func (c LRSchedule) At(s int) float64 {
	s = max(s, 0)
	if s < c.Warmup {
		return c.LR * float64(s+1) / float64(c.Warmup+1)
	}
	t := s - c.Warmup
	switch c.Kind {
	case Linear, Cosine:
		n := c.Steps - c.Warmup
		if n <= 0 || t >= n {
			return c.LREnd
		}
		if c.Kind == Linear {
			return c.LR + (c.LREnd-c.LR)*float64(t)/float64(n)
		}
		return c.LREnd + (c.LR-c.LREnd)*(1+math.Cos(math.Pi*float64(t)/float64(n)))/2
	case StepDecay:
		if c.StepSize <= 0 {
			return c.LR
		}
		return c.LR * math.Pow(c.Gamma, float64(t/c.StepSize))
	}
	return c.LR
}
