package cuda

import (
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/target"
)

// access is one thread's shared-memory access: the word address of its
// first 32-bit word and its width in words (1 or 4).
type access struct{ addr, width int }

// conflicts is the bank-conflict degree of one warp instruction: a
// 32-bit access is served for the 32 threads at once, a 128-bit one a
// quarter warp (8 threads) at a time; in each phase, the most distinct
// word addresses falling into one of the 32 banks (equal addresses are
// one broadcast).
func conflicts(acc []access) int {
	worst := 1
	per := 32 / acc[0].width
	for p := 0; p < len(acc); p += per {
		banks := map[int]map[int]bool{}
		for _, a := range acc[p:min(p+per, len(acc))] {
			for w := range a.width {
				b := (a.addr + w) % 32
				if banks[b] == nil {
					banks[b] = map[int]bool{}
				}
				banks[b][a.addr+w] = true
			}
		}
		for _, s := range banks {
			worst = max(worst, len(s))
		}
	}
	return worst
}

// warpPatterns are the shared-memory accesses of warp 0 in the GEMM of
// tile tl (the formulas of stageStore and simtCompute, j = 0 and q = 0,
// k = 0: every other instance is the same pattern shifted): the staging
// stores of an operand of rows rows in each load mode, and the compute
// loop's float4 reads of A and B.
func warpPatterns(tl target.GEMMTile, pad int) map[string][]access {
	tn := tl.N / tl.RegN
	ps := map[string][]access{}
	for _, side := range []struct {
		name string
		rows int
	}{{"A", tl.M}, {"B", tl.N}} {
		R, ld := side.rows, side.rows+pad
		for t := range 32 {
			v := t // + threads*j, j = 0
			ps[side.name+" store, float4 along the reduction"] = append(ps[side.name+" store, float4 along the reduction"], access{((v%(tl.K/4))*4)*ld + v/(tl.K/4), 1})
			ps[side.name+" store, float4 along the rows"] = append(ps[side.name+" store, float4 along the rows"], access{(v/(R/4))*ld + (v%(R/4))*4, 4})
			ps[side.name+" store, scalar rows fastest"] = append(ps[side.name+" store, scalar rows fastest"], access{(v/R)*ld + v%R, 1})
			ps[side.name+" store, scalar reduction fastest"] = append(ps[side.name+" store, scalar reduction fastest"], access{(v%tl.K)*ld + v/tl.K, 1})
		}
	}
	for t := range 32 {
		tx, ty := t%tn, t/tn
		ps["compute read of A"] = append(ps["compute read of A"], access{4 * ty, 4})
		ps["compute read of B"] = append(ps["compute read of B"], access{4 * tx, 4})
	}
	return ps
}

// TestBankConflicts: with the rows of each stage padded by simtPad, the
// tuned 128x128 tile's shared-memory accesses (staging stores in every
// load mode, float4 reads of the compute loop) are free of bank
// conflicts; the 64x64 tile's are too, but for the stores of an operand
// loaded with the reduction fastest (float4 or scalar), 2-way conflicted
// (no padding that keeps rows 16-byte aligned avoids it).
func TestBankConflicts(t *testing.T) {
	g := target.GPU()
	for name, c := range warpPatterns(g.GEMM, simtPad) {
		if d := conflicts(c); d != 1 {
			t.Errorf("128x128 tile, %s: %d-way bank conflicts", name, d)
		}
	}
	for name, c := range warpPatterns(g.Small, simtPad) {
		want := 1
		if strings.HasSuffix(name, "store, float4 along the reduction") || strings.HasSuffix(name, "store, scalar reduction fastest") {
			want = 2
		}
		if d := conflicts(c); d != want {
			t.Errorf("64x64 tile, %s: %d-way bank conflicts, want %d", name, d, want)
		}
	}
	// The check can fail: without the padding, the 128x128 tile's
	// stores along the reduction conflict.
	if d := conflicts(warpPatterns(g.GEMM, 0)["A store, float4 along the reduction"]); d < 2 {
		t.Errorf("unpadded 128x128 tile: stores along the reduction %d-way, want a conflict", d)
	}
}
