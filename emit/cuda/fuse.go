package cuda

import (
	"fmt"
	"strings"

	"github.com/ocannlgen/ocannlgen/loopir"
)

// Fusion: consecutive pointwise nests (every loop owned by the thread,
// one store) over the same loop extents run as one function, each thread
// performing the stores of its point in program order. This is the
// interpreter's result when no store at one point can affect another
// point: a later nest reads a tensor an earlier one of the group writes
// only at the very cell written at the same point, and never writes a
// tensor the group has read or written.

// item is one top-level statement of an operation.
type item struct {
	o *loopir.Operation
	s loopir.Stmt
}

// pointwise returns the analysis of a fully parallel single-store nest,
// or nil.
func pointwise(s loopir.Stmt) *nestInfo {
	switch s.(type) {
	case *loopir.For, *loopir.Store:
	default:
		return nil
	}
	if loopir.StmtDynamic(s) {
		return nil // a gather runs in a kernel of its own
	}
	n := analyze(s)
	if len(n.stores) != 1 || len(n.par) != len(n.prefix) {
		return nil
	}
	if len(n.prefix) == 0 {
		return n // a store without loops
	}
	last := n.prefix[len(n.prefix)-1]
	if len(last.Body) != 1 || last.Body[0] != loopir.Stmt(n.stores[0]) {
		return nil
	}
	for _, f := range n.prefix {
		if f.Extent == 0 {
			return nil
		}
	}
	return n
}

// fusion is a group of pointwise nests being formed.
type fusion struct {
	items []item
	nests []*nestInfo
	// names maps each nest's loop variables to the first nest's names.
	names []map[int]string
	// reads and writes are the tensors the group reads and writes; cells
	// maps a written tensor to the offset text of its store.
	reads, writes map[int]bool
	cells         map[int]string
}

func (g *kgen) newFusion(it item, n *nestInfo) *fusion {
	f := &fusion{reads: map[int]bool{}, writes: map[int]bool{}, cells: map[int]string{}}
	f.add(g, it, n, map[int]string{})
	return f
}

func (f *fusion) add(g *kgen, it item, n *nestInfo, names map[int]string) {
	f.items = append(f.items, it)
	f.nests = append(f.nests, n)
	f.names = append(f.names, names)
	for _, l := range n.loads {
		f.reads[l.Tensor] = true
	}
	st := n.stores[0]
	f.writes[st.Tensor] = true
	f.cells[st.Tensor] = g.offset(st.Tensor, st.Index, names)
}

// tryAdd adds nest n to the group when the fusion rule allows it.
func (f *fusion) tryAdd(g *kgen, it item, n *nestInfo) bool {
	first := f.nests[0]
	if len(n.prefix) != len(first.prefix) {
		return false
	}
	names := map[int]string{}
	for i, l := range n.prefix {
		if l.Extent != first.prefix[i].Extent {
			return false
		}
		names[l.Var] = fmt.Sprintf("i%d", first.prefix[i].Var)
	}
	st := n.stores[0]
	if f.reads[st.Tensor] || f.writes[st.Tensor] {
		return false
	}
	for _, l := range n.loads {
		if f.writes[l.Tensor] && g.offset(l.Tensor, l.Index, names) != f.cells[l.Tensor] {
			return false
		}
	}
	f.add(g, it, n, names)
	return true
}

// emitFused emits a group of pointwise nests as one function.
func (g *kgen) emitFused(f *fusion) error {
	first := f.nests[0]
	var args []int
	seen := map[int]bool{}
	for _, n := range f.nests {
		for _, t := range n.args {
			if !seen[t] {
				seen[t] = true
				args = append(args, t)
			}
		}
	}
	sortInts(args)
	total := extent(first.prefix)
	g.launch(f.items[0].o, g.blocks(total), g.t.Block, false, args)
	if len(f.items) > 1 {
		var descs []string
		for _, it := range f.items[1:] {
			descs = append(descs, oneLine(it.o.Desc))
		}
		fmt.Fprintf(g.b, "  // Fused with: %s.\n", strings.Join(descs, "; "))
	}
	it := g.idxType()
	fmt.Fprintf(g.b, "  %[1]s tid = (%[1]s)blockIdx.x * blockDim.x + threadIdx.x;\n  if (tid >= %[2]d) return;\n", it, total)
	if len(first.prefix) > 0 {
		g.decode("  ", "px", "tid", first.prefix)
	}
	g.tmp = 0
	for i, n := range f.nests {
		g.names = f.names[i]
		err := g.store(n.stores[0], "  ")
		g.names = nil
		if err != nil {
			return err
		}
	}
	g.b.WriteString("}\n")
	return nil
}

func sortInts(xs []int) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

// items emits the top-level statements of the kernel, fusing runs of
// pointwise nests.
func (g *kgen) items(its []item) error {
	var cur *fusion
	flush := func() error {
		if cur == nil {
			return nil
		}
		err := g.emitFused(cur)
		cur = nil
		return err
	}
	for _, it := range its {
		n := pointwise(it.s)
		if n != nil && g.gemmOf(n) == nil && g.reduceOf(n) == nil {
			if cur != nil && cur.tryAdd(g, it, n) {
				continue
			}
			if err := flush(); err != nil {
				return err
			}
			cur = g.newFusion(it, n)
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		if err := g.stmt(it.o, it.s); err != nil {
			return err
		}
	}
	return flush()
}
