package gradcheck

import (
	"math"
	"math/rand/v2"
	"testing"
)

// oneHotInput fills input number i with one-hot rows of width c and the
// others with uniform values in [-1, 1).
func oneHotInput(i, c int) func(int, []float64, *rand.Rand) {
	return func(j int, d []float64, rng *rand.Rand) {
		if j != i {
			for k := range d {
				d[k] = 2*rng.Float64() - 1
			}
			return
		}
		for row := 0; row < len(d); row += c {
			d[row+rng.IntN(c)] = 1
		}
	}
}

// signInput fills input number i with +1/-1 and the others with uniform
// values in [-1, 1).
func signInput(i int) func(int, []float64, *rand.Rand) {
	return func(j int, d []float64, rng *rand.Rand) {
		for k := range d {
			d[k] = 2*rng.Float64() - 1
			if j == i {
				d[k] = math.Copysign(1, d[k])
			}
		}
	}
}

// causalMaskInput fills input number i (shape T | T ->) with a
// lower-triangular mask.
func causalMaskInput(i, T int) func(int, []float64, *rand.Rand) {
	return func(j int, d []float64, rng *rand.Rand) {
		for k := range d {
			if j == i {
				if s, t := k/T, k%T; t <= s {
					d[k] = 1
				}
			} else {
				d[k] = 2*rng.Float64() - 1
			}
		}
	}
}

// attentionLoss is sum r *. attention(x) for x : B,T | n with H heads,
// d_k = dk, d_v = dv and m = n outputs, with an optional causal mask.
func attentionLoss(B, T, n, H, dk, dv int, causal bool) func(p map[string][]float64, in [][]float64) float64 {
	return func(p map[string][]float64, in [][]float64) float64 {
		x, wq, wk, wv, wo, r := p["X"], p["ObjectiveAttWQ"], p["ObjectiveAttWK"], p["ObjectiveAttWV"], p["ObjectiveAttWO"], in[0]
		proj := func(w []float64, b, s, h, d, D int) float64 {
			y := 0.0
			for i := range n {
				y += w[(h*D+d)*n+i] * x[(b*T+s)*n+i]
			}
			return y
		}
		l := 0.0
		for b := range B {
			for s := range T {
				out := make([]float64, n)
				for h := range H {
					scores := make([]float64, T)
					mx := math.Inf(-1)
					for t := range T {
						sc := 0.0
						for d := range dk {
							sc += proj(wq, b, s, h, d, dk) * proj(wk, b, t, h, d, dk)
						}
						sc /= math.Sqrt(float64(dk))
						if causal && t > s {
							sc = -1e9
						}
						scores[t] = sc
						mx = math.Max(mx, sc)
					}
					z := 0.0
					for t := range T {
						scores[t] = math.Exp(scores[t] - mx)
						z += scores[t]
					}
					for e := range dv {
						ctx := 0.0
						for t := range T {
							ctx += scores[t] / z * proj(wv, b, t, h, e, dv)
						}
						for o := range n {
							out[o] += wo[(o*H+h)*dv+e] * ctx
						}
					}
				}
				for o := range n {
					l += r[(b*T+s)*n+o] * out[o]
				}
			}
		}
		return l
	}
}

func TestBlocks(t *testing.T) {
	runCases(t, []gcase{
		{name: "layer_norm", m: new(LayerNorm),
			want: func(p map[string][]float64, in [][]float64) float64 {
				z, g, b := p["Z"], p["ObjectiveLayerNorm1Gamma"], p["ObjectiveLayerNorm1Beta"]
				l := 0.0
				for i := range 3 {
					row := z[i*5 : i*5+5]
					mean, v := 0.0, 0.0
					for _, x := range row {
						mean += x / 5
					}
					for _, x := range row {
						v += (x - mean) * (x - mean) / 5
					}
					for j, x := range row {
						l += in[0][i*5+j] * (g[j]*(x-mean)/math.Sqrt(v+1e-5) + b[j])
					}
				}
				return l
			}},
		{name: "layer_norm_2d", m: new(LayerNorm2D)},
		{name: "softmax", m: new(Softmax),
			want: func(p map[string][]float64, in [][]float64) float64 {
				z := p["Z"]
				l := 0.0
				for row := 0; row < 24; row += 4 {
					s := 0.0
					for j := range 4 {
						s += math.Exp(z[row+j])
					}
					for j := range 4 {
						l += in[0][row+j] * math.Exp(z[row+j]) / s
					}
				}
				return l
			}},
		{name: "log_softmax", m: new(LogSoftmax)},
		{name: "cross_entropy", m: new(CrossEntropy), input: oneHotInput(1, 5)},
		{name: "hinge", m: new(Hinge), input: signInput(1)},
		{name: "dense_linear", m: new(Dense)},
		{name: "shared_instance", m: new(SharedInstance)},
		{name: "attention", m: new(Attention), want: attentionLoss(2, 4, 3, 2, 3, 2, false)},
		{name: "masked_attention", m: new(MaskedAttention), input: causalMaskInput(1, 4), want: attentionLoss(2, 4, 3, 2, 3, 2, true)},
		{name: "transformer_block", m: new(TransformerBlock)},
	})
}
