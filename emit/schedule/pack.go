package schedule

import (
	"fmt"
	"slices"
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

// Pack packs operands of every contraction of p (Query q gives the
// element type, constants and folding) of at least minMACs multiply-adds
// that no kernel of tiers runs as written, when one runs it with them
// packed: one operand, else both; each a 2-or-more-axis unpadded,
// non-constant tensor indexed by plain loop variables, one of them the
// reduction loop. The copy runs the reduction axis in strips of strip
// values (see operations).
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
		for _, op := range pk.ops {
			op.tensor = len(out.Tensors)
			out.Tensors = append(out.Tensors, op.info)
		}
		pk.rewrite()
		out.Ops = append(out.Ops, pk.operations(o, strip)...)
		stores[pk.st2] = pk.st
	}
	return Packed{Program: out, Stores: stores}
}

// pack is the packing of a contraction's operands: the nest's outer
// loop, its store before (st) and after (st2) the rewrite.
type pack struct {
	ops     []*operand
	loop    *loopir.For
	st, st2 *loopir.Store
}

// operand is one operand to pack: the load's tensor t and index in the
// nest, its packed layout (perm[a] is the operand's axis that packed axis
// a holds) and the copy, tensor (its index in the program) and info.
type operand struct {
	t, tensor int
	perm      []int
	info      loopir.TensorInfo
	idx       []loopir.IndexExpr
}

// packOp finds the operands of o's contraction to pack (nil: none).
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
	var cands []*operand
	loopir.WalkLoads(st.Value, func(l *loopir.Load) {
		if op := packable(p, l, red, q); op != nil {
			cands = append(cands, op)
		}
	})
	var tries [][]*operand
	for _, c := range cands {
		tries = append(tries, []*operand{c})
	}
	if len(cands) == 2 && cands[0].t != cands[1].t {
		tries = append(tries, cands)
	}
	for _, ops := range tries {
		// The rewritten nest reads the packed copies (tensors appended
		// after p's; Pack redoes the rewrite with their final indices).
		trial := *p
		trial.Tensors = p.Tensors[:len(p.Tensors):len(p.Tensors)]
		for _, op := range ops {
			op.tensor = len(trial.Tensors)
			trial.Tensors = append(trial.Tensors, op.info)
		}
		pk := &pack{ops: ops, loop: nest, st: st}
		if _, ok := Try(Contraction, tiers, &trial, loops, pk.rewrite(), q); ok {
			return pk
		}
	}
	return nil
}

// packable returns the packing of load l's operand that puts its
// reduction axis last (nil when the operand cannot be packed or its
// reduction axis is last already).
func packable(p *loopir.Program, l *loopir.Load, red map[int]bool, q Query) *operand {
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
	op := &operand{t: l.Tensor, idx: l.Index}
	for a := range l.Index {
		if a != r {
			op.perm = append(op.perm, a)
		}
	}
	op.perm = append(op.perm, r)
	dims := make([]int, len(op.perm))
	for a, from := range op.perm {
		dims[a] = ti.BufDims[from]
	}
	op.info = loopir.TensorInfo{Name: ti.Name + ".packed", Kind: inference.Result, Dims: dims, BufDims: dims}
	return op
}

// packedIndex is the copy's index in the nest.
func (op *operand) packedIndex() []loopir.IndexExpr {
	idx := make([]loopir.IndexExpr, len(op.perm))
	for a, from := range op.perm {
		idx[a] = op.idx[from]
	}
	return idx
}

// rewrite sets st2: st reading the packed copies where it read the
// operands.
func (pk *pack) rewrite() *loopir.Store {
	st2 := *pk.st
	st2.Value = loopir.MapLoads(pk.st.Value, func(l *loopir.Load) loopir.Expr {
		for _, op := range pk.ops {
			if l.Tensor == op.t && slices.EqualFunc(l.Index, op.idx, func(x, y loopir.IndexExpr) bool {
				return x.Offset == y.Offset && slices.Equal(x.Terms, y.Terms)
			}) {
				return &loopir.Load{Tensor: op.tensor, Index: op.packedIndex()}
			}
		}
		return l
	})
	pk.st2 = &st2
	return &st2
}

// operations are the packing operations and o rewritten to read the
// copies.
func (pk *pack) operations(o *loopir.Operation, strip int) []*loopir.Operation {
	var out []*loopir.Operation
	for _, op := range pk.ops {
		out = append(out, op.operation(strip))
	}
	o2 := *o
	o2.Body = make([]loopir.Stmt, len(o.Body))
	for i, s := range o.Body {
		if s == pk.loop {
			s = rebuild(pk.loop, pk.st, pk.st2)
		}
		o2.Body[i] = s
	}
	return append(out, &o2)
}

// operation is the copy of the operand. Its loops run over the packed
// axes in order, each the variable that indexes it in the contraction;
// with strip > 1 dividing the reduction axis, that axis runs in strips
// of strip values, the strip loop outermost: the copy reads strip rows
// of the operand across, row by row, so the cache lines it reads serve
// strip consecutive cells of each row it writes.
func (op *operand) operation(strip int) *loopir.Operation {
	n := len(op.perm)
	idx := op.packedIndex()
	src := append([]loopir.IndexExpr(nil), op.idx...)
	var loops []*loopir.For
	maxVar := 0
	for _, x := range op.idx {
		maxVar = max(maxVar, x.Terms[0].Var)
	}
	for a, from := range op.perm {
		loops = append(loops, &loopir.For{Var: op.idx[from].Terms[0].Var, Extent: op.info.Dims[a]})
	}
	if r := loops[n-1]; strip > 1 && r.Extent%strip == 0 && r.Extent > strip {
		// r = strip*ro + ri: ro outermost, ri innermost.
		ro := &loopir.For{Var: maxVar + 1, Extent: r.Extent / strip}
		r.Extent = strip
		x := loopir.IndexExpr{Terms: []loopir.IndexTerm{{Coeff: strip, Var: ro.Var}, {Coeff: 1, Var: r.Var}}}
		idx[n-1] = x
		src[op.perm[n-1]] = x
		loops = append([]*loopir.For{ro}, loops...)
	}
	var body loopir.Stmt = &loopir.Store{Tensor: op.tensor, Index: idx, Value: &loopir.Load{Tensor: op.t, Index: src}}
	for i := len(loops) - 1; i >= 0; i-- {
		loops[i].Body = []loopir.Stmt{body}
		body = loops[i]
	}
	perm := make([]string, len(op.perm))
	for a, from := range op.perm {
		perm[a] = fmt.Sprint(from)
	}
	desc := fmt.Sprintf("%s = %s packed: axes (%s), the reduction axis of the next operation last", op.info.Name, strings.TrimSuffix(op.info.Name, ".packed"), strings.Join(perm, ", "))
	return &loopir.Operation{Desc: desc, Op: -1, Body: []loopir.Stmt{body},
		Assignment: &loopir.Block{Desc: desc, Op: -1, LHS: op.tensor, RHS: []int{op.t}, Proj: &inference.Projections{Injective: true, Surjective: true}}}
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
