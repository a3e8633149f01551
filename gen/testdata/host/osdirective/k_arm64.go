package osdirective

// OCANNL:expr x
func quadruple() {}
