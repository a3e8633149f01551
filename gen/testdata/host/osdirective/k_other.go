//go:build !linux

package osdirective

// Triple triples x, elsewhere.
//
//ocannl:expr x *. 3
func Triple(x *[4]float32, out *[4]float32) { ocannlTriple(x, out) }
