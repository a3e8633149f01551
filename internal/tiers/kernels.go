// Package tiers holds one small kernel of each kernel family the
// generator emits (contractions of every assembly form, pointwise maps,
// comparisons and where, the max-pool and its gradient's form, fills,
// sums, maxima and minima along and across rows, transcendental maps), so
// that its test can run each in every assembly tier and in the Go loops,
// in one process, on special values (overflow, underflow, NaN, ±0, ±Inf) and
// check docs/language.md's statement of where the tiers may differ
// ("Where the tiers may differ").
package tiers

//go:generate go run github.com/ocannlgen/ocannlgen/cmd/ocannlgen

// Contractions.

// MatMul is a broadcast kernel in several k blocks (K=300).
//
//ocannl:einsum "i,j; j,k => i,k"
func MatMul(a *[16][300]float32, b *[300][32]float32, out *[16][32]float32) { ocannlMatMul(a, b, out) }

// MatMulF64 is a float64 broadcast kernel.
//
//ocannl:einsum "i,j; j,k => i,k"
func MatMulF64(a *[16][40]float64, b *[40][24]float64, out *[16][24]float64) {
	ocannlMatMulF64(a, b, out)
}

// Dot is a dot kernel (the reduction axis contiguous in both operands:
// attention scores, dX = g W^T).
//
//ocannl:einsum "i,k; j,k => i,j"
func Dot(a *[20][64]float32, b *[12][64]float32, out *[20][12]float32) { ocannlDot(a, b, out) }

// DotF64 is Dot in float64.
//
//ocannl:einsum "i,k; j,k => i,j"
func DotF64(a *[20][64]float64, b *[12][64]float64, out *[20][12]float64) { ocannlDotF64(a, b, out) }

// Conv is a valid 3x3 convolution (a gathered broadcast kernel in the
// AVX2 tier).
//
//ocannl:einsum "n | oh<+kh, ow<+kw, ic; kh, kw, ic -> oc => n | oh, ow, oc"
func Conv(img *[2][10][10][3]float32, kernel *[8][3][3][3]float32, out *[2][8][8][8]float32) {
	ocannlConv(img, kernel, out)
}

// ConvPadded is a padded ("same") convolution: a copy of img into a
// padded buffer (a map), the reset of its margins (a fill), then the
// contraction.
//
//ocannl:einsum "n | oh=+kh, ow=+kw, ic; kh, kw, ic -> oc => n | oh, ow, oc"
func ConvPadded(img *[2][16][16][3]float32, kernel *[8][3][3][3]float32, out *[2][16][16][8]float32) {
	ocannlConvPadded(img, kernel, out)
}

// ConvDilated is a dilated convolution: the kernel rows stay a Go loop
// around the calls, each adding its partial sums into out.
//
//ocannl:einsum "n | oh<+2*kh, ow<+2*kw, ic; kh, kw, ic -> oc => n | oh, ow, oc"
func ConvDilated(img *[2][12][12][3]float32, kernel *[8][3][3][3]float32, out *[2][8][8][8]float32) {
	ocannlConvDilated(img, kernel, out)
}

// ConvKernelGrad is a convolution's kernel gradient (an m-vector kernel).
//
//ocannl:einsum "n | oh<+kh, ow<+kw, ic; n | oh, ow, oc => kh, kw, ic -> oc"
func ConvKernelGrad(img *[32][12][12][1]float32, g *[32][10][10][8]float32, out *[8][3][3][1]float32) {
	ocannlConvKernelGrad(img, g, out)
}

// Pointwise maps.

// Arith uses every arithmetic primitive of the maps and relu.
//
//ocannl:expr relu (x *. y - x /. y) + (x - y) *. 2
func Arith(x *[32][64]float32, y *[32][64]float32, out *[32][64]float32) { ocannlArith(x, y, out) }

// ArithF64 is Arith in float64.
//
//ocannl:expr relu (x *. y - x /. y) + (x - y) *. 2
func ArithF64(x *[32][64]float64, y *[32][64]float64, out *[32][64]float64) {
	ocannlArithF64(x, y, out)
}

// Compare uses the comparisons and where.
//
//ocannl:expr where (x < y) (x = y) ((x <> y) + y)
func Compare(x *[32][64]float32, y *[32][64]float32, out *[32][64]float32) { ocannlCompare(x, y, out) }

// Gate is the max-pool gradient's form: g where y equals x, else 0,
// added into out.
//
//ocannl:do out =+ where (y = x) g 0
func Gate(x *[32][64]float32, y *[32][64]float32, g *[32][64]float32, out *[32][64]float32) {
	ocannlGate(x, y, g, out)
}

// MaxPool is a 2x2 max-pool (a -Inf fill and a max accumulation map).
//
//ocannl:expr x @^+ "n | 2*oh<+wh, 2*ow<+ww, c; wh, ww => n | oh, ow, c" ["wh"; "ww"] (0.0 + 0.0)
//ocannl:dims wh=2 ww=2
//ocannl:shape x 2 | 16,16,8
func MaxPool(x *[2][16][16][8]float32, out *[2][8][8][8]float32) { ocannlMaxPool(x, out) }

// MinInto takes the elementwise minimum of out and x (a min
// accumulation map).
//
//ocannl:do out =@- id x
func MinInto(x *[32][64]float32, out *[32][64]float32) { ocannlMinInto(x, out) }

// Reductions.

// SumRows sums along rows.
//
//ocannl:einsum "i,j => i"
func SumRows(x *[64][100]float32, out *[64]float32) { ocannlSumRows(x, out) }

// SumCols sums across rows (a bias gradient).
//
//ocannl:einsum "i,j => j"
func SumCols(x *[200][16]float32, out *[16]float32) { ocannlSumCols(x, out) }

// MaxRows takes the maximum along rows.
//
//ocannl:einmax "i,j => i"
func MaxRows(x *[64][100]float32, out *[64]float32) { ocannlMaxRows(x, out) }

// MaxRowsF64 is MaxRows in float64 with short rows (a masked tail).
//
//ocannl:einmax "i,j => i"
func MaxRowsF64(x *[48][10]float64, out *[48]float64) { ocannlMaxRowsF64(x, out) }

// MaxCols takes the maximum across rows.
//
//ocannl:einmax "i,j => j"
func MaxCols(x *[100][64]float32, out *[64]float32) { ocannlMaxCols(x, out) }

// MinRows takes the minimum along rows.
//
//ocannl:do out =:@- id x ~logic:"i,j => i"
func MinRows(x *[64][100]float32, out *[64]float32) { ocannlMinRows(x, out) }

// Transcendental maps: one kernel per primitive with an error bound,
// and one of the primitives the kernels compute exactly.

// Exp is exp.
//
//ocannl:expr exp x
func Exp(x *[16][64]float32, out *[16][64]float32) { ocannlExp(x, out) }

// ExpF64 is exp in float64.
//
//ocannl:expr exp x
func ExpF64(x *[16][64]float64, out *[16][64]float64) { ocannlExpF64(x, out) }

// Exp2 is exp2.
//
//ocannl:expr exp2 x
func Exp2(x *[16][64]float32, out *[16][64]float32) { ocannlExp2(x, out) }

// Exp2F64 is exp2 in float64.
//
//ocannl:expr exp2 x
func Exp2F64(x *[16][64]float64, out *[16][64]float64) { ocannlExp2F64(x, out) }

// Log is log.
//
//ocannl:expr log x
func Log(x *[16][64]float32, out *[16][64]float32) { ocannlLog(x, out) }

// LogF64 is log in float64.
//
//ocannl:expr log x
func LogF64(x *[16][64]float64, out *[16][64]float64) { ocannlLogF64(x, out) }

// Log2 is log2.
//
//ocannl:expr log2 x
func Log2(x *[16][64]float32, out *[16][64]float32) { ocannlLog2(x, out) }

// Log2F64 is log2 in float64.
//
//ocannl:expr log2 x
func Log2F64(x *[16][64]float64, out *[16][64]float64) { ocannlLog2F64(x, out) }

// Tanh is tanh.
//
//ocannl:expr tanh x
func Tanh(x *[16][64]float32, out *[16][64]float32) { ocannlTanh(x, out) }

// TanhF64 is tanh in float64.
//
//ocannl:expr tanh x
func TanhF64(x *[16][64]float64, out *[16][64]float64) { ocannlTanhF64(x, out) }

// Exact chains the primitives that the kernels compute as the Go loops
// do: sqrt, recip, recip_sqrt, neg, not, sat01 and fma.
//
//ocannl:expr sqrt x - recip y + recip_sqrt x - neg (sat01 y) + not x + fma x y x
func Exact(x *[16][64]float32, y *[16][64]float32, out *[16][64]float32) { ocannlExact(x, y, out) }

// ExactWide chains the exactly computed primitives that the AVX-512 tier
// evaluates itself (the others run its AVX2 kernel): sqrt, recip, neg,
// not and sat01.
//
//ocannl:expr sqrt x - recip y - neg (sat01 y) + not x
func ExactWide(x *[16][64]float32, y *[16][64]float32, out *[16][64]float32) {
	ocannlExactWide(x, y, out)
}

// ExactWideF64 is ExactWide in float64.
//
//ocannl:expr sqrt x - recip y - neg (sat01 y) + not x
func ExactWideF64(x *[16][64]float64, y *[16][64]float64, out *[16][64]float64) {
	ocannlExactWideF64(x, y, out)
}

// ExactF64 is Exact in float64.
//
//ocannl:expr sqrt x - recip y + recip_sqrt x - neg (sat01 y) + not x + fma x y x
func ExactF64(x *[16][64]float64, y *[16][64]float64, out *[16][64]float64) {
	ocannlExactF64(x, y, out)
}

// Gelus chains erf, gelu and gelu_tanh, which the kernels compute as the
// Go loops do, bit for bit.
//
//ocannl:expr gelu x + gelu_tanh y + erf x
func Gelus(x *[16][64]float32, y *[16][64]float32, out *[16][64]float32) { ocannlGelus(x, y, out) }

// Gelu is the float32 gelu alone, which the AVX-512 tier evaluates
// itself (float32 operations, rt.Gelu32's bits).
//
//ocannl:expr gelu x
func Gelu(x *[16][64]float32, out *[16][64]float32) { ocannlGelu(x, out) }

// GelusF64 is Gelus in float64.
//
//ocannl:expr gelu x + gelu_tanh y + erf x
func GelusF64(x *[16][64]float64, y *[16][64]float64, out *[16][64]float64) {
	ocannlGelusF64(x, y, out)
}
