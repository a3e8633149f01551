package zoo

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

// The generated methods the tests call, by name (one place to edit if the
// generator renames them).
const (
	methodInit      = "Init"
	methodLoss      = "TrainLoss" // the loss entry is named train in every model
	methodBackward  = "Backward"
	methodTrainStep = "TrainStep"
)

// zooCase is one architecture of the zoo.
type zooCase struct {
	name string
	// m returns a fresh, zero model.
	m func() any
	// fill sets input number i (in entry order) of the loss entry, seen
	// as a flat slice; nil fills every input with uniform values in [-1, 1).
	fill func(i int, d []float64, rng *rand.Rand)
	// steps is how many TrainSteps must lower the loss, from the
	// initialization and data of seed trainSeed (1 when 0).
	steps     int
	trainSeed uint64
}

// oneHot fills d, rows of width n, with one-hot rows of random classes.
func oneHot(d []float64, n int, rng *rand.Rand) {
	for r := 0; r < len(d)/n; r++ {
		c := rng.IntN(n)
		for k := range n {
			d[r*n+k] = 0
		}
		d[r*n+c] = 1
	}
}

func uniform(d []float64, lo, hi float64, rng *rand.Rand) {
	for k := range d {
		d[k] = lo + (hi-lo)*rng.Float64()
	}
}

// images fills input 0 with pixels in [0, 1) and input 1 with one-hot labels.
func images(classes int) func(i int, d []float64, rng *rand.Rand) {
	return func(i int, d []float64, rng *rand.Rand) {
		if i == 0 {
			uniform(d, 0, 1, rng)
		} else {
			oneHot(d, classes, rng)
		}
	}
}

var zooCases = []zooCase{
	// With PyTorch's default initialization (the standard layers'), this
	// miniature LeNet stays at the class prior for some seeds, as
	// PyTorch's own does (3 of 8 seeds within 30 steps at lr 0.2, ours
	// 2 of 8, seed 1 one of them): seed 2 trains.
	{name: "LeNet", m: func() any { return new(LeNet) }, fill: images(3), steps: 30, trainSeed: 2},
	{name: "VGG", m: func() any { return new(VGG) }, fill: images(3), steps: 10},
	{name: "ResNet", m: func() any { return new(ResNet) }, fill: images(3), steps: 10},
	{name: "Normalized", m: func() any { return new(Normalized) }, fill: images(4), steps: 10},
	{name: "MobileNet", m: func() any { return new(MobileNet) }, fill: images(2), steps: 10},
	{name: "Transformer", m: func() any { return new(Transformer) }, steps: 10,
		fill: func(i int, d []float64, rng *rand.Rand) {
			if i == 0 { // token ids
				for k := range d {
					d[k] = float64(rng.IntN(6))
				}
			} else {
				oneHot(d, 6, rng)
			}
		}},
	{name: "Mixer", m: func() any { return new(Mixer) }, steps: 10,
		fill: func(i int, d []float64, rng *rand.Rand) {
			if i == 0 {
				uniform(d, -1, 1, rng)
			} else {
				oneHot(d, 3, rng)
			}
		}},
	{name: "Autoencoder", m: func() any { return new(Autoencoder) }, steps: 10},
}

// bound is a model with its loss entry's inputs allocated and filled.
type bound struct {
	m                     reflect.Value
	args                  []reflect.Value
	names                 []string    // parameter fields
	params, grads         [][]float64 // aliasing m.Params and m.Grads
	loss, backward, train func() float64
}

func bind(t *testing.T, c *zooCase, seed uint64) *bound {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	b := &bound{m: reflect.ValueOf(c.m())}
	method := func(name string) reflect.Value {
		f := b.m.MethodByName(name)
		if !f.IsValid() {
			t.Fatalf("%s has no method %s", c.name, name)
		}
		return f
	}
	lossF := method(methodLoss)
	for i := range lossF.Type().NumIn() {
		a := reflect.New(lossF.Type().In(i).Elem())
		d := flat(a.Elem())
		if c.fill != nil {
			c.fill(i, d, rng)
		} else {
			uniform(d, -1, 1, rng)
		}
		b.args = append(b.args, a)
	}
	call := func(f reflect.Value) func() float64 {
		return func() float64 { return f.Call(b.args)[0].Float() }
	}
	b.loss, b.backward, b.train = call(lossF), call(method(methodBackward)), call(method(methodTrainStep))
	method(methodInit).Call([]reflect.Value{reflect.ValueOf(seed)})
	e := b.m.Elem()
	b.names, b.params = fields(e.FieldByName("Params"))
	_, b.grads = fields(e.FieldByName("Grads"))
	if len(b.params) == 0 {
		t.Fatalf("%s: no parameters", c.name)
	}
	return b
}

// fields returns the float64 arrays of a generated Params (or Grads)
// struct as slices aliasing them, with their field names.
func fields(v reflect.Value) (names []string, data [][]float64) {
	for i := range v.NumField() {
		names = append(names, v.Type().Field(i).Name)
		data = append(data, flat(v.Field(i)))
	}
	return
}

// flat views a (nested) array of float64 as a slice.
func flat(v reflect.Value) []float64 {
	n := 1
	for v.Kind() == reflect.Array {
		n *= v.Len()
		v = v.Index(0)
	}
	return reflect.SliceAt(reflect.TypeFor[float64](), v.Addr().UnsafePointer(), n).Interface().([]float64)
}

// TestTrainLowersLoss trains every model a few steps on one fixed batch
// and checks that the loss went down by at least 10%.
func TestTrainLowersLoss(t *testing.T) {
	for i := range zooCases {
		c := &zooCases[i]
		t.Run(c.name, func(t *testing.T) {
			b := bind(t, c, max(c.trainSeed, 1))
			before := b.loss()
			if math.IsNaN(before) || math.IsInf(before, 0) || before <= 0 {
				t.Fatalf("initial loss %v", before)
			}
			for s := range c.steps {
				if l := b.train(); math.IsNaN(l) || math.IsInf(l, 0) {
					t.Fatalf("step %d: loss %v", s, l)
				}
			}
			after := b.loss()
			t.Logf("loss %.5g -> %.5g after %d steps", before, after, c.steps)
			if !(after < 0.9*before) {
				t.Errorf("loss %.6g -> %.6g after %d TrainSteps, want a drop of at least 10%%", before, after, c.steps)
			}
		})
	}
}

// TestGradients checks every model's Backward against central differences
// of its loss entry in float64, at every coordinate of every parameter.
// Constant-initialized parameters (zero biases, layer norm's unit gains)
// are moved to random values first, so that the check does not run at
// such a special point. ReLU and max pooling are piecewise linear: a
// coordinate whose forward and backward one-sided differences disagree
// has a kink within the step and is skipped (at most 2% of them may be).
func TestGradients(t *testing.T) {
	const (
		tol = 1e-6 // |analytic - numeric| <= tol * max(1, |analytic|, |numeric|)
		h   = 1e-6
	)
	for i := range zooCases {
		c := &zooCases[i]
		t.Run(c.name, func(t *testing.T) {
			b := bind(t, c, 2)
			rng := rand.New(rand.NewPCG(3, 4))
			for _, p := range b.params {
				if slices.Min(p) == slices.Max(p) {
					for k := range p {
						p[k] += 0.5 * rng.NormFloat64()
					}
				}
			}
			loss := b.backward()
			if l := b.loss(); math.Abs(l-loss) > 1e-12*math.Max(1, math.Abs(l)) {
				t.Errorf("Backward's loss %.17g, the loss entry's %.17g", loss, l)
			}
			var checked, skipped int
			var worst float64
			var where string
			var maxGrad float64
			for f, p := range b.params {
				g := slices.Clone(b.grads[f])
				for k := range p {
					x := p[k]
					p[k] = x + h
					lp := b.loss()
					p[k] = x - h
					lm := b.loss()
					p[k] = x
					fwd, bwd := (lp-loss)/h, (loss-lm)/h
					if math.Abs(fwd-bwd) > 1e-4*math.Max(1, math.Abs(fwd)) {
						skipped++
						continue
					}
					num := (lp - lm) / (2 * h)
					e := math.Abs(g[k]-num) / math.Max(1, math.Max(math.Abs(g[k]), math.Abs(num)))
					checked++
					maxGrad = math.Max(maxGrad, math.Abs(g[k]))
					if e > worst || where == "" {
						worst, where = e, fmt.Sprintf("%s[%d] (analytic %.10g, numeric %.10g)", b.names[f], k, g[k], num)
					}
				}
			}
			t.Logf("%d coordinates checked, %d skipped at kinks; worst relative error %.3g at %s", checked, skipped, worst, where)
			if maxGrad == 0 {
				t.Errorf("every gradient is zero: the check is vacuous")
			}
			if skipped > (checked+skipped)/50 {
				t.Errorf("%d of %d coordinates skipped at kinks", skipped, checked+skipped)
			}
			if worst > tol {
				t.Errorf("gradient mismatch: worst relative error %.3g at %s", worst, where)
			}
		})
	}
}

// crossEntropy is the batch mean of -log softmax(logits)[label], computed
// directly.
func crossEntropy(logits [][]float64, onehot [][]float64) float64 {
	var sum float64
	for r, z := range logits {
		m := slices.Max(z)
		var s float64
		for _, v := range z {
			s += math.Exp(v - m)
		}
		for c, v := range z {
			sum -= onehot[r][c] * (v - m - math.Log(s))
		}
	}
	return sum / float64(len(logits))
}

// TestPredictorsAgreeWithLoss checks the predictors that share their
// parameters with a loss entry at another batch size: the cross-entropy of
// their logits, computed directly, is the loss entry's value.
func TestPredictorsAgreeWithLoss(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	t.Run("LeNet", func(t *testing.T) {
		m := new(LeNet)
		m.Init(3)
		var x [4][14][14][1]float64
		var y [4][3]float64
		fill := images(3)
		fill(0, flat(reflect.ValueOf(&x).Elem()), rng)
		fill(1, flat(reflect.ValueOf(&y).Elem()), rng)
		var logits, labels [][]float64
		for r := range x {
			img := [1][14][14][1]float64{x[r]}
			logits = append(logits, slices.Clone(m.Predict(&img)[0][:]))
			labels = append(labels, y[r][:])
		}
		if got, want := m.TrainLoss(&x, &y), crossEntropy(logits, labels); math.Abs(got-want) > 1e-12*math.Max(1, want) {
			t.Errorf("loss entry %.15g, cross-entropy of the batch-1 predictor's logits %.15g", got, want)
		}
	})
	t.Run("Normalized", func(t *testing.T) {
		m := new(Normalized)
		m.Init(3)
		var x [2][6][6][1]float64
		var y [2][4]float64
		fill := images(4)
		fill(0, flat(reflect.ValueOf(&x).Elem()), rng)
		fill(1, flat(reflect.ValueOf(&y).Elem()), rng)
		var p [3][6][6][1]float64
		p[0], p[1], p[2] = x[0], x[1], x[0]
		out := m.Predict(&p)
		logits := [][]float64{slices.Clone(out[0][:]), slices.Clone(out[1][:])}
		if out[2] != out[0] {
			t.Errorf("the same image predicts %v and %v", out[0], out[2])
		}
		if got, want := m.TrainLoss(&x, &y), crossEntropy(logits, [][]float64{y[0][:], y[1][:]}); math.Abs(got-want) > 1e-12*math.Max(1, want) {
			t.Errorf("loss entry %.15g, cross-entropy of the predictor's logits %.15g", got, want)
		}
	})
}

// TestTransformerIsCausal checks the causal mask: the logits at a position
// do not depend on the tokens after it, and do depend on the token at it.
func TestTransformerIsCausal(t *testing.T) {
	m := new(Transformer)
	m.Init(4)
	ids := [1][4]float64{{1, 4, 2, 5}}
	before := *m.Predict(&ids)
	for p := 3; p >= 0; p-- {
		ids[0][p] = float64((int(ids[0][p]) + 3) % 6) // change the token at p
		after := *m.Predict(&ids)
		for q := range 4 {
			same := after[0][q] == before[0][q]
			if q < p && !same {
				t.Errorf("changing token %d changed the logits at position %d: %v -> %v", p, q, before[0][q], after[0][q])
			}
			if q == p && same {
				t.Errorf("changing token %d left its own logits unchanged", p)
			}
		}
		before = after
	}
}

// TestRunTimeRows checks Normalized's classify entry, whose rows are
// chosen at run time (<=3): for every n its first n rows are the
// fixed-batch predictor's, the other rows are left alone, and a row count
// past the bound (or negative) is an *rt.RowsError that writes nothing.
func TestRunTimeRows(t *testing.T) {
	m := new(Normalized)
	m.Init(3)
	var x [3][6][6][1]float64
	uniform(flat(reflect.ValueOf(&x).Elem()), 0, 1, rand.New(rand.NewPCG(8, 9)))
	fixed := *m.Predict(&x)
	for _, n := range []int{-1, 0, 1, 2, 3, 4} {
		for r := range m.outClassify {
			for c := range m.outClassify[r] {
				m.outClassify[r][c] = math.NaN() // a sentinel: never written
			}
		}
		out, err := m.Classify(&x, n)
		if n < 0 || n > 3 {
			var re *rt.RowsError
			if !errors.As(err, &re) || re.N != n || re.Max != 3 || out != nil {
				t.Errorf("n=%d: (%v, %v), want a *rt.RowsError", n, out, err)
			}
		} else if err != nil || out != &m.outClassify {
			t.Fatalf("n=%d: error %v", n, err)
		}
		for r := range m.outClassify {
			for c, v := range m.outClassify[r] {
				switch {
				case r < n && err == nil && math.Abs(v-fixed[r][c]) > 1e-12*math.Max(1, math.Abs(fixed[r][c])):
					t.Errorf("n=%d: row %d class %d: %v, the fixed-batch entry gives %v", n, r, c, v, fixed[r][c])
				case (r >= n || err != nil) && !math.IsNaN(v):
					t.Errorf("n=%d: row %d class %d was written (%v)", n, r, c, v)
				}
			}
		}
	}
	if a := testing.AllocsPerRun(20, func() { _, _ = m.Classify(&x, 2) }); a != 0 {
		t.Errorf("Classify: %v allocs/op, want 0", a)
	}
}

// rowsLoss is a model whose loss takes its number of rows at run time,
// seen through closures over its inputs (rows of perRow cells).
type rowsLoss struct {
	max      int
	y        []float64 // the labels of all max rows, flat
	params   [][]float64
	grads    [][]float64
	loss     func(n int) (float64, error)
	backward func(n int) (float64, error)
	step     func(n int) (float64, error)
	// predict returns the fixed-batch predictor's logits for all max
	// rows, as rows of classes (a row per position).
	predict func() [][]float64
}

// checkRowsLoss checks a loss with run-time rows: for every n its value
// is the mean (or with sum, the total) cross-entropy of the fixed-batch
// predictor's logits over the first n rows, computed directly; n = 0 and n = max + 1 are
// *rt.RowsErrors; Backward's gradient at n = max - 1 matches central
// differences; TrainSteps lower the loss; TrainStep does not allocate.
func checkRowsLoss(t *testing.T, m *rowsLoss, classes int, sum bool) {
	logits := m.predict()
	labels := make([][]float64, 0, len(logits))
	for r := 0; r < len(m.y)/classes; r++ {
		labels = append(labels, m.y[r*classes:(r+1)*classes])
	}
	perRow := len(logits) / m.max // positions per row
	for n := 1; n <= m.max; n++ {
		got, err := m.loss(n)
		want := crossEntropy(logits[:n*perRow], labels[:n*perRow])
		if sum {
			want *= float64(n * perRow)
		}
		if err != nil || math.Abs(got-want) > 1e-12*math.Max(1, want) {
			t.Errorf("n=%d: loss (%.15g, %v), the predictor's cross-entropy over %d rows %.15g", n, got, err, n, want)
		}
	}
	for _, n := range []int{0, m.max + 1} {
		var re *rt.RowsError
		if _, err := m.loss(n); !errors.As(err, &re) {
			t.Errorf("loss at n=%d: error %v, want a *rt.RowsError", n, err)
		}
		if _, err := m.step(n); !errors.As(err, &re) {
			t.Errorf("TrainStep at n=%d: error %v, want a *rt.RowsError", n, err)
		}
	}
	n := m.max - 1
	l, err := m.backward(n)
	if err != nil {
		t.Fatal(err)
	}
	var worst float64
	for f, p := range m.params {
		g := slices.Clone(m.grads[f])
		for k := range p {
			x, h := p[k], 1e-6
			p[k] = x + h
			lp, _ := m.loss(n)
			p[k] = x - h
			lm, _ := m.loss(n)
			p[k] = x
			num := (lp - lm) / (2 * h)
			worst = math.Max(worst, math.Abs(g[k]-num)/math.Max(1, math.Max(math.Abs(g[k]), math.Abs(num))))
		}
	}
	if worst > 1e-6 {
		t.Errorf("n=%d: gradient worst relative error %.3g (loss %.6g)", n, worst, l)
	}
	before, _ := m.loss(m.max)
	for range 20 {
		if _, err := m.step(m.max); err != nil {
			t.Fatal(err)
		}
	}
	if after, _ := m.loss(m.max); !(after < 0.9*before) {
		t.Errorf("loss %.6g -> %.6g after 20 TrainSteps", before, after)
	}
	if a := testing.AllocsPerRun(20, func() { _, _ = m.step(n) }); a != 0 {
		t.Errorf("TrainStep: %v allocs/op, want 0", a)
	}
}

func TestRunTimeRowsLoss(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	t.Run("RowsMLP", func(t *testing.T) {
		m := new(RowsMLP)
		m.Init(5)
		var x, px [4][3]float64
		var y [4][2]float64
		uniform(flat(reflect.ValueOf(&x).Elem()), -1, 1, rng)
		oneHot(flat(reflect.ValueOf(&y).Elem()), 2, rng)
		_, params := fields(reflect.ValueOf(&m.Params).Elem())
		_, grads := fields(reflect.ValueOf(&m.Grads).Elem())
		checkRowsLoss(t, &rowsLoss{max: 4, y: flat(reflect.ValueOf(&y).Elem()), params: params, grads: grads,
			loss:     func(n int) (float64, error) { return m.TrainLoss(&x, &y, n) },
			backward: func(n int) (float64, error) { return m.Backward(&x, &y, n) },
			step:     func(n int) (float64, error) { return m.TrainStep(&x, &y, n) },
			predict: func() [][]float64 {
				px = x
				out := m.Predict(&px)
				return [][]float64{out[0][:], out[1][:], out[2][:], out[3][:]}
			}}, 2, false)
	})
	t.Run("RowsSeq", func(t *testing.T) {
		m := new(RowsSeq)
		m.Init(6)
		var x, px [3][2][3]float64
		var y [3][2][2]float64
		uniform(flat(reflect.ValueOf(&x).Elem()), -1, 1, rng)
		oneHot(flat(reflect.ValueOf(&y).Elem()), 2, rng)
		_, params := fields(reflect.ValueOf(&m.Params).Elem())
		_, grads := fields(reflect.ValueOf(&m.Grads).Elem())
		checkRowsLoss(t, &rowsLoss{max: 3, y: flat(reflect.ValueOf(&y).Elem()), params: params, grads: grads,
			loss:     func(n int) (float64, error) { return m.TrainLoss(&x, &y, n) },
			backward: func(n int) (float64, error) { return m.Backward(&x, &y, n) },
			step:     func(n int) (float64, error) { return m.TrainStep(&x, &y, n) },
			predict: func() [][]float64 {
				px = x
				out := m.Predict(&px)
				var rows [][]float64
				for r := range out {
					for p := range out[r] {
						rows = append(rows, slices.Clone(out[r][p][:]))
					}
				}
				return rows
			}}, 2, true)
	})
}

// TestTransformerRunTimeRows checks the transformer's entry with run-time
// rows (sequences): each of the first n sequences gets the logits the
// one-sequence predictor gives it.
func TestTransformerRunTimeRows(t *testing.T) {
	m := new(Transformer)
	m.Init(7)
	ids := [3][4]float64{{1, 4, 2, 5}, {0, 0, 3, 1}, {5, 2, 2, 4}}
	for n := 0; n <= 3; n++ {
		out, err := m.PredictMany(&ids, n)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		got := *out
		for r := range n {
			one := [1][4]float64{ids[r]}
			want := m.Predict(&one)[0]
			for p := range 4 {
				for c := range 6 {
					if d := math.Abs(got[r][p][c] - want[p][c]); d > 1e-12*math.Max(1, math.Abs(want[p][c])) {
						t.Errorf("n=%d: sequence %d position %d class %d: %v, one at a time %v", n, r, p, c, got[r][p][c], want[p][c])
					}
				}
			}
		}
	}
	if _, err := m.PredictMany(&ids, 4); err == nil {
		t.Error("4 sequences: no error")
	}
}
