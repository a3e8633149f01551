package asm

import (
	"fmt"

	"github.com/ocannlgen/ocannlgen/emit/target"
)

// Config is one instruction-set tier of the emitter, as its target
// description (package emit/target) gives it: the vector tier's
// registers, tiles and blocking, and the target's kernel-choice limits.
// The tiers are AVX512 and AVX2; the emitter's instruction choices
// follow Wide.
type Config struct {
	target.Vector
	// Kernels are the limits of the kernels' choice and shape (the same
	// on every tier of a package: its one schedule is decided once).
	Kernels target.Kernels
}

// Tier is the tier of CPU target c (c.Vector.Tier must not be empty).
func Tier(c target.CPU) Config { return Config{Vector: c.Vector, Kernels: c.Kernels} }

// AVX2 is the tier of target.AVX2.
func AVX2() Config { return Tier(target.AVX2()) }

// AVX512 is the tier of target.AVX512.
func AVX512() Config { return Tier(target.AVX512()) }

// Flag is the name of the generated boolean that tells whether the
// tier's kernels may run (declared in the generated assembly stubs).
func (c Config) Flag() string { return "ocannl" + c.Tier }

// shaped returns the configuration a kernel of s uses: c itself, except
// for the wide tile (target.Vector.WideTileMinM).
func (c Config) shaped(s *Spec) Config {
	if c.WideTileMinM > 0 && s.Kind == Broadcast && s.M >= c.WideTileMinM {
		switch l := c.lanes(s); {
		case s.tb && s.N%(3*l) == 0 && s.N%(c.WideNRVec*l) != 0:
			// Three vectors of columns (N = 48, 96, 144 float32): an
			// 8x3 tile covers them without a narrower sliver (24
			// accumulators + 3 B + 1 broadcast).
			c.MR, c.NRVec = 8, 3
		case s.N >= c.WideNRVec*l:
			c.MR, c.NRVec = c.WideMR, c.WideNRVec
		}
	} else if c.Wide && s.Kind == Broadcast && s.Elem == "float32" && s.N%(3*c.lanes(s)) == 0 &&
		(s.folds() || s.K <= c.KCBytes/(3*c.VecBytes)) && tileSteps(s, 8, 3, c.lanes(s)) < tileSteps(s, c.MR, c.NRVec, c.lanes(s)) {
		// Three vectors of columns (N = 48, 96, ...) and few rows (the
		// ResNet's convolution gradients, M = 8 to 64): 8x3 tiles where
		// they take fewer cycles than the 14x2 tiles with their row and
		// column remainders. One k block either way, so the sums are
		// the same in every lane (each lane runs k in order).
		c.MR, c.NRVec = 8, 3
	}
	return c
}

// tileSteps estimates the cycles of one reduction step of a broadcast
// kernel over all its mr x nv-vector tiles (and the remainder tiles):
// per tile the most of its FMAs (two a cycle), its loads (B vectors and
// broadcasts, two a cycle) and the FMA latency (4 cycles) that one
// accumulator's chain takes per step.
func tileSteps(s *Spec, mr, nv, lanes int) float64 {
	cost := func(rows, v int) float64 {
		return max(float64(rows*v)/2, float64(rows+v)/2, 4)
	}
	var t float64
	nvAll := (s.N + lanes - 1) / lanes
	for _, m := range []struct{ n, rows int }{{s.M / mr, mr}, {1, s.M % mr}} {
		if m.rows == 0 {
			continue
		}
		for _, n := range []struct{ n, v int }{{nvAll / nv, nv}, {1, nvAll % nv}} {
			if n.v > 0 {
				t += float64(m.n*n.n) * cost(m.rows, n.v)
			}
		}
	}
	return t
}

// Tiers are the CPU targets whose tiers a package emits, best first.
func Tiers() []target.CPU { return []target.CPU{target.AVX512(), target.AVX2()} }

// lanes is the number of elements in a vector.
func (c Config) lanes(s *Spec) int { return c.VecBytes / s.elemSize() }

// tile is the register tile (rows, columns in elements).
func (c Config) tile(s *Spec) (int, int) {
	if s.gathers(c) {
		rows, nv := c.gatherTile(s)
		return rows, nv * c.lanes(s)
	}
	if s.transposes(c) {
		v := s.transposed()
		return c.tile(&v)
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
	if s.Kind != Broadcast || s.folds() {
		return []int{s.K}
	}
	c = c.shaped(s)
	kc := max(1, c.KCBytes/(c.NRVec*c.VecBytes))
	nb := (s.K + kc - 1) / kc
	if s.tb {
		// Whole 16x16 blocks of the transposition: blocks of a multiple
		// of 16 (the last may be shorter, still a multiple when K is).
		per := ((s.K+nb-1)/nb + 15) / 16 * 16
		var out []int
		for k := s.K; k > 0; k -= per {
			out = append(out, min(per, k))
		}
		return out
	}
	out := make([]int, nb)
	for i := range out {
		out[i] = s.K / nb
		if i < s.K%nb {
			out[i]++
		}
	}
	return out
}

// dotKBlocks splits a dot kernel's K (without a second reduction axis)
// into blocks of at most KC elements, KC a multiple of the lanes chosen
// so that a tile's DotMR rows of A and DotNR rows of B fit in
// DotKCBytes; all blocks but the last are whole vectors. One block when
// DotKCBytes is 0 or K fits.
func (c Config) dotKBlocks(s *Spec) []int {
	lanes := c.lanes(s)
	if s.Kind != Dot || s.K2 > 1 || c.DotKCBytes == 0 {
		return []int{s.K}
	}
	kc := c.DotKCBytes / ((c.DotMR + c.DotNR) * s.elemSize()) / lanes * lanes
	if kc < lanes || s.K <= kc {
		return []int{s.K}
	}
	nb := (s.K + kc - 1) / kc
	per := ((s.K+nb-1)/nb + lanes - 1) / lanes * lanes
	var out []int
	for k := s.K; k > 0; k -= per {
		out = append(out, min(per, k))
	}
	return out
}

// packs reports whether a broadcast kernel packs its B slivers: when B's
// rows are not already the sliver's width apart and at least PackMTiles
// m tiles reuse each sliver, unless it streams B (streamsB).
func (c Config) packs(s *Spec) bool {
	return c.reusesB(s) && !c.streamsB(s)
}

// reusesB reports whether enough m tiles reuse each B sliver (at least
// PackMTiles, B larger than PackMinBBytes, rows not already the
// sliver's width apart) for a copy of it to pay.
func (c Config) reusesB(s *Spec) bool {
	c = c.shaped(s)
	return !s.folds() && s.BK != c.NRVec*c.lanes(s) && s.M >= c.PackMTiles*c.MR && s.K*s.BK*s.elemSize() > c.PackMinBBytes
}

// streamsB reports whether a broadcast kernel whose B slivers would be
// packed (reusesB) reads them in place instead, its first m tile of each
// sweep prefetching into L2 the next sliver's rows (nextSweepB): on the
// AVX-512 tier, with at least two full slivers, and B's rows not a
// multiple of 2 KiB apart (those fall into a few L1 sets and evict each
// other across the m tiles: packed). Measured on Zen 4 (L1D 32 KiB,
// TestGemmMeasure, the decoder's M=128..192 N=384 products with B rows
// 1536 bytes apart): 111-112 to 115-116 GFLOP/s with the operands in
// cache (no copy), 100-105 to 105-109 cold (the copy of a cold sliver
// stalled the kernel; the prefetch overlaps the tiles). A larger L1 (Zen
// 5's 48 KiB) holds more of the unpacked sliver, so it can only help.
func (c Config) streamsB(s *Spec) bool {
	if !c.Wide || !c.reusesB(s) {
		return false
	}
	sh := c.shaped(s)
	nr := sh.NRVec * sh.lanes(s)
	return s.N >= 2*nr && s.N%nr == 0 && s.BK*s.elemSize()%2048 != 0
}

// blocking describes the cache blocking.
func (c Config) blocking(s *Spec) string {
	if s.gathers(c) {
		return "B gathered into the frame"
	}
	if s.transposes(c) {
		v := s.transposed()
		b := c.kBlocks(&v)
		if len(b) > 1 {
			return fmt.Sprintf("B transposed into the frame, %d k blocks of at most %d", len(b), b[0])
		}
		return "B transposed into the frame, one k block"
	}
	if s.Kind == Dot {
		if b := c.dotKBlocks(s); len(b) > 1 {
			return fmt.Sprintf("%d k blocks of at most %d", len(b), b[0])
		}
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
