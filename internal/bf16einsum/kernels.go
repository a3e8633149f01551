// Package bf16einsum holds //ocannl:einsum kernels over rt.BF16 arrays
// with float32 outputs, whose tests check them against plain loops over
// the widened operands.
package bf16einsum

//go:generate go run github.com/ocannlgen/ocannlgen/cmd/ocannlgen

import "github.com/ocannlgen/ocannlgen/rt"

// MatMul is a matrix product (NN) of bf16 matrices into float32.
//
//ocannl:einsum "i,j; j,k => i,k"
func MatMul(a *[37][300]rt.BF16, b *[300][45]rt.BF16, out *[37][45]float32) { ocannlMatMul(a, b, out) }

// MatMulTT is the product of two transposed operands (TT).
//
//ocannl:einsum "j,i; k,j => i,k"
func MatMulTT(a *[29][40]rt.BF16, b *[33][29]rt.BF16, out *[40][33]float32) {
	ocannlMatMulTT(a, b, out)
}

// BatchNT is a batched product with a transposed second operand (the
// attention scores' form), over slices.
//
//ocannl:einsum "b,q,d; b,s,d => b,q,s"
//ocannl:shape a 4,16,24
//ocannl:shape b 4,20,24
func BatchNT(a, b []rt.BF16, out []float32) { ocannlBatchNT(a, b, out) }

// Tiny is a product far below the float32 kernels' size rules: it
// still runs on rt/bf16.
//
//ocannl:einsum "i,j; j,k => i,k"
func Tiny(a *[2][3]rt.BF16, b *[3][2]rt.BF16, out *[2][2]float32) { ocannlTiny(a, b, out) }

// Mul is a pointwise product (no contraction): Go loops over the
// operands widened to float32.
//
//ocannl:einsum "i; i => i"
func Mul(a *[100]rt.BF16, b *[100]rt.BF16, out *[100]float32) { ocannlMul(a, b, out) }

// RowSum sums each row (one operand, no product): Go loops over the
// widened operand.
//
//ocannl:einsum "i,j => i"
func RowSum(a *[8][50]rt.BF16, out *[8]float32) { ocannlRowSum(a, out) }

// SumBatch sums the products over the batch too: two reduction axes
// (rt/bf16's K2), the longer (j) innermost.
//
//ocannl:einsum "b,i,j; b,j,k => i,k"
func SumBatch(a *[3][10][12]rt.BF16, b *[3][12][9]rt.BF16, out *[10][9]float32) {
	ocannlSumBatch(a, b, out)
}

// Conv is a padded one-dimensional convolution over channels (a padded
// copy of x, kept in bf16, feeds rt/bf16).
//
//ocannl:einsum "n | o=+k, c; k, c -> d => n | o, d"
//ocannl:dims k=3
func Conv(x *[4][16][8]rt.BF16, w *[5][3][8]rt.BF16, out *[4][16][5]float32) { ocannlConv(x, w, out) }

// Outer is an outer product (no reduction): Go loops over the widened
// operands.
//
//ocannl:einsum "i; j => i,j"
func Outer(a *[40]rt.BF16, b *[50]rt.BF16, out *[40][50]float32) { ocannlOuter(a, b, out) }
