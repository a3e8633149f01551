package osdirective

// Triple triples x, on Linux only.
//
//ocannl:expr x + x + x
func Triple(x *[4]float32, out *[4]float32) { ocannlTriple(x, out) }
