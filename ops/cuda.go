package ops

// The CUDA C recipes of the primitives and accumulators (emit/cuda). They
// live beside the table rather than in each entry so that a backend's
// column is one block to read and review; TestCUDARecipesComplete fails
// when a primitive or an accumulator of the table has none.
//
// A primitive's recipe is a CUDA C (C++) expression over the operands $0,
// $1, $2, each a variable or a literal of the kernel's element type $T
// (float or double), computed in $T; the math functions are the C++
// overloads NVRTC provides without headers (exp, log, sqrt, tanh, ...),
// which the emulation header maps to <cmath>. An accumulator's recipe
// combines the old cell $0 with the new value $1.

// cudaPrims maps a primitive's name to its recipe.
var cudaPrims = map[string]string{
	"id":   "$0",
	"relu": "($0 > ($T)0 ? $0 : ($T)0)", // NaN gives 0, as the Go recipe
	// NaN stays NaN, as Go's min(1, max(0, x)).
	"sat01":      "($0 != $0 ? $0 : ($0 < ($T)0 ? ($T)0 : ($0 > ($T)1 ? ($T)1 : $0)))",
	"exp":        "exp($0)",
	"log":        "log($0)",
	"exp2":       "exp2($0)",
	"log2":       "log2($0)",
	"sin":        "sin($0)",
	"cos":        "cos($0)",
	"sqrt":       "sqrt($0)",
	"recip":      "($T)1 / $0",
	"recip_sqrt": "($T)1 / sqrt($0)",
	"neg":        "-$0",
	"tanh":       "tanh($0)",
	"not":        "($0 == ($T)0 ? ($T)1 : ($T)0)",
	"add":        "$0 + $1",
	"sub":        "$0 - $1",
	"mul":        "$0 * $1",
	"div":        "$0 / $1",
	"pow":        "pow($0, $1)",
	"lt":         "($0 < $1 ? ($T)1 : ($T)0)",
	"eq":         "($0 == $1 ? ($T)1 : ($T)0)",
	"ne":         "($0 != $1 ? ($T)1 : ($T)0)",
	"where":      "($0 != ($T)0 ? $1 : $2)",
	// In double, as the interpreter computes it.
	"fma": "($T)((double)$0 * (double)$1 + (double)$2)",
}

// cudaAccums maps an accumulator's name to its recipe.
var cudaAccums = map[string]string{
	"add": "$0 + $1",
	"sub": "$0 - $1",
	"mul": "$0 * $1",
	"div": "$0 / $1",
	// NaN propagates, as math.Max and math.Min.
	"max": "(($0 != $0 || $1 != $1) ? $0 + $1 : ($0 > $1 ? $0 : $1))",
	"min": "(($0 != $0 || $1 != $1) ? $0 + $1 : ($0 < $1 ? $0 : $1))",
}

// CUDA returns the primitive's CUDA C recipe ("" when it has none, which
// TestCUDARecipesComplete rules out for the table's entries).
func (p *Prim) CUDA() string { return cudaPrims[p.Name] }

// CUDA returns the accumulator's CUDA C recipe.
func (a *Accum) CUDA() string { return cudaAccums[a.Name] }
