package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/emit/desc"
	"github.com/ocannlgen/ocannlgen/emit/gocode"
	"github.com/ocannlgen/ocannlgen/emit/schedule"
	"github.com/ocannlgen/ocannlgen/gen"
	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/model"
	"github.com/ocannlgen/ocannlgen/ops"
	"github.com/ocannlgen/ocannlgen/pipeline"
	"github.com/ocannlgen/ocannlgen/spec"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// cliFlags are the flags shared by the subcommands.
type cliFlags struct {
	json  bool
	loops bool
	// kernels: with --loops, explain which kernel each loop nest becomes
	// (the kernel view of the schedule).
	kernels bool
	// schedule: print how the generated CPU code runs each loop nest
	// (schedule.Plan).
	schedule bool
	// bf16: describe the kernels as //ocannl:model bf16 compiles them
	// (the contractions on rt/bf16.Gemm).
	bf16 bool
	f32  bool
	dump string
	file string
	// maxMiB is run's memory budget in MiB (--max-mib N or --max-mib=N).
	maxMiB int
}

// parseFlags parses args, accepting only the named flags (without
// dashes: the boolean json, loops, f32, and dump=STAGE) and exactly one
// input file ("-" for standard input), which --dump=list does not need.
func parseFlags(args []string, allowed ...string) (cliFlags, error) {
	var f cliFlags
	ptr := map[string]*bool{"json": &f.json, "loops": &f.loops, "f32": &f.f32, "kernels": &f.kernels, "schedule": &f.schedule, "bf16": &f.bf16}
	val := map[string]*string{"dump": &f.dump}
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[a] = true
	}
	f.maxMiB = defaultMaxMiB
	for i := 0; i < len(args); i++ {
		a := args[i]
		if name, mv, eq := strings.Cut(strings.TrimLeft(a, "-"), "="); name == "max-mib" && ok[name] && strings.HasPrefix(a, "-") {
			if !eq {
				if i+1 == len(args) {
					return f, fmt.Errorf("flag %s needs a value (MiB)", a)
				}
				i++
				mv = args[i]
			}
			n, err := strconv.Atoi(mv)
			if err != nil || n < 1 {
				return f, fmt.Errorf("flag --max-mib: %q is not a positive number of MiB", mv)
			}
			f.maxMiB = n
			continue
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			if f.file != "" {
				return f, fmt.Errorf("more than one input file: %q and %q", f.file, a)
			}
			f.file = a
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !ok[name] {
			return f, fmt.Errorf("unknown flag %q", a)
		}
		if p := val[name]; p != nil {
			if !hasValue || value == "" {
				return f, fmt.Errorf("flag %q needs a value (--%s=NAME)", a, name)
			}
			*p = value
			continue
		}
		if hasValue {
			return f, fmt.Errorf("flag %q takes no value", a)
		}
		*ptr[name] = true
	}
	if f.file == "" && f.dump != "list" {
		return f, fmt.Errorf("missing input file (use - for standard input)")
	}
	return f, nil
}

func readInput(file string, stdin io.Reader) (string, error) {
	if file == "-" {
		b, err := io.ReadAll(stdin)
		return string(b), err
	}
	b, err := os.ReadFile(file)
	return string(b), err
}

// jsonDim is an int for default/broadcast bases and "N:basis" otherwise.
func jsonDims(ds []inference.Dim) []any {
	out := make([]any, len(ds))
	for i, d := range ds {
		if d.Basis == inference.BasisDefault || d.Basis == inference.BasisBcast {
			out[i] = d.Size
		} else {
			out[i] = fmt.Sprintf("%d:%s", d.Size, d.Basis)
		}
	}
	return out
}

type jsonTensor struct {
	Name    string    `json:"name"`
	Kind    string    `json:"kind"`
	Batch   []any     `json:"batch"`
	Input   []any     `json:"input"`
	Output  []any     `json:"output"`
	Padding [][2]int  `json:"padding,omitempty"`
	Values  []float64 `json:"values,omitempty"`
	// Index is an index input's bound (`BATCH | index N`).
	Index  int `json:"index,omitempty"`
	values bool
}

type jsonOp struct {
	LHS        string        `json:"lhs"`
	Op         string        `json:"op"`
	Prim       ops.PrimName  `json:"prim"`
	Accum      ops.AccumName `json:"accum"`
	RHS        []string      `json:"rhs"`
	Product    [][]int       `json:"product"`
	LHSIndex   []string      `json:"lhs_index"`
	RHSIndex   [][]string    `json:"rhs_index"`
	ZeroInit   bool          `json:"zero_init"`
	Accumulate bool          `json:"accumulate"`
}

var opKindNames = map[inference.OpKind]string{
	inference.OpPointwise: "pointwise", inference.OpCompose: "compose", inference.OpTranspose: "transpose",
	inference.OpEinsum: "einsum", inference.OpBlock: "concat", inference.OpSlice: "slice", inference.OpStack: "stack", inference.OpGather: "gather",
	inference.OpFlatten: "flatten",
}

func indexStrings(xs []inference.Index) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	return out
}

func jsonOps(g *inference.Graph) []jsonOp {
	ops := []jsonOp{}
	for _, op := range g.Ops {
		p := op.Proj
		o := jsonOp{LHS: g.Tensors[op.LHS].Name, Op: opKindNames[op.Kind], Prim: op.Prim, Accum: op.Accum,
			RHS: []string{}, Product: [][]int{}, LHSIndex: indexStrings(p.LHS), RHSIndex: [][]string{},
			ZeroInit: p.ZeroInit, Accumulate: p.Accumulate}
		for i, r := range op.RHS {
			o.RHS = append(o.RHS, g.Tensors[r].Name)
			o.RHSIndex = append(o.RHSIndex, indexStrings(p.RHS[i]))
		}
		for _, f := range p.Product {
			o.Product = append(o.Product, append([]int{}, f.Extents...))
		}
		ops = append(ops, o)
	}
	return ops
}

func tensorJSON(g *inference.Graph, n inference.NamedTensor) jsonTensor {
	t := g.Tensors[n.Tensor]
	jt := jsonTensor{
		Name: n.Name, Kind: n.Kind.String(),
		Batch: jsonDims(t.Shape.Batch), Input: jsonDims(t.Shape.Input), Output: jsonDims(t.Shape.Output),
		Index: t.IndexBound,
	}
	for _, p := range t.Padding {
		jt.Padding = append(jt.Padding, [2]int{p.Left, p.Right})
	}
	return jt
}

type jsonError struct {
	Kind    string        `json:"kind"`
	Message string        `json:"message"`
	Line    int           `json:"line"`
	Col     int           `json:"col"`
	SpecCol int           `json:"spec_col,omitempty"`
	Related []jsonRelated `json:"related,omitempty"`
}

// jsonRelated is a position an error's message cites, for an editor's
// related information.
type jsonRelated struct {
	Line    int    `json:"line"`
	Col     int    `json:"col"`
	Message string `json:"message"`
}

func jsonRelatedOf(rel []spec.Related) []jsonRelated {
	var out []jsonRelated
	for _, r := range rel {
		out = append(out, jsonRelated{Line: r.Pos.Line, Col: r.Pos.Col, Message: r.Msg})
	}
	return out
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// reportError prints err as JSON or as `file:line:col: message` and returns 1.
func reportError(err error, file string, asJSON bool, stdout, stderr io.Writer) int {
	e, ok := inference.AsError(err)
	if !ok {
		e = &inference.Error{Kind: inference.KindParse, Msg: err.Error()}
	}
	if asJSON {
		writeJSON(stdout, map[string]any{"error": jsonError{
			Kind: string(e.Kind), Message: e.Detail(), Line: e.Pos.Line, Col: e.Pos.Col, SpecCol: e.SpecCol,
			Related: jsonRelatedOf(e.Related),
		}})
		return 1
	}
	name := file
	if name == "-" {
		name = "<stdin>"
	}
	msg := e.Detail()
	if e.Pos.Line > 0 {
		fmt.Fprintf(stderr, "%s:%d:%d: %s: %s\n", name, e.Pos.Line, e.Pos.Col, e.Kind, msg)
	} else {
		fmt.Fprintf(stderr, "%s: %s: %s\n", name, e.Kind, msg)
	}
	return 1
}

func runInfer(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f, err := parseFlags(args, "json", "loops", "dump", "kernels", "schedule", "bf16")
	if err == nil && f.dump != "" && (f.json || f.loops || f.schedule) {
		err = fmt.Errorf("--dump cannot be combined with --json, --loops or --schedule")
	}
	if err == nil && f.schedule && f.json {
		err = fmt.Errorf("--schedule prints text; it cannot be combined with --json")
	}
	if err != nil {
		fmt.Fprintf(stderr, "ocannlgen infer: %v\n%s", err, usage)
		return 2
	}
	if f.dump == "list" {
		return dumpList(stdout)
	}
	src, err := readInput(f.file, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "ocannlgen infer: %v\n", err)
		return 2
	}
	prog, perr := program.Parse(src)
	if perr == nil && model.IsModel(prog) {
		if f.dump != "" {
			return dumpModel(prog, f, stdout, stderr)
		}
		return inferModel(prog, f, stdout, stderr)
	}
	if f.dump != "" {
		return dumpProgram(src, f, stdout, stderr)
	}
	// The forward program goes as far as the output needs: shapes, the
	// projections (--loops --json), the loop nests (--loops). A lowering
	// error is reported after the shapes are printed.
	goal := pipeline.Shapes
	if f.loops || f.schedule {
		goal = pipeline.Lowered
		if f.json {
			goal = pipeline.Projected
		}
	}
	if perr != nil {
		return reportError(inference.ParseError(perr), f.file, f.json, stdout, stderr)
	}
	res, err := pipeline.CompileProgram(prog, pipeline.Options{Goal: goal})
	if err != nil && !res.Projected {
		return reportError(err, f.file, f.json, stdout, stderr)
	}
	g := res.Graph
	if f.json {
		out := struct {
			Tensors []jsonTensor `json:"tensors"`
			Ops     []jsonOp     `json:"ops,omitempty"`
		}{Tensors: []jsonTensor{}}
		for _, n := range g.Named {
			out.Tensors = append(out.Tensors, tensorJSON(g, n))
		}
		if f.loops {
			out.Ops = jsonOps(g)
		}
		writeJSON(stdout, out)
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, n := range g.Named {
		t := g.Tensors[n.Tensor]
		fmt.Fprintf(tw, "%s\t%s\t%s\n", n.Name, n.Kind, t.ShapeText())
	}
	_ = tw.Flush()
	if f.loops {
		if err != nil {
			return reportError(err, f.file, false, stdout, stderr)
		}
		fmt.Fprintln(stdout)
		res.Loops.Dump(stdout)
		explainKernels(stdout, res.Loops, f, namedTensors(res.Graph))
	}
	if f.schedule {
		if err != nil {
			return reportError(err, f.file, false, stdout, stderr)
		}
		fmt.Fprintln(stdout)
		kn := gen.ProgramKernel(res.Loops, res.Graph)
		kn.BF16 = f.bf16
		return kernelSchedule(kn, stdout, stderr)
	}
	return 0
}

// scheduleOf is the schedule of prog as `go generate` emits it on
// amd64: float32, the AVX-512 and AVX2 tiers, parallel nests (model: a
// model's kernels, with their scratch; otherwise a function kernel's);
// keep are the tensors the kernel binds to its parameters (a program's
// named tensors). It is Plan's alone: without the chains the Go code
// forms (kernelSchedule). bf16: as //ocannl:model bf16 compiles it.
func scheduleOf(prog *loopir.Program, model bool, keep map[int]bool, bf16 bool) *schedule.Schedule {
	return schedule.Plan(prog, schedule.Options{Elem: "float32", Targets: asm.Tiers(), Parallel: true, Model: model, Scratch: model, Keep: keep, BF16: bf16})
}

// kernelSchedule prints the schedule of kernel kn as `go generate` emits
// it on amd64 (float32, the AVX-512 and AVX2 tiers, parallel nests),
// with the chains of parallel nests its Go code forms
// (gocode.Schedule). A difference between the schedule and the code is
// an internal error, reported on stderr after the schedule.
func kernelSchedule(kn *desc.Kernel, stdout, stderr io.Writer) int {
	s, err := gocode.Schedule(kn, gocode.Options{Asm: asm.NewSet(asm.Tiers()...), Parallel: true})
	if s == nil {
		fmt.Fprintf(stderr, "ocannlgen: %v\n", err)
		return 1
	}
	fmt.Fprint(stdout, s)
	if err != nil {
		fmt.Fprintf(stderr, "ocannlgen: internal error: %s: %v\n", kn.Name, err)
		return 1
	}
	return 0
}

// namedTensors is the set of g's named tensors.
func namedTensors(g *inference.Graph) map[int]bool {
	keep := map[int]bool{}
	for _, n := range g.Named {
		keep[n.Tensor] = true
	}
	return keep
}

// explainKernels prints, with --kernels, which kernel each loop nest of
// prog becomes in float32 generated code: the kernel view of its
// schedule (keep as for scheduleOf).
func explainKernels(w io.Writer, prog *loopir.Program, f cliFlags, keep map[int]bool) {
	if !f.kernels {
		return
	}
	if f.bf16 {
		fmt.Fprintf(w, "\n# kernels (float32, contractions on bf16 operands (rt/bf16); assembly tiers AVX512, AVX2)\n")
	} else {
		fmt.Fprintf(w, "\n# kernels (float32; assembly tiers AVX512, AVX2)\n")
	}
	fmt.Fprint(w, scheduleOf(prog, false, keep, f.bf16).Kernels())
}

// kernelParams are the tensors the generated kernel of entry k binds to
// its parameters, as gen's model compiler binds them: the inputs, the
// model's parameters and the result; a loss's forward-and-backward
// kernel adds the parameters' gradients.
func kernelParams(k *model.EntryKernel) map[int]bool {
	g, e := k.Kernel.Graph, k.Entry
	keep := map[int]bool{model.Tensor(g, e.Result): true}
	for _, in := range e.Inputs {
		keep[model.Tensor(g, in.Name)] = true
	}
	for _, id := range e.Params {
		t := model.Tensor(g, id)
		keep[t] = true
		if e.Loss {
			if gt := k.Kernel.Gradients.Of(t); gt >= 0 {
				keep[gt] = true
			}
		}
	}
	delete(keep, -1)
	return keep
}

// inferModel compiles a model as `go generate` does (model.Compile:
// expansion, inference, and each entry's checks and kernels), so that it
// rejects the same models, and prints the parameters' shapes, then each
// entry's tensors (and with --loops the loop nests of its kernel, for an
// entry with run-time rows the kernel of one row, and the loss's
// backward pass).
func inferModel(prog *program.Program, f cliFlags, stdout, stderr io.Writer) int {
	cm, err := model.Compile(prog)
	if err != nil {
		return reportModelError(err, f, stdout, stderr)
	}
	m, inf := cm.Model, cm.Inferred
	type jsonParam struct {
		ID     string `json:"id"`
		Batch  []any  `json:"batch"`
		Input  []any  `json:"input"`
		Output []any  `json:"output"`
	}
	type jsonEntry struct {
		Name    string       `json:"name"`
		Loss    bool         `json:"loss"`
		Result  string       `json:"result"`
		Tensors []jsonTensor `json:"tensors"`
	}
	var params []jsonParam
	for _, p := range m.Params {
		s, ok := inf.Shapes[p.ID]
		if !ok {
			continue
		}
		params = append(params, jsonParam{ID: p.ID, Batch: jsonDims(s.Batch), Input: jsonDims(s.Input), Output: jsonDims(s.Output)})
	}
	if f.json {
		var entries []jsonEntry
		for i, e := range m.Entries {
			je := jsonEntry{Name: e.Name, Loss: e.Loss, Result: e.Result, Tensors: []jsonTensor{}}
			for _, n := range inf.Graphs[i].Named {
				// The shapes only, as for a program without --loops: not
				// the padding margins compiling the entry derived.
				jt := tensorJSON(inf.Graphs[i], n)
				jt.Padding = nil
				je.Tensors = append(je.Tensors, jt)
			}
			entries = append(entries, je)
		}
		writeJSON(stdout, map[string]any{"params": params, "entries": entries})
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "# parameters")
	for _, p := range m.Params {
		if s, ok := inf.Shapes[p.ID]; ok {
			fmt.Fprintf(tw, "%s\tparam\t%s\n", p.ID, s.String())
		}
	}
	for i, e := range m.Entries {
		kind := "entry"
		if e.Loss {
			kind = "loss"
		}
		fmt.Fprintf(tw, "\n# %s %s (result %s)\n", kind, e.Name, e.Result)
		for _, n := range inf.Graphs[i].Named {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", n.Name, n.Kind, inf.Graphs[i].Tensors[n.Tensor].ShapeText())
		}
	}
	_ = tw.Flush()
	if f.schedule {
		elem := "float32"
		if f.bf16 {
			elem = "bf16"
		}
		kns, err := gen.ModelKernels(cm, "Model", elem)
		if err != nil {
			return reportModelError(err, f, stdout, stderr)
		}
		for _, kn := range kns {
			fmt.Fprintf(stdout, "\n# schedule of %s: %s\n\n", kn.Name, strings.Join(kn.Doc, " "))
			if code := kernelSchedule(kn, stdout, stderr); code != 0 {
				return code
			}
		}
	}
	if !f.loops {
		return 0
	}
	for _, k := range cm.Kernels {
		e := k.Entry
		if k.Rows > 0 {
			fmt.Fprintf(stdout, "\n# loops of %s (one row of <=%d)\n", e.Name, k.Rows)
		} else {
			fmt.Fprintf(stdout, "\n# loops of %s\n", e.Name)
		}
		if !e.Loss {
			k.Kernel.Loops.Dump(stdout)
			explainKernels(stdout, k.Kernel.Loops, f, kernelParams(k))
			continue
		}
		gr := k.Kernel.Gradients
		fmt.Fprint(stdout, gr.Program.DumpOps(gr.Program.Ops[:gr.Forward]))
		fmt.Fprintf(stdout, "\n# backward of %s\n", e.Name)
		gr.Dump(stdout)
		explainKernels(stdout, gr.Program, f, kernelParams(k))
	}
	return 0
}

// reportModelError prints an error of a model's expansion, inference or
// entries (model.Compile).
func reportModelError(err error, f cliFlags, stdout, stderr io.Writer) int {
	var me *model.Error
	if errors.As(err, &me) {
		if f.json {
			writeJSON(stdout, map[string]any{"error": jsonError{Kind: "model", Message: me.Message(), Line: me.Pos.Line, Col: me.Pos.Col, Related: jsonRelatedOf(me.Related)}})
			return 1
		}
		fmt.Fprintf(stderr, "%s:%d:%d: %s\n", displayName(f.file), me.Pos.Line, me.Pos.Col, me.Message())
		return 1
	}
	var ee *model.EntryError
	if errors.As(err, &ee) {
		return reportError(ee.Err, f.file, f.json, stdout, stderr)
	}
	return reportError(err, f.file, f.json, stdout, stderr)
}

func displayName(file string) string {
	if file == "-" {
		return "<stdin>"
	}
	return file
}
