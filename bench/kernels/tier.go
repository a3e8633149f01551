package kernels

// SetTier switches the generated code between its tiers: "avx512",
// "avx2" (each only when the CPU and OCANNLGEN_CPU allow it) or "go" (the
// Go loops), so that one benchmark run can interleave them. It reports
// whether the tier is available. Not safe to call while a kernel runs.
func SetTier(tier string) bool {
	ocannlAVX512 = tier == "avx512" && has512
	// As rt/cpu does: a lower tier's kernels stay on under a higher one
	// (the AVX2-only kernel kinds run on AVX-512 machines too).
	ocannlAVX2 = (tier == "avx2" || tier == "avx512") && has2
	switch tier {
	case "avx512":
		return ocannlAVX512
	case "avx2":
		return ocannlAVX2
	}
	return tier == "go"
}

// has512, has2: what the generated dispatch chose at start-up.
var has512, has2 = ocannlAVX512, ocannlAVX2
