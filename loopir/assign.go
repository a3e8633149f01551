package loopir

import (
	"fmt"
	"strings"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/ops"
	"github.com/ocannlgen/ocannlgen/rt"
)

// Assignment is an assignment-IR statement: *AccumOp, *Block or *Fetch.
type Assignment interface {
	// Description is the text Dump prints as the statement's header.
	Description() string
	isAssignment()
}

// AccumOp is an accumulating operation (digest §4.5): at every point of
// the product space Proj.Product, v = Prim(RHS values); with Accumulate
// the LHS cell becomes Accum(LHS cell, v), otherwise v. A point at which
// some RHS access or the LHS access is inactive (it mentions an inactive
// component of a coupled factor) does nothing.
type AccumOp struct {
	Desc string
	// Op is the graph operation's index (-1 when built by hand).
	Op  int
	LHS int
	RHS []int
	// Prim is the primitive (see Arity); Accum the accumulation operator
	// (ops.AccAdd, AccSub, AccMul, AccDiv, AccMax, AccMin, or ops.NoAccum
	// for overwrite).
	Prim  ops.PrimName
	Accum ops.AccumName
	// InitNeutral records the `=:` form.
	InitNeutral bool
	// ZeroInit: fill the LHS with Neutral(Accum) before the loops.
	ZeroInit bool
	// Accumulate: the store combines with the old value.
	Accumulate bool
	Proj       *inference.Projections
}

// Block is a concatenation (OCANNL's Block, `++^`, and stacking): at
// every point of the product space at most one RHS may be active, and its
// value is added into the LHS (stored when not Accumulate). If the LHS
// has exactly one concatenated axis with exactly len(RHS) parts, RHS i is
// admitted only while part i is active. No active RHS, or an inactive LHS
// access, is a no-op; two active RHS are an ambiguity error at lowering.
type Block struct {
	Desc string
	// Op is the graph operation's index (-1 when built by hand).
	Op         int
	LHS        int
	RHS        []int
	ZeroInit   bool
	Accumulate bool
	Proj       *inference.Projections
}

// Fetch initializes a leaf tensor.
type Fetch struct {
	Desc   string
	Tensor int
	Kind   FetchKind
	Value  float64
	Values []float64
	// Key and Seed key FetchRandom (rt.ParamKey of the tensor's name and
	// rt.DefaultSeed).
	Key  [4]uint32
	Seed uint64
}

// Description implements Assignment.
func (a *AccumOp) Description() string { return a.Desc }

// Description implements Assignment.
func (a *Block) Description() string { return a.Desc }

// Description implements Assignment.
func (a *Fetch) Description() string { return a.Desc }

func (*AccumOp) isAssignment() {}
func (*Block) isAssignment()   {}
func (*Fetch) isAssignment()   {}

// Error is a lowering failure.
type Error struct {
	// Pass is the pass that failed.
	Pass string
	// Op is the graph operation (or -1).
	Op int
	// Desc describes the operation.
	Desc string
	Msg  string
}

// Error formats the failure with its pass and operation.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("loopir")
	if e.Pass != "" {
		fmt.Fprintf(&b, ": pass %s", e.Pass)
	}
	if e.Op >= 0 {
		fmt.Fprintf(&b, ": op %d", e.Op)
	}
	if e.Desc != "" {
		fmt.Fprintf(&b, " (%s)", e.Desc)
	}
	return b.String() + ": " + e.Msg
}

// passAssign builds the tensor table and the assignments: a Fetch per
// leaf tensor (Input, Leaf, Param, Number, Literal, DimScalar) in tensor
// order, then an AccumOp or Block per graph operation in program order.
func passAssign(p *Program) error {
	g := p.Graph
	if g == nil {
		return &Error{Pass: "assign", Op: -1, Msg: "no graph"}
	}
	p.Tensors = make([]TensorInfo, len(g.Tensors))
	p.Assignments = nil
	for i, t := range g.Tensors {
		if t == nil {
			return &Error{Pass: "assign", Op: -1, Msg: fmt.Sprintf("tensor %d is nil", i)}
		}
		var dims []int
		for _, d := range t.Shape.Dims() {
			if d.Size < 0 {
				return &Error{Pass: "assign", Op: -1, Msg: fmt.Sprintf("tensor %s has a negative dim %d", t.Name, d.Size)}
			}
			dims = append(dims, d.Size)
		}
		if t.Padding != nil && len(t.Padding) != len(dims) {
			return &Error{Pass: "assign", Op: -1, Msg: fmt.Sprintf("tensor %s has %d padding entries for %d axes", t.Name, len(t.Padding), len(dims))}
		}
		for _, pd := range t.Padding {
			if pd.Left < 0 || pd.Right < 0 {
				return &Error{Pass: "assign", Op: -1, Msg: fmt.Sprintf("tensor %s has a negative padding %+v", t.Name, pd)}
			}
		}
		p.Tensors[i] = TensorInfo{
			Name:    t.Name,
			Kind:    t.Kind,
			Dims:    dims,
			Padding: append([]inference.Padding(nil), t.Padding...),
			BufDims: append([]int(nil), dims...),

			IndexBound: t.IndexBound,
		}
		if f := fetchOf(t); f != nil {
			f.Tensor = i
			p.Assignments = append(p.Assignments, f)
		}
	}
	for i, op := range g.Ops {
		a, err := assignmentOf(g, i, op)
		if err != nil {
			return err
		}
		p.Assignments = append(p.Assignments, a)
	}
	return nil
}

// fetchOf returns the initializer of a leaf tensor, or nil for results
// and targets (which start as zeros).
func fetchOf(t *inference.Tensor) *Fetch {
	f := &Fetch{Desc: fmt.Sprintf("init %s (%s)", t.Name, t.Kind)}
	switch t.Kind {
	case inference.Result, inference.Target:
		return nil
	case inference.DimScalar:
		f.Kind, f.Value = FetchConst, float64(t.DimValue)
		return f
	}
	switch t.Init.Kind {
	case inference.InitZero:
		f.Kind = FetchZero
	case inference.InitConst:
		f.Kind, f.Value = FetchConst, t.Init.Value
	case inference.InitRange:
		f.Kind = FetchRange
	case inference.InitValues:
		f.Kind, f.Values = FetchValues, append([]float64(nil), t.Init.Values...)
	case inference.InitRandom:
		f.Kind, f.Key, f.Seed = FetchRandom, rt.ParamKey(t.Name), rt.DefaultSeed
	case inference.InitDropout:
		f.Kind, f.Key, f.Value = FetchDropout, rt.ParamKey(t.Name), t.Init.Value
	}
	return f
}

// assignmentOf builds the assignment of graph operation i.
func assignmentOf(g *inference.Graph, i int, op *inference.Op) (Assignment, error) {
	fail := func(format string, args ...any) error {
		return &Error{Pass: "assign", Op: i, Desc: op.Desc, Msg: fmt.Sprintf(format, args...)}
	}
	if op.Proj == nil {
		return nil, fail("the operation has no projections (run inference.DeriveProjections first)")
	}
	if op.LHS < 0 || op.LHS >= len(g.Tensors) {
		return nil, fail("LHS tensor %d does not exist", op.LHS)
	}
	for _, r := range op.RHS {
		if r < 0 || r >= len(g.Tensors) {
			return nil, fail("RHS tensor %d does not exist", r)
		}
	}
	if len(op.Proj.RHS) != len(op.RHS) {
		return nil, fail("the projections have %d RHS index maps for %d operands", len(op.Proj.RHS), len(op.RHS))
	}
	desc := op.Desc
	if desc == "" {
		desc = "operation"
	}
	desc = g.Tensors[op.LHS].Name + " = " + desc
	if op.Kind == inference.OpBlock || op.Kind == inference.OpStack {
		return &Block{
			Desc: desc, Op: i, LHS: op.LHS, RHS: append([]int(nil), op.RHS...),
			// Stacking (Accum "") writes each cell once: a plain store.
			ZeroInit: op.Proj.ZeroInit, Accumulate: op.Proj.Accumulate && op.Accum != ops.NoAccum, Proj: op.Proj,
		}, nil
	}
	if op.Kind == inference.OpGather {
		// The index input is read through the IdxData index of the
		// gathered axis, not as a value.
		proj := *op.Proj
		proj.RHS, proj.RHSDims = proj.RHS[:1], proj.RHSDims[:1]
		return &AccumOp{
			Desc: desc, Op: i, LHS: op.LHS, RHS: []int{op.RHS[0]},
			Prim: op.Prim, Accum: op.Accum, InitNeutral: op.InitNeutral,
			ZeroInit: proj.ZeroInit, Accumulate: proj.Accumulate, Proj: &proj,
		}, nil
	}
	n := Arity(op.Prim)
	if n == 0 {
		return nil, fail("unknown primitive %q", op.Prim)
	}
	if n != len(op.RHS) {
		return nil, fail("primitive %q takes %d operand(s), got %d", op.Prim, n, len(op.RHS))
	}
	if !validAccum(op.Accum) {
		return nil, fail("unknown accumulation operator %q", op.Accum)
	}
	a := &AccumOp{
		Desc: desc, Op: i, LHS: op.LHS, RHS: append([]int(nil), op.RHS...),
		Prim: op.Prim, Accum: op.Accum, InitNeutral: op.InitNeutral,
		ZeroInit: op.Proj.ZeroInit, Accumulate: op.Proj.Accumulate, Proj: op.Proj,
	}
	return a, nil
}
