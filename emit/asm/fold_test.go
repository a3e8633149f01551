package asm

import (
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/target"
)

// TestFoldOuter: a convolution's kernel gradient (a broadcast kernel
// over the batch, the output pixels and kernel rows in Go loops around
// it) folds the pixel loops in, the contiguous output columns innermost
// and the batch outermost, leaving the kernel rows in Go; a batched
// product whose outer loop indexes C, and one whose k runs in blocks,
// do not fold.
func TestFoldOuter(t *testing.T) {
	tiers := []Config{AVX512(), AVX2()}
	kn := target.AVX512().Kernels
	p, loops, st := firstNest(t, `input img : 32 | 12, 12, 16 = range
input g : 32 | 10, 10, 16 = range
let c = img +* "n | oh<+kh, ow<+kw, ic; n | oh, ow, oc => kh, kw, ic -> oc" g`)
	n := Classify(kn, p, loops, st, "float32", false)
	if n == nil || n.Spec.Kind != Broadcast || n.Spec.K != 32 || len(n.Outer) != 3 {
		t.Fatalf("the kernel gradient classifies as %+v, want a broadcast kernel over the batch in 3 loops", n)
	}
	f := FoldOuter(n, p, tiers)
	s := f.Spec
	want := Spec{Elem: "float32", Kind: Broadcast, M: 16, N: 48, K: 10, K2: 10, K3: 32,
		CM: 144, CN: 1, AM: 1, AK: 16, AK2: 160, AK3: 1600, BK: 16, BK2: 192, BK3: 2304, BN: 1}
	if s != want {
		t.Errorf("folded spec\n%+v, want\n%+v", s, want)
	}
	if len(f.Outer) != 1 || f.Outer[0].Extent != 3 {
		t.Errorf("folded: %d loops around the call, want the kernel rows (3)", len(f.Outer))
	}
	if len(f.Axes) != len(n.Axes)+2 {
		t.Errorf("folded axes %v, want the kernel's %v and the two folded loops", f.Axes, n.Axes)
	}
	for v, idx := range f.Zero {
		for _, x := range idx {
			for _, tm := range x.Terms {
				for _, l := range n.Outer[1:] {
					if tm.Var == l.Var {
						t.Errorf("tensor %d's call index keeps folded loop variable %d", v, l.Var)
					}
				}
			}
		}
	}
	// A batched product: its outer loop indexes C.
	p, loops, st = firstNest(t, `input a : 8, 16, 32 = range
input b : 8, 32, 24 = range
let c = a +* "b,i,j; b,j,k => b,i,k" b`)
	if n := Classify(kn, p, loops, st, "float32", false); n == nil || FoldOuter(n, p, tiers) != n {
		t.Errorf("the batched product folds or does not classify: %+v", n)
	}
	// k in blocks (2000 rows of B do not fit the 32 KiB sliver).
	p, loops, st = firstNest(t, `input a : 4, 64, 2000 = range
input b : 4, 2000, 64 = range
let c = a +* "r,i,j; r,j,k => i,k" b`)
	if n := Classify(kn, p, loops, st, "float32", false); n == nil || len(n.Outer) != 1 || FoldOuter(n, p, tiers) != n {
		t.Errorf("a kernel with k blocks folds or does not classify with one loop around it: %+v", n)
	}
}
