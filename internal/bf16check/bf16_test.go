package bf16check

import (
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/ocannlgen/ocannlgen/rt"
	"github.com/ocannlgen/ocannlgen/rt/bf16"
)

// decBatch is a fixed batch of a learnable sequence task: each token's
// next token is a fixed function of it, and the causal mask.
func decBatch() (tokens, targets *[Batch][Context][Vocab]float32, mask *[Context][Context]float32) {
	r := rand.New(rand.NewPCG(5, 6))
	tokens, targets, mask = new([Batch][Context][Vocab]float32), new([Batch][Context][Vocab]float32), new([Context][Context]float32)
	for b := range tokens {
		t := r.IntN(Vocab)
		for p := range Context {
			next := (t*7 + 3) % Vocab
			tokens[b][p][t], targets[b][p][next] = 1, 1
			t = next
		}
	}
	for s := range mask {
		for k := 0; k <= s; k++ {
			mask[s][k] = 1
		}
	}
	return tokens, targets, mask
}

func convBatch() (images *[16][12][12][3]float32, labels *[16][10]float32) {
	r := rand.New(rand.NewPCG(7, 8))
	images, labels = new([16][12][12][3]float32), new([16][10]float32)
	for i := range images {
		c := r.IntN(10)
		labels[i][c] = 1
		for y := range images[i] {
			for x := range images[i][y] {
				for ch := range images[i][y][x] {
					images[i][y][x][ch] = float32(r.NormFloat64()) + float32(c)*0.1*float32(ch+1)
				}
			}
		}
	}
	return images, labels
}

// steps is the length of the training runs compared.
const steps = 40

// TestBF16TracksFloat32: from the same initialization, the decoder and
// the convolutional network trained in bf16 end within 2% of the
// float32 run's loss, and the bf16 run did round (its losses are not
// float32's bits).
func TestBF16TracksFloat32(t *testing.T) {
	pool := rt.NewPool(2)
	defer pool.Close()
	tokens, targets, mask := decBatch()
	d32, d16 := new(Dec), new(DecBF16)
	d32.Init(1)
	d16.Init(1)
	d32.Pool, d16.Pool = pool, pool
	images, labels := convBatch()
	c32, c16 := new(Conv), new(ConvBF16)
	c32.Init(1)
	c16.Init(1)
	c32.Pool, c16.Pool = pool, pool
	for _, run := range []struct {
		name     string
		f32, b16 func() float32
	}{
		{"decoder", func() float32 { return d32.TrainStep(tokens, targets, mask) }, func() float32 { return d16.TrainStep(tokens, targets, mask) }},
		{"conv", func() float32 { return c32.TrainStep(images, labels) }, func() float32 { return c16.TrainStep(images, labels) }},
	} {
		var l32, l16 []float32
		for range steps {
			l32, l16 = append(l32, run.f32()), append(l16, run.b16())
		}
		a, b := l32[steps-1], l16[steps-1]
		t.Logf("%s: float32 loss %v -> %v, bf16 %v -> %v (%.2f%%)", run.name, l32[0], a, l16[0], b, 100*(b-a)/a)
		if !(a < l32[0]/2) {
			t.Errorf("%s: the float32 run did not learn: %v", run.name, l32)
		}
		if math.Abs(float64(b-a)) > 0.02*float64(a) || math.IsNaN(float64(b)) {
			t.Errorf("%s: bf16 loss %v is not within 2%% of float32's %v", run.name, b, a)
		}
		if l32[0] == l16[0] {
			t.Errorf("%s: the first bf16 loss %v is float32's: no rounding took place?", run.name, l16[0])
		}
	}
}

// TestBF16Threads: bf16 training gives the same bits on 1, 2 and 4
// threads, and a step allocates nothing.
func TestBF16Threads(t *testing.T) {
	tokens, targets, mask := decBatch()
	images, labels := convBatch()
	var dw [][]float32
	var cw [][]float32
	for _, th := range []int{1, 2, 4} {
		pool := rt.NewPool(th)
		d, c := new(DecBF16), new(ConvBF16)
		d.Init(2)
		c.Init(2)
		d.Pool, c.Pool = pool, pool
		for range 3 {
			d.TrainStep(tokens, targets, mask)
			c.TrainStep(images, labels)
		}
		var dv, cv []float32
		for _, p := range d.ParamTensors() {
			dv = append(dv, p.Data32...)
		}
		for _, p := range c.ParamTensors() {
			cv = append(cv, p.Data32...)
		}
		dw, cw = append(dw, dv), append(cw, cv)
		if th == 2 {
			if n := testing.AllocsPerRun(2, func() { d.TrainStep(tokens, targets, mask) }); n != 0 {
				t.Errorf("decoder: %v allocations per bf16 TrainStep", n)
			}
			if n := testing.AllocsPerRun(2, func() { c.TrainStep(images, labels) }); n != 0 {
				t.Errorf("conv: %v allocations per bf16 TrainStep", n)
			}
		}
		pool.Close()
	}
	for i := 1; i < len(dw); i++ {
		for j := range dw[0] {
			if math.Float32bits(dw[i][j]) != math.Float32bits(dw[0][j]) {
				t.Fatalf("decoder: parameter cell %d differs between thread counts: %v, %v", j, dw[0][j], dw[i][j])
			}
		}
		for j := range cw[0] {
			if math.Float32bits(cw[i][j]) != math.Float32bits(cw[0][j]) {
				t.Fatalf("conv: parameter cell %d differs between thread counts: %v, %v", j, cw[0][j], cw[i][j])
			}
		}
	}
	t.Logf("bf16 tier: %v", bf16.Best())
}

// TestBF16Emitted: the bf16 models run their contractions through
// rt/bf16 (matrix products, attention products, convolutions and the
// gradients of each), and the float32 models do not; operands the
// parts of a nest read whole are packed once (TestBF16Gradients and
// TestBF16Threads check their results).
func TestBF16Emitted(t *testing.T) {
	src, err := os.ReadFile("ocannl_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	for _, c := range []struct {
		fn   string
		want bool
	}{{"func ocannlDecTrainLoss(", false}, {"func ocannlDecBF16TrainLoss(", true}, {"func ocannlDecBF16Backward(", true},
		{"func ocannlConvBF16Backward(", true}, {"func ocannlConvBackward(", false}} {
		i := strings.Index(s, c.fn)
		if i < 0 {
			t.Fatalf("no %s in ocannl_gen.go", c.fn)
		}
		j := strings.Index(s[i+1:], "\nfunc ocannl")
		if j < 0 {
			j = len(s) - i - 1
		}
		// The parts of parallel nests follow the function: count up to the next kernel function.
		body := s[i : i+1+j]
		if got := strings.Contains(body, "bf16.Gemm(") || strings.Contains(body, "rt/bf16.Gemm"); got != c.want {
			t.Errorf("%s: calls bf16.Gemm: %v, want %v", c.fn, got, c.want)
		}
		if c.fn == "func ocannlConvBF16Backward(" {
			// The stride-2 convolution's input gradient runs as four
			// gathers (one per parity class of its rows and columns) over
			// the padded output gradient, not as the scatter's loops.
			if n := strings.Count(body, "4 calls (the parity classes"); n != 1 {
				t.Errorf("%s: %d stride-2 input gradients as parity gathers, want 1", c.fn, n)
			}
		}
		if c.fn == "func ocannlDecBF16Backward(" {
			// The decoder's products split along one operand's axis pack
			// the operand their parts read whole once before the parts:
			// an A (the MLP's input, split along the columns) and an
			// activation as B (x in the q, k and v weight gradients),
			// the packing itself in parts on the region (PackAIn, PackIn).
			if !strings.Contains(body, "bf16.PackAIn(region, &scratch.") {
				t.Errorf("%s: no A packed once for its parts (bf16.PackAIn)", c.fn)
			}
			if !strings.Contains(body, "bf16.PackIn(region, &scratch.net_block_1_masked_attention_1_xBF16, &scratch.") {
				t.Errorf("%s: no activation packed once as B for its parts (bf16.PackIn of x)", c.fn)
			}
			// x is B of the q, k and v weight gradients, in the same
			// shape and parts, with nothing stored to x between them:
			// one packing serves the three (gocode's bf16Reuse).
			if n := strings.Count(body, "bf16.PackIn(region, &scratch.net_block_1_masked_attention_1_xBF16"); n != 1 {
				t.Errorf("%s: x of block 1 packed %d times, want 1", c.fn, n)
			}
			if n := strings.Count(body, "P: &scratch.net_block_1_masked_attention_1_xBF16,"); n != 3 {
				t.Errorf("%s: %d products read block 1's packed x, want 3", c.fn, n)
			}
		}
	}
}

// grads is the model's gradient struct (float32 arrays only) as one
// slice, cut per parameter in ParamTensors' order.
func grads[G any](g *G, params []rt.Tensor) [][]float32 {
	all := unsafe.Slice((*float32)(unsafe.Pointer(g)), unsafe.Sizeof(*g)/4)
	var out [][]float32
	for _, p := range params {
		out, all = append(out, all[:len(p.Data32)]), all[len(p.Data32):]
	}
	return out
}

// TestBF16Gradients: from the same initialization, each parameter's
// gradient in bf16 (packed weights, converted activations, folded
// reduction loops) is within 12% (relative L2) of the float32 model's,
// an independent computation (the float32 kernels). The bf16 rounding
// alone leaves 0.02% to 7% here (measured); a wrong stride or operand
// leaves 30% and more.
func TestBF16Gradients(t *testing.T) {
	pool := rt.NewPool(2)
	defer pool.Close()
	tokens, targets, mask := decBatch()
	images, labels := convBatch()
	d32, d16 := new(Dec), new(DecBF16)
	c32, c16 := new(Conv), new(ConvBF16)
	d32.Init(3)
	d16.Init(3)
	c32.Init(3)
	c16.Init(3)
	d32.Pool, d16.Pool, c32.Pool, c16.Pool = pool, pool, pool, pool
	d32.Backward(tokens, targets, mask)
	d16.Backward(tokens, targets, mask)
	c32.Backward(images, labels)
	c16.Backward(images, labels)
	for _, m := range []struct {
		name     string
		params   []rt.Tensor
		g32, g16 [][]float32
	}{
		{"decoder", d32.ParamTensors(), grads(&d32.Grads, d32.ParamTensors()), grads(&d16.Grads, d16.ParamTensors())},
		{"conv", c32.ParamTensors(), grads(&c32.Grads, c32.ParamTensors()), grads(&c16.Grads, c16.ParamTensors())},
	} {
		for i, p := range m.params {
			var d2, n2 float64
			for j, x := range m.g32[i] {
				d := float64(m.g16[i][j]) - float64(x)
				d2, n2 = d2+d*d, n2+float64(x)*float64(x)
			}
			if !(d2 <= 0.12*0.12*n2) {
				t.Errorf("%s: gradient of %s: relative L2 difference %.3g from float32's (norm %.3g)", m.name, p.Name, math.Sqrt(d2/n2), math.Sqrt(n2))
			}
		}
	}
}
