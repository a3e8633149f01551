package gocode

import (
	"github.com/dave/jennifer/jen"
	"github.com/ocannlgen/ocannlgen/emit/schedule"
	"github.com/ocannlgen/ocannlgen/loopir"
)

// planAbsorbs fills k.absorb (fill -> the nest's store) and k.absorbAt
// with the zero fills later nests absorb (schedule.Absorbs).
func (k *kgen) planAbsorbs() {
	var fewParts func(loops []*loopir.For, st *loopir.Store) bool
	if k.par {
		fewParts = func(loops []*loopir.For, st *loopir.Store) bool {
			return schedule.FewParts(k.tiers(), k.tgt, k.p, loops, st, k.elem, k.k.PoolParam, k.k.BF16)
		}
	}
	k.absorb, k.absorbAt = schedule.Absorbs(k.tiers(), k.p, schedule.AbsorbEnv{Elem: k.elem, Absorbable: k.absorbable,
		Const: k.isConst, Fold: k.foldConstLoads, Elided: k.fillElision,
		Output: func(t int) bool { return k.ts[t].st.param != nil }, FewParts: fewParts})
}

// absorbable: t is a local array or an output parameter held in place
// (not an input parameter, a constant or a padded output) small enough
// to check cell by cell. An output parameter's zero fill (a model's
// gradient zeroing) is as dead as a local's when the next nest stores
// every cell: the caller sees the same cells. A padded local's fill is
// absorbed by a nest storing its interior, and its margins are zeroed
// where the fill was (absorbedFill).
func (k *kgen) absorbable(t int) bool {
	s := &k.ts[t].st
	ti := &k.p.Tensors[t]
	if k.pin[t] != nil || ti.Size() > k.tgt.Loops.MaxAbsorbCells {
		return false
	}
	if ti.Padded() {
		return s.kind == sLocal && s.param == nil
	}
	switch s.kind {
	case sLocal:
		return s.param == nil
	case sPtr, sSlice:
		return s.param != nil && s.param.Output
	}
	return false
}

// overwritingContraction reports whether the nest is an assembly
// contraction kernel that can store its sums (asmNest's absorbed zero
// pre-fill: its accumulators start at +0, so the cells get the fill's
// zero plus the sum).
func (k *kgen) overwritingContraction(loops []*loopir.For, st *loopir.Store) bool {
	return schedule.OverwritingContraction(k.tiers(), k.p, loops, st, k.elem, k.isConst)
}

// chainAbsorb emits a nest that absorbs the zero fill f (see
// planAbsorbs): the AVX2 kernel stores f + 0, the Go branch fills and
// runs the loops. ok is false when the kernel is not available after
// all (the caller emits the fill and the nest as usual).
func (k *kgen) chainAbsorb(loops []*loopir.For, st *loopir.Store, f *loopir.Fill) ([]jen.Code, bool, error) {
	if k.overwritingContraction(loops, st) {
		code, err := k.chainAsmFill(loops, st, f)
		return code, err == nil, err
	}
	k.curInlined = true // a new form
	if code, ok, err := k.parChain(loops, st, nil, f); ok || err != nil {
		return code, ok, err
	}
	calls, note := k.asmMapNest(loops, schedule.OverwriteStore(st), nil)
	if calls == nil {
		return nil, false, nil
	}
	code := k.fill(f)
	goCode, err := k.chainGo(loops, st, nil)
	if err != nil {
		return nil, false, err
	}
	code = append(code, goCode...)
	return k.dispatch(calls, "// the zero fill absorbed: "+note[3:], code), true, nil
}

// absorbedFill is what stays of a zero fill a later nest absorbs (see
// planAbsorbs): nothing, or for a padded array the zeroing of its
// margins (the nest stores its interior).
func (k *kgen) absorbedFill(f *loopir.Fill) []jen.Code {
	if !k.p.Tensors[f.Tensor].Padded() {
		return nil
	}
	r := &loopir.ResetPadding{Tensor: f.Tensor, Value: f.Value}
	if code, ok := k.parReset(r); ok {
		return code
	}
	return k.resetPadding(r)
}
