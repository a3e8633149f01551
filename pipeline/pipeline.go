// Package pipeline is the one entry point that sequences the compiler:
// parse → shape inference → projection inference → lowering (and, on
// request, backpropagation). It returns each stage's product, so the
// driver (gen, which binds the products into emit/desc's description
// that every back end renders) plugs in after it at one place, and no
// caller has to remember that projections must be derived before
// lowering.
//
// Every stage has a name (Stages): "parse", the stages of shape
// inference (inference.Stages: "elaborate", the closing stages,
// "shapes"), "projections", the lowering passes (loopir.Passes:
// "assign", "loops", "pad", "check") and "backward". Options.Until stops
// after a named stage and Options.Observe sees the state after each, which
// is how `ocannlgen infer --dump=STAGE` prints it.
package pipeline

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ocannlgen/ocannlgen/autodiff"
	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// Goal is how far the forward program goes.
type Goal int

const (
	// Lowered runs everything up to the last lowering pass (the default).
	Lowered Goal = iota
	// Shapes stops after shape inference.
	Shapes
	// Projected stops after projection inference.
	Projected
)

// Backward asks for the backward program of a scalar loss
// (autodiff.Backward, or autodiff.BackwardParams with ParamsOnly).
type Backward struct {
	// Loss is the loss tensor's id in the graph.
	Loss int
	// ParamsOnly restricts the gradients to what training needs.
	ParamsOnly bool
}

// Options select what the pipeline runs.
type Options struct {
	// Goal is how far the forward program goes (zero: Lowered).
	Goal Goal
	// Passes are the lowering passes (nil: loopir.Passes()).
	Passes []loopir.Pass
	// Backward, when not nil, also builds the backward program, after
	// the forward stages (it needs projections, not the forward
	// lowering: with Goal Projected the forward program is not lowered).
	Backward *Backward
	// Until, when not empty, is the name of the stage after which the
	// pipeline stops (Result.Stopped); it must be one of Stages.
	Until string
	// Observe, when not nil, is called after each stage with the
	// stage's name and a function printing the state: the program
	// ("parse"), the inference state (inference.InferObserved), the
	// projection records ("projections"), the loop program after each
	// lowering pass (loopir.Program.Dump), the forward and backward
	// program ("backward").
	Observe func(stage string, dump func(io.Writer))
}

// Result holds each stage's product. On an error, the products of the
// stages that succeeded are set and the others are nil.
type Result struct {
	// Program is the parsed program (nil when the pipeline started from
	// a graph).
	Program *program.Program
	// Graph is the graph with every tensor's shape, once shape
	// inference succeeded; after projection inference, every operation
	// has its record (Op.Proj) and padded tensors their margins.
	Graph *inference.Graph
	// Projected reports that projection inference succeeded.
	Projected bool
	// Loops is the lowered forward program.
	Loops *loopir.Program
	// Gradients is the backward program (Options.Backward).
	Gradients *autodiff.Gradients
	// Stopped reports that the pipeline stopped after Options.Until.
	Stopped bool
}

// BackwardError is an error of the backward stage (autodiff), so that
// callers can tell it from the forward stages' errors.
type BackwardError struct{ Err error }

// Error returns the autodiff error's message unchanged.
func (e *BackwardError) Error() string { return e.Err.Error() }

// Unwrap returns the autodiff error.
func (e *BackwardError) Unwrap() error { return e.Err }

// Stage names the pipeline adds to those of shape inference and the
// lowering passes.
const (
	StageParse       = "parse"
	StageProjections = "projections"
	StageBackward    = "backward"
)

// Stages lists the names of the stages Compile runs under o, in order.
func Stages(o Options) []string {
	out := append([]string{StageParse}, inference.Stages()...)
	if o.Goal == Shapes {
		return out
	}
	return append(out, graphStages(o)...)
}

// GraphStages lists the names of the stages CompileGraph runs under o,
// in order.
func GraphStages(o Options) []string { return graphStages(o) }

func graphStages(o Options) []string {
	out := []string{StageProjections}
	if o.Goal == Lowered {
		out = append(out, loopir.Names(o.passes())...)
	}
	if o.Backward != nil {
		out = append(out, StageBackward)
	}
	return out
}

func (o Options) passes() []loopir.Pass {
	if o.Passes == nil {
		return loopir.Passes()
	}
	return o.Passes
}

// errStop stops the stages after Options.Until.
var errStop = errors.New("pipeline: stop")

// run is one pipeline invocation's state.
type run struct {
	o   Options
	res *Result
}

// observe reports a stage to Options.Observe and stops after
// Options.Until.
func (r *run) observe(stage string, dump func(io.Writer)) error {
	if r.o.Observe != nil {
		r.o.Observe(stage, dump)
	}
	if stage == r.o.Until {
		r.res.Stopped = true
		return errStop
	}
	return nil
}

func (r *run) check(names []string) error {
	if r.o.Until == "" || slices.Contains(names, r.o.Until) {
		return nil
	}
	return fmt.Errorf("pipeline: unknown stage %q (stages: %s)", r.o.Until, strings.Join(names, ", "))
}

// finish turns the stop sentinel into a result.
func (r *run) finish(err error) (*Result, error) {
	if errors.Is(err, errStop) {
		return r.res, nil
	}
	return r.res, err
}

// Compile parses src and runs the pipeline on it. A parse error is an
// *inference.Error of kind parse, as inference.InferSource reports it.
func Compile(src string, o Options) (*Result, error) {
	r := &run{o: o, res: &Result{}}
	if err := r.check(Stages(o)); err != nil {
		return r.res, err
	}
	p, err := program.Parse(src)
	if err != nil {
		return r.res, inference.ParseError(err)
	}
	return r.finish(r.fromProgram(p))
}

// CompileProgram runs the pipeline on a parsed program (its "parse"
// stage observes the program given).
func CompileProgram(p *program.Program, o Options) (*Result, error) {
	r := &run{o: o, res: &Result{}}
	if err := r.check(Stages(o)); err != nil {
		return r.res, err
	}
	return r.finish(r.fromProgram(p))
}

// CompileGraph runs the stages after shape inference on g, whose shapes
// were inferred elsewhere (a model entry's graph, inferred with the
// model's shared parameter shapes).
func CompileGraph(g *inference.Graph, o Options) (*Result, error) {
	r := &run{o: o, res: &Result{Graph: g}}
	if err := r.check(GraphStages(o)); err != nil {
		return r.res, err
	}
	return r.finish(r.fromGraph(g))
}

func (r *run) fromProgram(p *program.Program) error {
	r.res.Program = p
	if err := r.observe(StageParse, func(w io.Writer) { io.WriteString(w, p.String()) }); err != nil {
		return err
	}
	g, err := inference.InferObserved(p, func(stage string, dump func(io.Writer)) error {
		return r.observe(stage, dump)
	})
	r.res.Graph = g
	if err != nil {
		return err
	}
	if r.o.Goal == Shapes {
		return nil
	}
	return r.fromGraph(g)
}

func (r *run) fromGraph(g *inference.Graph) error {
	if err := inference.DeriveProjections(g); err != nil {
		return err
	}
	r.res.Projected = true
	if err := r.observe(StageProjections, g.DumpProjections); err != nil {
		return err
	}
	if r.o.Goal == Lowered {
		lp, err := loopir.LowerWith(g, r.o.passes(), func(ps loopir.Pass, p *loopir.Program) error {
			return r.observe(ps.Name, p.Dump)
		})
		if err != nil {
			if errors.Is(err, errStop) {
				r.res.Loops = lp
			}
			return err
		}
		r.res.Loops = lp
	}
	if b := r.o.Backward; b != nil {
		build := autodiff.Backward
		if b.ParamsOnly {
			build = autodiff.BackwardParams
		}
		gr, err := build(g, b.Loss)
		if err != nil {
			return &BackwardError{Err: err}
		}
		r.res.Gradients = gr
		return r.observe(StageBackward, gr.Program.Dump)
	}
	return nil
}
