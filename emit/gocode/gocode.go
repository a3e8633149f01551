// Package gocode emits a generated package (package desc: kernels, which
// are lowered loop nests of package loopir, and models) as specialized,
// allocation-free Go source, using github.com/dave/jennifer.
// It is a generator-only package: generated code never imports it.
package gocode

import "github.com/ocannlgen/ocannlgen/emit/asm"

// Options are the Go back end's own settings for rendering a desc.File:
// what only the Go file (and the assembly beside it) depends on.
type Options struct {
	// Asm, when not nil, collects assembly kernels (package emit/asm):
	// every perfect loop nest that asm.Classify recognizes as a
	// contraction becomes a call of the set's kernel, guarded by the
	// set's flag, with the Go loops kept in the other branch. Render
	// adds the kernels to the set as it goes; the caller renders the
	// set's files next to the Go file.
	Asm *asm.Set
	// Parallel runs the large loop nests of the kernels as parts on an
	// rt.Pool (see par.go for the rule; results do not depend on the
	// number of threads).
	Parallel bool
}
