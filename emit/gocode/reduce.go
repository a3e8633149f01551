package gocode

import (
	"github.com/dave/jennifer/jen"
	"github.com/ocannlgen/ocannlgen/emit/schedule"
	"github.com/ocannlgen/ocannlgen/loopir"
)

// asmReduceNest is asmNest for a reduction (asm.ClassifyReduce): the
// call of the kernel in the Go loops it leaves outside, for each tier
// (AVX-512 and AVX2), and its comment; nil when
// the nest is not such a reduction. init is the pre-fill value the nest
// absorbs: the kernel starts from it, unless a Go loop around the call
// is a reduction too (then the nest stays Go loops).
func (k *kgen) asmReduceNest(loops []*loopir.For, st *loopir.Store, init *float64) ([][]jen.Code, string) {
	ch, ok := k.try(schedule.Reduce, loops, st, init)
	if !ok {
		return nil, ""
	}
	return k.reduceCalls(ch)
}

// reduceCalls renders the reduction kernel ch (asmReduceNest).
func (k *kgen) reduceCalls(ch schedule.Choice) ([][]jen.Code, string) {
	n := ch.Reduce
	tiers := k.asm.Tiers()
	idx := k.asm.AddReduce(n.Spec)
	var build func(name string, i int) jen.Code
	build = func(name string, i int) jen.Code {
		if i == len(n.Outer) {
			args := []jen.Code{jen.Op("&").Add(k.directAccess(n.C, n.Zero))}
			for j, l := range n.Ins {
				args = append(args, jen.Op("&").Add(k.directAccess(l.Tensor, n.ZIns[j])))
			}
			return jen.Id(name).Call(args...)
		}
		l := n.Outer[i]
		before := k.varUse[l.Var]
		inner := build(name, i+1)
		return k.forStmt(l.Var, 0, l.Extent, 1, k.varUse[l.Var] > before, []jen.Code{inner})
	}
	calls := make([][]jen.Code, len(tiers))
	for i, t := range tiers {
		if name := k.asm.ReduceName(idx, t); name != "" {
			calls[i] = []jen.Code{build(name, 0)}
		}
	}
	return calls, "// " + n.Spec.Describe(tiers...) + "."
}
