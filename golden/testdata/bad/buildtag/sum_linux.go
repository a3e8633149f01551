package buildtag

// Sum sums a vector.
//
//ocannl:einsum "i => 0"
func Sum(x *[8]float32, out *[1]float32) { ocannlSum(x, out) }
