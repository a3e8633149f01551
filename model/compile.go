package model

import (
	"errors"
	"fmt"

	"github.com/ocannlgen/ocannlgen/autodiff"
	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/pipeline"
	"github.com/ocannlgen/ocannlgen/spec"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// Compiled is a model program compiled by Compile.
type Compiled struct {
	// Inferred is the expanded model with every entry's shapes.
	*Inferred
	// Kernels[i] is the compilation of Entries[i].
	Kernels []*EntryKernel
}

// EntryKernel is one entry point of a model, checked and compiled.
type EntryKernel struct {
	// Entry is the entry point and Graph its graph as declared
	// (Inferred.Graphs[i]): the shapes of the generated method's arrays.
	Entry *Entry
	Graph *inference.Graph
	// Kernel holds the products of the pipeline's stages for the entry's
	// kernel: Kernel.Graph is Graph itself or, for an entry with run-time
	// rows, the entry inferred with one row (InferOneRow); Kernel.Loops
	// is its lowered program and, for a loss, Kernel.Gradients the
	// forward and backward program (autodiff.BackwardParams). It is nil
	// when the entry failed before its kernel was compiled.
	Kernel *pipeline.Result
	// Rows is the bound N of the entry's run-time rows (<=N), 0 when it
	// has none; RowsMean reports that such a loss divides by the number
	// of rows (a mean).
	Rows     int
	RowsMean bool
	// Blocks are, for an entry with run-time rows, its kernels for blocks
	// of more than one row (RowBlocks(Rows): Rows, Rows/2, ...), largest
	// first, each compiled like Kernel from the entry inferred with that
	// many rows (InferRows): the generated method covers its n rows with
	// the largest blocks that fit, then Kernel row by row. A block whose
	// inference or compilation fails is left out (the rows it would have
	// covered go to the smaller blocks).
	Blocks []RowBlock
	// Err is the entry's error: an *Error at the position of the model
	// text that breaks a model rule (its result, its run-time rows, a
	// loss that depends on no parameter), or an *EntryError holding a
	// stage's error (projections, lowering).
	Err error
}

// InferProgram expands a model program with the standard library
// (StdSource) and infers every entry's shapes: Expand, then Infer, whose
// errors it returns unchanged.
func InferProgram(prog *program.Program) (*Inferred, error) {
	std, err := program.Parse(StdSource())
	if err != nil {
		return nil, fmt.Errorf("internal error: the standard library does not parse: %w", err)
	}
	m, err := Expand(prog, std)
	if err != nil {
		return nil, err
	}
	return m.Infer()
}

// Compile is the pipeline of a model program, the one `go generate`
// (package gen) and `ocannlgen infer` both run, so that they accept and
// reject the same models: expansion and shape inference (InferProgram),
// then each entry checked by the model rules (its result; for run-time
// rows, on its projected graph: docs/language.md, "Run-time batch
// sizes") and compiled by pipeline.CompileGraph from its graph or, for
// run-time rows, from the entry inferred with one row and with each of
// its blocks of rows (EntryKernel.Blocks), with the backward program of
// the loss.
//
// When expansion or inference fails, the result is nil. Otherwise every
// entry is compiled, each with its own EntryKernel.Err, and the error
// returned is the first entry's (nil when none failed): a caller that
// reports errors of its own between the entries' (gen: each entry's Go
// method name) reads each Err in turn.
func Compile(prog *program.Program) (*Compiled, error) {
	inf, err := InferProgram(prog)
	if err != nil {
		return nil, err
	}
	c := &Compiled{Inferred: inf}
	var first error
	for i := range inf.Entries {
		k := inf.compileEntry(i)
		c.Kernels = append(c.Kernels, k)
		if first == nil {
			first = k.Err
		}
	}
	return c, first
}

// compileEntry checks and compiles entry i.
func (r *Inferred) compileEntry(i int) *EntryKernel {
	e, g := r.Entries[i], r.Graphs[i]
	k := &EntryKernel{Entry: e, Graph: g}
	if k.Err = e.checkResult(g); k.Err != nil {
		return k
	}
	kg, err := k.kernelGraph(r, i)
	if err != nil {
		k.Err = err
		return k
	}
	opts := pipeline.Options{}
	if e.Loss {
		opts.Backward = &pipeline.Backward{Loss: Tensor(kg, e.Result), ParamsOnly: true}
	}
	k.Kernel, err = pipeline.CompileGraph(kg, opts)
	if err == nil {
		k.Blocks = r.compileBlocks(i, k.Rows, opts)
	}
	var be *pipeline.BackwardError
	switch {
	case errors.As(err, &be) && errors.Is(be, autodiff.ErrNoParameter):
		k.Err = &Error{Pos: e.Pos, Msg: noParamMsg(e.Name), Err: err}
	case be != nil:
		k.Err = &Error{Pos: e.Pos, Msg: fmt.Sprintf("loss %s: %v", e.Name, be.Err), Err: err}
	case err != nil:
		k.Err = &EntryError{Entry: e.Name, Err: err}
	}
	return k
}

// RowBlock is the kernel of an entry with run-time rows for a block of
// Rows contiguous rows.
type RowBlock struct {
	Rows   int
	Kernel *pipeline.Result
}

// MaxRowBlocks bounds the number of block kernels of an entry with
// run-time rows (each is a copy of the entry's kernels, specialized to
// its row count): with <=N, the blocks are N, N/2, ..., N/2^(MaxRowBlocks-1),
// so that at most N/2^MaxRowBlocks - 1 rows of a call, and fewer than 2
// rows for N <= 2^MaxRowBlocks, run through the one-row kernel.
const MaxRowBlocks = 6

// RowBlocks returns the block sizes of an entry with run-time rows
// bounded by n (<=n): n, n/2, n/4, ... (rounded down), largest first,
// each at least 2 (one row is the entry's one-row kernel), at most
// MaxRowBlocks of them; nil for n < 2.
func RowBlocks(n int) []int {
	var out []int
	for b := n; b >= 2 && len(out) < MaxRowBlocks; b /= 2 {
		out = append(out, b)
	}
	return out
}

// compileBlocks compiles entry i's kernels for the row blocks of its
// run-time rows bound rows (RowBlocks), with opts (the backward of a
// loss), leaving out a block that fails.
func (r *Inferred) compileBlocks(i, rows int, opts pipeline.Options) []RowBlock {
	var out []RowBlock
	e := r.Entries[i]
	for _, b := range RowBlocks(rows) {
		g, err := r.InferRows(i, b)
		if err != nil {
			continue
		}
		if e.Loss {
			opts.Backward = &pipeline.Backward{Loss: Tensor(g, e.Result), ParamsOnly: true}
		}
		res, err := pipeline.CompileGraph(g, opts)
		if err != nil {
			continue
		}
		out = append(out, RowBlock{Rows: b, Kernel: res})
	}
	return out
}

// checkResult checks the entry's result on its graph g: an operation
// must compute it (an entry cannot return an input, a parameter or a
// number as such), and a loss's must be a single number.
func (e *Entry) checkResult(g *inference.Graph) error {
	id := Tensor(g, e.Result)
	if id < 0 {
		// Only a bare name reaches here undefined: an expression naming
		// it fails in inference first.
		return errAt(e.ResultPos, "entry %s returns %s, which is not defined: undefined name %s", e.Name, e.Result, spec.Quote(e.Result))
	}
	res := g.Tensors[id]
	if res.Op < 0 {
		return errAt(e.ResultPos, "entry %s returns %s, which no operation computes (it is the %s %s); return a value computed from it (e.g. id %s)", e.Name, e.Result, res.Kind, res.Name, e.Result)
	}
	if e.Loss && res.Shape.Size() != 1 {
		return errAt(e.ResultPos, "the loss %s must be a single number, but its shape is %s (reduce it, e.g. with ++ \"...|... => 0\")", e.Name, res.Shape)
	}
	return nil
}

// kernelGraph returns the graph entry i of r (k.Entry) has its kernel
// compiled from: its graph or, for an entry with run-time rows, checked
// on its graph as declared (checkRowsGraph, after projection
// inference), the entry inferred with one row; it sets k.Rows and
// k.RowsMean.
func (k *EntryKernel) kernelGraph(r *Inferred, i int) (*inference.Graph, error) {
	e, g := k.Entry, k.Graph
	rows, err := e.rowsBound()
	if err != nil || rows == 0 {
		return g, err
	}
	if _, err := pipeline.CompileGraph(g, pipeline.Options{Goal: pipeline.Projected}); err != nil {
		return nil, &EntryError{Entry: e.Name, Err: err}
	}
	mean, err := e.checkRowsGraph(g)
	if err != nil {
		return nil, err
	}
	kg, err := r.InferOneRow(i)
	if err != nil {
		return nil, err
	}
	k.Rows, k.RowsMean = rows, mean
	return kg, nil
}

// noParamMsg explains why a loss that depends on no parameter is an
// error (autodiff.ErrNoParameter).
func noParamMsg(entry string) string {
	return fmt.Sprintf("the loss %s depends on no parameter (through differentiable operations), so training it would change nothing; make it depend on one, or declare it with entry instead of loss", entry)
}

// IsModel reports whether a program holds model statements (layers,
// entry points, an optimizer): Compile's input rather than a tensor
// program's.
func IsModel(p *program.Program) bool {
	for _, s := range p.Stmts {
		switch s.(type) {
		case *program.LayerStmt, *program.EntryStmt, *program.OptimStmt:
			return true
		}
	}
	return false
}
