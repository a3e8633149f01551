package intest

import "testing"

// Triple is annotated in a test file.
//
//ocannl:expr x + x + x
func Triple(x *[4]float32, out *[4]float32) { ocannlTriple(x, out) }

// ocannl:expr x
func nearMiss() {}

func TestDouble(t *testing.T) {
	var x, out [4]float32
	Double(&x, &out)
	// The directive inside a string is no directive: "//ocannl:expr x".
	_ = "//ocannl:expr x"
}
