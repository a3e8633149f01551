package inference

import (
	"fmt"
	"io"
	"strings"
)

// dump prints the state of inference: every tensor's rows as far as they
// are solved (batch | input -> output; a dimension variable is its spec
// label or ?N, an open row variable ..rN..), then how many variables are
// still open and how many constraints are deferred. The output is
// deterministic.
func (b *builder) dump(w io.Writer) {
	s := b.s
	var out strings.Builder
	for _, t := range b.g.Tensors {
		fmt.Fprintf(&out, "%s (%s): %s | %s -> %s\n", t.Name, t.Kind,
			b.dumpRow(t.rows[0]), b.dumpRow(t.rows[1]), b.dumpRow(t.rows[2]))
	}
	openRows, openDims := 0, 0
	for i := range s.rows {
		if !s.rows[i].solved {
			openRows++
		}
	}
	for i := range s.dims {
		if !s.dims[i].solved {
			openDims++
		}
	}
	fmt.Fprintf(&out, "# open: %d row variable(s), %d dimension variable(s); deferred: %d constraint(s)\n",
		openRows, openDims, len(s.deferred))
	io.WriteString(w, out.String())
}

func (b *builder) dumpRow(r row) string {
	s := b.s
	r = s.resolveRowDims(r)
	var parts []string
	for _, d := range r.beg {
		parts = append(parts, b.dumpDim(d))
	}
	if r.open() {
		parts = append(parts, fmt.Sprintf("..r%d..", r.v))
	}
	for _, d := range r.end {
		parts = append(parts, b.dumpDim(d))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (b *builder) dumpDim(d dim) string {
	if d.k == dVar && b.s.dims[d.v].name == "" {
		return fmt.Sprintf("?%d", d.v)
	}
	return b.s.dimString(d)
}

// DumpProjections prints every operation's projection record: the
// product space (iterator ranges, coupled factors joined by ^), the index
// map of the LHS and of each operand, and the zero-init and accumulate
// flags; then each padded tensor's margins. Operations without a record
// (projections not derived) print as such.
func (g *Graph) DumpProjections(w io.Writer) {
	var out strings.Builder
	for i, op := range g.Ops {
		if i > 0 {
			out.WriteString("\n")
		}
		fmt.Fprintf(&out, "# %s\n", op.Desc)
		p := op.Proj
		if p == nil {
			out.WriteString("no projections\n")
			continue
		}
		var fs []string
		for _, f := range p.Product {
			var its []string
			for k, it := range f.Iters {
				its = append(its, fmt.Sprintf("i%d<%d", it, f.Extents[k]))
			}
			fs = append(fs, strings.Join(its, "^"))
		}
		fmt.Fprintf(&out, "product: [%s]\n", strings.Join(fs, ", "))
		fmt.Fprintf(&out, "%s%s", g.Tensors[op.LHS].Name, indexList(p.LHS))
		for k, r := range op.RHS {
			sep := " := "
			if k > 0 {
				sep = ", "
			}
			fmt.Fprintf(&out, "%s%s%s", sep, g.Tensors[r].Name, indexList(p.RHS[k]))
		}
		fmt.Fprintf(&out, "\nzero-init %v, accumulate %v\n", p.ZeroInit, p.Accumulate)
	}
	for _, t := range g.Tensors {
		if len(t.Padding) == 0 {
			continue
		}
		var ms []string
		for _, m := range t.Padding {
			ms = append(ms, fmt.Sprintf("%d+%d", m.Left, m.Right))
		}
		fmt.Fprintf(&out, "\n# padded %s: margins (left+right) %s\n", t.Name, strings.Join(ms, ", "))
	}
	io.WriteString(w, out.String())
}

func indexList(xs []Index) string {
	p := make([]string, len(xs))
	for i, x := range xs {
		p[i] = x.String()
	}
	return "[" + strings.Join(p, ", ") + "]"
}
