// Package bf16 runs contractions on bfloat16 operands with float32
// accumulation: the kernels behind //ocannl:model bf16 and
// //ocannl:einsum over rt.BF16 arrays.
//
// Gemm computes C[m,n] (+)= sum over k of A[m,k] * B[k,n] for any
// strides (Shape), as the generated code's contraction nests describe
// them. It packs the operands, rounded to bfloat16 (rt.BF16FromFloat32:
// nearest, ties to even), into blocks of kc = 256 steps along the
// reduction and runs a register-tile micro-kernel over them, in one of
// four tiers:
//
//	AVX512BF16  VDPBF16PS on pairs of bf16 (AVX512_BF16, 14x32 tile)
//	AVX512      the pairs widened to float32, VFMADD231PS (14x32 tile)
//	AVX2        the same on AVX2+FMA (6x16 tile)
//	Go          the same in Go (6x16 tile)
//
// # Numerics
//
// Every tier computes each cell of C in the same order: starting from
// C's value (0 when Shape.Overwrite), it adds the products of the
// reduction steps pair by pair, k = 2p+1 before k = 2p (the order
// VDPBF16PS adds the two products of a pair), each addition rounded to
// float32; an odd reduction is padded with a zero pair member. The
// product of two bf16 numbers is exact in float32, so each step is a
// fused multiply-add, and the tiers give bit-identical results, on any
// number of threads, except where VDPBF16PS flushes denormals: when a
// product or a partial sum is below 2^-126 in magnitude, the AVX512BF16
// tier may differ (by at most the flushed amounts), and NaN results may
// have other bits. Against the float32 sum of the rounded operands in
// another order the result is within about K*2^-24 of the magnitudes
// summed; against the unrounded float32 product, within about 2*2^-8 of
// them (each operand rounded by at most 2^-9 relative).
//
// OCANNLGEN_CPU (package rt/cpu) limits the tier: purego runs the Go
// tier, avx2 the AVX2 one, avx512 the widening AVX-512 one, avx512bf16
// (or unset) VDPBF16PS where the CPU has AVX512_BF16.
//
// Gemm allocates nothing in the steady state: its packing buffers
// (512 KiB, more than a goroutine's stack frame may hold) come from a
// free list that keeps them across calls and garbage collections.
package bf16

import (
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/ocannlgen/ocannlgen/rt"
	"github.com/ocannlgen/ocannlgen/rt/cpu"
)

// Geometry of the packing (kern_amd64.s is generated for it by
// internal/bf16asm).
const (
	kc    = 256 // reduction steps per block (even)
	nc    = 512 // columns per block of packed B
	mrZMM = 14
	mrYMM = 6
	nrZMM = 32
	nrYMM = 16
)

// Tier is a kernel tier of Gemm, lowest first: the CPU tiers of rt/cpu,
// which OCANNLGEN_CPU names.
type Tier = cpu.Tier

// Tiers.
const (
	// Go is the portable tier.
	Go = cpu.Purego
	// AVX2 widens the bf16 operands to float32 and uses AVX2+FMA.
	AVX2 = cpu.AVX2
	// AVX512 widens the bf16 operands to float32 and uses AVX-512F.
	AVX512 = cpu.AVX512
	// AVX512BF16 runs VDPBF16PS (AVX512_BF16).
	AVX512BF16 = cpu.AVX512BF16
)

// Shape is one contraction: for m < M, m2 < M2, m3 < M3, n < N, n2 < N2,
//
//	C[m*CM + m2*CM2 + m3*CM3 + n*CN + n2*CN2] (+)= sum over k3 < K3, k2 < K2, k < K of
//	    A[m*AM + m2*AM2 + m3*AM3 + k3*AK3 + k2*AK2 + k*AK] * B[n*BN + n2*BN2 + k3*BK3 + k2*BK2 + k*BK]
//
// with offsets in elements from the pointers Gemm gets. B's reduction
// strides BK, BK2 and BK3 may be negative (a flipped kernel: a
// transposed convolution run as a gather, the flipped kernel over the
// padded output gradient), when C is contiguous along n or not along m
// (Gemm does not swap the operands); every other stride is
// non-negative. K2, K3, N2, M2
// and M3 of 0 mean 1 (no such axis). The reduction runs k3, k2, then k
// innermost. Overwrite stores the sums instead of adding them to C. The
// cells of C must be distinct (no two (m, m2, m3, n, n2) at one offset).
// M2 and M3 are rows that B does not depend on: the loops of output
// pixels around a convolution's call, folded into one call whose rows
// are the batch times the pixels.
type Shape struct {
	M, N, K                int
	CM, CN, AM, AK, BK, BN int
	K2, AK2, BK2           int
	N2, CN2, BN2           int
	K3, AK3, BK3           int
	M2, CM2, AM2           int
	M3, CM3, AM3           int
	Overwrite              bool
	// bOff (set by norm) is the offset of B's pointer from the lowest
	// element the shape reaches when B has negative reduction strides:
	// B's slice starts bOff elements before the pointer, and kOffsets
	// adds bOff to B's offsets.
	bOff int
}

// norm sets the absent axes to 1 and swaps the operands when C is
// contiguous along m but not along n (the kernels store rows of C).
func (s Shape) norm() Shape {
	s.K2, s.K3, s.N2 = max(s.K2, 1), max(s.K3, 1), max(s.N2, 1)
	s.M2, s.M3 = max(s.M2, 1), max(s.M3, 1)
	if s.swapped() {
		s.M, s.N = s.N, s.M
		s.CM, s.CN = s.CN, s.CM
		s.AM, s.AK, s.AK2, s.AK3, s.BN, s.BK, s.BK2, s.BK3 = s.BN, s.BK, s.BK2, s.BK3, s.AM, s.AK, s.AK2, s.AK3
	}
	s.bOff = 0
	for _, x := range [][2]int{{s.K, s.BK}, {s.K2, s.BK2}, {s.K3, s.BK3}} {
		if x[1] < 0 && x[0] > 1 {
			s.bOff -= (x[0] - 1) * x[1]
		}
	}
	if s.AK < 0 || s.AK2 < 0 || s.AK3 < 0 {
		panic(fmt.Sprintf("bf16: negative reduction strides of A (or of B in a shape whose operands swap): %+v", s))
	}
	return s
}

// bPtr is B's pointer p moved to the lowest element s (normalized)
// reaches: where B's slice starts.
func bPtr[T float32 | uint16](p *T, s *Shape) *T {
	if s.bOff == 0 || p == nil {
		return p
	}
	var z T
	return (*T)(unsafe.Add(unsafe.Pointer(p), -s.bOff*int(unsafe.Sizeof(z))))
}

// swapped reports whether norm swaps the operands (never with row
// axes M2 or M3).
func (s Shape) swapped() bool {
	return s.CN != 1 && s.CM == 1 && max(s.N2, 1) == 1 && max(s.M2, 1) == 1 && max(s.M3, 1) == 1
}

// Flops is the number of floating-point operations of s.
func (s Shape) Flops() int {
	return 2 * s.M * max(s.M2, 1) * max(s.M3, 1) * s.N * max(s.N2, 1) * s.K * max(s.K2, 1) * max(s.K3, 1)
}

// spans are the number of elements of C, A and B that s reaches from
// their pointers (one past the largest offset; for a B with negative
// strides, from the lowest element it reaches: bPtr).
func (s Shape) spans() (c, a, b int) {
	e := func(n, st int) int { return max(n-1, 0) * max(st, -st) }
	c = e(s.M, s.CM) + e(s.M2, s.CM2) + e(s.M3, s.CM3) + e(s.N, s.CN) + e(s.N2, s.CN2) + 1
	a = e(s.M, s.AM) + e(s.M2, s.AM2) + e(s.M3, s.AM3) + e(s.K, s.AK) + e(s.K2, s.AK2) + e(s.K3, s.AK3) + 1
	b = e(s.N, s.BN) + e(s.N2, s.BN2) + e(s.K, s.BK) + e(s.K2, s.BK2) + e(s.K3, s.BK3) + 1
	return c, a, b
}

// Gemm runs the contraction s in the best tier the CPU and OCANNLGEN_CPU
// allow (Best). Sizes and strides must be non-negative; C must not
// overlap A or B.
func Gemm(c, a, b *float32, s Shape) { run(best, c, a, b, s) }

// GemmTier is Gemm in tier t, or in the best available tier below it
// when the CPU does not have t (Available).
func GemmTier(t Tier, c, a, b *float32, s Shape) {
	t = usable(t)
	run(t, c, a, b, s)
}

// usable is t, or the best tier below it that Available allows.
func usable(t Tier) Tier {
	for t > Go && !Available(t) {
		t--
	}
	return t
}

// Best is the tier Gemm runs in.
func Best() Tier { return best }

// Available reports whether the CPU, the build and OCANNLGEN_CPU allow
// tier t.
func Available(t Tier) bool { return t == Go || t <= best && supported(t) }

// best is the tier Gemm uses, fixed at initialization.
var best = func() Tier {
	for t := AVX512BF16; t > Go; t-- {
		if supported(t) && allowed(t) {
			return t
		}
	}
	return Go
}()

// scratch holds the packed operands of one Gemm call.
type scratch struct {
	b    [kc * nc]uint32
	a    [mrZMM * kc]uint32
	tile [mrZMM * nrZMM]float32
	tmp  [kc / 2 * 16]uint32    // packAAsm's transposition
	cols [nrZMM * kc / 2]uint32 // packBAsm's columns, to transpose
	// tmpRow is the first of the 16 rows of A (of the current k block
	// and (m2, m3)) that tmp holds converted (packAAsm), -1 when none:
	// every m panel within them reuses them. (An index, not a pointer:
	// a pointer into A kept in the scratch would make A escape.)
	tmpRow  int
	tmpDone int // the pairs of tmp converted
	// prog are progPairs's runs (first pair, pairs, stride) of the
	// block's offsets in A, nprog of them (-1: not yet computed for the
	// current k block and (m2, m3)), covering progAll pairs, the
	// shortest of progMin pairs: every m panel of the block uses them.
	prog                    [kc / 2][3]int
	nprog, progAll, progMin int
	// progB, nprogB and progAllB are the same for B's offsets, computed
	// by packBBlock for its panels.
	progB            [kc / 2][3]int
	nprogB, progAllB int
	runsA            [kc][2]int32 // the runs of the block's offsets in A
	runsB            [kc][2]int32 // and in B
	// runD are copyRuns's runs of a converted A's block (runDescs),
	// runP the in-place kernels' (inPlaceRuns).
	runD [kc][4]int
	runP [kc][3]int
	// winAt[r][v] is the word in the B block where packWindows put
	// the 16 columns v of B's progression r (progB).
	winAt [kc / 2][maxWin]int32
	// offA, offB are the block's reduction offsets (kOffsets), colB a
	// panel's column offsets: here rather than on the stack, where Go
	// would clear 4 KiB in every call.
	offA, offB [kc]int
	colB       [nrZMM]int
	colC       [nrZMM]int // a tile's columns' offsets in C
}

// scratchFree keeps the packing buffers (512 KiB each, too large for a
// goroutine's stack frame) between calls: a cache without observable
// state, so that Gemm allocates only when it is empty (the first call
// of each of the concurrent calls). Unlike a sync.Pool, a garbage
// collection does not empty it, so that a training step stays free of
// allocations; it keeps at most maxFree buffers, one per slot, each
// taken and returned with one compare-and-swap: no lock (a channel's
// lock was contended when the parts of a nest on 2 threads made the
// thousands of small calls per step of a convolution's input gradient:
// 15 ms of the bf16 ResNet's step went to locking), and a slot per
// cache line so that the threads do not share one.
var scratchFree [maxFree]scratchSlot

// scratchSlot is one slot of scratchFree, padded to a cache line.
type scratchSlot struct {
	p atomic.Pointer[scratch]
	_ [56]byte
}

// maxFree is the most packing buffers scratchFree keeps (one per
// concurrent call; more than any rt.Pool runs at once on usual hosts).
const maxFree = 64

// getScratch takes a buffer from scratchFree (the caller owns it: only
// one compare-and-swap empties a slot), or a new one.
func getScratch() *scratch {
	for i := range scratchFree {
		p := &scratchFree[i].p
		if sc := p.Load(); sc != nil && p.CompareAndSwap(sc, nil) {
			return sc
		}
	}
	return new(scratch)
}

// putScratch returns sc to the first empty slot, or drops it.
func putScratch(sc *scratch) {
	for i := range scratchFree {
		if scratchFree[i].p.CompareAndSwap(nil, sc) {
			return
		}
	}
}

func run(t Tier, cp, ap, bp *float32, s Shape) { runOps(t, cp, Operand{F: ap}, Operand{F: bp}, s) }

// runOps is run on operands in any form: float32 (F), converted to bf16
// (H), or B packed (P, packed for s and t by Pack).
func runOps(t Tier, cp *float32, ao, bo Operand, s Shape) {
	if s.swapped() {
		// (Pack and PackA leave a swapped shape's operand unpacked.)
		ao, bo = bo, ao
		if ao.P != nil {
			ao = Operand{F: ao.P.b}
		}
		if bo.P != nil {
			bo = Operand{F: bo.P.b}
		}
	}
	pa, pb := ao.P, bo.P
	s = s.norm()
	if pa == nil {
		s.rowAxes()
	}
	if s.M <= 0 || s.N <= 0 {
		return
	}
	cn, an, bn := s.spans()
	cs := unsafe.Slice(cp, cn)
	kt := s.K * s.K2 * s.K3
	if kt <= 0 {
		if s.Overwrite {
			for mo := range s.M2 * s.M3 {
				c0 := s.rowsC(mo)
				for m := range s.M {
					for n := range s.N * s.N2 {
						cs[c0+m*s.CM+colOff(n, s.N2, s.CN, s.CN2)] = 0
					}
				}
			}
		}
		return
	}
	var as, bs []float32
	var ah, bh []uint16
	switch {
	case pa != nil:
	case ao.H != nil:
		ah = unsafe.Slice(ao.H, an)
	default:
		as = unsafe.Slice(ao.F, an)
	}
	switch {
	case pb != nil:
	case bo.H != nil:
		bh = unsafe.Slice(bPtr(bo.H, &s), bn)
	default:
		bs = unsafe.Slice(bPtr(bo.F, &s), bn)
	}
	mr, nr := mrYMM, nrYMM
	if t >= AVX512 {
		mr, nr = mrZMM, nrZMM
	}
	bfPairs := t == AVX512BF16
	sc := getScratch()
	defer putScratch(sc)
	bufB, bufA, tile := &sc.b, &sc.a, &sc.tile
	offA, offB, colB := &sc.offA, &sc.offB, &sc.colB
	rowWords := kc
	if bfPairs {
		rowWords = kc / 2
	}
	cols := s.N * s.N2
	fast := s.CN == 1 && s.N2 == 1
	cur := 0 // pb's words used so far
	for n0 := 0; n0 < cols; n0 += nc {
		ncb := min(nc, cols-n0)
		for k0 := 0; k0 < kt; k0 += kc {
			kb := min(kc, kt-k0)
			var rsA, rsB [][2]int32
			oa, ob := offA[:kb], offB[:kb]
			switch {
			case pb != nil:
				// A's offsets and runs, as Pack computed them.
				bi := k0 / kc
				oa = pb.offA[k0 : k0+kb]
				rsA = pb.runsA[pb.runsAt[bi]:pb.runsAt[bi+1]]
			case pa != nil:
				// B's offsets, as PackA computed them.
				ob = pa.offB[k0 : k0+kb]
			default:
				kOffsets(&s, k0, kb, offA[:], offB[:])
				if bfPairs && (hasAsmPack || ah != nil) && mayRun(&s, s.AK, s.AK2) {
					rsA = runs(offA[:kb], sc.runsA[:])
				}
			}
			if bfPairs && hasAsmPack && bs != nil && mayRun(&s, s.BK, s.BK2) {
				rsB = runs(ob, sc.runsB[:])
			}
			// A converted A in runs: the panels copy the runs with
			// copyRuns, one call per panel.
			// Or, when the runs hold whole pairs, the kernels read the
			// converted A in place (inPlace: no packing).
			nd := 0
			direct := ah != nil && bfPairs && hasAsmPack && inPlace(kb, rsA)
			if !direct && ah != nil && bfPairs && hasAsmPack && longRuns(kb, rsA) {
				nd = runDescs(&sc.runD, oa, rsA)
			}
			nrun := 0 // the runs the kernels read in place (sc.runP)
			if direct {
				nrun = inPlaceRuns(&sc.runP, oa, rsA)
			}
			steps := blockSteps(kb, bfPairs)
			load := k0 > 0 || !s.Overwrite
			var blockB []uint32
			nwin := 0 // B's block as windows (packWindows): its progressions
			if pb == nil && bs != nil && bfPairs && hasAsmPack && fast && s.BN == 1 && !direct {
				nwin = packWindows(bufB[:], bs, &s, n0, ncb, ob, sc)
			}
			switch {
			case nwin > 0:
				blockB = bufB[:]
			case pb != nil:
				w := blockWords(t, nr, ncb, steps)
				blockB, cur = pb.words[cur:cur+w], cur+w
			default:
				blockB = bufB[:]
				packBBlock(t, nr, blockB, bs, bh, &s, n0, ncb, steps, ob, rsB, colB, sc)
			}
			// The rows: m in panels (aPanels) inside each (m2, m3), so
			// that a panel's rows of C are CM apart.
			np := aPanels(s.M, mr)
			for mo := range s.M2 * s.M3 {
				sc.tmpRow, sc.nprog = -1, -1
				cs, as, ah := cs, as, ah
				if mo > 0 {
					cs = cs[s.rowsC(mo):]
					switch {
					case pa != nil:
					case ah != nil:
						ah = ah[s.rowsA(mo):]
					default:
						as = as[s.rowsA(mo):]
					}
				}
				for m0, pi, rows := 0, 0, 0; m0 < s.M; m0, pi = m0+rows, pi+1 {
					rows = panelRows(s.M, np, pi)
					aPanel := bufA[:]
					var ad []uint16 // A's rows read in place (direct)
					switch {
					case direct:
						ad = ah[m0*s.AM:]
					case pa != nil:
						aPanel = pa.aPanel(k0, mo, m0)
					case nd > 0:
						copyRuns(&bufA[0], rowWords*4, &ah[m0*s.AM], s.AM*2, rows, &sc.runD[0], nd)
						if kb%2 == 1 {
							// The odd step's pair member: 0.
							for r := range rows {
								bufA[r*rowWords+kb/2] &= 0xffff
							}
						}
					case ah != nil:
						packA16(bufA[:], rowWords, ah, m0, rows, s.AM, oa, rsA, bfPairs)
					default:
						from := 0
						if bfPairs && hasAsmPack {
							from = packAAsm(bufA[:], rowWords, as, m0, rows, &s, oa, rsA, sc)
							if from == 0 {
								from = packAFew(bufA[:], rowWords, as, m0, rows, &s, oa, sc)
							}
						}
						if 2*from < kb {
							packA(bufA[:], rowWords, as, m0, rows, s.AM, oa, bfPairs, from)
						}
					}
					if nwin > 0 {
						// Each 16 columns in one call over the
						// progressions, reading the packed A panel in
						// place (rowWords words a row) and the
						// progressions' windows of B.
						a16 := (*uint16)(unsafe.Pointer(&aPanel[0]))
						for v := range ncb / 16 {
							for r, pr := range sc.progB[:nwin] {
								sc.runP[r] = [3]int{4 * pr[0], pr[1], int(sc.winAt[r][v]) / 16}
							}
							kernBF16n16aRows(rows, nwin, &sc.runP[0], a16, rowWords*4, &blockB[0], &cs[m0*s.CM+n0+16*v], s.CM*4, load)
						}
						continue
					}
					for j := 0; j < ncb; j += nr {
						panel := blockB[j*steps:]
						pw := panelWidth(t, nr, ncb-j)
						if fast && j+pw <= ncb {
							if t == AVX512BF16 && ad == nil && pw == nr {
								// Every whole panel from j on in one call.
								np := (ncb - j) / nr
								kernBF16ps[rows](np, steps, &aPanel[0], &panel[0], &cs[m0*s.CM+n0+j], s.CM*4, load)
								j += (np - 1) * nr
								continue
							}
							kernPanel(t, rows, pw, steps, &aPanel[0], ad, s.AM*2, &sc.runP, nrun, panel, &cs[m0*s.CM+n0+j], s.CM*4, load)
							continue
						}
						// Through the tile: C's column offsets once per
						// panel (colOff divides), not per cell.
						w := min(pw, ncb-j)
						colC := sc.colC[:w]
						for c := range colC {
							colC[c] = colOff(n0+j+c, s.N2, s.CN, s.CN2)
						}
						if load {
							for r := range rows {
								row, tr := cs[(m0+r)*s.CM:], tile[r*pw:(r+1)*pw]
								for c, o := range colC {
									tr[c] = row[o]
								}
								clear(tr[w:])
							}
						}
						kernPanel(t, rows, pw, steps, &aPanel[0], ad, s.AM*2, &sc.runP, nrun, panel, &tile[0], pw*4, load)
						for r := range rows {
							row, tr := cs[(m0+r)*s.CM:], tile[r*pw:(r+1)*pw]
							for c, o := range colC {
								row[o] = tr[c]
							}
						}
					}
				}
			}
		}
	}
}

// aPanels is the number of m panels of at most mr rows that M rows run
// in: panels of balanced heights (panelRows), so that 16 rows run as
// 8 + 8, not as 14 + 2 whose 2-row kernel waits on its 4 accumulators.
func aPanels(m, mr int) int { return (m + mr - 1) / mr }

// panelRows is the height of m panel pi of np panels over m rows.
func panelRows(m, np, pi int) int {
	r := m / np
	if pi < m%np {
		r++
	}
	return r
}

// rowAxes makes the row axis (M, M2 or M3) with the smallest stride
// in C the m axis, the rows of the kernels' tiles, among those of at
// least 8 rows (s normalized, A not packed: PackA's panels follow
// s's m axis). Which row axis runs innermost changes no cell's sum. A
// forward convolution's call has the batch as m, its rows 64 KiB apart
// in C in the ResNet's first stage: a tile's rows then share a set of
// the L1 cache (4 KiB apart or a multiple) and every run's reload of C
// missed it; its pixels (m2) are adjacent, 16 to 64 floats apart.
func (s *Shape) rowAxes() {
	if s.M2 >= 8 && s.CM2 < s.CM {
		s.M, s.M2 = s.M2, s.M
		s.CM, s.CM2 = s.CM2, s.CM
		s.AM, s.AM2 = s.AM2, s.AM
	}
	if s.M3 >= 8 && s.CM3 < s.CM {
		s.M, s.M3 = s.M3, s.M
		s.CM, s.CM3 = s.CM3, s.CM
		s.AM, s.AM3 = s.AM3, s.AM
	}
}

// rowsC and rowsA are the offsets in C and A of the rows of (m2, m3)
// number mo = m3*M2 + m2 (s normalized).
func (s *Shape) rowsC(mo int) int { return mo%s.M2*s.CM2 + mo/s.M2*s.CM3 }
func (s *Shape) rowsA(mo int) int { return mo%s.M2*s.AM2 + mo/s.M2*s.AM3 }

// packBBlock packs the panels of B's block of columns n0 ... n0+ncb-1
// at the reduction offsets offB (runs rsB) into dst, panel j (of width
// panelWidth) at j*steps words.
func packBBlock(t Tier, nr int, dst []uint32, bs []float32, bh []uint16, s *Shape, n0, ncb, steps int, offB []int, rsB [][2]int32, colB *[nrZMM]int, sc *scratch) {
	bfPairs := t == AVX512BF16
	cols := s.N * s.N2
	sc.nprogB, sc.progAllB = 0, 0
	if bfPairs && hasAsmPack && bs != nil && s.BN == 1 && s.N2 == 1 {
		// B's reduction steps in progressions (columns contiguous:
		// cvtPairs32), the same for every panel of the block.
		sc.progAllB = progPairs(offB, func(p0, np, d int) {
			sc.progB[sc.nprogB] = [3]int{p0, np, d}
			sc.nprogB++
		})
	}
	for j := 0; j < ncb; j += nr {
		pw := panelWidth(t, nr, ncb-j)
		for c := range pw {
			colB[c] = -1
			if n := n0 + j + c; n < cols {
				colB[c] = colOff(n, s.N2, s.BN, s.BN2)
			}
		}
		if bh != nil {
			from := 0
			if bfPairs && hasAsmPack {
				from = packBH(dst[j*steps:(j+pw)*steps], bh, colB[:pw], offB, s)
			}
			packB16(dst[j*steps+from*pw:(j+pw)*steps], bh, colB[:pw], offB[2*from:], bfPairs)
			continue
		}
		from := 0
		if bfPairs && hasAsmPack {
			from = packBAsm(dst[j*steps:(j+pw)*steps], bs, colB[:pw], offB, rsB, s, sc)
			if from == 0 {
				from = packBGroups(dst[j*steps:(j+pw)*steps], bs, colB[:pw], offB)
			}
		}
		if 2*from < len(offB) {
			packB(dst[j*steps:(j+pw)*steps], bs, colB[:pw], offB, bfPairs, from)
		}
	}
}

// packB16 is packB from operand values already converted to bf16.
func packB16(dst []uint32, bh []uint16, colB []int, offB []int, bfPairs bool) {
	nr := len(colB)
	kb := len(offB)
	i := 0
	for k := 0; k < kb; k += 2 {
		odd := k+1 < kb
		for _, cb := range colB {
			var lo, hi uint32
			if cb >= 0 {
				lo = uint32(bh[cb+offB[k]])
				if odd {
					hi = uint32(bh[cb+offB[k+1]])
				}
			}
			if bfPairs {
				dst[i] = lo | hi<<16
			} else {
				dst[i] = hi << 16
				dst[i+nr] = lo << 16
			}
			i++
		}
		if !bfPairs {
			i += nr
		}
	}
}

// runDescs sets d to copyRuns's runs (to, from, full, mask) for the
// runs rs of a block's reduction offsets off (A's, from the row's
// first value): run i's len values from off[first] go to the row's
// value first, in full chunks of 32 and a tail of len%32 (its mask).
func runDescs(d *[kc][4]int, off []int, rs [][2]int32) int {
	for i, r := range rs {
		n := int(r[1])
		d[i] = [4]int{int(r[0]), off[r[0]], n / 32, 1<<(n%32) - 1}
	}
	return len(rs)
}

// packA16 is packA from operand values already converted to bf16: in
// pairs (bfPairs), runs of consecutive offsets (rs, average length at
// least minRun) are copied.
func packA16(dst []uint32, rowWords int, ah []uint16, m0, rows, am int, offA []int, rs [][2]int32, bfPairs bool) {
	kb := len(offA)
	for r := range rows {
		base := (m0 + r) * am
		if bfPairs && longRuns(kb, rs) {
			row := unsafe.Slice((*uint16)(unsafe.Pointer(&dst[r*rowWords])), 2*rowWords)
			for _, run := range rs {
				o := base + offA[run[0]]
				copy(row[run[0]:run[0]+run[1]], ah[o:o+int(run[1])])
			}
			if kb%2 == 1 {
				row[kb] = 0
			}
			continue
		}
		row := dst[r*rowWords : (r+1)*rowWords]
		i := 0
		for k := 0; k < kb; k += 2 {
			lo := uint32(ah[base+offA[k]])
			var hi uint32
			if k+1 < kb {
				hi = uint32(ah[base+offA[k+1]])
			}
			if bfPairs {
				row[i] = lo | hi<<16
				i++
			} else {
				row[i], row[i+1] = hi<<16, lo<<16
				i += 2
			}
		}
	}
}

// Operand is an operand of GemmOps in one of three forms: float32
// values (F, rounded to bf16 as Gemm packs them), values already
// rounded to bf16 (H, by Convert in the tier Gemm runs in, with the
// offsets of the float32 operand), or packed (P: B by Pack, A by
// PackA, for the call's shape; F may then name the float32 operand,
// which must be the one packed). One of F and H is set, or P.
type Operand struct {
	F *float32
	H *uint16
	P *Packed
}

// GemmOps is Gemm on operands in any form (Operand): the same bits as
// Gemm on the float32 operands the forms were made from. A packed
// operand must have been packed for s, A by PackA and B by Pack; the
// call runs in the tier it was packed for.
func GemmOps(c *float32, a, b Operand, s Shape) { gemmOps(best, c, a, b, s) }

// GemmOpsTier is GemmOps in tier t (GemmTier); a Packed operand keeps
// the tier it was packed for.
func GemmOpsTier(t Tier, c *float32, a, b Operand, s Shape) {
	t = usable(t)
	gemmOps(t, c, a, b, s)
}

func gemmOps(t Tier, c *float32, a, b Operand, s Shape) {
	if a.P != nil {
		if !a.P.isA || a.P.s != s || a.F != nil && a.F != a.P.b {
			panic(fmt.Sprintf("bf16.GemmOps: operand A %p, shape %+v; packed (A: %v) from %p, %+v", a.F, s, a.P.isA, a.P.b, a.P.s))
		}
		t = a.P.t
	}
	if b.P != nil {
		if b.P.isA || b.P.s != s || b.F != nil && b.F != b.P.b {
			panic(fmt.Sprintf("bf16.GemmOps: operand B %p, shape %+v; packed (A: %v) from %p, %+v", b.F, s, b.P.isA, b.P.b, b.P.s))
		}
		if a.P != nil && a.P.t != b.P.t {
			panic(fmt.Sprintf("bf16.GemmOps: A packed for tier %v, B for %v", a.P.t, b.P.t))
		}
		t = b.P.t
	}
	runOps(t, c, a, b, s)
}

// Convert rounds n float32 values at src to bf16 at dst, as the tier
// Gemm runs in packs them (an operand for GemmOps's H form).
func Convert(dst *uint16, src *float32, n int) { convertTier(best, dst, src, n) }

// ConvertTier is Convert for GemmOpsTier(t, ...).
func ConvertTier(t Tier, dst *uint16, src *float32, n int) {
	t = usable(t)
	convertTier(t, dst, src, n)
}

func convertTier(t Tier, dp *uint16, sp *float32, n int) {
	if n <= 0 {
		return
	}
	if t == AVX512BF16 && hasAsmPack {
		cvtN(dp, sp, n)
		return
	}
	d, s := unsafe.Slice(dp, n), unsafe.Slice(sp, n)
	for i, x := range s {
		d[i] = uint16(rt.BF16FromFloat32(x))
	}
}

// blockWords is the number of words packBBlock writes for a block of
// ncb columns and steps steps.
func blockWords(t Tier, nr, ncb, steps int) int {
	w := 0
	for j := 0; j < ncb; j += nr {
		w = (j + panelWidth(t, nr, ncb-j)) * steps
	}
	return w
}

// Packed is the B operand of a contraction converted to bf16 and packed
// once (Pack) for several GemmPacked calls with the same shape: the
// generated code packs a weight that a loop of calls (a convolution's
// output rows, the parallel parts of a product) reads unchanged, instead
// of converting it again in every call. Its buffer grows on the first
// Pack and is kept, so that later Packs allocate nothing. A Packed is
// read-only to GemmPacked: parts running at the same time may share it.
type Packed struct {
	words []uint32
	s     Shape
	t     Tier
	b     *float32 // the operand packed (A when isA)
	// isA: packed by PackA, the rows of A of every (k block, (m2,
	// m3)), aBlock words per k block, aM rows per (m2, m3).
	isA        bool
	aBlock, aM int
	// direct: s swaps its operands (Shape.norm), so that b is the
	// kernels' A: GemmPacked then runs Gemm on b.
	direct bool
	// offA are A's offsets of the reduction steps (kOffsets), runsA
	// their runs per k block (block i at runsA[runsAt[i]:runsAt[i+1]]):
	// the same for every call with the shape.
	offA   []int
	runsA  [][2]int32
	runsAt []int
	// offB are B's offsets of the reduction steps (PackA: the same for
	// every call, which packs B: the weight gradients' K of up to
	// 32768 steps took 3-4% of the bf16 ResNet step in kOffsets).
	offB []int
	// ns and kt are the normalized shape and reduction length planA or
	// planB laid p out for, parts the count PackIn or PackAIn split
	// the packing into (job runs its parts on a pool).
	ns    Shape
	kt    int
	parts int
	job   packJob
}

// Pack converts and packs operand b of Gemm(c, a, b, s) into p, for the
// tier Gemm runs in. b must not change while p is used.
func Pack(p *Packed, b *float32, s Shape) { packTier(p, best, b, s) }

// PackTier is Pack for GemmTier(t, ...).
func PackTier(p *Packed, t Tier, b *float32, s Shape) {
	t = usable(t)
	packTier(p, t, b, s)
}

// begin records what p packs (operand op, A when isA, of s in tier t)
// and returns s normalized and its reduction length, or ok false when
// there is nothing to pack: a shape whose operands Gemm swaps (GemmOps
// then reads op as float32) or an empty one.
func (p *Packed) begin(t Tier, op *float32, s Shape, isA bool) (Shape, int, bool) {
	p.s, p.t, p.b, p.isA = s, t, op, isA
	p.direct = s.swapped()
	s = s.norm()
	kt := s.K * s.K2 * s.K3
	if p.direct || s.M <= 0 || s.N <= 0 || kt <= 0 {
		p.direct = true
		return s, 0, false
	}
	return s, kt, true
}

func packTier(p *Packed, t Tier, bp *float32, s Shape) {
	if p.planB(t, bp, s) {
		p.packBPart(0, 1)
	}
}

// planB lays out p for Pack of operand bp of s in tier t (the buffer
// grown, A's reduction offsets and runs recorded for GemmPacked) and
// reports whether there is anything to pack; packBPart then packs the
// blocks.
func (p *Packed) planB(t Tier, bp *float32, s Shape) bool {
	s, kt, ok := p.begin(t, bp, s, false)
	if !ok {
		return false
	}
	nr := p.nr()
	bfPairs := t == AVX512BF16
	cols := s.N * s.N2
	total := 0
	for n0 := 0; n0 < cols; n0 += nc {
		ncb := min(nc, cols-n0)
		for k0 := 0; k0 < kt; k0 += kc {
			total += blockWords(t, nr, ncb, blockSteps(min(kc, kt-k0), bfPairs))
		}
	}
	if cap(p.words) < total {
		p.words = make([]uint32, total)
	}
	p.words = p.words[:total]
	sc := getScratch()
	defer putScratch(sc)
	offA, offB := &sc.offA, &sc.offB
	if cap(p.offA) < kt {
		p.offA = make([]int, kt)
	}
	p.offA = p.offA[:kt]
	p.runsA, p.runsAt = p.runsA[:0], p.runsAt[:0]
	// A's offsets and runs for GemmPacked (every n block has the same).
	for k0 := 0; k0 < kt; k0 += kc {
		kb := min(kc, kt-k0)
		kOffsets(&s, k0, kb, offA[:], offB[:])
		copy(p.offA[k0:], offA[:kb])
		p.runsAt = append(p.runsAt, len(p.runsA))
		if mayRun(&s, s.AK, s.AK2) { // (as runOps computes them)
			p.runsA = append(p.runsA, runs(offA[:kb], sc.runsA[:])...)
		}
	}
	p.runsAt = append(p.runsAt, len(p.runsA))
	p.ns, p.kt = s, kt
	return true
}

// nr is the width of B's panels in p's tier.
func (p *Packed) nr() int {
	if p.t >= AVX512 {
		return nrZMM
	}
	return nrYMM
}

// packBPart packs part i of parts of the blocks planB laid out: the
// (n block, k block) pairs, in Pack's order, are cut into parts of
// balanced counts, each packed as Pack packs it, so that the parts
// together write the words of one Pack.
func (p *Packed) packBPart(i, parts int) {
	s, kt, t := &p.ns, p.kt, p.t
	nr := p.nr()
	bfPairs := t == AVX512BF16
	cols := s.N * s.N2
	kBlocks := (kt + kc - 1) / kc
	lo, hi := rt.Share((cols+nc-1)/nc*kBlocks, i, parts)
	if lo >= hi {
		return
	}
	_, _, bn := s.spans()
	bs := unsafe.Slice(bPtr(p.b, s), bn)
	sc := getScratch()
	defer putScratch(sc)
	offA, offB, colB := &sc.offA, &sc.offB, &sc.colB
	cur, u := 0, 0
	for n0 := 0; n0 < cols && u < hi; n0 += nc {
		ncb := min(nc, cols-n0)
		for k0 := 0; k0 < kt && u < hi; k0, u = k0+kc, u+1 {
			kb := min(kc, kt-k0)
			steps := blockSteps(kb, bfPairs)
			w := blockWords(t, nr, ncb, steps)
			if u >= lo {
				kOffsets(s, k0, kb, offA[:], offB[:])
				var rsB [][2]int32
				if bfPairs && hasAsmPack && mayRun(s, s.BK, s.BK2) {
					rsB = runs(offB[:kb], sc.runsB[:])
				}
				packBBlock(t, nr, p.words[cur:cur+w], bs, nil, s, n0, ncb, steps, offB[:kb], rsB, colB, sc)
			}
			cur += w
		}
	}
}

// blockSteps is the number of packed words per column of a block of kb
// reduction steps: pairs (bfPairs), else two per pair.
func blockSteps(kb int, bfPairs bool) int {
	steps := (kb + 1) / 2
	if !bfPairs {
		steps *= 2
	}
	return steps
}

// GemmPacked is Gemm(c, a, b, s) with b packed in p (Pack(p, b, s), the
// same b and s): the same bits, without converting b again. It panics
// when b or s is not what p was packed from.
func GemmPacked(c, a, b *float32, p *Packed, s Shape) {
	if s != p.s || b != p.b || p.isA {
		panic(fmt.Sprintf("bf16.GemmPacked: operand %p, shape %+v; packed from %p, %+v", b, s, p.b, p.s))
	}
	if p.direct {
		run(p.t, c, a, p.b, s)
		return
	}
	runOps(p.t, c, Operand{F: a}, Operand{P: p}, s)
}

// kern runs the micro-kernel of tier t for a tile of rows rows and a
// panel of nr columns (nrZMM, or 16 in the AVX512BF16 tier).
func kern(t Tier, rows, nr, steps int, a, b *uint32, c *float32, ldc int, load bool) {
	switch t {
	case AVX512BF16:
		if nr == 16 {
			kernBF16n16s[rows](steps, a, b, c, ldc, load)
			return
		}
		kernBF16s[rows](steps, a, b, c, ldc, load)
	case AVX512:
		kernF32x512s[rows](steps, (*float32)(unsafe.Pointer(a)), (*float32)(unsafe.Pointer(b)), c, ldc, load)
	case AVX2:
		kernF32x2s[rows](steps, (*float32)(unsafe.Pointer(a)), (*float32)(unsafe.Pointer(b)), c, ldc, load)
	default:
		kernGo(rows, steps, a, b, c, ldc, load)
	}
}

// kernPanel runs the kernel of tier t on an m panel of rows and a B
// panel of width pw: from the packed A panel a, or (ad not nil) reading
// a converted A in place: row r at ad[r*lda/2:], the block's steps in
// the nrun runs rd (inPlaceRuns), each of whole pairs (inPlace), in one
// kernel call that keeps the tile of C in registers from the first run
// to the last (the same sums in the same order as one call per run).
func kernPanel(t Tier, rows, pw, steps int, a *uint32, ad []uint16, lda int, rd *[kc][3]int, nrun int, panel []uint32, c *float32, ldc int, load bool) {
	if ad == nil {
		kern(t, rows, pw, steps, a, &panel[0], c, ldc, load)
		return
	}
	if pw == 16 {
		kernBF16n16aRows(rows, nrun, &rd[0], &ad[0], lda, &panel[0], c, ldc, load)
	} else {
		kernBF16aRows(rows, nrun, &rd[0], &ad[0], lda, &panel[0], c, ldc, load)
	}
}

// inPlaceRuns sets d to the in-place kernels' runs (A's byte offset
// from a row's first value, pairs, B's first pair) of the runs rs of a
// block's reduction offsets off (A's), each of whole pairs (inPlace),
// and returns their number. The kernels read A's bf16 row r of run i
// at ad[r*AM + off[first]:]; the caller checks that every run stays
// within A's span (it does: off are offsets s reaches).
func inPlaceRuns(d *[kc][3]int, off []int, rs [][2]int32) int {
	for i, r := range rs {
		d[i] = [3]int{2 * off[r[0]], int(r[1]) / 2, int(r[0]) / 2}
	}
	return len(rs)
}

// minInPlace is the shortest average run (in steps) that the kernels
// read in place when a block has several (each run costs a load and a
// store of the tile of C).
const minInPlace = 32

// inPlace reports whether the kernels read a converted A's block of kb
// steps in runs rs in place: every run starts at an even step and has
// an even length (whole pairs: a pair's values are adjacent in A), and
// the block is one run or runs of average length at least minInPlace.
func inPlace(kb int, rs [][2]int32) bool {
	if len(rs) == 0 || len(rs) > 1 && kb/len(rs) < minInPlace {
		return false
	}
	for _, r := range rs {
		if r[0]%2 != 0 || r[1]%2 != 0 {
			return false
		}
	}
	return true
}

// panelWidth is the width of the B panel at the last rem columns of a
// block: nr, or 16 in the AVX512BF16 tier when at most 16 remain (the
// kernBF16n16 kernels; a narrower panel would be zero-padded to nr).
func panelWidth(t Tier, nr, rem int) int {
	if t == AVX512BF16 && rem <= 16 {
		return 16
	}
	return nr
}

// colOff is the offset of column n (of N*N2, n2 innermost) along
// strides st (the n axis) and st2 (n2).
func colOff(n, n2, st, st2 int) int {
	if n2 == 1 {
		return n * st
	}
	return n/n2*st + n%n2*st2
}

// kOffsets fills offA and offB with A's and B's offsets of the
// reduction steps k0 ... k0+len-1 (k3, k2, k; k innermost).
func kOffsets(s *Shape, k0, kb int, offA, offB []int) {
	k := k0 % s.K
	k2 := k0 / s.K % s.K2
	k3 := k0 / (s.K * s.K2)
	for i := range kb {
		offA[i] = k3*s.AK3 + k2*s.AK2 + k*s.AK
		offB[i] = k3*s.BK3 + k2*s.BK2 + k*s.BK + s.bOff
		if k++; k == s.K {
			k = 0
			if k2++; k2 == s.K2 {
				k2 = 0
				k3++
			}
		}
	}
}

// word is the packed word of the pair (lo, hi): two bf16 in one uint32
// (bfPairs), else the float32 bits of one rounded value (lo).
func bf(x float32) uint32 { return uint32(rt.BF16FromFloat32(x)) }

// packB packs one panel of B: for each step, the panel's columns
// (colB[c] the column's offset, -1 past the end: zeros). Steps are the
// pairs of reduction steps (bfPairs: one word, the even step in the low
// half), else the pair's odd step then its even step, as float32 bits
// rounded to bf16.
func packB(dst []uint32, bs []float32, colB []int, offB []int, bfPairs bool, from int) {
	nr := len(colB)
	kb := len(offB)
	i := from * nr
	if !bfPairs {
		i *= 2
	}
	for k := 2 * from; k < kb; k += 2 {
		odd := k+1 < kb
		for _, cb := range colB {
			var lo, hi uint32
			if cb >= 0 {
				lo = bf(bs[cb+offB[k]])
				if odd {
					hi = bf(bs[cb+offB[k+1]])
				}
			}
			if bfPairs {
				dst[i] = lo | hi<<16
			} else {
				dst[i] = hi << 16
				dst[i+nr] = lo << 16
			}
			i++
		}
		if !bfPairs {
			i += nr
		}
	}
}

// packA packs rows m0 ... m0+rows-1 of A (a panel of mr rows, the rows
// past the end zeros left from before: they only reach cells not
// stored): row r at r*rowWords, steps as in packB.
func packA(dst []uint32, rowWords int, as []float32, m0, rows, am int, offA []int, bfPairs bool, from int) {
	kb := len(offA)
	for r := range rows {
		base := (m0 + r) * am
		row := dst[r*rowWords : (r+1)*rowWords]
		i := from
		if !bfPairs {
			i *= 2
		}
		for k := 2 * from; k < kb; k += 2 {
			lo := bf(as[base+offA[k]])
			var hi uint32
			if k+1 < kb {
				hi = bf(as[base+offA[k+1]])
			}
			if bfPairs {
				row[i] = lo | hi<<16
				i++
			} else {
				row[i], row[i+1] = hi<<16, lo<<16
				i += 2
			}
		}
	}
}

// kernGo is the Go tier's micro-kernel: the rows x 16 tile of kernF32x2.
func kernGo(rows, steps int, a, b *uint32, c *float32, ldc int, load bool) {
	as := unsafe.Slice(a, (rows-1)*kc+steps)
	bs := unsafe.Slice(b, steps*nrYMM)
	cs := unsafe.Slice(c, (rows-1)*ldc/4+nrYMM)
	var acc [mrYMM][nrYMM]float32
	for r := range rows {
		if load {
			copy(acc[r][:], cs[r*ldc/4:r*ldc/4+nrYMM])
		}
		ar := as[r*kc : r*kc+steps]
		for s, w := range ar {
			x := math.Float32frombits(w)
			bv := bs[s*nrYMM : s*nrYMM+nrYMM]
			for j, y := range bv {
				acc[r][j] += x * math.Float32frombits(y)
			}
		}
		copy(cs[r*ldc/4:r*ldc/4+nrYMM], acc[r][:])
	}
}

// minRun is the average length of the contiguous runs of a block's
// reduction offsets from which the packing converts runs with cvtN.
const minRun = 8

// runs splits off into maximal runs of consecutive offsets, as (first
// index, length) pairs in out (len(off) entries at most).
func runs(off []int, out [][2]int32) [][2]int32 {
	out = out[:0]
	for i := 0; i < len(off); {
		j := i + 1
		for j < len(off) && off[j] == off[j-1]+1 {
			j++
		}
		out = append(out, [2]int32{int32(i), int32(j - i)})
		i = j
	}
	return out
}

// packAAsm packs the leading pairs of an A panel with the AVX512_BF16
// routines where A's layout allows (reduction steps in contiguous runs:
// cvtRowsN per run; or rows contiguous, the steps in progressions of at
// least 16 pairs: cvtRows16, converted and transposed in registers; or
// rows contiguous with 16 rows to read: cvtPairs16, then a
// transposition) and returns the number of pairs packed; packA packs
// the rest with the same rounding.
func packAAsm(dst []uint32, rowWords int, as []float32, m0, rows int, s *Shape, offA []int, rs [][2]int32, sc *scratch) int {
	kb := len(offA)
	if kb < 16 {
		return 0
	}
	if longRuns(kb, rs) {
		// Every row of the panel in one call per run.
		row0 := unsafe.Slice((*uint16)(unsafe.Pointer(&dst[0])), 2*rowWords)
		for _, run := range rs {
			cvtRowsN(&row0[run[0]], rowWords*4, &as[m0*s.AM+offA[run[0]]], s.AM*4, rows, int(run[1]))
		}
		if kb%2 == 1 {
			for r := range rows {
				dst[r*rowWords+kb/2] &= 0xffff
			}
		}
		return (kb + 1) / 2
	}
	if s.AM == 1 {
		if sc.nprog < 0 {
			sc.nprog, sc.progMin = 0, kc
			sc.progAll = progPairs(offA, func(p0, np, d int) {
				sc.prog[sc.nprog] = [3]int{p0, np, d}
				sc.nprog++
				sc.progMin = min(sc.progMin, np)
			})
		}
		if sc.nprog > 0 && sc.progMin >= 16 {
			// The panel's rows converted and transposed in registers,
			// 16 pairs at a time, a call per run.
			for _, r := range sc.prog[:sc.nprog] {
				cvtRows16(&dst[r[0]], rowWords*4, &as[m0+offA[2*r[0]]], r[2]*4, r[1], rows)
			}
			return sc.progAll
		}
	}
	if s.AM == 1 && s.M >= 16 {
		// The 16 rows from r0 (m0, or for the last panels the 16 rows
		// ending at M), converted once per k block and (m2, m3): the
		// panels within them transpose from tmp (this panel's rows
		// from sh on).
		r0 := min(m0, s.M-16)
		if m0+rows > r0+16 {
			return 0
		}
		if sc.tmpRow != r0 {
			sc.tmpDone = progPairs(offA, func(p0, np, d int) { cvtPairs16(&sc.tmp[p0*16], &as[r0+offA[2*p0]], d*4, np) })
			sc.tmpRow = r0
		}
		done := sc.tmpDone
		sh := m0 - r0
		// 16 pairs at a time in registers, the rest in Go.
		nb := 0
		if sh == 0 {
			nb = done / 16
		}
		if nb > 0 {
			transpose16(&dst[0], rowWords*4, &sc.tmp[0], nb, rows)
		}
		transposeRows(dst, rowWords, &sc.tmp, rows, sh, 16*nb, done)
		return done
	}
	return 0
}

// mayRun reports whether the reduction offsets along strides st (k)
// and st2 (k2) of s can have runs of consecutive offsets: the innermost
// reduction axis longer than 1 has stride 1 (else runs computes runs of
// at most 2, too short to use).
func mayRun(s *Shape, st, st2 int) bool {
	switch {
	case s.K > 1:
		return st == 1
	case s.K2 > 1:
		return st2 == 1
	}
	return true
}

// longRuns reports whether the kb reduction steps of a block in runs rs
// are copied run by run (runs of average length at least minRun).
func longRuns(kb int, rs [][2]int32) bool { return len(rs) > 0 && kb/len(rs) >= minRun }

// progPairs calls f(p0, np, d) for the leading pairs of off in runs of
// np >= 2 pairs from pair p0 whose offsets progress by d >= 0 (a run of
// reduction steps along one stride: the steps of one call's reduction
// axis when the calls of a loop are folded into one), and returns the
// number of pairs the runs cover.
func progPairs(off []int, f func(p0, np, d int)) int {
	p := 0
	for 2*p+3 < len(off) {
		d := off[2*p+1] - off[2*p]
		if d < 0 {
			break
		}
		e := 2*p + 2
		for e < len(off) && off[e]-off[e-1] == d {
			e++
		}
		np := (e - 2*p) / 2
		if np < 2 {
			break
		}
		f(p, np, d)
		p += np
	}
	return p
}

// packBAsm is packAAsm for a B panel (columns contiguous: cvtPairs32;
// or reduction steps in contiguous runs of whole pairs, columns s.BN
// apart: cvtColumns16, converted and transposed in registers; or in
// other runs: cvtN per column, then a transposition in Go).
func packBAsm(dst []uint32, bs []float32, colB []int, offB []int, rs [][2]int32, s *Shape, sc *scratch) int {
	kb := len(offB)
	nr := len(colB)
	if kb < 16 || colB[nr-1] < 0 {
		return 0 // a partial panel: packB
	}
	if s.BN == 1 && s.N2 == 1 && (nr == nrZMM || nr == 16) && sc.progAllB > 0 {
		// The block's progressions (packBBlock).
		for _, r := range sc.progB[:sc.nprogB] {
			if nr == 16 {
				cvtPairs16(&dst[r[0]*nr], &bs[colB[0]+offB[2*r[0]]], r[2]*4, r[1])
			} else {
				cvtPairs32(&dst[r[0]*nr], &bs[colB[0]+offB[2*r[0]]], r[2]*4, r[1])
			}
		}
		return sc.progAllB
	}
	if s.N2 == 1 && longRuns(kb, rs) && pairRuns(kb, rs) {
		// 16 columns (s.BN apart) at a time, converted and transposed
		// in registers, a call per run.
		for _, run := range rs {
			p0 := int(run[0]) / 2
			for g := 0; g < nr; g += 16 {
				cvtColumns16(&dst[p0*nr+g], nr*4, &bs[colB[g]+offB[run[0]]], s.BN*4, int(run[1]))
			}
		}
		return (kb + 1) / 2
	}
	if longRuns(kb, rs) {
		// Each column's pairs at sc.cols[c*kc/2:], then gathered into
		// the panel's rows of nr words.
		all := (kb + 1) / 2
		for c, cb := range colB {
			col := unsafe.Slice((*uint16)(unsafe.Pointer(&sc.cols[c*kc/2])), kc)
			for _, run := range rs {
				cvtN(&col[run[0]], &bs[cb+offB[run[0]]], int(run[1]))
			}
			if kb%2 == 1 {
				col[kb] = 0
			}
		}
		gatherColumns(dst, &sc.cols, nr, all)
		return all
	}
	return 0
}

// maxWin is the most 16-column vectors of a B block packWindows packs.
const maxWin = 12

// packWindows packs the block of B's columns n0 ... n0+ncb-1 at the
// reduction offsets offB as windows, when that saves conversions, and
// returns the number of progressions it found (0 when it packed
// nothing: the block has another form). The form: B contiguous along n
// (s.BN == 1, s.N2 == 1, ncb a multiple of 16, at most 16*maxWin), the
// block's steps all in progressions of whole pairs (progPairs, into
// sc.progB), and the columns of a progression overlapping those of the
// one before it: a convolution's kernel gradient, whose columns are the
// kernel columns times the input channels and whose steps move along
// the pixels by a multiple of 16 channels (the first stage's
// progression q+1 reads the 16 columns v+1 of progression q as its
// columns v). Each distinct 16 columns of a progression (by offset in
// B, progression and stride) are converted once, with cvtPairs16, into
// a window of 16 words per pair at sc.winAt[r][v] in dst: the n16
// kernels read them in place, one call per 16 columns over the
// progressions. The words are packB's, so the sums are the same.
func packWindows(dst []uint32, bs []float32, s *Shape, n0, ncb int, offB []int, sc *scratch) int {
	kb := len(offB)
	nv := ncb / 16
	if kb%2 != 0 || ncb%16 != 0 || nv > maxWin || s.N2 != 1 {
		return 0
	}
	n := 0
	all := progPairs(offB, func(p0, np, d int) {
		sc.progB[n] = [3]int{p0, np, d}
		n++
	})
	if all != kb/2 || n < 2 {
		return 0
	}
	// The windows: a progression's vector v is the vector w of the one
	// before when they start at the same offset with the same pairs and
	// stride. Packed only when at least a third of them repeat.
	shared := 0
	for r := 1; r < n; r++ {
		p, q := sc.progB[r], sc.progB[r-1]
		if p[1] != q[1] || p[2] != q[2] {
			continue
		}
		sh := offB[2*p[0]] - offB[2*q[0]]
		if sh > 0 && sh%16 == 0 && sh/16 < nv {
			shared += nv - sh/16
		}
	}
	if 3*shared < n*nv {
		return 0
	}
	if sh, ok := uniformShift(offB, sc.progB[:n], nv); ok {
		// The windows side by side in B (window t at 16t values from
		// the first progression's columns): converted pair by pair,
		// each pair's rows read in order (cvtWindows).
		p0 := sc.progB[0]
		np := p0[1]
		cvtWindows(&dst[0], 64*np, &bs[n0+offB[2*p0[0]]], p0[2]*4, np, (n-1)*sh+nv)
		for r := range n {
			for v := range nv {
				sc.winAt[r][v] = int32((r*sh + v) * 16 * np)
			}
		}
		return n
	}
	w := 0
	for r, p := range sc.progB[:n] {
		o := n0 + offB[2*p[0]]
		var q [3]int
		sh := -1
		if r > 0 {
			q = sc.progB[r-1]
			if p[1] == q[1] && p[2] == q[2] {
				if d := offB[2*p[0]] - offB[2*q[0]]; d > 0 && d%16 == 0 {
					sh = d / 16
				}
			}
		}
		for v := range nv {
			if sh >= 0 && v+sh < nv {
				sc.winAt[r][v] = sc.winAt[r-1][v+sh]
				continue
			}
			sc.winAt[r][v] = int32(w)
			cvtPairs16(&dst[w], &bs[o+16*v], p[2]*4, p[1])
			w += 16 * p[1]
		}
	}
	return n
}

// uniformShift reports whether the progressions ps (of offsets offB)
// all have the pairs and stride of the first and each starts sh*16
// values after the one before, 1 <= sh <= nv, and returns sh.
func uniformShift(offB []int, ps [][3]int, nv int) (int, bool) {
	sh := 0
	for r := 1; r < len(ps); r++ {
		p, q := ps[r], ps[r-1]
		d := offB[2*p[0]] - offB[2*q[0]]
		if p[1] != ps[0][1] || p[2] != ps[0][2] || d <= 0 || d%16 != 0 || d/16 > nv || sh > 0 && d/16 != sh {
			return 0, false
		}
		sh = d / 16
	}
	return sh, sh > 0
}

// pairRuns reports whether the runs rs of a block of kb reduction steps
// hold whole pairs: each starts at an even step and has an even length,
// but for the block's last run, which may end with the odd step.
func pairRuns(kb int, rs [][2]int32) bool {
	for _, r := range rs {
		if r[0]%2 != 0 || r[1]%2 != 0 && int(r[0]+r[1]) != kb {
			return false
		}
	}
	return true
}

// Converted is a bf16 copy of a float32 array (Convert), kept between
// uses: the generated code converts an operand that its calls read
// several times (a convolution's input, whose cells 9 output pixels
// read; an activation every parallel part reads whole) once per use
// instead of once per call. Its buffer grows on the first Convert and
// is kept, so that later ones allocate nothing.
type Converted struct {
	h    []uint16
	base *float32
}

// Convert sets c to the bf16 copy of the n float32 values at base,
// rounded as Gemm packs them.
func (c *Converted) Convert(base *float32, n int) { c.ConvertTier(best, base, n) }

// ConvertTier is Convert for GemmOpsTier(t, ...).
func (c *Converted) ConvertTier(t Tier, base *float32, n int) {
	if cap(c.h) < n {
		c.h = make([]uint16, n)
	}
	c.h, c.base = c.h[:n], base
	if n > 0 {
		ConvertTier(t, &c.h[0], base, n)
	}
}

// At is the operand whose float32 form is at p, an element of the
// array c was converted from. It panics when p is outside it.
func (c *Converted) At(p *float32) Operand {
	d := uintptr(unsafe.Pointer(p)) - uintptr(unsafe.Pointer(c.base))
	if c.base == nil || d%4 != 0 || d/4 >= uintptr(len(c.h)) {
		panic(fmt.Sprintf("bf16.Converted.At: %p is not in the %d values converted from %p", p, len(c.h), c.base))
	}
	return Operand{H: &c.h[d/4]}
}

// transposeRows sets dst[r*rowWords+p] = tmp[p*16+sh+r] for r < rows and
// from <= p < pairs (cvtPairs16's words of 16 rows per pair into an A panel's
// rows; the stores run along the rows), without bounds checks in the
// loop.
func transposeRows(dst []uint32, rowWords int, tmp *[kc / 2 * 16]uint32, rows, sh, from, pairs int) {
	if rows <= 0 || pairs <= from {
		return
	}
	rows = min(rows, 16-sh)
	_ = dst[(rows-1)*rowWords+pairs-1]
	_ = tmp[(pairs-1)*16+sh+rows-1]
	tp := unsafe.Add(unsafe.Pointer(&tmp[0]), 4*sh)
	for r := range rows {
		row := dst[r*rowWords+from : r*rowWords+pairs]
		src := unsafe.Add(tp, 4*r+64*from)
		for p := range row {
			row[p] = *(*uint32)(unsafe.Add(src, 64*p))
		}
	}
}

// gatherColumns sets dst[p*nr+c] = cols[c*kc/2+p] for c < nr and p <
// pairs (packBAsm's converted columns into a B panel; the stores run
// along the panel), without bounds checks in the loop.
func gatherColumns(dst []uint32, cols *[nrZMM * kc / 2]uint32, nr, pairs int) {
	if pairs <= 0 || nr <= 0 {
		return
	}
	_ = dst[pairs*nr-1]
	_ = cols[(min(nr, nrZMM)-1)*kc/2+pairs-1]
	cp := unsafe.Pointer(&cols[0])
	for p := range pairs {
		out := dst[p*nr : p*nr+min(nr, nrZMM)]
		src := unsafe.Add(cp, 4*p)
		for c := range out {
			out[c] = *(*uint32)(unsafe.Add(src, 2*kc*c))
		}
	}
}
