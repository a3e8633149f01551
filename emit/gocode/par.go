package gocode

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/dave/jennifer/jen"
	"github.com/ocannlgen/ocannlgen/emit/schedule"
	"github.com/ocannlgen/ocannlgen/emit/target"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
)

// parTensors lists the tensors a nest touches (the stored one first).
func parTensors(st *loopir.Store) []int {
	ts := []int{st.Tensor}
	loopir.WalkLoads(st.Value, func(l *loopir.Load) {
		for _, t := range ts {
			if t == l.Tensor {
				return
			}
		}
		ts = append(ts, l.Tensor)
	})
	return ts
}

// heapLocal reports whether local t is a local array Go puts on the heap.
func (k *kgen) heapLocal(t int) bool {
	s := &k.ts[t].st
	return s.kind == sLocal && !s.scratch && s.size*k.elemSize() > k.tgt.Loops.MaxStackArray
}

// parSplit chooses the loop of a nest to split and its parts (nil: the
// nest stays serial); joined: the nest is below the size rule and splits
// only to join the chain being built (schedule.JoinSplit).
//
// pre says the nest may need code before its parts (a fill of its
// output): only for joining a chain.
func (k *kgen) parSplit(loops []*loopir.For, st *loopir.Store, pre bool) (split *loopir.For, parts int, joined bool) {
	if !k.par || len(loops) < 2 || k.inLoop > 0 {
		return nil, 0, false
	}
	for _, t := range parTensors(st) {
		if s := &k.ts[t].st; s.kind == sLocal && !s.scratch && !k.heapLocal(t) {
			return nil, 0, false
		}
	}
	pl := k.plan(loops, st)
	n0, worth := schedule.Worth(k.tiers(), k.tgt, k.p, loops, st, k.elem, k.k.PoolParam)
	if pl.Reads {
		return nil, 0, false
	}
	if !worth {
		var c *schedule.Chain
		if k.open != nil {
			c = &k.open.Chain
		}
		split, parts = schedule.JoinSplit(k.tgt.Parallel, c, k.p, loops, st, pl, n0, pre)
		return split, parts, split != nil
	}
	split, parts = schedule.SplitLoop(k.tgt.Parallel, loops, st, pl, n0, k.k.BF16 && k.elem == "float32")
	k.rechained = false
	if n0 == nil && k.open != nil {
		if l := schedule.RejoinSplit(k.tgt.Parallel, &k.open.Chain, k.p, loops, st, pl, split, parts, pre); l != nil {
			split, k.rechained = l, true
		}
	}
	return split, parts, false
}

// parChain emits a perfect nest as parts run by the pool, when parSplit
// says it pays; ok is false otherwise (nothing emitted). init is the
// pre-fill value the nest absorbs; fill, when set, is a pre-fill with
// zero only the assembly kernel absorbs (the Go loops need it first): a
// contraction kernel's, or a map kernel's that planAbsorbs chose.
func (k *kgen) parChain(loops []*loopir.For, st *loopir.Store, init *float64, fill *loopir.Fill) ([]jen.Code, bool, error) {
	split, parts, joined := k.parSplit(loops, st, fill != nil || init != nil)
	if split != nil && (parts < k.tgt.Parallel.MinOutputParts || schedule.Balance(parts) == 0) && fill == nil {
		// Few output parts (a convolution's kernel gradient split on kh:
		// 3 parts keep one of 2 threads idle a third of the nest), or an
		// odd number: fixed partial sums over the reduction, when the
		// output is small enough for them, share the work in 8 parts.
		if code, ok, err := k.parReduce(loops, st, init); ok || err != nil {
			return code, ok, err
		}
	}
	if split == nil {
		if fill == nil {
			return k.parReduce(loops, st, init)
		}
		return nil, false, nil
	}
	size := split.Extent / parts
	part := k.synthVar()
	loops2 := make([]*loopir.For, len(loops))
	for i, l := range loops {
		loops2[i] = &loopir.For{Var: l.Var, Extent: l.Extent}
		if l == split {
			loops2[i].Extent = size
		}
	}
	st2 := &loopir.Store{Tensor: st.Tensor, Index: schedule.SplitIndex(st.Index, split.Var, part, size),
		Value: schedule.SplitExpr(st.Value, split.Var, part, size), Accum: st.Accum, Accumulate: st.Accumulate}
	k.free, k.parPre, k.parPack, k.parPackOK, k.freeParts, k.parPreReads = map[int]bool{part: true}, nil, nil, true, parts, nil
	defer func() {
		k.free, k.parPre, k.parPack, k.parPackOK, k.partScratch, k.freeParts, k.parPreReads = nil, nil, nil, false, false, 0, nil
	}()
	ainit := init
	if fill != nil {
		zero := 0.0
		ainit = &zero
	}
	calls, note := k.asmNest(loops2, st2, ainit)
	if calls == nil && fill != nil && k.absorbAt[st] == fill {
		// A map kernel absorbing the zero fill (planAbsorbs): each part
		// stores its cells' values plus 0.
		if calls, note = k.asmMapNest(loops2, schedule.OverwriteStore(st2), nil); calls == nil {
			return nil, false, nil
		}
		note = "// the zero fill absorbed: " + note[3:]
	}
	if calls == nil && fill == nil {
		calls, note = k.asmMapNest(loops2, st2, init)
	}
	if calls == nil && fill == nil {
		calls, note = k.asmReduceNest(loops2, st2, init)
	}
	if calls == nil && (k.wholeKernel(schedule.Contraction, loops, st) || fill == nil && init == nil && k.wholeKernel(schedule.Map, loops, st) || fill == nil && k.wholeKernel(schedule.Reduce, loops, st)) {
		// The parts would lose the assembly kernel the whole nest has
		// (too small once split): keep the nest serial.
		return nil, false, nil
	}
	goCode, err := k.chainGo(loops2, st2, init)
	if err != nil {
		return nil, false, err
	}
	body := goCode
	if calls != nil {
		body = k.dispatch(calls, note, goCode)
	}
	// What runs before the parts: the Go loops' fill (when an assembly
	// kernel absorbs it, only in the Go branch), the assembly kernels'
	// pre-fill (only in their branches).
	var before []jen.Code
	if fill != nil {
		fc := k.fill(fill)
		if calls != nil {
			fc = []jen.Code{jen.If(jen.Op("!").Parens(k.tierFlags())).Block(fc...)}
		}
		before = append(before, fc...)
	}
	if len(k.parPre) > 0 {
		before = append(before, jen.If(k.tierFlags()).Block(k.parPre...))
	}
	// The bf16 contractions' packed weights, in every tier (rt/bf16
	// dispatches itself).
	before = append(before, k.parPack...)
	// The nest may chain (seq.go); what runs before its parts writes only
	// the stored tensor, and moves before the chain's job with it.
	u := k.rowAccess(st, split, parts)
	u.Joined, u.Rechained = joined, k.rechained
	if len(before) > 0 {
		u.pre, u.PreWrites = before, []int{st.Tensor}
		if fill != nil && fill.Tensor != st.Tensor {
			u.PreWrites = append(u.PreWrites, fill.Tensor)
		}
		u.PreWrites = append(u.PreWrites, k.parPreReads...)
	}
	k.nextUnit = u
	return append(before, k.parRun(parTensors(st), split, parts, part, body, nil)...), true, nil
}

// tierFlags is `flag512 || flag2`.
func (k *kgen) tierFlags() *jen.Statement {
	s := jen.Null()
	for i, t := range k.asm.Tiers() {
		if i > 0 {
			s.Op("||")
		}
		s.Id(t.Flag())
	}
	return s
}

// parRun declares the task record of a parallel nest (a struct of the
// storage ts the part reads and writes, and its Part method running body)
// and returns the statements that fill a record and run its parts.
func (k *kgen) parRun(ts []int, split *loopir.For, parts, part int, body []jen.Code, red *parRed) []jen.Code {
	what := k.loopName(split.Var)
	return k.parRunDoc(ts, fmt.Sprintf("for each %d values of %s", split.Extent/parts, what), what, parts, part, body, red)
}

// parRunDoc is parRun with the record's documentation: each says which
// share of the work a part does, what what the parts split.
func (k *kgen) parRunDoc(ts []int, each, what string, parts, part int, body []jen.Code, red *parRed) []jen.Code {
	idx := len(k.parDecls) / 3
	typ := k.k.Name + "Part" + strconv.Itoa(idx)
	recs := typ + "Records"
	recv := k.names.fresh("r")
	var fields, bind, vals []jen.Code
	var set []string
	var addr []bool // the field takes the address of a local array
	scratch := false
	for _, t := range ts {
		s := &k.ts[t].st
		switch {
		case s.kind == sConst:
		case s.scratch:
			scratch = true
		default:
			fields = append(fields, jen.Id(s.name).Op("*").Add(arrayOf(s.adims, k.elemOf(t))))
			set = append(set, s.name)
			addr = append(addr, s.kind == sLocal)
		}
	}
	if scratch || k.partScratch {
		fields = append(fields, jen.Id(k.scratch).Op("*").Id(k.k.Scratch))
		set = append(set, k.scratch)
		addr = append(addr, false)
	}
	for _, n := range set {
		bind = append(bind, jen.Id(n))
		vals = append(vals, jen.Id(recv).Dot(n))
	}
	var clear []jen.Code
	if red != nil {
		// The partial sums: a value array in the record, each part
		// clearing its own row first.
		fields = append(fields, jen.Id(red.name).Add(k.arrayType(red.dims)))
		bind = append(bind, jen.Id(red.name))
		vals = append(vals, jen.Op("&").Id(recv).Dot(red.name))
		clear = append(clear, jen.Id(red.name).Index(jen.Id(k.loopName(part))).Op("=").Add(k.arrayType(red.dims[1:])).Values())
	}
	pname := k.loopName(part)
	method := append(append([]jen.Code{jen.List(bind...).Op(":=").List(vals...)}, clear...), body...)
	k.parDecls = append(k.parDecls,
		jen.Comment(fmt.Sprintf("// %s is the task record of a loop nest of %s that runs in %d parts, one\n"+
			"// %s (see rt.Pool).", typ, k.k.Name, parts, each)).Line().
			Type().Id(typ).Struct(fields...),
		jen.Comment(fmt.Sprintf("// Part runs part %s of the nest (0 <= %s < %d).", pname, pname, parts)).Line().
			Func().Params(jen.Id(recv).Op("*").Id(typ)).Id("Part").Params(jen.Id(pname).Int()).Block(method...),
		jen.Comment(fmt.Sprintf("// %s holds the free %s records.", recs, typ)).Line().
			Var().Id(recs).Qual(rtPath, "Records").Types(jen.Id(typ)),
	)
	rec := k.names.fresh("rec")
	out := []jen.Code{
		jen.Comment(fmt.Sprintf("// %d parts of %s on the pool.", parts, what)),
		jen.Id(rec).Op(":=").Id(recs).Dot("Get").Call(),
	}
	for i, n := range set {
		v := jen.Id(n)
		if addr[i] {
			v = jen.Op("&").Id(n)
		}
		out = append(out, jen.Id(rec).Dot(n).Op("=").Add(v))
	}
	if k.region == "" {
		k.region = k.names.fresh("region")
	}
	if k.k.PoolParam && k.pool == "" {
		k.pool = k.names.fresh("pool")
	}
	unit := k.nextUnit // the nest's access summary, for chaining (seq.go)
	k.nextUnit = nil
	if unit != nil {
		unit.rec, unit.run = rec, len(out)
		unit.Op, unit.Stmt = k.curOp, k.curStmt
		k.opUnits = append(k.opUnits, unit)
		k.units = append(k.units, unit.Unit)
	}
	out = append(out, jen.Id(k.region).Dot("Run").Call(jen.Id(rec), jen.Lit(parts)))
	if red != nil {
		out = append(out, red.combine(rec)...)
	}
	if red == nil {
		out = append(out, jen.Op("*").Id(rec).Op("=").Id(typ).Values())
	} else {
		// Only the pointers are dropped: clearing the partial sums (each
		// part clears its own row first) would be a serial memory clear
		// per call (the batch-256 CNN head's weight gradient: 51 KB).
		for _, n := range set {
			out = append(out, jen.Id(rec).Dot(n).Op("=").Nil())
		}
	}
	out = append(out, jen.Id(recs).Dot("Put").Call(jen.Id(rec)))
	if unit != nil {
		unit.code = out
	}
	return out
}

// enterRegion is the kernel's entry into its pool's region (nothing when
// it has no parallel nest): the workers are woken once per call and stay
// awake between its nests (rt.Region), and the deferred Leave gives them
// back however the function returns.
func (k *kgen) enterRegion() []jen.Code {
	if k.region == "" {
		return nil
	}
	pool := jen.Qual(rtPath, "DefaultPool").Call()
	if k.pool != "" {
		pool = jen.Id(k.pool)
	}
	return []jen.Code{
		jen.Comment("// The parallel nests below run in one region of the pool (see rt.Region)."),
		jen.Id(k.region).Op(":=").Add(pool).Dot("Enter").Call(),
		jen.Defer().Id(k.region).Dot("Leave").Call(),
	}
}

// parLocals marks the tensors of the perfect nests that may run in
// parallel (at least Parallel.MinGoIters iterations) when the kernel has a
// scratch to hold them; in a model's kernel (one region per call) with
// such a nest, also those of the smaller nests that might join a chain
// of parallel nests (schedule.Chainable, JoinSplit).
func (k *kgen) parLocals() {
	k.parLocal = map[int]bool{}
	if !k.par || k.k.Scratch == "" {
		return
	}
	var small [][]int // the tensors of the chainable nests
	var walk func(s loopir.Stmt)
	walk = func(s loopir.Stmt) {
		f, ok := s.(*loopir.For)
		if !ok {
			return
		}
		loops, st, ok := loopir.PerfectNest(f)
		if !ok {
			if shared, _, ok := k.parPlainPlan(f, true); ok {
				for _, t := range shared {
					k.parLocal[t] = true
				}
			}
			return
		}
		if _, worth := schedule.Worth(k.tiers(), k.tgt, k.p, loops, st, k.elem, k.k.PoolParam); worth && len(loops) >= 2 && !loopir.Reads(st.Value, st.Tensor) {
			for _, t := range parTensors(st) {
				k.parLocal[t] = true
			}
		} else if k.k.PoolParam && schedule.Chainable(k.tgt.Parallel, loops, st) {
			small = append(small, parTensors(st))
		}
	}
	for _, o := range k.p.Ops {
		for _, s := range o.Body {
			walk(s)
		}
	}
	if len(k.parLocal) == 0 {
		return
	}
	for _, ts := range small {
		for _, t := range ts {
			k.parLocal[t] = true
		}
	}
}

// parRed describes the partial sums of a reduction split between parts:
// the synthetic tensor t (held as field name of the record, dims [parts]
// followed by the output's) and the code combining them after the parts
// (given the record's name).
type parRed struct {
	t       int
	name    string
	dims    []int
	combine func(rec string) []jen.Code
}

// parReduce emits a nest whose only non-reduction loops cannot be split
// (a bias gradient: a small output summed over the batch) as parts of
// its outermost splittable reduction loop: part p adds its slice of the
// loop, in the serial order, into its own row of partial sums, and the
// kernel then adds the rows to each cell in part order. The parts and
// their order are fixed by the generator, so the bits do not depend on
// the number of threads (they differ from the serial nest's, which adds
// in one sequence). Only additive reductions covering every cell of an
// unpadded output of at most Parallel.MaxPartialCells cells.
func (k *kgen) parReduce(loops []*loopir.For, st *loopir.Store, init *float64) ([]jen.Code, bool, error) {
	if !k.par || len(loops) < 2 || k.inLoop > 0 || !st.Accumulate || st.Accum != ops.AccAdd {
		return nil, false, nil
	}
	pl := k.plan(loops, st)
	if _, worth := schedule.Worth(k.tiers(), k.tgt, k.p, loops, st, k.elem, k.k.PoolParam); !worth || pl.Reads || !pl.Bijective {
		return nil, false, nil
	}
	out := &k.p.Tensors[st.Tensor]
	if out.Size() > k.tgt.Parallel.MaxPartialCells || k.ts[st.Tensor].st.kind == sConst {
		return nil, false, nil
	}
	for _, t := range parTensors(st) {
		if s := &k.ts[t].st; s.kind == sLocal && !s.scratch && !k.heapLocal(t) {
			return nil, false, nil
		}
	}
	split, parts := schedule.PartialSplit(k.tgt.Parallel, loops, pl)
	if split == nil {
		return nil, false, nil
	}
	size := split.Extent / parts
	part := k.synthVar()
	loops2 := make([]*loopir.For, len(loops))
	for i, l := range loops {
		loops2[i] = &loopir.For{Var: l.Var, Extent: l.Extent}
		if l == split {
			loops2[i].Extent = size
		}
	}
	// The partial sums, a synthetic tensor for the time of the nest.
	dims := append([]int{parts}, out.BufDims...)
	nt := len(k.p.Tensors)
	k.p.Tensors = append(k.p.Tensors, loopir.TensorInfo{Name: out.Name + ".partial", Kind: out.Kind, Dims: dims, BufDims: dims})
	groups, gstride, _ := regroup(dims, dims)
	red := &parRed{t: nt, name: k.names.fresh(k.nameBase(st.Tensor) + "Partial"), dims: dims}
	k.ts = append(k.ts, ktensor{st: tstore{kind: sPtr, name: red.name, adims: dims, groups: groups, gstride: gstride, size: prod(dims), deref: true, used: true}})
	st2 := &loopir.Store{Tensor: nt, Index: append([]loopir.IndexExpr{{Terms: []loopir.IndexTerm{{Coeff: 1, Var: part}}}}, st.Index...),
		Value: schedule.SplitExpr(st.Value, split.Var, part, size), Accum: st.Accum, Accumulate: true}
	k.free, k.parPre = map[int]bool{part: true}, nil
	calls, note := k.asmNest(loops2, st2, nil)
	if calls == nil {
		calls, note = k.asmReduceNest(loops2, st2, nil)
	}
	goCode, err := k.chainGo(loops2, st2, nil)
	k.free, k.parPre = nil, nil
	k.p.Tensors, k.ts = k.p.Tensors[:nt], k.ts[:nt]
	if err != nil {
		return nil, false, err
	}
	if calls == nil && (k.wholeKernel(schedule.Contraction, loops, st) || k.wholeKernel(schedule.Reduce, loops, st)) {
		return nil, false, nil // the parts would lose the whole nest's assembly kernel
	}
	body := goCode
	if calls != nil {
		body = k.dispatch(calls, note, goCode)
	}
	red.combine = func(rec string) []jen.Code {
		vars := make([]int, len(out.BufDims))
		idx := make([]loopir.IndexExpr, len(vars))
		for a := range vars {
			vars[a] = k.synthVar()
			idx[a] = loopir.IndexExpr{Terms: []loopir.IndexTerm{{Coeff: 1, Var: vars[a]}}}
		}
		acc := k.names.fresh("acc")
		var first jen.Code = k.directAccess(st.Tensor, idx)
		if init != nil {
			first = k.typed(k.constVal(*init))
		}
		inner := []jen.Code{jen.Id(acc).Op(":=").Add(first)}
		for p := range parts {
			cell := jen.Id(rec).Dot(red.name).Index(jen.Lit(p))
			for _, v := range vars {
				cell.Index(jen.Id(k.loopName(v)))
			}
			inner = append(inner, jen.Id(acc).Op("+=").Add(cell))
		}
		inner = append(inner, jen.Add(k.directAccess(st.Tensor, idx)).Op("=").Id(acc))
		code := inner
		for a := len(vars) - 1; a >= 0; a-- {
			code = []jen.Code{k.forStmt(vars[a], 0, out.BufDims[a], 1, true, code)}
		}
		return append([]jen.Code{jen.Comment(fmt.Sprintf("// The %d partial sums, added in part order.", parts))}, code...)
	}
	// The parts write their partial sums only, not the stored tensor.
	k.nextUnit = k.rowAccess(st, split, parts)
	return k.parRun(parTensors(st)[1:], split, parts, part, body, red), true, nil
}

// Parallel plain nests (parPlain). A loop nest that is not perfect (its
// body holds several stores, or loops one after another) runs in parts
// of its outermost loop L when every iteration of L writes only its own
// cells and reads only the cells it wrote: every tensor the nest writes
// either has an axis indexed by exactly the same c*L+offset in every
// store and load of the nest (a partitioned tensor), or is a stack
// temporary of this nest alone, written before it is read in the same
// loop body at the same cell (a private temporary: each part declares
// its own). The parts run L's values in order and everything inside as
// the serial nest does, so each cell gets the same updates in the same
// order: the same bits as the serial nest, on any number of threads.
// The size rule is the Go loops' (Parallel.MinGoIters iterations of the
// stores, summed).

// plainAccess is one store or load of a tensor in a plain nest: its
// index, the loop body holding it (its statement list) and its position
// there, and whether it is a store (overwriting unless accum).
type plainAccess struct {
	idx   []loopir.IndexExpr
	body  *[]loopir.Stmt
	pos   int
	store bool
	accum bool
}

// plainNest is what parPlainPlan learns about a plain nest.
type plainNest struct {
	access  map[int][]plainAccess // by tensor
	written map[int]bool
	iters   int             // innermost iterations of the stores, summed
	pt      target.Parallel // counts goCost
}

// scanPlain records the accesses of the loop tree f (mult: iterations of
// the loops around it); ok is false for a statement other than a loop
// or a store.
func (pn *plainNest) scan(f *loopir.For, mult int) bool {
	mult *= f.Extent
	for i, s := range f.Body {
		switch s := s.(type) {
		case *loopir.For:
			if !pn.scan(s, mult) {
				return false
			}
		case *loopir.Store:
			pn.iters += mult * schedule.GoCost(pn.pt, s.Value)
			loopir.WalkLoads(s.Value, func(l *loopir.Load) {
				pn.access[l.Tensor] = append(pn.access[l.Tensor], plainAccess{idx: l.Index, body: &f.Body, pos: i})
			})
			pn.access[s.Tensor] = append(pn.access[s.Tensor], plainAccess{idx: s.Index, body: &f.Body, pos: i, store: true, accum: s.Accumulate})
			pn.written[s.Tensor] = true
		default:
			return false
		}
	}
	return true
}

// sameIndex reports whether a and b are equal but for terms of
// coefficient 0.
func sameIndex(a, b loopir.IndexExpr) bool {
	a, b = a.Nonzero(), b.Nonzero()
	return a.Offset == b.Offset && slices.Equal(a.Terms, b.Terms)
}

// partitioned reports whether some axis of every access is the same
// c*v + offset (c != 0): iteration v of the loop touches only its cells.
func partitioned(acc []plainAccess, v int) bool {
	idxs := make([][]loopir.IndexExpr, len(acc))
	for i, ac := range acc {
		idxs[i] = ac.idx
	}
	return loopir.OwnsAxis(v, idxs...)
}

// private reports whether every access is in one loop body at one cell
// and the first is an overwriting store not reading the tensor: each
// iteration writes the cell before it reads it.
func private(acc []plainAccess) bool {
	first := acc[0]
	for _, ac := range acc {
		if ac.body != first.body || len(ac.idx) != len(first.idx) {
			return false
		}
		for a := range ac.idx {
			if !sameIndex(ac.idx[a], first.idx[a]) {
				return false
			}
		}
		if ac.pos < first.pos {
			first = ac
		}
	}
	for _, ac := range acc {
		if ac.pos == first.pos && (!ac.store || ac.accum) {
			return false
		}
	}
	return true
}

// progRefs counts the stores and loads of tensor t in the program.
func (k *kgen) progRefs(t int) int {
	n := 0
	for _, o := range k.p.Ops {
		loopir.WalkStmts(o.Body, func(s loopir.Stmt) {
			switch s := s.(type) {
			case *loopir.Store:
				if s.Tensor == t {
					n++
				}
				loopir.WalkLoads(s.Value, func(l *loopir.Load) {
					if l.Tensor == t {
						n++
					}
				})
			case *loopir.Fill:
				if s.Tensor == t {
					n++
				}
			case *loopir.ResetPadding:
				if s.Tensor == t {
					n++
				}
			case *loopir.FetchStmt:
				if s.Tensor == t {
					n++
				}
			}
		})
	}
	return n
}

// parPlainPlan decides whether plain nest f runs in parts of its
// outermost loop: the tensors the records carry (shared) and the
// private temporaries each part declares; ok is false when it stays
// serial. local: stack locals are accepted as shared (parLocals asks
// which tensors to move to the scratch).
func (k *kgen) parPlainPlan(f *loopir.For, local bool) (shared, priv []int, ok bool) {
	if !k.par || k.inLoop > 0 || schedule.Parts(k.tgt.Parallel, f.Extent) == 0 {
		return nil, nil, false
	}
	pn := &plainNest{access: map[int][]plainAccess{}, written: map[int]bool{}, pt: k.tgt.Parallel}
	if !pn.scan(f, 1) || pn.iters < schedule.MinGoIters(k.tgt.Parallel, k.k.PoolParam) {
		return nil, nil, false
	}
	ts := make([]int, 0, len(pn.access))
	for t := range pn.access {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	for _, t := range ts {
		s := &k.ts[t].st
		acc := pn.access[t]
		if pn.written[t] && !partitioned(acc, f.Var) {
			// Before the storage is decided (local), only the structure.
			if !private(acc) || k.progRefs(t) != len(acc) || k.isParam(t) ||
				!local && (s.kind != sLocal || s.scratch || s.param != nil || k.pin[t] != nil) {
				return nil, nil, false
			}
			priv = append(priv, t)
			continue
		}
		if !local && (pn.written[t] && s.kind == sConst || s.kind == sLocal && !s.scratch && !k.heapLocal(t)) {
			return nil, nil, false
		}
		shared = append(shared, t)
	}
	return shared, priv, true
}

// isParam reports whether tensor t is bound to a parameter.
func (k *kgen) isParam(t int) bool {
	for i := range k.k.Params {
		if k.k.Params[i].Tensor == t {
			return true
		}
	}
	return false
}

// splitStmt rewrites loop variable v as (size)*part + v in a loop tree.
func splitStmt(s loopir.Stmt, v, part, size int) loopir.Stmt {
	switch s := s.(type) {
	case *loopir.For:
		body := make([]loopir.Stmt, len(s.Body))
		for i, b := range s.Body {
			body[i] = splitStmt(b, v, part, size)
		}
		return &loopir.For{Var: s.Var, Extent: s.Extent, Body: body}
	case *loopir.Store:
		return &loopir.Store{Tensor: s.Tensor, Index: schedule.SplitIndex(s.Index, v, part, size),
			Value: schedule.SplitExpr(s.Value, v, part, size), Accum: s.Accum, Accumulate: s.Accumulate}
	}
	return s
}

// parPlain emits plain nest f as parts of its outermost loop run by the
// pool, when parPlainPlan allows it; ok is false otherwise (nothing
// emitted).
func (k *kgen) parPlain(f *loopir.For) ([]jen.Code, bool, error) {
	shared, priv, ok := k.parPlainPlan(f, false)
	if !ok {
		return nil, false, nil
	}
	parts := schedule.Parts(k.tgt.Parallel, f.Extent)
	size := f.Extent / parts
	part := k.synthVar()
	f2 := splitStmt(f, f.Var, part, size).(*loopir.For)
	f2.Extent = size
	k.free, k.parPre = map[int]bool{part: true}, nil
	code, err := k.plainFor(f2)
	pre := k.parPre
	k.free, k.parPre = nil, nil
	if err != nil {
		return nil, false, err
	}
	if len(pre) > 0 {
		return nil, false, k.fail("parallel plain nest: unexpected assembly pre-fill")
	}
	var body []jen.Code
	for _, t := range priv {
		s := &k.ts[t].st
		s.partLocal = true
		body = append(body, jen.Var().Id(s.name).Add(k.storageType(t)))
	}
	return k.parRun(shared, f, parts, part, append(body, code...), nil), true, nil
}

// parFillable reports whether fill s may run in parts: a fill (with +0
// a memory clear; otherwise loops, as the max pool's -inf) of at least
// Parallel.MinPartFill cells of a shared array (a parameter, a scratch
// field or a heap local) whose first dim splits into FillParts, that the kernel
// must emit (not a fresh local).
func (k *kgen) parFillable(s *loopir.Fill) bool {
	if !k.par || k.inLoop > 0 {
		return false
	}
	kt := &k.ts[s.Tensor]
	st := &kt.st
	zero := s.Value == 0 && !math.Signbit(s.Value)
	if st.kind == sConst || kt.fresh && zero || len(st.adims) == 0 || st.adims[0]%k.tgt.Parallel.FillParts != 0 || st.size < k.tgt.Parallel.MinPartFill {
		return false
	}
	return st.kind != sLocal || st.scratch || k.heapLocal(s.Tensor)
}

// rowsFill sets rows [lo, hi) of the first dim of t's array, every
// cell, to v: loops set the first row, then copies double the filled
// rows (memmove runs several times faster than a Go loop per cell).
func (k *kgen) rowsFill(t int, lo, hi *jen.Statement, v float64) jen.Code {
	dims := k.ts[t].st.adims
	rows, n := k.names.fresh("rows"), k.names.fresh("n")
	cell := jen.Id(rows).Index(jen.Lit(0))
	names := make([]string, len(dims)-1)
	for a := range names {
		names[a] = k.names.fresh("f")
		cell = cell.Index(jen.Id(names[a]))
	}
	var code jen.Code = cell.Op("=").Add(k.typed(k.constVal(v)))
	for a := len(names) - 1; a >= 0; a-- {
		code = jen.For(jen.Id(names[a]).Op(":=").Range().Lit(dims[a+1])).Block(code)
	}
	return jen.Block(
		jen.Id(rows).Op(":=").Add(k.ref(t)).Index(lo, hi),
		code,
		jen.For(jen.Id(n).Op(":=").Lit(1), jen.Id(n).Op("<").Len(jen.Id(rows)), jen.Id(n).Op("*=").Lit(2)).Block(
			jen.Copy(jen.Id(rows).Index(jen.Id(n), jen.Empty()), jen.Id(rows).Index(jen.Empty(), jen.Id(n))),
		),
	)
}

// parFills emits fills (each parFillable) as Parallel.FillParts parts on
// the pool when they fill at least MinFillCells cells: part p fills
// rows [p*d/FillParts, (p+1)*d/FillParts) of each array's first dim d.
// ok is false when they stay serial (nothing emitted). The cells get
// the same values whatever thread fills them.
func (k *kgen) parFills(fills []*loopir.Fill) ([]jen.Code, bool) {
	cells := 0
	for _, f := range fills {
		cells += k.ts[f.Tensor].st.size
	}
	if cells < k.tgt.Parallel.MinFillCells {
		return nil, false
	}
	part := k.synthVar()
	j := jen.Id(k.loopName(part))
	var body []jen.Code
	var ts []int
	for _, f := range fills {
		t := f.Tensor
		rows := k.ts[t].st.adims[0] / k.tgt.Parallel.FillParts
		lo, hi := jen.Lit(rows).Op("*").Add(j), jen.Lit(rows).Op("*").Add(j).Op("+").Lit(rows)
		if f.Value == 0 && !math.Signbit(f.Value) {
			body = append(body, jen.Id("clear").Call(k.ref(t).Index(lo, hi)))
		} else {
			body = append(body, k.rowsFill(t, lo, hi, f.Value))
		}
		k.ts[t].fresh = false
		k.ts[t].marginKnown, k.ts[t].marginVal = true, f.Value
		if !slices.Contains(ts, t) {
			ts = append(ts, t)
		}
	}
	return k.parRunDoc(ts, fmt.Sprintf("filling 1/%d of the first dim of %d arrays", k.tgt.Parallel.FillParts, len(ts)), "the filled arrays", k.tgt.Parallel.FillParts, part, body, nil), true
}

// parReset emits the margin reset of a padded tensor whose first axis is
// not padded (a batch of images padded for a convolution) as parts of
// that axis run by the pool, part p resetting the margins of its rows,
// in a model's kernel (one region per call) when the margins hold at
// least Parallel.MinResetCells cells; ok is false otherwise (nothing emitted).
// Its parts write only their rows, so it chains with the nests around
// it that split the batch the same way (seq.go): the batch-256 CNN step
// reset 300 KB of margins three times per step serially. The cells and
// values written are those of the serial reset.
func (k *kgen) parReset(s *loopir.ResetPadding) ([]jen.Code, bool) {
	t := s.Tensor
	ti := &k.p.Tensors[t]
	st := &k.ts[t].st
	if !k.par || !k.k.PoolParam || k.inLoop > 0 || !ti.Padded() || st.kind == sConst || len(ti.BufDims) < 2 ||
		ti.Padding[0].Left != 0 || ti.Padding[0].Right != 0 || st.kind == sLocal && !st.scratch && !k.heapLocal(t) {
		return nil, false
	}
	if k.marginsHold(s) {
		return nil, false // resetPadding emits nothing
	}
	inner := 1
	for a := range ti.Dims {
		inner *= ti.Dims[a]
	}
	e := ti.BufDims[0]
	parts := schedule.Parts(k.tgt.Parallel, e)
	if parts == 0 || schedule.Balance(parts) == 0 || prod(ti.BufDims)-inner < k.tgt.Parallel.MinResetCells {
		return nil, false
	}
	size := e / parts
	part := k.synthVar()
	k.free = map[int]bool{part: true}
	k.fillOff0 = []loopir.IndexTerm{{Coeff: size, Var: part}}
	var body []jen.Code
	for _, b := range marginBoxes(ti)[2:] { // axis 0 has no margin
		b[0][0], b[1][0] = 0, size // the part's rows (at offset fillOff0)
		body = append(body, k.regionFill(t, b[0], b[1], s.Value)...)
	}
	k.free, k.fillOff0 = nil, nil
	k.ts[t].fresh = false
	k.ts[t].marginKnown, k.ts[t].marginVal = true, s.Value
	k.nextUnit = &parUnit{Unit: &schedule.Unit{Parts: parts, Extent: e, Rows: map[int]bool{t: true}, Writes: map[int]bool{t: true}, Var: -1}}
	what := "the rows of " + st.name
	return k.parRunDoc([]int{t}, fmt.Sprintf("for each %d rows of %s, their margins", size, ti.Name), what, parts, part, body, nil), true
}
