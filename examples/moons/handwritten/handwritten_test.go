package handwritten

import (
	"math"
	"testing"

	"github.com/ocannlgen/ocannlgen/examples/internal/demo"
)

// batchOf copies points [start, start+Batch) (wrapping around) into x, y.
func batchOf(x *[Batch][In]float32, y *[Batch][Out]float32, pts [][2]float32, lbl []float32, start int) {
	for b := range Batch {
		k := (start + b) % len(pts)
		x[b] = pts[k]
		y[b][0] = lbl[k]
	}
}

// tensor names one parameter tensor of Params as a flat list of
// pointers to its elements.
type tensor struct {
	name string
	elem func(p *Params) []*float32
}

// refs returns pointers to the elements of the rows of a weight matrix.
func refs(rows ...[]float32) []*float32 {
	var out []*float32
	for _, row := range rows {
		for i := range row {
			out = append(out, &row[i])
		}
	}
	return out
}

var tensors = []tensor{
	{"W1", func(p *Params) []*float32 {
		var rs [][]float32
		for o := range p.W1 {
			rs = append(rs, p.W1[o][:])
		}
		return refs(rs...)
	}},
	{"B1", func(p *Params) []*float32 { return refs(p.B1[:]) }},
	{"W2", func(p *Params) []*float32 {
		var rs [][]float32
		for o := range p.W2 {
			rs = append(rs, p.W2[o][:])
		}
		return refs(rs...)
	}},
	{"B2", func(p *Params) []*float32 { return refs(p.B2[:]) }},
	{"W3", func(p *Params) []*float32 { return refs(p.W3[0][:]) }},
	{"B3", func(p *Params) []*float32 { return refs(p.B3[:]) }},
}

// pattern records which side of its kink every relu and every hinge
// was on in the last Forward call of n.
func pattern(n *Net, y *[Batch][Out]float32) (pat [Batch][2*Hidden + Out]bool) {
	for b := range Batch {
		for i := range Hidden {
			pat[b][i] = n.H1[b][i] > 0
			pat[b][Hidden+i] = n.H2[b][i] > 0
		}
		for o := range Out {
			pat[b][2*Hidden+o] = 1-y[b][o]*n.Score[b][o] > 0
		}
	}
	return pat
}

// checkGradients compares Backward with central differences of the
// float32 loss (eps = 1e-2) on every coordinate of every tensor. The
// loss is linear in any single parameter as long as no relu or hinge
// changes side, so coordinates whose perturbation by ±eps changes that
// pattern (a kink lies within eps) are skipped. It adds the number of
// coordinates checked and tried per tensor to checked and tried.
func checkGradients(t *testing.T, n *Net, x *[Batch][In]float32, y *[Batch][Out]float32, checked, tried []int) {
	t.Helper()
	const eps = 1e-2
	n.Forward(x, y)
	n.Backward(x, y)
	base := pattern(n, y)
	var probe Net
	for ti, tn := range tensors {
		grads := tn.elem(&n.G)
		for k := range grads {
			tried[ti]++
			probe = *n
			param := tn.elem(&probe.P)[k]
			p0 := *param
			*param = p0 + eps
			lp := float64(probe.Forward(x, y))
			kink := pattern(&probe, y) != base
			*param = p0 - eps
			lm := float64(probe.Forward(x, y))
			if kink || pattern(&probe, y) != base {
				continue
			}
			fd := (lp - lm) / (2 * eps)
			an := float64(*grads[k])
			if math.Abs(fd-an) > 2e-2*math.Max(math.Abs(fd), math.Abs(an))+1e-4 {
				t.Errorf("%s[%d]: analytic %.6g, finite difference %.6g", tn.name, k, an, fd)
			}
			checked[ti]++
		}
	}
}

// TestGradients checks Backward against finite differences, at
// initialization and after some training, on a batch of 32 different
// points and on batches of one point repeated (where fewer kinks lie
// near the parameters, so the first layer gets checked too). At least a
// quarter of each tensor's coordinates must be free of kinks overall.
func TestGradients(t *testing.T) {
	pts, lbl := demo.Moons(256, 1, 0.1)
	var x [Batch][In]float32
	var y [Batch][Out]float32
	checked := make([]int, len(tensors))
	tried := make([]int, len(tensors))
	check := func(n *Net) {
		batchOf(&x, &y, pts, lbl, 0)
		checkGradients(t, n, &x, &y, checked, tried)
		for k := range 8 {
			for b := range Batch {
				x[b], y[b][0] = pts[k], lbl[k]
			}
			checkGradients(t, n, &x, &y, checked, tried)
		}
	}
	var n Net
	n.Init(42)
	check(&n)
	// Again after some training, with larger weights and nonzero biases.
	for s := range 300 {
		batchOf(&x, &y, pts, lbl, s*Batch)
		n.TrainStep(&x, &y, 0.05, 0.9, 1e-4)
	}
	check(&n)
	for ti, tn := range tensors {
		t.Logf("%s: %d of %d coordinates checked", tn.name, checked[ti], tried[ti])
		if checked[ti] < tried[ti]/4 {
			t.Errorf("%s: only %d of %d coordinates free of kinks", tn.name, checked[ti], tried[ti])
		}
	}
}

// TestBackwardOverwrites checks that Backward replaces, not accumulates.
func TestBackwardOverwrites(t *testing.T) {
	pts, lbl := demo.Moons(64, 2, 0.1)
	var x [Batch][In]float32
	var y [Batch][Out]float32
	batchOf(&x, &y, pts, lbl, 0)
	var n Net
	n.Init(1)
	n.Forward(&x, &y)
	n.Backward(&x, &y)
	g := n.G
	n.Backward(&x, &y)
	if n.G != g {
		t.Error("second Backward changed the gradients")
	}
}

func TestInit(t *testing.T) {
	var a, b, c Net
	a.Init(3)
	b.Init(3)
	c.Init(4)
	if a.P != b.P {
		t.Error("Init is not deterministic")
	}
	if a.P == c.P {
		t.Error("different seeds give the same parameters")
	}
	for _, v := range tensors[2].elem(&a.P) {
		if *v < -0.25 || *v >= 0.25 {
			t.Fatalf("weight %v outside [-0.25, 0.25)", *v)
		}
	}
	if a.P.B1 != [Hidden]float32{} || a.P.B2 != [Hidden]float32{} || a.P.B3 != [Out]float32{} {
		t.Error("biases not zero")
	}
}

// evaluate returns the accuracy of n on pts (a multiple of Batch long).
func evaluate(n *Net, pts [][2]float32, lbl []float32) float64 {
	var x [Batch][In]float32
	var y [Batch][Out]float32
	scores := make([]float32, 0, len(pts))
	for start := 0; start < len(pts); start += Batch {
		batchOf(&x, &y, pts, lbl, start)
		n.Forward(&x, &y)
		for b := range Batch {
			scores = append(scores, n.Score[b][0])
		}
	}
	return demo.Accuracy(scores, lbl)
}

func TestTrainMoons(t *testing.T) {
	const steps = 2000
	train, trainLbl := demo.Moons(1024, 1, 0.1)
	test, testLbl := demo.Moons(256, 2, 0.1)
	var n Net
	n.Init(7)
	var x [Batch][In]float32
	var y [Batch][Out]float32
	var loss float32
	for s := range steps {
		lr := float32(0.1 * (1 - 0.9*float64(s)/steps)) // linear decay 0.1 -> 0.01
		batchOf(&x, &y, train, trainLbl, s*Batch)
		loss = n.TrainStep(&x, &y, lr, 0.9, 1e-4)
	}
	if n.Step != steps {
		t.Errorf("Step = %d, want %d", n.Step, steps)
	}
	trainAcc := evaluate(&n, train, trainLbl)
	testAcc := evaluate(&n, test, testLbl)
	t.Logf("final batch loss %.4f, train accuracy %.3f, held-out accuracy %.3f", loss, trainAcc, testAcc)
	if testAcc < 0.95 {
		t.Errorf("held-out accuracy %.3f < 0.95", testAcc)
	}
}

func TestTrainStepAllocs(t *testing.T) {
	pts, lbl := demo.Moons(64, 1, 0.1)
	n := new(Net)
	n.Init(1)
	x := new([Batch][In]float32)
	y := new([Batch][Out]float32)
	batchOf(x, y, pts, lbl, 0)
	if a := testing.AllocsPerRun(100, func() { n.TrainStep(x, y, 0.01, 0.9, 1e-4) }); a != 0 {
		t.Errorf("TrainStep allocates %v times per run", a)
	}
	if a := testing.AllocsPerRun(10, func() { n.Init(2) }); a != 0 {
		t.Errorf("Init allocates %v times per run", a)
	}
}

func BenchmarkTrainStep(b *testing.B) {
	pts, lbl := demo.Moons(1024, 1, 0.1)
	n := new(Net)
	n.Init(1)
	x := new([Batch][In]float32)
	y := new([Batch][Out]float32)
	b.ReportAllocs()
	s := 0
	for b.Loop() {
		batchOf(x, y, pts, lbl, s*Batch)
		n.TrainStep(x, y, 0.01, 0.9, 1e-4)
		s++
	}
}
