package kernels

// SetTier switches the generated code between its tiers: "avx512",
// "avx2" (each only when the CPU and OCANNLGEN_CPU allow it) or "go" (the
// Go loops), so that one benchmark run can interleave them. It reports
// whether the tier is available. Not safe to call while a kernel runs.
func SetTier(tier string) bool {
	ocannlAVX512 = tier == "avx512" && has512
	ocannlAVX2 = tier == "avx2" && has2
	return tier == "go" || ocannlAVX512 || ocannlAVX2
}

// has512, has2: what the generated dispatch chose at start-up.
var has512, has2 = ocannlAVX512, ocannlAVX2
