package cuda

import (
	"fmt"
	"math"

	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
)

// Block reductions: a nest that writes few cells, each the reduction of
// many values (a loss, a bias gradient summed over the batch), runs one
// block per cell: the threads accumulate strided parts of the reduction,
// then combine them in shared memory.
// reduceNeutral is the neutral element of the associative accumulators
// block reductions use.
var reduceNeutral = map[ops.AccumName]float64{ops.AccAdd: 0, ops.AccMax: math.Inf(-1), ops.AccMin: math.Inf(1)}

// reduceOf returns the reduction loops of a nest to reduce by blocks, or
// nil.
func (g *kgen) reduceOf(n *nestInfo) []*loopir.For {
	if len(n.stores) != 1 || len(n.par) == len(n.prefix) {
		return nil
	}
	st := n.stores[0]
	last := n.prefix[len(n.prefix)-1]
	if len(last.Body) != 1 || last.Body[0] != st || !st.Accumulate {
		return nil
	}
	if _, ok := reduceNeutral[st.Accum]; !ok {
		return nil
	}
	var red []*loopir.For
	for _, f := range n.prefix {
		if !contains(n.par, f) {
			if g.coeffOf(st.Tensor, st.Index, f.Var) != 0 {
				return nil // the loop moves the cell: not a reduction into it
			}
			red = append(red, f)
		}
	}
	if extent(n.par) > g.t.ReduceMaxCells || extent(red) < g.t.ReduceMinLen {
		return nil
	}
	return red
}

// blockReduce emits the block-per-cell reduction of nest n.
func (g *kgen) blockReduce(o *loopir.Operation, n *nestInfo, red []*loopir.For) error {
	st := n.stores[0]
	acc := ops.LookupAccum(st.Accum)
	cells, R := extent(n.par), extent(red)
	g.launch(o, [3]int{cells, 1, 1}, g.t.Block, true, n.args)
	ct, it := g.ct, g.idxType()
	w := g.b
	fmt.Fprintf(w, "  // Block reduction: %d values per cell, %d threads.\n", R, g.t.Block)
	fmt.Fprintf(w, "  __shared__ %s part[%d];\n", ct, g.t.Block)
	if len(n.par) > 0 {
		g.decode("  ", "cx", "blockIdx.x", n.par)
	}
	fmt.Fprintf(w, "  %s a = %s;\n", ct, g.lit(reduceNeutral[st.Accum]))
	fmt.Fprintf(w, "  for (%s r = threadIdx.x; r < %d; r += %d) {\n", it, R, g.t.Block)
	g.decode("    ", "rx", "r", red)
	g.tmp = 0
	v, err := g.expr(st.Value, "    ")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "    a = %s;\n  }\n", subst(acc.CUDA(), []string{"a", v}, ct))
	fmt.Fprintf(w, "  part[threadIdx.x] = a;\n  __syncthreads();\n")
	fmt.Fprintf(w, "  for (int s = %d; s > 0; s >>= 1) {\n", g.t.Block/2)
	fmt.Fprintf(w, "    if ((int)threadIdx.x < s) part[threadIdx.x] = %s;\n", subst(acc.CUDA(), []string{"part[threadIdx.x]", "part[threadIdx.x + s]"}, ct))
	fmt.Fprintf(w, "    __syncthreads();\n  }\n")
	cell := fmt.Sprintf("t%d[%s]", st.Tensor, g.offset(st.Tensor, st.Index, nil))
	fmt.Fprintf(w, "  if (threadIdx.x == 0) {\n    %s old = %s;\n    %s = %s;\n  }\n}\n", ct, cell, cell, subst(acc.CUDA(), []string{"old", "part[0]"}, ct))
	return nil
}
