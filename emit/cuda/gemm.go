package cuda

import (
	"fmt"
	"strings"

	"github.com/ocannlgen/ocannlgen/loopir"
)

// gemmNest is a matmul-class nest: C[...] += A[...] * B[...] where the
// row loops m (read by A, not B), the column loops n (read by B, not A)
// and the batch loops (the other thread loops) own C's cells, and the
// reduction loops k (the other loops, not indexing C) are summed. Several
// loops of a class are flattened into one GEMM dimension (last loop
// fastest): a convolution is an implicit GEMM over rows (batch, output
// positions), columns (output channels) and reductions (kernel positions,
// input channels).
type gemmNest struct {
	st      *loopir.Store
	a, b    *loopir.Load
	m, n, k []*loopir.For
	batch   []*loopir.For
}

func extent(fs []*loopir.For) int {
	n := 1
	for _, f := range fs {
		n *= f.Extent
	}
	return n
}

// coeffOf is the coefficient of loop variable v in the flattened offset
// of an access (0: the access does not depend on v).
func (g *kgen) coeffOf(t int, idx []loopir.IndexExpr, v int) int {
	st, _ := loopir.FlatStrides(idx, g.p.Tensors[t].BufDims)
	return st[v]
}

// gemmOf recognizes a matmul-class nest, or returns nil.
func (g *kgen) gemmOf(n *nestInfo) *gemmNest {
	if len(n.stores) != 1 || len(n.par) == len(n.prefix) {
		return nil
	}
	st := n.stores[0]
	last := n.prefix[len(n.prefix)-1]
	if len(last.Body) != 1 || last.Body[0] != st {
		return nil
	}
	la, lb, ok := loopir.ProductOf(st)
	if !ok {
		return nil
	}
	gm := &gemmNest{st: st, a: la, b: lb}
	ca := func(v int) int { return g.coeffOf(la.Tensor, la.Index, v) }
	cb := func(v int) int { return g.coeffOf(lb.Tensor, lb.Index, v) }
	for _, f := range n.prefix {
		switch {
		case !contains(n.par, f):
			if g.coeffOf(st.Tensor, st.Index, f.Var) != 0 {
				return nil
			}
			gm.k = append(gm.k, f)
		case ca(f.Var) != 0 && cb(f.Var) == 0:
			gm.m = append(gm.m, f)
		case cb(f.Var) != 0 && ca(f.Var) == 0:
			gm.n = append(gm.n, f)
		default:
			gm.batch = append(gm.batch, f)
		}
	}
	M, N, K, Z := extent(gm.m), extent(gm.n), extent(gm.k), extent(gm.batch)
	if len(gm.m) == 0 || len(gm.n) == 0 || M < g.t.GEMMMin || N < g.t.GEMMMin || K < g.t.GEMMMin {
		return nil
	}
	if Z > 65535 || (M+g.t.TileM-1)/g.t.TileM > 65535 || int64(M)*int64(N)*int64(K) >= 1<<62 {
		return nil
	}
	return gm
}

func contains(fs []*loopir.For, f *loopir.For) bool {
	for _, x := range fs {
		if x == f {
			return true
		}
	}
	return false
}

// decode declares the loop variables of fs from the flattened index
// expression x (the last loop fastest).
func (g *kgen) decode(ind, tmp, x string, fs []*loopir.For) {
	it := g.idxType()
	fmt.Fprintf(g.b, "%s%s %s = %s;\n", ind, it, tmp, x)
	for i := len(fs) - 1; i >= 0; i-- {
		if i == 0 {
			fmt.Fprintf(g.b, "%sconst %s i%d = %s;\n", ind, it, fs[i].Var, tmp)
		} else {
			fmt.Fprintf(g.b, "%sconst %s i%d = %s %% %d; %s /= %d;\n", ind, it, fs[i].Var, tmp, fs[i].Extent, tmp, fs[i].Extent)
		}
	}
}

func varNames(fs []*loopir.For) string {
	var s []string
	for _, f := range fs {
		s = append(s, fmt.Sprintf("i%d", f.Var))
	}
	return strings.Join(s, ",")
}

// gemm emits the tiled GEMM of the target's tiles (target.CUDA): a block
// computes a TileM x TileN tile of C for one batch index (blockIdx.z),
// staging TileK-deep slices of A and B in shared memory; each thread
// accumulates a RegM x RegN register block (rows ty + TileM/RegM r,
// columns tx + TileN/RegN c) and adds it to C once.
func (g *kgen) gemm(o *loopir.Operation, n *nestInfo, gm *gemmNest) error {
	M, N, K, Z := extent(gm.m), extent(gm.n), extent(gm.k), extent(gm.batch)
	grid := [3]int{(N + g.t.TileN - 1) / g.t.TileN, (M + g.t.TileM - 1) / g.t.TileM, Z}
	g.launch(o, grid, (g.t.TileM/g.t.RegM)*(g.t.TileN/g.t.RegN), true, n.args)
	ct, it := g.ct, g.idxType()
	w := g.b
	tileM, tileN, tileK, regM, regN := g.t.TileM, g.t.TileN, g.t.TileK, g.t.RegM, g.t.RegN
	tm, tn := tileM/regM, tileN/regN // threads along m and n
	gemmThreads := tm * tn
	fmt.Fprintf(w, "  // Tiled GEMM: C %dx%d += A * B over %d (rows %s, columns %s, reduced %s).\n", M, N, K, varNames(gm.m), varNames(gm.n), varNames(gm.k))
	fmt.Fprintf(w, "  __shared__ %s As[%d][%d];\n  __shared__ %s Bs[%d][%d];\n", ct, tileK, tileM, ct, tileK, tileN)
	fmt.Fprintf(w, "  const int tx = threadIdx.x %% %d, ty = threadIdx.x / %d;\n", tn, tn)
	fmt.Fprintf(w, "  const %[1]s m0 = (%[1]s)blockIdx.y * %[2]d, n0 = (%[1]s)blockIdx.x * %[3]d;\n", it, tileM, tileN)
	if len(gm.batch) > 0 {
		g.decode("  ", "zb", "blockIdx.z", gm.batch)
	}
	fmt.Fprintf(w, "  %s acc[%d][%d];\n", ct, regM, regN)
	fmt.Fprintf(w, "  for (int r = 0; r < %d; ++r)\n    for (int c = 0; c < %d; ++c) acc[r][c] = (%s)0;\n", regM, regN, ct)
	fmt.Fprintf(w, "  for (%[1]s k0 = 0; k0 < %[2]d; k0 += %[3]d) {\n", it, K, tileK)
	for _, side := range []struct {
		arr  string
		tile int
		ld   *loopir.Load
		rows []*loopir.For
		base string
		ext  int
	}{{"As", tileM, gm.a, gm.m, "m0", M}, {"Bs", tileN, gm.b, gm.n, "n0", N}} {
		fmt.Fprintf(w, "    for (int e = threadIdx.x; e < %d; e += %d) {\n", tileK*side.tile, gemmThreads)
		fmt.Fprintf(w, "      const int kk = e / %d, rr = e %% %d;\n", side.tile, side.tile)
		fmt.Fprintf(w, "      %s v = (%s)0;\n", ct, ct)
		fmt.Fprintf(w, "      if (%s + rr < %d && k0 + kk < %d) {\n", side.base, side.ext, K)
		g.decode("        ", "rx", side.base+" + rr", side.rows)
		g.decode("        ", "kx", "k0 + kk", gm.k)
		fmt.Fprintf(w, "        v = t%d[%s];\n      }\n", side.ld.Tensor, g.offset(side.ld.Tensor, side.ld.Index, nil))
		fmt.Fprintf(w, "      %s[kk][rr] = v;\n    }\n", side.arr)
	}
	fmt.Fprintf(w, "    __syncthreads();\n")
	fmt.Fprintf(w, "    #pragma unroll\n    for (int kk = 0; kk < %d; ++kk) {\n", tileK)
	fmt.Fprintf(w, "      %s a[%d], b[%d];\n", ct, regM, regN)
	fmt.Fprintf(w, "      #pragma unroll\n      for (int r = 0; r < %d; ++r) a[r] = As[kk][ty + %d * r];\n", regM, tm)
	fmt.Fprintf(w, "      #pragma unroll\n      for (int c = 0; c < %d; ++c) b[c] = Bs[kk][tx + %d * c];\n", regN, tn)
	fmt.Fprintf(w, "      #pragma unroll\n      for (int r = 0; r < %d; ++r)\n        #pragma unroll\n        for (int c = 0; c < %d; ++c) acc[r][c] += a[r] * b[c];\n", regM, regN)
	fmt.Fprintf(w, "    }\n    __syncthreads();\n  }\n")
	fmt.Fprintf(w, "  for (int r = 0; r < %d; ++r)\n    for (int c = 0; c < %d; ++c) {\n", regM, regN)
	fmt.Fprintf(w, "      if (m0 + ty + %d * r < %d && n0 + tx + %d * c < %d) {\n", tm, M, tn, N)
	g.decode("        ", "rm", fmt.Sprintf("m0 + ty + %d * r", tm), gm.m)
	g.decode("        ", "rn", fmt.Sprintf("n0 + tx + %d * c", tn), gm.n)
	cell := fmt.Sprintf("t%d[%s]", gm.st.Tensor, g.offset(gm.st.Tensor, gm.st.Index, nil))
	fmt.Fprintf(w, "        %s += acc[r][c];\n      }\n    }\n}\n", cell)
	return nil
}
