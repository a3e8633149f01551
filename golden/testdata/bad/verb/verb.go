// Package verb uses a directive verb that does not exist.
package verb

// Sum misspells einsum.
//
//ocannl:ensum "i => 0"
func Sum(x *[8]float32, out *[1]float32) { ocannlSum(x, out) }
