// Package desc is the back-end-neutral description of one generated
// package: its kernels (lowered loop nests, package loopir, with the
// tensors bound to parameters), its models (parameters, entry points,
// backward kernel, optimizer) and the constants it was specialized for.
// gen builds it; every back end reads it (emit/gocode renders it as Go,
// with emit/asm's kernels; emit/cuda as CUDA C with its launch plan), and
// none adds to it: state a back end collects while rendering (the
// assembly kernel set) stays in that back end.
//
// It imports no emitter. Names are Go identifiers because the generated
// package's API is Go: the CUDA launch plan names buffers after them too.
// It is a generator-only package: generated code never imports it.
package desc

import "github.com/ocannlgen/ocannlgen/loopir"

// File is one generated package: the kernels and models of its
// ocannl_gen.go (and, when the package opts in, of its ocannl_gen.cu).
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
//
// The fields from Scratch on shape the Go function (where its large
// local arrays live, which extra parameters it takes); only the Go back
// end reads them.
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
	// 128 KiB to the heap). When the kernel has such arrays, the Go
	// renderer declares the type after the function, and the function
	// takes a last parameter `scratch *Scratch` (otherwise neither
	// exists). The caller keeps the scratch between calls (in a model's
	// state, say): the function does not assume it is zero, leaves
	// garbage in it, and one scratch must not be used by two calls at
	// the same time.
	Scratch string
	// ScratchOver is the size in bytes above which a local array goes
	// to the scratch (0: all of them); see target.Loops.ScratchOver.
	ScratchOver int
	// PoolParam: when the kernel has parallel nests, the function takes
	// a parameter `pool *rt.Pool` (before the scratch) that runs them;
	// otherwise they run on rt.DefaultPool().
	PoolParam bool
	// PoolScratch keeps the function's signature when it has a scratch:
	// instead of taking it as a parameter, the function takes one from a
	// sync.Pool that the Go renderer declares after the scratch type
	// (named Scratch+"Pool") and returns it when done. Calls are then
	// free of allocations once the pool holds a scratch per concurrent
	// call (until a garbage collection empties it), and safe to run at
	// the same time. Annotated functions, whose signature is the user's,
	// use it.
	PoolScratch bool
	// ScratchOwned says the scratch starts zeroed and only this kernel
	// ever writes it (a model's unexported field; PoolScratch's pool
	// implies it): the kernel then relies on what its own code leaves
	// there, so a padded array's margins that no statement writes (they
	// stay +0) are not reset on every call.
	ScratchOwned bool
	// RowBlock marks the kernel of a model entry with run-time rows for a
	// block of rows (ModelEntry.Blocks): the Go methods call it; the CUDA
	// back end, whose GPU path runs the entries' own kernels, leaves it
	// out.
	RowBlock bool
	// BF16 (float32 kernels only): the contractions that the assembly
	// classifier recognizes (emit/asm.Classify: matrix products,
	// attention products, convolutions and their gradients) run on
	// operands rounded to bfloat16 with float32 accumulation, through
	// rt/bf16.Gemm in every tier (no Go loops branch); everything else
	// stays float32. Set by //ocannl:model bf16.
	BF16 bool
	// BF16Operands (with BF16; float32 kernels of //ocannl:einsum only):
	// the input parameters are rt.BF16 arrays, and every contraction the
	// classifier recognizes (whatever its size) calls
	// rt/bf16.GemmBF16 on them as they are; the output is float32.
	BF16Operands bool
}
