// Package buildtag annotates a function of a file that only Linux
// builds: generated elsewhere, the file would lack the kernel.
package buildtag

// Double doubles a vector.
//
//ocannl:expr x + x
func Double(x *[8]float32, out *[8]float32) { ocannlDouble(x, out) }
