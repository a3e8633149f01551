package kernels

// SetAsm switches the generated code between its assembly kernels (when
// the CPU and OCANNLGEN_CPU allow them) and its Go loops, so that one
// benchmark run can interleave the two. It returns whether the assembly
// now runs. Not safe to call while a kernel runs.
func SetAsm(on bool) bool {
	ocannlAVX2 = on && asmAvailable
	return ocannlAVX2
}

// asmAvailable is what the generated dispatch chose at start-up.
var asmAvailable = ocannlAVX2
