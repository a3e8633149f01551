package main

//go:generate go run ../../cmd/ocannlgen

// The gallery's kernels. Each function is a one-line call into the code
// that ocannlgen generates from its //ocannl: directives (ocannl_gen.go).
// Arrays are in memory order batch, output, input.

// Sizes used by the slice kernels; the generated code checks at compile
// time that they still have these values.
const (
	Rows = 64
	Cols = 100
)

// MatMul multiplies a 64x48 by a 48x32 matrix.
//
//ocannl:einsum "i,j; j,k => i,k"
func MatMul(a *[64][48]float32, b *[48][32]float32, out *[64][32]float32) { ocannlMatMul(a, b, out) }

// MatMulF64 is MatMul in float64.
//
//ocannl:einsum "i,j; j,k => i,k"
func MatMulF64(a *[64][48]float64, b *[48][32]float64, out *[64][32]float64) {
	ocannlMatMulF64(a, b, out)
}

// MatMul64 is a 64x64x64 matrix product (benchmarks).
//
//ocannl:einsum "i,j; j,k => i,k"
func MatMul64(a *[64][64]float32, b *[64][64]float32, out *[64][64]float32) {
	ocannlMatMul64(a, b, out)
}

// MatMul256 is a 256x256x256 matrix product (benchmarks).
//
//ocannl:einsum "i,j; j,k => i,k"
func MatMul256(a *[256][256]float32, b *[256][256]float32, out *[256][256]float32) {
	ocannlMatMul256(a, b, out)
}

// MatMul512 is a 512x512x512 matrix product (benchmarks).
//
//ocannl:einsum "i,j; j,k => i,k"
func MatMul512(a *[512][512]float32, b *[512][512]float32, out *[512][512]float32) {
	ocannlMatMul512(a, b, out)
}

// MLPLayer is the first layer of an MNIST MLP: a batch of 32 784-pixel
// images times a 784x128 weight.
//
//ocannl:einsum "b,i; i,o => b,o"
func MLPLayer(x *[32][784]float32, w *[784][128]float32, out *[32][128]float32) {
	ocannlMLPLayer(x, w, out)
}

// BatchedMatMul multiplies 8 pairs of matrices.
//
//ocannl:einsum "b,i,j; b,j,k => b,i,k"
func BatchedMatMul(a *[8][16][32]float32, b *[8][32][24]float32, out *[8][16][24]float32) {
	ocannlBatchedMatMul(a, b, out)
}

// PermuteKinds moves axes across kinds: batch <- output, input <- batch,
// output <- input. x is 4 | 5 -> 6 (stored [4][6][5]); out is 6 | 4 -> 5.
//
//ocannl:einsum "b|i->o => o|b->i"
func PermuteKinds(x *[4][6][5]float32, out *[6][5][4]float32) { ocannlPermuteKinds(x, out) }

// Transpose transposes a 48x64 matrix.
//
//ocannl:einsum "i,j => j,i"
func Transpose(x *[48][64]float32, out *[64][48]float32) { ocannlTranspose(x, out) }

// Trace sums the diagonal.
//
//ocannl:einsum "i,i => 0"
func Trace(x *[16][16]float32, out *[1]float32) { ocannlTrace(x, out) }

// Diagonal builds a diagonal matrix; the other cells are zero.
//
//ocannl:einsum "i => i,i"
func Diagonal(x *[8]float32, out *[8][8]float32) { ocannlDiagonal(x, out) }

// Outer is the outer product of two vectors.
//
//ocannl:einsum "i; j => i,j"
func Outer(a *[32]float32, b *[24]float32, out *[32][24]float32) { ocannlOuter(a, b, out) }

// SumRows sums each row of a Rows x Cols matrix passed as flat slices.
//
//ocannl:einsum "i,j => i"
//ocannl:dims i=Rows j=Cols
func SumRows(x []float32, out []float32) { ocannlSumRows(x, out) }

// SumBatch sums a batch of 4096 rows of 16 (a bias gradient): large
// enough to run in parallel, with an output too small to split, so the
// batch is split into 8 fixed parts whose partial sums are added in part
// order.
//
//ocannl:einsum "b,c => c"
func SumBatch(x *[4096][16]float32, out *[16]float32) { ocannlSumBatch(x, out) }

// MaxRows takes the maximum of each row.
//
//ocannl:einmax "i,j => i"
func MaxRows(x *[64][100]float32, out *[64]float32) { ocannlMaxRows(x, out) }

// BiasGrad sums a gradient over the batch and spatial axes into one
// value per channel (a convolution's bias gradient): the reduced axes
// merge into 200 rows of 16 channels, accumulated column-wise.
//
//ocannl:einsum "n,h,w,c => c"
func BiasGrad(g *[8][5][5][16]float32, out *[16]float32) { ocannlBiasGrad(g, out) }

// RowMaxF64 is the float64 row maximum of a softmax over 10 classes
// (rows shorter than two vectors: a masked tail).
//
//ocannl:einmax "i,j => i"
func RowMaxF64(x *[48][10]float64, out *[48]float64) { ocannlRowMaxF64(x, out) }

// ScaleShiftRelu is a broadcasting pointwise kernel: relu(2x + b), with b
// broadcast over the rows.
//
//ocannl:expr relu (x *. 2 + b)
func ScaleShiftRelu(x *[32][64]float32, b *[64]float32, out *[32][64]float32) {
	ocannlScaleShiftRelu(x, b, out)
}

// Conv2D is a valid 3x3 convolution, NHWC: 2 images of 16x16x3 to 14x14x8.
//
//ocannl:einsum "n | oh<+kh, ow<+kw, ic; kh, kw, ic -> oc => n | oh, ow, oc"
func Conv2D(img *[2][16][16][3]float32, kernel *[8][3][3][3]float32, out *[2][14][14][8]float32) {
	ocannlConv2D(img, kernel, out)
}

// Conv2DPadded is a padded ("same") 3x3 convolution: 16x16 stays 16x16.
//
//ocannl:einsum "n | oh=+kh, ow=+kw, ic; kh, kw, ic -> oc => n | oh, ow, oc"
func Conv2DPadded(img *[2][16][16][3]float32, kernel *[8][3][3][3]float32, out *[2][16][16][8]float32) {
	ocannlConv2DPadded(img, kernel, out)
}

// Conv2DStrided is a valid 3x3 convolution with stride 2: 15x15 to 7x7.
//
//ocannl:einsum "n | 2*oh<+kh, 2*ow<+kw, ic; kh, kw, ic -> oc => n | oh, ow, oc"
func Conv2DStrided(img *[2][15][15][3]float32, kernel *[8][3][3][3]float32, out *[2][7][7][8]float32) {
	ocannlConv2DStrided(img, kernel, out)
}

// Conv2DDilated is a valid 3x3 convolution with dilation 2 (span 5):
// 16x16 to 12x12.
//
//ocannl:einsum "n | oh<+2*kh, ow<+2*kw, ic; kh, kw, ic -> oc => n | oh, ow, oc"
func Conv2DDilated(img *[2][16][16][3]float32, kernel *[8][3][3][3]float32, out *[2][12][12][8]float32) {
	ocannlConv2DDilated(img, kernel, out)
}

// MaxPool2x2 is a 2x2 max-pool with stride 2 (the window is a constant
// zero kernel that only carries its size, as in OCANNL).
//
//ocannl:expr x @^+ "n | 2*oh<+wh, 2*ow<+ww, c; wh, ww => n | oh, ow, c" ["wh"; "ww"] (0.0 + 0.0)
//ocannl:dims wh=2 ww=2
//ocannl:shape x 2 | 16,16,8
func MaxPool2x2(x *[2][16][16][8]float32, out *[2][8][8][8]float32) { ocannlMaxPool2x2(x, out) }

// Interleave alternates the elements of a and b.
//
//ocannl:do out =: id a ~logic:"i => 2*i"
//ocannl:do out =+ id b ~logic:"i => 2*i + 1"
func Interleave(a *[32]float32, b *[32]float32, out *[64]float32) { ocannlInterleave(a, b, out) }

// DeinterleaveOdd takes the odd positions.
//
//ocannl:einsum "2*i+1 => i"
func DeinterleaveOdd(x *[64]float32, out *[32]float32) { ocannlDeinterleaveOdd(x, out) }

// Concat joins two vectors end to end.
//
//ocannl:expr (a, b) ++^ "p; q => p^q"
func Concat(a *[24]float32, b *[40]float32, out *[64]float32) { ocannlConcat(a, b, out) }

// Prefix extracts the first 24 elements.
//
//ocannl:do out =: id x ~logic:"p^q => p"
func Prefix(x *[64]float32, out *[24]float32) { ocannlPrefix(x, out) }

// Suffix extracts the last 40 elements.
//
//ocannl:do out =: id x ~logic:"p^q => q"
func Suffix(x *[64]float32, out *[40]float32) { ocannlSuffix(x, out) }

// PartialUpdate adds a into the first 24 elements of out, leaving the
// rest untouched.
//
//ocannl:do out =+ id a ~logic:"p => p^q"
func PartialUpdate(a *[24]float32, out *[64]float32) { ocannlPartialUpdate(a, out) }

// BlockMatrix assembles a 2x2 block matrix [[a b] [c d]].
//
//ocannl:expr (a, b, c, d) ++^ "r, s; r, t; u, s; u, t => r^u, s^t"
func BlockMatrix(a *[16][16]float32, b *[16][8]float32, c *[8][16]float32, d *[8][8]float32, out *[24][24]float32) {
	ocannlBlockMatrix(a, b, c, d, out)
}

// Transcendentals chains the vector transcendental primitives (each
// operation its own pointwise nest; AVX2 kernels, also on AVX-512
// machines): exp, log, tanh, sqrt, recip_sqrt, exp2, log2, neg, sat01.
//
//ocannl:expr tanh x + log (exp x + 1) + sqrt (x *. x + 1) *. recip_sqrt (x *. x + 2) + exp2 (neg x) *. log2 (sat01 x + 1)
func Transcendentals(x *[32][64]float32, out *[32][64]float32) { ocannlTranscendentals(x, out) }

// TranscendentalsF64 is Transcendentals in float64.
//
//ocannl:expr tanh x + log (exp x + 1) + sqrt (x *. x + 1) *. recip_sqrt (x *. x + 2) + exp2 (neg x) *. log2 (sat01 x + 1)
func TranscendentalsF64(x *[32][64]float64, out *[32][64]float64) { ocannlTranscendentalsF64(x, out) }

// Gelu applies the GELU activations and erf (AVX2 kernels, also on
// AVX-512 machines): PyTorch's default GELU, its tanh approximation, and
// erf itself, over a range where all of erf's intervals occur.
//
//ocannl:expr gelu (x *. 3) + gelu_tanh (x *. 3) + erf (x *. 4)
func Gelu(x *[32][64]float32, out *[32][64]float32) { ocannlGelu(x, out) }

// GeluF64 is Gelu in float64.
//
//ocannl:expr gelu (x *. 3) + gelu_tanh (x *. 3) + erf (x *. 4)
func GeluF64(x *[32][64]float64, out *[32][64]float64) { ocannlGeluF64(x, out) }

// Also generate CUDA C for the GPU path (ocannl_gen.cu; docs/language.md,
// "The GPU path"). At the end of the file, so that the source positions the
// generated Go quotes stay put.
//
//ocannl:cuda
