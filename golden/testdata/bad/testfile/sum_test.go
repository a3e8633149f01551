package testfile

import "testing"

// Sum sums a vector.
//
//ocannl:einsum "i => 0"
func Sum(x *[8]float32, out *[1]float32) { ocannlSum(x, out) }

func TestSum(t *testing.T) {
	var x [8]float32
	var out [1]float32
	Sum(&x, &out)
}
