package loopir

import (
	"fmt"
	"strings"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/ops"
)

// Assignment kinds for backpropagation (package autodiff). They are
// lowered by the same "loops" machinery as AccumOp and Block: coupled
// factors become consecutive loops, concatenated indices resolve to the
// active component, and inactive accesses drop. They enter a program
// through LowerExtended.

// Compute is an assignment whose value is an expression tree over loads
// of several tensors, all indexed by maps over the iterators of one
// projection record Proj (typically a forward operation's record, reused
// with its slots permuted: a gradient `g1 =+ g * v2` stores at Proj.RHS[0]
// and loads at Proj.LHS and Proj.RHS[1]).
//
// The statements run at every live point of Proj's product space: a point
// at which every access of the record itself (Proj.LHS and each Proj.RHS
// map) is active, i.e. exactly the points at which the forward operation
// owning Proj did something. At a live point the Stores run in order; if
// one of their own accesses (store or load) is inactive, the whole point
// is a no-op. A record without factors is a single point.
type Compute struct {
	Desc string
	// Op is the graph operation whose projections are reused (-1 if none).
	Op     int
	Proj   *inference.Projections
	Stores []*ComputeStore
	// Pad gives, for a padded tensor the computation loads, the value its
	// margins are reset to before the loops (the "pad" pass); tensors not
	// listed get 0. A gradient that re-reads a forward operand uses the
	// forward operation's neutral element (-inf for a max-pool).
	Pad map[int]float64
}

// ComputeStore is one statement of a Compute: Tensor[Index] = Value, or
// with Accumulate Tensor[Index] = Accum(Tensor[Index], Value).
type ComputeStore struct {
	Tensor     int
	Index      []inference.Index
	Value      ProjExpr
	Accum      ops.AccumName
	Accumulate bool
}

// ProjExpr is an expression over projection indices: *ProjLoad,
// *ProjConst or *ProjApply.
type ProjExpr interface{ isProjExpr() }

// ProjLoad reads Tensor at Index (an index map over the record's
// iterators).
type ProjLoad struct {
	Tensor int
	Index  []inference.Index
}

// ProjConst is a constant.
type ProjConst struct{ Value float64 }

// ProjApply applies a primitive (see Arity) to its arguments.
type ProjApply struct {
	Prim ops.PrimName
	Args []ProjExpr
}

func (*ProjLoad) isProjExpr()  {}
func (*ProjConst) isProjExpr() {}
func (*ProjApply) isProjExpr() {}

// RevBlock is the reverse of a Block (OCANNL's Rev_sides, the gradient of
// a concatenation or stacking): the roles of the sides are swapped. At
// every point of Proj's product space Src is read at Proj.LHS and added
// (stored when not Accumulate) into the one admitted target Dst[i] at
// Proj.RHS[i]. The admission rule is the Block's: if Proj.LHS has exactly
// one concatenated axis with exactly len(Dst) parts, target i is admitted
// only while part i is active, and a target whose access is inactive is
// not admitted. No admitted target, or an inactive Src access, is a no-op;
// two admitted targets are an ambiguity error at lowering. Dst[i] < 0
// means target i receives nothing (it still counts for admission).
type RevBlock struct {
	Desc       string
	Op         int
	Src        int
	Dst        []int
	Accumulate bool
	Proj       *inference.Projections
}

// Clear sets every cell of each tensor's buffer, padding margins
// included, to Value (one Fill per tensor).
type Clear struct {
	Desc    string
	Tensors []int
	Value   float64
}

// Description implements Assignment.
func (a *Compute) Description() string { return a.Desc }

// Description implements Assignment.
func (a *RevBlock) Description() string { return a.Desc }

// Description implements Assignment.
func (a *Clear) Description() string { return a.Desc }

func (*Compute) isAssignment()  {}
func (*RevBlock) isAssignment() {}
func (*Clear) isAssignment()    {}

// AddTensor appends a tensor (for example a gradient or a scratch scalar)
// to the program's table and returns its index. BufDims defaults to Dims;
// Padding is copied.
func (p *Program) AddTensor(t TensorInfo) int {
	t.Dims = append([]int(nil), t.Dims...)
	t.Padding = append([]inference.Padding(nil), t.Padding...)
	if t.BufDims == nil {
		t.BufDims = append([]int(nil), t.Dims...)
	} else {
		t.BufDims = append([]int(nil), t.BufDims...)
	}
	p.Tensors = append(p.Tensors, t)
	return len(p.Tensors) - 1
}

// LowerExtended lowers g like Lower, but after the "assign" pass calls
// extend (the pass ExtendPass("extend", extend)), which may add tensors
// (AddTensor) and append assignments to p.Assignments (any kind,
// including Compute, RevBlock and Clear); the operations run in
// assignment order. The other standard passes then run over everything,
// the "loops" pass lowering the extra kinds too. In the "pad" pass, the
// margin resets of Compute operations take their values from
// Compute.Pad, and those of RevBlock operations are 0.
func LowerExtended(g *inference.Graph, extend func(p *Program) error) (*Program, error) {
	return LowerWith(g, ExtendedPasses("extend", extend), nil)
}

// ExtendedPasses is the standard pass list with ExtendPass(name, extend)
// right after "assign" (nil extend adds nothing).
func ExtendedPasses(name string, extend func(p *Program) error) []Pass {
	std := Passes()
	if extend == nil {
		return std
	}
	return Concat(std[:1], []Pass{ExtendPass(name, extend)}, std[1:])
}

// patchPadding sets the margin resets of the extra assignment kinds.
func patchPadding(p *Program) {
	for _, o := range p.Ops {
		var pad map[int]float64
		switch a := o.Assignment.(type) {
		case *Compute:
			pad = a.Pad
		case *RevBlock, *Clear:
		default:
			continue
		}
		for _, s := range o.Body {
			if r, ok := s.(*ResetPadding); ok {
				r.Value = pad[r.Tensor]
			}
		}
	}
}

// lowerExtended lowers one assignment of any kind.
func lowerExtended(p *Program, a Assignment) (*Operation, error) {
	switch a := a.(type) {
	case *Clear:
		o := &Operation{Desc: a.Desc, Op: -1, Assignment: a}
		for _, t := range a.Tensors {
			if t < 0 || t >= len(p.Tensors) {
				return nil, &Error{Pass: "loops", Op: -1, Desc: a.Desc, Msg: fmt.Sprintf("tensor %d does not exist", t)}
			}
			o.Body = append(o.Body, &Fill{Tensor: t, Value: a.Value})
		}
		return o, nil
	case *Compute:
		l := &lowerer{p: p, a: a, op: a.Op, proj: a.Proj}
		if err := l.validateCompute(a); err != nil {
			return nil, err
		}
		body, err := l.nest(0, func() ([]Stmt, error) { return l.computeBody(a) })
		if err != nil {
			return nil, err
		}
		return &Operation{Desc: a.Desc, Op: a.Op, Assignment: a, Body: body}, nil
	case *RevBlock:
		l := &lowerer{p: p, a: a, op: a.Op, proj: a.Proj}
		if err := l.validateRevBlock(a); err != nil {
			return nil, err
		}
		body, err := l.nest(0, func() ([]Stmt, error) { return l.revBlockBody(a) })
		if err != nil {
			return nil, err
		}
		return &Operation{Desc: a.Desc, Op: a.Op, Assignment: a, Body: body}, nil
	}
	return lowerAssignment(p, a)
}

// checkRank reports an index map whose length differs from the tensor's
// rank.
func (l *lowerer) checkRank(what string, t int, idx []inference.Index) error {
	if t < 0 || t >= len(l.p.Tensors) {
		return l.fail("%s tensor %d does not exist", what, t)
	}
	if ti := &l.p.Tensors[t]; len(idx) != len(ti.Dims) {
		return l.fail("%s %s has %d axes but its index map has %d indices", what, ti.Name, len(ti.Dims), len(idx))
	}
	return nil
}

func (l *lowerer) validateCompute(c *Compute) error {
	var extra [][]inference.Index
	var err error
	var walk func(e ProjExpr)
	walk = func(e ProjExpr) {
		switch e := e.(type) {
		case *ProjLoad:
			extra = append(extra, e.Index)
			if err == nil {
				err = l.checkRank("load of", e.Tensor, e.Index)
			}
		case *ProjApply:
			if n := Arity(e.Prim); (n == 0 || n != len(e.Args)) && err == nil {
				err = l.fail("primitive %q applied to %d operand(s)", e.Prim, len(e.Args))
			}
			for _, a := range e.Args {
				walk(a)
			}
		case *ProjConst:
		default:
			if err == nil {
				err = l.fail("unknown expression %T", e)
			}
		}
	}
	for _, s := range c.Stores {
		if s == nil {
			return l.fail("nil store")
		}
		if err := l.checkRank("store into", s.Tensor, s.Index); err != nil {
			return err
		}
		if !validAccum(s.Accum) {
			return l.fail("unknown accumulation operator %q", s.Accum)
		}
		extra = append(extra, s.Index)
		walk(s.Value)
		if err != nil {
			return err
		}
	}
	return l.initIters(extra)
}

func (l *lowerer) validateRevBlock(a *RevBlock) error {
	if a.Proj == nil {
		return l.fail("no projections")
	}
	if len(a.Dst) != len(a.Proj.RHS) {
		return l.fail("the projections have %d RHS index maps for %d targets", len(a.Proj.RHS), len(a.Dst))
	}
	if err := l.checkRank("source", a.Src, a.Proj.LHS); err != nil {
		return err
	}
	for i, d := range a.Dst {
		if d < 0 {
			continue
		}
		if err := l.checkRank(fmt.Sprintf("target %d", i), d, a.Proj.RHS[i]); err != nil {
			return err
		}
	}
	return l.initIters(nil)
}

// projExpr resolves an expression under the current active components;
// ok=false when one of its loads is inactive.
func (l *lowerer) projExpr(e ProjExpr) (Expr, bool, error) {
	switch e := e.(type) {
	case *ProjConst:
		return &Const{Value: e.Value}, true, nil
	case *ProjLoad:
		idx, ok, err := l.access(e.Index)
		if err != nil || !ok {
			return nil, false, err
		}
		return &Load{Tensor: e.Tensor, Index: idx}, true, nil
	case *ProjApply:
		args := make([]Expr, len(e.Args))
		for i, a := range e.Args {
			v, ok, err := l.projExpr(a)
			if err != nil || !ok {
				return nil, false, err
			}
			args[i] = v
		}
		if e.Prim == ops.ID && len(args) == 1 {
			return args[0], true, nil
		}
		return &Apply{Prim: e.Prim, Args: args}, true, nil
	}
	return nil, false, l.fail("unknown expression %T", e)
}

// computeBody is the innermost code of a Compute under the current active
// components: nothing at a point that is not live.
func (l *lowerer) computeBody(c *Compute) ([]Stmt, error) {
	for _, idx := range append([][]inference.Index{c.Proj.LHS}, c.Proj.RHS...) {
		if _, ok, err := l.access(idx); err != nil || !ok {
			return nil, err
		}
	}
	var out []Stmt
	for _, s := range c.Stores {
		idx, ok, err := l.access(s.Index)
		if err != nil || !ok {
			return nil, err
		}
		v, ok, err := l.projExpr(s.Value)
		if err != nil || !ok {
			return nil, err
		}
		out = append(out, &Store{Tensor: s.Tensor, Index: idx, Value: v, Accum: s.Accum, Accumulate: s.Accumulate && s.Accum != ops.NoAccum})
	}
	return out, nil
}

// revBlockBody is the innermost statement of a RevBlock: the source added
// into the one admitted target, nothing, or an ambiguity error.
func (l *lowerer) revBlockBody(a *RevBlock) ([]Stmt, error) {
	src, ok, err := l.access(a.Proj.LHS)
	if err != nil || !ok {
		return nil, err
	}
	sel := selectorAxis(a.Proj.LHS, len(a.Dst))
	var admitted []int
	var idxs [][]IndexExpr
	for i := range a.Dst {
		if sel >= 0 {
			part := a.Proj.LHS[sel].Parts[i]
			if part.Iter < 0 || l.state[part.Iter] < 0 {
				continue
			}
		}
		idx, ok, err := l.access(a.Proj.RHS[i])
		if err != nil {
			return nil, err
		}
		if ok {
			admitted = append(admitted, i)
			idxs = append(idxs, idx)
		}
	}
	switch len(admitted) {
	case 0:
		return nil, nil
	case 1:
		d := a.Dst[admitted[0]]
		if d < 0 {
			return nil, nil
		}
		return []Stmt{&Store{Tensor: d, Index: idxs[0], Value: &Load{Tensor: a.Src, Index: src}, Accum: ops.AccAdd, Accumulate: a.Accumulate}}, nil
	}
	name := func(i int) string {
		if a.Dst[i] < 0 {
			return fmt.Sprintf("%d", i)
		}
		return fmt.Sprintf("%d (%s)", i, l.p.Tensors[a.Dst[i]].Name)
	}
	st := &l.p.Tensors[a.Src]
	return nil, l.fail("ambiguous indices in reversed concatenation: targets %s and %s both read %s",
		name(admitted[0]), name(admitted[1]), formatAccess(st.Name, src))
}

// DumpOps prints the given operations of the lowered program like Dump
// does (a `# description` header and the loop nest of each).
func (p *Program) DumpOps(ops []*Operation) string {
	var b strings.Builder
	for i, o := range ops {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "# %s\n", o.Desc)
		for _, s := range o.Body {
			p.dumpStmt(&b, s, 0)
		}
	}
	return b.String()
}
