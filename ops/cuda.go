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
var cudaPrims = map[PrimName]string{
	ID:   "$0",
	Relu: "($0 > ($T)0 ? $0 : ($T)0)", // NaN gives 0, as the Go recipe
	// NaN stays NaN, as Go's min(1, max(0, x)).
	Sat01:     "($0 != $0 ? $0 : ($0 < ($T)0 ? ($T)0 : ($0 > ($T)1 ? ($T)1 : $0)))",
	Exp:       "exp($0)",
	Log:       "log($0)",
	Exp2:      "exp2($0)",
	Log2:      "log2($0)",
	Sin:       "sin($0)",
	Cos:       "cos($0)",
	Sqrt:      "sqrt($0)",
	Recip:     "($T)1 / $0",
	RecipSqrt: "($T)1 / sqrt($0)",
	Neg:       "-$0",
	Tanh:      "tanh($0)",
	Erf:       "erf($0)",
	// x Φ(x) with Φ from erfc: no 1 + erf cancelling for negative x (the
	// formula of rt.Gelu32, not its bits).
	Gelu:     "($T)0.5 * $0 * erfc(-$0 * ($T)0.7071067811865476)",
	GeluGrad: "($T)0.5 * erfc(-$0 * ($T)0.7071067811865476) + $0 * (($T)0.3989422804014327 * exp(($T)-0.5 * ($0 * $0)))",
	GeluTanh: "($T)0.5 * $0 * (($T)1 + tanh(($T)0.7978845608028654 * ($0 + ($T)0.044715 * $0 * $0 * $0)))",
	Not:      "($0 == ($T)0 ? ($T)1 : ($T)0)",
	Add:      "$0 + $1",
	Sub:      "$0 - $1",
	Mul:      "$0 * $1",
	Div:      "$0 / $1",
	Pow:      "pow($0, $1)",
	Lt:       "($0 < $1 ? ($T)1 : ($T)0)",
	Eq:       "($0 == $1 ? ($T)1 : ($T)0)",
	Ne:       "($0 != $1 ? ($T)1 : ($T)0)",
	Where:    "($0 != ($T)0 ? $1 : $2)",
	// In double, as the interpreter computes it.
	FMA: "($T)((double)$0 * (double)$1 + (double)$2)",
}

// cudaAccums maps an accumulator's name to its recipe.
var cudaAccums = map[AccumName]string{
	AccAdd: "$0 + $1",
	AccSub: "$0 - $1",
	AccMul: "$0 * $1",
	AccDiv: "$0 / $1",
	// NaN propagates, as math.Max and math.Min.
	AccMax: "(($0 != $0 || $1 != $1) ? $0 + $1 : ($0 > $1 ? $0 : $1))",
	AccMin: "(($0 != $0 || $1 != $1) ? $0 + $1 : ($0 < $1 ? $0 : $1))",
}

// CUDA returns the primitive's CUDA C recipe ("" when it has none, which
// TestCUDARecipesComplete rules out for the table's entries).
func (p *Prim) CUDA() string { return cudaPrims[p.Name] }

// CUDA returns the accumulator's CUDA C recipe.
func (a *Accum) CUDA() string { return cudaAccums[a.Name] }
