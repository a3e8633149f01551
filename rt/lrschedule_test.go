package rt

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// TestLRScheduleTorch: every schedule, with and without warmup, gives
// the learning rates torch.optim.lr_scheduler gives, step by step, to
// 1e-12 relative (testdata/lrschedule/torch.json, written by make.py
// with PyTorch 1.13: LinearLR, CosineAnnealingLR, StepLR and a LinearLR
// warmup through SequentialLR).
func TestLRScheduleTorch(t *testing.T) {
	b, err := os.ReadFile("testdata/lrschedule/torch.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []struct {
			Config struct {
				Schedule      string
				LR            float64 `json:"lr"`
				LREnd         float64 `json:"lr_end"`
				Steps, Warmup int
				StepSize      int `json:"step_size"`
				Gamma         float64
			}
			LR []float64 `json:"lr"`
		}
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]ScheduleKind{"constant": ConstantLR, "linear": Linear, "cosine": Cosine, "step": StepDecay}
	if len(f.Cases) < 7 {
		t.Fatalf("%d cases", len(f.Cases))
	}
	for _, c := range f.Cases {
		cf := c.Config
		k, ok := kinds[cf.Schedule]
		if !ok {
			t.Fatalf("unknown schedule %q", cf.Schedule)
		}
		s := LRSchedule{Kind: k, LR: cf.LR, LREnd: cf.LREnd, Warmup: cf.Warmup, Steps: cf.Steps, StepSize: cf.StepSize, Gamma: cf.Gamma}
		for i, want := range c.LR {
			if got := s.At(i); math.Abs(got-want) > 1e-12*math.Abs(want) {
				t.Errorf("%+v: step %d: %.17g, torch %.17g", cf, i, got, want)
				break
			}
		}
	}
}

// TestLRScheduleEnds: past its steps a decay holds its final rate (where
// PyTorch's cosine would rise again), and a negative step counts as 0.
func TestLRScheduleEnds(t *testing.T) {
	for _, k := range []ScheduleKind{Linear, Cosine} {
		s := LRSchedule{Kind: k, LR: 0.1, LREnd: 0.01, Warmup: 10, Steps: 100}
		if got := s.At(100); got != 0.01 {
			t.Errorf("%v at its end: %g", k, got)
		}
		if got := s.At(1 << 40); got != 0.01 {
			t.Errorf("%v long after its end: %g", k, got)
		}
		lr := 0.1
		if got, want := s.At(-5), s.At(0); got != want || want != lr/11 {
			t.Errorf("%v before the start: %g, at 0: %g", k, got, want)
		}
		if got := s.At(10); got != 0.1 {
			t.Errorf("%v after the warmup: %g", k, got)
		}
	}
	if got := (LRSchedule{Kind: StepDecay, LR: 1, StepSize: 2, Gamma: 0.5}).At(5); got != 0.25 {
		t.Errorf("step decay at 5: %g", got)
	}
}
