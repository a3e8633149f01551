package rt

// SGD applies one step of OCANNL's tinygrad-style sgd_one (digest §6) to
// every element i of param, in T arithmetic:
//
//	delta = grad[i] + weightDecay*param[i]
//	if momentum > 0:
//	    momentumBuf[i] = momentum*momentumBuf[i] + delta
//	    delta = nesterov ? delta + momentum*momentumBuf[i] : momentumBuf[i]
//	param[i] -= lr*delta
//
// grad must have param's length, and so must momentumBuf when momentum
// > 0 (it is not touched otherwise and may be nil); start it at zeros. It
// panics on a length mismatch and does not allocate.
func SGD[T Float](param, grad, momentumBuf []T, lr, momentum, weightDecay T, nesterov bool) {
	n := len(param)
	if len(grad) != n {
		panic("rt: SGD: grad and param lengths differ")
	}
	grad = grad[:n]
	if !(momentum > 0) {
		for i := range param {
			p := param[i]
			param[i] = p - lr*(grad[i]+weightDecay*p)
		}
		return
	}
	if len(momentumBuf) != n {
		panic("rt: SGD: momentumBuf and param lengths differ")
	}
	momentumBuf = momentumBuf[:n]
	for i := range param {
		p := param[i]
		d := grad[i] + weightDecay*p
		b := momentum*momentumBuf[i] + d
		momentumBuf[i] = b
		if nesterov {
			d = d + momentum*b
		} else {
			d = b
		}
		param[i] = p - lr*d
	}
}

// LinearDecay is the learning-rate schedule of OCANNL's moons demo,
// 0.1 * (2*steps - step) / steps, with 0.1 generalized to lr0:
// lr0 * (2*steps - step) / steps, evaluated left to right in float64. It
// starts at 2*lr0 (step 0), passes lr0 at step == steps and reaches 0 at
// step == 2*steps. It panics unless steps > 0.
func LinearDecay(lr0 float64, step, steps int) float64 {
	if steps <= 0 {
		panic("rt: LinearDecay needs steps > 0")
	}
	return lr0 * float64(2*steps-step) / float64(steps)
}
