//go:build amd64 && gc && !purego

package tiers

import "github.com/ocannlgen/ocannlgen/rt/cpu"

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
