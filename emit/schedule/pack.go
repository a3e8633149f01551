package schedule

import (
	"fmt"
	"strings"

	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/emit/target"
	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/loopir"
)

// Packing. A contraction whose operands are laid out so that no
// assembly kernel runs it (both operands transposed, `j,i; k,j => i,k`:
// the reduction axis is contiguous in neither the broadcast nor the dot
// form) would run in Go loops, a hundred times slower than the kernels.
// Pack copies one operand into a fresh local with its axes permuted so
// that the nest's reduction axis comes last (contiguous), in an
// operation of its own just before the contraction's, and rewrites the
// contraction to read the copy: the copy costs one pass over the
// operand, the contraction then runs in a kernel. The copy holds the
// same values, so the results are those of the unpacked nest run by
// that kernel.

// Packed is the result of Pack.
type Packed struct {
	// Program is the program with the packing operations (nil: nothing
	// was packed, use the original).
	Program *loopir.Program
	// Stores maps each rewritten contraction's new store to its original
	// (what the caller keyed by store, the inlined flags, carries over).
	Stores map[*loopir.Store]*loopir.Store
}

// Pack packs an operand of every contraction of p (Query q gives the
// element type, constants and folding) of at least minMACs multiply-adds
// that no kernel of tiers runs as written, when one runs it with that
// operand packed: a 2-or-more-axis unpadded, non-constant tensor indexed
// by plain loop variables, one of them the reduction loop. The copy runs
// the reduction axis in strips of strip values (see operations).
func Pack(tiers []asm.Config, p *loopir.Program, q Query, minMACs, strip int) Packed {
	if len(tiers) == 0 {
		return Packed{}
	}
	var out *loopir.Program
	stores := map[*loopir.Store]*loopir.Store{}
	for i, o := range p.Ops {
		pk := packOp(tiers, p, o, q, minMACs)
		if pk == nil {
			if out != nil {
				out.Ops = append(out.Ops, o)
			}
			continue
		}
		if out == nil {
			cp := *p
			cp.Tensors = append([]loopir.TensorInfo(nil), p.Tensors...)
			cp.Ops = append([]*loopir.Operation(nil), p.Ops[:i]...)
			out = &cp
		}
		pk.tensor = len(out.Tensors)
		out.Tensors = append(out.Tensors, pk.info)
		pk.rewrite(pk.st)
		packOp, op := pk.operations(o, strip)
		out.Ops = append(out.Ops, packOp, op)
		stores[pk.st2] = pk.st
	}
	return Packed{Program: out, Stores: stores}
}

// pack is one operand to pack: the load's tensor t, its packed layout
// (perm[a] is the operand's axis that packed axis a holds) and the
// contraction's store before (st) and after (st2) the rewrite.
type pack struct {
	t, tensor int
	perm      []int
	info      loopir.TensorInfo
	loop      *loopir.For
	st, st2   *loopir.Store
	idx       []loopir.IndexExpr // the operand's index in the nest
}

// packOp finds the operand of o's contraction to pack (nil: none).
func packOp(tiers []asm.Config, p *loopir.Program, o *loopir.Operation, q Query, minMACs int) *pack {
	var nest *loopir.For
	for _, s := range o.Body {
		switch s := s.(type) {
		case *loopir.For:
			if nest != nil {
				return nil
			}
			nest = s
		case *loopir.Fill, *loopir.ResetPadding:
		default:
			return nil
		}
	}
	if nest == nil {
		return nil
	}
	loops, st, ok := loopir.PerfectNest(nest)
	if !ok || !st.Accumulate {
		return nil
	}
	macs := 1
	for _, l := range loops {
		macs *= l.Extent
	}
	if macs < minMACs || Choose(tiers, p, loops, st, q).Family != GoLoops {
		return nil
	}
	red := map[int]bool{}
	for _, l := range loops {
		red[l.Var] = true
	}
	for _, x := range st.Index {
		for _, tm := range x.Terms {
			delete(red, tm.Var)
		}
	}
	var loads []*loopir.Load
	loopir.WalkLoads(st.Value, func(l *loopir.Load) { loads = append(loads, l) })
	for _, l := range loads {
		pk := packable(p, l, red, q)
		if pk == nil {
			continue
		}
		pk.loop, pk.st = nest, st
		// The rewritten nest reads the packed copy (a tensor appended
		// after p's: its index is len(p.Tensors) in the trial program).
		trial := *p
		trial.Tensors = append(p.Tensors[:len(p.Tensors):len(p.Tensors)], pk.info)
		pk.tensor = len(p.Tensors)
		st2 := pk.rewrite(st) // Pack redoes it with the tensor's final index
		if _, ok := Try(Contraction, tiers, &trial, loops, st2, q); ok {
			return pk
		}
	}
	return nil
}

// packable returns the packing of load l's operand that puts its
// reduction axis last (nil when the operand cannot be packed or its
// reduction axis is last already).
func packable(p *loopir.Program, l *loopir.Load, red map[int]bool, q Query) *pack {
	ti := &p.Tensors[l.Tensor]
	if len(l.Index) < 2 || ti.Padded() || q.isConst(l.Tensor) || len(ti.BufDims) != len(l.Index) {
		return nil
	}
	seen := map[int]bool{}
	r := -1
	for a, x := range l.Index {
		if x.Offset != 0 || len(x.Terms) != 1 || x.Terms[0].Coeff != 1 || seen[x.Terms[0].Var] {
			return nil
		}
		v := x.Terms[0].Var
		seen[v] = true
		if red[v] {
			if r >= 0 {
				return nil // two reduction axes: a kernel takes one
			}
			r = a
		}
	}
	if r < 0 || r == len(l.Index)-1 {
		return nil
	}
	pk := &pack{t: l.Tensor, idx: l.Index}
	for a := range l.Index {
		if a != r {
			pk.perm = append(pk.perm, a)
		}
	}
	pk.perm = append(pk.perm, r)
	dims := make([]int, len(pk.perm))
	for a, from := range pk.perm {
		dims[a] = ti.BufDims[from]
	}
	pk.info = loopir.TensorInfo{Name: ti.Name + ".packed", Kind: inference.Result, Dims: dims, BufDims: dims}
	return pk
}

// rewrite is st reading the packed copy where it read the operand.
func (pk *pack) rewrite(st *loopir.Store) *loopir.Store {
	idx := make([]loopir.IndexExpr, len(pk.perm))
	for a, from := range pk.perm {
		idx[a] = pk.idx[from]
	}
	var rw func(e loopir.Expr) loopir.Expr
	rw = func(e loopir.Expr) loopir.Expr {
		switch e := e.(type) {
		case *loopir.Load:
			if e.Tensor == pk.t && sameIndices(e.Index, pk.idx) {
				return &loopir.Load{Tensor: pk.tensor, Index: idx}
			}
		case *loopir.Apply:
			args := make([]loopir.Expr, len(e.Args))
			for i, a := range e.Args {
				args[i] = rw(a)
			}
			return &loopir.Apply{Prim: e.Prim, Args: args}
		}
		return e
	}
	st2 := *st
	st2.Value = rw(st.Value)
	pk.st2 = &st2
	return &st2
}

// sameIndices reports whether two indices are equal.
func sameIndices(a, b []loopir.IndexExpr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Offset != b[i].Offset || len(a[i].Terms) != len(b[i].Terms) {
			return false
		}
		for j := range a[i].Terms {
			if a[i].Terms[j] != b[i].Terms[j] {
				return false
			}
		}
	}
	return true
}

// operations are the packing operation and o rewritten to read the copy.
// The copy's loops run over the packed axes in order, each the variable
// that indexes it in the contraction; with strip > 1 dividing the
// reduction axis, that axis runs in strips of strip values, the strip
// loop outermost: part of the copy reads strip rows of the operand
// across, row by row, so the cache lines it reads serve strip
// consecutive cells of each row it writes.
func (pk *pack) operations(o *loopir.Operation, strip int) (*loopir.Operation, *loopir.Operation) {
	n := len(pk.perm)
	idx := make([]loopir.IndexExpr, n)
	src := make([]loopir.IndexExpr, len(pk.idx))
	copy(src, pk.idx)
	var loops []*loopir.For
	maxVar := 0
	for _, x := range pk.idx {
		maxVar = max(maxVar, x.Terms[0].Var)
	}
	for a, from := range pk.perm {
		idx[a] = pk.idx[from]
		loops = append(loops, &loopir.For{Var: pk.idx[from].Terms[0].Var, Extent: pk.info.Dims[a]})
	}
	if r := loops[n-1]; strip > 1 && r.Extent%strip == 0 && r.Extent > strip {
		// r = strip*ro + ri: ro outermost, ri innermost.
		ro := &loopir.For{Var: maxVar + 1, Extent: r.Extent / strip}
		r.Extent = strip
		x := loopir.IndexExpr{Terms: []loopir.IndexTerm{{Coeff: strip, Var: ro.Var}, {Coeff: 1, Var: r.Var}}}
		idx[n-1] = x
		src[pk.perm[n-1]] = x
		loops = append([]*loopir.For{ro}, loops...)
	}
	var body loopir.Stmt = &loopir.Store{Tensor: pk.tensor, Index: idx, Value: &loopir.Load{Tensor: pk.t, Index: src}}
	for i := len(loops) - 1; i >= 0; i-- {
		loops[i].Body = []loopir.Stmt{body}
		body = loops[i]
	}
	perm := make([]string, len(pk.perm))
	for a, from := range pk.perm {
		perm[a] = fmt.Sprint(from)
	}
	desc := fmt.Sprintf("%s = %s packed: axes (%s), the reduction axis of the next operation last", pk.info.Name, strings.TrimSuffix(pk.info.Name, ".packed"), strings.Join(perm, ", "))
	packOp := &loopir.Operation{Desc: desc, Op: -1, Body: []loopir.Stmt{body},
		Assignment: &loopir.Block{Desc: desc, Op: -1, LHS: pk.tensor, RHS: []int{pk.t}, Proj: &inference.Projections{Injective: true, Surjective: true}}}
	o2 := *o
	o2.Body = make([]loopir.Stmt, len(o.Body))
	for i, s := range o.Body {
		if s == pk.loop {
			s = rebuild(pk.loop, pk.st, pk.st2)
		}
		o2.Body[i] = s
	}
	return packOp, &o2
}

// rebuild copies perfect nest f with its store st replaced by st2.
func rebuild(f *loopir.For, st, st2 *loopir.Store) loopir.Stmt {
	g := *f
	g.Body = make([]loopir.Stmt, len(f.Body))
	for i, s := range f.Body {
		switch s := s.(type) {
		case *loopir.For:
			g.Body[i] = rebuild(s, st, st2)
		case *loopir.Store:
			if s == st {
				g.Body[i] = st2
			} else {
				g.Body[i] = s
			}
		default:
			g.Body[i] = s
		}
	}
	return &g
}

// PackProgram is Pack on p, whose stores inlined marks (the scalar
// temporaries inlined into them, loopir.InlineScalarTemps): it returns
// the program to emit and the marks of its stores.
func PackProgram(tiers []asm.Config, p *loopir.Program, inlined map[*loopir.Store]bool, q Query, k target.Kernels) (*loopir.Program, map[*loopir.Store]bool) {
	pk := Pack(tiers, p, q, k.MinPackMACs, k.PackStrip)
	if pk.Program == nil {
		return p, inlined
	}
	for st2, st := range pk.Stores {
		if inlined[st] {
			inlined[st2] = true
		}
	}
	return pk.Program, inlined
}
