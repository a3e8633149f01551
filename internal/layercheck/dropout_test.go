package layercheck

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

// dropRef is Drop's loss by plain loops, with the documented mask of the
// given seed and step (rt.DropoutMask keyed by the mask's identity), or
// no dropout at all when train is false; it also returns the logits.
func dropRef(m *Drop, x *[5][8]float64, y *[5]int32, seed uint64, step int, train bool) (float64, [5][3]float64) {
	mask := make([]float64, 40)
	for i := range mask {
		mask[i] = 1
	}
	if train {
		rt.DropoutMask(mask, 0.25, rt.ParamKey("objective.dropout#1/mask"), seed, step)
	}
	var logits [5][3]float64
	var loss float64
	for b := range 5 {
		mx := math.Inf(-1)
		for c := range 3 {
			z := m.Params.HeadB[c]
			for j := range 8 {
				z += m.Params.HeadW[8*c+j] * x[b][j] * mask[8*b+j]
			}
			logits[b][c] = z
			mx = max(mx, z)
		}
		var s float64
		for c := range 3 {
			s += math.Exp(logits[b][c] - mx)
		}
		loss -= logits[b][y[b]] - mx - math.Log(s)
	}
	return loss / 5, logits
}

// TestDropout checks dropout[0.25] in a loss entry against plain loops
// with the documented mask (rt.DropoutMask of the model's seed and step:
// a new mask each training step), its gradients against central
// differences (the mask is fixed within a step), and that a predictor
// does not drop anything (evaluation mode).
func TestDropout(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	m := new(Drop)
	m.Init(5)
	var x [5][8]float64
	var y [5]int32
	for b := range x {
		for j := range x[b] {
			x[b][j] = rng.NormFloat64()
		}
		y[b] = int32(rng.IntN(3))
	}
	for step := range 3 {
		want, _ := dropRef(m, &x, &y, 5, step, true)
		l, err := m.ObjectiveLoss(&x, &y)
		if err != nil {
			t.Fatal(err)
		}
		if relErr(l, want) > 1e-12 {
			t.Fatalf("step %d: loss %v, want %v (the documented mask)", step, l, want)
		}
		if other, _ := dropRef(m, &x, &y, 5, step+1, true); relErr(l, other) < 1e-9 {
			t.Fatalf("step %d: the next step's mask gives the same loss", step)
		}
		if _, err := m.Backward(&x, &y); err != nil {
			t.Fatal(err)
		}
		for i := range m.Params.HeadW {
			v := m.Params.HeadW[i]
			const h = 1e-5
			m.Params.HeadW[i] = v + h
			lp, _ := m.ObjectiveLoss(&x, &y)
			m.Params.HeadW[i] = v - h
			lm, _ := m.ObjectiveLoss(&x, &y)
			m.Params.HeadW[i] = v
			if fd := (lp - lm) / (2 * h); math.Abs(fd-m.Grads.HeadW[i]) > 1e-8 {
				t.Fatalf("step %d: head.w grad[%d] = %v, central difference %v", step, i, m.Grads.HeadW[i], fd)
			}
		}
		if _, err := m.TrainStep(&x, &y); err != nil {
			t.Fatal(err)
		}
	}
	_, want := dropRef(m, &x, &y, 5, 0, false)
	got := m.Predict(&x)
	for b := range 5 {
		for c := range 3 {
			if relErr(got[b][c], want[b][c]) > 1e-12 {
				t.Fatalf("predict[%d][%d] = %v, want %v (no dropout)", b, c, got[b][c], want[b][c])
			}
		}
	}
}
