// Package osdirective has directives in files with build constraints.
package osdirective

// Double doubles x.
//
//ocannl:expr x + x
func Double(x *[4]float32, out *[4]float32) { ocannlDouble(x, out) }
