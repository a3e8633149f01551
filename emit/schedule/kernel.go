// Package schedule decides how the CPU code runs each loop nest of a
// lowered program: which kernel family runs it (Choose, from one table of
// families), and in which loop order and mode the Go loops run it
// (Loops). The Go emitter (emit/gocode) and `ocannlgen infer --kernels`
// ask it, and nothing else decides these; the target description
// (emit/target) holds every limit the decisions use.
//
// It is a generator-only package: generated code never imports it.
package schedule

import (
	"math"

	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
)

// Family is a kernel family: what runs a loop nest.
type Family int

const (
	// GoLoops: the nest runs as Go loops only.
	GoLoops Family = iota
	// Contraction: an assembly sum of products (asm.Classify: the
	// broadcast, dot, gathered and m-vector kinds), in each tier.
	Contraction
	// Map: an assembly pointwise map (asm.ClassifyMapNew).
	Map
	// Reduce: an assembly reduction (asm.ClassifyReduce), in each tier.
	Reduce
)

// String names the family as the schedule prints it.
func (f Family) String() string {
	switch f {
	case Contraction:
		return "contraction"
	case Map:
		return "map"
	case Reduce:
		return "reduce"
	}
	return "Go loops"
}

// Query is what the emitter knows of a nest besides its loops and store.
type Query struct {
	// Elem is the element type ("float32" or "float64").
	Elem string
	// Free are variables bound outside the nest (a part number of a loop
	// split between threads): they stay in the call's base addresses.
	Free map[int]bool
	// Init is the pre-fill value the nest absorbs (nil: none). A
	// contraction absorbs +0 by storing; another value is filled before
	// it adds. A map absorbs none. A reduction starts from it.
	Init *float64
	// Inlined: the nest was made perfect by inlining a scalar temporary;
	// a map kernel runs it in its new form.
	Inlined bool
	// Const reports the tensors the emitted code holds as constants
	// rather than arrays: a kernel cannot take them as operands (nil:
	// none).
	Const func(t int) bool
	// Fold returns a value with its constant leaves folded into
	// constants of the map kernel (nil: none folded).
	Fold func(loopir.Expr) loopir.Expr
	// BF16Operands: the kernel's inputs are rt.BF16 arrays
	// (desc.Kernel.BF16Operands). Every contraction the classifier
	// recognizes runs on rt/bf16, whatever its size (the size rules are
	// off: rt/bf16 has no Go loops to fall back on that would round
	// alike), and no map or reduction kernel runs (they take float32
	// arrays): the Go loops widen the operands instead.
	BF16Operands bool
}

func (q *Query) isConst(t int) bool { return q.Const != nil && q.Const(t) }

// Choice is the kernel that runs a nest: its family and the
// classification of the one that matched.
type Choice struct {
	Family Family
	// Contraction is set for the Contraction family. Overwrite: its
	// kernel stores, absorbing the pre-fill with +0; PreFill: the
	// kernel's branch fills with *Query.Init before the kernel adds.
	Contraction        *asm.Nest
	Overwrite, PreFill bool
	// Map is set for the Map family, Reduce for the Reduce family.
	Map    *asm.MapNest
	Reduce *asm.ReduceNest
}

// Outer are the loops the Go code runs around the kernel call.
func (c Choice) Outer() []*loopir.For {
	switch c.Family {
	case Contraction:
		return c.Contraction.Outer
	case Map:
		return c.Map.Outer
	case Reduce:
		return c.Reduce.Outer
	}
	return nil
}

// Describe is a one-line account of the kernel (its kind, sizes and each
// tier's register tile and blocking), as comments and the explain
// output print it; "" for GoLoops.
func (c Choice) Describe(tiers []asm.Config) string {
	switch c.Family {
	case Contraction:
		return c.Contraction.Spec.Describe(tiers...)
	case Map:
		return c.Map.Spec.Describe(tiers...)
	case Reduce:
		return c.Reduce.Spec.Describe(tiers...)
	}
	return ""
}

// families is the table of kernel families, in order of precedence:
// Choose takes the first that runs the nest.
var families = [...]struct {
	family Family
	try    func(tiers []asm.Config, p *loopir.Program, loops []*loopir.For, st *loopir.Store, q *Query) (Choice, bool)
}{
	{Contraction, contraction},
	{Map, pointwise},
	{Reduce, reduction},
}

// Choose answers which kernel runs the perfect nest loops (storing st)
// of p in code emitted with the given assembly tiers (best first; none:
// Go loops): the first family of the table that runs it, else GoLoops.
// The limits are the best tier's Kernels.
func Choose(tiers []asm.Config, p *loopir.Program, loops []*loopir.For, st *loopir.Store, q Query) Choice {
	if len(tiers) == 0 {
		return Choice{}
	}
	for _, f := range families {
		if c, ok := f.try(tiers, p, loops, st, &q); ok {
			return c
		}
	}
	return Choice{}
}

// Try is Choose for family f alone: whether a kernel of f runs the nest.
func Try(f Family, tiers []asm.Config, p *loopir.Program, loops []*loopir.For, st *loopir.Store, q Query) (Choice, bool) {
	if len(tiers) == 0 {
		return Choice{}, false
	}
	for _, g := range families {
		if g.family == f {
			return g.try(tiers, p, loops, st, &q)
		}
	}
	return Choice{}, false
}

// contraction: a sum of products of two arrays. A pre-fill with +0 is
// absorbed by a kernel that stores, when one fits; otherwise the branch
// fills first and the kernel adds.
func contraction(tiers []asm.Config, p *loopir.Program, loops []*loopir.For, st *loopir.Store, q *Query) (Choice, bool) {
	kn := tiers[0].Kernels
	if q.BF16Operands {
		kn.MinFlops, kn.MinDotK, kn.MinDotKVector, kn.MinBroadcastN, kn.MVecMinSteps = 0, 0, 0, 1, 0
	}
	c := Choice{Family: Contraction}
	if q.Init != nil && *q.Init == 0 && !math.Signbit(*q.Init) {
		c.Contraction = asm.ClassifyFree(kn, p, loops, st, q.Elem, true, q.Free)
		c.Overwrite = c.Contraction != nil
	}
	if c.Contraction == nil {
		c.Contraction = asm.ClassifyFree(kn, p, loops, st, q.Elem, false, q.Free)
		c.PreFill = c.Contraction != nil && q.Init != nil
	}
	if c.Contraction == nil && q.BF16Operands {
		// rt/bf16 packs any layout (both operands transposed included).
		if q.Init != nil && *q.Init == 0 && !math.Signbit(*q.Init) {
			c.Contraction = asm.ClassifyStrided(p, loops, st, true, q.Free)
			c.Overwrite = c.Contraction != nil
		}
		if c.Contraction == nil {
			c.Contraction = asm.ClassifyStrided(p, loops, st, false, q.Free)
			c.PreFill = c.Contraction != nil && q.Init != nil
		}
	}
	n := c.Contraction
	if n == nil || q.isConst(n.C) || q.isConst(n.A) || q.isConst(n.B) {
		return Choice{}, false
	}
	return c, true
}

// pointwise: a map of a contiguous run, its constant leaves folded. A
// nest absorbing a pre-fill is left to the Go loops; a new form (an
// inlined temporary, folded constants) runs in every tier, as a plain
// map does (asm.MapSpec.EmitsIn).
func pointwise(tiers []asm.Config, p *loopir.Program, loops []*loopir.For, st *loopir.Store, q *Query) (Choice, bool) {
	if q.Init != nil || q.isConst(st.Tensor) || q.BF16Operands {
		return Choice{}, false
	}
	folded := *st
	if q.Fold != nil {
		folded.Value = q.Fold(st.Value)
	}
	n := asm.ClassifyMapNew(tiers[0].Kernels, p, loops, &folded, q.Elem, q.Free, q.Inlined)
	if n == nil {
		return Choice{}, false
	}
	return Choice{Family: Map, Map: n}, true
}

// reduction: a reduction of a unit-stride axis or across rows, in each
// tier. A pre-fill is its initial value, unless a Go loop around the
// call reduces too.
func reduction(tiers []asm.Config, p *loopir.Program, loops []*loopir.For, st *loopir.Store, q *Query) (Choice, bool) {
	if q.BF16Operands {
		return Choice{}, false
	}
	n := asm.ClassifyReduceFree(tiers[0].Kernels, p, loops, st, q.Elem, q.Free)
	if n == nil || q.isConst(n.C) || q.Init != nil && n.OuterReduces {
		return Choice{}, false
	}
	for _, l := range n.Ins {
		if q.isConst(l.Tensor) {
			return Choice{}, false
		}
	}
	if q.Init != nil {
		n.Spec.Init, n.Spec.InitVal = true, *q.Init
	}
	return Choice{Family: Reduce, Reduce: n}, true
}

// FuseAcceptor is the loopir.FusePointwise acceptor of code with the
// assembly tiers: the fused nest must be a map kernel when either nest
// was one (a fused tree the kernels cannot run, such as one of more than
// 6 operands, would fall back to Go loops); a reader that accumulates
// fuses only when it is a kernel and stays the same kind of kernel, a
// reduction adding in the same order (a layer norm's squares fused into
// their row sum keep its bits).
func FuseAcceptor(tiers []asm.Config, p *loopir.Program, elem string) loopir.Acceptor {
	isMap := func(loops []*loopir.For, st *loopir.Store) bool {
		_, ok := Try(Map, tiers, p, loops, st, Query{Elem: elem, Inlined: true})
		return ok
	}
	reduce := func(loops []*loopir.For, st *loopir.Store) *asm.ReduceNest {
		c, _ := Try(Reduce, tiers, p, loops, st, Query{Elem: elem})
		return c.Reduce
	}
	return func(wl []*loopir.For, w *loopir.Store, rl []*loopir.For, r, fused *loopir.Store) bool {
		if r.Accumulate && r.Accum != ops.NoAccum {
			// A reader that accumulates: a map kernel (c += f) stays
			// one; a reduction kernel stays one that adds in the same
			// order (the same rows of the same length, the same Go
			// loops around it), so that the sum keeps its bits. A sum
			// of exps, which no reduction kernel runs, keeps the vector
			// exp of its map; Go loops stay as they are.
			if isMap(rl, r) {
				return isMap(rl, fused)
			}
			a, b := reduce(rl, r), reduce(rl, fused)
			return a != nil && b != nil && a.Spec.Kind == b.Spec.Kind && a.Spec.N == b.Spec.N &&
				a.Spec.Rows == b.Spec.Rows && len(a.Outer) == len(b.Outer) && a.OuterReduces == b.OuterReduces
		}
		return isMap(rl, fused) || !isMap(wl, w) && !isMap(rl, r)
	}
}
