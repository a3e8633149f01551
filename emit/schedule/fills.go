package schedule

import (
	"math"

	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/emit/target"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
)

// Elision is a fill an operation's nest absorbs: Fill, then Loop.
type Elision struct {
	Fill *loopir.Fill
	Loop *loopir.For
}

// FillThenLoop matches an operation's body of the shape [resets,] one
// fill, one loop, and returns the fill and the loop.
func FillThenLoop(o *loopir.Operation) (Elision, bool) {
	var e Elision
	for _, s := range o.Body {
		switch s := s.(type) {
		case *loopir.ResetPadding:
		case *loopir.Fill:
			if e.Fill != nil || e.Loop != nil {
				return e, false
			}
			e.Fill = s
		case *loopir.For:
			if e.Loop != nil || e.Fill == nil {
				return e, false
			}
			e.Loop = s
		default:
			return e, false
		}
	}
	return e, e.Fill != nil && e.Loop != nil
}

// ElideFill finds an operation whose pre-fill is redundant for the Go
// loops: [resets,] fill T, one perfect nest accumulating into every cell
// of T once in a local variable, which then starts from the fill value.
// isConst reports the tensors held as constants (nil: none).
func ElideFill(p *loopir.Program, o *loopir.Operation, isConst func(int) bool, lt target.Loops) *Elision {
	e, ok := FillThenLoop(o)
	if !ok {
		return nil
	}
	loops, st, ok := loopir.PerfectNest(e.Loop)
	if !ok || st.Tensor != e.Fill.Tensor || !st.Accumulate || isConst != nil && isConst(st.Tensor) {
		return nil
	}
	if pl := Loops(p, loops, st, nil, lt); !pl.CoversAll || !pl.Bijective {
		return nil
	}
	return &e
}

// AsmElideFill finds an operation whose pre-fill with zero an assembly
// kernel can absorb although the Go loops cannot: [resets,] fill T with
// +0, one perfect nest that stores into every cell of the unpadded T
// once per reduction (an overwriting contraction). The Go branch then
// fills and runs the loops.
func AsmElideFill(tiers []asm.Config, p *loopir.Program, o *loopir.Operation, elem string, isConst func(int) bool) *Elision {
	if len(tiers) == 0 {
		return nil
	}
	e, ok := FillThenLoop(o)
	if !ok || e.Fill.Value != 0 || math.Signbit(e.Fill.Value) {
		return nil
	}
	loops, st, ok := loopir.PerfectNest(e.Loop)
	if !ok || st.Tensor != e.Fill.Tensor || isConst != nil && isConst(st.Tensor) || p.Tensors[st.Tensor].Padded() {
		return nil
	}
	zero := 0.0
	ch, ok := Try(Contraction, tiers, p, loops, st, Query{Elem: elem, Init: &zero})
	if !ok || !ch.Overwrite {
		return nil
	}
	n := ch.Contraction
	cells := n.Spec.M * n.Spec.N * max(1, n.Spec.N2)
	for _, l := range n.Outer {
		cells *= l.Extent
	}
	if cells != p.Tensors[st.Tensor].Size() {
		return nil
	}
	return &e
}

// AbsorbEnv is what Absorbs needs of the emitter: which arrays may have
// their fill absorbed (local arrays: not parameters, constants or
// padded buffers, at most Loops.MaxAbsorbCells cells), which tensors are
// constants, how constant leaves fold, and which fills an operation's
// own nest absorbs already (ElideFill).
type AbsorbEnv struct {
	Elem       string
	Absorbable func(t int) bool
	Const      func(t int) bool
	Fold       func(loopir.Expr) loopir.Expr
	Elided     func(o *loopir.Operation) *Elision
	// Output reports the absorbable tensors that are output parameters;
	// FewParts (nil: serial code) the nests that would run in few or
	// unbalanced output parts (FewParts). Such a nest runs fixed partial
	// sums over its reduction instead, which an absorbed fill rules out,
	// so it does not absorb an output parameter's fill (a local's it
	// did before output parameters were absorbable, and still does).
	Output   func(t int) bool
	FewParts func(loops []*loopir.For, st *loopir.Store) bool
}

// Absorbs finds the zero fills (of whole local arrays, the zeroing of
// gradients) that the next statement touching the tensor overwrites
// anyway: a perfect nest adding a value that does not read the tensor
// into each of its cells exactly once, as a pointwise map kernel, or a
// contraction kernel summing into each cell once. For a padded array
// (a padded input's gradient) the nest covers the interior, and the
// fill becomes the zeroing of the margins only. The map kernel then
// stores `f + 0` (the sum with the zero the fill left, -0 included; AVX2
// only: a new form), the contraction kernel its sums; the fill moves
// into the Go branch. An operation's own pre-fill that ElideFill already
// folds into its nest is left to it. It returns fill -> the nest's store
// and the reverse.
func Absorbs(tiers []asm.Config, p *loopir.Program, env AbsorbEnv) (map[*loopir.Fill]*loopir.Store, map[*loopir.Store]*loopir.Fill) {
	absorb, at := map[*loopir.Fill]*loopir.Store{}, map[*loopir.Store]*loopir.Fill{}
	if len(tiers) == 0 {
		return absorb, at
	}
	var top []loopir.Stmt
	elided := map[*loopir.Fill]bool{}
	for _, o := range p.Ops {
		top = append(top, o.Body...)
		if e := env.Elided(o); e != nil {
			elided[e.Fill] = true
		}
	}
	for i, s := range top {
		f, ok := s.(*loopir.Fill)
		if !ok || f.Value != 0 || math.Signbit(f.Value) || !env.Absorbable(f.Tensor) || elided[f] {
			continue
		}
		for _, next := range top[i+1:] {
			if !loopir.Touches(next, f.Tensor) {
				continue
			}
			if fr, isFor := next.(*loopir.For); isFor {
				if loops, st, perfect := loopir.PerfectNest(fr); perfect && absorbingNest(tiers, p, env, loops, st, f.Tensor) &&
					!(env.Output != nil && env.Output(f.Tensor) && env.FewParts != nil && env.FewParts(loops, st)) {
					absorb[f] = st
					at[st] = f
				}
			}
			break
		}
	}
	return absorb, at
}

// absorbingNest reports whether the nest adds into every cell of t once,
// without reading t, and runs as a kernel when it overwrites. For a
// padded t, every cell of its interior (the unpadded cells; the fill's
// margins are then reset instead, see Absorbs).
func absorbingNest(tiers []asm.Config, p *loopir.Program, env AbsorbEnv, loops []*loopir.For, st *loopir.Store, t int) bool {
	if st.Tensor != t || !st.Accumulate || st.Accum != ops.AccAdd || loopir.Reads(st.Value, t) {
		return false
	}
	idx, dims := InteriorIndex(&p.Tensors[t], st.Index)
	if OverwritingContraction(tiers, p, loops, st, env.Elem, env.Const) {
		return CoversOnce(StoreLoops(loops, st), idx, dims)
	}
	if _, ok := Try(Map, tiers, p, loops, OverwriteStore(st), Query{Elem: env.Elem, Inlined: true, Fold: env.Fold}); !ok {
		return false
	}
	return CoversOnce(loops, idx, dims)
}

// InteriorIndex is a store's index into tensor ti relative to its
// interior (its unpadded cells: the margins' widths subtracted) and the
// interior's dims; for an unpadded tensor, idx and its buffer's dims.
func InteriorIndex(ti *loopir.TensorInfo, idx []loopir.IndexExpr) ([]loopir.IndexExpr, []int) {
	if !ti.Padded() || len(ti.Padding) != len(idx) {
		return idx, ti.BufDims
	}
	in := make([]loopir.IndexExpr, len(idx))
	for i, x := range idx {
		in[i] = loopir.IndexExpr{Terms: x.Terms, Offset: x.Offset - ti.Padding[i].Left}
	}
	return in, ti.Dims
}

// OverwritingContraction reports whether the nest runs as an assembly
// contraction kernel that can store its sums (an absorbed zero
// pre-fill: its accumulators start at +0, so the cells get the fill's
// zero plus the sum).
func OverwritingContraction(tiers []asm.Config, p *loopir.Program, loops []*loopir.For, st *loopir.Store, elem string, isConst func(int) bool) bool {
	zero := 0.0
	ch, ok := Try(Contraction, tiers, p, loops, st, Query{Elem: elem, Init: &zero, Const: isConst})
	return ok && ch.Overwrite
}

// OverwriteStore is st (an addition into the cell) as the store of the
// cell's zero plus the value: `c = f + 0`.
func OverwriteStore(st *loopir.Store) *loopir.Store {
	ow := *st
	ow.Accumulate, ow.Accum = false, ops.NoAccum
	ow.Value = &loopir.Apply{Prim: ops.Add, Args: []loopir.Expr{st.Value, &loopir.Const{Value: 0}}}
	return &ow
}

// CoversOnce reports whether the nest's index visits every cell of a
// buffer of dims bd exactly once.
func CoversOnce(loops []*loopir.For, idx []loopir.IndexExpr, bd []int) bool {
	size := 1
	for _, d := range bd {
		size *= d
	}
	n := 1
	for _, l := range loops {
		n *= l.Extent
	}
	if n != size || len(idx) != len(bd) {
		return false
	}
	if permutes(loops, idx, bd) {
		return true
	}
	// The general case: visit every cell. Loop variables index vals
	// (they are small non-negative numbers; a map per cell was the
	// generator's hot spot on large models).
	maxVar := 0
	for _, l := range loops {
		maxVar = max(maxVar, l.Var)
	}
	for _, x := range idx {
		for _, tm := range x.Terms {
			if tm.Var < 0 {
				return false
			}
			maxVar = max(maxVar, tm.Var)
		}
	}
	for _, l := range loops {
		if l.Var < 0 {
			return false
		}
	}
	seen := make([]bool, size)
	vals := make([]int, maxVar+1)
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

// permutes reports the common case of CoversOnce without visiting the
// cells: every axis of the index is one loop variable with coefficient 1
// and no offset whose extent is the axis's size (or a constant 0 on an
// axis of size 1), each variable indexes one axis, and the loops no
// axis names have extent 1. Such an index is a bijection onto the
// buffer.
func permutes(loops []*loopir.For, idx []loopir.IndexExpr, bd []int) bool {
	ext := map[int]int{}
	for _, l := range loops {
		if _, dup := ext[l.Var]; dup {
			return false
		}
		ext[l.Var] = l.Extent
	}
	used := map[int]bool{}
	for a, x := range idx {
		if x.Data != nil {
			return false
		}
		switch len(x.Terms) {
		case 0:
			if x.Offset != 0 || bd[a] != 1 {
				return false
			}
		case 1:
			tm := x.Terms[0]
			e, ok := ext[tm.Var]
			if !ok || used[tm.Var] || tm.Coeff != 1 || x.Offset != 0 || e != bd[a] {
				return false
			}
			used[tm.Var] = true
		default:
			return false
		}
	}
	for v, e := range ext {
		if !used[v] && e != 1 {
			return false
		}
	}
	return true
}

// FewParts reports whether a nest worth running in parts has no loop of
// its output to split, or would split into few or unbalanced parts of
// it (fewer than Parallel.MinOutputParts, or a number Balance rejects):
// the cases where the Go emitter's parChain and Schedule.parallel try
// fixed partial sums over a reduction loop instead. bf16: a
// //ocannl:model bf16 kernel's contractions.
func FewParts(tiers []asm.Config, tgt target.CPU, p *loopir.Program, loops []*loopir.For, st *loopir.Store, elem string, model, bf16 bool) bool {
	if len(loops) < 2 {
		return false
	}
	pl := Loops(p, loops, st, nil, tgt.Loops)
	n0, worth := Worth(tiers, tgt, p, loops, st, elem, model)
	if !worth || pl.Reads {
		return false
	}
	split, parts := SplitLoop(tgt.Parallel, loops, st, pl, n0, bf16 && elem == "float32")
	return split == nil || parts < tgt.Parallel.MinOutputParts || Balance(parts) == 0
}
