package gocode

import (
	"math"

	"github.com/dave/jennifer/jen"
	"github.com/ocannlgen/ocannlgen/emit/schedule"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
)

// planAbsorbs finds the zero fills (of whole local arrays, the zeroing of
// gradients) that the next statement touching the tensor overwrites
// anyway: a perfect nest adding a value that does not read the tensor
// into each of its cells exactly once, as a pointwise map kernel, or a
// contraction kernel summing into each cell once. The map kernel then
// stores `f + 0` (the sum with the zero the fill left, -0 included; AVX2
// only: a new form), the contraction kernel its sums; the fill moves
// into the Go branch. An operation's own pre-fill that fillElision
// already folds into its nest is left to it. It fills k.absorb (fill ->
// the nest's store) and k.absorbAt.
func (k *kgen) planAbsorbs() {
	k.absorb, k.absorbAt = map[*loopir.Fill]*loopir.Store{}, map[*loopir.Store]*loopir.Fill{}
	if k.asm == nil {
		return
	}
	var top []loopir.Stmt
	elided := map[*loopir.Fill]bool{} // an operation's own pre-fill its nest absorbs already
	for _, o := range k.p.Ops {
		top = append(top, o.Body...)
		if e := k.fillElision(o); e != nil {
			elided[e.fill] = true
		}
	}
	for i, s := range top {
		f, ok := s.(*loopir.Fill)
		if !ok || f.Value != 0 || math.Signbit(f.Value) || !k.absorbable(f.Tensor) || elided[f] {
			continue
		}
		for _, next := range top[i+1:] {
			if !loopir.Touches(next, f.Tensor) {
				continue
			}
			if fr, isFor := next.(*loopir.For); isFor {
				if loops, st, perfectNest := loopir.PerfectNest(fr); perfectNest && k.absorbingNest(loops, st, f.Tensor) {
					k.absorb[f] = st
					k.absorbAt[st] = f
				}
			}
			break
		}
	}
}

// absorbable: t is a local array (not a parameter, a constant or a
// padded buffer) small enough to check cell by cell.
func (k *kgen) absorbable(t int) bool {
	s := &k.ts[t].st
	ti := &k.p.Tensors[t]
	return s.kind == sLocal && s.param == nil && k.pin[t] == nil && !ti.Padded() && ti.Size() <= k.tgt.Loops.MaxAbsorbCells
}

// absorbingNest reports whether the nest adds into every cell of t once,
// without reading t, and classifies as a map kernel when it overwrites.
func (k *kgen) absorbingNest(loops []*loopir.For, st *loopir.Store, t int) bool {
	if st.Tensor != t || !st.Accumulate || st.Accum != ops.AccAdd || loopir.Reads(st.Value, t) {
		return false
	}
	if k.overwritingContraction(loops, st) {
		return coversOnce(schedule.StoreLoops(loops, st), st.Index, k.p.Tensors[t].BufDims)
	}
	if _, ok := k.tryWith(schedule.Map, loops, overwriteStore(st), schedule.Query{Elem: k.elem, Inlined: true, Fold: k.foldConstLoads}); !ok {
		return false
	}
	return coversOnce(loops, st.Index, k.p.Tensors[t].BufDims)
}

// overwritingContraction reports whether the nest is an assembly
// contraction kernel that can store its sums (asmNest's absorbed zero
// pre-fill: its accumulators start at +0, so the cells get the fill's
// zero plus the sum).
func (k *kgen) overwritingContraction(loops []*loopir.For, st *loopir.Store) bool {
	zero := 0.0
	ch, ok := k.tryWith(schedule.Contraction, loops, st, schedule.Query{Elem: k.elem, Init: &zero, Const: k.isConst})
	return ok && ch.Overwrite
}

// overwriteStore is st (an addition into the cell) as the store of the
// cell's zero plus the value: `c = f + 0`.
func overwriteStore(st *loopir.Store) *loopir.Store {
	ow := *st
	ow.Accumulate, ow.Accum = false, ops.NoAccum
	ow.Value = &loopir.Apply{Prim: ops.Add, Args: []loopir.Expr{st.Value, &loopir.Const{Value: 0}}}
	return &ow
}

// coversOnce reports whether the nest's index visits every cell of a
// buffer of dims bd exactly once.
func coversOnce(loops []*loopir.For, idx []loopir.IndexExpr, bd []int) bool {
	size := prod(bd)
	n := 1
	for _, l := range loops {
		n *= l.Extent
	}
	if n != size || len(idx) != len(bd) {
		return false
	}
	seen := make([]bool, size)
	vals := map[int]int{}
	var walk func(i int) bool
	walk = func(i int) bool {
		if i == len(loops) {
			off := 0
			for a, x := range idx {
				v := x.Offset
				for _, tm := range x.Terms {
					v += tm.Coeff * vals[tm.Var]
				}
				if v < 0 || v >= bd[a] {
					return false
				}
				off = off*bd[a] + v
			}
			if seen[off] {
				return false
			}
			seen[off] = true
			return true
		}
		for v := range loops[i].Extent {
			vals[loops[i].Var] = v
			if !walk(i + 1) {
				return false
			}
		}
		return true
	}
	return walk(0)
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
	k.curInlined = true // a new form: AVX2 only
	if code, ok, err := k.parChain(loops, st, nil, f); ok || err != nil {
		return code, ok, err
	}
	calls, note := k.asmMapNest(loops, overwriteStore(st), nil)
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
