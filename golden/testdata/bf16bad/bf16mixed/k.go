// Package bf16mixed mixes an rt.BF16 operand with a float32 one.
package bf16mixed

import "github.com/ocannlgen/ocannlgen/rt"

// Mixed multiplies a bf16 matrix by a float32 one.
//
//ocannl:einsum "i,j; j,k => i,k"
func Mixed(a *[4][8]rt.BF16, b *[8][4]float32, out *[4][4]float32) {}
