package inference

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/ocannlgen/ocannlgen/ops"
	"github.com/ocannlgen/ocannlgen/spec"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// builder elaborates a program into a graph and emits each operation's
// shape constraints into the solver as it goes (the online Stage 1).
type builder struct {
	s     *solver
	g     *Graph
	names map[string]int // name -> tensor
	// captures maps a captured label to its variable in the latest spec
	// application that captured it.
	captures map[string]capture
	pending  map[string]pendingDim
	dimRefs  []int // DimScalar tensors, resolved after inference
	anon     map[string]int
}

type capture struct {
	isRow bool
	d     dim
	rv    int32
	o     int32
}

type pendingDim struct {
	value int
	pos   spec.Pos
}

func errAt(kind ErrorKind, p spec.Pos, format string, args ...any) *Error {
	return &Error{Kind: kind, Pos: p, Msg: fmt.Sprintf(format, args...)}
}

func newBuilder() *builder {
	return &builder{
		s:        newSolver(),
		g:        &Graph{},
		names:    map[string]int{},
		captures: map[string]capture{},
		pending:  map[string]pendingDim{},
		anon:     map[string]int{},
	}
}

// newTensor adds a tensor with fresh open rows.
func (b *builder) newTensor(name string, kind TensorKind, p spec.Pos) *Tensor {
	t := &Tensor{ID: len(b.g.Tensors), Name: name, Kind: kind, Pos: p, Op: -1}
	b.g.Tensors = append(b.g.Tensors, t)
	o := b.s.addOrigin(origin{op: fmt.Sprintf("%s %s", kind, name), pos: p})
	for k := range 3 {
		t.rows[k] = openRow(b.s.newRowVar(int32(t.ID), int8(k), o))
	}
	return t
}

func (b *builder) name(t *Tensor, name string, kind TensorKind) {
	b.names[name] = t.ID
	b.g.Named = append(b.g.Named, NamedTensor{Name: name, Kind: kind, Tensor: t.ID})
}

func (b *builder) define(name string, p spec.Pos) error {
	if _, ok := b.names[name]; ok {
		return errAt(KindName, p, "%s is already defined", spec.Quote(name))
	}
	return nil
}

func rowDims(d *program.RowDecl) []program.DimDecl {
	if d == nil {
		return nil
	}
	return d.Dims
}

func declRow(d *program.RowDecl) (dims []dim, unknown bool) {
	if d == nil {
		return nil, false
	}
	if d.Unknown {
		return nil, true
	}
	for _, x := range d.Dims {
		basis := x.Basis
		if basis == "" {
			basis = BasisDefault
		}
		if x.Max {
			basis = BasisRows
		}
		dims = append(dims, dconst(x.Size, basis))
	}
	return dims, false
}

func (b *builder) setDeclShape(t *Tensor, sd *program.ShapeDecl) error {
	for _, rd := range []*program.RowDecl{sd.Batch, sd.Input, sd.Output} {
		if rd == nil {
			continue
		}
		for _, d := range rd.Dims {
			if d.Name != "" && d.Size == 0 {
				return errAt(KindName, d.Pos, "the size %s in the shape of %s is not a number: sizes in a shape are integer literals (a Go model may also name a package-level integer constant)", d.Name, t.Name)
			}
			if d.Size <= 0 {
				return errAt(KindDimMismatch, d.Pos, "the shape of %s has an axis of size %d: sizes must be positive", t.Name, d.Size)
			}
		}
	}
	if err := checkDeclSize(t.Name, sd); err != nil {
		return err
	}
	rows := [3]*program.RowDecl{sd.Batch, sd.Input, sd.Output}
	for k, rd := range rows {
		for i, d := range rowDims(rd) {
			if d.Max && (t.Kind != Input || k != int(spec.Batch) || i != 0) {
				return errAt(KindParse, d.Pos, "the shape of %s: <=%d (a number of rows chosen at run time) is allowed only as the leftmost batch axis of an input", t.Name, d.Size)
			}
		}
	}
	for k, rd := range rows {
		dims, unknown := declRow(rd)
		if !unknown {
			t.rows[k] = closedRow(dims...)
		}
	}
	return nil
}

func (b *builder) stmt(st program.Stmt) error {
	switch st := st.(type) {
	case *program.InputStmt:
		p := st.Pos
		if err := b.define(st.Name, p); err != nil {
			return err
		}
		t := b.newTensor(st.Name, Input, p)
		if err := b.setDeclShape(t, st.Shape); err != nil {
			return err
		}
		if err := b.setIndexBound(t, st); err != nil {
			return err
		}
		if err := b.setInit(t, st.Init); err != nil {
			return err
		}
		b.name(t, st.Name, Input)
	case *program.LeafStmt:
		p := st.Pos
		if err := b.define(st.Name, p); err != nil {
			return err
		}
		t := b.newTensor(st.Name, Leaf, p)
		if st.Shape != nil {
			if err := b.setDeclShape(t, st.Shape); err != nil {
				return err
			}
		}
		if err := b.setInit(t, st.Init); err != nil {
			return err
		}
		b.name(t, st.Name, Leaf)
	case *program.ParamStmt:
		p := st.Pos
		if err := b.define(st.Name, p); err != nil {
			return err
		}
		t, err := b.newParam(st.Name, p, st.Fields)
		if err != nil {
			return err
		}
		if err := b.setInit(t, st.Init); err != nil {
			return err
		}
		if st.Init == nil {
			t.Init = TensorInit{Kind: InitRandom}
		}
		b.name(t, st.Name, Param)
	case *program.LetStmt:
		p := st.Pos
		if err := b.define(st.Name, p); err != nil {
			return err
		}
		id, err := b.letExpr(st)
		if err != nil {
			return err
		}
		t := b.g.Tensors[id]
		if t.Op >= 0 && t.Kind == Result && strings.HasPrefix(t.Name, "_") {
			t.Name = st.Name
		}
		kind := t.Kind
		if kind == Result || kind == Number || kind == Literal || kind == DimScalar {
			kind = Result
		}
		b.name(t, st.Name, kind)
	case *program.DimStmt:
		if st.ValueName != "" {
			return errAt(KindParse, st.Pos, "dim %s = %s: a size given by name is only allowed inside a layer, for its configuration arguments", st.Name, st.ValueName)
		}
		return b.setDim(st.Name, st.Value, st.Pos)
	case *program.AssignStmt:
		return b.assign(st)
	case *program.LayerStmt, *program.EntryStmt, *program.OptimStmt:
		return errAt(KindParse, st.StmtPos(), "layers, entry points and optimizer settings belong to models (package model expands them)")
	default:
		return errAt(KindParse, st.StmtPos(), "unsupported statement %T", st)
	}
	return nil
}

func (b *builder) newParam(name string, p spec.Pos, fields []program.Field) (*Tensor, error) {
	t := b.newTensor(name, Param, p)
	t.rows[spec.Batch] = closedRow()
	for _, f := range fields {
		for i, n := range f.Names {
			if n != "" {
				return nil, errAt(KindParse, f.Pos, "field %c: the size %s is given by name, which is only allowed inside a layer", f.Kind, f.Names[i])
			}
		}
		dims := make([]dim, len(f.Dims))
		for i, n := range f.Dims {
			if n <= 0 {
				return nil, errAt(KindParse, f.Pos, "dimension %d in field %c of %s must be positive", n, f.Kind, spec.Quote(name))
			}
			dims[i] = dconst(n, BasisDefault)
		}
		switch f.Kind {
		case 'o':
			t.rows[spec.Output] = closedRow(dims...)
		case 'i':
			t.rows[spec.Input] = closedRow(dims...)
		case 'b':
			t.rows[spec.Batch] = closedRow(dims...)
		default:
			return nil, errAt(KindParse, f.Pos, "unknown field %s (want o, i or b)", spec.Quote(string(f.Kind)))
		}
	}
	t.Init = TensorInit{Kind: InitRandom}
	return t, nil
}

func (b *builder) setInit(t *Tensor, in *program.Init) error {
	if in == nil {
		return nil
	}
	switch in.Kind {
	case program.InitRange:
		t.Init = TensorInit{Kind: InitRange}
	case program.InitDropout:
		if t.Kind != Leaf {
			return errAt(KindParse, in.Pos, "%s: only a leaf can be a dropout mask (leaf NAME = dropout P)", t.Name)
		}
		if !(in.Number >= 0 && in.Number < 1) {
			return errAt(KindParse, in.Pos, "dropout %g: the probability of dropping a cell must be in [0, 1)", in.Number)
		}
		t.Init = TensorInit{Kind: InitDropout, Value: in.Number}
	case program.InitNumber:
		t.Init = TensorInit{Kind: InitConst, Value: in.Number}
	case program.InitLiteral:
		shape, values, err := numericLiteral(in.Literal)
		if err != nil {
			return err
		}
		t.Init = TensorInit{Kind: InitValues, Values: values}
		// A literal init gives the shape where the declaration left it open.
		// Where the declaration gives the row, the literal must agree on
		// the sizes, and the declaration's bases win (a literal carries no
		// basis of its own, as `input rgb : 3:rgb = [1; 2; 3]`).
		for k := range 3 {
			r := b.s.resolveRow(t.rows[k])
			if r.open() {
				t.rows[k] = closedRow(shape[k]...)
				continue
			}
			decl := r.flat()
			lit := shape[k]
			if len(decl) == len(lit) {
				for i := range lit {
					if d := b.s.resolve(decl[i]); d.k == dConst && d.n == lit[i].n {
						lit[i] = d
					}
				}
			}
			o := b.s.addOrigin(origin{op: fmt.Sprintf("initializer of %s", t.Name), pos: in.Pos})
			b.s.push(constraint{k: cRowEq, r1: t.rows[k], r2: closedRow(lit...), origin: o})
		}
	}
	return nil
}

// numericLiteral computes the shape and memory-order values of a literal
// whose leaves are all numbers. ok is false (with a nil error) when some
// item is not numeric.
func numericLiteral(l *program.Literal) (shape [3][]dim, values []float64, err error) {
	// axes in nesting order: kind and size
	type axis struct {
		kind spec.Kind
		size int
	}
	var axes []axis
	var flat []float64
	var walk func(e program.Expr, depth int) error
	walk = func(e program.Expr, depth int) error {
		switch e := e.(type) {
		case *program.Number:
			if depth != len(axes) {
				return errAt(KindParse, e.Pos, "ragged literal: a number where a nested literal was expected")
			}
			flat = append(flat, e.Value)
			return nil
		case *program.Literal:
			k := litKind(e.Kind)
			if depth == len(axes) {
				if len(flat) > 0 {
					return errAt(KindParse, e.Pos, "ragged literal: a nested literal where a number was expected")
				}
				axes = append(axes, axis{k, len(e.Items)})
			} else if axes[depth].kind != k || axes[depth].size != len(e.Items) {
				return errAt(KindParse, e.Pos, "ragged literal: expected %d items of kind %s, found %d of kind %s",
					axes[depth].size, axes[depth].kind, len(e.Items), k)
			}
			if len(e.Items) == 0 {
				return errAt(KindParse, e.Pos, "empty literal")
			}
			for _, it := range e.Items {
				if err := walk(it, depth+1); err != nil {
					return err
				}
			}
			return nil
		}
		return errAt(KindParse, e.ExprPos(), "literal items must be numbers or nested literals here")
	}
	if err := walk(l, 0); err != nil {
		return shape, nil, err
	}
	// Nesting order to memory order (batch, output, input; within a kind,
	// the outer container first).
	var perm []int
	for _, k := range spec.MemoryOrder {
		for i, a := range axes {
			if a.kind == k {
				perm = append(perm, i)
				shape[k] = append(shape[k], dconst(a.size, BasisDefault))
			}
		}
	}
	sizes := make([]int, len(axes))
	for i, a := range axes {
		sizes[i] = a.size
	}
	values = make([]float64, len(flat))
	idx := make([]int, len(axes)) // memory-order multi-index
	for m := range values {
		// nesting-order offset of the memory-order index idx
		off := 0
		nest := make([]int, len(axes))
		for j, p := range perm {
			nest[p] = idx[j]
		}
		for i := range axes {
			off = off*sizes[i] + nest[i]
		}
		values[m] = flat[off]
		for j := len(idx) - 1; j >= 0; j-- {
			idx[j]++
			if idx[j] < sizes[perm[j]] {
				break
			}
			idx[j] = 0
		}
	}
	return shape, values, nil
}

func litKind(k program.LitKind) spec.Kind {
	switch k {
	case program.LitBatch:
		return spec.Batch
	case program.LitInput:
		return spec.Input
	}
	return spec.Output
}

func isNumericLiteral(l *program.Literal) bool {
	for _, it := range l.Items {
		switch it := it.(type) {
		case *program.Number:
		case *program.Literal:
			if !isNumericLiteral(it) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// anonName generates a stable name for an anonymous intermediate.
func (b *builder) anonName(hint string) string {
	if hint == "" {
		hint = "t"
	}
	b.anon[hint]++
	return fmt.Sprintf("_%s.%d", hint, b.anon[hint])
}

func (b *builder) use(id int) { b.g.Tensors[id].uses++ }

// newOp records an operation with a fresh result tensor. Operations of
// expressions compute their result afresh: OCANNL's `v =:+ f(...)` (reset
// to the neutral element, accumulate by sum) unless the op says otherwise.
func (b *builder) newOp(op *Op, hint string) *Tensor {
	op.InitNeutral = true
	if op.Accum == ops.NoAccum {
		op.Accum = ops.AccAdd
	}
	t := b.newTensor(b.anonName(hint), Result, op.Pos)
	op.LHS = t.ID
	t.Op = len(b.g.Ops)
	b.addOp(op)
	return t
}

func (b *builder) addOp(op *Op) {
	var names []string
	for _, r := range op.RHS {
		names = append(names, spec.Clip(b.g.Tensors[r].Name))
		b.use(r)
	}
	if op.Desc == "" {
		op.Desc = "operation"
	}
	if len(names) > 0 {
		op.Desc += " of " + strings.Join(names, ", ")
	}
	op.origin = b.s.addOrigin(origin{op: op.Desc, pos: op.Pos})
	b.g.Ops = append(b.g.Ops, op)
}

// unaryFuncs and binaryPrims index package ops's table by the program
// language's spellings: the unary primitive each function name applies,
// and the binary primitive each infix operator spells. Built once and
// never modified.
var unaryFuncs, binaryPrims = primSpellings()

func primSpellings() (map[string]ops.PrimName, map[string]ops.PrimName) {
	unary, binary := map[string]ops.PrimName{}, map[string]ops.PrimName{}
	for _, p := range ops.Prims() {
		if ops.IsFunc(p.Name, 1) {
			unary[string(p.Name)] = p.Name
		}
		for _, s := range p.Infix {
			binary[s] = p.Name
		}
	}
	return unary, binary
}

func (b *builder) expr(e program.Expr, hint string) (int, error) {
	switch e := e.(type) {
	case *program.Ident:
		id, ok := b.names[e.Name]
		if !ok {
			return 0, errAt(KindName, e.Pos, "undefined name %s", spec.Quote(e.Name))
		}
		return id, nil
	case *program.Number:
		return b.number(b.anonName("num"), e.Value, e.Pos).ID, nil
	case *program.Literal:
		if isNumericLiteral(e) {
			return b.literal(b.anonName("lit"), e)
		}
		return b.stack(e, hint)
	case *program.Unary:
		if e.Func == program.Flatten {
			return b.flatten(e, hint)
		}
		prim, ok := unaryFuncs[e.Func]
		if !ok {
			return 0, errAt(KindParse, e.Pos, "unknown function %s", spec.Quote(e.Func))
		}
		x, err := b.expr(e.X, hint)
		if err != nil {
			return 0, err
		}
		op := &Op{Kind: OpPointwise, Prim: prim, RHS: []int{x}, Pos: e.Pos, Desc: fmt.Sprintf("pointwise %s", e.Func)}
		return b.emit(op, hint)
	case *program.Binary:
		x, err := b.expr(e.X, hint)
		if err != nil {
			return 0, err
		}
		y, err := b.expr(e.Y, hint)
		if err != nil {
			return 0, err
		}
		prim, ok := binaryPrims[e.Op]
		if !ok {
			return 0, errAt(KindParse, e.Pos, "unknown operator %s", spec.Quote(e.Op))
		}
		op := &Op{Kind: OpPointwise, Prim: prim, RHS: []int{x, y}, Pos: e.Pos, Desc: fmt.Sprintf("pointwise %s", spec.Quote(e.Op))}
		if e.Op == "*" {
			op.Kind = OpCompose
			op.Desc = `compose "*"`
		}
		return b.emit(op, hint)
	case *program.Pow:
		x, err := b.expr(e.X, hint)
		if err != nil {
			return 0, err
		}
		n := b.number(b.anonName("num"), e.Exp, e.Pos)
		op := &Op{Kind: OpPointwise, Prim: ops.Pow, RHS: []int{x, n.ID}, Pos: e.Pos, Desc: `pointwise "**."`}
		return b.emit(op, hint)
	case *program.Ternary:
		var args []int
		for _, a := range []program.Expr{e.A, e.B, e.C} {
			id, err := b.expr(a, hint)
			if err != nil {
				return 0, err
			}
			args = append(args, id)
		}
		op := &Op{Kind: OpPointwise, Prim: ops.PrimName(e.Op), RHS: args, Pos: e.Pos, Desc: fmt.Sprintf("pointwise %s", e.Op)}
		return b.emit(op, hint)
	case *program.Einsum:
		return b.einsumExpr(e, hint)
	case *program.Concat:
		var args []int
		for _, a := range e.Operands {
			id, err := b.expr(a, hint)
			if err != nil {
				return 0, err
			}
			args = append(args, id)
		}
		op := &Op{Kind: OpBlock, Prim: ops.ID, Accum: ops.AccAdd, InitNeutral: true, RHS: args, Pos: e.Pos,
			SpecSrc: e.Spec, SpecPos: specStart(e.SpecPos), Desc: fmt.Sprintf("concatenation \"++^\" %s", spec.Quote(e.Spec)), node: e}
		return b.specOp(op, e.Captures, hint)
	case *program.Slice:
		x, err := b.expr(e.X, hint)
		if err != nil {
			return 0, err
		}
		if e.Index < 0 {
			return 0, errAt(KindFixedIndex, e.Pos, "slice index %d is negative", e.Index)
		}
		op := &Op{Kind: OpSlice, Prim: ops.ID, RHS: []int{x}, Index: e.Index, Pos: e.Pos, Desc: fmt.Sprintf("batch slice \"@|\" %d", e.Index)}
		return b.emit(op, hint)
	case *program.InlineParam:
		return b.inlineParam(e)
	case *program.DimRef:
		return b.dimRef(b.anonName("dim_"+e.Name), e), nil
	}
	switch e.(type) {
	case *program.Call, *program.Instance:
		return 0, errAt(KindParse, e.ExprPos(), "a layer application or instance is only allowed in a model (package model expands them)")
	}
	return 0, errAt(KindParse, e.ExprPos(), "unsupported expression %T", e)
}

// flatten elaborates `flatten x` (OpFlatten): an identity whose result
// keeps x's batch and input rows and has one output axis, the product of
// x's output axes.
func (b *builder) flatten(e *program.Unary, hint string) (int, error) {
	x, err := b.expr(e.X, hint)
	if err != nil {
		return 0, err
	}
	op := &Op{Kind: OpFlatten, Prim: ops.ID, RHS: []int{x}, Pos: e.Pos, Desc: "flatten"}
	return b.emit(op, hint)
}

// specStart is the position of a spec's first character, given the
// position of its opening quote.
func specStart(p spec.Pos) spec.Pos { return spec.Pos{Line: p.Line, Col: p.Col + 1} }

func (b *builder) scalarRows(t *Tensor) {
	t.rows[spec.Batch] = closedRow()
	t.rows[spec.Input] = closedRow()
	t.rows[spec.Output] = closedRow(bcastUnit)
}

// number adds a Number tensor named name holding v.
func (b *builder) number(name string, v float64, p spec.Pos) *Tensor {
	t := b.newTensor(name, Number, p)
	b.scalarRows(t)
	t.Init = TensorInit{Kind: InitConst, Value: v}
	return t
}

// literal adds a Literal tensor named name holding the numeric literal e.
func (b *builder) literal(name string, e *program.Literal) (int, error) {
	shape, values, err := numericLiteral(e)
	if err != nil {
		return 0, err
	}
	t := b.newTensor(name, Literal, e.Pos)
	for k := range 3 {
		t.rows[k] = closedRow(shape[k]...)
	}
	t.Init = TensorInit{Kind: InitValues, Values: values}
	return t.ID, nil
}

// dimRef adds a DimScalar tensor named name holding the size of e's label.
func (b *builder) dimRef(name string, e *program.DimRef) int {
	t := b.newTensor(name, DimScalar, e.Pos)
	b.scalarRows(t)
	t.DimName = e.Name
	if c, ok := b.captures[e.Name]; ok {
		t.dimCap = &c
	}
	b.dimRefs = append(b.dimRefs, t.ID)
	return t.ID
}

// letExpr elaborates the expression of a let statement. A constant the
// let binds directly (`let s = 2`, `let v = [1; 2]`, `let n = dim d`) is
// a fresh tensor that takes the let's name, as the result of an
// operation does, so listings, operand lists and generated comments show
// the user's name; constants written inside an expression stay
// anonymous (`_num.N`, `_lit.N`, `_dim_LABEL.N`). The let's name is
// unique as an operation's result named by a let is: define rejects a
// second definition, and an anonymous name ends in a counter (`.N`),
// which no name does.
func (b *builder) letExpr(st *program.LetStmt) (int, error) {
	switch e := st.Expr.(type) {
	case *program.Number:
		return b.number(st.Name, e.Value, e.Pos).ID, nil
	case *program.Literal:
		if isNumericLiteral(e) {
			return b.literal(st.Name, e)
		}
	case *program.DimRef:
		return b.dimRef(st.Name, e), nil
	}
	return b.expr(st.Expr, st.Name)
}

func (b *builder) inlineParam(e *program.InlineParam) (int, error) {
	p := e.Pos
	if id, ok := b.names[e.Name]; ok {
		t := b.g.Tensors[id]
		if t.Kind != Param || e.Init != nil || len(e.Fields) > 0 {
			return 0, errAt(KindName, p, "%s is already defined", spec.Quote(e.Name))
		}
		return id, nil
	}
	t, err := b.newParam(e.Name, p, e.Fields)
	if err != nil {
		return 0, err
	}
	switch in := e.Init.(type) {
	case nil:
	case *program.Number:
		t.Init = TensorInit{Kind: InitConst, Value: in.Value}
	case *program.Literal:
		if !isNumericLiteral(in) {
			return 0, errAt(KindParse, in.Pos, "a parameter's initial value must be a number or a numeric literal")
		}
		if err := b.setInit(t, &program.Init{Pos: in.Pos, Kind: program.InitLiteral, Literal: in}); err != nil {
			return 0, err
		}
	default:
		return 0, errAt(KindParse, e.Init.ExprPos(), "a parameter's initial value must be a number or a numeric literal")
	}
	b.name(t, e.Name, Param)
	return t.ID, nil
}

// stack elaborates a literal whose items are tensor expressions: the items
// are stacked along a new leading axis of the literal's kind.
func (b *builder) stack(e *program.Literal, hint string) (int, error) {
	var args []int
	for _, it := range e.Items {
		id, err := b.expr(it, hint)
		if err != nil {
			return 0, err
		}
		args = append(args, id)
	}
	if len(args) == 0 {
		return 0, errAt(KindParse, e.Pos, "empty literal")
	}
	op := &Op{Kind: OpStack, Prim: ops.ID, RHS: args, Index: int(litKind(e.Kind)), Pos: e.Pos, Desc: "stacking literal"}
	return b.emit(op, hint)
}

func (b *builder) einsumExpr(e *program.Einsum, hint string) (int, error) {
	x, err := b.expr(e.X, hint)
	if err != nil {
		return 0, err
	}
	args := []int{x}
	if e.Y != nil {
		y, err := b.expr(e.Y, hint)
		if err != nil {
			return 0, err
		}
		args = append(args, y)
	}
	op := &Op{Kind: OpEinsum, RHS: args, Pos: e.Pos, SpecSrc: e.Spec, SpecPos: specStart(e.SpecPos),
		InitNeutral: true, Desc: fmt.Sprintf("einsum %s %s", spec.Quote(e.Op), spec.Quote(e.Spec)), node: e}
	switch e.Op {
	case "+*":
		op.Prim, op.Accum = ops.Mul, ops.AccAdd
	case "+++":
		op.Prim, op.Accum = ops.Add, ops.AccAdd
	case "++":
		op.Prim, op.Accum = ops.ID, ops.AccAdd
	case "@^^":
		op.Prim, op.Accum = ops.ID, ops.AccMax
	case "@^+":
		op.Prim, op.Accum = ops.Add, ops.AccMax
	case "@@":
		op.Kind, op.Prim, op.Accum = OpGather, ops.ID, ops.AccAdd
		op.Desc = fmt.Sprintf("gather %s %s", spec.Quote(e.Op), spec.Quote(e.Spec))
	default:
		return 0, errAt(KindParse, e.Pos, "unknown einsum operator %s", spec.Quote(e.Op))
	}
	return b.specOp(op, e.Captures, hint)
}

// specOp parses the op's spec, checks arity, creates the result and emits
// the constraints, then binds the captures.
func (b *builder) specOp(op *Op, caps []program.Capture, hint string) (int, error) {
	sp, err := spec.ParseEinsum(op.SpecSrc)
	if err != nil {
		return 0, b.specErr(err, op)
	}
	op.Spec = sp
	if len(sp.RHS) != len(op.RHS) {
		return 0, &Error{Kind: KindArity, Pos: op.Pos, Msg: fmt.Sprintf("spec %s has %d argument slot(s) but the operation has %d operand(s)", spec.Quote(op.SpecSrc), len(sp.RHS), len(op.RHS))}
	}
	if err := b.checkIndexOperands(op); err != nil {
		return 0, err
	}
	t := b.newOp(op, hint)
	env, err := b.emitSpec(op, t.ID)
	if err != nil {
		return 0, err
	}
	op.env = env
	if err := b.bindCaptures(op, env, caps); err != nil {
		return 0, err
	}
	if op.Kind == OpGather {
		if err := b.gatherBound(op, env); err != nil {
			return 0, err
		}
	}
	if err := b.s.run(); err != nil {
		return 0, err
	}
	return t.ID, nil
}

func (b *builder) specErr(err error, op *Op) error {
	var se *spec.Error
	if errors.As(err, &se) {
		p := op.SpecPos
		p.Col += se.Col - 1
		return &Error{Kind: KindParse, Pos: p, SpecCol: se.Col, Msg: fmt.Sprintf("in spec %s: %s", spec.Quote(op.SpecSrc), se.Msg), Err: err}
	}
	return &Error{Kind: KindParse, Pos: op.SpecPos, Msg: err.Error(), Err: err}
}

// emit creates the result of a non-spec op, emits its constraints and solves.
func (b *builder) emit(op *Op, hint string) (int, error) {
	if err := b.checkIndexOperands(op); err != nil {
		return 0, err
	}
	t := b.newOp(op, hint)
	b.emitOp(op)
	if err := b.s.run(); err != nil {
		return 0, err
	}
	return t.ID, nil
}

func (b *builder) rowIneq(res, opnd row, o int32) {
	b.s.push(constraint{k: cRowIneq, r1: res, r2: opnd, origin: o})
}

func (b *builder) rowEq(r1, r2 row, o int32) {
	b.s.push(constraint{k: cRowEq, r1: r1, r2: r2, origin: o})
}

// emitOp emits the constraints of a non-spec operation (digest §2.3).
func (b *builder) emitOp(op *Op) {
	cur := b.g.Tensors[op.LHS]
	o := op.origin
	switch op.Kind {
	case OpPointwise:
		for _, r := range op.RHS {
			for k := range 3 {
				b.rowIneq(cur.rows[k], b.g.Tensors[r].rows[k], o)
			}
		}
	case OpCompose:
		s1, s2 := b.g.Tensors[op.RHS[0]], b.g.Tensors[op.RHS[1]]
		s1.usedInSpec = true
		b.rowIneq(s1.rows[spec.Input], s2.rows[spec.Output], o)
		b.rowIneq(cur.rows[spec.Batch], s1.rows[spec.Batch], o)
		b.rowIneq(cur.rows[spec.Batch], s2.rows[spec.Batch], o)
		b.rowIneq(cur.rows[spec.Input], s2.rows[spec.Input], o)
		b.rowIneq(cur.rows[spec.Output], s1.rows[spec.Output], o)
	case OpTranspose:
		s1 := b.g.Tensors[op.RHS[0]]
		b.rowIneq(cur.rows[spec.Batch], s1.rows[spec.Batch], o)
		b.rowIneq(cur.rows[spec.Input], s1.rows[spec.Output], o)
		b.rowIneq(cur.rows[spec.Output], s1.rows[spec.Input], o)
	case OpSlice:
		s1 := b.g.Tensors[op.RHS[0]]
		v := b.s.newDim("slice", o)
		b.s.dims[v.v].atLeast = op.Index + 1
		b.s.dims[v.v].atOrigin = o
		cb := cur.rows[spec.Batch]
		b.rowEq(row{beg: append([]dim{v}, cb.beg...), v: cb.v, end: cb.end}, s1.rows[spec.Batch], o)
		b.rowEq(cur.rows[spec.Input], s1.rows[spec.Input], o)
		b.rowEq(cur.rows[spec.Output], s1.rows[spec.Output], o)
	case OpFlatten:
		s1 := b.g.Tensors[op.RHS[0]]
		b.rowEq(cur.rows[spec.Batch], s1.rows[spec.Batch], o)
		b.rowEq(cur.rows[spec.Input], s1.rows[spec.Input], o)
		d := b.s.newDim("flatten", o)
		b.rowEq(cur.rows[spec.Output], closedRow(d), o)
		b.s.push(constraint{k: cProduct, d1: d, r1: s1.rows[spec.Output], origin: o})
	case OpStack:
		kind := spec.Kind(op.Index)
		var vars [3]int32
		for k := range 3 {
			vars[k] = b.s.newRowVar(-1, -1, o)
		}
		for k := range 3 {
			tmpl := openRow(vars[k])
			if spec.Kind(k) == kind {
				b.rowEq(cur.rows[k], row{beg: []dim{dconst(len(op.RHS), BasisDefault)}, v: vars[k]}, o)
			} else {
				b.rowEq(cur.rows[k], tmpl, o)
			}
			for _, r := range op.RHS {
				b.rowEq(tmpl, b.g.Tensors[r].rows[k], o)
			}
		}
	}
}

// specEnv maps a spec application's labels and row variables to fresh variables.
type specEnv struct {
	labels map[string]dim
	rows   map[string]int32
}

// emitSpec emits the equalities of an einsum or block op (digest §2.3):
// the spec's labels and row variables are fresh for this application.
func (b *builder) emitSpec(op *Op, lhs int) (*specEnv, error) {
	sp := op.Spec
	env := &specEnv{labels: map[string]dim{}, rows: map[string]int32{}}
	if err := checkSpecNames(op); err != nil {
		return nil, err
	}
	lhsRows, rhsRows := b.specRows(op, lhs, env)
	b.emitSpecEqs(op, lhs, lhsRows, rhsRows)
	for _, v := range discardableLabels(sp) {
		if d, ok := env.labels[v]; ok && d.k == dVar {
			b.s.dims[d.v].discardable = true
		}
	}
	return env, nil
}

// checkSpecNames rejects a spec whose names clash (a label that is also a
// row variable, a component twice in one concatenation) or whose stride
// offsets are invalid.
func checkSpecNames(op *Op) error {
	sp := op.Spec
	// Name clash check.
	labelCol := map[string]int{}
	rowCol := map[string]int{}
	slots := append(append([]spec.Slot{}, sp.RHS...), sp.LHS)
	for _, sl := range slots {
		for k := range 3 {
			r := sl.Rows[k]
			if r.HasVar {
				if _, ok := rowCol[r.Var]; !ok {
					rowCol[r.Var] = r.VarCol
				}
			}
			for _, ax := range r.Axes() {
				if ax.Kind == spec.AxisConcat {
					seen := map[string]bool{}
					for _, c := range ax.Concat {
						if c.Label != "" && seen[c.Label] {
							p := op.SpecPos
							p.Col += c.Col - 1
							return &Error{Kind: KindConcat, Pos: p, SpecCol: c.Col, Op: op.Desc,
								Msg: fmt.Sprintf("component %s appears twice in one concatenation in %s: each component is a separate slice of the axis", spec.Quote(c.Label), spec.Quote(op.SpecSrc))}
						}
						seen[c.Label] = true
					}
				}
				if a := ax.Affine; ax.Kind == spec.AxisAffine && a.Offset >= a.Stride {
					p := op.SpecPos
					p.Col += ax.Col - 1
					return &Error{Kind: KindStride, Pos: p, SpecCol: ax.Col, Op: op.Desc,
						Msg: fmt.Sprintf("stride offset %d must be smaller than the stride %d in %s (it selects a position within a stride window)", a.Offset, a.Stride, spec.Quote(op.SpecSrc))}
				}
				if a := ax.Affine; ax.Kind == spec.AxisAffine && a.Offset != 0 && a.Conv != nil && !a.Conv.Padded {
					// A stride offset is not part of any size relation (seed
					// "Convolution Is a Contraction"; a valid convolution has
					// zero offset, formal core 8.4(a)): with n = s·(O−1) + 1 +
					// (K−1)·d, the last window would reach past the axis.
					p := op.SpecPos
					p.Col += ax.Col - 1
					return &Error{Kind: KindStride, Pos: p, SpecCol: ax.Col, Op: op.Desc,
						Msg: fmt.Sprintf("a valid convolution (<+) cannot have a stride offset (%d in %s): the offset is not part of its size relation n = s·(O−1) + 1 + (K−1)·d, so its last window would read past the end of the axis; drop the offset, or use a padded convolution (=+), where the padding margin absorbs it", a.Offset, spec.Quote(op.SpecSrc))}
				}
				for _, l := range axisLabels(ax) {
					if _, ok := labelCol[l.name]; !ok {
						labelCol[l.name] = l.col
					}
				}
			}
		}
	}
	for name, col := range labelCol {
		if rc, ok := rowCol[name]; ok {
			c := max(col, rc)
			p := op.SpecPos
			p.Col += c - 1
			return &Error{Kind: KindName, Pos: p, SpecCol: c, Op: op.Desc,
				Msg: fmt.Sprintf("name %s is used as both a dimension label and a row variable in spec %s", spec.Quote(name), spec.Quote(op.SpecSrc))}
		}
	}
	return nil
}

// specRows instantiates the spec's rows for this application: the LHS
// slot's rows, then each RHS slot's, with fresh labels and row variables
// recorded in env.
func (b *builder) specRows(op *Op, lhs int, env *specEnv) ([3]row, [][3]row) {
	sp := op.Spec
	o := op.origin
	tmplRow := func(r *spec.Row, owner int32, kind int8) row {
		out := row{v: -1}
		if r.HasVar {
			v, ok := env.rows[r.Var]
			if !ok {
				v = b.s.newRowVar(-1, -1, o)
				env.rows[r.Var] = v
			}
			out.v = v
		}
		for _, ax := range r.Beg {
			out.beg = append(out.beg, b.axisDim(ax, env, o))
		}
		for _, ax := range r.End {
			out.end = append(out.end, b.axisDim(ax, env, o))
		}
		return out
	}
	lhsRows := [3]row{}
	for k := range 3 {
		lhsRows[k] = tmplRow(&sp.LHS.Rows[k], int32(lhs), int8(k))
	}
	var rhsRows [][3]row
	for i := range sp.RHS {
		var rr [3]row
		for k := range 3 {
			rr[k] = tmplRow(&sp.RHS[i].Rows[k], int32(op.RHS[i]), int8(k))
		}
		rhsRows = append(rhsRows, rr)
	}
	return lhsRows, rhsRows
}

// emitSpecEqs equates the tensors' rows with the spec's instantiated rows:
// the result's first, then the arguments' (a block op: the arguments
// first).
func (b *builder) emitSpecEqs(op *Op, lhs int, lhsRows [3]row, rhsRows [][3]row) {
	sp := op.Spec
	cur := b.g.Tensors[lhs]
	slotOrigin := func(sl *spec.Slot, what string) int32 {
		p := op.SpecPos
		p.Col += sl.Col - 1
		return b.s.addOrigin(origin{op: op.Desc + ", " + what, pos: p, specCol: sl.Col})
	}
	emitLHS := func() {
		so := slotOrigin(&sp.LHS, "result "+cur.Name)
		for k := range 3 {
			b.rowEq(cur.rows[k], lhsRows[k], so)
		}
	}
	emitRHS := func() {
		for i, rr := range rhsRows {
			t := b.g.Tensors[op.RHS[i]]
			t.usedInSpec = true
			what := fmt.Sprintf("argument %d (%s)", i+1, t.Name)
			for k := range 3 {
				// One origin per row, so that a rank mismatch names the
				// operand's row (OperandRank).
				so := slotOrigin(&sp.RHS[i], what)
				b.s.origins[so].slot = &slotRef{node: op.node, arg: i, row: spec.Kind(k), slot: &sp.RHS[i], tensor: op.RHS[i]}
				b.rowEq(rr[k], t.rows[k], so)
			}
		}
	}
	if op.Kind == OpBlock {
		emitRHS()
		emitLHS()
	} else {
		emitLHS()
		emitRHS()
	}
}

type labelRef struct {
	name string
	col  int
}

func axisLabels(ax spec.Axis) []labelRef {
	switch ax.Kind {
	case spec.AxisLabel:
		return []labelRef{{ax.Label, ax.Col}}
	case spec.AxisAffine:
		out := []labelRef{{ax.Affine.Over, ax.Affine.OverCol}}
		if ax.Affine.Conv != nil {
			out = append(out, labelRef{ax.Affine.Conv.Kernel, ax.Affine.Conv.KernelCol})
		}
		return out
	case spec.AxisConcat:
		var out []labelRef
		for _, p := range ax.Concat {
			if p.Label != "" {
				out = append(out, labelRef{p.Label, p.Col})
			}
		}
		return out
	}
	return nil
}

func (b *builder) label(name string, env *specEnv, o int32) dim {
	if d, ok := env.labels[name]; ok {
		return d
	}
	d := b.s.newDim(name, o)
	b.s.dims[d.v].label = true
	env.labels[name] = d
	return d
}

func (b *builder) axisDim(ax spec.Axis, env *specEnv, o int32) dim {
	switch ax.Kind {
	case spec.AxisLabel:
		return b.label(ax.Label, env, o)
	case spec.AxisFixed:
		d := b.s.newDim(fmt.Sprint(ax.Fixed), o)
		b.s.dims[d.v].atLeast = ax.Fixed + 1
		b.s.dims[d.v].atOrigin = o
		return d
	case spec.AxisAffine:
		a := ax.Affine
		ad := &affineDim{stride: a.Stride, over: b.label(a.Over, env, o), offset: a.Offset}
		if a.Conv != nil {
			ad.conv = true
			ad.padded = a.Conv.Padded
			ad.dilation = a.Conv.Dilation
			ad.kernel = b.label(a.Conv.Kernel, env, o)
		}
		return dim{k: dAffine, aff: ad}
	case spec.AxisConcat:
		var parts []dim
		for _, p := range ax.Concat {
			if p.Label == "" {
				parts = append(parts, dconst(p.Size, BasisDefault))
			} else {
				parts = append(parts, b.label(p.Label, env, o))
			}
		}
		return dim{k: dConcat, parts: parts}
	}
	return b.s.newDim("", o)
}

// discardableLabels computes the concatenation components that may be the
// empty summand (seed document 4, the quantifier alternation): a variable v
// in a component of a concatenation on one side is discardable iff for every
// slot on the other side there is an axis all of whose components lie in the
// complement of v's component.
func discardableLabels(sp *spec.Einsum) []string {
	var out []string
	seen := map[string]bool{}
	check := func(side []spec.Slot, other []spec.Slot) {
		for _, sl := range side {
			for k := range 3 {
				for _, ax := range sl.Rows[k].Axes() {
					if ax.Kind != spec.AxisConcat {
						continue
					}
					for i, p := range ax.Concat {
						if p.Label == "" || seen[p.Label] {
							continue
						}
						comp := map[string]bool{}
						for j, q := range ax.Concat {
							if j != i && q.Label != "" {
								comp[q.Label] = true
							}
						}
						if len(comp) == 0 {
							continue
						}
						all := true
						for _, os := range other {
							if !slotHasCoveredAxis(os, comp) {
								all = false
								break
							}
						}
						if all {
							seen[p.Label] = true
							out = append(out, p.Label)
						}
					}
				}
			}
		}
	}
	check(sp.RHS, []spec.Slot{sp.LHS})
	check([]spec.Slot{sp.LHS}, sp.RHS)
	sort.Strings(out)
	return out
}

func slotHasCoveredAxis(sl spec.Slot, comp map[string]bool) bool {
	for k := range 3 {
		for _, ax := range sl.Rows[k].Axes() {
			labels := axisLabels(ax)
			if ax.Kind == spec.AxisFixed || len(labels) == 0 {
				continue
			}
			if ax.Kind == spec.AxisConcat {
				ok := true
				for _, p := range ax.Concat {
					if p.Label == "" || !comp[p.Label] {
						ok = false
						break
					}
				}
				if ok {
					return true
				}
				continue
			}
			ok := true
			for _, l := range labels {
				if !comp[l.name] {
					ok = false
				}
			}
			if ok {
				return true
			}
		}
	}
	return false
}

func (b *builder) bindCaptures(op *Op, env *specEnv, caps []program.Capture) error {
	for _, c := range caps {
		if d, ok := env.labels[c.Name]; ok {
			b.captures[c.Name] = capture{d: d, o: op.origin}
		} else if v, ok := env.rows[c.Name]; ok {
			b.captures[c.Name] = capture{isRow: true, rv: v, o: op.origin}
		} else {
			return &Error{Kind: KindName, Pos: c.Pos, Op: op.Desc,
				Msg: fmt.Sprintf("captured name %s is not a label or row variable of spec %s", spec.Quote(c.Name), spec.Quote(op.SpecSrc))}
		}
		if pd, ok := b.pending[c.Name]; ok {
			delete(b.pending, c.Name)
			if err := b.applyDim(c.Name, pd.value, pd.pos); err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *builder) setDim(name string, value int, p spec.Pos) error {
	if value <= 0 {
		return errAt(KindDimMismatch, p, "dim %s = %d: a dimension must be positive", name, value)
	}
	if _, ok := b.captures[name]; !ok {
		b.pending[name] = pendingDim{value: value, pos: p}
		return nil
	}
	return b.applyDim(name, value, p)
}

func (b *builder) applyDim(name string, value int, p spec.Pos) error {
	c := b.captures[name]
	o := b.s.addOrigin(origin{op: fmt.Sprintf("dim %s = %d", name, value), pos: p})
	if c.isRow {
		b.s.push(constraint{k: cTotal, r1: openRow(c.rv), n: value, origin: o})
	} else {
		b.s.push(constraint{k: cDimEq, d1: c.d, d2: dconst(value, BasisDefault), origin: o})
	}
	return b.s.run()
}

// assign elaborates an assignment statement (the producer regime).
func (b *builder) assign(st *program.AssignStmt) error {
	p := st.Pos
	var target *Tensor
	if st.Inline {
		if err := b.define(st.Target, st.TargetPos); err != nil {
			return err
		}
		target = b.newTensor(st.Target, Target, st.TargetPos)
		b.name(target, st.Target, Target)
	} else {
		id, ok := b.names[st.Target]
		if !ok {
			return errAt(KindName, st.TargetPos, "undefined assignment target %s (write { %s } to introduce a new tensor)", spec.Quote(st.Target), spec.Clip(st.Target))
		}
		target = b.g.Tensors[id]
	}
	var args []int
	for _, a := range st.Args {
		id, err := b.expr(a, st.Target)
		if err != nil {
			return err
		}
		args = append(args, id)
	}
	op := &Op{LHS: target.ID, RHS: args, Pos: p, Assign: true}
	accum, initNeutral, err := accumOf(st.Accum)
	if err != nil {
		return errAt(KindParse, p, "%v", err)
	}
	op.Accum, op.InitNeutral = accum, initNeutral
	if st.Op == "" {
		op.Prim = ops.ID
	} else if st.Op == program.Flatten {
		return errAt(KindParse, p, "flatten is not a primitive of an assignment: write let %s = flatten EXPR", spec.Clip(st.Target))
	} else if prim, ok := unaryFuncs[st.Op]; ok {
		op.Prim = prim
	} else if prim, ok := binaryPrims[st.Op]; ok {
		op.Prim = prim
	} else {
		return errAt(KindParse, p, "unknown primitive %s", spec.Quote(st.Op))
	}
	logic := st.Logic
	if logic == "" {
		logic = "."
	}
	op.Desc = fmt.Sprintf("assignment %s %s ~logic:%s", st.Target, st.Accum, spec.Quote(logic))
	if err := b.checkIndexOperands(op); err != nil {
		return err
	}
	switch logic {
	case ".":
		op.Kind = OpPointwise
	case "@":
		op.Kind = OpCompose
		if len(args) != 2 {
			return errAt(KindArity, p, "~logic:\"@\" (compose) needs two operands, got %d", len(args))
		}
	case "T":
		op.Kind = OpTranspose
		if len(args) != 1 {
			return errAt(KindArity, p, "~logic:\"T\" (transpose) needs one operand, got %d", len(args))
		}
	default:
		op.Kind = OpEinsum
		op.SpecSrc = logic
		op.SpecPos = specStart(st.LogicPos)
	}
	if op.Kind == OpEinsum {
		sp, err := spec.ParseEinsum(op.SpecSrc)
		if err != nil {
			return b.specErr(err, op)
		}
		op.Spec = sp
		if len(sp.RHS) != len(args) {
			return &Error{Kind: KindArity, Pos: p, Msg: fmt.Sprintf("spec %s has %d argument slot(s) but the assignment has %d operand(s)", spec.Quote(op.SpecSrc), len(sp.RHS), len(args))}
		}
		b.addOp(op)
		env, err := b.emitSpec(op, target.ID)
		if err != nil {
			return err
		}
		op.env = env
	} else {
		b.addOp(op)
		b.emitOp(op)
	}
	return b.s.run()
}

func accumOf(a string) (accum ops.AccumName, initNeutral bool, err error) {
	if a == "=:" {
		return ops.NoAccum, true, nil
	}
	rest, ok := strings.CutPrefix(a, "=:")
	if ok {
		initNeutral = true
	} else {
		rest = strings.TrimPrefix(a, "=")
	}
	if acc := ops.AccumBySymbol(rest); acc != nil {
		return acc.Name, initNeutral, nil
	}
	return ops.NoAccum, false, fmt.Errorf("unknown assignment operator %s", spec.Quote(a))
}
