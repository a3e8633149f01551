package gradcheck

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// tol is the acceptance tolerance: |analytic - numeric| <= tol *
// max(1, |analytic|, |numeric|).
const tol = 1e-6

// model is what every generated model provides.
type initer interface {
	Init(seed uint64)
}

// gcase describes one gradient check.
type gcase struct {
	name string
	m    initer
	seed uint64
	// input fills input number i (in entry order) with test data; nil
	// fills every input with uniform values in [-1, 1).
	input func(i int, d []float64, rng *rand.Rand)
	// prep adjusts parameter field name after Init (to move values away
	// from kinks or out of a function's domain edge); nil keeps Init's.
	prep func(field string, p []float64, rng *rand.Rand)
	// prepAll, run after prep, adjusts the parameters together.
	prepAll func(p map[string][]float64)
	// want, when set, computes the expected loss directly in Go from the
	// parameters (by field name) and the inputs, to check the forward
	// values as well as the gradients.
	want func(p map[string][]float64, in [][]float64) float64
	// zeroGrad marks a model whose gradients are all zero by design.
	zeroGrad bool
	// corrupt, for the harness's own test, alters the analytic gradients.
	corrupt func(grads [][]float64)
	// skip, when not empty, is the reason the case is skipped.
	skip string
}

// fields returns the float64 arrays of a generated Params (or Grads)
// struct as slices aliasing them, with their field names.
func fields(v reflect.Value) (names []string, data [][]float64) {
	t := v.Type()
	for i := range t.NumField() {
		f := v.Field(i)
		names = append(names, t.Field(i).Name)
		data = append(data, f.Slice(0, f.Len()).Interface().([]float64))
	}
	return
}

// bound is a generated model with its inputs fixed.
type bound struct {
	names    []string
	params   [][]float64
	grads    [][]float64
	inputs   [][]float64
	loss     func() float64
	backward func() float64
}

// bind finds the ObjectiveLoss and Backward methods of m by reflection and
// allocates and fills their inputs.
func bind(t testing.TB, c *gcase, rng *rand.Rand) *bound {
	v := reflect.ValueOf(c.m)
	obj := v.MethodByName("ObjectiveLoss")
	bwd := v.MethodByName("Backward")
	if !obj.IsValid() || !bwd.IsValid() {
		t.Fatalf("%s: no ObjectiveLoss/Backward method", c.name)
	}
	ft := obj.Type()
	if ft.NumOut() != 1 || ft.Out(0).Kind() != reflect.Float64 {
		t.Fatalf("%s: ObjectiveLoss has type %v, want a float64 loss", c.name, ft)
	}
	var args []reflect.Value
	var inputs [][]float64
	for i := range ft.NumIn() {
		a := reflect.New(ft.In(i).Elem())
		d := flat(a.Elem())
		if c.input != nil {
			c.input(i, d, rng)
		} else {
			for k := range d {
				d[k] = 2*rng.Float64() - 1
			}
		}
		args = append(args, a)
		inputs = append(inputs, d)
	}
	b := &bound{inputs: inputs}
	e := v.Elem()
	b.names, b.params = fields(e.FieldByName("Params"))
	_, b.grads = fields(e.FieldByName("Grads"))
	b.loss = func() float64 { return obj.Call(args)[0].Float() }
	b.backward = func() float64 { return bwd.Call(args)[0].Float() }
	return b
}

// flat views a (nested) array of float64 as a slice.
func flat(v reflect.Value) []float64 {
	n := 1
	for v.Kind() == reflect.Array {
		n *= v.Len()
		if v.Len() == 0 {
			return nil
		}
		v = v.Index(0)
	}
	return reflect.SliceAt(reflect.TypeFor[float64](), v.Addr().UnsafePointer(), n).Interface().([]float64)
}

// result is the worst error found by a check.
type result struct {
	worst                     float64 // the largest |a-n| / max(1,|a|,|n|)
	field                     string
	cell                      int
	analytic, numeric         float64
	checked                   int
	loss                      float64
	maxAbsGrad, maxAbsNumeric float64
}

func (r result) String() string {
	return fmt.Sprintf("worst rel err %.3g at %s[%d] (analytic %.12g, numeric %.12g); %d coords, loss %.6g, max|grad| %.3g",
		r.worst, r.field, r.cell, r.analytic, r.numeric, r.checked, r.loss, r.maxAbsGrad)
}

// check runs the gradient check of c and returns its worst error.
func check(t testing.TB, c *gcase) result {
	rng := rand.New(rand.NewPCG(c.seed, 12345))
	b := bind(t, c, rng)
	c.m.Init(c.seed)
	// Constant-initialized parameters (biases 0, layer_norm's gamma 1)
	// are moved to random values around their constant, so that no check
	// runs at such a special point.
	for _, p := range b.params {
		if len(p) > 0 && slices.Min(p) == slices.Max(p) {
			for k := range p {
				p[k] += 0.5 * rng.NormFloat64()
			}
		}
	}
	if c.prep != nil {
		for i, n := range b.names {
			c.prep(n, b.params[i], rng)
		}
	}
	if c.prepAll != nil {
		p := map[string][]float64{}
		for i, n := range b.names {
			p[n] = b.params[i]
		}
		c.prepAll(p)
	}
	var r result
	r.loss = b.backward()
	if math.IsNaN(r.loss) || math.IsInf(r.loss, 0) {
		t.Fatalf("%s: loss %v", c.name, r.loss)
	}
	// Backward must agree with the forward loss.
	if l := b.loss(); math.Abs(l-r.loss) > 1e-12*math.Max(1, math.Abs(l)) {
		t.Errorf("%s: Backward loss %.17g, ObjectiveLoss loss %.17g", c.name, r.loss, l)
	}
	if c.want != nil {
		p := map[string][]float64{}
		for i, n := range b.names {
			p[n] = b.params[i]
		}
		if w := c.want(p, b.inputs); math.Abs(w-r.loss) > 1e-9*math.Max(1, math.Abs(w)) {
			t.Errorf("%s: loss %.15g, direct computation %.15g", c.name, r.loss, w)
		}
	}
	// Copy the gradients: the loss calls below do not touch them, but be safe.
	grads := make([][]float64, len(b.grads))
	for i, g := range b.grads {
		grads[i] = append([]float64(nil), g...)
	}
	if c.corrupt != nil {
		c.corrupt(grads)
	}
	for i, p := range b.params {
		for k := range p {
			x := p[k]
			h := 1e-6 * math.Max(1, math.Abs(x))
			p[k] = x + h
			lp := b.loss()
			p[k] = x - h
			lm := b.loss()
			p[k] = x
			num := (lp - lm) / (2 * h)
			an := grads[i][k]
			e := math.Abs(an-num) / math.Max(1, math.Max(math.Abs(an), math.Abs(num)))
			r.checked++
			r.maxAbsGrad = math.Max(r.maxAbsGrad, math.Abs(an))
			r.maxAbsNumeric = math.Max(r.maxAbsNumeric, math.Abs(num))
			if e > r.worst || r.field == "" {
				r.worst, r.field, r.cell, r.analytic, r.numeric = e, b.names[i], k, an, num
			}
		}
	}
	if l := b.loss(); l != r.loss {
		t.Errorf("%s: loss changed after the check: %.17g, was %.17g", c.name, l, r.loss)
	}
	return r
}

// runCases runs every case as a subtest.
func runCases(t *testing.T, cases []gcase) {
	for i := range cases {
		c := &cases[i]
		t.Run(c.name, func(t *testing.T) {
			if c.skip != "" {
				t.Skip(c.skip)
			}
			if c.seed == 0 {
				c.seed = 1
			}
			r := check(t, c)
			t.Logf("%s", r)
			if r.checked == 0 {
				t.Fatalf("no parameters to check")
			}
			if c.zeroGrad {
				if r.maxAbsGrad != 0 || r.maxAbsNumeric > tol {
					t.Errorf("gradients should all be zero: %s", r)
				}
			} else if r.maxAbsGrad == 0 && r.maxAbsNumeric == 0 {
				t.Errorf("every gradient is zero: the check is vacuous")
			}
			if r.worst > tol {
				t.Errorf("gradient mismatch: %s", r)
			}
		})
	}
}

// Input fillers.

// positive fills with values in [0.5, 1.5).
func positive(_ int, d []float64, rng *rand.Rand) {
	for k := range d {
		d[k] = 0.5 + rng.Float64()
	}
}

// awayFromZero moves every value to at least 0.1 from 0, keeping its sign.
func awayFromZero(_ string, p []float64, _ *rand.Rand) {
	for k, x := range p {
		if math.Abs(x) < 0.1 {
			p[k] = math.Copysign(0.1+math.Abs(x), x)
		}
	}
}

// makePositive maps every value to 0.5 + |x|.
func makePositive(_ string, p []float64, _ *rand.Rand) {
	for k, x := range p {
		p[k] = 0.5 + math.Abs(x)
	}
}
