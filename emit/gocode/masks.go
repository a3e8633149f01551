package gocode

import (
	"maps"
	"slices"
	"strconv"

	"github.com/dave/jennifer/jen"
	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
)

// maskFact says that a tensor's cell at index idx is zero (a zero fact)
// or never read (a dead fact) wherever the mask input M's cell
// [idx[A]][idx[B]] is 0 (docs/design.md, "Masks known at run time").
type maskFact struct{ M, A, B int }

// planMasks finds the masks (square float inputs of the kernel that no
// operation stores) and the zero and dead facts of the kernel's local
// tensors: a tensor is zero where M is 0 when each of its stores is (a
// where on M's cell with 0 in its else branch, sums and differences of
// such terms, products with one, quotients of one), and dead where M is
// 0 when each load of it sits in the then branch of a where on M's cell.
// The masked_attention layer's scores, attention weights and their gradients
// are such tensors (model/std.ocl).
func (k *kgen) planMasks() {
	k.maskZero, k.maskDead, k.maskFlag = map[int][]maskFact{}, map[int][]maskFact{}, map[int]string{}
	var masks []int
	for t := range k.p.Tensors {
		ti := &k.p.Tensors[t]
		pr := k.ts[t].st.param
		if ti.Kind == inference.Input && len(ti.Dims) == 2 && ti.Dims[0] == ti.Dims[1] && ti.Dims[0] >= 2*k.tgt.Kernels.MaskBlock &&
			!ti.Padded() && pr != nil && !pr.Output && k.pin[t] == nil && !k.storesTo(t) {
			masks = append(masks, t)
		}
	}
	if len(masks) == 0 || k.tgt.Kernels.MaskBlock == 0 || k.k.Scratch == "" || k.elem != "float32" && k.elem != "float64" {
		return
	}
	for _, m := range masks {
		k.maskFlag[m] = "" // named when a nest uses it (maskFlagName)
	}
	var stores []*loopir.Store
	fills := map[int]bool{}   // tensors with a non-zero fill
	touched := map[int]bool{} // tensors written other than by stores and fills
	for _, o := range k.p.Ops {
		loopir.WalkStmts(o.Body, func(s loopir.Stmt) {
			switch s := s.(type) {
			case *loopir.Fill:
				if s.Value != 0 {
					fills[s.Tensor] = true
				}
			case *loopir.FetchStmt:
				touched[s.Tensor] = true
			case *loopir.ResetPadding:
				touched[s.Tensor] = true
			}
		})
		for _, s := range o.Body {
			loopir.WalkStores(s, func(st *loopir.Store, _ map[int]int) { stores = append(stores, st) })
		}
	}
	local := func(t int) bool {
		ti := &k.p.Tensors[t]
		return k.ts[t].st.param == nil && k.pin[t] == nil && !ti.Padded() && !touched[t] &&
			(ti.Kind == inference.Result || ti.Kind == inference.Target)
	}
	byTensor := map[int][]*loopir.Store{}
	var order []int
	for _, st := range stores {
		if _, ok := byTensor[st.Tensor]; !ok {
			order = append(order, st.Tensor)
		}
		byTensor[st.Tensor] = append(byTensor[st.Tensor], st)
	}
	// Zero facts, in program order (a tensor's facts come from those of
	// the tensors its stores read, written before it).
	for _, t := range order {
		if !local(t) || fills[t] {
			continue
		}
		n := len(byTensor[t][0].Index)
		for _, m := range masks {
			for a := range n {
				for b := range n {
					if a == b {
						continue
					}
					all := true
					for _, st := range byTensor[t] {
						if len(st.Index) != n || !simpleIndex(st.Index[a]) || !simpleIndex(st.Index[b]) ||
							!k.zeroUnder(st.Value, m, st.Index[a], st.Index[b]) {
							all = false
							break
						}
					}
					if all {
						k.maskZero[t] = append(k.maskZero[t], maskFact{M: m, A: a, B: b})
					}
				}
			}
		}
	}
	// Dead facts: every load of the tensor is guarded.
	cands := map[int][]maskFact{}
	seen := map[int]bool{}
	for _, st := range stores {
		k.guardedLoads(st.Value, nil, func(l *loopir.Load, guards []maskGuard) {
			var fs []maskFact
			for _, g := range guards {
				for a := range l.Index {
					for b := range l.Index {
						if a != b && simpleIndex(l.Index[a]) && sameIndex(l.Index[a], g.ia) && sameIndex(l.Index[b], g.ib) {
							fs = append(fs, maskFact{M: g.m, A: a, B: b})
						}
					}
				}
			}
			if !seen[l.Tensor] {
				seen[l.Tensor], cands[l.Tensor] = true, fs
				return
			}
			cands[l.Tensor] = slices.DeleteFunc(cands[l.Tensor], func(f maskFact) bool { return !slices.Contains(fs, f) })
		})
		// A store's own accumulation reads its cells: they stay as dead
		// as they were.
	}
	for _, t := range order {
		if local(t) && len(cands[t]) > 0 {
			k.maskDead[t] = cands[t]
		}
	}
}

// simpleIndex reports whether x is one loop variable (coefficient 1,
// offset 0): its values are the loop's.
func simpleIndex(x loopir.IndexExpr) bool {
	x = x.Nonzero()
	return x.Data == nil && x.Offset == 0 && len(x.Terms) == 1 && x.Terms[0].Coeff == 1
}

// maskGuard is a where on mask m's cell [ia][ib] whose then branch an
// expression is in.
type maskGuard struct {
	m      int
	ia, ib loopir.IndexExpr
}

// maskLoad reports the where condition e as a load of one of the masks.
func (k *kgen) maskLoad(e loopir.Expr) (maskGuard, bool) {
	l, ok := e.(*loopir.Load)
	if !ok || len(l.Index) != 2 {
		return maskGuard{}, false
	}
	if _, isMask := k.maskFlag[l.Tensor]; !isMask {
		return maskGuard{}, false
	}
	return maskGuard{m: l.Tensor, ia: l.Index[0], ib: l.Index[1]}, true
}

// guardedLoads calls f for each load in e with the guards around it.
func (k *kgen) guardedLoads(e loopir.Expr, guards []maskGuard, f func(*loopir.Load, []maskGuard)) {
	switch e := e.(type) {
	case *loopir.Load:
		f(e, guards)
	case *loopir.Apply:
		if e.Prim == ops.Where && len(e.Args) == 3 {
			k.guardedLoads(e.Args[0], guards, f)
			if g, ok := k.maskLoad(e.Args[0]); ok {
				k.guardedLoads(e.Args[1], append(slices.Clip(guards), g), f)
			} else {
				k.guardedLoads(e.Args[1], guards, f)
			}
			k.guardedLoads(e.Args[2], guards, f)
			return
		}
		for _, a := range e.Args {
			k.guardedLoads(a, guards, f)
		}
	}
}

// zeroUnder reports whether e is 0 wherever mask m's cell [ia][ib] is 0
// (assuming the other operands finite).
func (k *kgen) zeroUnder(e loopir.Expr, m int, ia, ib loopir.IndexExpr) bool {
	switch e := e.(type) {
	case *loopir.Const:
		return e.Value == 0
	case *loopir.Load:
		if k.isConst(e.Tensor) {
			return k.ts[e.Tensor].st.value == 0
		}
		for _, f := range k.maskZero[e.Tensor] {
			if f.M == m && sameIndex(e.Index[f.A], ia) && sameIndex(e.Index[f.B], ib) {
				return true
			}
		}
	case *loopir.Apply:
		z := func(i int) bool { return k.zeroUnder(e.Args[i], m, ia, ib) }
		switch e.Prim {
		case ops.Where:
			if g, ok := k.maskLoad(e.Args[0]); ok && g.m == m && sameIndex(g.ia, ia) && sameIndex(g.ib, ib) {
				return z(2)
			}
			return z(1) && z(2)
		case ops.Add, ops.Sub:
			return z(0) && z(1)
		case ops.Mul:
			return z(0) || z(1)
		case ops.Div, ops.Neg:
			return z(0)
		}
	}
	return false
}

// maskPlan is a contraction run in diagonal blocks when its mask is
// causal at run time: the mask's flag (a scratch field) and the blocks'
// kernels and operands.
type maskPlan struct {
	flag   string
	blocks []maskCall
	desc   string
}

// maskCall is one block's kernel and the index of each tensor's first
// cell (n.Zero moved to the block).
type maskCall struct {
	spec asm.Spec
	zero map[int][]loopir.IndexExpr
}

// maskBlocks plans contraction n (the nest storing st) in diagonal
// blocks when a fact of its output (dead) or of one operand (zero)
// relates a kernel axis that can be split (m or n) to another (n or k):
// the block of rows (or columns) [s0, s0+b) runs the other axis over
// [0, s0+b) when the fact drops its larger indices, over [s0, end) when
// it drops the smaller ones, where b is the target's Kernels.MaskBlock.
// nil when none applies.
func (k *kgen) maskBlocks(n *asm.Nest, st *loopir.Store, loops []*loopir.For) *maskPlan {
	if len(k.maskFlag) == 0 || n.Spec.Winograd || n.Spec.Kind == asm.MVec || max(n.Spec.N2, 1) != 1 ||
		max(n.Spec.K2, 1) != 1 || max(n.Spec.K3, 1) != 1 || n.A == n.B || n.C == n.A || n.C == n.B {
		return nil
	}
	mb := k.tgt.Kernels.MaskBlock
	la, lb, ok := loopir.ProductOf(st)
	if !ok {
		return nil
	}
	idx := map[int][]loopir.IndexExpr{n.C: st.Index}
	for _, l := range []*loopir.Load{la, lb} {
		if l.Tensor != n.A && l.Tensor != n.B {
			return nil
		}
		idx[l.Tensor] = l.Index
	}
	ext := map[int]int{}
	for _, l := range loops {
		ext[l.Var] = l.Extent
	}
	strides := map[int]map[int]int{}
	for t, x := range idx {
		s, ok := loopir.FlatStrides(x, k.p.Tensors[t].BufDims)
		if !ok {
			return nil
		}
		strides[t] = s
	}
	sp := n.Spec
	// role: 'm', 'n' or 'k' for a loop variable that is the kernel's axis.
	role := func(v int) byte {
		c, a, b := strides[n.C][v], strides[n.A][v], strides[n.B][v]
		switch {
		case sp.M > 1 && ext[v] == sp.M && c == sp.CM && a == sp.AM && b == 0:
			return 'm'
		case sp.N > 1 && ext[v] == sp.N && c == sp.CN && b == sp.BN && a == 0:
			return 'n'
		case ext[v] == sp.K && c == 0 && a == sp.AK && b == sp.BK:
			return 'k'
		}
		return 0
	}
	type rel struct {
		m       int
		va, vb  int // dropped where vb > va
		ra, rb  byte
		outDead bool
	}
	var rels []rel
	add := func(t int, fs []maskFact, dead bool) {
		for _, f := range fs {
			x := idx[t]
			if !simpleIndex(x[f.A]) || !simpleIndex(x[f.B]) {
				continue
			}
			va, vb := x[f.A].Nonzero().Terms[0].Var, x[f.B].Nonzero().Terms[0].Var
			rels = append(rels, rel{m: f.M, va: va, vb: vb, ra: role(va), rb: role(vb), outDead: dead})
		}
	}
	add(n.C, k.maskDead[n.C], true)
	add(n.A, k.maskZero[n.A], false)
	add(n.B, k.maskZero[n.B], false)
	for _, r := range rels {
		// The split axis s (m or n) and the restricted one (the other
		// of the fact's two); upper: the fact drops the restricted
		// axis's indices above the split's (else those below).
		var sv, rv int
		var sr, rr byte
		var upper bool
		switch {
		case r.outDead && r.ra == 'm' && r.rb == 'n':
			// Columns of n split, each block's rows from its first
			// column on: the operand along n (a dot kernel transposes it
			// into its frame per call) is read once over the blocks.
			sv, rv, sr, rr, upper = r.vb, r.va, 'n', 'm', false
		case r.outDead && r.ra == 'n' && r.rb == 'm':
			sv, rv, sr, rr, upper = r.va, r.vb, 'n', 'm', true
		case !r.outDead && (r.ra == 'm' || r.ra == 'n') && r.rb == 'k':
			sv, rv, sr, rr, upper = r.va, r.vb, r.ra, 'k', true
		case !r.outDead && r.ra == 'k' && (r.rb == 'm' || r.rb == 'n'):
			sv, rv, sr, rr, upper = r.vb, r.va, r.rb, 'k', false
		default:
			continue
		}
		se, re := ext[sv], ext[rv]
		if se < 2*mb || re < 2*mb {
			continue
		}
		plan := &maskPlan{flag: k.maskFlagName(r.m)}
		for s0 := 0; s0 < se; s0 += mb {
			bs := min(mb, se-s0)
			r0, r1 := 0, min(re, s0+bs)
			if !upper {
				r0, r1 = s0, re
			}
			spec := sp
			switch sr {
			case 'm':
				spec.M = bs
			default:
				spec.N = bs
			}
			switch rr {
			case 'm':
				spec.M = r1 - r0
			case 'n':
				spec.N = r1 - r0
			default:
				spec.K = r1 - r0
			}
			zero := map[int][]loopir.IndexExpr{}
			for t, x := range idx {
				z := slices.Clone(n.Zero[t])
				for d := range z {
					z[d].Terms = slices.Clone(z[d].Terms)
					z[d].Offset += coeffOf(x[d], sv)*s0 + coeffOf(x[d], rv)*r0
				}
				zero[t] = z
			}
			plan.blocks = append(plan.blocks, maskCall{spec: spec, zero: zero})
		}
		plan.desc = maskDesc(mb, sr, rr, upper)
		if k.maskForms == nil {
			k.maskForms = map[[2]int]string{}
		}
		k.maskForms[[2]int{k.curOp, k.curStmt}] = plan.desc
		return plan
	}
	return nil
}

// maskDesc says how the blocks run, for the nest's comment.
func maskDesc(mb int, sr, rr byte, upper bool) string {
	span := "from 0 to the block's end"
	if !upper {
		span = "from the block's start"
	}
	return "in blocks of " + strconv.Itoa(mb) + " along " + string(sr) + ", " + string(rr) + " " + span
}

// coeffOf is v's coefficient in x.
func coeffOf(x loopir.IndexExpr, v int) int {
	c := 0
	for _, t := range x.Terms {
		if t.Var == v {
			c += t.Coeff
		}
	}
	return c
}

// maskFlagName names (once) the scratch field that holds whether mask m
// is causal in this call (rt.UpperZero, computed on entry).
func (k *kgen) maskFlagName(m int) string {
	if name := k.maskFlag[m]; name != "" {
		return name
	}
	if k.scratch == "" {
		k.scratch = k.names.fresh("scratch")
	}
	name := k.names.fresh(k.nameBase(m) + "Causal")
	k.maskFlag[m] = name
	k.bf16Packs = append(k.bf16Packs, jen.Id(name).Bool())
	return name
}

// maskEntry is the code computing the flags of the masks the nests use,
// run on entry.
func (k *kgen) maskEntry() []jen.Code {
	var out []jen.Code
	for _, m := range slices.Sorted(maps.Keys(k.maskFlag)) {
		name := k.maskFlag[m]
		if name == "" {
			continue
		}
		zero := make([]loopir.IndexExpr, 2)
		out = append(out, jen.Id(k.scratch).Dot(name).Op("=").Qual(rtPath, "UpperZero").Call(
			jen.Op("&").Add(k.directAccess(m, zero)), jen.Lit(k.p.Tensors[m].Dims[0])))
	}
	if len(out) > 0 {
		out = append([]jen.Code{jen.Comment("// Whether each mask is causal (zeros above its diagonal): the contractions over it then skip the blocks above it.")}, out...)
	}
	return out
}
