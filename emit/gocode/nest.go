package gocode

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/ocannlgen/ocannlgen/emit/schedule"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
)

// A perfect nest (loops each holding exactly the next one, the innermost
// holding one Store) is emitted by a chain. The policy:
//
//  1. Loop order. A loop is a reduction when the store's LHS index does
//     not mention its variable. When the LHS index maps the other loops
//     injectively and the value does not read the stored tensor ("safe"),
//     the loop driving the LHS's last axis with coefficient 1 is moved
//     innermost if it also drives the last axis of an operand with
//     coefficient 1, it is the last non-reduction loop, a reduction loop
//     follows it, and its extent is at least 4 (or at least the innermost
//     reduction's). Only that loop moves, past reduction loops: the
//     reduction loops keep their relative order, so every cell receives
//     its updates in the loop IR's order (matmul i-k-j becomes i-j-k with
//     c[i][k] += a[i][j]*b[j][k]).
//  2. Otherwise, trailing reduction loops of an accumulating store run in
//     a local variable: acc := cell (or the pre-fill value, when the
//     nest covers every cell of the unpadded tensor once and absorbs the
//     operation's Fill); the loops; cell = acc.
//  3. After a move, the reduction loop around the innermost loop is
//     unrolled (completely up to Loops.JamFull iterations, else by JamUnroll
//     with a remainder loop) and jammed: the innermost body loads the
//     cell once, applies the copies' updates in order, stores it once.
//  4. Loads and subexpressions that do not depend on the innermost loop
//     are hoisted as scalars to the loop binding their last variable (not
//     from the stored tensor), and so are row addresses: a pointer to the
//     sub-array of the leading invariant axes, or a fixed-size view
//     re-sliced out of a flat array. The innermost loops then index
//     fixed-size arrays with constant bounds, which the compiler proves in
//     range (no bounds checks).

// plan is how a perfect nest is emitted (schedule.LoopPlan).
type plan = schedule.LoopPlan

func idxMentions(x loopir.IndexExpr, v int) bool {
	for _, t := range x.Terms {
		if t.Var == v && t.Coeff != 0 {
			return true
		}
	}
	return false
}

func exprMentions(e loopir.Expr, v int) bool {
	found := false
	loopir.WalkLoads(e, func(l *loopir.Load) {
		for _, x := range l.Index {
			found = found || idxMentions(x, v)
		}
	})
	return found
}

// plan decides the loop order and the emission mode of a perfect nest
// (schedule.Loops).
func (k *kgen) plan(loops []*loopir.For, st *loopir.Store) *plan {
	return schedule.Loops(k.p, loops, st, k.free, k.tgt.Loops)
}

// sink collects the statements hoisted to one loop level.
type sink struct {
	stmts []jen.Code
	keys  map[string]string
}

type chain struct {
	k        *kgen
	pl       *plan
	pos      map[int]int // loop variable -> depth of its loop's body
	sinks    []*sink     // sinks[d]: the body of the loop at depth d (0: before the nest)
	inner    int         // the innermost loop's variable (-1: no loops)
	innerExt int
}

func (c *chain) push() { c.sinks = append(c.sinks, &sink{keys: map[string]string{}}) }

func (c *chain) pop() *sink {
	s := c.sinks[len(c.sinks)-1]
	c.sinks = c.sinks[:len(c.sinks)-1]
	return s
}

// level is the depth at which an index over these expressions is
// loop-invariant: the deepest loop binding one of its variables.
func (c *chain) level(xs []loopir.IndexExpr) int {
	l := 0
	for _, x := range xs {
		for _, t := range x.Terms {
			if d, ok := c.pos[t.Var]; ok && t.Coeff != 0 {
				l = max(l, d)
			}
		}
	}
	return l
}

func (c *chain) exprLevel(e loopir.Expr) int {
	l := 0
	loopir.WalkLoads(e, func(ld *loopir.Load) { l = max(l, c.level(ld.Index)) })
	return l
}

func idxKey(xs []loopir.IndexExpr) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = x.String()
	}
	return "[" + strings.Join(s, "][") + "]"
}

func exprKey(e loopir.Expr) string {
	switch e := e.(type) {
	case *loopir.Const:
		return strconv.FormatFloat(e.Value, 'g', -1, 64)
	case *loopir.Load:
		return "t" + strconv.Itoa(e.Tensor) + idxKey(e.Index)
	case *loopir.Apply:
		s := make([]string, len(e.Args))
		for i, a := range e.Args {
			s[i] = exprKey(a)
		}
		return string(e.Prim) + "(" + strings.Join(s, ",") + ")"
	}
	return "?"
}

// nameBase is the identifier stem for temporaries derived from t.
func (k *kgen) nameBase(t int) string {
	if s := &k.ts[t].st; s.slice != "" {
		return s.slice
	}
	return k.ts[t].st.name
}

// hoistable: an expression reading storage that is invariant in the
// innermost loop and does not read the tensor the nest writes.
func (c *chain) hoistable(e loopir.Expr) bool {
	if c.inner < 0 || exprMentions(e, c.inner) || loopir.Reads(e, c.pl.St.Tensor) {
		return false
	}
	reads := false
	loopir.WalkLoads(e, func(l *loopir.Load) { reads = reads || c.k.ts[l.Tensor].st.kind != sConst })
	return reads
}

func (c *chain) expr(e loopir.Expr, blk *[]jen.Code, noHoist bool) (val, error) {
	k := c.k
	if !noHoist && c.hoistable(e) {
		s := c.sinks[c.exprLevel(e)]
		key := "v" + exprKey(e)
		if name, ok := s.keys[key]; ok {
			return val{c: jen.Id(name)}, nil
		}
		v, err := c.expr(e, &s.stmts, true)
		if err != nil {
			return val{}, err
		}
		base := "v"
		if l, ok := e.(*loopir.Load); ok {
			base = k.nameBase(l.Tensor) + "V"
		}
		name := k.names.fresh(base)
		s.stmts = append(s.stmts, jen.Id(name).Op(":=").Add(k.typed(v)))
		s.keys[key] = name
		return val{c: jen.Id(name)}, nil
	}
	switch e := e.(type) {
	case *loopir.Const:
		return k.constVal(e.Value), nil
	case *loopir.Load:
		if s := &k.ts[e.Tensor].st; s.kind == sConst {
			return k.constVal(s.value), nil
		}
		if k.bf16In[e.Tensor] && !k.bf16In[c.pl.St.Tensor] { // a copy into an rt.BF16 array moves the bits
			return val{c: c.access(e.Tensor, e.Index).Dot("Float32").Call()}, nil
		}
		return val{c: c.access(e.Tensor, e.Index)}, nil
	case *loopir.Apply:
		args := make([]val, len(e.Args))
		for i, a := range e.Args {
			v, err := c.expr(a, blk, noHoist)
			if err != nil {
				return val{}, err
			}
			args[i] = v
			if i == 0 && e.Prim == ops.Where && len(e.Args) == 3 && v.konst {
				// A constant condition selects one operand; the other is
				// not compiled (nothing is hoisted for it).
				if v.cv != 0 {
					return c.expr(e.Args[1], blk, noHoist)
				}
				return c.expr(e.Args[2], blk, noHoist)
			}
		}
		return k.prim(e.Prim, args, blk)
	}
	return val{}, fmt.Errorf("unknown expression %T", e)
}

// access is t[idx] inside the nest. The array axes before the first one
// that depends on the innermost loop are hoisted as a row pointer to the
// loop binding their last variable; when that first axis is the last
// one and holds several tensor axes (a flat slice, a regrouped array),
// its loop-invariant part is hoisted too, as a re-sliced fixed-size view
// indexed by the innermost variable alone. Either way the innermost
// loop indexes a fixed-size array the compiler can bounds-check away.
func (c *chain) access(t int, idx []loopir.IndexExpr) *jen.Statement {
	k := c.k
	s := &k.ts[t].st
	g := groupIndex(s, idx)
	p := 0
	for c.inner >= 0 && p < len(g) && !idxMentions(g[p], c.inner) {
		p++
	}
	if c.inner < 0 || p == len(g) {
		return k.arrayAccess(t, g)
	}
	if p == len(g)-1 && len(s.groups[p]) > 1 {
		ck := 0
		base := loopir.IndexExpr{Offset: g[p].Offset}
		for _, tm := range g[p].Terms {
			switch {
			case tm.Var == c.inner:
				ck += tm.Coeff
			case tm.Coeff != 0:
				base.Terms = append(base.Terms, tm)
			}
		}
		length := ck*(c.innerExt-1) + 1
		if ck > 0 && !(len(base.Terms) == 0 && base.Offset == 0 && length == s.adims[p]) {
			lead := append(append([]loopir.IndexExpr(nil), g[:p]...), base)
			sk := c.sinks[c.level(lead)]
			key := fmt.Sprintf("f%d%s:%d", t, idxKey(lead), length)
			name, ok := sk.keys[key]
			if !ok {
				name = k.names.fresh(k.nameBase(t) + "Row")
				hi := loopir.IndexExpr{Terms: base.Terms, Offset: base.Offset + length}
				sk.stmts = append(sk.stmts, jen.Id(name).Op(":=").Parens(jen.Op("*").Add(k.arrayType([]int{length}))).Call(
					k.arrayAccess(t, g[:p]).Index(k.affine(base), k.affine(hi))))
				sk.keys[key] = name
			}
			return jen.Id(name).Index(k.affine(loopir.IndexExpr{Terms: []loopir.IndexTerm{{Coeff: ck, Var: c.inner}}}))
		}
	}
	if p == 0 {
		return k.arrayAccess(t, g)
	}
	sk := c.sinks[c.level(g[:p])]
	key := fmt.Sprintf("r%d%s", t, idxKey(g[:p]))
	name, ok := sk.keys[key]
	if !ok {
		name = k.names.fresh(k.nameBase(t) + "Row")
		sk.stmts = append(sk.stmts, jen.Id(name).Op(":=").Op("&").Add(k.arrayAccess(t, g[:p])))
		sk.keys[key] = name
	}
	r := jen.Id(name)
	for _, x := range g[p:] {
		r.Index(k.affine(x))
	}
	return r
}

// loop emits a loop over v whose body is generated (and may hoist into
// the new level) by body.
func (c *chain) loop(v, from, to, step int, body func() ([]jen.Code, error)) ([]jen.Code, error) {
	c.pos[v] = len(c.sinks)
	c.push()
	before := c.k.varUse[v]
	inner, err := body()
	s := c.pop()
	delete(c.pos, v)
	if err != nil {
		return nil, err
	}
	used := c.k.varUse[v] > before
	return []jen.Code{c.k.forStmt(v, from, to, step, used, append(s.stmts, inner...))}, nil
}

func (c *chain) cell() jen.Code { return c.access(c.pl.St.Tensor, c.pl.St.Index) }

// storeBody is the innermost statement of a plain nest.
func (c *chain) storeBody() ([]jen.Code, error) {
	var blk []jen.Code
	v, err := c.expr(c.pl.St.Value, &blk, false)
	if err != nil {
		return nil, err
	}
	st := c.pl.St
	u, err := c.k.update(c.cell, st.Accum, st.Accumulate, v)
	if err != nil {
		return nil, err
	}
	return append(blk, u), nil
}

func (c *chain) nestPlain(i int) ([]jen.Code, error) {
	if i == len(c.pl.Loops) {
		return c.storeBody()
	}
	l := c.pl.Loops[i]
	return c.loop(l.Var, 0, l.Extent, 1, func() ([]jen.Code, error) { return c.nestPlain(i + 1) })
}

// accInit is the accumulator's initial value: the pre-fill value the
// nest absorbed, or the cell.
func (c *chain) accInit(init *float64) jen.Code {
	if init != nil {
		return c.k.typed(c.k.constVal(*init))
	}
	return c.cell()
}

func (c *chain) nestAcc(i int, init *float64) ([]jen.Code, error) {
	pl := c.pl
	if i < pl.AccFrom {
		l := pl.Loops[i]
		return c.loop(l.Var, 0, l.Extent, 1, func() ([]jen.Code, error) { return c.nestAcc(i+1, init) })
	}
	acc := c.k.names.fresh("acc")
	out := []jen.Code{jen.Id(acc).Op(":=").Add(c.accInit(init))}
	var red func(j int) ([]jen.Code, error)
	red = func(j int) ([]jen.Code, error) {
		if j == len(pl.Loops) {
			var blk []jen.Code
			v, err := c.expr(pl.St.Value, &blk, false)
			if err != nil {
				return nil, err
			}
			u, err := c.k.update(func() jen.Code { return jen.Id(acc) }, pl.St.Accum, true, v)
			if err != nil {
				return nil, err
			}
			return append(blk, u), nil
		}
		l := pl.Loops[j]
		return c.loop(l.Var, 0, l.Extent, 1, func() ([]jen.Code, error) { return red(j + 1) })
	}
	loops, err := red(i)
	if err != nil {
		return nil, err
	}
	out = append(out, loops...)
	return append(out, jen.Add(c.cell()).Op("=").Id(acc)), nil
}

// substExpr copies e with loop variable v replaced by v+u (keep) or by
// the constant u (!keep).
func substExpr(e loopir.Expr, v, u int, keep bool) loopir.Expr {
	return loopir.MapIndices(e, func(index []loopir.IndexExpr) []loopir.IndexExpr {
		idx := make([]loopir.IndexExpr, len(index))
		for a, x := range index {
			y := loopir.IndexExpr{Offset: x.Offset}
			for _, t := range x.Terms {
				if t.Var == v {
					y.Offset += t.Coeff * u
					if !keep {
						continue
					}
				}
				y.Terms = append(y.Terms, t)
			}
			idx[a] = y
		}
		return idx
	})
}

// jamBody is the innermost body of a jammed nest: the cell goes through
// a local variable receiving each unrolled copy's update in order.
func (c *chain) jamBody(copies []loopir.Expr, init *float64) ([]jen.Code, error) {
	st := c.pl.St
	acc := c.k.names.fresh("acc")
	out := []jen.Code{jen.Id(acc).Op(":=").Add(c.accInit(init))}
	for _, e := range copies {
		v, err := c.expr(e, &out, false)
		if err != nil {
			return nil, err
		}
		u, err := c.k.update(func() jen.Code { return jen.Id(acc) }, st.Accum, true, v)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return append(out, jen.Add(c.cell()).Op("=").Id(acc)), nil
}

func (c *chain) nestJam(i int, init *float64) ([]jen.Code, error) {
	pl := c.pl
	n := len(pl.Loops)
	if i < n-2 {
		l := pl.Loops[i]
		return c.loop(l.Var, 0, l.Extent, 1, func() ([]jen.Code, error) { return c.nestJam(i+1, init) })
	}
	r, v := pl.Loops[n-2], pl.Loops[n-1]
	inner := func(copies []loopir.Expr, init *float64) func() ([]jen.Code, error) {
		return func() ([]jen.Code, error) {
			return c.loop(v.Var, 0, v.Extent, 1, func() ([]jen.Code, error) { return c.jamBody(copies, init) })
		}
	}
	if pl.Full {
		copies := make([]loopir.Expr, r.Extent)
		for u := range copies {
			copies[u] = substExpr(pl.St.Value, r.Var, u, false)
		}
		return inner(copies, init)()
	}
	ju := c.k.tgt.Loops.JamUnroll
	m := r.Extent - r.Extent%ju
	copies := make([]loopir.Expr, ju)
	for u := range copies {
		copies[u] = substExpr(pl.St.Value, r.Var, u, true)
	}
	out, err := c.loop(r.Var, 0, m, ju, inner(copies, nil))
	if err != nil || m == r.Extent {
		return out, err
	}
	tail, err := c.loop(r.Var, m, r.Extent, 1, func() ([]jen.Code, error) {
		return c.loop(v.Var, 0, v.Extent, 1, func() ([]jen.Code, error) { return c.nestPlain(n) })
	})
	return append(out, tail...), err
}

// note describes what the chain did to the loop IR's nest.
func (c *chain) note() string {
	pl := c.pl
	k := c.k
	var parts []string
	if pl.Reordered {
		names := make([]string, len(pl.Loops))
		for i, l := range pl.Loops {
			names[i] = k.loopName(l.Var)
		}
		parts = append(parts, "loops reordered to "+strings.Join(names, ", ")+" (unit stride innermost)")
	}
	n := len(pl.Loops)
	switch pl.Mode {
	case schedule.Acc:
		parts = append(parts, "reduction accumulated in a local variable")
	case schedule.Jam:
		r := k.loopName(pl.Loops[n-2].Var)
		if pl.Full {
			parts = append(parts, fmt.Sprintf("%s unrolled and jammed into %s", r, k.loopName(pl.Loops[n-1].Var)))
		} else {
			parts = append(parts, fmt.Sprintf("%s unrolled by %d and jammed into %s", r, k.tgt.Loops.JamUnroll, k.loopName(pl.Loops[n-1].Var)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "// " + strings.Join(parts, "; ") + "."
}

// chain emits a perfect nest (no loops: a single store). init is the
// pre-fill value the nest absorbs (nil: the pre-fill was emitted). A
// nest an assembly kernel runs becomes `if flag512 { call } else if
// flag2 { call } else { loops }`.
func (k *kgen) chain(loops []*loopir.For, st *loopir.Store, init *float64) ([]jen.Code, error) {
	k.curInlined = k.inlined[st]
	defer func() { k.curInlined = false }()
	var pre []jen.Code
	if f := k.absorbAt[st]; f != nil {
		if init == nil {
			code, ok, err := k.chainAbsorb(loops, st, f)
			if ok || err != nil {
				return code, err
			}
			k.curInlined = k.inlined[st]
		}
		pre = k.fill(f) // the kernel is not there after all
	}
	code, err := k.chainNest(loops, st, init)
	return append(pre, code...), err
}

// chainNest is chain without a fill to absorb.
func (k *kgen) chainNest(loops []*loopir.For, st *loopir.Store, init *float64) ([]jen.Code, error) {
	if code, ok, err := k.parChain(loops, st, init, nil); ok || err != nil {
		return code, err
	}
	var calls [][]jen.Code
	var note string
	switch ch := schedule.Choose(k.tiers(), k.p, loops, st, k.query(init)); ch.Family {
	case schedule.Contraction:
		calls, note = k.contractionCalls(ch, loops, st, init)
	case schedule.Map:
		calls, note = k.mapCalls(ch)
	case schedule.Reduce:
		calls, note = k.reduceCalls(ch)
	}
	code, err := k.chainGo(loops, st, init)
	if calls == nil || err != nil {
		return code, err
	}
	return k.dispatch(calls, note, code), nil
}

// dispatch is `if flag512 { calls[0] } else if flag2 { calls[1] } else
// { code }` after the comment note; a tier whose calls are nil is left
// out (an AVX2-only kernel: `if flag2 { calls[1] } else { code }`).
func (k *kgen) dispatch(calls [][]jen.Code, note string, code []jen.Code) []jen.Code {
	if k.k.BF16 && (strings.Contains(note, bf16Mark) || strings.Contains(note, bf16OperandsMark)) {
		return append([]jen.Code{jen.Comment(note)}, calls[0]...) // rt/bf16 dispatches itself
	}
	s := jen.Null()
	first := true
	for i, t := range k.asm.Tiers() {
		if calls[i] == nil {
			continue // the kernel is not emitted for this tier
		}
		if !first {
			s.Else()
		}
		first = false
		s.If(jen.Id(t.Flag())).Block(calls[i]...)
	}
	return []jen.Code{jen.Comment(note), s.Else().Block(code...)}
}

// chainGo emits a perfect nest as Go loops.
func (k *kgen) chainGo(loops []*loopir.For, st *loopir.Store, init *float64) ([]jen.Code, error) {
	pl := k.plan(loops, st)
	c := &chain{k: k, pl: pl, pos: map[int]int{}, inner: -1}
	if n := len(pl.Loops); n > 0 {
		c.inner, c.innerExt = pl.Loops[n-1].Var, pl.Loops[n-1].Extent
	}
	c.push()
	var body []jen.Code
	var err error
	switch pl.Mode {
	case schedule.Acc:
		body, err = c.nestAcc(0, init)
	case schedule.Jam:
		body, err = c.nestJam(0, init)
	default:
		body, err = c.nestPlain(0)
	}
	if err != nil {
		return nil, k.fail("%v", err)
	}
	s := c.pop()
	var out []jen.Code
	if n := c.note(); n != "" {
		out = append(out, jen.Comment(n))
	}
	out = append(out, s.stmts...)
	return append(out, body...), nil
}

// plainFor emits a loop whose body is not a perfect nest (the loops of
// a coupled factor's components, several stores).
func (k *kgen) plainFor(f *loopir.For) ([]jen.Code, error) {
	before := k.varUse[f.Var]
	// The nests inside read f's variable: they stay serial.
	k.inLoop++
	defer func() { k.inLoop-- }()
	var body []jen.Code
	for _, s := range f.Body {
		var code []jen.Code
		var err error
		switch s := s.(type) {
		case *loopir.For:
			if loops, st, ok := loopir.PerfectNest(s); ok {
				code, err = k.chain(loops, st, nil)
			} else {
				code, err = k.plainFor(s)
			}
		case *loopir.Store:
			code, err = k.chain(nil, s, nil)
		default:
			err = k.fail("unexpected %T inside a loop", s)
		}
		if err != nil {
			return nil, err
		}
		body = append(body, code...)
	}
	used := k.varUse[f.Var] > before
	return []jen.Code{k.forStmt(f.Var, 0, f.Extent, 1, used, body)}, nil
}

// elision is a fill an operation's nest absorbs (schedule.Elision).
type elision = schedule.Elision

// fillElision finds an operation whose pre-fill its nest's Go loops
// start from (schedule.ElideFill).
func (k *kgen) fillElision(o *loopir.Operation) *elision {
	return schedule.ElideFill(k.p, o, k.isConst, k.tgt.Loops)
}
