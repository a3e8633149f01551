package loopir

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/ops"
)

// Pass is one named lowering step over a Program: a plain value, composed
// with others in a list (Passes, Concat) and run in order by LowerWith. The
// name is for people (dumps, `ocannlgen infer --dump`, error messages);
// nothing dispatches on it. What a pass establishes is recorded as a
// Stage, which later passes, the printer, the interpreter and the
// emitters ask about (Program.Reached).
type Pass struct {
	// Name identifies the pass in dumps and in Program.Done.
	Name string
	// Run transforms the program in place.
	Run func(*Program) error
	// Reaches is the stage the program has reached once the pass has
	// run (0 for a pass that establishes nothing new, such as an
	// extension adding assignments).
	Reaches Stage
}

// Stage is a set of facts about a Program that passes establish.
type Stage uint8

// The stages of lowering.
const (
	// Assigned: the tensor table and the assignments exist.
	Assigned Stage = 1 << iota
	// Looped: every assignment is lowered to a loop nest (Program.Ops).
	Looped
	// Padded: padded tensors have their buffers, shifted accesses and
	// margin resets.
	Padded
	// Checked: every access is proved in bounds.
	Checked
)

// AssignPass builds the tensor table and one assignment per leaf and
// operation ("assign").
func AssignPass() Pass { return Pass{Name: "assign", Run: passAssign, Reaches: Assigned} }

// LoopsPass lowers every assignment, of any kind, to a loop nest
// ("loops").
func LoopsPass() Pass { return Pass{Name: "loops", Run: passLoops, Reaches: Looped} }

// PadPass widens padded tensors' buffers, shifts their accesses and adds
// the margin resets ("pad").
func PadPass() Pass { return Pass{Name: "pad", Run: passPad, Reaches: Padded} }

// CheckPass proves every access in bounds ("check").
func CheckPass() Pass { return Pass{Name: "check", Run: passCheck, Reaches: Checked} }

// ExtendPass is a pass named name that calls extend, which may add
// tensors (Program.AddTensor) and append assignments of any kind to
// Program.Assignments; placed right after AssignPass, the later passes
// lower everything (see LowerExtended).
func ExtendPass(name string, extend func(*Program) error) Pass {
	return Pass{Name: name, Run: extend}
}

// Passes returns the standard lowering passes in the order Lower runs
// them: "assign", "loops", "pad", "check".
func Passes() []Pass {
	return []Pass{AssignPass(), LoopsPass(), PadPass(), CheckPass()}
}

// Concat joins pass lists into one, in order.
func Concat(lists ...[]Pass) []Pass {
	var out []Pass
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// Names lists the names of passes, in order.
func Names(passes []Pass) []string {
	out := make([]string, len(passes))
	for i, ps := range passes {
		out[i] = ps.Name
	}
	return out
}

// UpTo returns the prefix of passes ending with the one named name, so
// that an intermediate stage can be dumped.
func UpTo(passes []Pass, name string) ([]Pass, error) {
	for i, ps := range passes {
		if ps.Name == name {
			return passes[:i+1], nil
		}
	}
	return nil, fmt.Errorf("loopir: unknown pass %q (passes: %s)", name, strings.Join(Names(passes), ", "))
}

// LowerWith lowers g, which must have been through shape inference and
// inference.DeriveProjections, by running passes in order. After each
// pass, observe (when not nil) is called with the pass and the program.
func LowerWith(g *inference.Graph, passes []Pass, observe func(Pass, *Program) error) (*Program, error) {
	p := &Program{Graph: g}
	for _, ps := range passes {
		if err := ps.Run(p); err != nil {
			return nil, err
		}
		p.Done = append(p.Done, ps.Name)
		p.reached |= ps.Reaches
		if observe != nil {
			if err := observe(ps, p); err != nil {
				return p, err
			}
		}
	}
	return p, nil
}

// Lower runs every standard pass on g, which must have been through
// shape inference and inference.DeriveProjections. Package pipeline is
// the entry point that sequences inference, projections and lowering.
func Lower(g *inference.Graph) (*Program, error) {
	return LowerWith(g, Passes(), nil)
}

// LowerUpTo runs the standard passes up to and including the one named
// name, so that the intermediate stage can be dumped.
func LowerUpTo(g *inference.Graph, name string) (*Program, error) {
	ps, err := UpTo(Passes(), name)
	if err != nil {
		return nil, err
	}
	return LowerWith(g, ps, nil)
}

// Iterator states during the lowering of one operation.
const (
	iterAbsent   = -2 // not in the product space
	iterInactive = -1 // a component of a coupled factor that is not running
)

// lowerer lowers one assignment.
type lowerer struct {
	p    *Program
	a    Assignment
	op   int
	proj *inference.Projections
	lhs  int
	rhs  []int
	// state[it] is the loop variable driving iterator it, or iterAbsent /
	// iterInactive.
	state []int
}

func (l *lowerer) fail(format string, args ...any) error {
	return &Error{Pass: "loops", Op: l.op, Desc: l.a.Description(), Msg: fmt.Sprintf(format, args...)}
}

// passLoops lowers every assignment, of any kind, to loop-IR statements.
func passLoops(p *Program) error {
	p.Ops = nil
	for _, a := range p.Assignments {
		o, err := lowerExtended(p, a)
		if err != nil {
			return err
		}
		p.Ops = append(p.Ops, o)
	}
	return nil
}

func lowerAssignment(p *Program, a Assignment) (*Operation, error) {
	switch a := a.(type) {
	case *Fetch:
		return &Operation{Desc: a.Desc, Op: -1, Assignment: a, Body: []Stmt{&FetchStmt{
			Tensor: a.Tensor, Kind: a.Kind, Value: a.Value,
			Values: append([]float64(nil), a.Values...), Key: a.Key, Seed: a.Seed,
		}}}, nil
	case *AccumOp:
		l := &lowerer{p: p, a: a, op: a.Op, proj: a.Proj, lhs: a.LHS, rhs: a.RHS}
		if err := l.validate(); err != nil {
			return nil, err
		}
		if l.emptyLHS() {
			return &Operation{Desc: a.Desc, Op: a.Op, Assignment: a}, nil
		}
		var body []Stmt
		if a.ZeroInit {
			body = append(body, &Fill{Tensor: a.LHS, Value: Neutral(a.Accum)})
		}
		nest, err := l.nest(0, func() ([]Stmt, error) { return l.accumBody(a) })
		if err != nil {
			return nil, err
		}
		return &Operation{Desc: a.Desc, Op: a.Op, Assignment: a, Body: append(body, nest...)}, nil
	case *Block:
		l := &lowerer{p: p, a: a, op: a.Op, proj: a.Proj, lhs: a.LHS, rhs: a.RHS}
		if err := l.validate(); err != nil {
			return nil, err
		}
		if l.emptyLHS() {
			return &Operation{Desc: a.Desc, Op: a.Op, Assignment: a}, nil
		}
		var body []Stmt
		if a.ZeroInit {
			body = append(body, &Fill{Tensor: a.LHS, Value: Neutral(ops.AccAdd)})
		}
		nest, err := l.nest(0, func() ([]Stmt, error) { return l.blockBody(a) })
		if err != nil {
			return nil, err
		}
		return &Operation{Desc: a.Desc, Op: a.Op, Assignment: a, Body: append(body, nest...)}, nil
	}
	return nil, &Error{Pass: "loops", Op: -1, Msg: fmt.Sprintf("unknown assignment %T", a)}
}

// emptyLHS reports that the operation's result has no cells (an axis of
// size 0, e.g. a discardable concatenation component closed to 0 that is
// also a plain axis): there is nothing to write, so the operation lowers
// to no statements rather than to loops indexing an empty buffer.
func (l *lowerer) emptyLHS() bool {
	return l.p.Graph.Tensors[l.lhs].Shape.Size() == 0
}

// validate checks the projection record against the tensors and sizes
// the iterator table.
func (l *lowerer) validate() error {
	pr := l.proj
	if pr == nil {
		return l.fail("no projections")
	}
	if len(pr.RHS) != len(l.rhs) {
		return l.fail("the projections have %d RHS index maps for %d operands", len(pr.RHS), len(l.rhs))
	}
	if l.lhs < 0 || l.lhs >= len(l.p.Tensors) {
		return l.fail("LHS tensor %d does not exist", l.lhs)
	}
	check := func(what string, t int, idx []inference.Index, dims []int) error {
		if t < 0 || t >= len(l.p.Tensors) {
			return l.fail("%s tensor %d does not exist", what, t)
		}
		ti := &l.p.Tensors[t]
		if len(idx) != len(ti.Dims) {
			return l.fail("%s %s has %d axes but its projection has %d indices", what, ti.Name, len(ti.Dims), len(idx))
		}
		if dims != nil && !slices.Equal(dims, ti.Dims) {
			return l.fail("%s %s has dims %v but its projection says %v", what, ti.Name, ti.Dims, dims)
		}
		return nil
	}
	if err := check("LHS", l.lhs, pr.LHS, pr.LHSDims); err != nil {
		return err
	}
	for i, r := range l.rhs {
		var dims []int
		if i < len(pr.RHSDims) {
			dims = pr.RHSDims[i]
		}
		if err := check(fmt.Sprintf("RHS %d", i), r, pr.RHS[i], dims); err != nil {
			return err
		}
	}
	return l.initIters(nil)
}

// nest emits the loops of product factors f.. around body. A factor with
// one iterator is one loop; a coupled factor is one loop per component,
// in sequence, each making its own iterator the active one. Loops whose
// body is empty (every point a no-op) and zero-extent loops are dropped.
// The loop variable of factor f is i<f>.
func (l *lowerer) nest(f int, body func() ([]Stmt, error)) ([]Stmt, error) {
	if f == len(l.proj.Product) {
		return body()
	}
	fac := l.proj.Product[f]
	var out []Stmt
	for k := range fac.Iters {
		for j, it := range fac.Iters {
			if j == k {
				l.state[it] = f
			} else {
				l.state[it] = iterInactive
			}
		}
		inner, err := l.nest(f+1, body)
		if err != nil {
			return nil, err
		}
		if len(inner) > 0 && fac.Extents[k] > 0 {
			out = append(out, &For{Var: f, Extent: fac.Extents[k], Body: inner})
		}
	}
	for _, it := range fac.Iters {
		l.state[it] = iterInactive
	}
	return out, nil
}

// iterTerm resolves iterator it under the current active components: the
// loop variable, or active=false when it is an inactive component.
func (l *lowerer) iterTerm(it int) (v int, active bool, err error) {
	switch s := l.state[it]; s {
	case iterInactive:
		return 0, false, nil
	case iterAbsent:
		if it < len(l.proj.Extent) && l.proj.Extent[it] <= 1 {
			// A size-one iterator outside the product space sits at 0.
			return -1, true, nil
		}
		return 0, false, l.fail("iterator i%d is not in the product space", it)
	default:
		return s, true, nil
	}
}

// resolve turns a projection index into a loop-IR index under the
// current active components; ok=false means the access is inactive.
func (l *lowerer) resolve(x inference.Index) (e IndexExpr, ok bool, err error) {
	add := func(coeff, it int) (bool, error) {
		v, active, err := l.iterTerm(it)
		if err != nil || !active {
			return false, err
		}
		if v >= 0 && coeff != 0 {
			e.Terms = append(e.Terms, IndexTerm{Coeff: coeff, Var: v})
		}
		return true, nil
	}
	switch x.Kind {
	case inference.IdxFixed:
		e.Offset = x.Offset
		return e, true, nil
	case inference.IdxIter:
		ok, err := add(1, x.Iter)
		return e, ok, err
	case inference.IdxAffine:
		for _, t := range x.Terms {
			if ok, err := add(t.Coeff, t.Iter); !ok || err != nil {
				return IndexExpr{}, false, err
			}
		}
		e.Offset = x.Offset
		return normalize(e), true, nil
	case inference.IdxConcat:
		found := -1
		off, foundOff := 0, 0
		for k, part := range x.Parts {
			if part.Iter >= 0 && l.state[part.Iter] == iterAbsent {
				if part.Size != 0 {
					return IndexExpr{}, false, l.fail("concatenated index %v: component i%d is not in the product space", x, part.Iter)
				}
			} else if part.Iter >= 0 {
				_, active, err := l.iterTerm(part.Iter)
				if err != nil {
					return IndexExpr{}, false, err
				}
				if active {
					if found >= 0 {
						return IndexExpr{}, false, l.fail("concatenated index %v has two active components i%d and i%d", x, x.Parts[found].Iter, part.Iter)
					}
					found, foundOff = k, off
				}
			}
			off += part.Size
		}
		if found < 0 {
			return IndexExpr{}, false, nil
		}
		if _, err := add(1, x.Parts[found].Iter); err != nil {
			return IndexExpr{}, false, err
		}
		e.Offset = foundOff
		return e, true, nil
	case inference.IdxData:
		idx, ok, err := l.access(x.DataIndex)
		if err != nil || !ok {
			return IndexExpr{}, ok, err
		}
		if AnyDynamic(idx) {
			return IndexExpr{}, false, l.fail("the index of a gathered position is itself data-dependent")
		}
		e.Data = &DataIndex{Tensor: x.Data, Index: idx, Name: l.p.Tensors[x.Data].Name}
		return e, true, nil
	}
	return IndexExpr{}, false, l.fail("unknown index kind %d", x.Kind)
}

// normalize merges the terms of equal variables and drops zero ones.
func normalize(e IndexExpr) IndexExpr {
	var ts []IndexTerm
	for _, t := range e.Terms {
		merged := false
		for i := range ts {
			if ts[i].Var == t.Var {
				ts[i].Coeff += t.Coeff
				merged = true
			}
		}
		if !merged {
			ts = append(ts, t)
		}
	}
	out := ts[:0]
	for _, t := range ts {
		if t.Coeff != 0 {
			out = append(out, t)
		}
	}
	return IndexExpr{Terms: out, Offset: e.Offset, Data: e.Data}
}

// access resolves a whole multi-index.
func (l *lowerer) access(idx []inference.Index) ([]IndexExpr, bool, error) {
	out := make([]IndexExpr, len(idx))
	for i, x := range idx {
		e, ok, err := l.resolve(x)
		if err != nil || !ok {
			return nil, false, err
		}
		out[i] = e
	}
	return out, true, nil
}

// accumBody is the innermost statement of an AccumOp under the current
// active components, or nothing when some access is inactive.
func (l *lowerer) accumBody(a *AccumOp) ([]Stmt, error) {
	lhs, ok, err := l.access(a.Proj.LHS)
	if err != nil || !ok {
		return nil, err
	}
	args := make([]Expr, len(a.RHS))
	for i, r := range a.RHS {
		idx, ok, err := l.access(a.Proj.RHS[i])
		if err != nil || !ok {
			return nil, err
		}
		args[i] = &Load{Tensor: r, Index: idx}
	}
	var v Expr = &Apply{Prim: a.Prim, Args: args}
	if a.Prim == ops.ID {
		v = args[0]
	}
	return []Stmt{&Store{Tensor: a.LHS, Index: lhs, Value: v, Accum: a.Accum, Accumulate: a.Accumulate && a.Accum != ops.NoAccum}}, nil
}

// blockBody is the innermost statement of a Block: the one admitted
// source copied into the LHS, nothing, or an ambiguity error.
func (l *lowerer) blockBody(a *Block) ([]Stmt, error) {
	lhs, ok, err := l.access(a.Proj.LHS)
	if err != nil || !ok {
		return nil, err
	}
	sel := selectorAxis(a.Proj.LHS, len(a.RHS))
	var src []int
	var loads []*Load
	for i, r := range a.RHS {
		if sel >= 0 {
			part := a.Proj.LHS[sel].Parts[i]
			if part.Iter < 0 {
				continue
			}
			if l.state[part.Iter] < 0 {
				continue
			}
		}
		idx, ok, err := l.access(a.Proj.RHS[i])
		if err != nil {
			return nil, err
		}
		if ok {
			src = append(src, i)
			loads = append(loads, &Load{Tensor: r, Index: idx})
		}
	}
	switch len(src) {
	case 0:
		return nil, nil
	case 1:
		return []Stmt{&Store{Tensor: a.LHS, Index: lhs, Value: loads[0], Accum: ops.AccAdd, Accumulate: a.Accumulate}}, nil
	}
	name := func(i int) string { return fmt.Sprintf("%d (%s)", i, l.p.Tensors[a.RHS[i]].Name) }
	lt := &l.p.Tensors[a.LHS]
	return nil, l.fail("ambiguous indices in concatenation: operands %s and %s both write %s at %s",
		name(src[0]), name(src[1]), lt.Name, formatAccess(lt.Name, lhs))
}

// initIters sizes the iterator table for the record and the extra index
// maps, and marks the product space's iterators inactive.
func (l *lowerer) initIters(extra [][]inference.Index) error {
	pr := l.proj
	if pr == nil {
		return l.fail("no projections")
	}
	n := pr.NumIters
	note := func(it int) {
		if it+1 > n {
			n = it + 1
		}
	}
	for fi, f := range pr.Product {
		if len(f.Iters) == 0 || len(f.Iters) != len(f.Extents) {
			return l.fail("product factor %d has %d iterators and %d extents", fi, len(f.Iters), len(f.Extents))
		}
		for k, it := range f.Iters {
			if it < 0 || f.Extents[k] < 0 {
				return l.fail("product factor %d has a negative iterator or extent", fi)
			}
			note(it)
		}
	}
	all := append(append([][]inference.Index{pr.LHS}, pr.RHS...), extra...)
	for _, idxs := range all {
		for _, x := range idxs {
			for _, it := range x.Iters() {
				if it < 0 {
					return l.fail("index %v mentions a negative iterator", x)
				}
				note(it)
			}
		}
	}
	l.state = make([]int, n)
	for i := range l.state {
		l.state[i] = iterAbsent
	}
	for _, f := range pr.Product {
		for _, it := range f.Iters {
			if l.state[it] != iterAbsent {
				return l.fail("iterator i%d occurs twice in the product space", it)
			}
			l.state[it] = iterInactive
		}
	}
	return nil
}

// selectorAxis is the Block selector rule, shared by Block and its
// reverse (RevBlock): when the concatenated side has exactly one IdxConcat
// axis with one part per source, part i admits source i only; it returns
// that axis, or a negative value when the rule does not apply.
func selectorAxis(idx []inference.Index, sources int) int {
	sel := -1
	for i, x := range idx {
		if x.Kind == inference.IdxConcat {
			if sel != -1 {
				return -2
			}
			sel = i
		}
	}
	if sel >= 0 && len(idx[sel].Parts) != sources {
		return -1
	}
	return sel
}
