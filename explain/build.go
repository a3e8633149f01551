package explain

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/emit/desc"
	"github.com/ocannlgen/ocannlgen/emit/gocode"
	"github.com/ocannlgen/ocannlgen/emit/schedule"
	"github.com/ocannlgen/ocannlgen/gen"
	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/model"
	"github.com/ocannlgen/ocannlgen/pipeline"
	"github.com/ocannlgen/ocannlgen/spec"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// stageRule says what a stage of shape inference does, for the page's
// provenance steps (docs/design.md, "Closing").
func stageRule(stage string) string {
	switch stage {
	case "elaborate":
		return "the operations' constraints, solved as each operation is added"
	case "settle":
		return "solved to a fixpoint; unused parameters closed"
	case "stage3":
		return "leaf rows fixed by a total or by the join of their caps"
	case "stage4":
		return "leaf axes with a cap take the cap; leaf rows without caps close empty"
	case "stage5":
		return "leaf axes without a cap close to 1 (broadcast)"
	case "stage6":
		return "interior rows close empty"
	case "stage3-waited", "stage4-waited", "stage5-waited":
		return "stage " + stage[5:6] + " for the leaves that waited for an interior row"
	case "stage6-rest":
		return "every row left closes empty"
	case "stage7":
		return "interior axes close downward (1, 0, or a fixed index's bound)"
	case "leftovers":
		return "what could not be settled"
	}
	return ""
}

// File describes an input of BuildFile: a program or model file.
type File struct {
	// Name is the file name the page cites; Text its content.
	Name string
	Text string
}

// Options tunes what a page holds.
type Options struct {
	// Command is the command line the page cites.
	Command string
}

// BuildFile builds the page of a `.ocl` file: a tensor program or a
// model. A file that fails to parse or infer still gives a page, with
// the failure.
func BuildFile(f File, opts Options) *Page {
	b := newBuilder(opts)
	b.page.Title = f.Name
	src := b.addSource(f.Name, 1, strings.Split(strings.TrimSuffix(f.Text, "\n"), "\n"))
	at := func(p spec.Pos) Pos { return Pos{Source: src, Line: p.Line, Col: p.Col} }
	u := Unit{ID: "u1", Name: f.Name, Kind: "program", Elem: "float32", Pos: Pos{Source: src, Line: 1, Col: 1}}
	prog, err := program.Parse(f.Text)
	if err != nil {
		u.Failure = b.failure(inference.ParseError(err), f.Name, at, "")
		b.page.Units = append(b.page.Units, u)
		return b.page
	}
	if model.IsModel(prog) {
		u.Kind = "model"
		b.model(&u, prog, f.Name, "Model", "float32", at)
	} else {
		b.program(&u, prog, f.Name, at)
	}
	b.page.Units = append(b.page.Units, u)
	return b.page
}

// BuildPackages builds the page of the models and annotated functions
// of Go packages (gen.Explainables). title names the target; dir is the
// directory file names are shown relative to.
func BuildPackages(title, dir string, srcs gen.Sources, opts Options) *Page {
	b := newBuilder(opts)
	b.page.Title = title
	for _, m := range srcs.Models {
		src := b.addSource(m.Display, m.FirstLine, m.Lines)
		at := func(p spec.Pos) Pos {
			q := m.Position(p)
			return Pos{Source: src, Line: q.Line, Col: q.Column}
		}
		u := Unit{ID: "u" + strconv.Itoa(len(b.page.Units)+1), Name: m.Name, Kind: "model", Elem: m.Elem, Pos: Pos{Source: src, Line: m.Line, Col: m.Col}}
		if m.Err != nil {
			u.Failure = &Failure{Kind: "directive", Message: m.Err.Rel(dir), At: Pos{Source: src, Line: m.Err.Pos.Line, Col: m.Err.Pos.Column}}
		} else {
			if err := b.model(&u, m.Program, m.Display, m.Name, m.Elem, at); err != nil && u.Failure != nil {
				// The message go generate prints, positioned in the Go file.
				u.Failure.Message = m.ErrorOf(err).Rel(dir)
			}
		}
		b.page.Units = append(b.page.Units, u)
	}
	for _, f := range srcs.Functions {
		src := b.addSource(f.Display, f.FirstLine, f.Lines)
		u := Unit{ID: "u" + strconv.Itoa(len(b.page.Units)+1), Name: f.Name, Kind: "function", Elem: "float32", Pos: Pos{Source: src, Line: f.Line, Col: f.Col}}
		if f.Err != nil {
			u.Failure = &Failure{Kind: "function", Message: f.Err.Rel(dir), At: Pos{Source: src, Line: f.Err.Pos.Line, Col: f.Err.Pos.Column}}
		} else {
			at := func(p spec.Pos) Pos {
				q := f.Position(p, 0)
				return Pos{Source: src, Line: q.Line, Col: q.Column}
			}
			b.function(&u, f.Kernel, at)
		}
		b.page.Units = append(b.page.Units, u)
	}
	return b.page
}

// function explains an annotated function: its kernel's one entry and
// schedule.
func (b *builder) function(u *Unit, kn *desc.Kernel, at func(spec.Pos) Pos) {
	u.Elem = kn.Elem
	if kn.BF16Operands {
		u.Elem = "rt.BF16 inputs, float32 output"
	}
	g := kn.Prog.Graph
	e := Entry{ID: u.ID + "-e1", Name: u.Name, Kind: "function"}
	b.fillEntry(&e, g, nil, at, schedules([]*desc.Kernel{kn}))
	u.Entries = append(u.Entries, e)
}

type builder struct {
	page *Page
}

func newBuilder(opts Options) *builder {
	return &builder{page: &Page{Command: opts.Command}}
}

func (b *builder) addSource(name string, first int, lines []string) string {
	id := "src" + strconv.Itoa(len(b.page.Sources)+1)
	b.page.Sources = append(b.page.Sources, Source{ID: id, Name: name, FirstLine: first, Lines: lines})
	return id
}

// program explains a tensor program: one entry, its schedule as the
// function kernel `go generate` makes of it.
func (b *builder) program(u *Unit, prog *program.Program, file string, at func(spec.Pos) Pos) {
	res, err := pipeline.CompileProgram(prog, pipeline.Options{Goal: pipeline.Lowered})
	if res == nil || res.Graph == nil {
		u.Failure = b.failure(err, file, at, "")
		return
	}
	g := res.Graph
	e := Entry{ID: u.ID + "-e1", Name: "program", Kind: "program"}
	var sched *schedule.Schedule
	if err == nil && res.Loops != nil {
		kn := gen.ProgramKernel(res.Loops, g)
		sched, _ = gocode.Schedule(kn, gocode.Options{Asm: asm.NewSet(asm.Tiers()...), Parallel: true})
	} else if err != nil {
		u.Failure = b.failure(err, file, at, "")
	}
	b.fillEntry(&e, g, nil, at, []*schedule.Schedule{sched})
	for _, n := range g.Named {
		t := g.Tensors[n.Tensor]
		if n.Kind != inference.Param {
			continue
		}
		p := Param{Name: n.Name, Shape: e.Tensors[t.ID].Shape, Pos: at(t.Pos), Init: tensorInit(t)}
		p.Cells = cells(t.Shape)
		p.Bytes = p.Cells * 4
		p.SizedBy = sizedBy(e.Name, p.Shape)
		u.Params = append(u.Params, p)
		u.MemoryBytes += p.Bytes
	}
	if len(u.Params) > 0 {
		u.Memory = []MemoryPart{{What: "parameters (float32, as a generated function takes them)", Bytes: u.MemoryBytes}}
	}
	u.Entries = append(u.Entries, e)
}

// model explains a model: its parameters, and each entry's graph and
// schedule as `go generate` renders them in element type elem. It
// returns model.Compile's error (u.Failure describes it).
func (b *builder) model(u *Unit, prog *program.Program, file, typeName, elem string, at func(spec.Pos) Pos) error {
	cm, err := model.Compile(prog)
	if err != nil {
		u.Failure = b.failure(err, file, at, "")
	}
	if cm == nil || cm.Inferred == nil {
		return err
	}
	inf := cm.Inferred
	var kns []*desc.Kernel
	if err == nil {
		kns, _ = gen.ModelKernels(cm, typeName, elem)
	}
	scheds := schedules(kns)
	size := int64(4)
	if elem == "float64" {
		size = 8
	}
	for i, me := range inf.Entries {
		g := inf.Graphs[i]
		if g == nil {
			continue
		}
		kind := "entry"
		if me.Loss {
			kind = "loss"
		}
		e := Entry{ID: u.ID + "-e" + strconv.Itoa(i+1), Name: me.Name, Kind: kind, Result: me.Result}
		var kg *inference.Graph
		if i < len(cm.Kernels) && cm.Kernels[i] != nil {
			if k := cm.Kernels[i]; k.Kernel != nil {
				kg = k.Kernel.Graph
				if k.Rows > 0 {
					e.Note = fmt.Sprintf("run-time rows (<=%d): the schedule shown is the kernel of one row", k.Rows)
				}
			}
		}
		b.fillEntry(&e, g, kg, at, scheds)
		u.Entries = append(u.Entries, e)
	}
	// Parameters: shapes shared by the entries; each axis sized by the
	// first entry (in order) whose graph holds the parameter.
	var trained int64
	for _, p := range inf.Params {
		s, ok := inf.Shapes[p.ID]
		if !ok {
			continue
		}
		mp := Param{Name: p.ID, Pos: at(p.Pos), Init: paramInit(p), State: p.State}
		mp.Shape = Shape{Text: s.String()}
		for ei, g := range inf.Graphs {
			if g == nil {
				continue
			}
			e := entryByName(u.Entries, inf.Entries[ei].Name)
			id := model.Tensor(g, p.ID)
			if e == nil || id < 0 || id >= len(e.Tensors) {
				continue
			}
			mp.Shape = e.Tensors[id].Shape
			mp.SizedBy = sizedBy(e.Name, mp.Shape)
			break
		}
		mp.Cells = cells(s)
		mp.Bytes = mp.Cells * size
		u.Params = append(u.Params, mp)
		u.MemoryBytes += mp.Bytes
		if !p.State {
			trained += mp.Bytes
		}
	}
	if len(u.Params) > 0 {
		u.Memory = append(u.Memory, MemoryPart{What: "parameters and state (" + elem + ")", Bytes: u.MemoryBytes})
		if o := inf.Optim; o != nil && trained > 0 {
			u.Memory = append(u.Memory, MemoryPart{What: "gradients", Bytes: trained})
			u.MemoryBytes += trained
			switch {
			case o.Kind == "adam" || o.Kind == "adamw":
				u.Memory = append(u.Memory, MemoryPart{What: o.Kind + " moments (two per parameter)", Bytes: 2 * trained})
				u.MemoryBytes += 2 * trained
			case o.Kind == "sgd" && o.Momentum != 0:
				u.Memory = append(u.Memory, MemoryPart{What: "sgd momentum buffers", Bytes: trained})
				u.MemoryBytes += trained
			}
		}
	}
	return err
}

func schedules(kns []*desc.Kernel) []*schedule.Schedule {
	out := make([]*schedule.Schedule, len(kns))
	var wg sync.WaitGroup
	for i, kn := range kns {
		wg.Go(func() {
			out[i], _ = gocode.Schedule(kn, gocode.Options{Asm: asm.NewSet(asm.Tiers()...), Parallel: true})
		})
	}
	wg.Wait()
	return out
}

func entryByName(es []Entry, name string) *Entry {
	for i := range es {
		if es[i].Name == name {
			return &es[i]
		}
	}
	return nil
}

// fillEntry fills e's tensors and operations from g. kg is the graph the
// entry's kernels were compiled from (nil: g); a schedule whose program
// was lowered from it gives the operations their nests.
func (b *builder) fillEntry(e *Entry, g *inference.Graph, kg *inference.Graph, at func(spec.Pos) Pos, scheds []*schedule.Schedule) {
	if kg == nil {
		kg = g
	}
	names := map[int]inference.NamedTensor{}
	aliases := map[int][]string{}
	for _, n := range g.Named {
		if _, ok := names[n.Tensor]; !ok {
			names[n.Tensor] = n
		} else if !slices.Contains(aliases[n.Tensor], n.Name) && n.Name != names[n.Tensor].Name {
			aliases[n.Tensor] = append(aliases[n.Tensor], n.Name)
		}
	}
	for _, t := range g.Tensors {
		n, named := names[t.ID]
		kind := t.Kind.String()
		if named {
			kind = n.Kind.String()
		}
		et := Tensor{ID: t.ID, Name: t.Name, Named: named, Kind: kind, Index: t.IndexBound, Op: t.Op, Pos: at(t.Pos)}
		if named {
			et.Name = n.Name
			et.Aliases = aliases[t.ID]
		}
		et.Shape = shapeOf(g, t, at)
		e.Tensors = append(e.Tensors, et)
	}
	for i, op := range g.Ops {
		eo := Op{ID: i, Desc: op.Desc, Kind: opKind(op.Kind), Spec: op.SpecSrc, LHS: op.LHS, RHS: append([]int(nil), op.RHS...), At: at(op.Pos)}
		if op.SpecSrc != "" && op.SpecPos.Line > 0 {
			eo.At = at(op.SpecPos)
		}
		if op.Proj != nil {
			eo.Proj = projection(g, op)
		}
		for _, r := range op.RHS {
			if r >= 0 && r < len(e.Tensors) {
				e.Tensors[r].Uses = appendUnique(e.Tensors[r].Uses, i)
			}
		}
		e.Ops = append(e.Ops, eo)
	}
	// Schedules: the first schedule lowered from this entry's kernel
	// graph is the entry point's: its nests go to the graph operation
	// each comes from. A later one is a loss's forward and backward
	// kernel (TrainStep): its backprop nests go to the operation they
	// differentiate.
	first := true
	for _, s := range scheds {
		if s == nil || s.Program == nil || s.Program.Graph != kg {
			continue
		}
		if first {
			e.ScheduleHeader = strings.TrimPrefix(strings.SplitN(s.String(), "\n", 2)[0], "# ") +
				"; each assembly kernel falls back to Go loops when its tier is off, and Go loops run in the order lowered, plain, unless a nest says otherwise"
		}
		for ni := range s.Nests {
			n := &s.Nests[ni]
			po := s.Program.Ops[n.Op]
			gop := po.Op
			if gop < 0 || gop >= len(e.Ops) || kg.Ops[gop].Desc != g.Ops[gop].Desc {
				continue
			}
			switch back := strings.HasPrefix(po.Desc, "backprop of op "); {
			case back && !first:
				e.Ops[gop].Backward = append(e.Ops[gop].Backward, nestOf(s, n))
			case !back && first:
				e.Ops[gop].Schedule = append(e.Ops[gop].Schedule, nestOf(s, n))
			}
		}
		if !first {
			continue
		}
		first = false
		for i := range e.Ops {
			if len(e.Ops[i].Schedule) > 0 || e.Ops[i].FusedInto != "" {
				continue
			}
			lhs := g.Tensors[g.Ops[i].LHS].Name
			for _, po := range s.Program.Ops {
				if po.Op >= 0 && po.Op < len(g.Ops) && strings.Contains(po.Desc, "with "+lhs+" = ") {
					e.Ops[i].FusedInto = g.Tensors[g.Ops[po.Op].LHS].Name
					break
				}
			}
		}
	}
}

func appendUnique(xs []int, x int) []int {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

// nestOf describes one nest of s.
func nestOf(s *schedule.Schedule, n *schedule.Nest) Nest {
	text := s.NestText(n)
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	out := Nest{Family: n.Kernel.Family.String()}
	for _, l := range lines {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "nest "):
			out.Loops = strings.TrimPrefix(l, "nest ")
		case strings.HasPrefix(l, "kernel: "):
			// Every assembly kernel has its Go loops for a machine
			// without the tier: the entry's schedule header says so once.
			out.Kernel = strings.TrimSuffix(strings.TrimPrefix(l, "kernel: "), "; Go loops when the tier is off")
		case l == "Go loops: order as lowered, plain":
			// The default, which the schedule header states once.
		case l != "":
			out.Lines = append(out.Lines, l)
		}
	}
	if n.Data {
		out.Family = "data-dependent (gather) Go loops"
	}
	return out
}

var opKinds = map[inference.OpKind]string{
	inference.OpPointwise: "pointwise", inference.OpCompose: "compose", inference.OpTranspose: "transpose",
	inference.OpEinsum: "einsum", inference.OpBlock: "concat", inference.OpSlice: "slice", inference.OpStack: "stack", inference.OpGather: "gather",
	inference.OpFlatten: "flatten",
}

func opKind(k inference.OpKind) string {
	if s, ok := opKinds[k]; ok {
		return s
	}
	return "op"
}

// projection describes op's projections.
func projection(g *inference.Graph, op *inference.Op) *Projection {
	p := op.Proj
	out := &Projection{ZeroInit: p.ZeroInit, Accumulate: p.Accumulate}
	for i, f := range p.Product {
		var parts []string
		for _, x := range f.Extents {
			parts = append(parts, strconv.Itoa(x))
		}
		out.Product = append(out.Product, "i"+strconv.Itoa(i)+"<"+strings.Join(parts, "^"))
	}
	name := func(t int) string {
		if t >= 0 && t < len(g.Tensors) {
			return g.Tensors[t].Name
		}
		return "t" + strconv.Itoa(t)
	}
	var text func(x inference.Index) string
	text = func(x inference.Index) string {
		if x.Kind != inference.IdxData {
			return x.String()
		}
		var s []string
		for _, d := range x.DataIndex {
			s = append(s, text(d))
		}
		return name(x.Data) + "[" + strings.Join(s, ", ") + "]"
	}
	uses := map[int]int{}
	inLHS := map[int]bool{}
	index := func(t int, xs []inference.Index, lhs bool) string {
		var s []string
		seen := map[int]bool{}
		for _, x := range xs {
			s = append(s, text(x))
			for _, it := range x.Iters() {
				if lhs {
					inLHS[it] = true
				}
				if !seen[it] {
					seen[it] = true
					uses[it]++
				}
			}
			switch x.Kind {
			case inference.IdxAffine:
				out.Affine = append(out.Affine, name(t)+": "+text(x)+" (affine)")
			case inference.IdxConcat:
				out.Affine = append(out.Affine, name(t)+": "+text(x)+" (concatenation)")
			case inference.IdxData:
				out.Affine = append(out.Affine, name(t)+": "+text(x)+" (gathered: read from an index input)")
			}
		}
		return "[" + strings.Join(s, ", ") + "]"
	}
	out.LHS = index(op.LHS, p.LHS, true)
	for i, r := range p.RHS {
		t := -1
		if i < len(op.RHS) {
			t = op.RHS[i]
		}
		out.RHS = append(out.RHS, index(t, r, false))
	}
	for i := range p.Product {
		it := "i" + strconv.Itoa(i)
		if !inLHS[i] {
			out.Reduced = append(out.Reduced, it)
		}
		if uses[i] > 1 {
			out.CoIterated = append(out.CoIterated, it)
		}
	}
	return out
}

var rowKinds = [3]string{"batch", "input", "output"}

// shapeOf is t's shape with the provenance of its rows and axes.
func shapeOf(g *inference.Graph, t *inference.Tensor, at func(spec.Pos) Pos) Shape {
	s := Shape{Text: t.Shape.String()}
	prov, ok := g.Provenance(t.ID)
	dims := [3][]inference.Dim{t.Shape.Batch, t.Shape.Input, t.Shape.Output}
	for k := range 3 {
		r := Row{Kind: rowKinds[k]}
		var pr inference.RowProv
		if ok {
			pr = prov[k]
			r.Steps = steps(pr.Steps, at)
		}
		for i, d := range dims[k] {
			a := Axis{Size: d.Size}
			switch d.Basis {
			case inference.BasisBcast:
				a.Broadcast = true
			case inference.BasisDefault:
			default:
				a.Basis = d.Basis
			}
			if i < len(pr.Axes) {
				a.Label = pr.Axes[i].Label
				a.Given = pr.Axes[i].Given
				a.Steps = steps(pr.Axes[i].Steps, at)
			}
			r.Axes = append(r.Axes, a)
		}
		s.Rows[k] = r
	}
	return s
}

func steps(in []inference.Step, at func(spec.Pos) Pos) []Step {
	var out []Step
	for _, st := range in {
		p := at(st.Pos)
		if st.Pos.Line <= 0 {
			p = Pos{}
		}
		p.SpecCol = st.SpecCol
		out = append(out, Step{Stage: st.Stage, StageRule: stageRule(st.Stage), Op: st.Op, At: p, Value: st.Value, Final: st.Final})
	}
	if len(out) > MaxSteps {
		n := len(out)
		out = append(append(out[:MaxSteps-1:MaxSteps-1], Step{Elided: n - MaxSteps}), out[n-1])
	}
	return out
}

// sizedBy lists, for each axis of a parameter's shape, the step that
// fixed its size.
func sizedBy(entry string, s Shape) []AxisSource {
	var out []AxisSource
	for _, r := range s.Rows {
		for i, a := range r.Axes {
			as := AxisSource{Axis: r.Kind + " " + strconv.Itoa(i+1), Size: axisSize(a), Entry: entry}
			if len(a.Steps) == 0 {
				as.Given = true
			} else {
				as.Step = a.Steps[0]
			}
			out = append(out, as)
		}
	}
	return out
}

func axisSize(a Axis) string {
	s := strconv.Itoa(a.Size)
	if a.Basis != "" {
		s += ":" + a.Basis
	}
	return s
}

func cells(s inference.Shape) int64 {
	n := int64(1)
	for _, ds := range [][]inference.Dim{s.Batch, s.Input, s.Output} {
		for _, d := range ds {
			n *= int64(d.Size)
		}
	}
	return n
}

// tensorInit states a program parameter's initialization.
func tensorInit(t *inference.Tensor) string {
	switch t.Init.Kind {
	case inference.InitConst:
		return "constant " + strconv.FormatFloat(t.Init.Value, 'g', -1, 64)
	case inference.InitValues:
		return "the literal's values"
	case inference.InitRange:
		return "range (each cell its offset)"
	case inference.InitZero:
		return "zero"
	}
	return "uniform on [-0.25, 0.25) (OCANNL's default)"
}

// paramInit states a model parameter's initialization rule.
func paramInit(p *model.Param) string {
	var s string
	switch p.Init {
	case model.InitConst:
		s = "constant " + strconv.FormatFloat(p.Value, 'g', -1, 64)
	case model.InitLiteral:
		s = "the literal's values"
	case model.InitNormal:
		s = "normal N(0, 1)"
	case model.InitKaiming:
		s = "Kaiming normal N(0, 2/fan-in)"
	case model.InitXavier:
		s = "Xavier normal N(0, 2/(fan-in + fan-out))"
	case model.InitFanIn:
		s = "uniform on ±1/sqrt(fan-in)"
		if p.FanInOf != "" {
			s += " of " + p.FanInOf
		}
	default:
		s = "uniform on [-0.25, 0.25) (OCANNL's default)"
	}
	if p.Counter {
		s = "step counter (0)"
	}
	return s
}

// failure converts an error of parsing, inference or a model's checks.
func (b *builder) failure(err error, file string, at func(spec.Pos) Pos, entry string) *Failure {
	if err == nil {
		return nil
	}
	var me *model.Error
	if errors.As(err, &me) {
		f := &Failure{Kind: "model", At: at(me.Pos), Message: fmt.Sprintf("%s:%d:%d: %s", file, me.Pos.Line, me.Pos.Col, me.Message())}
		for _, r := range me.Related {
			f.Related = append(f.Related, Related{At: at(r.Pos), Msg: r.Msg})
		}
		return f
	}
	var ee *model.EntryError
	if errors.As(err, &ee) {
		entry = ee.Entry
		err = ee.Err
	}
	e, ok := inference.AsError(err)
	if !ok {
		return &Failure{Kind: "error", Entry: entry, Message: file + ": " + err.Error()}
	}
	f := &Failure{Kind: string(e.Kind), Entry: entry, Op: e.Op, At: at(e.Pos)}
	f.At.SpecCol = e.SpecCol
	if e.Pos.Line <= 0 {
		f.At = Pos{}
	}
	// The line `ocannlgen infer` prints.
	if e.Pos.Line > 0 {
		f.Message = fmt.Sprintf("%s:%d:%d: %s: %s", file, e.Pos.Line, e.Pos.Col, e.Kind, e.Detail())
	} else {
		f.Message = fmt.Sprintf("%s: %s: %s", file, e.Kind, e.Detail())
	}
	for _, r := range e.Related {
		f.Related = append(f.Related, Related{At: at(r.Pos), Msg: r.Msg})
	}
	if c := e.Conflict; c != nil {
		f.Constraint, f.Relation = c.Constraint, c.Relation
		for _, sd := range c.Sides {
			r := Row{Steps: steps(sd.Row.Steps, at)}
			for _, a := range sd.Row.Axes {
				ax := Axis{Label: a.Label, Given: a.Given, Steps: steps(a.Steps, at)}
				if n, err := strconv.Atoi(a.Given); err == nil {
					ax.Size = n
				} else if st, ok := a.Fixed(); ok && st.Final {
					if n, err := strconv.Atoi(strings.Fields(st.Value)[0]); err == nil {
						ax.Size = n
					}
				}
				r.Axes = append(r.Axes, ax)
			}
			f.Sides = append(f.Sides, Side{Text: sd.Text, Row: r})
		}
	}
	return f
}
