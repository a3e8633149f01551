package autodiff

// Validated flat forms of the standard blocks of model/std.ocl.
//
// Every layer of ../model/std.ocl is written here as a flat program: the
// layer's body with its configuration values substituted, its tensor
// arguments declared as inputs of concrete shapes, its inline parameters
// declared where they are used, and its `return EXPR` written as
// `let result = EXPR`. Each flat form is
//
//   - gradient-checked with gradCheck (harness_test.go): float64, central
//     differences with h = 1e-6·max(1,|x|), every input, leaf and parameter,
//     |analytic − numeric| <= 1e-6·max(1, |analytic|, |numeric|);
//   - run forward and compared with a direct Go computation of what the
//     block is meant to compute (the gradient check alone would accept a
//     forward pass that computes the wrong function);
//   - checked for the shapes inference gives its parameters and result.
//
// TestStdLibraryMatchesFlatForms expands each std.ocl layer textually (the
// layer syntax cannot be parsed yet) with the configuration values of the
// flat forms below and requires the expansion to equal the flat body, line
// for line, so std.ocl is exactly what these tests validate.
//
// Correspondence (flat form -> std.ocl layer [config]):
//
//	dense                         -> dense[o=4]
//	dense, two batch axes         -> dense[o=3]
//	linear                        -> linear[o=4]
//	mlp2                          -> mlp2[h1=6, h2=5]
//	softmax (input axes)          -> softmax
//	softmax (plain)               -> softmax
//	log_softmax                   -> log_softmax
//	layer_norm                    -> layer_norm[eps=1e-5]
//	layer_norm, eps 0.1           -> layer_norm[eps=0.1]
//	attention                     -> attention[heads=2, d_k=4, d_v=3]
//	masked_attention              -> masked_attention[heads=3, d_k=2, d_v=2]
//	conv2d padded stride 1        -> conv2d[out=4, k=3, stride=1]
//	conv2d padded stride 2        -> conv2d[out=3, k=3, stride=2]
//	conv2d padded even kernel     -> conv2d[out=2, k=2, stride=1]
//	conv2d_valid stride 1         -> conv2d_valid[out=2, k=3, stride=1]
//	conv2d_valid stride 2         -> conv2d_valid[out=3, k=3, stride=2]
//	conv2d padded one channel     -> conv2d[out=1, k=3, stride=1]
//	conv2d_valid one channel      -> conv2d_valid[out=1, k=3, stride=1]
//	max_pool 2x2 stride 2         -> max_pool[window=2, stride=2]
//	max_pool 3x3 stride 1         -> max_pool[window=3, stride=1]
//	max_pool 3x3 stride 2         -> max_pool[window=3, stride=2]
//	avg_pool 2x2 stride 2         -> avg_pool[window=2, stride=2]
//	avg_pool 3x3 stride 1         -> avg_pool[window=3, stride=1]
//	hinge                         -> hinge
//	hinge, two batch axes         -> hinge
//	cross_entropy                 -> cross_entropy
//	cross_entropy, two batch axes -> cross_entropy
//
// Notes on the chosen forms (see also the comments in std.ocl):
//
//   - The per-channel conv bias is `{bias = 0.; o=[out]}` added to the
//     convolution's `... | oh, ow, ..oc..` result: its single output axis
//     broadcasts against the last axis (oc), which the forward check below
//     verifies, also when out equals the image width or height. OCANNL's
//     `{bias = 0.}` instead gets the leading (oh, ow) part of the row here
//     (TestBlockAlternatives), not the full (oh, ow, oc) row.
//   - Pools use OCANNL's form: a binary `@^+` (max) or `+++` (sum, then
//     divided by the window size) with a constant-0 window tensor
//     `(0.0 + 0.0)` whose axes carry the window labels wh, ww. The form
//     without a window tensor (a unary `@^^` / `++` with wh, ww only inside
//     the operand's affine axes) is equivalent since projection inference
//     iterates labels that occur only in affine indices
//     (TestUnaryWindowPool; it computed wrong values before that fix).
//   - "Mean over the batch" captures the batch row as a named row variable
//     (`..b..`) and divides by `dim b`, the product of its axes' sizes.
//   - attention's w_o output width is inferred from use; a residual
//     (x + attention(x)) fixes it. Used alone with nothing fixing it,
//     inference reports that w_o's hidden dimension is missing.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/internal/testutil"
	"github.com/ocannlgen/ocannlgen/loopir"
)

// blockCase is one flat form of a std.ocl layer.
type blockCase struct {
	name string
	// layer is the std.ocl layer the body expands from, cfg the
	// configuration values substituted (defaults come from std.ocl).
	layer string
	cfg   map[string]string
	// decl declares the layer's tensor arguments (as inputs).
	decl string
	// body is the layer body, ending with `let result = ...`.
	body string
	// tail turns result into a scalar loss named loss; empty: a weighted
	// sum of result (weighted, gradcheck_test.go). lossIsResult: result is
	// the loss itself.
	tail         string
	lossIsResult bool
	gens         map[string]gen
	noGrad       []string
	// shapes lists expected shapes of named tensors.
	shapes map[string]string
	// ref checks the forward values against a direct computation; v gives
	// a named tensor's cells in memory order.
	ref func(t *testing.T, v func(string) []float64)
}

func (c blockCase) src() string {
	s := c.decl + "\n" + c.body
	switch {
	case c.lossIsResult:
		return s
	case c.tail != "":
		return s + "\n" + c.tail
	default:
		return weighted(s, "result")
	}
}

func (c blockCase) gcase() gcase {
	g := gcase{name: c.name, src: c.src(), gens: c.gens, noGrad: c.noGrad}
	if c.lossIsResult {
		g.loss = "result"
	}
	return g
}

// ---- reference computations ----

// blkDims is a small helper to index row-major arrays.
type blkDims []int

func (d blkDims) at(ix ...int) int {
	off := 0
	for i, n := range d {
		if ix[i] < 0 || ix[i] >= n {
			panic(fmt.Sprintf("index %v out of %v", ix, d))
		}
		off = off*n + ix[i]
	}
	return off
}

func blkRelu(v float64) float64 { return math.Max(v, 0) }

// blkAffine computes out[b][o] = sum_i w[o][i] x[b][i] + bias[o] (memory
// order of `n -> o` is [o][n]).
func blkAffine(x, w, bias []float64, nb, n, o int) []float64 {
	out := make([]float64, nb*o)
	for b := range nb {
		for j := range o {
			s := bias[j]
			for i := range n {
				s += w[j*n+i] * x[b*n+i]
			}
			out[b*o+j] = s
		}
	}
	return out
}

func blkMap(xs []float64, f func(float64) float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// blkAlongAxis applies f to every line of a row-major array of dims along
// axis ax.
func blkAlongAxis(xs []float64, dims []int, ax int, f func([]float64) []float64) []float64 {
	out := make([]float64, len(xs))
	inner := 1
	for _, n := range dims[ax+1:] {
		inner *= n
	}
	outer := len(xs) / (inner * dims[ax])
	n := dims[ax]
	for o := range outer {
		for i := range inner {
			line := make([]float64, n)
			for k := range n {
				line[k] = xs[(o*n+k)*inner+i]
			}
			res := f(line)
			for k := range n {
				out[(o*n+k)*inner+i] = res[k]
			}
		}
	}
	return out
}

func softmaxRef(line []float64) []float64 {
	m := slices.Max(line)
	out := make([]float64, len(line))
	s := 0.0
	for i, v := range line {
		out[i] = math.Exp(v - m)
		s += out[i]
	}
	for i := range out {
		out[i] /= s
	}
	return out
}

func logSoftmaxRef(line []float64) []float64 {
	return blkMap(softmaxRef(line), math.Log)
}

// layerNormRef normalizes each of the len(x)/inner groups of inner
// consecutive cells.
func layerNormRef(x, gamma, beta []float64, inner int, eps float64) []float64 {
	out := make([]float64, len(x))
	for g := 0; g < len(x); g += inner {
		mean := 0.0
		for i := range inner {
			mean += x[g+i]
		}
		mean /= float64(inner)
		v := 0.0
		for i := range inner {
			v += (x[g+i] - mean) * (x[g+i] - mean)
		}
		v /= float64(inner)
		for i := range inner {
			out[g+i] = gamma[i]*(x[g+i]-mean)/math.Sqrt(v+eps) + beta[i]
		}
	}
	return out
}

// attentionRef computes multi-head self-attention for x : nb,T | n with
// w_q, w_k : n -> h,dk, w_v : n -> h,dv, w_o : h,dv -> m; mask[s][t] (nil:
// none) keeps the scores where it is non-zero.
func attentionRef(x, wq, wk, wv, wo, mask []float64, nb, T, n, h, dk, dv, m int) []float64 {
	proj := func(w []float64, d int) []float64 { // [b][s][h][d]
		return blkAffine(x, w, make([]float64, h*d), nb*T, n, h*d)
	}
	q, k, v := proj(wq, dk), proj(wk, dk), proj(wv, dv)
	out := make([]float64, nb*T*m)
	for b := range nb {
		for s := range T {
			ctx := make([]float64, h*dv)
			for hh := range h {
				sc := make([]float64, T)
				for tt := range T {
					for d := range dk {
						sc[tt] += q[((b*T+s)*h+hh)*dk+d] * k[((b*T+tt)*h+hh)*dk+d]
					}
					sc[tt] /= math.Sqrt(float64(dk))
					if mask != nil && mask[s*T+tt] == 0 {
						sc[tt] = math.Inf(-1)
					}
				}
				a := softmaxRef(sc)
				for tt := range T {
					for e := range dv {
						ctx[hh*dv+e] += a[tt] * v[((b*T+tt)*h+hh)*dv+e]
					}
				}
			}
			for o := range m {
				for j := range h * dv {
					out[(b*T+s)*m+o] += wo[o*h*dv+j] * ctx[j]
				}
			}
		}
	}
	return out
}

// conv2dRef computes a convolution of x : nb | H,W,ic with kernel : k,k,ic
// -> oc (memory [oc][kh][kw][ic]) and a per-channel bias, giving
// nb | oh,ow,oc. Padded convolutions read s*o + k - left, left = k - (k+1)/2
// (docs/design.md), and zero outside the image.
func conv2dRef(x, kern, bias []float64, nb, H, W, ic, oc, k, s int, padded bool) ([]float64, int, int) {
	left, oh, ow := 0, (H-k)/s+1, (W-k)/s+1
	if padded {
		left, oh, ow = k-(k+1)/2, H/s, W/s
	}
	xd, kd, od := blkDims{nb, H, W, ic}, blkDims{oc, k, k, ic}, blkDims{nb, oh, ow, oc}
	out := make([]float64, nb*oh*ow*oc)
	for b := range nb {
		for i := range oh {
			for j := range ow {
				for c := range oc {
					sum := bias[c]
					for kh := range k {
						for kw := range k {
							y, z := s*i+kh-left, s*j+kw-left
							if y < 0 || y >= H || z < 0 || z >= W {
								continue
							}
							for ci := range ic {
								sum += x[xd.at(b, y, z, ci)] * kern[kd.at(c, kh, kw, ci)]
							}
						}
					}
					out[od.at(b, i, j, c)] = sum
				}
			}
		}
	}
	return out, oh, ow
}

// poolRef pools x : nb | H,W,c over valid w x w windows with stride s.
func poolRef(x []float64, nb, H, W, c, w, s int, max bool) []float64 {
	oh, ow := (H-w)/s+1, (W-w)/s+1
	xd, od := blkDims{nb, H, W, c}, blkDims{nb, oh, ow, c}
	out := make([]float64, nb*oh*ow*c)
	for b := range nb {
		for i := range oh {
			for j := range ow {
				for ch := range c {
					acc := 0.0
					if max {
						acc = math.Inf(-1)
					}
					for a := range w {
						for bb := range w {
							v := x[xd.at(b, s*i+a, s*j+bb, ch)]
							if max {
								acc = math.Max(acc, v)
							} else {
								acc += v / float64(w*w)
							}
						}
					}
					out[od.at(b, i, j, ch)] = acc
				}
			}
		}
	}
	return out
}

// blkNear reports cells of got that differ from want by more than 1e-9
// relative.
func blkNear(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d cells, want %d", what, len(got), len(want))
		return
	}
	bad := 0
	for i := range got {
		if e := math.Abs(got[i] - want[i]); !(e <= 1e-9*math.Max(1, math.Abs(want[i]))) {
			if bad++; bad <= 5 {
				t.Errorf("%s[%d] = %.12g, want %.12g", what, i, got[i], want[i])
			}
		}
	}
}

// blkOneHot gives rows of n cells with a single 1 at a pseudo-random class.
// blkTrainMode rewrites running(stat, {state}, m [, value]) to its
// training-mode value, value or else stat (what a loss entry's expansion
// computes; the flat forms check training mode).
func blkTrainMode(s string) string {
	for {
		i := strings.Index(s, "running(")
		if i < 0 {
			return s
		}
		var args []string
		depth, start, j := 0, i+len("running("), i+len("running(")
	scan:
		for ; j < len(s); j++ {
			switch c := s[j]; {
			case c == '(' || c == '{' || c == '[':
				depth++
			case (c == ')' || c == '}' || c == ']') && depth > 0:
				depth--
			case c == ')':
				args = append(args, strings.TrimSpace(s[start:j]))
				break scan
			case c == ',' && depth == 0:
				args = append(args, strings.TrimSpace(s[start:j]))
				start = j + 1
			}
		}
		v := args[0]
		if len(args) == 4 {
			v = args[3]
		}
		s = s[:i] + v + s[j+1:]
	}
}

// blkIndices draws n positions in [0, bound) (an index input's cells),
// each position at least once when n >= bound.
func blkIndices(bound int) gen {
	return func(r *rand.Rand, n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = float64(r.IntN(bound))
			if i < bound && n >= bound {
				out[i] = float64(i)
			}
		}
		r.Shuffle(n, func(i, j int) { out[i], out[j] = out[j], out[i] })
		return out
	}
}

func blkOneHot(rows, n int) gen {
	return func(r *rand.Rand, _ int) []float64 {
		out := make([]float64, rows*n)
		for i := range rows {
			out[i*n+r.IntN(n)] = 1
		}
		return out
	}
}

// ---- the flat forms ----

const (
	convPadded = `let y = x +* "... | %[1]s*oh=+kh, %[1]s*ow=+kw, ..ic..; kh, kw, ..ic.. -> oc => ... | oh, ow, oc" ["kh"; "kw"; "oc"] {kernel}
dim kh = %[2]s
dim kw = %[2]s
dim oc = %[3]s
let result = y + {bias = 0.; o=[%[3]s]}`
	convValid = `let y = x +* "... | %[1]s*oh<+kh, %[1]s*ow<+kw, ..ic..; kh, kw, ..ic.. -> oc => ... | oh, ow, oc" ["kh"; "kw"; "oc"] {kernel}
dim kh = %[2]s
dim kw = %[2]s
dim oc = %[3]s
let result = y + {bias = 0.; o=[%[3]s]}`
	maxPool = `let y = x @^+ "... | %[1]s*oh<+wh, %[1]s*ow<+ww, ..c..; wh, ww => ... | oh, ow, ..c.." ["wh"; "ww"] (0.0 + 0.0)
dim wh = %[2]s
dim ww = %[2]s
let result = y`
	avgPool = `let y = x +++ "... | %[1]s*oh<+wh, %[1]s*ow<+ww, ..c..; wh, ww => ... | oh, ow, ..c.." ["wh"; "ww"] (0.0 + 0.0)
dim wh = %[2]s
dim ww = %[2]s
let result = y /. (dim wh *. dim ww)`
	softmaxBody = `let m = x @^^ "... | ... -> ..., c => ... | ... -> ..., 0"
let e = exp (x - m)
let result = e /. (e ++ "... | ... -> ..., c => ... | ... -> ..., 0")`
	layerNormBody = `let mean = (x ++ "... | ..d.. => ... | 0" ["d"]) /. dim d
let centered = x - mean
let var = ((centered *. centered) ++ "... | ... => ... | 0") /. dim d
let result = {gamma = 1.} *. centered /. sqrt (var + %s) + {beta = 0.}`
	hingeBody = `let margin = relu (1 - labels *. scores)
let result = (margin ++ "..b.. | ... -> ... => 0" ["b"]) /. dim b`
	crossEntropyBody = `let m = logits @^^ "... | ... -> ..., c => ... | ... -> ..., 0"
let z = logits - m
let logp = z - log ((exp z) ++ "... | ... -> ..., c => ... | ... -> ..., 0")
let result = -(((onehot *. logp) ++ "..b.. | ... -> ... => 0" ["b"]) /. dim b)`
	batchNormBody = `let mean = (x ++ "..b.. | ..s.., c => c" ["b"; "s"]) /. (dim b *. dim s)
let centered = x +++ "..b.. | ..s.., c; c => ..b.. | ..s.., c" (neg mean)
let var = ((centered *. centered) ++ "..b.. | ..s.., c => c") /. (dim b *. dim s)
let n = dim b *. dim s
let mu = mean
let sigma2 = var
let scale = {gamma = 1.} *. recip_sqrt (sigma2 + 1e-5)
let shift = {beta = 0.} - mu *. scale
let result = (x +* "..b.. | ..s.., c; c => ..b.. | ..s.., c" scale) +++ "..b.. | ..s.., c; c => ..b.. | ..s.., c" shift`
	crossEntropyIndexBody = `let m = logits @^^ "... | ... -> ..., c => ... | ... -> ..., 0"
let z = logits - m
let logp = z - log ((exp z) ++ "... | ... -> ..., c => ... | ... -> ..., 0")
let picked = logp @@ "..b.. | c; ..b.. | => ..b.. |" targets
let result = -((picked ++ "..b.. | => 0" ["b"]) /. dim b)`
	attentionHead = `let q = {w_q} * x
let k = {w_k} * x
let v = {w_v} * x
let scores = (q +* "... s | h d; ... t | h d => ... s | t -> h" ["h"; "d"] k) /. sqrt (dim d)
dim h = %s
dim d = %s
`
	attentionTail = `let m = %[1]s @^^ "... | t -> ... => ... | 0 -> ..."
let ex = exp (%[1]s - m)
let attn = ex /. (ex ++ "... | t -> ... => ... | 0 -> ...")
let ctx = attn +* "... s | t -> h; ... t | h e => ... s | h e" ["e"] v
dim e = %[2]s
let result = {w_o} * ctx`
)

func convCase(name, layer string, padded bool, nb, H, W, ic, oc, k, s int) blockCase {
	body := convValid
	if padded {
		body = convPadded
	}
	sk, so, ss := fmt.Sprint(k), fmt.Sprint(oc), fmt.Sprint(s)
	_, oh, ow := conv2dRef(make([]float64, nb*H*W*ic), make([]float64, oc*k*k*ic), make([]float64, oc), nb, H, W, ic, oc, k, s, padded)
	return blockCase{
		name: name, layer: layer, cfg: map[string]string{"out": so, "k": sk, "stride": ss},
		decl: fmt.Sprintf("input x : %d | %d,%d,%d", nb, H, W, ic),
		body: fmt.Sprintf(body, ss, sk, so),
		shapes: map[string]string{
			"kernel": fmt.Sprintf("%d,%d,%d -> %d", k, k, ic, oc),
			"bias":   so,
			"result": fmt.Sprintf("%d | %d,%d,%d", nb, oh, ow, oc),
		},
		ref: func(t *testing.T, v func(string) []float64) {
			want, _, _ := conv2dRef(v("x"), v("kernel"), v("bias"), nb, H, W, ic, oc, k, s, padded)
			blkNear(t, "result", v("result"), want)
		},
	}
}

func poolCase(name, layer string, max bool, nb, H, W, c, w, s int) blockCase {
	body, g := avgPool, uniform(-1, 1)
	if max {
		body, g = maxPool, distinct(-2, 2)
	}
	sw, ss := fmt.Sprint(w), fmt.Sprint(s)
	return blockCase{
		name: name, layer: layer, cfg: map[string]string{"window": sw, "stride": ss},
		decl:   fmt.Sprintf("input x : %d | %d,%d,%d", nb, H, W, c),
		body:   fmt.Sprintf(body, ss, sw),
		gens:   map[string]gen{"x": g},
		shapes: map[string]string{"result": fmt.Sprintf("%d | %d,%d,%d", nb, (H-w)/s+1, (W-w)/s+1, c)},
		ref: func(t *testing.T, v func(string) []float64) {
			blkNear(t, "result", v("result"), poolRef(v("x"), nb, H, W, c, w, s, max))
		},
	}
}

func attentionCase(name string, masked bool, nb, T, n, h, dk, dv int) blockCase {
	sh, sk, sv := fmt.Sprint(h), fmt.Sprint(dk), fmt.Sprint(dv)
	c := blockCase{
		name: name, layer: "attention", cfg: map[string]string{"heads": sh, "d_k": sk, "d_v": sv},
		decl: fmt.Sprintf("input x : %d,%d | %d", nb, T, n),
		body: fmt.Sprintf(attentionHead, sh, sk) + fmt.Sprintf(attentionTail, "scores", sv),
		// A residual fixes w_o's output width (see the notes above).
		tail: `let res = x + result
leaf rw
let loss = (res *. rw) ++ "...|...->... => 0"`,
		gens: map[string]gen{
			"x": uniform(-1, 1), "w_q": uniform(-0.5, 0.5), "w_k": uniform(-0.5, 0.5),
			"w_v": uniform(-0.5, 0.5), "w_o": uniform(-0.5, 0.5),
		},
		shapes: map[string]string{
			"w_q":    fmt.Sprintf("%d -> %d,%d", n, h, dk),
			"w_k":    fmt.Sprintf("%d -> %d,%d", n, h, dk),
			"w_v":    fmt.Sprintf("%d -> %d,%d", n, h, dv),
			"w_o":    fmt.Sprintf("%d,%d -> %d", h, dv, n),
			"scores": fmt.Sprintf("%d,%d | %d -> %d", nb, T, T, h),
			"result": fmt.Sprintf("%d,%d | %d", nb, T, n),
		},
	}
	if masked {
		c.layer = "masked_attention"
		c.decl += fmt.Sprintf("\ninput mask : %d | %d ->", T, T)
		// The dropped keys' weights are exactly 0 (the where on attn).
		tail := strings.Replace(fmt.Sprintf(attentionTail, "masked", sv), "let attn = ex /. (ex ++ \"... | t -> ... => ... | 0 -> ...\")",
			"let attn = where mask (ex /. (ex ++ \"... | t -> ... => ... | 0 -> ...\")) 0.", 1)
		c.body = fmt.Sprintf(attentionHead, sh, sk) + "let masked = where mask scores -1e9\n" + tail
		c.gens["mask"] = causal(T)
		c.noGrad = []string{"mask"}
	}
	c.ref = func(t *testing.T, v func(string) []float64) {
		var mask []float64
		if masked {
			mask = v("mask")
		}
		blkNear(t, "result", v("result"), attentionRef(v("x"), v("w_q"), v("w_k"), v("w_v"), v("w_o"), mask, nb, T, n, h, dk, dv, n))
	}
	return c
}

func blockCases() []blockCase {
	denseRef := func(nb, n, o int, act bool) func(*testing.T, func(string) []float64) {
		return func(t *testing.T, v func(string) []float64) {
			want := blkAffine(v("x"), v("w"), v("b"), nb, n, o)
			if act {
				want = blkMap(want, blkRelu)
			}
			blkNear(t, "result", v("result"), want)
		}
	}
	cs := []blockCase{
		{
			name: "dense", layer: "dense", cfg: map[string]string{"o": "4"},
			decl:   "input x : 5 | 3",
			body:   "let result = relu ({w} * x + {b = 0.; o=[4]})",
			shapes: map[string]string{"w": "3 -> 4", "b": "4", "result": "5 | 4"},
			ref:    denseRef(5, 3, 4, true),
		},
		{
			name: "dense, two batch axes", layer: "dense", cfg: map[string]string{"o": "3"},
			decl:   "input x : 2,3 | 4",
			body:   "let result = relu ({w} * x + {b = 0.; o=[3]})",
			shapes: map[string]string{"w": "4 -> 3", "b": "3", "result": "2,3 | 3"},
			ref:    denseRef(6, 4, 3, true),
		},
		{
			name: "linear", layer: "linear", cfg: map[string]string{"o": "4"},
			decl:   "input x : 5 | 3",
			body:   "let result = {w} * x + {b = 0.; o=[4]}",
			shapes: map[string]string{"w": "3 -> 4", "b": "4", "result": "5 | 4"},
			ref:    denseRef(5, 3, 4, false),
		},
		{
			name: "mlp2", layer: "mlp2", cfg: map[string]string{"h1": "6", "h2": "5"},
			decl: "input x : 4 | 3\ninput target : 4 | 2",
			body: `let a1 = relu ({w1} * x + {b1 = 0.; o=[6]})
let a2 = relu ({w2} * a1 + {b2 = 0.; o=[5]})
let result = {w3} * a2 + {b3 = 0.}`,
			// The output width (2) comes from the use: a squared error.
			tail: `let diff = result - target
let loss = (diff *. diff) ++ "...|...->... => 0"`,
			shapes: map[string]string{"w1": "3 -> 6", "w2": "6 -> 5", "w3": "5 -> 2", "b3": "2", "result": "4 | 2"},
			ref: func(t *testing.T, v func(string) []float64) {
				a1 := blkMap(blkAffine(v("x"), v("w1"), v("b1"), 4, 3, 6), blkRelu)
				a2 := blkMap(blkAffine(a1, v("w2"), v("b2"), 4, 6, 5), blkRelu)
				blkNear(t, "result", v("result"), blkAffine(a2, v("w3"), v("b3"), 4, 5, 2))
			},
		},
		{
			name: "softmax (input axes)", layer: "softmax",
			decl:   "input x : 2 | 3 -> 4,5",
			body:   softmaxBody,
			gens:   map[string]gen{"x": uniform(-3, 3)},
			shapes: map[string]string{"m": "2 | 3 -> 4,1", "result": "2 | 3 -> 4,5"},
			ref: func(t *testing.T, v func(string) []float64) {
				// memory order [batch][out 4][out 5][in 3]
				blkNear(t, "result", v("result"), blkAlongAxis(v("x"), []int{2, 4, 5, 3}, 2, softmaxRef))
			},
		},
		{
			name: "softmax (plain)", layer: "softmax",
			decl:   "input x : 3 | 6",
			body:   softmaxBody,
			gens:   map[string]gen{"x": uniform(-3, 3)},
			shapes: map[string]string{"m": "3 | 1", "result": "3 | 6"},
			ref: func(t *testing.T, v func(string) []float64) {
				blkNear(t, "result", v("result"), blkAlongAxis(v("x"), []int{3, 6}, 1, softmaxRef))
			},
		},
		{
			name: "log_softmax", layer: "log_softmax",
			decl: "input x : 2 | 3 -> 4,5",
			body: `let m = x @^^ "... | ... -> ..., c => ... | ... -> ..., 0"
let z = x - m
let result = z - log ((exp z) ++ "... | ... -> ..., c => ... | ... -> ..., 0")`,
			gens:   map[string]gen{"x": uniform(-3, 3)},
			shapes: map[string]string{"m": "2 | 3 -> 4,1", "result": "2 | 3 -> 4,5"},
			ref: func(t *testing.T, v func(string) []float64) {
				blkNear(t, "result", v("result"), blkAlongAxis(v("x"), []int{2, 4, 5, 3}, 2, logSoftmaxRef))
			},
		},
		{
			name: "layer_norm", layer: "layer_norm",
			decl:   "input x : 2,3 | 4,5",
			body:   fmt.Sprintf(layerNormBody, "1e-5"),
			gens:   map[string]gen{"gamma": uniform(0.5, 1.5), "beta": uniform(-1, 1)},
			shapes: map[string]string{"gamma": "4,5", "beta": "4,5", "mean": "2,3 | 1", "var": "2,3 | 1", "result": "2,3 | 4,5"},
			ref: func(t *testing.T, v func(string) []float64) {
				blkNear(t, "result", v("result"), layerNormRef(v("x"), v("gamma"), v("beta"), 20, 1e-5))
			},
		},
		{
			name: "layer_norm, eps 0.1", layer: "layer_norm", cfg: map[string]string{"eps": "0.1"},
			decl:   "input x : 3 | 8",
			body:   fmt.Sprintf(layerNormBody, "0.1"),
			gens:   map[string]gen{"gamma": uniform(0.5, 1.5), "beta": uniform(-1, 1)},
			shapes: map[string]string{"gamma": "8", "beta": "8", "result": "3 | 8"},
			ref: func(t *testing.T, v func(string) []float64) {
				blkNear(t, "result", v("result"), layerNormRef(v("x"), v("gamma"), v("beta"), 8, 0.1))
			},
		},
		attentionCase("attention", false, 2, 3, 8, 2, 4, 3),
		attentionCase("masked_attention", true, 2, 4, 6, 3, 2, 2),
		// out = 4 = W, and out = 6 = H below: the bias must still go
		// with the channel axis.
		convCase("conv2d padded stride 1", "conv2d", true, 2, 5, 4, 3, 4, 3, 1),
		convCase("conv2d padded stride 2", "conv2d", true, 2, 6, 6, 2, 3, 3, 2),
		convCase("conv2d padded even kernel", "conv2d", true, 1, 4, 5, 2, 2, 2, 1),
		convCase("conv2d_valid stride 1", "conv2d_valid", false, 2, 5, 6, 3, 2, 3, 1),
		convCase("conv2d_valid stride 2", "conv2d_valid", false, 2, 7, 7, 2, 3, 3, 2),
		// One output channel keeps its axis (a label oc, not a row
		// variable, which dim oc = 1 would close to no axes).
		convCase("conv2d padded one channel", "conv2d", true, 2, 4, 4, 1, 1, 3, 1),
		convCase("conv2d_valid one channel", "conv2d_valid", false, 2, 5, 4, 2, 1, 3, 1),
		poolCase("max_pool 2x2 stride 2", "max_pool", true, 2, 6, 4, 3, 2, 2),
		poolCase("max_pool 3x3 stride 1", "max_pool", true, 1, 5, 5, 2, 3, 1),
		poolCase("max_pool 3x3 stride 2", "max_pool", true, 1, 7, 5, 2, 3, 2),
		poolCase("avg_pool 2x2 stride 2", "avg_pool", false, 2, 6, 4, 3, 2, 2),
		poolCase("avg_pool 3x3 stride 1", "avg_pool", false, 1, 5, 5, 2, 3, 1),
	}
	hinge := func(name, shape string, nb int) blockCase {
		return blockCase{
			name: name, layer: "hinge",
			decl:         fmt.Sprintf("input scores : %s\ninput labels : %s", shape, shape),
			body:         hingeBody,
			lossIsResult: true,
			// Scores in [-2, 2) away from the kinks at ±1, so that some
			// margins are clipped by relu.
			gens:   map[string]gen{"scores": awayFrom(-2, 2, 0.05, -1, 1), "labels": values(pm1(nb)...)},
			shapes: map[string]string{"margin": shape, "result": "1"},
			ref: func(t *testing.T, v func(string) []float64) {
				s, l, want := v("scores"), v("labels"), 0.0
				for i := range s {
					want += blkRelu(1-l[i]*s[i]) / float64(nb)
				}
				blkNear(t, "result", v("result"), []float64{want})
			},
		}
	}
	ce := func(name, shape string, nb, nc int) blockCase {
		return blockCase{
			name: name, layer: "cross_entropy",
			decl:         fmt.Sprintf("input logits : %s\ninput onehot : %s", shape, shape),
			body:         crossEntropyBody,
			lossIsResult: true,
			gens:         map[string]gen{"logits": uniform(-3, 3), "onehot": blkOneHot(nb, nc)},
			shapes:       map[string]string{"m": fmt.Sprintf("%s | 1", strings.Split(shape, " | ")[0]), "logp": shape, "result": "1"},
			ref: func(t *testing.T, v func(string) []float64) {
				lp := blkAlongAxis(v("logits"), []int{nb, nc}, 1, logSoftmaxRef)
				y, want := v("onehot"), 0.0
				for i := range y {
					want -= y[i] * lp[i] / float64(nb)
				}
				blkNear(t, "result", v("result"), []float64{want})
			},
		}
	}
	ceIndex := func(name, batch string, nb, nc int) blockCase {
		return blockCase{
			name: name, layer: "cross_entropy/index",
			decl:         fmt.Sprintf("input logits : %s | %d\ninput targets : %s | index %d", batch, nc, batch, nc),
			body:         crossEntropyIndexBody,
			lossIsResult: true,
			gens:         map[string]gen{"logits": uniform(-3, 3), "targets": blkIndices(nc)},
			noGrad:       []string{"targets"},
			shapes:       map[string]string{"picked": batch + " | ", "result": "1"},
			ref: func(t *testing.T, v func(string) []float64) {
				lp := blkAlongAxis(v("logits"), []int{nb, nc}, 1, logSoftmaxRef)
				y, want := v("targets"), 0.0
				for i := range y {
					want -= lp[i*nc+int(y[i])] / float64(nb)
				}
				blkNear(t, "result", v("result"), []float64{want})
			},
		}
	}
	batchNorm := func(name, shape string, nb, ns, nc int) blockCase {
		return blockCase{
			name: name, layer: "batch_norm",
			decl: "input x : " + shape,
			body: batchNormBody,
			gens: map[string]gen{"x": uniform(-2, 3)},
			shapes: map[string]string{"mean": fmt.Sprint(nc), "gamma": fmt.Sprint(nc), "beta": fmt.Sprint(nc),
				"result": strings.ReplaceAll(shape, ", ", ",")},
			ref: func(t *testing.T, v func(string) []float64) {
				x, g, bt := v("x"), v("gamma"), v("beta")
				n := nb * ns
				want := make([]float64, len(x))
				for c := range nc {
					var mean, vr float64
					for k := range n {
						mean += x[k*nc+c] / float64(n)
					}
					for k := range n {
						d := x[k*nc+c] - mean
						vr += d * d / float64(n)
					}
					for k := range n {
						want[k*nc+c] = (x[k*nc+c]-mean)/math.Sqrt(vr+1e-5)*g[c] + bt[c]
					}
				}
				blkNear(t, "result", v("result"), want)
			},
		}
	}
	embedding := func(name, batch string, nb, rows, d int) blockCase {
		return blockCase{
			name: name, layer: "embedding/index", cfg: map[string]string{"d": fmt.Sprint(d)},
			decl:   fmt.Sprintf("input ids : %s | index %d", batch, rows),
			body:   fmt.Sprintf("let e = {table} @@ \"k, o; ..b.. | => ..b.. | o\" [\"o\"] ids\ndim o = %d\nlet result = e", d),
			gens:   map[string]gen{"ids": blkIndices(rows)},
			noGrad: []string{"ids"},
			shapes: map[string]string{"table": fmt.Sprintf("%d,%d", rows, d), "result": fmt.Sprintf("%s | %d", batch, d)},
			ref: func(t *testing.T, v func(string) []float64) {
				ids, table := v("ids"), v("table")
				want := make([]float64, nb*d)
				for b := range nb {
					for o := range d {
						want[b*d+o] = table[int(ids[b])*d+o]
					}
				}
				blkNear(t, "result", v("result"), want)
			},
		}
	}
	return append(cs,
		hinge("hinge", "6 | 1", 6),
		hinge("hinge, two batch axes", "2,3 | 1", 6),
		ce("cross_entropy", "5 | 4", 5, 4),
		ce("cross_entropy, two batch axes", "2,3 | 4", 6, 4),
		ceIndex("cross_entropy, index targets", "5", 5, 4),
		ceIndex("cross_entropy, index targets, two batch axes", "2,3", 6, 4),
		embedding("embedding", "6", 6, 4, 3),
		batchNorm("batch_norm", "4 | 3,2,3", 4, 6, 3),
		batchNorm("batch_norm, one-dimensional", "5 | 4", 5, 1, 4),
		blockCase{
			name: "dropout", layer: "dropout", cfg: map[string]string{"p": "0.5"},
			decl:   "input x : 3 | 4, 5\nleaf mask = dropout 0.5",
			body:   `let result = x +* "..b.. | ..i.. -> ..o..; ..b.. | ..i.. -> ..o.. => ..b.. | ..i.. -> ..o.." mask`,
			gens:   map[string]gen{"mask": keep},
			shapes: map[string]string{"mask": "3 | 4,5", "result": "3 | 4,5"},
			ref: func(t *testing.T, v func(string) []float64) {
				x, mask := v("x"), v("mask")
				want := make([]float64, len(x))
				zeros := 0
				for i := range x {
					if mask[i] != 0 && mask[i] != 2 {
						t.Fatalf("mask cell %d is %v, want 0 or 1/(1-0.5)", i, mask[i])
					}
					if mask[i] == 0 {
						zeros++
					}
					want[i] = x[i] * mask[i]
				}
				if zeros == 0 || zeros == len(x) {
					t.Fatalf("the mask drops %d of %d cells", zeros, len(x))
				}
				blkNear(t, "result", v("result"), want)
			},
		},
		embedding("embedding, two batch axes", "2,3", 6, 5, 2),
	)
}

// blkForward infers, lowers and runs src on values drawn by gens (default
// uniform in [-1, 1)) and returns a lookup of named tensors' cells and the
// graph.
func blkForward(t *testing.T, name, src string, gens map[string]gen) (func(string) []float64, *inference.Graph) {
	t.Helper()
	g := testutil.Compile(t, src)
	fwd, err := loopir.Lower(g)
	if err != nil {
		t.Fatalf("Lower: %v", err)
	}
	r := rand.New(rand.NewPCG(seedOf(name), 11))
	inputs := map[int][]float64{}
	for id, tn := range g.Tensors {
		if !leafKind(tn.Kind) {
			continue
		}
		gf, ok := gens[tn.Name]
		if !ok {
			gf = uniform(-1, 1)
		}
		if vs := gf(r, tn.Shape.Size()); vs != nil {
			inputs[id] = vs
		}
	}
	s, err := loopir.RunWith[float64](fwd, inputs)
	if err != nil {
		t.Fatalf("forward run: %v", err)
	}
	return func(n string) []float64 { return s.Values(testutil.Named(t, g, n)) }, g
}

func TestBlockForms(t *testing.T) {
	for _, c := range blockCases() {
		t.Run(c.name, func(t *testing.T) {
			v, g := blkForward(t, c.name, c.src(), c.gens)
			for n, want := range c.shapes {
				if got := g.Tensors[testutil.Named(t, g, n)].Shape.String(); got != want {
					t.Errorf("%s : %s, want %s", n, got, want)
				}
			}
			if c.ref != nil {
				c.ref(t, v)
			}
			res := gradCheck(t, c.gcase())
			t.Logf("%s: worst relative error %.2e over %d cells", c.name, res.worst, res.cells)
		})
	}
}

// TestBlockAlternatives records other forms that were considered.
func TestBlockAlternatives(t *testing.T) {
	// OCANNL's conv2d bias `{bias = 0.}` (no field): here it gets the
	// leading (oh, ow) part of the result row, a per-position bias shared
	// by the channels; OCANNL's GLB gives the full (oh, ow, oc) row.
	t.Run("OCANNL conv bias", func(t *testing.T) {
		g := testutil.Compile(t, `input x : 2 | 6,5,3
let y = x +* "... | 1*oh=+kh, 1*ow=+kw, ..ic..; kh, kw, ..ic.. -> ..oc.. => ... | oh, ow, ..oc.." ["kh"; "kw"; "oc"] {kernel}
dim kh = 3
dim kw = 3
dim oc = 4
let result = y + {bias = 0.}`)
		t.Logf("OCANNL-style conv bias: %s (result %s)", g.Tensors[testutil.Named(t, g, "bias")].Shape, g.Tensors[testutil.Named(t, g, "result")].Shape)
	})
	// attention with nothing fixing w_o's output width.
	t.Run("attention without a residual", func(t *testing.T) {
		src := "input x : 2,3 | 8\n" + fmt.Sprintf(attentionHead, "2", "4") + fmt.Sprintf(attentionTail, "scores", "3")
		_, err := inference.InferSource(weighted(src, "result") + "\n")
		if err == nil || !strings.Contains(err.Error(), "w_o") {
			t.Errorf("want a hidden-dimension error for w_o, got %v", err)
		}
		t.Logf("attention alone: %v", err)
	})
}

// TestUnaryWindowPool checks the pooling form without a window tensor: a
// unary @^^ / ++ whose window labels occur only inside the operand's
// affine axes, sized by dim. Projection inference gives such a window
// label its own (reduction) iterator although it has no axis of its own:
// `x ++ "2*o<+w => o" ["w"]` with dim w = 2 sums x[2*o] + x[2*o+1]. Before
// that was fixed the term was dropped, and the gradient check passed on
// the wrong forward pass, so this test compares forward values too.
func TestUnaryWindowPool(t *testing.T) {
	t.Run("1-D sum", func(t *testing.T) {
		v, g := blkForward(t, "1-D", "input x : 6 = range\nlet y = x ++ \"2*o<+w => o\" [\"w\"]\ndim w = 2", map[string]gen{"x": keep})
		got, want := v("y"), []float64{1, 5, 9}
		if !slices.Equal(got, want) {
			for _, op := range g.Ops {
				if op.Proj != nil && op.SpecSrc != "" {
					t.Logf("%q: labels %v, LHS %v, RHS %v", op.SpecSrc, op.Labels, op.Proj.LHS, op.Proj.RHS)
				}
			}
			t.Errorf("y = %v, want %v", got, want)
		}
	})
	for _, max := range []bool{true, false} {
		op, name, gens := "++", "2-D average", map[string]gen(nil)
		if max {
			op, name, gens = "@^^", "2-D max", map[string]gen{"x": distinct(-2, 2)}
		}
		src := `input x : 2 | 6,4,3
let y = x ` + op + ` "... | 2*oh<+wh, 2*ow<+ww, ..c.. => ... | oh, ow, ..c.." ["wh"; "ww"]
dim wh = 2
dim ww = 2`
		if !max {
			src += "\nlet result = y /. (dim wh *. dim ww)"
		} else {
			src += "\nlet result = y"
		}
		t.Run(name, func(t *testing.T) {
			v, _ := blkForward(t, name, src, gens)
			want := poolRef(v("x"), 2, 6, 4, 3, 2, 2, max)
			if got := v("result"); !slices.EqualFunc(got, want, func(a, b float64) bool { return math.Abs(a-b) <= 1e-12 }) {
				t.Errorf("result[:4] = %v, want %v", got[:4], want[:4])
			}
			gradCheck(t, gcase{name: name, src: weighted(src, "result"), gens: gens})
		})
	}
}

// ---- std.ocl correspondence ----

// stdLayer is a layer of std.ocl read textually.
type stdLayer struct {
	name     string
	cfg      []string
	defaults map[string]string
	args     []string
	body     []string // statements; the final return is `let result = EXPR`
}

var blkLayerHead = regexp.MustCompile(`^layer\s+([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[([^\]]*)\])?\(([^)]*)\)\s*(=|:)\s*(.*)$`)

// blkStripComment drops a # comment (outside strings) and trailing space.
func blkStripComment(line string) string {
	in := false
	for i := 0; i < len(line); i++ {
		switch {
		case in && line[i] == '\\':
			i++
		case line[i] == '"':
			in = !in
		case !in && line[i] == '#':
			return strings.TrimRight(line[:i], " \t")
		}
	}
	return strings.TrimRight(line, " \t")
}

// blkDepth is the bracket depth change of a line (outside strings).
func blkDepth(line string) int {
	d, in := 0, false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case in:
		case c == '(' || c == '[' || c == '{':
			d++
		case c == ')' || c == ']' || c == '}':
			d--
		}
	}
	return d
}

func blkParseStd(t *testing.T, text string) map[string]*stdLayer {
	t.Helper()
	// logical lines: comments stripped, bracket continuations joined
	var lines []string
	open := 0
	for _, raw := range strings.Split(text, "\n") {
		l := blkStripComment(raw)
		if open > 0 {
			lines[len(lines)-1] += " " + strings.TrimSpace(l)
		} else if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
		open += blkDepth(l)
	}
	layers := map[string]*stdLayer{}
	var cur *stdLayer
	for _, l := range lines {
		if m := blkLayerHead.FindStringSubmatch(l); m != nil {
			if cur != nil {
				t.Fatalf("layer %s has no return", cur.name)
			}
			ly := &stdLayer{name: m[1], defaults: map[string]string{}}
			for _, c := range strings.Split(m[2], ",") {
				if c = strings.TrimSpace(c); c == "" {
					continue
				}
				n, d, ok := strings.Cut(c, "=")
				n = strings.TrimSpace(n)
				ly.cfg = append(ly.cfg, n)
				if ok {
					ly.defaults[n] = strings.TrimSpace(d)
				}
			}
			for _, a := range strings.Split(m[3], ",") {
				// `NAME : index` takes an index input; such a layer is
				// the index variant of its name, keyed "NAME/index".
				a, idx := strings.CutSuffix(strings.TrimSpace(a), ": index")
				ly.args = append(ly.args, strings.TrimSpace(a))
				if idx && !strings.HasSuffix(ly.name, "/index") {
					ly.name += "/index"
				}
			}
			if layers[ly.name] != nil {
				t.Fatalf("layer %s defined twice", ly.name)
			}
			layers[ly.name] = ly
			if m[4] == "=" {
				ly.body = []string{"let result = " + m[5]}
			} else {
				cur = ly
			}
			continue
		}
		if cur == nil {
			t.Fatalf("std.ocl: a line outside any layer: %q", l)
		}
		s := strings.TrimSpace(l)
		if e, ok := strings.CutPrefix(s, "return "); ok {
			cur.body = append(cur.body, "let result = "+e)
			cur = nil
			continue
		}
		cur.body = append(cur.body, s)
	}
	if cur != nil {
		t.Fatalf("layer %s has no return", cur.name)
	}
	return layers
}

var blkIdent = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Za-z_][A-Za-z0-9_]*|[A-Za-z_][A-Za-z0-9_']*`)

// blkSubstitute replaces configuration arguments: `$NAME` and `${NAME}` inside
// strings, bare names outside strings (except a name directly followed by
// `=`, a field such as the `o` of `o=[o]`).
func blkSubstitute(line string, vals map[string]string) (string, error) {
	var out strings.Builder
	var err error
	// split into string / non-string segments
	in := false
	start := 0
	flush := func(end int) {
		seg := line[start:end]
		if in {
			seg = blkIdent.ReplaceAllStringFunc(seg, func(w string) string {
				if !strings.HasPrefix(w, "$") {
					return w
				}
				n := strings.Trim(w, "${}")
				v, ok := vals[n]
				if !ok {
					err = fmt.Errorf("unknown configuration argument %s in %q", w, line)
				}
				return v
			})
			out.WriteString(seg)
			return
		}
		locs := blkIdent.FindAllStringIndex(seg, -1)
		prev := 0
		for _, lc := range locs {
			w := seg[lc[0]:lc[1]]
			out.WriteString(seg[prev:lc[0]])
			prev = lc[1]
			rest := strings.TrimLeft(seg[lc[1]:], " ")
			if strings.HasPrefix(w, "$") {
				err = fmt.Errorf("%s outside a string in %q", w, line)
			}
			if v, ok := vals[w]; ok && !(strings.HasPrefix(rest, "=") && !strings.HasPrefix(rest, "=>")) {
				out.WriteString(v)
			} else {
				out.WriteString(w)
			}
		}
		out.WriteString(seg[prev:])
	}
	for i := 0; i < len(line); i++ {
		switch {
		case in && line[i] == '\\':
			i++
		case line[i] == '"':
			if in {
				flush(i)
				out.WriteByte('"')
				start = i + 1
			} else {
				flush(i)
				out.WriteByte('"')
				start = i + 1
			}
			in = !in
		}
	}
	flush(len(line))
	return out.String(), err
}

var blkSpaces = regexp.MustCompile(`\s+`)

func blkNormLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(blkSpaces.ReplaceAllString(blkStripComment(l), " ")); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// namedInit matches a parameter's named initializer.
var (
	namedInit = regexp.MustCompile(`\{(\w+) = (?:uniform|normal|kaiming|xavier|fan_in)\b`)
	// dropoutInit matches a dropout mask, `{mask = dropout(p)}`, which a
	// loss entry's expansion turns into the leaf `mask` (declared `leaf
	// mask = dropout p` in the flat form).
	dropoutInit = regexp.MustCompile(`\{(\w+) = dropout\([^)]*\)\}`)
	fanInOf     = regexp.MustCompile(`\{(\w+) = fan_in\(\w+\)`)
)

func TestStdLibraryMatchesFlatForms(t *testing.T) {
	text, err := os.ReadFile("../model/std.ocl")
	if err != nil {
		t.Fatalf("reading std.ocl: %v", err)
	}
	layers := blkParseStd(t, string(text))
	want := []string{"dense", "linear", "mlp2", "softmax", "log_softmax", "layer_norm",
		"attention", "masked_attention", "conv2d", "conv2d_valid", "max_pool", "avg_pool",
		"hinge", "cross_entropy", "cross_entropy/index", "embedding/index", "dropout", "batch_norm"}
	if got := slices.Sorted(func(yield func(string) bool) {
		for n := range layers {
			if !yield(n) {
				return
			}
		}
	}); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("std.ocl layers %v, want %v", got, want)
	}
	covered := map[string]bool{}
	for _, c := range blockCases() {
		ly := layers[c.layer]
		if ly == nil {
			t.Errorf("%s: no layer %q in std.ocl", c.name, c.layer)
			continue
		}
		covered[c.layer] = true
		vals := map[string]string{}
		for _, n := range ly.cfg {
			v, ok := c.cfg[n]
			if !ok {
				v, ok = ly.defaults[n]
			}
			if !ok {
				t.Errorf("%s: no value for %s's configuration argument %s", c.name, ly.name, n)
			}
			vals[n] = v
		}
		for n := range c.cfg {
			if !slices.Contains(ly.cfg, n) {
				t.Errorf("%s: %s has no configuration argument %s", c.name, ly.name, n)
			}
		}
		for _, a := range ly.args {
			if !regexp.MustCompile(`(?m)^input ` + regexp.QuoteMeta(a) + ` :`).MatchString(c.decl) {
				t.Errorf("%s: the flat form does not declare %s's argument %s", c.name, ly.name, a)
			}
		}
		var exp []string
		for _, l := range ly.body {
			s, err := blkSubstitute(l, vals)
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			// A named initializer (`{w = fan_in}`) exists only in
			// models; the flat form, a program, uses the default draw
			// (and zeros for a bias drawn by its weight's fan-in,
			// `{b = fan_in(w)}`), which the gradient checks do not
			// depend on.
			s = fanInOf.ReplaceAllString(s, "{$1 = 0.")
			s = dropoutInit.ReplaceAllString(s, "$1")
			s = blkTrainMode(s)
			exp = append(exp, blkNormLines(namedInit.ReplaceAllString(s, "{$1"))...)
		}
		if flat := blkNormLines(c.body); !slices.Equal(exp, flat) {
			t.Errorf("%s: std.ocl's %s expands to\n%s\nbut the validated flat form is\n%s",
				c.name, ly.name, strings.Join(exp, "\n"), strings.Join(flat, "\n"))
		}
	}
	for _, n := range want {
		if !covered[n] {
			t.Errorf("layer %s has no validated flat form", n)
		}
	}
}
