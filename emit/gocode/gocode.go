// Package gocode emits lowered loop nests (package loopir) as
// specialized, allocation-free Go source, using github.com/dave/jennifer.
// It is a generator-only package: generated code never imports it.
package gocode

import (
	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/loopir"
)

// File is one generated Go file.
type File struct {
	// Package is the Go package name of the generated file.
	Package string
	// Sources names the annotated source files the file was generated
	// from, for the header comment.
	Sources []string
	// Kernels are emitted in order.
	Kernels []*Kernel
	// Models are generated model types (rendered before the kernels,
	// which must include every kernel the models call).
	Models []*Model
	// Guards are compile-time checks that the Go constants a kernel was
	// specialized for still have the same values (stringer-style).
	Guards []Guard
	// Asm, when not nil, collects assembly kernels (package emit/asm):
	// every perfect loop nest that asm.Classify recognizes as a
	// contraction becomes a call of the set's kernel, guarded by the
	// set's flag, with the Go loops kept in the other branch. The caller
	// renders the set's files next to the Go file.
	Asm *asm.Set
	// Parallel runs the large loop nests of the kernels as parts on an
	// rt.Pool (see par.go for the rule; results do not depend on the
	// number of threads).
	Parallel bool
}

// Guard asserts at compile time that the Go constant Name still equals
// Value: the generated file stops compiling when the constant changes,
// until the code is regenerated.
type Guard struct {
	Name  string
	Value int64
}

// ParamKind is how a tensor is passed to a generated function.
type ParamKind int

const (
	// PtrArray is a pointer to a (possibly nested) Go array, e.g.
	// *[32][784]float32, whose dims are the tensor's dims in memory order.
	PtrArray ParamKind = iota
	// Slice is a flat []float32 / []float64 holding the tensor in memory
	// order; its length is checked at run time.
	Slice
)

// Param is one parameter of a generated function, bound to a tensor of
// the kernel's program.
type Param struct {
	Name      string
	Kind      ParamKind
	Tensor    int   // tensor id in Kernel.Prog.Graph
	ArrayDims []int // for PtrArray: the Go array dims, outermost first
	// Output marks the parameter the kernel writes (the others are only read).
	Output bool
}

// Kernel is one generated function: it runs every operation of Prog in
// order, reading the input parameters and writing the output parameter.
// Tensors of Prog that are not parameters are intermediates (kept in
// local fixed-size arrays) or constants (numbers, literals, dim scalars).
type Kernel struct {
	// Name is the generated function's name.
	Name string
	// Elem is "float32" or "float64".
	Elem   string
	Params []Param
	Prog   *loopir.Program
	// Doc holds extra lines for the function's doc comment (the
	// directives as written, the source position).
	Doc []string
	// Scratch, when set, names a struct type whose fields hold the
	// kernel's local arrays (intermediates, initialized leaves and
	// padded copies of parameters) of more than ScratchOver bytes, which
	// would otherwise be local variables (Go moves one of more than
	// 128 KiB to the heap). When the kernel has such arrays, Render
	// declares the type after the function, and the function takes a
	// last parameter `scratch *Scratch` (otherwise neither exists). The
	// caller keeps the scratch between calls (in a model's state, say):
	// the function does not assume it is zero, leaves garbage in it, and
	// one scratch must not be used by two calls at the same time.
	Scratch string
	// ScratchOver is the size in bytes above which a local array goes
	// to the scratch (0: all of them); see DefaultScratchOver.
	ScratchOver int
	// PoolParam: when the kernel has parallel nests, the function takes
	// a parameter `pool *rt.Pool` (before the scratch) that runs them;
	// otherwise they run on rt.DefaultPool().
	PoolParam bool
	// PoolScratch keeps the function's signature when it has a scratch:
	// instead of taking it as a parameter, the function takes one from a
	// sync.Pool that Render declares after the scratch type (named
	// Scratch+"Pool") and returns it when done. Calls are then free of
	// allocations once the pool holds a scratch per concurrent call
	// (until a garbage collection empties it), and safe to run at the
	// same time. Annotated functions, whose signature is the user's, use
	// it.
	PoolScratch bool
	// ScratchOwned says the scratch starts zeroed and only this kernel
	// ever writes it (a model's unexported field; PoolScratch's pool
	// implies it): the kernel then relies on what its own code leaves
	// there, so a padded array's margins that no statement writes (they
	// stay +0) are not reset on every call.
	ScratchOwned bool
}

// DefaultScratchOver is the ScratchOver of model kernels: local arrays of
// more than 64 KiB go to the scratch, well below Go's 128 KiB limit for
// a stack variable. Smaller ones stay on the stack, addressed from the
// stack pointer: with every local in the scratch, the two-moons model's
// Backward kernel (25 locals of at most 2 KiB) runs 7% more
// instructions, for no measurable gain in time.
const DefaultScratchOver = 64 << 10
