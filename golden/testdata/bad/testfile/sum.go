// Package testfile annotates a function of its test file, which
// ocannlgen does not read: the test would fail to build with "undefined:
// ocannlSum" after a generation that said nothing.
package testfile

// Double doubles a vector.
//
//ocannl:expr x + x
func Double(x *[8]float32, out *[8]float32) { ocannlDouble(x, out) }
