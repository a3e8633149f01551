// Package shape has a kernel whose operands' shapes do not fit its spec.
package shape

// MatMul contracts j, but a's second axis (32) is not b's first (48).
//
//ocannl:einsum "i,j; j,k => i,k"
func MatMul(a *[64][32]float32, b *[48][16]float32, out *[64][16]float32) { ocannlMatMul(a, b, out) }
