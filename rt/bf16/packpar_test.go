package bf16

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

// TestPackParts: Pack and PackA cut into parts (any count, run in any
// order) write the words of one Pack or PackA, in every tier, for every
// layout (more than one block of k, n and m included), the words no
// part writes left as they were.
func TestPackParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, l := range packedLayouts() {
		_, an, bn := l.s.spans()
		a, b := randSlice(rng, an), randSlice(rng, bn)
		for _, tier := range []Tier{Go, AVX2, AVX512, AVX512BF16} {
			if !Available(tier) {
				continue
			}
			for _, isA := range []bool{false, true} {
				op := &b[0]
				plan, part := (*Packed).planB, (*Packed).packBPart
				if isA {
					op = &a[0]
					plan, part = (*Packed).planA, (*Packed).packAPart
				}
				var want Packed
				if !plan(&want, tier, op, l.s) {
					continue
				}
				garbage(want.words)
				part(&want, 0, 1)
				for _, parts := range []int{2, 3, 7, 64} {
					var p Packed
					plan(&p, tier, op, l.s)
					garbage(p.words)
					for i := parts - 1; i >= 0; i-- {
						part(&p, i, parts)
					}
					if len(p.words) != len(want.words) {
						t.Fatalf("%s, tier %v, A %v, %d parts: %d words, one pass gives %d", l.name, tier, isA, parts, len(p.words), len(want.words))
					}
					for i := range p.words {
						if p.words[i] != want.words[i] {
							t.Fatalf("%s, tier %v, A %v, %d parts: word %d = %#x, one pass gives %#x", l.name, tier, isA, parts, i, p.words[i], want.words[i])
						}
					}
				}
			}
		}
	}
}

// garbage fills w with a pattern no packing writes by chance.
func garbage(w []uint32) {
	for i := range w {
		w[i] = 0xdeadbeef ^ uint32(i)
	}
}

// TestPackInOnPool: PackIn and PackAIn on a region of a 3-thread pool
// give operands with which GemmOps has the bits of Gemm, and allocate
// nothing once grown.
func TestPackInOnPool(t *testing.T) {
	pool := rt.NewPool(3)
	defer pool.Close()
	rng := rand.New(rand.NewPCG(13, 14))
	for _, l := range packedLayouts() {
		cn, an, bn := l.s.spans()
		a, b, c0 := randSlice(rng, an), randSlice(rng, bn), randSlice(rng, cn+7)
		want := append([]float32(nil), c0...)
		Gemm(&want[0], &a[0], &b[0], l.s)
		var pa, pb Packed
		r := pool.Enter()
		PackIn(r, &pb, &b[0], l.s, 8)
		PackAIn(r, &pa, &a[0], l.s, 8)
		r.Leave()
		for i, ops := range [][2]Operand{{{P: &pa}, {F: &b[0]}}, {{F: &a[0]}, {P: &pb}}, {{P: &pa}, {P: &pb}}} {
			c := append([]float32(nil), c0...)
			GemmOps(&c[0], ops[0], ops[1], l.s)
			for x := range c {
				if math.Float32bits(c[x]) != math.Float32bits(want[x]) {
					t.Fatalf("%s, forms %d: cell %d = %v, Gemm gives %v", l.name, i, x, c[x], want[x])
				}
			}
		}
		if n := testing.AllocsPerRun(3, func() {
			r := pool.Enter()
			PackIn(r, &pb, &b[0], l.s, 8)
			PackAIn(r, &pa, &a[0], l.s, 8)
			r.Leave()
		}); n != 0 {
			t.Errorf("%s: %v allocations per PackIn and PackAIn into grown Packed values", l.name, n)
		}
	}
}
