package rt

import (
	"math"
	"testing"
)

// The expected values below are worked by hand from digest §6's sgd_one;
// every operand is a short binary fraction, so the arithmetic is exact in
// both precisions (and immune to fused multiply-add).
func TestSGDHandWorked(t *testing.T) {
	const lr, mom, wd = 0.5, 0.5, 0.25
	cases := []struct {
		name     string
		momentum float64
		nesterov bool
		want     [2]float64 // param after step 1 and step 2, grad 0.5 each time
		buf      [2]float64
	}{
		// delta = 0.5 + 0.25*1 = 0.75; p = 1 - 0.375 = 0.625;
		// delta = 0.5 + 0.25*0.625 = 0.65625; p = 0.625 - 0.328125.
		{"plain", 0, false, [2]float64{0.625, 0.296875}, [2]float64{0, 0}},
		// buf = 0.75, p = 0.625; delta = 0.65625, buf = 0.375 + 0.65625
		// = 1.03125, p = 0.625 - 0.515625.
		{"momentum", mom, false, [2]float64{0.625, 0.109375}, [2]float64{0.75, 1.03125}},
		// buf = 0.75, delta = 0.75 + 0.375 = 1.125, p = 1 - 0.5625 =
		// 0.4375; delta = 0.5 + 0.109375 = 0.609375, buf = 0.375 +
		// 0.609375 = 0.984375, delta = 0.609375 + 0.4921875 = 1.1015625,
		// p = 0.4375 - 0.55078125 = -0.11328125.
		{"nesterov", mom, true, [2]float64{0.4375, -0.11328125}, [2]float64{0.75, 0.984375}},
	}
	for _, c := range cases {
		p32, g32, b32 := []float32{1}, []float32{0.5}, []float32{0}
		p64, g64, b64 := []float64{1}, []float64{0.5}, []float64{0}
		for step := 0; step < 2; step++ {
			SGD(p32, g32, b32, lr, float32(c.momentum), wd, c.nesterov)
			SGD(p64, g64, b64, lr, c.momentum, wd, c.nesterov)
			if float64(p32[0]) != c.want[step] || p64[0] != c.want[step] {
				t.Errorf("%s step %d: param %v (float32) %v (float64), want %v", c.name, step+1, p32[0], p64[0], c.want[step])
			}
			if float64(b32[0]) != c.buf[step] || b64[0] != c.buf[step] {
				t.Errorf("%s step %d: momentum buffer %v / %v, want %v", c.name, step+1, b32[0], b64[0], c.buf[step])
			}
		}
	}
}

func TestSGDConverges(t *testing.T) {
	// Minimize sum 0.5*(p_i - target_i)^2; the gradient is p - target.
	target := []float64{3, -1, 0.5}
	for _, nesterov := range []bool{false, true} {
		p := []float64{0, 0, 0}
		g, buf := make([]float64, 3), make([]float64, 3)
		for range 300 {
			for i := range p {
				g[i] = p[i] - target[i]
			}
			SGD(p, g, buf, 0.1, 0.9, 0, nesterov)
		}
		for i := range p {
			if math.Abs(p[i]-target[i]) > 1e-6 {
				t.Errorf("nesterov=%v: p[%d] = %v, want %v", nesterov, i, p[i], target[i])
			}
		}
	}
	// Weight decay alone shrinks toward zero: p *= 1 - lr*wd.
	p := []float32{2}
	SGD(p, []float32{0}, nil, 0.5, 0, 0.5, false)
	if p[0] != 1.5 {
		t.Errorf("weight decay step: %v, want 1.5", p[0])
	}
}

func TestSGDLengthMismatch(t *testing.T) {
	for _, f := range []func(){
		func() { SGD([]float32{1, 2}, []float32{1}, nil, 0.1, 0, 0, false) },
		func() { SGD([]float32{1, 2}, []float32{1, 2}, []float32{0}, 0.1, 0.9, 0, false) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("length mismatch did not panic")
				}
			}()
			f()
		}()
	}
}

func TestLinearDecay(t *testing.T) {
	for _, c := range []struct {
		lr0         float64
		step, steps int
		want        float64
	}{
		{0.5, 0, 10, 1},
		{0.5, 10, 10, 0.5},
		{0.5, 15, 10, 0.25},
		{0.5, 20, 10, 0},
		{0.1, 0, 100, 0.2},
		{0.1, 50, 100, 0.15},
	} {
		if got := LinearDecay(c.lr0, c.step, c.steps); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("LinearDecay(%v, %d, %d) = %v, want %v", c.lr0, c.step, c.steps, got, c.want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("LinearDecay with steps = 0 did not panic")
		}
	}()
	LinearDecay(0.1, 0, 0)
}
