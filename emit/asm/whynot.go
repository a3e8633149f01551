package asm

import (
	"fmt"

	"github.com/ocannlgen/ocannlgen/emit/target"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
)

// WhyNot names the first condition a perfect nest fails to run as an
// assembly kernel under the limits kn (the explain output's reason for Go
// loops).
func WhyNot(kn target.Kernels, p *loopir.Program, loops []*loopir.For, st *loopir.Store, elem string) string {
	ap, ok := st.Value.(*loopir.Apply)
	isProd := ok && ap.Prim == ops.Mul && len(ap.Args) == 2
	switch {
	case st.Accumulate && redAccums[st.Accum] && !isProd:
		if why := reduceWhy(kn, p, loops, st, elem); why != "" {
			return "no reduction kernel: " + why
		}
		return fmt.Sprintf("no reduction kernel: it needs a reduced axis of unit stride in the operands (at least %d long) or a kept one in C (at least %d), "+
			"an expression over the pointwise primitives and %d elements per call", kn.MinReduceN, kn.MinAcrossN, kn.MinReduceElems)
	case !st.Accumulate || st.Accum != ops.AccAdd:
		return "not a contraction, and not a pointwise map of a contiguous axis of at least " + fmt.Sprint(kn.MinMapElems) + " elements (" + fmt.Sprint(kn.MinCostlyMapElems) + " with exp, log, tanh, erf or gelu) over the supported primitives, fitting the registers"
	case !ok || ap.Prim != ops.Mul || len(ap.Args) != 2:
		return "not a sum of products of two tensors"
	}
	work := 2
	for _, l := range loops {
		work *= l.Extent
	}
	if work < kn.MinFlops {
		return fmt.Sprintf("%d flops, below the %d worth a kernel call", work, kn.MinFlops)
	}
	return "no unit-stride axis for a broadcast or dot kernel, or too short"
}

// reduceWhy names the register budget when it is what keeps a reduction
// that otherwise qualifies out of the AVX2 reduction kernel ("" when it
// is not): the constants, the broadcast operands, the accumulator and
// the expression's temporaries must fit 2 fewer than the tier's
// registers (an initial value and one accumulator), by the bound
// fixedRegs or, past it, by compiling the kernel (ReduceSpec.fitsAVX2).
func reduceWhy(kn target.Kernels, p *loopir.Program, loops []*loopir.For, st *loopir.Store, elem string) string {
	if elem != "float32" && elem != "float64" || len(loops) == 0 {
		return ""
	}
	expr, loads, ok := mapOperands(&loopir.Store{Tensor: st.Tensor, Value: negAsMul(st.Value)})
	if !ok || len(loads) > maxMapIns || len(loads) == 0 || usesPrim(expr, transPrims) {
		return ""
	}
	axes, ok := redAxes(p, loops, st, loads, nil)
	if !ok {
		return ""
	}
	kind, vec, _ := pickReduceAxes(mergeMapAxes(axes), kn)
	if vec == nil {
		return ""
	}
	// One row (fitsAVX2 compiles the kernel: its strides must be set).
	r := ReduceSpec{Elem: elem, Kind: kind, Accum: st.Accum, Expr: expr, N: vec.extent, Rows: 1, RowStride: make([]int, len(vec.st))}
	for _, s := range vec.st[1:] {
		r.Stride0 = append(r.Stride0, s == 0)
	}
	if need, have := r.fixedRegs(), AVX2().Regs-2; need > have && !r.fitsAVX2() {
		return fmt.Sprintf("its expression, constants and accumulator need %d vector registers, the AVX2 reduction kernel has %d (reductions have no AVX-512 kernel)", need, have)
	}
	return ""
}
