package rt

import "math"

// Adam applies one step of Adam (Kingma & Ba, "Adam: A Method for
// Stochastic Optimization", Algorithm 1, with bias correction) to every
// element i of param, in the formulation of PyTorch's torch.optim.Adam
// and AdamW (the bias corrections scale the step size and sqrt(v), which
// equals the paper's m̂/(sqrt(v̂)+ε) form up to where ε enters). step is the 1-based number of this update (t in the paper);
// m and v are the first- and second-moment buffers (start them at
// zeros):
//
//	g = grad[i]
//	if weightDecay > 0 && !decoupled: g += weightDecay*param[i]      (Adam: L2 penalty)
//	if weightDecay > 0 && decoupled:  param[i] *= 1 - lr*weightDecay  (AdamW)
//	m[i] = beta1*m[i] + (1-beta1)*g
//	v[i] = beta2*v[i] + (1-beta2)*g*g
//	param[i] -= (lr/c1) * m[i] / (sqrt(v[i])/sqrt(c2) + eps)
//
// where c1 = 1 - beta1^step and c2 = 1 - beta2^step are computed once in
// float64. All slices must have param's length; it panics otherwise or
// when step < 1, and does not allocate.
func Adam[T Float](param, grad, m, v []T, step int, lr, beta1, beta2, eps, weightDecay T, decoupled bool) {
	n := len(param)
	if len(grad) != n || len(m) != n || len(v) != n {
		panic("rt: Adam: grad, m, v and param lengths differ")
	}
	k := AdamCoeffs(step, lr, beta1, beta2, eps, weightDecay, decoupled)
	grad, m, v = grad[:n], m[:n], v[:n]
	omb1, omb2, stepSize, sqrtC2, decay := k[1], k[3], k[4], k[5], k[7]
	l2 := weightDecay > 0 && !decoupled
	for i := range param {
		p := param[i]
		g := grad[i]
		if l2 {
			g += weightDecay * p
		}
		p *= decay
		mi := beta1*m[i] + omb1*g
		vi := beta2*v[i] + omb2*g*g
		m[i], v[i] = mi, vi
		denom := T(math.Sqrt(float64(vi)))/sqrtC2 + eps
		param[i] = p - stepSize*mi/denom
	}
}

// AdamCoeffs returns the coefficients of one Adam step, in the order the
// generated code's vector Adam kernels read them: beta1, 1-beta1, beta2,
// 1-beta2, the step size lr/c1, sqrt(c2), eps and the decoupled decay
// 1-lr*weightDecay (1 without), c1 and c2 computed in float64 as Adam
// does. It panics when step < 1.
func AdamCoeffs[T Float](step int, lr, beta1, beta2, eps, weightDecay T, decoupled bool) [8]T {
	if step < 1 {
		panic("rt: Adam: step must be at least 1")
	}
	c1 := 1 - math.Pow(float64(beta1), float64(step))
	c2 := 1 - math.Pow(float64(beta2), float64(step))
	decay := T(1)
	if decoupled && weightDecay > 0 {
		decay = 1 - lr*weightDecay
	}
	return [8]T{beta1, 1 - beta1, beta2, 1 - beta2, T(float64(lr) / c1), T(math.Sqrt(c2)), eps, decay}
}

// SumSquares returns the sum of the squares of g's elements, accumulated
// in float64 in index order. Summed over every gradient and square-rooted
// it is the global norm that ClipScale takes.
func SumSquares[T Float](g []T) float64 {
	s := 0.0
	for _, x := range g {
		s += float64(x) * float64(x)
	}
	return s
}

// ClipScale returns the factor by which gradient clipping by global norm
// scales every gradient, as torch.nn.utils.clip_grad_norm_ computes it:
// maxNorm/(norm+1e-6) when that is below 1, else 1 (no clipping). A NaN
// or infinite norm gives NaN or 0, which the caller's scaling then
// propagates, as PyTorch does without error_if_nonfinite.
func ClipScale(norm, maxNorm float64) float64 {
	c := maxNorm / (norm + 1e-6)
	if c < 1 || c != c {
		return c
	}
	return 1
}

// Scale multiplies every element of g by s (in T arithmetic).
func Scale[T Float](g []T, s T) {
	for i := range g {
		g[i] *= s
	}
}
