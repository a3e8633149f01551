package rt

import "unsafe"

// UpperZero reports whether the n x n row-major matrix at m (rows n
// elements apart) holds zeros in every cell above its diagonal: a causal
// attention mask (query i keeps no key j > i). Generated code calls it on
// a mask input once per call, and when it holds, the contractions whose
// terms the mask zeroes (or whose cells it discards) skip the blocks
// above the diagonal (docs/design.md, "Masks known at run time").
func UpperZero(m *float32, n int) bool {
	if n <= 0 {
		return true
	}
	s := unsafe.Slice(m, n*n)
	for i := range n - 1 {
		for _, v := range s[i*n+i+1 : (i+1)*n] {
			if v != 0 {
				return false
			}
		}
	}
	return true
}
