// Package bf16out writes an rt.BF16 output.
package bf16out

import "github.com/ocannlgen/ocannlgen/rt"

// Out multiplies bf16 matrices into a bf16 result.
//
//ocannl:einsum "i,j; j,k => i,k"
func Out(a *[4][8]rt.BF16, b *[8][4]rt.BF16, out *[4][4]rt.BF16) {}
