package gocode

import (
	"github.com/ocannlgen/ocannlgen/emit/desc"
	"github.com/ocannlgen/ocannlgen/emit/schedule"
	"github.com/ocannlgen/ocannlgen/loopir"
)

// inlineScalarTemps is loopir.InlineScalarTemps keeping the kernel's
// parameters: the program the emitter works on, and the stores the
// inlining made (their nests are new forms, emitted for AVX2 only).
func inlineScalarTemps(p *loopir.Program, params []desc.Param) (*loopir.Program, map[*loopir.Store]bool) {
	return loopir.InlineScalarTemps(p, paramSet(params))
}

// fusePointwise is loopir.ElideCopies then loopir.FusePointwise keeping
// the kernel's parameters (a gradient that is a plain copy of its
// consumer's reads the consumer's instead, as schedule.Plan does):
// a single-use pointwise temporary (a bias add read only by the relu
// after it, as in a model's Predict) is computed in its reader's pass.
// With assembly kernels on, the fused nest must be a map kernel when
// either nest was one (a fused tree the kernels cannot run, more than 6
// operands, would fall back to Go loops).
func (k *kgen) fusePointwise(p *loopir.Program, params []desc.Param) *loopir.Program {
	var accept loopir.Acceptor
	if k.asm != nil {
		accept = schedule.FuseAcceptor(k.asm.Tiers(), p, k.elem)
	}
	p, _ = loopir.ElideCopies(p, paramSet(params))
	q, _ := loopir.FusePointwise(p, paramSet(params), accept)
	return q
}

// outputSet is the set of tensors bound to output parameters.
func outputSet(params []desc.Param) map[int]bool {
	out := map[int]bool{}
	for _, pr := range params {
		if pr.Output {
			out[pr.Tensor] = true
		}
	}
	return out
}

// paramSet is the set of the parameters' tensors.
func paramSet(params []desc.Param) map[int]bool {
	keep := map[int]bool{}
	for _, pr := range params {
		keep[pr.Tensor] = true
	}
	return keep
}
