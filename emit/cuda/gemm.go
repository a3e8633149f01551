package cuda

import (
	"fmt"

	"github.com/ocannlgen/ocannlgen/loopir"
)

// gemmNest is a matmul-class nest: C[...] += A[...] * B[...] with the
// reduction loop k, the row loop m (read by A only), the column loop n
// (read by B only) and the batch loops (the other thread loops).
type gemmNest struct {
	st      *loopir.Store
	a, b    *loopir.Load
	m, n, k *loopir.For
	batch   []*loopir.For
}

// coeffOf is the coefficient of loop variable v in the flattened offset
// of an access (0: the access does not depend on v).
func (g *kgen) coeffOf(t int, idx []loopir.IndexExpr, v int) int {
	bd := g.p.Tensors[t].BufDims
	c, stride := 0, 1
	for a := len(bd) - 1; a >= 0; a-- {
		if a < len(idx) {
			for _, tm := range idx[a].Terms {
				if tm.Var == v {
					c += tm.Coeff * stride
				}
			}
		}
		stride *= bd[a]
	}
	return c
}

// gemmOf recognizes a matmul-class nest, or returns nil.
func (g *kgen) gemmOf(n *nestInfo) *gemmNest {
	if len(n.stores) != 1 || len(n.par)+1 != len(n.prefix) {
		return nil
	}
	st := n.stores[0]
	last := n.prefix[len(n.prefix)-1]
	if len(last.Body) != 1 || last.Body[0] != st || !st.Accumulate || st.Accum != "add" {
		return nil
	}
	ap, ok := st.Value.(*loopir.Apply)
	if !ok || ap.Prim != "mul" || len(ap.Args) != 2 {
		return nil
	}
	la, ok1 := ap.Args[0].(*loopir.Load)
	lb, ok2 := ap.Args[1].(*loopir.Load)
	if !ok1 || !ok2 {
		return nil
	}
	gm := &gemmNest{st: st, a: la, b: lb}
	for _, f := range n.prefix {
		if !contains(n.par, f) {
			gm.k = f
		}
	}
	ca := func(v int) int { return g.coeffOf(la.Tensor, la.Index, v) }
	cb := func(v int) int { return g.coeffOf(lb.Tensor, lb.Index, v) }
	if ca(gm.k.Var) == 0 || cb(gm.k.Var) == 0 || g.coeffOf(st.Tensor, st.Index, gm.k.Var) != 0 {
		return nil
	}
	for _, f := range n.par {
		switch {
		case ca(f.Var) != 0 && cb(f.Var) == 0 && (gm.m == nil || f.Extent > gm.m.Extent):
			gm.m = f
		case cb(f.Var) != 0 && ca(f.Var) == 0 && (gm.n == nil || f.Extent > gm.n.Extent):
			gm.n = f
		}
	}
	if gm.m == nil || gm.n == nil || gm.m.Extent < gemmMin || gm.n.Extent < gemmMin || gm.k.Extent < gemmMin {
		return nil
	}
	z := 1
	for _, f := range n.par {
		if f != gm.m && f != gm.n {
			gm.batch = append(gm.batch, f)
			z *= f.Extent
		}
	}
	if z > 65535 || (gm.m.Extent+tileM-1)/tileM > 65535 {
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

// gemm emits the tiled GEMM: a block computes a tileM x tileN tile of C
// for one batch index (blockIdx.z), staging tileK-deep slices of A and B
// in shared memory; each thread accumulates a regM x regN register block
// (rows ty + 16 r, columns tx + 16 c) and adds it to C once.
func (g *kgen) gemm(o *loopir.Operation, n *nestInfo, gm *gemmNest) error {
	z := 1
	for _, f := range gm.batch {
		z *= f.Extent
	}
	grid := [3]int{(gm.n.Extent + tileN - 1) / tileN, (gm.m.Extent + tileM - 1) / tileM, z}
	g.launch(o, grid, gemmThreads, true, n.args)
	ct, it := g.ct, g.idxType()
	M, N, K := gm.m.Extent, gm.n.Extent, gm.k.Extent
	mv, nv, kv := gm.m.Var, gm.n.Var, gm.k.Var
	w := g.b
	fmt.Fprintf(w, "  // Tiled GEMM: C %dx%d += A * B over %d (i%d rows, i%d columns, i%d reduced).\n", M, N, K, mv, nv, kv)
	fmt.Fprintf(w, "  __shared__ %s As[%d][%d];\n  __shared__ %s Bs[%d][%d];\n", ct, tileK, tileM, ct, tileK, tileN)
	fmt.Fprintf(w, "  const int tx = threadIdx.x %% 16, ty = threadIdx.x / 16;\n")
	fmt.Fprintf(w, "  const %[1]s m0 = (%[1]s)blockIdx.y * %[2]d, n0 = (%[1]s)blockIdx.x * %[3]d;\n", it, tileM, tileN)
	fmt.Fprintf(w, "  %s zb = blockIdx.z;\n", it)
	for i := len(gm.batch) - 1; i >= 0; i-- {
		f := gm.batch[i]
		fmt.Fprintf(w, "  const %s i%d = zb %% %d; zb /= %d;\n", it, f.Var, f.Extent, f.Extent)
	}
	fmt.Fprintf(w, "  %s acc[%d][%d];\n", ct, regM, regN)
	fmt.Fprintf(w, "  for (int r = 0; r < %d; ++r)\n    for (int c = 0; c < %d; ++c) acc[r][c] = (%s)0;\n", regM, regN, ct)
	fmt.Fprintf(w, "  for (%[1]s k0 = 0; k0 < %[2]d; k0 += %[3]d) {\n", it, K, tileK)
	fmt.Fprintf(w, "    for (int e = threadIdx.x; e < %d; e += %d) {\n", tileK*tileM, gemmThreads)
	fmt.Fprintf(w, "      const int kk = e / %d, mm = e %% %d;\n", tileM, tileM)
	fmt.Fprintf(w, "      const %s i%d = m0 + mm, i%d = k0 + kk;\n", it, mv, kv)
	fmt.Fprintf(w, "      As[kk][mm] = (i%d < %d && i%d < %d) ? t%d[%s] : (%s)0;\n", mv, M, kv, K, gm.a.Tensor, g.offset(gm.a.Tensor, gm.a.Index, nil), ct)
	fmt.Fprintf(w, "    }\n")
	fmt.Fprintf(w, "    for (int e = threadIdx.x; e < %d; e += %d) {\n", tileK*tileN, gemmThreads)
	fmt.Fprintf(w, "      const int kk = e / %d, nn = e %% %d;\n", tileN, tileN)
	fmt.Fprintf(w, "      const %s i%d = n0 + nn, i%d = k0 + kk;\n", it, nv, kv)
	fmt.Fprintf(w, "      Bs[kk][nn] = (i%d < %d && i%d < %d) ? t%d[%s] : (%s)0;\n", nv, N, kv, K, gm.b.Tensor, g.offset(gm.b.Tensor, gm.b.Index, nil), ct)
	fmt.Fprintf(w, "    }\n    __syncthreads();\n")
	fmt.Fprintf(w, "    #pragma unroll\n    for (int kk = 0; kk < %d; ++kk) {\n", tileK)
	fmt.Fprintf(w, "      %s a[%d], b[%d];\n", ct, regM, regN)
	fmt.Fprintf(w, "      #pragma unroll\n      for (int r = 0; r < %d; ++r) a[r] = As[kk][ty + 16 * r];\n", regM)
	fmt.Fprintf(w, "      #pragma unroll\n      for (int c = 0; c < %d; ++c) b[c] = Bs[kk][tx + 16 * c];\n", regN)
	fmt.Fprintf(w, "      #pragma unroll\n      for (int r = 0; r < %d; ++r)\n        #pragma unroll\n        for (int c = 0; c < %d; ++c) acc[r][c] += a[r] * b[c];\n", regM, regN)
	fmt.Fprintf(w, "    }\n    __syncthreads();\n  }\n")
	fmt.Fprintf(w, "  for (int r = 0; r < %d; ++r)\n    for (int c = 0; c < %d; ++c) {\n", regM, regN)
	fmt.Fprintf(w, "      const %s i%d = m0 + ty + 16 * r, i%d = n0 + tx + 16 * c;\n", it, mv, nv)
	fmt.Fprintf(w, "      if (i%d < %d && i%d < %d) {\n", mv, M, nv, N)
	cell := fmt.Sprintf("t%d[%s]", gm.st.Tensor, g.offset(gm.st.Tensor, gm.st.Index, nil))
	fmt.Fprintf(w, "        %s += acc[r][c];\n      }\n    }\n}\n", cell)
	return nil
}
