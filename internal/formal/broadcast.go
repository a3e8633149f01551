// Package formal turns statements of the formal core (seed 001, "The
// Formal Core of OCANNL's Shape and Projection Inference") into property
// tests over random programs: canonicity of projections (Thm. 7.4),
// bounded addressing (Thm. 7.8), soundness of closing (Prop. 6.2),
// canonicity of padding margins (Prop. 8.1), and the experiments of
// Conjectures 8.2 and 8.3. docs/formal.md describes the properties, how
// to run them and what a long run found.
//
// This file is the independent checker of Prop. 6.2: it reads a
// program's input constraints (the operations of the elaborated graph
// with their shape logic and specs, and the program's declarations) and
// the closed shapes, and checks every constraint against the
// definitions of the broadcast order, written here from the seed (Defs.
// 1.2, 2.2, 2.3, 2.9, 2.12(c)) and the constraint table of the OCANNL
// digest (§2.3). It never calls the solver: it only reads
// inference.Graph's exported results.
package formal

import (
	"fmt"
	"slices"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/spec"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// Dim is a ground dimension: an atom n_b, or the claim-free unit 1_∅
// (size 1, basis inference.BasisBcast).
type Dim = inference.Dim

// IsTop reports whether d is 1_∅, the top of the dimension order.
func IsTop(d Dim) bool { return d.Size == 1 && d.Basis == inference.BasisBcast }

// DimLE is the broadcast order on dimensions (Def. 1.2): d1 ⊑ d2 iff d2
// is 1_∅ or d1 = d2 (same size and basis).
func DimLE(d1, d2 Dim) bool { return IsTop(d2) || d1 == d2 }

// Row is a ground row l·◇·r (Def. 2.1): Dims is its flattening l·r and
// Split the length of its leading flank l.
type Row struct {
	Dims  []Dim
	Split int
}

func (r Row) lead() []Dim  { return r.Dims[:r.Split] }
func (r Row) trail() []Dim { return r.Dims[r.Split:] }

// Expand is R↑n (Def. 2.2): the leading flank, n − rank(R) copies of
// 1_∅ at the marker, the trailing flank. n must be at least the rank.
func Expand(r Row, n int) []Dim {
	out := append([]Dim{}, r.lead()...)
	for range n - len(r.Dims) {
		out = append(out, Dim{Size: 1, Basis: inference.BasisBcast})
	}
	return append(out, r.trail()...)
}

// RowLE is the marked row order (Def. 2.3): res ⊑ opnd iff the operand's
// flanks fit inside the result's (|l_op| ≤ |l_res|, |r_op| ≤ |r_res|)
// and the result's flattening refines the operand's expansion to the
// result's rank pointwise.
func RowLE(res, opnd Row) bool {
	if len(opnd.lead()) > len(res.lead()) || len(opnd.trail()) > len(res.trail()) {
		return false
	}
	return pointwiseLE(res.Dims, Expand(opnd, len(res.Dims)))
}

// RowLE1 is the one-shot order flat(res)• ⊑ opnd (Def. 2.12(c), Remark
// 2.15(ii)): rank(res) ≥ rank(opnd) and res's flattening refines the
// operand's expansion to res's rank pointwise; the result's own marker is
// not consulted. It is the order the implementation's inequalities
// decide (the formal core's §10; docs/design.md, "Solving").
func RowLE1(res, opnd Row) bool {
	if len(res.Dims) < len(opnd.Dims) {
		return false
	}
	return pointwiseLE(res.Dims, Expand(opnd, len(res.Dims)))
}

func pointwiseLE(a, b []Dim) bool {
	for i := range a {
		if !DimLE(a[i], b[i]) {
			return false
		}
	}
	return true
}

// FlatEq is the flat equivalence R ≈ R' (Def. 2.9): equal flattenings;
// the markers are not consulted. Row equalities are judged by it (Def.
// 3.4).
func FlatEq(a, b []Dim) bool { return slices.Equal(a, b) }

// Violation is an input constraint the closed shapes do not satisfy.
type Violation struct {
	Op  string // the operation or declaration the constraint comes from
	Msg string
}

func (v Violation) String() string { return v.Op + ": " + v.Msg }

// Report is the result of Check.
type Report struct {
	// Violations lists the constraints that fail.
	Violations []Violation
	// Checked counts the constraints checked: row inequalities, row
	// equalities (a spec slot's row counts as one), dimension
	// constraints of specs (a label's occurrences, fixed indices,
	// affine and concatenation size relations) and declarations.
	Checked int
	// Skipped lists constraints the checker does not handle (literal
	// shapes, ambiguous captures), so a caller can tell that nothing
	// was checked rather than that everything held.
	Skipped []string
	// Marked counts the row inequalities that hold in the one-shot order
	// (as checked) but not in the marked order of Def. 2.3 (flank-fit
	// fails): where the implementation's flat reading of results
	// accepts what the marked reading would reject.
	Marked int
}

// Check checks the closed shapes of g, inferred from p, against every
// input constraint: each operation's (digest §2.3: pointwise, compose
// and transpose inequalities in the one-shot order RowLE1, the
// equalities of specs, slices and stacks in FlatEq, with a spec's
// labels, fixed indices, affine and concatenation axes and row
// variables), the declared shapes of inputs, leaves and parameters, the
// shapes of numbers and dim scalars, and `dim` statements on captured
// labels and row variables.
func Check(p *program.Program, g *inference.Graph) Report {
	c := &checker{g: g}
	caps := captureSites(p)
	for _, op := range g.Ops {
		c.op(op, caps[op.Pos])
	}
	c.decls(p)
	c.dims(p, caps)
	for _, t := range g.Tensors {
		switch t.Kind {
		case inference.Number, inference.DimScalar:
			c.checked++
			sh := t.Shape
			if len(sh.Batch) != 0 || len(sh.Input) != 0 || len(sh.Output) != 1 || !IsTop(sh.Output[0]) {
				c.fail(t.Name, "a %s has the shape [1_∅], got %v", t.Kind, dimsString(sh.Dims()))
			}
		case inference.Literal:
			c.skipped = append(c.skipped, "literal "+t.Name)
		}
		for k := range 3 {
			if t.Split[k] < 0 || t.Split[k] > len(t.Shape.Row(spec.Kind(k))) {
				c.fail(t.Name, "%s row split %d outside the row %v", spec.Kind(k), t.Split[k], dimsString(t.Shape.Row(spec.Kind(k))))
			}
		}
	}
	return Report{Violations: c.vs, Checked: c.checked, Skipped: c.skipped, Marked: c.marked}
}

type checker struct {
	g       *inference.Graph
	vs      []Violation
	checked int
	skipped []string
	marked  int
	// rowVals records, per spec operation, the values of its row
	// variables (for dim statements on captured row variables).
	rowVals map[*inference.Op]map[string][]Dim
}

func (c *checker) fail(where, format string, args ...any) {
	c.vs = append(c.vs, Violation{Op: where, Msg: fmt.Sprintf(format, args...)})
}

func (c *checker) row(id int, k spec.Kind) Row {
	t := c.g.Tensors[id]
	ds := t.Shape.Row(k)
	sp := min(max(t.Split[k], 0), len(ds))
	return Row{Dims: ds, Split: sp}
}

func (c *checker) name(id int) string { return c.g.Tensors[id].Name }

// ineq checks res ⊑ opnd in the one-shot order, and counts where the
// marked order would disagree.
func (c *checker) ineq(op *inference.Op, res int, rk spec.Kind, opnd int, ok spec.Kind) {
	c.checked++
	r, o := c.row(res, rk), c.row(opnd, ok)
	if !RowLE1(r, o) {
		c.fail(op.Desc, "%s.%s %s ⋢ %s.%s %s", c.name(res), rk, rowString(r), c.name(opnd), ok, rowString(o))
		return
	}
	if !RowLE(r, o) {
		c.marked++
	}
}

func (c *checker) eq(where string, a []Dim, an string, b []Dim, bn string) {
	c.checked++
	if !FlatEq(a, b) {
		c.fail(where, "%s %v ≉ %s %v", an, dimsString(a), bn, dimsString(b))
	}
}

func (c *checker) op(op *inference.Op, caps []string) {
	B, I, O := spec.Batch, spec.Input, spec.Output
	cur := op.LHS
	switch op.Kind {
	case inference.OpPointwise:
		for _, r := range op.RHS {
			for k := range 3 {
				c.ineq(op, cur, spec.Kind(k), r, spec.Kind(k))
			}
		}
	case inference.OpCompose:
		s1, s2 := op.RHS[0], op.RHS[1]
		c.ineq(op, s1, I, s2, O)
		c.ineq(op, cur, B, s1, B)
		c.ineq(op, cur, B, s2, B)
		c.ineq(op, cur, I, s2, I)
		c.ineq(op, cur, O, s1, O)
	case inference.OpTranspose:
		s := op.RHS[0]
		c.ineq(op, cur, B, s, B)
		c.ineq(op, cur, I, s, O)
		c.ineq(op, cur, O, s, I)
	case inference.OpSlice:
		// s.B ≈ [v]·cur.B with size(v) ≥ index+1; the other rows equal.
		s := op.RHS[0]
		sb, cb := c.row(s, B).Dims, c.row(cur, B).Dims
		c.checked++
		if len(sb) != len(cb)+1 {
			c.fail(op.Desc, "%s batch %v is not one sliced axis more than %s batch %v", c.name(s), dimsString(sb), c.name(cur), dimsString(cb))
		} else {
			if sb[0].Size < op.Index+1 {
				c.fail(op.Desc, "sliced axis %v too small for index %d", sb[0], op.Index)
			}
			c.eq(op.Desc, sb[1:], c.name(s)+" batch after the sliced axis", cb, c.name(cur)+" batch")
		}
		c.eq(op.Desc, c.row(s, I).Dims, c.name(s)+" input", c.row(cur, I).Dims, c.name(cur)+" input")
		c.eq(op.Desc, c.row(s, O).Dims, c.name(s)+" output", c.row(cur, O).Dims, c.name(cur)+" output")
	case inference.OpStack:
		nk := spec.Kind(op.Index)
		for k := range 3 {
			kind := spec.Kind(k)
			tmpl := c.row(op.RHS[0], kind).Dims
			for _, r := range op.RHS[1:] {
				c.eq(op.Desc, c.row(r, kind).Dims, c.name(r)+" "+kind.String(), tmpl, c.name(op.RHS[0])+" "+kind.String())
			}
			want := tmpl
			if kind == nk {
				want = append([]Dim{{Size: len(op.RHS), Basis: inference.BasisDefault}}, tmpl...)
			}
			c.eq(op.Desc, c.row(cur, kind).Dims, c.name(cur)+" "+kind.String(), want, "the stacked operands' "+kind.String())
		}
	case inference.OpFlatten:
		// cur.B ≈ s.B, cur.I ≈ s.I; cur.O is one axis of s.O's cells.
		s := op.RHS[0]
		c.eq(op.Desc, c.row(s, B).Dims, c.name(s)+" batch", c.row(cur, B).Dims, c.name(cur)+" batch")
		c.eq(op.Desc, c.row(s, I).Dims, c.name(s)+" input", c.row(cur, I).Dims, c.name(cur)+" input")
		c.checked++
		so, co := c.row(s, O).Dims, c.row(cur, O).Dims
		n := 1
		for _, d := range so {
			n *= d.Size
		}
		if len(so) == 0 || len(co) != 1 || co[0].Size != n {
			c.fail(op.Desc, "%s output %v is not one axis of the %d cells of %s output %v", c.name(cur), dimsString(co), n, c.name(s), dimsString(so))
		}
	case inference.OpEinsum, inference.OpBlock:
		c.spec(op)
	default:
		c.skipped = append(c.skipped, op.Desc)
	}
}

// spec checks an einsum or block: every slot's rows equal the spec's
// template rows (≈) under one assignment of its labels and row
// variables. Labels are the variables of Op.Labels (γ on the spec's
// labels); the checker verifies that every plain occurrence agrees with
// it, and computes the row variables' values from the slots.
func (c *checker) spec(op *inference.Op) {
	sp := op.Spec
	if sp == nil {
		c.fail(op.Desc, "no parsed spec")
		return
	}
	sc := &specCheck{c: c, op: op, labelDim: map[string]Dim{}, labelWhere: map[string]string{}, rowVal: map[string][]Dim{}, rowWhere: map[string]string{}}
	for i := range sp.RHS {
		if i >= len(op.RHS) {
			c.fail(op.Desc, "more spec slots than operands")
			return
		}
		sc.slot(&sp.RHS[i], op.RHS[i], fmt.Sprintf("argument %d", i+1))
	}
	sc.slot(&sp.LHS, op.LHS, "result")
	if c.rowVals == nil {
		c.rowVals = map[*inference.Op]map[string][]Dim{}
	}
	c.rowVals[op] = sc.rowVal
	sc.labels()
	for _, o := range sc.occs {
		sc.indexed(o)
	}
}

// specCheck is the state of checking one einsum or block (checker.spec):
// the axis occurrences of its slots, the labels' dimensions and the row
// variables' values found so far, with where each was found.
type specCheck struct {
	c          *checker
	op         *inference.Op
	occs       []occ
	labelDim   map[string]Dim
	labelWhere map[string]string
	rowVal     map[string][]Dim
	rowWhere   map[string]string
}

// occ is one axis of a spec slot with the dimension it faces.
type occ struct {
	ax   spec.Axis
	d    Dim
	what string
}

// slot matches the rows of slot sl against tensor id's: it records the
// axes' occurrences and checks a row variable's value against its
// earlier ones.
func (sc *specCheck) slot(sl *spec.Slot, id int, what string) {
	c, op := sc.c, sc.op
	for k := range 3 {
		kind := spec.Kind(k)
		r := &sl.Rows[k]
		ds := c.row(id, kind).Dims
		where := fmt.Sprintf("%s %s (%s) %s row", what, c.name(id), op.SpecSrc, kind)
		c.checked++
		if !r.HasVar {
			axes := r.Axes()
			if len(axes) != len(ds) {
				c.fail(op.Desc, "%s: %d axes in the spec, %d in the shape %v", where, len(axes), len(ds), dimsString(ds))
				continue
			}
			for i, ax := range axes {
				sc.occs = append(sc.occs, occ{ax, ds[i], where})
			}
			continue
		}
		nb, ne := len(r.Beg), len(r.End)
		if nb+ne > len(ds) {
			c.fail(op.Desc, "%s: %d flank axes in the spec, %d in the shape %v", where, nb+ne, len(ds), dimsString(ds))
			continue
		}
		for i, ax := range r.Beg {
			sc.occs = append(sc.occs, occ{ax, ds[i], where})
		}
		for i, ax := range r.End {
			sc.occs = append(sc.occs, occ{ax, ds[len(ds)-ne+i], where})
		}
		mid := ds[nb : len(ds)-ne]
		if prev, ok := sc.rowVal[r.Var]; ok {
			c.checked++
			if !FlatEq(prev, mid) {
				c.fail(op.Desc, "row variable %s is %v in %s and %v in %s", r.Var, dimsString(prev), sc.rowWhere[r.Var], dimsString(mid), where)
			}
		} else {
			sc.rowVal[r.Var], sc.rowWhere[r.Var] = mid, where
		}
	}
}

// labels checks the plain labels: every occurrence is one dimension
// (DE: identity), the solution's size of the label.
func (sc *specCheck) labels() {
	c, op := sc.c, sc.op
	for _, o := range sc.occs {
		if o.ax.Kind != spec.AxisLabel {
			continue
		}
		c.checked++
		if d, ok := sc.labelDim[o.ax.Label]; ok {
			if d != o.d {
				c.fail(op.Desc, "label %s is %v in %s and %v in %s", o.ax.Label, d, sc.labelWhere[o.ax.Label], o.d, o.what)
			}
			continue
		}
		sc.labelDim[o.ax.Label], sc.labelWhere[o.ax.Label] = o.d, o.what
		if n, ok := op.Labels[o.ax.Label]; !ok || n != o.d.Size {
			c.fail(op.Desc, "label %s: the axes give %v, the solution's labels %d (present: %v)", o.ax.Label, o.d, n, ok)
		}
	}
}

// size is the size of label l: its axes', else the solution's.
func (sc *specCheck) size(l string) (int, bool) {
	if d, ok := sc.labelDim[l]; ok {
		return d.Size, true
	}
	n, ok := sc.op.Labels[l]
	if !ok {
		sc.c.fail(sc.op.Desc, "label %s has no size (neither an axis nor the solution's labels)", l)
	}
	return n, ok
}

// indexed checks an occurrence of a fixed index, an affine index or a
// concatenation against the sizes its relation gives.
func (sc *specCheck) indexed(o occ) {
	c, op := sc.c, sc.op
	switch o.ax.Kind {
	case spec.AxisFixed:
		c.checked++
		if o.d.Size < o.ax.Fixed+1 {
			c.fail(op.Desc, "fixed index %d on an axis of size %d in %s", o.ax.Fixed, o.d.Size, o.what)
		}
	case spec.AxisAffine:
		c.checked++
		a := o.ax.Affine
		over, ok := sc.size(a.Over)
		if !ok {
			return
		}
		want := a.Stride * over
		rel := fmt.Sprintf("%d·%d", a.Stride, over)
		if a.Conv != nil && !a.Conv.Padded {
			k, ok := sc.size(a.Conv.Kernel)
			if !ok {
				return
			}
			// n = s·(O−1) + 1 + (K−1)·d
			want = a.Stride*(over-1) + 1 + (k-1)*a.Conv.Dilation
			rel = fmt.Sprintf("%d·(%d−1) + 1 + (%d−1)·%d", a.Stride, over, k, a.Conv.Dilation)
		}
		if o.d.Size != want {
			c.fail(op.Desc, "affine axis in %s: size %d, the relation gives %s = %d", o.what, o.d.Size, rel, want)
		}
	case spec.AxisConcat:
		c.checked++
		sum, ok := 0, true
		for _, p := range o.ax.Concat {
			if p.Label == "" {
				sum += p.Size
				continue
			}
			n, k := sc.size(p.Label)
			ok = ok && k
			sum += n
		}
		if ok && o.d.Size != sum {
			c.fail(op.Desc, "concatenated axis in %s: size %d, its components sum to %d", o.what, o.d.Size, sum)
		}
	}
}

// decls checks the declared shapes of inputs, leaves and parameters
// (statements and inline parameters): a written row is exact.
func (c *checker) decls(p *program.Program) {
	named := map[string]int{}
	for _, n := range c.g.Named {
		named[n.Name] = n.Tensor
	}
	declRow := func(where string, id int, k spec.Kind, rd *program.RowDecl) {
		if rd != nil && rd.Unknown {
			return
		}
		var want []Dim
		if rd != nil {
			for _, d := range rd.Dims {
				b := d.Basis
				if b == "" {
					b = inference.BasisDefault
				}
				if d.Max {
					b = inference.BasisRows
				}
				want = append(want, Dim{Size: d.Size, Basis: b})
			}
		}
		c.eq(where, c.row(id, k).Dims, c.name(id)+" "+k.String(), want, "declared")
	}
	shape := func(where, name string, sd *program.ShapeDecl) {
		id, ok := named[name]
		if !ok || sd == nil {
			return
		}
		declRow(where, id, spec.Batch, sd.Batch)
		declRow(where, id, spec.Input, sd.Input)
		declRow(where, id, spec.Output, sd.Output)
	}
	fields := func(where, name string, fs []program.Field) {
		id, ok := named[name]
		if !ok {
			return
		}
		for _, f := range fs {
			k := map[byte]spec.Kind{'b': spec.Batch, 'i': spec.Input, 'o': spec.Output}[f.Kind]
			var want []Dim
			for _, n := range f.Dims {
				want = append(want, Dim{Size: n, Basis: inference.BasisDefault})
			}
			c.eq(where, c.row(id, k).Dims, c.name(id)+" "+k.String(), want, "the field "+string(f.Kind)+"=[...]")
		}
	}
	init := func(name string, in *program.Init) {
		if in != nil && in.Kind == program.InitLiteral {
			c.skipped = append(c.skipped, "literal initializer of "+name)
		}
	}
	for _, st := range p.Stmts {
		switch st := st.(type) {
		case *program.InputStmt:
			shape("input "+st.Name, st.Name, st.Shape)
			init(st.Name, st.Init)
		case *program.LeafStmt:
			shape("leaf "+st.Name, st.Name, st.Shape)
			init(st.Name, st.Init)
		case *program.ParamStmt:
			fields("param "+st.Name, st.Name, st.Fields)
			init(st.Name, st.Init)
		}
		eachExpr(st, func(e program.Expr) {
			if ip, ok := e.(*program.InlineParam); ok {
				fields("{"+ip.Name+"}", ip.Name, ip.Fields)
				if ip.Init != nil {
					if _, ok := ip.Init.(*program.Literal); ok {
						c.skipped = append(c.skipped, "literal initializer of "+ip.Name)
					}
				}
			}
		})
	}
}

// captureSites maps the position of each spec operation that has a
// capture list to its captured names.
func captureSites(p *program.Program) map[spec.Pos][]string {
	out := map[spec.Pos][]string{}
	for _, st := range p.Stmts {
		eachExpr(st, func(e program.Expr) {
			var caps []program.Capture
			var pos spec.Pos
			switch e := e.(type) {
			case *program.Einsum:
				caps, pos = e.Captures, e.Pos
			case *program.Concat:
				caps, pos = e.Captures, e.Pos
			}
			for _, cp := range caps {
				out[pos] = append(out[pos], cp.Name)
			}
		})
	}
	return out
}

// dims checks `dim NAME = v`: a captured label has size v; a captured
// row variable's axes multiply to v (Total_elems).
func (c *checker) dims(p *program.Program, caps map[spec.Pos][]string) {
	for _, st := range p.Stmts {
		ds, ok := st.(*program.DimStmt)
		if !ok {
			continue
		}
		var sites []*inference.Op
		for _, op := range c.g.Ops {
			if slices.Contains(caps[op.Pos], ds.Name) {
				sites = append(sites, op)
			}
		}
		if len(sites) != 1 {
			c.skipped = append(c.skipped, fmt.Sprintf("dim %s (%d capturing operations)", ds.Name, len(sites)))
			continue
		}
		op := sites[0]
		where := fmt.Sprintf("dim %s = %d", ds.Name, ds.Value)
		c.checked++
		if rv, ok := c.rowVals[op][ds.Name]; ok && isRowVar(op, ds.Name) {
			n := 1
			for _, d := range rv {
				n *= d.Size
			}
			if n != ds.Value {
				c.fail(where, "the captured row variable's axes %v multiply to %d", dimsString(rv), n)
			}
			continue
		}
		if n, ok := op.Labels[ds.Name]; !ok || n != ds.Value {
			c.fail(where, "the captured label has size %d (present: %v)", n, ok)
		}
	}
}

// isRowVar reports whether name is a row variable of op's spec (a `...`
// is captured by its kind's name).
func isRowVar(op *inference.Op, name string) bool {
	if op.Spec == nil {
		return false
	}
	for _, sl := range append(append([]spec.Slot{}, op.Spec.RHS...), op.Spec.LHS) {
		for k := range 3 {
			if r := sl.Rows[k]; r.HasVar && r.Var == name {
				return true
			}
		}
	}
	return false
}

// eachExpr calls f on every expression of a statement, depth first.
func eachExpr(st program.Stmt, f func(program.Expr)) {
	var roots []program.Expr
	switch st := st.(type) {
	case *program.LetStmt:
		roots = []program.Expr{st.Expr}
	case *program.AssignStmt:
		roots = st.Args
	}
	for _, r := range roots {
		program.Inspect(r, func(e program.Expr) bool {
			f(e)
			return true
		})
	}
}

func dimsString(ds []Dim) string {
	s := "["
	for i, d := range ds {
		if i > 0 {
			s += ","
		}
		s += dimString(d)
	}
	return s + "]"
}

func dimString(d Dim) string {
	switch d.Basis {
	case inference.BasisBcast:
		return fmt.Sprintf("%d_∅", d.Size)
	case inference.BasisDefault:
		return fmt.Sprint(d.Size)
	}
	return fmt.Sprintf("%d:%s", d.Size, d.Basis)
}

func rowString(r Row) string {
	return dimsString(r.lead()) + "·◇·" + dimsString(r.trail())
}
