// Package badcompile type-checks but does not compile: the compiler's
// report is passed on.
package badcompile

// Copy copies x.
//
//ocannl:expr x
func Copy(x *[4]float32, out *[4]float32) {}

//go:linkname nanotime runtime.nanotime
func nanotime() int64
