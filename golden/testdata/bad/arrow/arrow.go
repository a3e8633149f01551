// Package arrow writes '->' where an einsum spec needs '=>'.
package arrow

// MatMul's spec uses the slot arrow before its result.
//
//ocannl:einsum "i,j; j,k -> i,k"
func MatMul(a *[4][3]float32, b *[3][2]float32, out *[4][2]float32) { ocannlMatMul(a, b, out) }
