package loopir

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/ops"
)

// Dump prints the program in the seed documents' pseudo-code: after the
// "loops" pass, per operation a `# description` header and its loop nest
// (`for i0 in 0..31:` with inclusive bounds, `+=`/`max=`/... for
// accumulating stores, `=` for plain ones, `# reduction` after loops whose
// variable the stores' LHS indices do not mention); after "assign" only,
// the assignments with their projection indices. Padded tensors are
// listed first. The output is deterministic.
func (p *Program) Dump(w io.Writer) {
	var b strings.Builder
	first := true
	sep := func() {
		if !first {
			b.WriteString("\n")
		}
		first = false
	}
	var padded []string
	for _, t := range p.Tensors {
		if t.Padded() {
			var ms []string
			for _, m := range t.Padding {
				ms = append(ms, fmt.Sprintf("%d+%d", m.Left, m.Right))
			}
			buf := "not yet applied"
			if p.Reached(Padded) {
				buf = "buffer " + dimsString(t.BufDims)
			}
			padded = append(padded, fmt.Sprintf("# padded %s: dims %s, margins (left+right) %s, %s",
				t.Name, dimsString(t.Dims), strings.Join(ms, ", "), buf))
		}
	}
	if len(padded) > 0 {
		sep()
		for _, l := range padded {
			b.WriteString(l + "\n")
		}
	}
	switch {
	case p.Reached(Looped):
		for _, o := range p.Ops {
			sep()
			fmt.Fprintf(&b, "# %s\n", o.Desc)
			for _, s := range o.Body {
				p.dumpStmt(&b, s, 0)
			}
		}
	case p.Reached(Assigned):
		for _, a := range p.Assignments {
			sep()
			fmt.Fprintf(&b, "# %s\n", a.Description())
			p.dumpAssignment(&b, a)
		}
	default:
		b.WriteString("# (no pass has run)\n")
	}
	io.WriteString(w, b.String())
}

// String returns Dump's output.
func (p *Program) String() string {
	var b strings.Builder
	p.Dump(&b)
	return b.String()
}

func dimsString(ds []int) string {
	if len(ds) == 0 {
		return "[]"
	}
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = strconv.Itoa(d)
	}
	return strings.Join(s, "x")
}

func (p *Program) name(t int) string {
	if t >= 0 && t < len(p.Tensors) {
		return p.Tensors[t].Name
	}
	return fmt.Sprintf("t%d", t)
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// String prints the index: "i0", "2*i0 + i1 - 1", "3".
func (e IndexExpr) String() string {
	var b strings.Builder
	for i, t := range e.Terms {
		c := t.Coeff
		switch {
		case i == 0 && c < 0:
			b.WriteString("-")
			c = -c
		case i > 0 && c < 0:
			b.WriteString(" - ")
			c = -c
		case i > 0:
			b.WriteString(" + ")
		}
		if c != 1 {
			fmt.Fprintf(&b, "%d*", c)
		}
		fmt.Fprintf(&b, "i%d", t.Var)
	}
	if e.Data != nil {
		if len(e.Terms) > 0 {
			b.WriteString(" + ")
		}
		b.WriteString(formatAccess(e.Data.Name, e.Data.Index))
	}
	switch {
	case len(e.Terms) == 0 && e.Data != nil:
		if e.Offset != 0 {
			fmt.Fprintf(&b, " %+d", e.Offset)
		}
	case len(e.Terms) == 0:
		fmt.Fprintf(&b, "%d", e.Offset)
	case e.Offset > 0:
		fmt.Fprintf(&b, " + %d", e.Offset)
	case e.Offset < 0:
		fmt.Fprintf(&b, " - %d", -e.Offset)
	}
	return b.String()
}

func formatAccess(name string, idx []IndexExpr) string {
	s := make([]string, len(idx))
	for i, x := range idx {
		s[i] = x.String()
	}
	return name + "[" + strings.Join(s, ", ") + "]"
}

// infix returns the pseudo-code's infix symbol of a binary primitive, or
// "" when it prints as a call.
func infix(prim ops.PrimName) string {
	if p := ops.Lookup(prim); p != nil {
		return p.Symbol
	}
	return ""
}

// formatPrim prints prim applied to already formatted operands; compound
// operands (nested applications) are parenthesized in infix position.
func formatPrim(prim ops.PrimName, args []string, compound []bool) string {
	if op := infix(prim); op != "" && len(args) == 2 {
		a, c := args[0], args[1]
		if compound[0] {
			a = "(" + a + ")"
		}
		if compound[1] {
			c = "(" + c + ")"
		}
		return a + " " + op + " " + c
	}
	if prim == ops.ID && len(args) == 1 {
		return args[0]
	}
	return string(prim) + "(" + strings.Join(args, ", ") + ")"
}

func (p *Program) formatExpr(e Expr) string {
	switch e := e.(type) {
	case *Const:
		return formatFloat(e.Value)
	case *Load:
		return formatAccess(p.name(e.Tensor), e.Index)
	case *Apply:
		args := make([]string, len(e.Args))
		compound := make([]bool, len(e.Args))
		for i, a := range e.Args {
			args[i] = p.formatExpr(a)
			ap, ok := a.(*Apply)
			compound[i] = ok && !(ap.Prim == ops.ID && len(ap.Args) == 1) && infix(ap.Prim) != ""
		}
		return formatPrim(e.Prim, args, compound)
	}
	return "?"
}

// accumSymbol maps each accumulator to its store operator ("+=",
// "max="), from package ops's table; built once and never modified.
var accumSymbol = accumNotations()

func accumNotations() map[ops.AccumName]string {
	m := map[ops.AccumName]string{}
	for _, a := range ops.Accums() {
		m[a.Name] = a.Notation
	}
	return m
}

func storeOp(accum ops.AccumName, accumulate bool) string {
	if s, ok := accumSymbol[accum]; ok && accumulate {
		return s
	}
	return "="
}

func (p *Program) formatFetch(t int, k FetchKind, v float64, vs []float64, key [4]uint32, seed uint64) string {
	n := p.name(t)
	switch k {
	case FetchConst:
		return fmt.Sprintf("init %s: constant %s", n, formatFloat(v))
	case FetchValues:
		var s []string
		for i, x := range vs {
			if i == 8 {
				s = append(s, fmt.Sprintf("... (%d values)", len(vs)))
				break
			}
			s = append(s, formatFloat(x))
		}
		return fmt.Sprintf("init %s: values [%s]", n, strings.Join(s, ", "))
	case FetchRandom:
		return fmt.Sprintf("init %s: 0.5 * (uniform(threefry(threefry(key=%#x, seed=%d), offset)) - 0.5)", n, key, seed)
	case FetchDropout:
		return fmt.Sprintf("init %s: dropout mask of probability %s (0 or 1/(1-p), rt.DropoutMask(key=%#x, seed, step))", n, formatFloat(v), key)
	}
	return fmt.Sprintf("init %s: %s", n, k)
}

// storesOf appends the stores inside s.
func storesOf(s Stmt, out []*Store) []*Store {
	switch s := s.(type) {
	case *Store:
		return append(out, s)
	case *For:
		for _, c := range s.Body {
			out = storesOf(c, out)
		}
	}
	return out
}

// isReduction reports whether no store under the loop mentions its
// variable in the LHS index.
func isReduction(f *For) bool {
	stores := storesOf(f, nil)
	if len(stores) == 0 {
		return false
	}
	for _, st := range stores {
		for _, x := range st.Index {
			for _, t := range x.Terms {
				if t.Var == f.Var {
					return false
				}
			}
		}
	}
	return true
}

func (p *Program) dumpStmt(b *strings.Builder, s Stmt, depth int) {
	ind := strings.Repeat("  ", depth)
	switch s := s.(type) {
	case *For:
		fmt.Fprintf(b, "%sfor i%d in 0..%d:", ind, s.Var, s.Extent-1)
		if isReduction(s) {
			b.WriteString("  # reduction")
		}
		b.WriteString("\n")
		for _, c := range s.Body {
			p.dumpStmt(b, c, depth+1)
		}
	case *Store:
		fmt.Fprintf(b, "%s%s %s %s\n", ind, formatAccess(p.name(s.Tensor), s.Index), storeOp(s.Accum, s.Accumulate), p.formatExpr(s.Value))
	case *Fill:
		fmt.Fprintf(b, "%sfill %s with %s\n", ind, p.name(s.Tensor), formatFloat(s.Value))
	case *ResetPadding:
		fmt.Fprintf(b, "%sreset padding of %s to %s\n", ind, p.name(s.Tensor), formatFloat(s.Value))
	case *FetchStmt:
		fmt.Fprintf(b, "%s%s\n", ind, p.formatFetch(s.Tensor, s.Kind, s.Value, s.Values, s.Key, s.Seed))
	default:
		fmt.Fprintf(b, "%s? %T\n", ind, s)
	}
}

func projAccess(name string, idx []inference.Index) string {
	s := make([]string, len(idx))
	for i, x := range idx {
		s[i] = x.String()
	}
	return name + "[" + strings.Join(s, ", ") + "]"
}

func productString(pr *inference.Projections) string {
	var fs []string
	for _, f := range pr.Product {
		var cs []string
		for k, it := range f.Iters {
			cs = append(cs, fmt.Sprintf("i%d in 0..%d", it, f.Extents[k]-1))
		}
		if len(cs) == 1 {
			fs = append(fs, cs[0])
		} else {
			fs = append(fs, "("+strings.Join(cs, " then ")+")")
		}
	}
	if len(fs) == 0 {
		return "a single point"
	}
	return strings.Join(fs, ", ")
}

// dumpAssignment prints an assignment with the projection's own
// iterators: the pre-fill, the statement, and its product space.
func (p *Program) dumpAssignment(b *strings.Builder, a Assignment) {
	switch a := a.(type) {
	case *Fetch:
		fmt.Fprintf(b, "%s\n", p.formatFetch(a.Tensor, a.Kind, a.Value, a.Values, a.Key, a.Seed))
	case *AccumOp:
		if a.ZeroInit {
			fmt.Fprintf(b, "fill %s with %s\n", p.name(a.LHS), formatFloat(Neutral(a.Accum)))
		}
		args := make([]string, len(a.RHS))
		for i, r := range a.RHS {
			args[i] = projAccess(p.name(r), a.Proj.RHS[i])
		}
		fmt.Fprintf(b, "%s %s %s\n", projAccess(p.name(a.LHS), a.Proj.LHS), storeOp(a.Accum, a.Accumulate && a.Accum != ops.NoAccum),
			formatPrim(a.Prim, args, make([]bool, len(args))))
		fmt.Fprintf(b, "  over %s\n", productString(a.Proj))
	case *Block:
		if a.ZeroInit {
			fmt.Fprintf(b, "fill %s with 0\n", p.name(a.LHS))
		}
		args := make([]string, len(a.RHS))
		for i, r := range a.RHS {
			args[i] = projAccess(p.name(r), a.Proj.RHS[i])
		}
		fmt.Fprintf(b, "%s %s block(%s)\n", projAccess(p.name(a.LHS), a.Proj.LHS), storeOp(ops.AccAdd, a.Accumulate), strings.Join(args, ", "))
		fmt.Fprintf(b, "  over %s\n", productString(a.Proj))
	}
}
