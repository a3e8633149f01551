// Package target describes the code targets of the emitters: for each,
// one value holding its tiles, thresholds and costs, the way
// cmd/compile's ssa.Config holds one architecture's. The emitters read
// their tuning from these values and from nowhere else, so a new target
// (bf16 AVX-512, a tensor-core GPU) is a new description plus its kernel
// emitters, and a retuning is an edit of one field whose comment cites
// the measurement behind it (docs/benchmarks.md has the logs).
//
// The CPU targets are Generic (Go loops only), AVX2 (amd64 AVX2+FMA) and
// AVX512 (amd64 AVX-512F); CUDA is the GPU target. A generated amd64
// package carries the AVX-512 and AVX2 kernels side by side, picked at
// run time, with the Go loops in the other branch: its one schedule is
// decided with the best tier's Loops, Parallel and Kernels, which every
// CPU target shares today (TestSharedTuning pins it; a tier that wants
// its own would need per-tier decisions in the emitter).
//
// The package imports no emitter; every emitter may import it.
package target

import (
	"fmt"
	"reflect"
	"strings"
)

// CPU describes a CPU target.
type CPU struct {
	// Name names the target in printed schedules ("amd64 AVX-512").
	Name string
	// Loops tunes the Go loops the emitter writes.
	Loops Loops
	// Parallel tunes the split of loop nests into parts run on an
	// rt.Pool (Options.Parallel of emit/gocode).
	Parallel Parallel
	// Kernels says when a nest is worth an assembly kernel; its zero
	// value on Generic, which has none.
	Kernels Kernels
	// Vector is the vector tier: its registers and tiles; zero (Tier "")
	// on Generic.
	Vector Vector
}

// Loops tunes the Go loops.
type Loops struct {
	// JamFull is the longest reduction loop unroll-and-jam unrolls
	// completely; longer ones are unrolled by JamUnroll with a
	// remainder loop (docs/design.md, "Loop nests").
	JamFull, JamUnroll int
	// MaxStackArray is the size in bytes of the largest local array Go
	// keeps on the stack (the gc compiler's limit for an implicitly
	// sized variable): larger ones go to the heap anyway.
	MaxStackArray int
	// ScratchOver is the size in bytes above which a model kernel's local
	// array goes to its scratch struct rather than the stack: with every
	// local in the scratch, the two-moons model's Backward kernel (25
	// locals of at most 2 KiB) ran 7% more instructions for no
	// measurable gain in time; 64 KiB stays well below MaxStackArray.
	ScratchOver int
	// MaxAbsorbCells bounds the nests whose cells the fill-absorption
	// planner enumerates to prove each cell is stored exactly once.
	MaxAbsorbCells int
}

// Parallel tunes the split of nests into parts (emit/gocode par.go has
// the rule). Every threshold counts work, never threads: the parts
// depend only on the extents, so results are the same bits on any
// number of threads.
type Parallel struct {
	// MinGoIters is the least number of innermost iterations of a nest
	// of Go loops handed to the pool (about 10-30 us of work, against a
	// few microseconds to wake a worker), an iteration computing a
	// transcendental function counting TranscendentalCost more.
	MinGoIters int
	// MinAsmIters is the least number of multiply-adds of a nest an
	// assembly contraction runs handed to the pool (the kernels do
	// 30-100 per nanosecond).
	MinAsmIters int
	// MinMapIters is the least number of elements of a pointwise map an
	// assembly kernel runs handed to the pool; a short contraction (a
	// layer's input gradient through 4 logits: 256x400 cells, K=4) counts
	// its stored cells against it, as memory work.
	MinMapIters int
	// ModelDiv divides MinGoIters, MinAsmIters and MinMapIters in a
	// model's kernels: their nests run in one region per call, where
	// handing a nest to an awake worker costs about a microsecond
	// instead of a wake-up (the attention step's 65536-element maps and
	// 2048x8 Go loops were 17% of its time serial before).
	ModelDiv int
	// TranscendentalCost is what a call of exp, log, tanh, sin, cos or
	// pow counts for in the Go-loop cost, in iterations: about ten times
	// a multiply-add iteration (a 256x8x10 softmax exp does 2^14
	// iterations but as much work as 2^17).
	TranscendentalCost int
	// PartRanges are the ranges of part counts tried, in order, each
	// from its first number down to its second: a loop of extent E is
	// split into the largest divisor of E in the first range, else in
	// the next.
	PartRanges [][2]int
	// MaxSliverParts is the most parts of a broadcast kernel's n axis,
	// each a multiple of SliverElems elements (whole vectors on every
	// tier): the MLP layer 32x784x128 runs as 4 parts of 32 columns
	// with m whole, where 8 parts of 4 rows each re-read all of B per
	// part from L2 (AVX2 on Zen 3: 126 -> 86 us per call on 1 thread).
	MaxSliverParts, SliverElems int
	// MinOutputParts: a nest whose output splits into fewer parts (or an
	// odd number) tries fixed partial sums over its reduction first (a
	// convolution's kernel gradient split on kh: 3 parts keep one of 2
	// threads idle a third of the nest).
	MinOutputParts int
	// MinKernelPart is the least extent of a contraction kernel's own
	// axis in one part for its split to count as balanced (a kernel
	// gradient's 8 output channels in 8 parts would make 8 kernels of
	// one row).
	MinKernelPart int
	// MaxPartialCells bounds the output of a reduction split into
	// partial sums: the record holds parts times as many cells and their
	// serial combination adds as many values (16k: a few microseconds).
	// The CNN's conv2 kernel gradient, 1152 cells, needs 2048.
	MaxPartialCells int
	// MinFillCells is the least number of cells of the zero fills in a
	// row of an operation (the gradients zeroed before a backward pass)
	// handed to the pool: a memory clear runs about ten times faster per
	// cell than a Go loop iteration.
	MinFillCells int
	// FillParts is the number of parts of a parallel run of fills; a
	// fill takes part when its array's first dim is a multiple.
	FillParts int
	// MinPartFill is the least number of cells of a fill run in parts
	// (smaller ones are cleared at once before the parts).
	MinPartFill int
	// MinResetCells is the least number of margin cells of a parallel
	// margin reset of a padded tensor.
	MinResetCells int
}

// Kernels says when a nest is worth an assembly kernel. The limits were
// measured on the demos: below them a kernel call was slower than the Go
// loops, or no faster (docs/benchmarks.md, "Measurements behind design
// decisions").
type Kernels struct {
	// MinFlops is the least work (2*M*N*K*K2) of a contraction kernel:
	// below it the call overhead (tens of nanoseconds) and the tile
	// tails outweigh the vector speed.
	MinFlops int
	// MinDotK is the shortest reduction (K*K2) a dot kernel takes: below
	// a vector of float32 lanes the masked steps do little work each.
	// MinDotKVector is the shortest when the tile is a single row or
	// column (M or N is 1): each sum then needs its own horizontal
	// reduction.
	MinDotK, MinDotKVector int
	// MinBroadcastN is the narrowest n of a broadcast kernel (the rest
	// of the lanes masked off): the moons demo's n=2 gradient ran slower
	// than its Go loops, the CNN demo's n=3 kernel gradient of the
	// one-channel convolution made the training step 1.4x faster.
	MinBroadcastN int
	// DotMaxN: a contraction both kernels can run takes the broadcast
	// kernel unless its n is below DotMaxN and shorter than the dot
	// kernel's k (a gradient's NT product with few columns).
	DotMaxN int
	// DotCellSteps is the cost, in vector steps, of a dot kernel's
	// horizontal sum and store per C cell, in the estimate that picks
	// the gathered form over the dot kernel (per row: one step per
	// vector and reduction step plus one per gathered B element; per C
	// cell of the dot kernel: ceil(K/lanes)*K2 + DotCellSteps). Checked
	// by TestGatherRule on Zen 3 (190 shapes, M 4-256, N 4-16, K 3-24,
	// K2 1 or 3, both element types): it picks no shape where the
	// gathered form is slower, and misses some at most 1.8x faster.
	DotCellSteps int
	// GatherMaxK is the longest k a gathered dot kernel unrolls;
	// GatherMaxSteps the most reduction steps (K*K2) whose gathered rows
	// its frame holds; GatherUnroll the most steps unrolled completely
	// (beyond, a loop over k2 runs with k unrolled).
	GatherMaxK, GatherMaxSteps, GatherUnroll int
	// MVecMaxAcc is the most accumulators of one set of an m-vector
	// kernel (columns times vectors), fitting the registers with the A
	// vectors and a broadcast; MVecMinSteps the shortest reduction
	// (K*K2*K3) for which its final scatter into C is amortized.
	MVecMaxAcc, MVecMinSteps int
	// MinMapElems is the shortest axis (or set of rows) a pointwise
	// kernel runs: shorter ones leave the call overhead uncovered.
	MinMapElems int
	// MinCostlyMapElems is the same for a map using exp, log, tanh, erf or
	// gelu (the transcendentals):
	// measured on Zen 3 (AVX2, TestTranscendentalTiming), a float32 exp
	// map of 16 elements took 26 ns in the kernel against 560 ns in Go
	// loops; the only loss was float64 tanh of 8 inputs (71 vs 65 ns),
	// 16 won (99 vs 114).
	MinCostlyMapElems int
	// MapCallElems: a pointwise kernel whose axis is shorter (but long
	// enough for a call of its own) also runs the nest's longest other
	// axis as rows, so that one call covers that axis rather than a Go
	// loop calling it per row (measured on the decoder, Zen 4: its
	// per-row maps of 128 to 1536 elements, softmax and layer norm,
	// spent a third of their time in the calls).
	MapCallElems int
	// MinMapRow is the shortest row of a map over rows;
	// MinLocalMapElems the least elements of a call whose two levels of
	// rows follow C's memory order.
	MinMapRow, MinLocalMapElems int
	// MinReduceElems is the least elements a reduction kernel's call
	// covers; MinReduceN the shortest row of an along-rows kernel (a max
	// over rows of 2 ran no faster than the loops), MinAcrossN of an
	// across-rows kernel. Above these the kernels were 1.5-10x faster
	// than the loops even at 32 elements (AMD EPYC Zen 3, AVX2).
	MinReduceElems, MinReduceN, MinAcrossN int
	// RedUnroll is the most vector accumulators a reduction kernel keeps
	// (4 hide the latency of the adds; the expression's registers need
	// the rest).
	RedUnroll int
	// MinPackMACs is the least multiply-adds of a contraction that no
	// kernel runs as written for which schedule.Pack copies an operand
	// with its reduction axis last, so that a kernel runs it: 2^16, the
	// size from which every contraction must have a kernel (issue 25);
	// the copy is one pass over the operand, at least K times fewer
	// moves than the product's multiply-adds.
	MinPackMACs int
	// PackStrip is the strip width of the packing copy's reduction axis
	// (schedule.Pack): copying the 384x1024 float32 operand of the TT
	// 1024x384x1536 product row by row took 1.3 ms, 17% of the product
	// (AMD EPYC Zen 4, AVX-512).
	PackStrip int
	// MaskBlock is the size of the diagonal blocks in which a
	// contraction over a causal mask runs (emit/gocode masks.go; 0: the
	// contractions run whole, whatever the mask). The rows of a block go
	// up to the block's last row, so about (1 - 1/n)/2 of the products of
	// n blocks are skipped (37.5% for the decoder's 128 positions in
	// blocks of 32). Measured on Zen 4 (docs/benchmarks.md, "Eighth
	// session"): the decoder's attention kernels went from 40 to 28 ms a
	// step in blocks of 32; blocks of 16 and 64 were no faster.
	MaskBlock int
}

// Vector is an amd64 vector tier: its registers and register tiles, and
// its cache blocking. avo never spills registers, so every tile must
// fit: a broadcast tile holds MR*NRVec accumulators, NRVec vectors of B,
// one broadcast and one tail mask (16 YMM registers for 6x2); a dot tile
// holds DotMR*DotNR accumulators, DotMR rows of A and DotNR rows of B
// (15 for 3x3).
type Vector struct {
	// Tier names the tier in generated function names and comments
	// ("AVX2", "AVX512").
	Tier string
	// Regs is the number of vector registers; VecBytes their width.
	Regs, VecBytes int
	// MR rows by NRVec vectors: the broadcast kernel's register tile.
	MR, NRVec int
	// DotMR by DotNR: the dot kernel's tile.
	DotMR, DotNR int
	// Wide: AVX-512 (ZMM registers, opmask tails, EVEX-only
	// instructions); otherwise AVX2 (YMM, VMASKMOV tails).
	Wide bool
	// Require lists instruction sets the dispatch checks besides those
	// avo reports (avo picks the VEX form of an instruction that also
	// has an EVEX one, so it does not report AVX512VL for XMM/YMM
	// operations the allocator may put in X16-X31).
	Require []string
	// KCBytes bounds the bytes of one k block of a B row sliver
	// (KC*NRVec*VecBytes), so that the sliver stays in L1 while the
	// kernel sweeps the m tiles.
	KCBytes int
	// DotKCBytes bounds the bytes of one k block of a dot kernel's tile
	// (DotMR rows of A and DotNR rows of B, KC elements each), so that
	// the tile's A rows stay in L1 while the n sweep streams B rows; each
	// block adds its sums into C (0: k unblocked, as on AVX2). AVX-512:
	// 24 KiB, KC = 768 float32: the GPT's MLP product 1024x1536x384
	// (K = 1536, 6 KiB rows: 4 A and 4 B rows filled Zen 5's 48 KiB L1)
	// in its 8 parts went from 144-157 to 168-187 GFLOP/s in two blocks
	// (12 KiB, four blocks: 160-188); products with K <= 768 keep one
	// block (docs/benchmarks.md, "The GPT's contractions and optimizer step").
	DotKCBytes int
	// Winograd: float32 3x3 stride-1 convolutions of 16k input and
	// output channels, their input gradients and their kernel gradients
	// run in rt/wino (F(2x2,3x3): 16 multiplications per 2x2 output
	// pixels and channel pair instead of 36) instead of the dot and
	// broadcast kernels (docs/design.md, "Winograd convolutions").
	// Measured on Zen 4: the ResNet-20's three stages ran at 157-169,
	// 190-199 and 214-217 GFLOP/s of direct-convolution flops in
	// AVX-512 and 163, 175 and 205 in AVX2, against the dot kernel's
	// ~100; the float32 ResNet-20 step went 85-90 -> 68.5-70.4 ms
	// (docs/benchmarks.md, "Seventh session").
	Winograd bool
	// WideTileMinM is the least M for which a broadcast kernel at least
	// WideNRVec vectors wide takes the WideMR x WideNRVec tile (0: never).
	// On AVX-512, 6x4 vectors (24 accumulators) load 6 broadcasts and 4 B
	// vectors per 24 FMAs (14x2: 14 and 2 per 28), and its 6 A rows fill
	// fewer L1 sets when A's rows are a power of two apart. Measured on
	// an AVX-512 Xeon (Sapphire Rapids class): the 512^3 float32 product
	// went from 0.84x to 1.0x OpenBLAS and the padded 64->64 conv held
	// its speed, while the MLP layer (M=32) lost a fifth with it, hence
	// the bound on M.
	WideTileMinM, WideMR, WideNRVec int
	// PackMTiles is the least number of m tiles over which packing a B
	// sliver pays; a B whose rows span at most PackMinBBytes over K
	// stays in L1 across the m tiles without packing (packing made the
	// 64x64x64 float32 product about 5% slower).
	PackMTiles, PackMinBBytes int
}

// CUDA describes the CUDA target.
//
// Every size below that tunes speed (tiles, thresholds) is unmeasured on
// a GPU until a lent machine measures it (docs/benchmarks.md); the
// emulation tests check only that each choice computes the right values.
type CUDA struct {
	// Name names the target.
	Name string
	// Block is the number of threads of a block of the
	// one-thread-per-cell kernels.
	Block int
	// GEMM is the tuned float32 tile of matmul-class nests (128x128,
	// 8x8 per thread, float4 loads, two shared-memory stages); Small the
	// tile of float64 nests and of float32 nests whose output has fewer
	// than BigMinBlocks tiles of GEMM (a 128x128 tile would leave most
	// multiprocessors idle). Unmeasured: 128x128 is the usual size of
	// hand-written SGEMMs, not a measurement of this emitter's.
	GEMM, Small GEMMTile
	// BigMinBlocks is the least number of GEMM tiles (over the batch) a
	// float32 nest must have to use GEMM rather than Small. Unmeasured.
	BigMinBlocks int
	// GEMMMin is the smallest M, N and K tiled as a GEMM (smaller ones
	// waste most of a tile).
	GEMMMin int
	// SplitK: a GEMM whose output has fewer than MaxBlocks tiles and
	// whose reduction has at least MinK terms is split over the reduction
	// (convolution weight gradients: few output cells, a huge reduction).
	// Unmeasured.
	SplitK SplitK
	// TensorCore is the block of the tensor-core GEMM (the package
	// option //ocannl:cuda tf32 or bf16). Unmeasured.
	TensorCore TensorCore
	// Precision is the package's option: "" (float32 arithmetic),
	// "tf32" or "bf16" (float32 matmul-class nests on tensor cores with
	// operands rounded to that precision, float32 accumulation). GPU()
	// leaves it empty; the generator sets it from //ocannl:cuda.
	Precision string
	// ReduceMaxCells and ReduceMinLen bound the nests reduced one block
	// per cell: at most ReduceMaxCells cells, each a reduction of at
	// least ReduceMinLen values (a loss, a bias gradient summed over the
	// batch).
	ReduceMaxCells, ReduceMinLen int
}

// GEMMTile is a tiled GEMM's shape: M x N output tiles per block, K-deep
// slices of the reduction staged in shared memory (two stages), each of
// the (M/RegM) x (N/RegN) threads accumulating a RegM x RegN register
// block. RegM and RegN are multiples of 4, M*K and N*K multiples of 4
// times the threads (emit/cuda checks them).
type GEMMTile struct {
	// M x N is the output tile of a block, K the depth of a slice.
	M, N, K int
	// RegM x RegN is the register block of a thread.
	RegM, RegN int
}

// Threads is the number of threads of a block of the tile.
func (t GEMMTile) Threads() int { return (t.M / t.RegM) * (t.N / t.RegN) }

// SplitK says when and how a GEMM is split over its reduction: each of
// S splits (S at most Max, each at least MinSlice terms, enough for
// about TargetBlocks blocks in all) writes its partial sums to a scratch
// buffer, and a second kernel adds the splits in a fixed order.
type SplitK struct {
	// MaxBlocks and MinK: split a GEMM of fewer than MaxBlocks output
	// tiles (over the batch) and at least MinK reduction terms.
	MaxBlocks, MinK int
	// MinSlice is the least reduction a split sums, Max the most splits,
	// TargetBlocks the blocks the splits aim at in all.
	MinSlice, Max, TargetBlocks int
}

// TensorCore is the tensor-core GEMM's block: M x N output tiles of
// WarpsM x WarpsN warps, each computing (M/WarpsM) x (N/WarpsN) in 16x16
// WMMA fragments; KTF32 and KBF16 are the depths of the shared-memory
// slices (two stages) for each precision.
type TensorCore struct {
	// M x N is the output tile of a block of WarpsM x WarpsN warps.
	M, N, WarpsM, WarpsN int
	// KTF32 and KBF16 are the slice depths (multiples of the fragments'
	// k: 8 for tf32, 16 for bf16).
	KTF32, KBF16 int
}

// loops, parallel and kernels are the tuning every CPU target shares
// (see the package comment).
func loops() Loops {
	return Loops{JamFull: 5, JamUnroll: 4, MaxStackArray: 128 << 10, ScratchOver: 64 << 10, MaxAbsorbCells: 1 << 22}
}

func parallel() Parallel {
	return Parallel{
		MinGoIters: 1 << 15, MinAsmIters: 1 << 19, MinMapIters: 1 << 17, ModelDiv: 4, TranscendentalCost: 8,
		PartRanges: [][2]int{{8, 2}, {16, 9}}, MaxSliverParts: 8, SliverElems: 32,
		MinOutputParts: 4, MinKernelPart: 16, MaxPartialCells: 2048,
		MinFillCells: 1 << 17, FillParts: 8, MinPartFill: 1 << 12, MinResetCells: 1 << 14,
	}
}

func kernels() Kernels {
	return Kernels{
		MinFlops: 1024, MinDotK: 8, MinDotKVector: 64, MinBroadcastN: 3, DotMaxN: 16, DotCellSteps: 3,
		GatherMaxK: 32, GatherMaxSteps: 128, GatherUnroll: 32, MVecMaxAcc: 12, MVecMinSteps: 32,
		MinMapElems: 256, MinCostlyMapElems: 16, MapCallElems: 4096, MinMapRow: 4, MinLocalMapElems: 64,
		MinReduceElems: 32, MinReduceN: 4, MinAcrossN: 2, RedUnroll: 4, MinPackMACs: 1 << 16, PackStrip: 16,
		MaskBlock: 32,
	}
}

// Generic is the generic Go target: Go loops only, split in parts on an
// rt.Pool when Parallel.
func Generic() CPU {
	return CPU{Name: "generic Go", Loops: loops(), Parallel: parallel()}
}

// AVX2 is the amd64 AVX2+FMA target: 16 YMM registers, a 6x16 float32
// (6x8 float64) broadcast tile and a 3x3 dot tile, k blocks whose B
// sliver fills at most 16 KiB.
func AVX2() CPU {
	return CPU{Name: "amd64 AVX2+FMA", Loops: loops(), Parallel: parallel(), Kernels: kernels(),
		Vector: Vector{Tier: "AVX2", Regs: 16, VecBytes: 32, MR: 6, NRVec: 2, DotMR: 3, DotNR: 3, KCBytes: 16 << 10,
			PackMTiles: 3, PackMinBBytes: 16 << 10, Winograd: true}}
}

// AVX512 is the amd64 AVX-512 target: 32 ZMM registers, a 14x32 float32
// (14x16 float64) broadcast tile (28 accumulators, 2 B vectors, 1
// broadcast; 6x64 or 6x32 for kernels of at least WideTileMinM rows), a
// 4x4 dot tile (16 + 4 + 4) in k blocks of at most 24 KiB of its rows,
// opmask tails, k blocks whose B sliver fills at most 32 KiB.
func AVX512() CPU {
	return CPU{Name: "amd64 AVX-512", Loops: loops(), Parallel: parallel(), Kernels: kernels(),
		Vector: Vector{Tier: "AVX512", Regs: 32, VecBytes: 64, MR: 14, NRVec: 2, DotMR: 4, DotNR: 4, KCBytes: 32 << 10,
			Wide: true, Require: []string{"AVX512F", "AVX512VL"},
			WideTileMinM: 96, WideMR: 6, WideNRVec: 4, PackMTiles: 3, PackMinBBytes: 16 << 10, DotKCBytes: 24 << 10, Winograd: true}}
}

// GPU is the CUDA target: blocks of 256 threads; float32 GEMM tiles of
// 128x128 in 8-deep k slices with 8x8 register blocks (16x16 threads),
// 64x64 tiles of 16-deep slices with 4x4 blocks for float64 and small
// outputs; split-K for outputs of fewer than 16 tiles over reductions of
// at least 4096; tensor-core blocks of 128x128 (8 warps of 64x32); block
// reductions of at most 1024 cells of at least 2048 values each. The GEMM,
// split-K and tensor-core sizes are unmeasured on a GPU.
func GPU() CUDA {
	return CUDA{Name: "CUDA", Block: 256,
		GEMM:         GEMMTile{M: 128, N: 128, K: 8, RegM: 8, RegN: 8},
		Small:        GEMMTile{M: 64, N: 64, K: 16, RegM: 4, RegN: 4},
		BigMinBlocks: 32, GEMMMin: 8,
		SplitK:         SplitK{MaxBlocks: 16, MinK: 4096, MinSlice: 512, Max: 64, TargetBlocks: 256},
		TensorCore:     TensorCore{M: 128, N: 128, WarpsM: 2, WarpsN: 4, KTF32: 16, KBF16: 32},
		ReduceMaxCells: 1024, ReduceMinLen: 2048}
}

// String prints the description, one field a line (`ocannlgen
// targets` prints every target's).
func (c CPU) String() string { return describe(c) }

// String prints the description, one field a line.
func (c CUDA) String() string { return describe(c) }

// describe prints v's fields, nested structs as dotted names; a nested
// struct that is zero (Generic's Kernels and Vector) prints as "none".
func describe(v any) string {
	var b strings.Builder
	var walk func(prefix string, v reflect.Value)
	walk = func(prefix string, v reflect.Value) {
		t := v.Type()
		for i := range t.NumField() {
			f, fv := t.Field(i), v.Field(i)
			if f.Type.Kind() == reflect.Struct {
				if fv.IsZero() {
					fmt.Fprintf(&b, "%s%s = none\n", prefix, f.Name)
					continue
				}
				walk(prefix+f.Name+".", fv)
				continue
			}
			fmt.Fprintf(&b, "%s%s = %v\n", prefix, f.Name, fv.Interface())
		}
	}
	walk("", reflect.ValueOf(v))
	return b.String()
}
