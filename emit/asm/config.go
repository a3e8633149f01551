package asm

import "fmt"

// Config is one instruction-set tier of the emitter: its vector width,
// its register budget and the tile shapes that fit the budget. avo never
// spills registers, so every tile must fit: a broadcast tile holds
// MR*NRVec accumulators, NRVec vectors of B, one broadcast and one tail
// mask (16 YMM registers for 6x2); a dot tile holds DotMR*DotNR
// accumulators, DotMR rows of A and DotNR rows of B (15 for 3x3).
//
// The tiers are AVX512 and AVX2; the emitter's instruction choices
// follow Wide.
type Config struct {
	// Tier names the tier in function names and comments ("AVX2").
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
	// avo reports (avo picks the VEX form of an instruction that also has
	// an EVEX one, so it does not report AVX512VL for XMM/YMM operations
	// that the allocator may put in X16-X31).
	Require []string
	// KCBytes bounds the bytes of one k block of a B row sliver
	// (KC*NRVec*VecBytes), so that the sliver stays in L1 while the
	// kernel sweeps the m tiles.
	KCBytes int
}

// AVX2 is the AVX2+FMA tier: 16 YMM registers, a 6x16 float32 (6x8
// float64) broadcast tile and a 3x3 dot tile, k blocks whose B sliver
// fills at most 16 KiB.
func AVX2() Config {
	return Config{Tier: "AVX2", Regs: 16, VecBytes: 32, MR: 6, NRVec: 2, DotMR: 3, DotNR: 3, KCBytes: 16 << 10}
}

// Flag is the name of the generated boolean that tells whether the
// tier's kernels may run (declared in the generated assembly stubs).
func (c Config) Flag() string { return "ocannl" + c.Tier }

// AVX512 is the AVX-512 tier: 32 ZMM registers, a 14x32 float32 (14x16
// float64) broadcast tile (28 accumulators, 2 B vectors, 1 broadcast;
// 6x64 or 6x32 for kernels of at least WideTileMinM rows), a
// 4x4 dot tile (16 + 4 + 4), opmask tails, k blocks whose B sliver fills
// at most 32 KiB.
func AVX512() Config {
	return Config{Tier: "AVX512", Regs: 32, VecBytes: 64, MR: 14, NRVec: 2, DotMR: 4, DotNR: 4, KCBytes: 32 << 10,
		Wide: true, Require: []string{"AVX512F", "AVX512VL"}}
}

// WideTileMinM is the least M for which an AVX-512 broadcast kernel at
// least four vectors wide takes the 6-row, 4-vector tile (6x64 float32,
// 6x32 float64: 24 accumulators, 4 B vectors, 1 broadcast) instead of
// 14x2 vectors. Per k step the wide tile loads 6 broadcasts and 4 B
// vectors for 24 FMAs (14 and 2 for 28: more loads per FMA), and its 6
// A rows fill fewer L1 sets when A's rows are a power of two apart.
// Measured on an AVX-512 Xeon (Sapphire Rapids class, docs/benchmarks.md):
// the 512^3 float32 product went from 0.84x to 1.0x OpenBLAS (best of
// three turns) and the padded 64->64 conv held its speed, while the MLP
// layer (M=32) lost a fifth with it, hence the bound on M.
const WideTileMinM = 96

// shaped returns the configuration a kernel of s uses: c itself, except
// for the wide AVX-512 tile (see WideTileMinM).
func (c Config) shaped(s *Spec) Config {
	if c.Wide && s.Kind == Broadcast && s.M >= WideTileMinM && s.N >= 4*c.lanes(s) {
		c.MR, c.NRVec = 6, 4
	}
	return c
}

// Tiers are the emitted tiers, best first.
func Tiers() []Config { return []Config{AVX512(), AVX2()} }

// lanes is the number of elements in a vector.
func (c Config) lanes(s *Spec) int { return c.VecBytes / s.elemSize() }

// tile is the register tile (rows, columns in elements).
func (c Config) tile(s *Spec) (int, int) {
	if s.gathers(c) {
		rows, nv := c.gatherTile(s)
		return rows, nv * c.lanes(s)
	}
	if s.Kind == Dot {
		return c.DotMR, c.DotNR
	}
	if s.Kind == MVec {
		return s.M, s.N * max(1, s.N2)
	}
	c = c.shaped(s)
	return c.MR, c.NRVec * c.lanes(s)
}

// kBlocks splits K into equal-as-possible blocks of at most KC
// elements, KC chosen so that a B sliver (KC rows of the tile's width)
// fits in KCBytes. The dot kernel does not block k.
func (c Config) kBlocks(s *Spec) []int {
	if s.Kind != Broadcast {
		return []int{s.K}
	}
	c = c.shaped(s)
	kc := max(1, c.KCBytes/(c.NRVec*c.VecBytes))
	nb := (s.K + kc - 1) / kc
	out := make([]int, nb)
	for i := range out {
		out[i] = s.K / nb
		if i < s.K%nb {
			out[i]++
		}
	}
	return out
}

// packs reports whether a broadcast kernel packs its B slivers: when B's
// rows are not already the sliver's width apart and at least PackMTiles
// m tiles reuse each sliver.
func (c Config) packs(s *Spec) bool {
	c = c.shaped(s)
	return s.BK != c.NRVec*c.lanes(s) && s.M >= PackMTiles*c.MR && s.K*s.BK*s.elemSize() > PackMinBBytes
}

// PackMinBBytes: a B whose rows span at most this many bytes over K stays
// in L1 across the m tiles without packing (measured: packing made the
// 64x64x64 float32 product about 5% slower).
const PackMinBBytes = 16 << 10

// PackMTiles is the least number of m tiles over which packing a B
// sliver pays.
const PackMTiles = 3

// blocking describes the cache blocking.
func (c Config) blocking(s *Spec) string {
	if s.gathers(c) {
		return "B gathered into the frame"
	}
	if s.Kind == Dot {
		return "k unblocked"
	}
	if s.Kind == MVec {
		return fmt.Sprintf("accumulator sets: %d, sums scattered into C", c.mvecSets(s))
	}
	b := c.kBlocks(s)
	d := "one k block"
	if len(b) > 1 {
		d = fmt.Sprintf("%d k blocks of at most %d", len(b), b[0])
	}
	if c.packs(s) {
		d += ", B slivers packed"
	}
	return d
}
