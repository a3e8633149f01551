package cuda

import (
	"fmt"
	"strings"

	"github.com/ocannlgen/ocannlgen/emit/target"
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
	if Z > 65535 || (M+g.t.Small.M-1)/g.t.Small.M > 65535 || int64(M)*int64(N)*int64(K) >= 1<<62 {
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

// loadMode is how the threads of a block stage one operand's slice
// (rows x TileK values) from global memory: element by element, or in
// 128-bit float4 loads along a direction where 4 consecutive values are
// contiguous and 16-byte aligned.
type loadMode int

const (
	// scalarRows: element e = thread + threads*j, the row fastest.
	scalarRows loadMode = iota
	// scalarK: element e = thread + threads*j, the reduction fastest.
	scalarK
	// vecRows: a float4 of 4 consecutive rows at one reduction index.
	vecRows
	// vecK: a float4 of 4 consecutive reduction indices of one row.
	vecK
)

func (m loadMode) String() string {
	return [...]string{"scalar, rows fastest", "scalar, reduction fastest", "float4 along the rows", "float4 along the reduction"}[m]
}

// gemmPlan is how one matmul-class nest runs: its tile, the staging of
// A and B, the shared-memory padding, the split over the reduction and
// the precision (tensor cores).
type gemmPlan struct {
	tile         target.GEMMTile
	threads      int
	pad          int
	modeA, modeB loadMode
	// splits > 1: the reduction is cut into splits slices of kc terms
	// (a multiple of tile.K), each summed by its own blocks into a
	// scratch buffer, then added in a fixed order by a second kernel.
	splits, kc int
	// tc is "tf32" or "bf16" for the tensor-core kernel, "" otherwise.
	tc string
}

// simtPad is the padding, in elements, of each shared-memory row of the
// float32/float64 GEMM's stages: a multiple of 4 (rows stay 16-byte
// aligned for float4 accesses) that makes the 128x128 tile's staging
// stores and compute reads free of bank conflicts (TestBankConflicts).
const simtPad = 4

// flatConst is the constant part of an access's flattened offset.
func (g *kgen) flatConst(t int, idx []loopir.IndexExpr) int {
	bd := g.p.Tensors[t].BufDims
	c, mul := 0, 1
	for a := len(bd) - 1; a >= 0; a-- {
		if a < len(idx) {
			c += idx[a].Offset * mul
		}
		mul *= bd[a]
	}
	return c
}

// vectorizable reports whether load ld can read 4 consecutive values of
// the flattened class dir (its last loop fastest) as one aligned float4:
// dir's last loop has coefficient 1 and an extent that is a multiple of
// 4 (so 4 consecutive flattened indices starting at a multiple of 4 share
// every other loop's value), and the coefficient of every other loop of
// the nest and the constant offset are multiples of 4 (so the first of
// them sits at a 16-byte boundary of the buffer, which the driver
// allocates 256-byte aligned).
func (g *kgen) vectorizable(ld *loopir.Load, dir []*loopir.For, all []*loopir.For) bool {
	if g.ct != "float" || len(dir) == 0 {
		return false
	}
	st, ok := loopir.FlatStrides(ld.Index, g.p.Tensors[ld.Tensor].BufDims)
	if !ok {
		return false
	}
	last := dir[len(dir)-1]
	if last.Extent%4 != 0 || st[last.Var] != 1 || g.flatConst(ld.Tensor, ld.Index)%4 != 0 {
		return false
	}
	for _, f := range all {
		if f != last && st[f.Var]%4 != 0 {
			return false
		}
	}
	return true
}

// loadModeOf picks the staging of operand ld, whose rows are the loops
// rows: a float4 along the reduction or the rows where vectorizable,
// otherwise scalar loads with the direction of the smaller stride fastest
// (so that neighbouring threads read neighbouring addresses).
func (g *kgen) loadModeOf(ld *loopir.Load, rows []*loopir.For, gm *gemmNest, all []*loopir.For) loadMode {
	switch {
	case g.vectorizable(ld, gm.k, all):
		return vecK
	case g.vectorizable(ld, rows, all):
		return vecRows
	}
	st, _ := loopir.FlatStrides(ld.Index, g.p.Tensors[ld.Tensor].BufDims)
	abs := func(x int) int { return max(x, -x) }
	if abs(st[gm.k[len(gm.k)-1].Var]) < abs(st[rows[len(rows)-1].Var]) {
		return scalarK
	}
	return scalarRows
}

// planGEMM chooses the kernel of a matmul-class nest (thresholds in
// target.CUDA): the tensor-core kernel when the package asks for a
// precision (float32 nests only), else the 128x128 tile when the output
// has at least BigMinBlocks of them (float32), else the 64x64 tile; a
// split of the reduction when the output has few tiles and the reduction
// is long.
func (g *kgen) planGEMM(n *nestInfo, gm *gemmNest) *gemmPlan {
	M, N, K, Z := extent(gm.m), extent(gm.n), extent(gm.k), extent(gm.batch)
	tiles := func(t target.GEMMTile) int { return ((M + t.M - 1) / t.M) * ((N + t.N - 1) / t.N) * Z }
	pl := &gemmPlan{tile: g.t.Small, pad: simtPad, splits: 1, kc: K}
	switch {
	case g.ct == "float" && (g.t.Precision == "tf32" || g.t.Precision == "bf16"):
		tc := g.t.TensorCore
		pl.tc = g.t.Precision
		pl.tile = target.GEMMTile{M: tc.M, N: tc.N, K: tc.KTF32}
		if pl.tc == "bf16" {
			pl.tile.K = tc.KBF16
		}
		pl.threads = 32 * tc.WarpsM * tc.WarpsN
		// The fragments' rows start 32-byte aligned: a leading
		// dimension that is a multiple of 8 floats (16 bf16).
		pl.pad = 8
		if pl.tc == "bf16" {
			pl.pad = 16
		}
	case g.ct == "float" && tiles(g.t.GEMM) >= g.t.BigMinBlocks:
		pl.tile = g.t.GEMM
	}
	if pl.threads == 0 {
		pl.threads = pl.tile.Threads()
	}
	var all []*loopir.For
	all = append(append(append(append(all, gm.m...), gm.n...), gm.k...), gm.batch...)
	pl.modeA = g.loadModeOf(gm.a, gm.m, gm, all)
	pl.modeB = g.loadModeOf(gm.b, gm.n, gm, all)
	sk := g.t.SplitK
	if t := tiles(pl.tile); t < sk.MaxBlocks && K >= sk.MinK {
		s := min(sk.Max, (sk.TargetBlocks+t-1)/t, K/sk.MinSlice)
		if s >= 2 {
			kc := (K + s - 1) / s
			kc = (kc + pl.tile.K - 1) / pl.tile.K * pl.tile.K
			s = (K + kc - 1) / kc
			if s >= 2 && s*Z <= 65535 && int64(s)*int64(Z)*int64(M)*int64(N) < 1<<40 {
				pl.splits, pl.kc = s, kc
			}
		}
	}
	return pl
}

// gemm emits a matmul-class nest as a tiled GEMM (planGEMM): a block
// computes a tile of C for one batch index (and one split of the
// reduction), staging slices of A and B in shared memory in two stages
// (the next slice is loaded from global memory into registers while the
// current one is multiplied, then stored into the other stage: one
// barrier per slice). A is stored transposed (As[k][m]) and both stages
// are padded so that the staging stores and the compute loop's reads
// are free of bank conflicts (TestBankConflicts); with float32 the
// compute loop reads 4 consecutive rows or columns as one float4. Each
// thread accumulates a RegM x RegN register block (rows 4*ty + 4*tm*g +
// i, columns likewise), or, on tensor cores, each warp a grid of 16x16
// WMMA fragments. Partial tiles are guarded.
func (g *kgen) gemm(o *loopir.Operation, n *nestInfo, gm *gemmNest) error {
	pl := g.planGEMM(n, gm)
	if err := pl.check(); err != nil {
		return err
	}
	M, N, K, Z := extent(gm.m), extent(gm.n), extent(gm.k), extent(gm.batch)
	args := n.args
	scratch := -1
	if pl.splits > 1 {
		scratch = len(g.p.Tensors) + len(g.scratch)
		g.scratch = append(g.scratch, pl.splits*Z*M*N)
		args = append(append([]int(nil), n.args...), scratch)
	}
	grid := [3]int{(N + pl.tile.N - 1) / pl.tile.N, (M + pl.tile.M - 1) / pl.tile.M, Z * pl.splits}
	g.launch(o, grid, pl.threads, true, args)
	ct, it := g.ct, g.idxType()
	w := g.b
	tl := pl.tile
	kind := "Tiled GEMM"
	if pl.tc != "" {
		kind = "Tensor-core GEMM (" + pl.tc + ", float32 accumulation)"
	}
	fmt.Fprintf(w, "  // %s: C %dx%d += A * B over %d (rows %s, columns %s, reduced %s).\n", kind, M, N, K, varNames(gm.m), varNames(gm.n), varNames(gm.k))
	fmt.Fprintf(w, "  // Tile %dx%d, %d-deep slices in two stages, %d threads; A: %s; B: %s", tl.M, tl.N, tl.K, pl.threads, pl.modeA, pl.modeB)
	if pl.splits > 1 {
		fmt.Fprintf(w, "; split-K: %d splits of %d into scratch t%d", pl.splits, pl.kc, scratch)
	}
	w.WriteString(".\n")
	sct := ct // the shared-memory element type
	switch pl.tc {
	case "bf16":
		sct = "__nv_bfloat16"
	}
	fmt.Fprintf(w, "  __shared__ __align__(32) %s As[2][%d][%d];\n  __shared__ __align__(32) %s Bs[2][%d][%d];\n", sct, tl.K, tl.M+pl.pad, sct, tl.K, tl.N+pl.pad)
	fmt.Fprintf(w, "  const %[1]s m0 = (%[1]s)blockIdx.y * %[2]d, n0 = (%[1]s)blockIdx.x * %[3]d;\n", it, tl.M, tl.N)
	zexpr := "blockIdx.z"
	if pl.splits > 1 {
		fmt.Fprintf(w, "  const int split = blockIdx.z / %d, zi = blockIdx.z %% %d;\n", Z, Z)
		fmt.Fprintf(w, "  const %[1]s kbeg = (%[1]s)split * %[2]d, kend = kbeg + %[2]d < %[3]d ? kbeg + %[2]d : %[3]d;\n", it, pl.kc, K)
		zexpr = "zi"
	} else {
		fmt.Fprintf(w, "  const %s kbeg = 0, kend = %d;\n", it, K)
	}
	if len(gm.batch) > 0 {
		g.decode("  ", "zb", zexpr, gm.batch)
	}
	fmt.Fprintf(w, "  const int ntiles = (int)((kend - kbeg + %d) / %d);\n", tl.K-1, tl.K)
	per := tl.M * tl.K / pl.threads
	perB := tl.N * tl.K / pl.threads
	fmt.Fprintf(w, "  %s ra[%d], rb[%d];\n", ct, per, perB)
	sides := []gemmSide{
		{"A", "As", "ra", gm.a, gm.m, "m0", M, tl.M, pl.modeA},
		{"B", "Bs", "rb", gm.b, gm.n, "n0", N, tl.N, pl.modeB},
	}
	loadAll := func(ind, k0 string) {
		for _, sd := range sides {
			g.stageLoad(ind, sd, gm, pl, k0)
		}
	}
	storeAll := func(ind, stage string) {
		for _, sd := range sides {
			g.stageStore(ind, sd, pl, stage)
		}
	}
	if pl.tc != "" {
		g.tcSetup(pl)
	} else {
		fmt.Fprintf(w, "  const int tx = threadIdx.x %% %d, ty = threadIdx.x / %d;\n", tl.N/tl.RegN, tl.N/tl.RegN)
		fmt.Fprintf(w, "  %s acc[%d][%d];\n", ct, tl.RegM, tl.RegN)
		fmt.Fprintf(w, "  #pragma unroll\n  for (int r = 0; r < %d; ++r)\n    #pragma unroll\n    for (int c = 0; c < %d; ++c) acc[r][c] = (%s)0;\n", tl.RegM, tl.RegN, ct)
	}
	w.WriteString("  // The first slice, then per slice: load the next into registers,\n  // multiply the current stage, store the next into the other stage.\n")
	loadAll("  ", "kbeg")
	storeAll("  ", "0")
	w.WriteString("  __syncthreads();\n")
	w.WriteString("  for (int t = 0; t < ntiles; ++t) {\n    const int cur = t & 1;\n")
	fmt.Fprintf(w, "    const %s knext = kbeg + (%s)(t + 1) * %d;\n", it, it, tl.K)
	w.WriteString("    if (t + 1 < ntiles) {\n")
	loadAll("      ", "knext")
	w.WriteString("    }\n")
	if pl.tc != "" {
		g.tcCompute(pl)
	} else {
		g.simtCompute(pl)
	}
	w.WriteString("    if (t + 1 < ntiles) {\n")
	storeAll("      ", "cur ^ 1")
	w.WriteString("    }\n    __syncthreads();\n  }\n")
	cell := func(ind, row, col, val string) {
		fmt.Fprintf(w, "%sif (%s < %d && %s < %d) {\n", ind, row, M, col, N)
		in := ind + "  "
		if pl.splits > 1 {
			fmt.Fprintf(w, "%st%d[((long long)blockIdx.z * %d + %s) * %d + %s] = %s;\n", in, scratch, M, row, N, col, val)
		} else {
			g.decode(in, "rm", row, gm.m)
			g.decode(in, "rn", col, gm.n)
			fmt.Fprintf(w, "%st%d[%s] += %s;\n", in, gm.st.Tensor, g.offset(gm.st.Tensor, gm.st.Index, nil), val)
		}
		fmt.Fprintf(w, "%s}\n", ind)
	}
	if pl.tc != "" {
		g.tcEpilogue(pl, cell)
	} else {
		tm, tn := tl.M/tl.RegM, tl.N/tl.RegN
		fmt.Fprintf(w, "  #pragma unroll\n  for (int r = 0; r < %d; ++r)\n    #pragma unroll\n    for (int c = 0; c < %d; ++c) {\n", tl.RegM, tl.RegN)
		fmt.Fprintf(w, "      const %[1]s row = m0 + (r / 4) * %[2]d + 4 * ty + r %% 4, col = n0 + (c / 4) * %[3]d + 4 * tx + c %% 4;\n", it, 4*tm, 4*tn)
		cell("      ", "row", "col", "acc[r][c]")
		w.WriteString("    }\n")
	}
	w.WriteString("}\n")
	if pl.splits > 1 {
		g.splitSum(o, gm, pl, args, scratch)
	}
	return nil
}

// check verifies the shape constraints the emission relies on.
func (pl *gemmPlan) check() error {
	t := pl.tile
	ok := t.M%4 == 0 && t.N%4 == 0 && t.K%4 == 0 && (t.M*t.K)%(4*pl.threads) == 0 && (t.N*t.K)%(4*pl.threads) == 0
	if pl.tc == "" {
		ok = ok && t.RegM%4 == 0 && t.RegN%4 == 0 && pl.threads == t.Threads()
	}
	if !ok {
		return fmt.Errorf("GEMM tile %+v with %d threads: RegM and RegN must be multiples of 4, M*K and N*K multiples of 4 times the threads", t, pl.threads)
	}
	return nil
}

// gemmSide is one operand of a GEMM: its name, shared array, staging
// registers, load, row loops, tile origin, extent, tile rows and mode.
type gemmSide struct {
	name, arr, regs string
	ld              *loopir.Load
	rows            []*loopir.For
	base            string
	ext, tileRows   int
	mode            loadMode
}

// stageLoad emits the loads of one operand's slice starting at reduction
// index k0 into its staging registers (zero outside the operand).
func (g *kgen) stageLoad(ind string, sd gemmSide, gm *gemmNest, pl *gemmPlan, k0 string) {
	w := g.b
	R, TK, T := sd.tileRows, pl.tile.K, pl.threads
	per := R * TK / T
	src := func(in string) string {
		g.decode(in, "rx", sd.base+" + rr", sd.rows)
		g.decode(in, "kx", k0+" + kk", gm.k)
		return g.offset(sd.ld.Tensor, sd.ld.Index, nil)
	}
	switch sd.mode {
	case vecK, vecRows:
		fmt.Fprintf(w, "%s#pragma unroll\n%sfor (int j = 0; j < %d; ++j) {\n", ind, ind, per/4)
		in := ind + "  "
		fmt.Fprintf(w, "%sconst int v = threadIdx.x + %d * j;\n", in, T)
		if sd.mode == vecK {
			fmt.Fprintf(w, "%sconst int rr = v / %d, kk = (v %% %d) * 4;\n", in, TK/4, TK/4)
		} else {
			fmt.Fprintf(w, "%sconst int kk = v / %d, rr = (v %% %d) * 4;\n", in, R/4, R/4)
		}
		fmt.Fprintf(w, "%sfloat4 x = make_float4(0.f, 0.f, 0.f, 0.f);\n", in)
		fmt.Fprintf(w, "%sif (%s + rr < %d && %s + kk < kend) {\n", in, sd.base, sd.ext, k0)
		off := src(in + "  ")
		fmt.Fprintf(w, "%s  x = OCANNL_LD4(&t%d[%s]);\n%s}\n", in, sd.ld.Tensor, off, in)
		fmt.Fprintf(w, "%s%[2]s[4 * j] = x.x; %[2]s[4 * j + 1] = x.y; %[2]s[4 * j + 2] = x.z; %[2]s[4 * j + 3] = x.w;\n", in, sd.regs)
		fmt.Fprintf(w, "%s}\n", ind)
	default:
		fmt.Fprintf(w, "%s#pragma unroll\n%sfor (int j = 0; j < %d; ++j) {\n", ind, ind, per)
		in := ind + "  "
		fmt.Fprintf(w, "%sconst int e = threadIdx.x + %d * j;\n", in, T)
		if sd.mode == scalarRows {
			fmt.Fprintf(w, "%sconst int rr = e %% %d, kk = e / %d;\n", in, R, R)
		} else {
			fmt.Fprintf(w, "%sconst int kk = e %% %d, rr = e / %d;\n", in, TK, TK)
		}
		fmt.Fprintf(w, "%s%s v = (%s)0;\n", in, g.ct, g.ct)
		fmt.Fprintf(w, "%sif (%s + rr < %d && %s + kk < kend) {\n", in, sd.base, sd.ext, k0)
		off := src(in + "  ")
		fmt.Fprintf(w, "%s  v = t%d[%s];\n%s}\n", in, sd.ld.Tensor, off, in)
		fmt.Fprintf(w, "%s%s[j] = v;\n", in, sd.regs)
		fmt.Fprintf(w, "%s}\n", ind)
	}
}

// stageStore emits the stores of one operand's staging registers into
// shared-memory stage `stage` (As[stage][k][row]), rounded to the
// tensor cores' precision when there is one.
func (g *kgen) stageStore(ind string, sd gemmSide, pl *gemmPlan, stage string) {
	w := g.b
	R, TK, T := sd.tileRows, pl.tile.K, pl.threads
	per := R * TK / T
	conv := func(v string) string {
		switch pl.tc {
		case "tf32":
			return "nvcuda::wmma::__float_to_tf32(" + v + ")"
		case "bf16":
			return "__float2bfloat16(" + v + ")"
		}
		return v
	}
	switch sd.mode {
	case vecK:
		fmt.Fprintf(w, "%s#pragma unroll\n%sfor (int j = 0; j < %d; ++j) {\n", ind, ind, per/4)
		fmt.Fprintf(w, "%s  const int v = threadIdx.x + %d * j, rr = v / %d, kk = (v %% %d) * 4;\n", ind, T, TK/4, TK/4)
		fmt.Fprintf(w, "%s  #pragma unroll\n%[1]s  for (int q = 0; q < 4; ++q) %[2]s[%[3]s][kk + q][rr] = %[4]s;\n", ind, sd.arr, stage, conv(sd.regs+"[4 * j + q]"))
		fmt.Fprintf(w, "%s}\n", ind)
	case vecRows:
		fmt.Fprintf(w, "%s#pragma unroll\n%sfor (int j = 0; j < %d; ++j) {\n", ind, ind, per/4)
		fmt.Fprintf(w, "%s  const int v = threadIdx.x + %d * j, kk = v / %d, rr = (v %% %d) * 4;\n", ind, T, R/4, R/4)
		if pl.tc == "bf16" {
			fmt.Fprintf(w, "%s  #pragma unroll\n%[1]s  for (int q = 0; q < 4; ++q) %[2]s[%[3]s][kk][rr + q] = %[4]s;\n", ind, sd.arr, stage, conv(sd.regs+"[4 * j + q]"))
		} else {
			r := func(q int) string { return conv(fmt.Sprintf("%s[4 * j + %d]", sd.regs, q)) }
			fmt.Fprintf(w, "%s  *reinterpret_cast<float4*>(&%s[%s][kk][rr]) = make_float4(%s, %s, %s, %s);\n", ind, sd.arr, stage, r(0), r(1), r(2), r(3))
		}
		fmt.Fprintf(w, "%s}\n", ind)
	default:
		fmt.Fprintf(w, "%s#pragma unroll\n%sfor (int j = 0; j < %d; ++j) {\n", ind, ind, per)
		fmt.Fprintf(w, "%s  const int e = threadIdx.x + %d * j;\n", ind, T)
		if sd.mode == scalarRows {
			fmt.Fprintf(w, "%s  %s[%s][e / %d][e %% %d] = %s;\n", ind, sd.arr, stage, R, R, conv(sd.regs+"[j]"))
		} else {
			fmt.Fprintf(w, "%s  %s[%s][e %% %d][e / %d] = %s;\n", ind, sd.arr, stage, TK, TK, conv(sd.regs+"[j]"))
		}
		fmt.Fprintf(w, "%s}\n", ind)
	}
}

// simtCompute emits the multiplication of the current stage: per k of the
// slice, the thread's RegM values of A and RegN of B (float4 reads of 4
// consecutive rows, for float32), then RegM x RegN products.
func (g *kgen) simtCompute(pl *gemmPlan) {
	w := g.b
	tl := pl.tile
	tm, tn := tl.M/tl.RegM, tl.N/tl.RegN
	fmt.Fprintf(w, "    #pragma unroll\n    for (int kk = 0; kk < %d; ++kk) {\n", tl.K)
	fmt.Fprintf(w, "      %s a[%d], b[%d];\n", g.ct, tl.RegM, tl.RegN)
	for _, s := range []struct {
		v, arr, t string
		n, step   int
	}{{"a", "As", "ty", tl.RegM / 4, 4 * tm}, {"b", "Bs", "tx", tl.RegN / 4, 4 * tn}} {
		fmt.Fprintf(w, "      #pragma unroll\n      for (int q = 0; q < %d; ++q) {\n", s.n)
		if g.ct == "float" {
			fmt.Fprintf(w, "        const float4 x = *reinterpret_cast<const float4*>(&%s[cur][kk][q * %d + 4 * %s]);\n", s.arr, s.step, s.t)
			fmt.Fprintf(w, "        %[1]s[4 * q] = x.x; %[1]s[4 * q + 1] = x.y; %[1]s[4 * q + 2] = x.z; %[1]s[4 * q + 3] = x.w;\n", s.v)
		} else {
			fmt.Fprintf(w, "        for (int i = 0; i < 4; ++i) %s[4 * q + i] = %s[cur][kk][q * %d + 4 * %s + i];\n", s.v, s.arr, s.step, s.t)
		}
		w.WriteString("      }\n")
	}
	fmt.Fprintf(w, "      #pragma unroll\n      for (int r = 0; r < %d; ++r)\n        #pragma unroll\n        for (int c = 0; c < %d; ++c) acc[r][c] += a[r] * b[c];\n", tl.RegM, tl.RegN)
	w.WriteString("    }\n")
}

// tcShape is the WMMA fragment shape and operand type of a precision.
func tcShape(tc string) (k int, elem string) {
	if tc == "bf16" {
		return 16, "__nv_bfloat16"
	}
	return 8, "nvcuda::wmma::precision::tf32"
}

// tcSetup declares a warp's accumulator fragments (zeroed).
func (g *kgen) tcSetup(pl *gemmPlan) {
	w := g.b
	tc := g.t.TensorCore
	fm, fn := tc.M/tc.WarpsM/16, tc.N/tc.WarpsN/16
	kf, _ := tcShape(pl.tc)
	fmt.Fprintf(w, "  const int warp = threadIdx.x / 32, wm = warp / %d, wn = warp %% %d;\n", tc.WarpsN, tc.WarpsN)
	fmt.Fprintf(w, "  nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, %d, float> acc[%d][%d];\n", kf, fm, fn)
	fmt.Fprintf(w, "  #pragma unroll\n  for (int i = 0; i < %d; ++i)\n    #pragma unroll\n    for (int j = 0; j < %d; ++j) nvcuda::wmma::fill_fragment(acc[i][j], 0.0f);\n", fm, fn)
}

// tcCompute emits the current stage's multiplication on tensor cores: A
// is staged transposed (As[k][m], a col_major matrix_a), B as Bs[k][n]
// (row_major matrix_b).
func (g *kgen) tcCompute(pl *gemmPlan) {
	w := g.b
	tc := g.t.TensorCore
	fm, fn := tc.M/tc.WarpsM/16, tc.N/tc.WarpsN/16
	kf, elem := tcShape(pl.tc)
	fmt.Fprintf(w, "    #pragma unroll\n    for (int kk = 0; kk < %d; kk += %d) {\n", pl.tile.K, kf)
	fmt.Fprintf(w, "      nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, %d, %s, nvcuda::wmma::col_major> fa[%d];\n", kf, elem, fm)
	fmt.Fprintf(w, "      nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, %d, %s, nvcuda::wmma::row_major> fb[%d];\n", kf, elem, fn)
	fmt.Fprintf(w, "      #pragma unroll\n      for (int i = 0; i < %d; ++i) nvcuda::wmma::load_matrix_sync(fa[i], &As[cur][kk][wm * %d + 16 * i], %d);\n", fm, 16*fm, pl.tile.M+pl.pad)
	fmt.Fprintf(w, "      #pragma unroll\n      for (int j = 0; j < %d; ++j) nvcuda::wmma::load_matrix_sync(fb[j], &Bs[cur][kk][wn * %d + 16 * j], %d);\n", fn, 16*fn, pl.tile.N+pl.pad)
	fmt.Fprintf(w, "      #pragma unroll\n      for (int i = 0; i < %d; ++i)\n        #pragma unroll\n        for (int j = 0; j < %d; ++j) nvcuda::wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);\n", fm, fn)
	w.WriteString("    }\n")
}

// tcEpilogue stores each accumulator fragment into the warp's part of a
// shared staging area, from which the warp's lanes add its cells to C
// (guarded, through the nest's own indexing).
func (g *kgen) tcEpilogue(pl *gemmPlan, cell func(ind, row, col, val string)) {
	w := g.b
	tc := g.t.TensorCore
	fm, fn := tc.M/tc.WarpsM/16, tc.N/tc.WarpsN/16
	it := g.idxType()
	fmt.Fprintf(w, "  __shared__ __align__(32) float Cs[%d][256];\n", tc.WarpsM*tc.WarpsN)
	fmt.Fprintf(w, "  #pragma unroll\n  for (int i = 0; i < %d; ++i)\n    #pragma unroll\n    for (int j = 0; j < %d; ++j) {\n", fm, fn)
	w.WriteString("      nvcuda::wmma::store_matrix_sync(Cs[warp], acc[i][j], 16, nvcuda::wmma::mem_row_major);\n      __syncwarp();\n")
	w.WriteString("      for (int e = threadIdx.x % 32; e < 256; e += 32) {\n")
	fmt.Fprintf(w, "        const %[1]s row = m0 + wm * %[2]d + 16 * i + e / 16, col = n0 + wn * %[3]d + 16 * j + e %% 16;\n", it, 16*fm, 16*fn)
	cell("        ", "row", "col", "Cs[warp][e]")
	w.WriteString("      }\n      __syncwarp();\n    }\n")
}

// splitSum emits the second kernel of a split GEMM: one thread per cell
// of C adds the splits' partial sums in split order, then adds the total
// to the cell once (the same bits on every run: no atomics).
func (g *kgen) splitSum(o *loopir.Operation, gm *gemmNest, pl *gemmPlan, args []int, scratch int) {
	M, N, Z := extent(gm.m), extent(gm.n), extent(gm.batch)
	cells := Z * M * N
	g.launch(o, [3]int{(cells + g.t.Block - 1) / g.t.Block, 1, 1}, g.t.Block, false, args)
	w := g.b
	it := g.idxType()
	fmt.Fprintf(w, "  // Split-K sum: %d splits of %d cells, added in split order.\n", pl.splits, cells)
	fmt.Fprintf(w, "  const long long cell = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n  if (cell >= %d) return;\n", cells)
	fmt.Fprintf(w, "  %s s = t%d[cell];\n", g.ct, scratch)
	fmt.Fprintf(w, "  for (int p = 1; p < %d; ++p) s += t%d[(long long)p * %d + cell];\n", pl.splits, scratch, cells)
	fmt.Fprintf(w, "  const %[1]s col = (%[1]s)(cell %% %[2]d), row = (%[1]s)(cell / %[2]d %% %[3]d);\n", it, N, M)
	if len(gm.batch) > 0 {
		g.decode("  ", "zb", fmt.Sprintf("(%s)(cell / %d)", it, M*N), gm.batch)
	}
	g.decode("  ", "rm", "row", gm.m)
	g.decode("  ", "rn", "col", gm.n)
	fmt.Fprintf(w, "  t%d[%s] += s;\n}\n", gm.st.Tensor, g.offset(gm.st.Tensor, gm.st.Index, nil))
}
