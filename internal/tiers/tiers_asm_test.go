//go:build amd64 && gc && !purego

package tiers

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt/cpu"
)

// asmTiers are the assembly tiers this machine runs within the limit of
// OCANNLGEN_CPU, each as the values of the generated flags
// (ocannlAVX512, ocannlAVX2) that select it: the AVX-512 tier runs the
// AVX2-only kernels too, as the generated dispatch does there.
func asmTiers() []tierFlags {
	var out []tierFlags
	avx2 := cpu.Enabled(cpu.AVX2, "AVX", "AVX2", "FMA3")
	if avx2 && cpu.Enabled(cpu.AVX512, "AVX", "AVX512F", "AVX512VL") {
		out = append(out, tierFlags{"AVX-512", true, true})
	}
	if avx2 {
		out = append(out, tierFlags{"AVX2", false, true})
	}
	return out
}

// setTiers sets the generated flags and returns a function restoring
// them.
func setTiers(f tierFlags) (restore func()) {
	old512, old2 := ocannlAVX512, ocannlAVX2
	ocannlAVX512, ocannlAVX2 = f.avx512, f.avx2
	return func() { ocannlAVX512, ocannlAVX2 = old512, old2 }
}

// TestWideMapsMatchAVX2: the AVX-512 tier's own kernels of exp, exp2
// (float32), the exact primitives (sqrt, recip, neg, not, sat01) and the
// float32 gelu and its gradient map give
// the AVX2 kernels' bits, cell for cell (any NaN where the other has a
// NaN), on every scenario: the same operations on 16 lanes instead of 8.
func TestWideMapsMatchAVX2(t *testing.T) {
	tiers := asmTiers()
	if len(tiers) < 2 {
		t.Skip("needs the AVX-512 and the AVX2 tier")
	}
	wide, narrow := tiers[0], tiers[1]
	want := map[string]bool{"Exp": true, "Exp2": true, "ExactWide": true, "ExactWideF64": true, "Gelu": true, "GeluBackward": true}
	seen := 0
	for _, kn := range kernels() {
		if !want[kn.name] {
			continue
		}
		seen++
		for si, sc := range scenarios() {
			rng := rand.New(rand.NewPCG(uint64(si), 0x3a1d))
			in := newArgs(kn.fn)
			for _, a := range in {
				c := view(a)
				for j := range c.n {
					c.set(j, sc.gen(rng, c.f64))
				}
			}
			wa, na := cloneArgs(kn.fn, in, nil), cloneArgs(kn.fn, in, nil)
			run(kn.fn, wa, wide)
			run(kn.fn, na, narrow)
			for _, out := range kn.outs {
				w, n := view(wa[out.arg]), view(na[out.arg])
				bad := 0
				for j := range w.n {
					wf, nf := w.float(j), n.float(j)
					if w.bits(j) != n.bits(j) && !(math.IsNaN(wf) && math.IsNaN(nf)) {
						if bad++; bad <= 3 {
							x := view(in[0]).float(j)
							t.Errorf("%s, %s, cell %d (x = %g): %s %g (%#x), %s %g (%#x)", kn.name, sc.name, j, x, wide.name, wf, w.bits(j), narrow.name, nf, n.bits(j))
						}
					}
				}
			}
		}
	}
	if seen != len(want) {
		t.Fatalf("found %d of the %d kernels", seen, len(want))
	}
}
