package gocode

import "github.com/ocannlgen/ocannlgen/loopir"

// inlineScalarTemps is loopir.InlineScalarTemps keeping the kernel's
// parameters: the program the emitter works on, and the stores the
// inlining made (their nests are new forms, emitted for AVX2 only).
func inlineScalarTemps(p *loopir.Program, params []Param) (*loopir.Program, map[*loopir.Store]bool) {
	keep := map[int]bool{}
	for _, pr := range params {
		keep[pr.Tensor] = true
	}
	return loopir.InlineScalarTemps(p, keep)
}
