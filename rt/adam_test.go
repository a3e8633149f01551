package rt

import (
	"math"
	"math/rand/v2"
	"testing"
)

// refAdam is the published rule (Kingma & Ba, Algorithm 1; AdamW:
// Loshchilov & Hutter, Algorithm 2 with the learning rate as schedule
// multiplier, as PyTorch implements it) in float64, one element at a time.
func refAdam(p, g, m, v float64, t int, lr, b1, b2, eps, wd float64, decoupled bool) (float64, float64, float64) {
	if wd > 0 && !decoupled {
		g += wd * p
	}
	if wd > 0 && decoupled {
		p -= lr * wd * p
	}
	m = b1*m + (1-b1)*g
	v = b2*v + (1-b2)*g*g
	mhat := m / (1 - math.Pow(b1, float64(t)))
	vhat := v / (1 - math.Pow(b2, float64(t)))
	// PyTorch's denominator: sqrt(v)/sqrt(c2) + eps = sqrt(vhat) + eps.
	p -= lr * mhat / (math.Sqrt(vhat) + eps)
	return p, m, v
}

func TestAdamAgainstReference(t *testing.T) {
	for _, tc := range []struct {
		name      string
		wd        float64
		decoupled bool
	}{{"adam", 0, false}, {"adam-l2", 0.01, false}, {"adamw", 0.01, true}} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			const n, steps = 64, 50
			lr, b1, b2, eps := 1e-2, 0.9, 0.999, 1e-8
			p64, m64, v64 := make([]float64, n), make([]float64, n), make([]float64, n)
			p32, m32, v32 := make([]float32, n), make([]float32, n), make([]float32, n)
			ref, rm, rv := make([]float64, n), make([]float64, n), make([]float64, n)
			for i := range n {
				p64[i] = r.NormFloat64()
				p32[i] = float32(p64[i])
				ref[i] = p64[i]
			}
			g64, g32 := make([]float64, n), make([]float32, n)
			for step := 1; step <= steps; step++ {
				for i := range n {
					g64[i] = r.NormFloat64() * math.Pow(10, float64(i%5-2))
					g32[i] = float32(g64[i])
				}
				Adam(p64, g64, m64, v64, step, lr, b1, b2, eps, tc.wd, tc.decoupled)
				Adam(p32, g32, m32, v32, step, float32(lr), float32(b1), float32(b2), float32(eps), float32(tc.wd), tc.decoupled)
				for i := range n {
					ref[i], rm[i], rv[i] = refAdam(ref[i], g64[i], rm[i], rv[i], step, lr, b1, b2, eps, tc.wd, tc.decoupled)
				}
			}
			for i := range n {
				if d := math.Abs(p64[i] - ref[i]); d > 1e-12*(1+math.Abs(ref[i])) {
					t.Fatalf("float64 param %d = %v, reference %v", i, p64[i], ref[i])
				}
				if d := math.Abs(float64(p32[i]) - ref[i]); d > 1e-4*(1+math.Abs(ref[i])) {
					t.Fatalf("float32 param %d = %v, reference %v", i, p32[i], ref[i])
				}
			}
		})
	}
}

func TestAdamNoAlloc(t *testing.T) {
	p, g, m, v := make([]float32, 100), make([]float32, 100), make([]float32, 100), make([]float32, 100)
	if a := testing.AllocsPerRun(20, func() { Adam(p, g, m, v, 3, 0.1, 0.9, 0.999, 1e-8, 0.01, true) }); a != 0 {
		t.Errorf("Adam allocates %v times per call", a)
	}
}

func TestClipByGlobalNorm(t *testing.T) {
	a := []float32{3, 0}
	b := []float32{0, 4}
	norm := math.Sqrt(SumSquares(a) + SumSquares(b)) // 5
	if norm != 5 {
		t.Fatalf("global norm %v, want 5", norm)
	}
	s := ClipScale(norm, 1)
	if want := 1 / (5 + 1e-6); s != want {
		t.Fatalf("ClipScale(5, 1) = %v, want %v", s, want)
	}
	Scale(a, float32(s))
	Scale(b, float32(s))
	if got := math.Sqrt(SumSquares(a) + SumSquares(b)); math.Abs(got-1) > 1e-6 {
		t.Errorf("clipped norm %v, want 1", got)
	}
	if s := ClipScale(0.5, 1); s != 1 {
		t.Errorf("ClipScale below the threshold = %v, want 1", s)
	}
	if s := ClipScale(math.NaN(), 1); !math.IsNaN(s) {
		t.Errorf("ClipScale(NaN) = %v, want NaN", s)
	}
}

func TestAdamPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("step 0 did not panic")
		}
	}()
	Adam([]float64{1}, []float64{1}, []float64{0}, []float64{0}, 0, 0.1, 0.9, 0.999, 1e-8, 0, false)
}
