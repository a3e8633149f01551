// Package nearmiss writes a directive with a space after the slashes,
// which Go does not treat as a directive and which would otherwise be
// silently ignored.
package nearmiss

// Sum sums a vector.
//
// ocannl:einsum "i => 0"
func Sum(x *[8]float32, out *[1]float32) {}
