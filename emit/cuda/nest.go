package cuda

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
)

// nestInfo is the analysis of one loop nest.
type nestInfo struct {
	// prefix is the perfect prefix: loops each holding exactly the next.
	prefix []*loopir.For
	// par are the loops run one thread per value (a subset of prefix,
	// outermost first).
	par []*loopir.For
	// stores and loads of the whole nest.
	stores []*loopir.Store
	loads  []*loopir.Load
	// args are the tensors the nest touches, sorted.
	args []int
}

func analyze(s loopir.Stmt) *nestInfo {
	n := &nestInfo{}
	cur := s
	for {
		f, ok := cur.(*loopir.For)
		if !ok {
			break
		}
		n.prefix = append(n.prefix, f)
		if len(f.Body) != 1 {
			break
		}
		cur = f.Body[0]
	}
	loopir.WalkStores(s, func(st *loopir.Store, _ map[int]int) {
		n.stores = append(n.stores, st)
		loopir.WalkLoads(st.Value, func(l *loopir.Load) { n.loads = append(n.loads, l) })
	})
	seen := map[int]bool{}
	written := map[int]bool{}
	for _, st := range n.stores {
		seen[st.Tensor], written[st.Tensor] = true, true
		// A gather's index input is read through its indices.
		for _, x := range st.Index {
			if x.Data != nil {
				seen[x.Data.Tensor] = true
			}
		}
	}
	for _, l := range n.loads {
		for _, x := range l.Index {
			if x.Data != nil {
				seen[x.Data.Tensor] = true
			}
		}
	}
	hazard := false
	for _, l := range n.loads {
		seen[l.Tensor] = true
		hazard = hazard || written[l.Tensor]
	}
	for t := range seen {
		n.args = append(n.args, t)
	}
	slices.Sort(n.args)
	if hazard {
		return n // one thread: a cell read may be another thread's
	}
	for _, f := range n.prefix {
		if f.Extent > 0 && ownsAxis(n.stores, f.Var) {
			n.par = append(n.par, f)
		}
	}
	return n
}

// ownsAxis reports whether v may be split across threads of a nest
// storing stores: loopir.OwnsFirstAxis over their indices.
func ownsAxis(stores []*loopir.Store, v int) bool {
	idxs := make([][]loopir.IndexExpr, len(stores))
	for i, st := range stores {
		idxs[i] = st.Index
	}
	return loopir.OwnsFirstAxis(v, idxs...)
}

// offset renders the buffer offset of tensor t at idx, with loop
// variable v named names[v] (i<v> when absent).
func (g *kgen) offset(t int, idx []loopir.IndexExpr, names map[int]string) string {
	bd := g.p.Tensors[t].BufDims
	coeff := map[int]int{}
	var vars []int
	konst := 0
	stride := 1
	for a := len(bd) - 1; a >= 0; a-- {
		if a < len(idx) {
			konst += idx[a].Offset * stride
			for _, tm := range idx[a].Terms {
				if _, ok := coeff[tm.Var]; !ok {
					vars = append(vars, tm.Var)
				}
				coeff[tm.Var] += tm.Coeff * stride
			}
		}
		stride *= bd[a]
	}
	slices.Sort(vars)
	var parts []string
	for a := range idx {
		if d := idx[a].Data; d != nil && a < len(bd) {
			// A gathered position: the index input's cell (an integer
			// held as a float), scaled by the axis's stride.
			st := 1
			for b := a + 1; b < len(bd); b++ {
				st *= bd[b]
			}
			cell := fmt.Sprintf("(%s)t%d[%s]", g.idxType(), d.Tensor, g.offset(d.Tensor, d.Index, names))
			if st*max(d.Scale, 1) != 1 {
				cell = fmt.Sprintf("%d * %s", st*max(d.Scale, 1), cell)
			}
			parts = append(parts, cell)
		}
	}
	for _, v := range vars {
		c := coeff[v]
		if c == 0 {
			continue
		}
		name := names[v]
		if name == "" && names == nil {
			name = g.names[v]
		}
		if name == "" {
			name = fmt.Sprintf("i%d", v)
		}
		if c == 1 {
			parts = append(parts, name)
		} else {
			parts = append(parts, fmt.Sprintf("%d * %s", c, name))
		}
	}
	if konst != 0 || len(parts) == 0 {
		parts = append(parts, fmt.Sprint(konst))
	}
	return strings.Join(parts, " + ")
}

// nest emits one loop nest.
func (g *kgen) nest(o *loopir.Operation, s loopir.Stmt) error {
	n := analyze(s)
	for _, f := range n.prefix {
		if f.Extent == 0 {
			return nil
		}
	}
	if !loopir.StmtDynamic(s) {
		if gm := g.gemmOf(n); gm != nil {
			return g.gemm(o, n, gm)
		}
		if red := g.reduceOf(n); red != nil {
			return g.blockReduce(o, n, red)
		}
	}
	total := 1
	for _, f := range n.par {
		total *= f.Extent
	}
	g.launch(o, g.blocks(total), g.t.Block, false, n.args)
	it := g.idxType()
	fmt.Fprintf(g.b, "  %[1]s tid = (%[1]s)blockIdx.x * blockDim.x + threadIdx.x;\n  if (tid >= %[2]d) return;\n", it, total)
	for i := len(n.par) - 1; i >= 0; i-- {
		f := n.par[i]
		if i == 0 {
			fmt.Fprintf(g.b, "  %s i%d = tid;\n", it, f.Var)
		} else {
			fmt.Fprintf(g.b, "  %s i%d = tid %% %d; tid /= %d;\n", it, f.Var, f.Extent, f.Extent)
		}
	}
	g.tmp = 0
	if err := g.body(s, n.par, "  "); err != nil {
		return err
	}
	g.b.WriteString("}\n")
	return nil
}

// body emits s with the loops of par removed (their variables are the
// thread's).
func (g *kgen) body(s loopir.Stmt, par []*loopir.For, ind string) error {
	switch s := s.(type) {
	case *loopir.For:
		inner := ind
		if !slices.Contains(par, s) {
			fmt.Fprintf(g.b, "%sfor (%s i%d = 0; i%d < %d; ++i%d) {\n", ind, g.idxType(), s.Var, s.Var, s.Extent, s.Var)
			inner = ind + "  "
		}
		for _, c := range s.Body {
			if err := g.body(c, par, inner); err != nil {
				return err
			}
		}
		if inner != ind {
			fmt.Fprintf(g.b, "%s}\n", ind)
		}
		return nil
	case *loopir.Store:
		return g.store(s, ind)
	}
	return fmt.Errorf("statement %T inside a loop nest", s)
}

func (g *kgen) store(s *loopir.Store, ind string) error {
	fmt.Fprintf(g.b, "%s{\n", ind)
	in := ind + "  "
	v, err := g.expr(s.Value, in)
	if err != nil {
		return err
	}
	cell := fmt.Sprintf("t%d[%s]", s.Tensor, g.offset(s.Tensor, s.Index, nil))
	if s.Accumulate && s.Accum != ops.NoAccum {
		a := ops.LookupAccum(s.Accum)
		if a == nil || a.CUDA() == "" {
			return fmt.Errorf("accumulator %q has no CUDA recipe", s.Accum)
		}
		fmt.Fprintf(g.b, "%s%s old = %s;\n", in, g.ct, cell)
		v = subst(a.CUDA(), []string{"old", v}, g.ct)
	}
	fmt.Fprintf(g.b, "%s%s = %s;\n%s}\n", in, cell, v, ind)
	return nil
}

// expr renders e, declaring a temporary for each application (so that a
// recipe that repeats an operand repeats a name, not a computation).
func (g *kgen) expr(e loopir.Expr, ind string) (string, error) {
	switch e := e.(type) {
	case *loopir.Const:
		return g.lit(e.Value), nil
	case *loopir.Load:
		return fmt.Sprintf("t%d[%s]", e.Tensor, g.offset(e.Tensor, e.Index, nil)), nil
	case *loopir.Apply:
		p := ops.Lookup(e.Prim)
		if p == nil || p.CUDA() == "" {
			return "", fmt.Errorf("primitive %q has no CUDA recipe", e.Prim)
		}
		args := make([]string, len(e.Args))
		for i, a := range e.Args {
			s, err := g.expr(a, ind)
			if err != nil {
				return "", err
			}
			args[i] = s
		}
		name := fmt.Sprintf("v%d", g.tmp)
		g.tmp++
		fmt.Fprintf(g.b, "%s%s %s = %s;\n", ind, g.ct, name, subst(p.CUDA(), args, g.ct))
		return name, nil
	}
	return "", fmt.Errorf("unknown expression %T", e)
}

// subst fills a recipe's operands and element type.
func subst(recipe string, args []string, ct string) string {
	var b strings.Builder
	for i := 0; i < len(recipe); i++ {
		if recipe[i] == '$' && i+1 < len(recipe) {
			c := recipe[i+1]
			switch {
			case c == 'T':
				b.WriteString(ct)
				i++
				continue
			case c >= '0' && c <= '9' && int(c-'0') < len(args):
				b.WriteString(args[c-'0'])
				i++
				continue
			}
		}
		b.WriteByte(recipe[i])
	}
	return b.String()
}
