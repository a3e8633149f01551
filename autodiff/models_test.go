package autodiff

import (
	"os"
	"strings"
	"testing"
)

// layerNorm is the layer normalization of examples/programs/attention.ocl.
const layerNorm = `
let mean = res ++ " ... | ..m.. => ... | 0 " ["m"]
let centered = res - mean /. dim m
let var = (centered *. centered) ++ " ... | ... => ... | 0 "
let out = {gamma = 1} *. centered /. sqrt (var /. dim m + 0.00001) + {beta = 0}`

// softmax is the max-subtracted softmax of attention.ocl.
const softmax = `
let mx = masked @^^ " ... | t -> ... => ... | 0 -> ..."
let ex = exp (masked - mx)
let attn = ex /. (ex ++ " ... | t -> ... => ... | 0 -> ...")`

// causal gives a lower-triangular 0/1 mask of n x n cells.
func causal(n int) gen {
	vs := make([]float64, n*n)
	for s := range n {
		for t := range n {
			if t <= s {
				vs[s*n+t] = 1
			}
		}
	}
	return values(vs...)
}

// shrinkAttention rewrites examples/programs/attention.ocl to a small
// size: batch 2, sequence 3, width 8, 2 heads of width 4.
func shrinkAttention(t *testing.T) string {
	src, err := os.ReadFile("../examples/programs/attention.ocl")
	if err != nil {
		t.Fatalf("reading the example: %v", err)
	}
	s := string(src)
	for _, r := range [][2]string{
		{"input seq : 2,8 | 64 = range", "input seq : 2,3 | 8"},
		{"input mask : 8 | 8 -> = 1", "input mask : 3 | 3 ->"},
		{"dim h = 4", "dim h = 2"},
		{"dim d = 16", "dim d = 4"},
		{"dim e = 16", "dim e = 4"},
	} {
		if !strings.Contains(s, r[0]) {
			t.Fatalf("attention.ocl has no line %q", r[0])
		}
		s = strings.Replace(s, r[0], r[1], 1)
	}
	return s
}

func TestGradModels(t *testing.T) {
	runChecks(t, []gcase{
		{name: "layer norm", src: weighted(`
input res : 2,3 | 8`+layerNorm, "out"),
			gens: map[string]gen{"gamma": uniform(0.5, 1.5), "beta": uniform(-1, 1)}},
		{name: "softmax", src: weighted(`
input masked : 2 | 4 -> 5`+softmax, "attn"), gens: map[string]gen{"masked": uniform(-2, 2)}},
		{name: "masked softmax", src: weighted(`
input scores : 2,3 | 3 -> 2
input mask : 3 | 3 ->
let masked = where mask scores (0 - 1000000000)`+softmax, "attn"),
			gens: map[string]gen{"mask": causal(3)}, noGrad: []string{"mask"}},
		{name: "attention block (attention.ocl, shrunk)", src: weighted(shrinkAttention(t), "out"),
			gens: map[string]gen{
				"mask": causal(3), "seq": uniform(-1, 1),
				"w_q": uniform(-0.5, 0.5), "w_k": uniform(-0.5, 0.5), "w_v": uniform(-0.5, 0.5), "w_o": uniform(-0.5, 0.5),
				"gamma": uniform(0.5, 1.5), "beta": uniform(-0.5, 0.5),
			},
			noGrad: []string{"mask"}},
		{name: "mlp.ocl with a smooth loss", src: strings.Replace(mustRead(t, "../examples/programs/mlp.ocl"),
			"let margin = relu (1 - labels *. scores)", "let margin = tanh (1 - labels *. scores)", 1),
			gens: map[string]gen{"points": uniform(-1, 1), "labels": values(pm1(32)...)}},
	})
}

func mustRead(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return string(b)
}

// pm1 alternates +1 and -1.
func pm1(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(1 - 2*(i%2))
	}
	return out
}
