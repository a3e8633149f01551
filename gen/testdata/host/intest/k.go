// Package intest has directives in its test files, which ocannlgen does
// not read.
package intest

// Double doubles x.
//
//ocannl:expr x + x
func Double(x *[4]float32, out *[4]float32) { ocannlDouble(x, out) }
