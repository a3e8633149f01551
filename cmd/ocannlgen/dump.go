package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ocannlgen/ocannlgen/model"
	"github.com/ocannlgen/ocannlgen/pipeline"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// dumpStages are the stages `infer --dump` knows: a plain program's
// (parse, shape inference, projections, lowering) and the backward pass
// of a model's loss.
func dumpStages() []string {
	return append(pipeline.Stages(pipeline.Options{}), pipeline.StageBackward)
}

// dumpList prints the stage names, one per line.
func dumpList(stdout io.Writer) int {
	for _, s := range dumpStages() {
		fmt.Fprintln(stdout, s)
	}
	return 0
}

// unknownStage reports a --dump name that is not a stage.
func unknownStage(name string, stages []string, stderr io.Writer) int {
	fmt.Fprintf(stderr, "ocannlgen infer: unknown stage %q for --dump (stages: %s; --dump=list prints them)\n",
		name, strings.Join(stages, ", "))
	return 2
}

// dumper is an Observe function printing the state after the stage
// named stage.
func dumper(stage string, stdout io.Writer) func(string, func(io.Writer)) {
	return func(s string, dump func(io.Writer)) {
		if s == stage {
			dump(stdout)
		}
	}
}

// dumpProgram runs a plain program through the pipeline up to the stage
// f.dump and prints the state after it.
func dumpProgram(src string, f cliFlags, stdout, stderr io.Writer) int {
	o := pipeline.Options{Until: f.dump, Observe: dumper(f.dump, stdout)}
	if !slices.Contains(pipeline.Stages(o), f.dump) {
		if slices.Contains(dumpStages(), f.dump) {
			fmt.Fprintf(stderr, "ocannlgen infer: --dump=%s: the stage runs for a model's loss entries only\n", f.dump)
			return 2
		}
		return unknownStage(f.dump, dumpStages(), stderr)
	}
	if _, err := pipeline.Compile(src, o); err != nil {
		return reportError(err, f.file, false, stdout, stderr)
	}
	return 0
}

// dumpModel prints, for every entry of a model, the state after the
// stage f.dump: one of the stages after shape inference (a model's shapes
// are inferred by the model compiler, with shared parameter shapes).
func dumpModel(prog *program.Program, f cliFlags, stdout, stderr io.Writer) int {
	stages := pipeline.GraphStages(pipeline.Options{Backward: &pipeline.Backward{}})
	if !slices.Contains(stages, f.dump) {
		if slices.Contains(dumpStages(), f.dump) {
			fmt.Fprintf(stderr, "ocannlgen infer: --dump=%s: a model's shapes are inferred by the model compiler; its entries' stages from projections on can be dumped (%s)\n",
				f.dump, strings.Join(stages, ", "))
			return 2
		}
		return unknownStage(f.dump, dumpStages(), stderr)
	}
	inf, err := model.InferProgram(prog)
	if err != nil {
		return reportModelError(err, f, stdout, stderr)
	}
	for i, e := range inf.Entries {
		g := inf.Graphs[i]
		o := pipeline.Options{Until: f.dump}
		if e.Loss {
			o.Backward = &pipeline.Backward{Loss: model.Tensor(g, e.Result), ParamsOnly: true}
		}
		if !slices.Contains(pipeline.GraphStages(o), f.dump) {
			continue // the backward stage of a plain entry
		}
		fmt.Fprintf(stdout, "# %s of %s\n", f.dump, e.Name)
		o.Observe = dumper(f.dump, stdout)
		if _, err := pipeline.CompileGraph(g, o); err != nil {
			return reportModelError(&model.EntryError{Entry: e.Name, Err: err}, f, stdout, stderr)
		}
	}
	return 0
}
