package gocode

import (
	"fmt"
	"go/token"
	"slices"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/emit/desc"
)

// rtPath is the import path of the runtime package generated models use.
const rtPath = "github.com/ocannlgen/ocannlgen/rt"

// blockDims returns dims with the leftmost (rows) axis of size b.
func blockDims(dims []int, b int) []int {
	return append([]int{b}, dims[1:]...)
}

// blockOf is rows i to i+b-1 of the array *x (dims: memory dims, rows
// leftmost) as a pointer to an array of b rows: (*[b]...)(x[i:i+b]),
// which does not allocate.
func blockOf(x *jen.Statement, dims []int, elem string, b int) *jen.Statement {
	return jen.Parens(jen.Op("*").Add(arrType(blockDims(dims, b), elem))).Call(x.Index(jen.Id("i"), jen.Id("i").Op("+").Lit(b)))
}

// rowBlocks are the row counts entry e's kernels run on, largest first:
// its blocks (desc.ModelEntry.Blocks), then 1 (the one-row kernel).
func rowBlocks(e *desc.ModelEntry) []int {
	return append(slices.Clone(e.Blocks), 1)
}

// blockKernel is the name of kernel's kernel for blocks of b rows (b = 1:
// kernel itself).
func blockKernel(kernel string, b int) string {
	if b == 1 {
		return kernel
	}
	return desc.BlockKernel(kernel, b)
}

// blockScratch is the field holding the scratch area of the kernel for
// blocks of b rows of the kernel whose scratch field is field.
func blockScratch(field string, b int) string {
	if b == 1 {
		return field
	}
	return fmt.Sprintf("%s_rows%d", field, b)
}

// blockLoop is the loop running body on the blocks of b rows that fit
// in the first n rows from row i on, leaving i after them: i++ for b = 1.
func blockLoop(b int, body ...jen.Code) jen.Code {
	if b == 1 {
		return jen.For(jen.Empty(), jen.Id("i").Op("<").Id("n"), jen.Id("i").Op("++")).Block(body...)
	}
	return jen.For(jen.Empty(), jen.Id("i").Op("+").Lit(b).Op("<=").Id("n"), jen.Id("i").Op("+=").Lit(b)).Block(body...)
}

func arrType(dims []int, elem string) *jen.Statement {
	s := jen.Empty()
	if len(dims) == 0 {
		dims = []int{1}
	}
	for _, d := range dims {
		s = s.Index(jen.Lit(d))
	}
	return s.Id(elem)
}

func lit(v float64, elem string) jen.Code {
	if elem == "float32" {
		return jen.Lit(float32(v))
	}
	return jen.Lit(v)
}

// renderModel adds the model's declarations to jf. scratch maps the
// kernels that take a scratch to its type: the model state holds one for
// each, passed to every call. pool marks the kernels that take the
// model's Pool; with par, a large Adam update runs on it too
// (updateParts).
func renderModel(jf *jen.File, m *desc.Model, scratch map[string]string, pool map[string]bool, set *asm.Set, par bool) (adamKernel, adamParts bool, err error) {
	if !token.IsIdentifier(m.Name) || m.Elem != "float32" && m.Elem != "float64" {
		return false, false, fmt.Errorf("gocode: model %q: bad name or element type %q", m.Name, m.Elem)
	}
	g := &modelGen{jf: jf, m: m, scratch: scratch, pool: pool, ps: m.Name + "Params", set: set, par: par}
	if o := m.Optim; o != nil {
		switch o.Kind {
		case "sgd", "":
			g.momentum = o.Momentum > 0
		case "adam", "adamw":
			g.adam = true
		default:
			return false, false, fmt.Errorf("gocode: model %s: unknown optimizer %q", m.Name, o.Kind)
		}
	}
	g.paramsType()
	g.stateType()
	if err := g.init(); err != nil {
		return false, false, err
	}
	g.entries()
	g.backward()
	g.optimizer()
	g.persistence()
	g.checkpoint()
	g.runner()
	return g.vecAdam, g.vecAdam && g.updateParts() > 0, nil
}

// modelGen is the state of rendering one model's Go code.
type modelGen struct {
	jf       *jen.File
	m        *desc.Model
	scratch  map[string]string // kernel name -> its scratch type ("" for none)
	pool     map[string]bool   // kernel name -> it takes the model's Pool
	ps       string            // the parameter set type's name
	momentum bool              // the optimizer keeps a momentum buffer
	adam     bool              // the optimizer is Adam or AdamW (moment buffers adamM, adamV)
	set      *asm.Set          // the package's assembly kernels (nil: none)
	vecAdam  bool              // Update calls ocannlAdam (adamHelper) instead of rt.Adam
	par      bool              // the kernels' large nests run on the model's Pool (Options.Parallel)
}

// recv starts a method on the model.
func (g *modelGen) recv() *jen.Statement { return jen.Func().Params(jen.Id("m").Op("*").Id(g.m.Name)) }

// field is parameter i's array in the parameter set set (Params, Grads or
// momentum).
func (g *modelGen) field(set string, i int) *jen.Statement {
	return jen.Id("m").Dot(set).Dot(g.m.Params[i].Field)
}

// inputParams is an entry's input parameters.
func (g *modelGen) inputParams(e *desc.ModelEntry) []jen.Code {
	m := g.m
	var out []jen.Code
	for _, in := range e.Inputs {
		out = append(out, jen.Id(in.Name).Op("*").Add(arrType(in.Dims, in.Elem(m.Elem))))
	}
	return out
}

// inputArgs is an entry's input arguments.
func (g *modelGen) inputArgs(e *desc.ModelEntry) []jen.Code {
	var out []jen.Code
	for _, in := range e.Inputs {
		out = append(out, jen.Id(in.Name))
	}
	return out
}

// paramsType emits the parameter set type.
func (g *modelGen) paramsType() {
	jf, m, ps := g.jf, g.m, g.ps
	// The parameter set.
	var fields []jen.Code
	for _, p := range m.Params {
		fields = append(fields, jen.Comment(fmt.Sprintf("%s is %s: shape %s, memory order %s.", p.Field, p.ID, p.Shape, dimsText(p.Dims))))
		fields = append(fields, jen.Id(p.Field).Index(jen.Lit(max(p.Size(), 1))).Id(m.Elem))
	}
	doc(jf, fmt.Sprintf("%s holds one value per cell of every parameter of %s, flattened in memory order (batch, output, input).", ps, m.Type))
	jf.Type().Id(ps).Struct(fields...)
	jf.Line()
}

// stateType emits the model state type.
func (g *modelGen) stateType() {
	jf, m, scratch, ps, momentum := g.jf, g.m, g.scratch, g.ps, g.momentum
	// The model state.
	st := []jen.Code{
		jen.Comment("Params are the learnable parameters."),
		jen.Id("Params").Id(ps),
		jen.Comment("Grads are the gradients of the loss computed by the last Backward or TrainStep."),
		jen.Id("Grads").Id(ps),
	}
	st = append(st,
		jen.Comment("Pool, when set, runs the large loop nests of the model's kernels; nil means rt.DefaultPool()"),
		jen.Comment("(OCANNLGEN_THREADS or GOMAXPROCS threads). rt.NewPool(1) keeps the model on one thread. The"),
		jen.Comment("results are the same bits whatever the number of threads."),
		jen.Id("Pool").Op("*").Qual(rtPath, "Pool"),
	)
	if m.Optim != nil {
		st = append(st,
			jen.Comment("Step counts the optimizer steps taken (it drives the learning-rate schedule"+map[bool]string{true: " and Adam's bias correction", false: ""}[g.adam]+")."),
			jen.Id("Step").Int(),
			jen.Comment("LR, when set, gives the learning rate of each step instead of the model's schedule."),
			jen.Id("LR").Func().Params(jen.Id("step").Int()).Float64(),
		)
		if m.Optim.ClipNorm > 0 {
			st = append(st,
				jen.Comment(fmt.Sprintf("GradNorm is the global norm of the gradients at the last Update, before clipping them to %g.", m.Optim.ClipNorm)),
				jen.Id("GradNorm").Float64())
		}
		if momentum {
			st = append(st, jen.Id("momentum").Id(ps))
		}
		if g.adam {
			st = append(st, jen.Id("adamM").Id(ps), jen.Id("adamV").Id(ps))
			if g.updateParts() > 0 {
				st = append(st, jen.Id("update").Id(m.Name+"UpdateParts"))
			}
		}
		if m.Backward != "" {
			// What dist.CheckSame exchanges (SyncGrads, BroadcastParams).
			st = append(st, jen.Id("distBuf").Index(jen.Lit(2)).Float64())
		}
	}
	if m.Backward != "" || m.Loss >= 0 {
		st = append(st, jen.Id("loss").Index(jen.Lit(1)).Id(m.Elem))
	}
	st = append(st, g.noiseFields()...)
	if m.Loss >= 0 {
		for _, tr := range m.Entries[m.Loss].Tracks {
			st = append(st, jen.Id("stat"+tr.StatField).Index(jen.Lit(tr.Size)).Id(m.Elem))
		}
	}
	if m.Backward != "" && m.Entries[m.Loss].Rows > 0 {
		st = append(st, jen.Id("rowGrads").Id(ps))
	}
	for _, e := range m.Entries {
		if !e.Loss {
			st = append(st, jen.Id("out"+e.Method).Add(arrType(e.OutDims, m.Elem)))
		}
	}
	// The kernels' scratch areas (their large intermediates).
	for ei := range m.Entries {
		st = append(st, g.scratchFields(&m.Entries[ei])...)
	}
	if m.Backward != "" {
		for _, b := range rowBlocks(&m.Entries[m.Loss]) {
			if s := scratch[blockKernel(m.Backward, b)]; s != "" {
				st = append(st, jen.Id(blockScratch("scratchBackward", b)).Id(s))
			}
		}
	}
	doc(jf, fmt.Sprintf("%s is the generated state of %s: embed it in %s. Its zero value has all parameters zero; call Init.\n"+
		"It also holds the results of the entry points and the kernels' scratch space (their intermediates\n"+
		"too large for the stack), so its methods must not run at the same time on one value.", m.Name, m.Type, m.Type))
	jf.Type().Id(m.Name).Struct(st...)
	jf.Line()
}

// scratchFields are the fields holding the scratch areas of entry e's
// kernels (one per block of rows for run-time rows).
func (g *modelGen) scratchFields(e *desc.ModelEntry) []jen.Code {
	var out []jen.Code
	for _, b := range rowBlocks(e) {
		if s := g.scratch[blockKernel(e.Kernel, b)]; s != "" {
			out = append(out, jen.Id(blockScratch("scratch"+e.Method, b)).Id(s))
		}
	}
	return out
}

// init emits Init.
func (g *modelGen) init() error {
	jf, m, ps, recv, field, momentum := g.jf, g.m, g.ps, g.recv, g.field, g.momentum
	// Init.
	var body []jen.Code
	for i, p := range m.Params {
		dst := field("Params", i).Index(jen.Empty(), jen.Empty())
		inner := jen.Qual(rtPath, "InnerKey").Call(jen.Qual(rtPath, "ParamKey").Call(jen.Lit(p.ID)), jen.Id("seed"), jen.False())
		switch p.Init.Kind {
		case "uniform":
			body = append(body, jen.Qual(rtPath, "DefaultInit").Call(dst, inner))
		case "normal":
			body = append(body, jen.Qual(rtPath, "Normal").Call(dst, inner))
		case "kaiming":
			body = append(body, jen.Qual(rtPath, "Kaiming").Call(dst, inner, jen.Lit(p.Init.FanIn), jen.Qual(rtPath, "DefaultScaleSq")))
		case "fan_in":
			body = append(body, jen.Qual(rtPath, "FanInUniform").Call(dst, inner, jen.Lit(p.Init.FanIn)))
		case "xavier":
			body = append(body, jen.Qual(rtPath, "Xavier").Call(dst, inner, jen.Lit(p.Init.FanIn), jen.Lit(p.Init.FanOut), jen.Qual(rtPath, "DefaultScaleSq")))
		case "const":
			body = append(body, jen.Qual(rtPath, "Constant").Call(dst, lit(p.Init.Value, m.Elem)))
		case "literal":
			var vs []jen.Code
			for _, v := range p.Init.Values {
				vs = append(vs, lit(v, m.Elem))
			}
			body = append(body, field("Params", i).Op("=").Index(jen.Lit(max(p.Size(), 1))).Id(m.Elem).Values(vs...))
		default:
			return fmt.Errorf("gocode: model %s: parameter %s: unknown init %q", m.Name, p.ID, p.Init.Kind)
		}
	}
	body = append(body, jen.Id("m").Dot("Grads").Op("=").Id(ps).Values())
	if g.noise() != nil {
		body = append(body, jen.Id("m").Dot("Seed").Op("=").Id("seed"))
	}
	if m.Optim != nil {
		body = append(body, jen.Id("m").Dot("Step").Op("=").Lit(0))
		if m.Optim.ClipNorm > 0 {
			body = append(body, jen.Id("m").Dot("GradNorm").Op("=").Lit(0))
		}
		if momentum {
			body = append(body, jen.Id("m").Dot("momentum").Op("=").Id(ps).Values())
		}
		if g.adam {
			body = append(body, jen.Id("m").Dot("adamM").Op("=").Id(ps).Values(), jen.Id("m").Dot("adamV").Op("=").Id(ps).Values())
		}
	}
	doc(jf, "Init sets every parameter to its initial value for the given seed and clears the gradients"+map[bool]string{true: " and the optimizer state", false: ""}[m.Optim != nil]+".\n"+
		"Random values depend only on the seed, the parameter's identity and the cell (rt.ParamKey), so\n"+
		"adding or reordering parameters never changes the others. It does not allocate.")
	jf.Add(recv().Id("Init").Params(jen.Id("seed").Uint64()).Block(body...))
	jf.Line()
	return nil
}

// entries emits one method per entry point.
func (g *modelGen) entries() {
	jf, m, recv, inputParams := g.jf, g.m, g.recv, g.inputParams
	params := jen.Id("m").Dot("Params")
	for ei := range m.Entries {
		e := &m.Entries[ei]
		switch {
		case e.Loss && e.Rows > 0:
			g.rowsLoss(e)
		case e.Loss && e.Indexed():
			doc(jf, e.Doc)
			g.checkedLoss(e)
		case e.Loss:
			doc(jf, e.Doc)
			jf.Add(recv().Id(e.Method).Params(inputParams(e)...).Id(m.Elem).Block(append(g.noiseFill(e),
				jen.Id(e.Kernel).Call(g.entryArgs(e, params, "m", jen.Op("&").Id("m").Dot("loss"), g.inputArgs(e))...),
				jen.Return(jen.Id("m").Dot("loss").Index(jen.Lit(0))),
			)...))
		case e.Rows > 0:
			doc(jf, e.Doc)
			g.rowsEntry(e, recv(), params, "m")
		case e.Indexed():
			doc(jf, e.Doc)
			g.checkedEntry(e, recv(), params, "m")
		default:
			doc(jf, e.Doc)
			jf.Add(recv().Id(e.Method).Params(inputParams(e)...).Op("*").Add(arrType(e.OutDims, m.Elem)).Block(
				jen.Id(e.Kernel).Call(g.entryArgs(e, params, "m", jen.Op("&").Id("m").Dot("out"+e.Method), g.inputArgs(e))...),
				jen.Return(jen.Op("&").Id("m").Dot("out"+e.Method)),
			))
		}
		jf.Line()
	}
}

// entryArgs is the arguments of entry e's kernel call: inputs, the
// parameters it uses (fields of params), then out (the result) and self's
// scratch area for the kernel.
func (g *modelGen) entryArgs(e *desc.ModelEntry, params *jen.Statement, self string, out jen.Code, inputs []jen.Code) []jen.Code {
	return g.blockArgs(e, 1, params, self, out, inputs)
}

// blockArgs is entryArgs for the kernel of e for blocks of b rows.
func (g *modelGen) blockArgs(e *desc.ModelEntry, b int, params *jen.Statement, self string, out jen.Code, inputs []jen.Code) []jen.Code {
	args := inputs
	for _, pi := range e.Params {
		args = append(args, jen.Op("&").Add(params.Clone().Dot(g.m.Params[pi].Field)))
	}
	for _, nz := range e.Noise {
		args = append(args, jen.Op("&").Id(self).Dot("noise"+nz.Field))
	}
	for _, tr := range e.Tracks {
		args = append(args, jen.Op("&").Id(self).Dot("stat"+tr.StatField))
	}
	args = append(args, out)
	k := blockKernel(e.Kernel, b)
	if g.pool[k] {
		args = append(args, jen.Id(self).Dot("Pool"))
	}
	if g.scratch[k] != "" {
		args = append(args, jen.Op("&").Id(self).Dot(blockScratch("scratch"+e.Method, b)))
	}
	return args
}

// rowsEntry emits, on receiver recv (named self, whose parameters are
// params), the method of an entry with run-time rows: check n, then run
// the kernels of its blocks of rows (blockRuns).
func (g *modelGen) rowsEntry(e *desc.ModelEntry, recv, params *jen.Statement, self string) {
	jf, m := g.jf, g.m
	out := jen.Id(self).Dot("out" + e.Method)
	body := append([]jen.Code{g.checkRows(e.Method, e, 0, jen.Nil())}, g.indexChecks(e, jen.Nil())...)
	body = append(body, blockRuns(e, func(b int) []jen.Code {
		args := g.blockArgs(e, b, params, self, blockOf(out.Clone(), e.OutDims, m.Elem, b), g.rowArgs(e, b))
		return []jen.Code{jen.Id(blockKernel(e.Kernel, b)).Call(args...)}
	}, nil)...)
	body = append(body, jen.Return(jen.Op("&").Add(out), jen.Nil()))
	jf.Add(recv.Id(e.Method).Params(append(g.inputParams(e), jen.Id("n").Int())...).Params(jen.Op("*").Add(arrType(e.OutDims, m.Elem)), jen.Error()).Block(body...))
}

// blockRuns covers the first n rows of entry e with its kernels: the
// largest block of rows first, each block as many times as it fits, then
// the one-row kernel on the rows left, on rows i and after (i counts the
// rows done). first(b) is the code of the first call, of b rows, later(b)
// that of each later call (nil: first's). The block of all the rows runs
// only when n is the bound, so as the first call.
func blockRuns(e *desc.ModelEntry, first, later func(b int) []jen.Code) []jen.Code {
	out := []jen.Code{jen.Id("i").Op(":=").Lit(0)}
	for _, b := range rowBlocks(e) {
		if b == e.Rows && b > 1 {
			out = append(out, jen.If(jen.Id("n").Op("==").Lit(b)).Block(append(first(b), jen.Id("i").Op("=").Lit(b))...))
			continue
		}
		body := first(b)
		if later != nil {
			body = []jen.Code{jen.If(jen.Id("i").Op("==").Lit(0)).Block(body...).Else().Block(later(b)...)}
		}
		out = append(out, blockLoop(b, body...))
	}
	return out
}

// rowArgs is an entry's input arguments for its kernel of blocks of b
// rows: rows i to i+b-1 of each input with the rows axis, the others
// whole.
func (g *modelGen) rowArgs(e *desc.ModelEntry, b int) []jen.Code {
	var args []jen.Code
	for _, in := range e.Inputs {
		if in.Rows {
			args = append(args, blockOf(jen.Id(in.Name), in.Dims, in.Elem(g.m.Elem), b))
		} else {
			args = append(args, jen.Id(in.Name))
		}
	}
	return args
}

// checkRows is the check that opens a method with run-time rows: n must
// be in lo..e.Rows, else the method returns zero and the error.
func (g *modelGen) checkRows(method string, e *desc.ModelEntry, lo int, zero jen.Code) jen.Code {
	return jen.If(jen.Err().Op(":=").Qual(rtPath, "CheckRows").Call(jen.Lit(method), jen.Id("n"), jen.Lit(lo), jen.Lit(e.Rows)), jen.Err().Op("!=").Nil()).Block(
		jen.Return(zero, jen.Err()),
	)
}

// rowsLoss emits the method of a loss with run-time rows: the losses of
// the calls of its kernels on the first n rows (blockRuns) added up; for
// a mean, whose kernels give the mean over their rows, each call of b
// rows weighted b/lead (lead: the rows of the first call), the sum then
// scaled by lead/n, so that n = a block's rows gives that block's loss.
func (g *modelGen) rowsLoss(e *desc.ModelEntry) {
	jf, m := g.jf, g.m
	body := append([]jen.Code{g.checkRows(e.Method, e, 1, jen.Lit(0))}, g.indexChecks(e, jen.Lit(0))...)
	call := func(b int) jen.Code {
		return jen.Id(blockKernel(e.Kernel, b)).Call(g.blockArgs(e, b, jen.Id("m").Dot("Params"), "m", jen.Op("&").Id("m").Dot("loss"), g.rowArgs(e, b))...)
	}
	// A sum's first call does what the later ones do (sum += loss); a
	// mean's records its rows.
	var later func(b int) []jen.Code
	if e.RowsMean {
		later = func(b int) []jen.Code { return []jen.Code{call(b), g.laterLoss(e, b)} }
	}
	body = append(body, g.rowsSums(e)...)
	body = append(body, blockRuns(e, func(b int) []jen.Code {
		return append([]jen.Code{call(b)}, g.firstLoss(e, b)...)
	}, later)...)
	body = append(body, g.rowsMean(e, nil)...)
	body = append(body, jen.Id("m").Dot("loss").Index(jen.Lit(0)).Op("=").Id("sum"), jen.Return(jen.Id("sum"), jen.Nil()))
	doc(jf, e.Doc)
	jf.Add(g.recv().Id(e.Method).Params(append(g.inputParams(e), jen.Id("n").Int())...).Params(jen.Id(m.Elem), jen.Error()).Block(body...))
}

// rowsSums declares the sum of a rows loss's calls and, for a mean, the
// rows of the first call (_lead: no input name starts with '_').
func (g *modelGen) rowsSums(e *desc.ModelEntry) []jen.Code {
	out := []jen.Code{jen.Var().Id("sum").Id(g.m.Elem)}
	if e.RowsMean {
		out = append(out, jen.Id("_lead").Op(":=").Lit(0))
	}
	return out
}

// firstLoss takes the loss of the first call, of b rows, into the sum
// (still zero), and for a mean records b in _lead.
func (g *modelGen) firstLoss(e *desc.ModelEntry, b int) []jen.Code {
	l := jen.Id("m").Dot("loss").Index(jen.Lit(0))
	if e.RowsMean {
		return []jen.Code{jen.Id("sum").Op("=").Add(l), jen.Id("_lead").Op("=").Lit(b)}
	}
	return []jen.Code{jen.Id("sum").Op("+=").Add(l)}
}

// laterLoss adds the loss of a later call, of b rows, to the sum:
// weighted b/_lead for a mean.
func (g *modelGen) laterLoss(e *desc.ModelEntry, b int) jen.Code {
	l := jen.Id("m").Dot("loss").Index(jen.Lit(0))
	if e.RowsMean {
		return jen.Id("sum").Op("+=").Add(g.weight(b)).Op("*").Add(l)
	}
	return jen.Id("sum").Op("+=").Add(l)
}

// weight is b/_lead in the model's element type.
func (g *modelGen) weight(b int) *jen.Statement {
	return jen.Id(g.m.Elem).Call(jen.Lit(b)).Op("/").Id(g.m.Elem).Call(jen.Id("_lead"))
}

// rowsMean ends a mean loss's method: unless n is the rows of the first
// call, the sum (and the gradients grads) scaled by _lead/n.
func (g *modelGen) rowsMean(e *desc.ModelEntry, grads []int) []jen.Code {
	if !e.RowsMean {
		return nil
	}
	m := g.m
	s := jen.Id(m.Elem).Call(jen.Id("_lead")).Op("/").Id(m.Elem).Call(jen.Id("n"))
	scale := []jen.Code{jen.Id("sum").Op("*=").Add(s.Clone())}
	for _, pi := range grads {
		scale = append(scale, jen.Qual(rtPath, "Scale").Call(g.field("Grads", pi).Index(jen.Empty(), jen.Empty()), s.Clone()))
	}
	return []jen.Code{jen.If(jen.Id("n").Op("!=").Id("_lead")).Block(scale...)}
}

// rowsBackward emits Backward for a loss with run-time rows: its backward
// kernels on the first n rows (blockRuns), the first call writing its
// gradients into m.Grads, each later one into m.rowGrads, added to
// m.Grads; for a mean, weighted and scaled as the loss (rowsLoss), so
// that n = a block's rows costs no pass over the gradients.
func (g *modelGen) rowsBackward(e *desc.ModelEntry) {
	jf, m, field := g.jf, g.m, g.field
	call := func(b int, grads string) jen.Code {
		args := g.rowArgs(e, b)
		for _, pi := range m.BackwardParams {
			args = append(args, jen.Op("&").Add(field("Params", pi)))
		}
		for _, pi := range m.BackwardGrads {
			args = append(args, jen.Op("&").Add(field(grads, pi)))
		}
		args = append(args, jen.Op("&").Id("m").Dot("loss"))
		k := blockKernel(m.Backward, b)
		if g.pool[k] {
			args = append(args, jen.Id("m").Dot("Pool"))
		}
		if g.scratch[k] != "" {
			args = append(args, jen.Op("&").Id("m").Dot(blockScratch("scratchBackward", b)))
		}
		return jen.Id(k).Call(args...)
	}
	body := append([]jen.Code{g.checkRows("Backward", e, 1, jen.Lit(0))}, g.indexChecks(e, jen.Lit(0))...)
	// The kernels write the gradients of the parameters the loss depends
	// on; the others are zero.
	for i, p := range m.Params {
		if !slices.Contains(m.BackwardGrads, i) {
			body = append(body, field("Grads", i).Op("=").Index(jen.Lit(max(p.Size(), 1))).Id(m.Elem).Values())
		}
	}
	body = append(body, g.rowsSums(e)...)
	body = append(body, blockRuns(e, func(b int) []jen.Code {
		return append([]jen.Code{call(b, "Grads")}, g.firstLoss(e, b)...)
	}, func(b int) []jen.Code {
		later := []jen.Code{call(b, "rowGrads")}
		for _, pi := range m.BackwardGrads {
			dst, src := field("Grads", pi).Index(jen.Empty(), jen.Empty()), field("rowGrads", pi).Index(jen.Empty(), jen.Empty())
			if e.RowsMean {
				later = append(later, jen.Qual(rtPath, "AddScaled").Call(dst, src, g.weight(b)))
			} else {
				later = append(later, jen.Qual(rtPath, "AddTo").Call(dst, src))
			}
		}
		return append(later, g.laterLoss(e, b))
	})...)
	body = append(body, g.rowsMean(e, m.BackwardGrads)...)
	body = append(body, jen.Id("m").Dot("loss").Index(jen.Lit(0)).Op("=").Id("sum"), jen.Return(jen.Id("sum"), jen.Nil()))
	doc(jf, fmt.Sprintf("Backward computes the loss %s on the first n rows of the inputs (1 <= n <= %d, otherwise it\n"+
		"returns an *rt.RowsError) and its gradient with respect to every parameter, into m.Grads\n"+
		"(zeroed first), and returns the loss. It does not allocate.", e.Method, e.Rows))
	jf.Add(g.recv().Id("Backward").Params(append(g.inputParams(e), jen.Id("n").Int())...).Params(jen.Id(m.Elem), jen.Error()).Block(body...))
	jf.Line()
}

// runner emits the runner type and NewRunner, when the model has entry
// points other than its loss: a runner holds its own results and scratch
// and reads the model's parameters, so runners can run the inference
// entries in parallel.
func (g *modelGen) runner() {
	jf, m, inputParams := g.jf, g.m, g.inputParams
	name := m.Name + "Runner"
	fields := []jen.Code{
		jen.Comment("Pool runs the large loop nests of the runner's kernels (nil: rt.DefaultPool()); NewRunner sets it to the model's."),
		jen.Id("Pool").Op("*").Qual(rtPath, "Pool"),
		jen.Id("params").Op("*").Id(g.ps),
	}
	var methods []*desc.ModelEntry
	for ei := range m.Entries {
		if e := &m.Entries[ei]; !e.Loss {
			methods = append(methods, e)
			fields = append(fields, jen.Id("out"+e.Method).Add(arrType(e.OutDims, m.Elem)))
		}
	}
	if len(methods) == 0 {
		return
	}
	var names []string
	for _, e := range methods {
		fields = append(fields, g.scratchFields(e)...)
		names = append(names, e.Method)
	}
	doc(jf, fmt.Sprintf("%s runs the inference entry points of %s (%s)\n"+
		"on the parameters of the model it came from, which it reads and never writes. It holds its own\n"+
		"results and scratch space: runners of one model may run at the same time, one goroutine each,\n"+
		"while nothing changes the model's parameters (no TrainStep, Update, Init, Load or\n"+
		"LoadCheckpoint during their calls).", name, m.Type, strings.Join(names, ", ")))
	jf.Type().Id(name).Struct(fields...)
	jf.Line()
	doc(jf, fmt.Sprintf("NewRunner returns a runner of m's inference entry points (%s) reading m.Params.\n"+
		"Create one per goroutine; its calls do not allocate.", strings.Join(names, ", ")))
	jf.Add(g.recv().Id("NewRunner").Params().Op("*").Id(name).Block(
		jen.Return(jen.Op("&").Id(name).Values(jen.Dict{jen.Id("params"): jen.Op("&").Id("m").Dot("Params"), jen.Id("Pool"): jen.Id("m").Dot("Pool")})),
	))
	jf.Line()
	for _, e := range methods {
		recv := jen.Func().Params(jen.Id("r").Op("*").Id(name))
		if e.Rows > 0 {
			doc(jf, fmt.Sprintf("%s is the model's %s (rows 0 to n-1 of the inputs, 0 <= n <= %d), with the result held\n"+
				"in r until r's next %s call. It does not allocate.", e.Method, e.Method, e.Rows, e.Method))
			g.rowsEntry(e, recv, jen.Id("r").Dot("params"), "r")
			jf.Line()
			continue
		}
		doc(jf, fmt.Sprintf("%s is the model's %s, with the result held in r until r's next %s call.\nIt does not allocate.", e.Method, e.Method, e.Method))
		if e.Indexed() {
			g.checkedEntry(e, recv, jen.Id("r").Dot("params"), "r")
			jf.Line()
			continue
		}
		jf.Add(recv.Id(e.Method).Params(inputParams(e)...).Op("*").Add(arrType(e.OutDims, m.Elem)).Block(
			jen.Id(e.Kernel).Call(g.entryArgs(e, jen.Id("r").Dot("params"), "r", jen.Op("&").Id("r").Dot("out"+e.Method), g.inputArgs(e))...),
			jen.Return(jen.Op("&").Id("r").Dot("out"+e.Method)),
		))
		jf.Line()
	}
}

// backward emits Backward, when the model has a backward kernel.
func (g *modelGen) backward() {
	jf, m, scratch, recv, field, inputParams, inputArgs := g.jf, g.m, g.scratch, g.recv, g.field, g.inputParams, g.inputArgs
	if m.Backward != "" && m.Entries[m.Loss].Rows > 0 {
		g.rowsBackward(&m.Entries[m.Loss])
	} else if m.Backward != "" {
		e := &m.Entries[m.Loss]
		args := inputArgs(e)
		for _, pi := range m.BackwardParams {
			args = append(args, jen.Op("&").Add(field("Params", pi)))
		}
		for _, nz := range e.Noise {
			args = append(args, jen.Op("&").Id("m").Dot("noise"+nz.Field))
		}
		for _, tr := range e.Tracks {
			args = append(args, jen.Op("&").Id("m").Dot("stat"+tr.StatField))
		}
		for _, pi := range m.BackwardGrads {
			args = append(args, jen.Op("&").Add(field("Grads", pi)))
		}
		args = append(args, jen.Op("&").Id("m").Dot("loss"))
		if g.pool[m.Backward] {
			args = append(args, jen.Id("m").Dot("Pool"))
		}
		if scratch[m.Backward] != "" {
			args = append(args, jen.Op("&").Id("m").Dot("scratchBackward"))
		}
		doc(jf, fmt.Sprintf("Backward computes the loss %s at the given inputs and its gradient with respect to\n"+
			"every parameter, into m.Grads (zeroed first), and returns the loss. It does not allocate.", e.Method))
		// The kernel writes the gradients of the parameters the loss
		// depends on; the others are zero.
		body := g.noiseFill(e)
		for i, p := range m.Params {
			if !slices.Contains(m.BackwardGrads, i) {
				body = append(body, field("Grads", i).Op("=").Index(jen.Lit(max(p.Size(), 1))).Id(m.Elem).Values())
			}
		}
		if e.Indexed() {
			body = append(g.indexChecks(e, jen.Lit(0)), body...)
			body = append(body, jen.Id(m.Backward).Call(args...), jen.Return(jen.Id("m").Dot("loss").Index(jen.Lit(0)), jen.Nil()))
			jf.Add(recv().Id("Backward").Params(inputParams(e)...).Params(jen.Id(m.Elem), jen.Error()).Block(body...))
			jf.Line()
			return
		}
		body = append(body, jen.Id(m.Backward).Call(args...), jen.Return(jen.Id("m").Dot("loss").Index(jen.Lit(0))))
		jf.Add(recv().Id("Backward").Params(inputParams(e)...).Id(m.Elem).Block(body...))
		jf.Line()
	}
}

// optimizer emits LearningRate, Update and TrainStep, when the model has an
// optimizer.
func (g *modelGen) optimizer() {
	if g.m.Optim == nil {
		return
	}
	g.learningRate()
	g.update()
	defer g.distributed()
	jf, m, recv, inputParams, inputArgs := g.jf, g.m, g.recv, g.inputParams, g.inputArgs
	if m.Backward != "" && m.Entries[m.Loss].Rows == 0 && m.Entries[m.Loss].Indexed() {
		e := &m.Entries[m.Loss]
		doc(jf, "TrainStep runs Backward on the inputs, then Update, and returns the loss before the update;\nan index out of range is Backward's error, and nothing is updated. It does not allocate."+g.tracksDoc(e))
		jf.Add(recv().Id("TrainStep").Params(inputParams(e)...).Params(jen.Id(m.Elem), jen.Error()).Block(append(append([]jen.Code{
			jen.List(jen.Id("l"), jen.Err()).Op(":=").Id("m").Dot("Backward").Call(inputArgs(e)...),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Lit(0), jen.Err()))},
			g.trackUpdates(e)...),
			jen.Id("m").Dot("Update").Call(),
			jen.Return(jen.Id("l"), jen.Nil()),
		)...))
		jf.Line()
	} else if m.Backward != "" && m.Entries[m.Loss].Rows > 0 {
		e := &m.Entries[m.Loss]
		doc(jf, "TrainStep runs Backward on the first n rows of the inputs, then Update, and returns the loss\nbefore the update; a bad n is Backward's error, and nothing is updated. It does not allocate.")
		jf.Add(recv().Id("TrainStep").Params(append(inputParams(e), jen.Id("n").Int())...).Params(jen.Id(m.Elem), jen.Error()).Block(
			jen.List(jen.Id("l"), jen.Err()).Op(":=").Id("m").Dot("Backward").Call(append(inputArgs(e), jen.Id("n"))...),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Lit(0), jen.Err())),
			jen.Id("m").Dot("Update").Call(),
			jen.Return(jen.Id("l"), jen.Nil()),
		))
		jf.Line()
	} else if m.Backward != "" {
		e := &m.Entries[m.Loss]
		doc(jf, "TrainStep runs Backward on the inputs, then Update, and returns the loss before the update.\nIt does not allocate."+g.tracksDoc(e))
		jf.Add(recv().Id("TrainStep").Params(inputParams(e)...).Id(m.Elem).Block(append(append([]jen.Code{
			jen.Id("l").Op(":=").Id("m").Dot("Backward").Call(inputArgs(e)...)},
			g.trackUpdates(e)...),
			jen.Id("m").Dot("Update").Call(),
			jen.Return(jen.Id("l")),
		)...))
		jf.Line()
	}
}

// learningRate emits LearningRate: the optimizer line's schedule, a
// linear decay without warmup written out (as before schedules had
// names), any other one as an rt.LRSchedule literal.
func (g *modelGen) learningRate() {
	jf, o := g.jf, g.m.Optim
	var lrBody []jen.Code
	lrBody = append(lrBody, jen.If(jen.Id("m").Dot("LR").Op("!=").Nil()).Block(jen.Return(jen.Id("m").Dot("LR").Call(jen.Id("m").Dot("Step")))))
	desc := fmt.Sprintf("%g", o.LR)
	switch {
	case o.Schedule == "linear" && o.Warmup == 0:
		lrBody = append(lrBody,
			// Step is clamped to [0, Steps] both ways: a negative Step
			// (set by hand) must not extrapolate the schedule either.
			jen.Id("s").Op(":=").Min(jen.Max(jen.Id("m").Dot("Step"), jen.Lit(0)), jen.Lit(o.Steps)),
			jen.Return(jen.Lit(o.LR).Op("+").Parens(jen.Lit(o.LREnd).Op("-").Lit(o.LR)).Op("*").Float64().Call(jen.Id("s")).Op("/").Lit(float64(o.Steps))))
		desc = fmt.Sprintf("%g falling linearly to %g over %d steps (a Step outside [0, %d] counts as the nearer end)", o.LR, o.LREnd, o.Steps, o.Steps)
	case o.Schedule == "" || o.Schedule == "constant" && o.Warmup == 0:
		lrBody = append(lrBody, jen.Return(jen.Lit(o.LR)))
	default:
		kind := map[string]string{"constant": "ConstantLR", "linear": "Linear", "cosine": "Cosine", "step": "StepDecay"}[o.Schedule]
		fields := []jen.Code{jen.Id("Kind").Op(":").Qual(rtPath, kind), jen.Id("LR").Op(":").Lit(o.LR)}
		switch o.Schedule {
		case "linear", "cosine":
			fields = append(fields, jen.Id("LREnd").Op(":").Lit(o.LREnd), jen.Id("Steps").Op(":").Lit(o.Steps))
			desc = fmt.Sprintf("%g falling to %g over %d steps along %s", o.LR, o.LREnd, o.Steps, map[string]string{"linear": "a line", "cosine": "half a cosine"}[o.Schedule])
		case "step":
			fields = append(fields, jen.Id("StepSize").Op(":").Lit(o.StepSize), jen.Id("Gamma").Op(":").Lit(o.Gamma))
			desc = fmt.Sprintf("%g multiplied by %g every %d steps", o.LR, o.Gamma, o.StepSize)
		}
		if o.Warmup > 0 {
			fields = append(fields, jen.Id("Warmup").Op(":").Lit(o.Warmup))
			desc += fmt.Sprintf(", after a linear warmup of %d steps", o.Warmup)
		}
		lrBody = append(lrBody, jen.Return(jen.Qual(rtPath, "LRSchedule").Values(fields...).Dot("At").Call(jen.Id("m").Dot("Step"))))
		desc += " (rt.LRSchedule, equal to PyTorch's scheduler)"
	}
	doc(jf, "LearningRate is the learning rate of the next step: m.LR(m.Step) when LR is set, otherwise "+desc+".")
	jf.Add(g.recv().Id("LearningRate").Params().Float64().Block(lrBody...))
	jf.Line()
}

// sliceOf is parameter i's array in the parameter set set, as a slice.
func (g *modelGen) sliceOf(set string, i int) *jen.Statement {
	return g.field(set, i).Index(jen.Empty(), jen.Empty())
}

// update emits Update: optional clipping by global norm, then one
// optimizer step per parameter.
func (g *modelGen) update() {
	jf, m, o := g.jf, g.m, g.m.Optim
	var up []jen.Code
	if len(m.Params) > 0 {
		up = append(up, jen.Id("lr").Op(":=").Id(m.Elem).Call(jen.Id("m").Dot("LearningRate").Call()))
	}
	clipDoc := ""
	if o.ClipNorm > 0 && len(m.Params) > 0 {
		var sum *jen.Statement
		var scale []jen.Code
		for i := range m.Params {
			term := jen.Qual(rtPath, "SumSquares").Call(g.sliceOf("Grads", i))
			if sum == nil {
				sum = term
			} else {
				sum = sum.Op("+").Add(term)
			}
			scale = append(scale, jen.Qual(rtPath, "Scale").Call(g.sliceOf("Grads", i), jen.Id("s")))
		}
		up = append(up,
			jen.Id("m").Dot("GradNorm").Op("=").Qual("math", "Sqrt").Call(sum),
			jen.If(jen.Id("s").Op(":=").Add(asElem(jen.Qual(rtPath, "ClipScale").Call(jen.Id("m").Dot("GradNorm"), jen.Lit(o.ClipNorm)), m.Elem)), jen.Id("s").Op("!=").Lit(1)).Block(scale...))
		clipDoc = fmt.Sprintf("\nBefore the step it sets m.GradNorm to the global norm of m.Grads and, when that exceeds\n"+
			"%g, scales every gradient by %g/(GradNorm+1e-6) (rt.ClipScale, as torch.nn.utils.clip_grad_norm_).", o.ClipNorm, o.ClipNorm)
	}
	if g.adam {
		// float32 Adam without L2 weight decay runs the whole vectors
		// of each parameter in the Adam kernel (same bits as rt.Adam).
		if g.set != nil && m.Elem == "float32" && (o.Kind == "adamw" || o.WeightDecay <= 0) && len(m.Params) > 0 {
			g.vecAdam = true
			g.set.AddAdam()
		}
		vecDoc := ""
		if g.vecAdam {
			vecDoc = "\nEach parameter's whole vectors are updated by the Adam kernel of the CPU's tier\n" +
				"(ocannlAdam): rt.Adam's operations in the same order, so the same bits."
		}
		up = append(up, nextStep())
		if parts := g.updateParts(); parts > 0 {
			up = append(up, g.adamParts(parts)...)
			vecDoc += fmt.Sprintf("\nThe update runs in %d parts on m.Pool, each a balanced share of the parameters' elements\n"+
				"laid end to end (%sUpdateParts): the same bits on any number of threads.", parts, m.Name)
		}
		for i := range m.Params {
			if m.Params[i].State || g.updateParts() > 0 {
				continue
			}
			var fn jen.Code = jen.Qual(rtPath, "Adam")
			if g.vecAdam {
				fn = jen.Id("ocannlAdam")
			}
			up = append(up, jen.Add(fn).Call(g.sliceOf("Params", i), g.sliceOf("Grads", i), g.sliceOf("adamM", i), g.sliceOf("adamV", i),
				jen.Id("m").Dot("Step"), jen.Id("lr"), lit(o.Beta1, m.Elem), lit(o.Beta2, m.Elem), lit(o.Eps, m.Elem), lit(o.WeightDecay, m.Elem), jen.Lit(o.Kind == "adamw")))
		}
		name, wd := "Adam", "L2 weight decay"
		if o.Kind == "adamw" {
			name, wd = "AdamW", "decoupled weight decay"
		}
		doc(jf, fmt.Sprintf("Update advances m.Step (rt.NextStep: saturating at rt.MaxStep) and applies one bias-corrected %s\n"+
			"step (rt.Adam: beta1 %g, beta2 %g, eps %g, %s %g, step number m.Step) to every parameter\n"+
			"using m.Grads.%s It does not allocate.%s", name, o.Beta1, o.Beta2, o.Eps, wd, o.WeightDecay, clipDoc, vecDoc))
	} else {
		for i := range m.Params {
			if m.Params[i].State {
				continue
			}
			var mom jen.Code = jen.Nil()
			if g.momentum {
				mom = g.sliceOf("momentum", i)
			}
			up = append(up, jen.Qual(rtPath, "SGD").Call(g.sliceOf("Params", i), g.sliceOf("Grads", i), mom,
				jen.Id("lr"), lit(o.Momentum, m.Elem), lit(o.WeightDecay, m.Elem), jen.Lit(o.Nesterov)))
		}
		up = append(up, nextStep())
		doc(jf, fmt.Sprintf("Update applies one SGD step (momentum %g, nesterov %v, weight decay %g) to every\n"+
			"parameter using m.Grads, and advances m.Step (rt.NextStep: saturating at rt.MaxStep).%s It does not allocate.", o.Momentum, o.Nesterov, o.WeightDecay, clipDoc))
	}
	jf.Add(g.recv().Id("Update").Params().Block(up...))
	jf.Line()
}

// minParallelUpdate is the least number of parameter elements whose
// Adam update runs in parts on the model's Pool: a few tens of
// microseconds of the vector kernel (about 1 ns per element, memory
// bound), against about a microsecond per region (rt.Region).
const minParallelUpdate = 1 << 15

// updatePartCount is the number of parts of a parallel Adam update
// (the balanced shares are cut at multiples of adamPartAlign elements).
const updatePartCount, adamPartAlign = 8, 16

// updateParts is the number of parts Update's Adam step runs in on the
// model's Pool, or 0 when it runs on the caller: a float32 model with
// the Adam kernel (vecAdam, decided by update, so this is for after it
// and for stateType, which asks the same question), parallel kernels
// and at least minParallelUpdate parameter elements.
func (g *modelGen) updateParts() int {
	o := g.m.Optim
	if !g.par || !g.adam || g.set == nil || g.m.Elem != "float32" || o == nil || !(o.Kind == "adamw" || o.WeightDecay <= 0) {
		return 0
	}
	n := 0
	for i := range g.m.Params {
		if !g.m.Params[i].State {
			n += g.m.Params[i].Size()
		}
	}
	if n < minParallelUpdate {
		return 0
	}
	return updatePartCount
}

// adamParts declares the task record of Update's Adam step in parts and
// returns Update's statements running it: part i updates the elements
// [lo, hi) of the parameters laid end to end (in Params order), lo and
// hi the balanced cut of part i at a multiple of adamPartAlign, each
// parameter's share by ocannlAdamIn (the Adam kernel on a sub-slice:
// elementwise, so the same bits as one call).
func (g *modelGen) adamParts(parts int) []jen.Code {
	m, o := g.m, g.m.Optim
	typ := m.Name + "UpdateParts"
	total := 0
	for i := range m.Params {
		if !m.Params[i].State {
			total += m.Params[i].Size()
		}
	}
	body := []jen.Code{
		jen.List(jen.Id("m"), jen.Id("lr")).Op(":=").List(jen.Id("t").Dot("m"), jen.Id("t").Dot("lr")),
		jen.List(jen.Id("lo"), jen.Id("hi")).Op(":=").List(
			jen.Id("i").Op("*").Lit(total).Op("/").Lit(parts).Op("&^").Lit(adamPartAlign-1),
			jen.Parens(jen.Id("i").Op("+").Lit(1)).Op("*").Lit(total).Op("/").Lit(parts).Op("&^").Lit(adamPartAlign-1)),
		jen.If(jen.Id("i").Op("==").Lit(parts - 1)).Block(jen.Id("hi").Op("=").Lit(total)),
	}
	off := 0
	for i := range m.Params {
		if m.Params[i].State {
			continue
		}
		lo, hi := jen.Id("lo"), jen.Id("hi")
		if off > 0 {
			lo, hi = lo.Op("-").Lit(off), hi.Op("-").Lit(off)
		}
		body = append(body, jen.Id("ocannlAdamIn").Call(g.sliceOf("Params", i), g.sliceOf("Grads", i), g.sliceOf("adamM", i), g.sliceOf("adamV", i),
			lo, hi,
			jen.Id("m").Dot("Step"), jen.Id("lr"), lit(o.Beta1, m.Elem), lit(o.Beta2, m.Elem), lit(o.Eps, m.Elem), lit(o.WeightDecay, m.Elem), jen.Lit(o.Kind == "adamw")))
		off += m.Params[i].Size()
	}
	doc(g.jf, fmt.Sprintf("%s is the task record of %s's Update in %d parts, part i the Adam step of the\n"+
		"elements from i*%d/%d to (i+1)*%d/%d (cut at multiples of %d) of the parameters laid end to end (see rt.Pool).",
		typ, m.Name, parts, total, parts, total, parts, adamPartAlign))
	g.jf.Type().Id(typ).Struct(jen.Id("m").Op("*").Id(m.Name), jen.Id("lr").Float32())
	g.jf.Line()
	doc(g.jf, "Part runs part i of the update.")
	g.jf.Func().Params(jen.Id("t").Op("*").Id(typ)).Id("Part").Params(jen.Id("i").Int()).Block(body...)
	g.jf.Line()
	return []jen.Code{
		jen.Id("region").Op(":=").Id("m").Dot("Pool").Dot("Enter").Call(),
		jen.Id("m").Dot("update").Op("=").Id(typ).Values(jen.Dict{jen.Id("m"): jen.Id("m"), jen.Id("lr"): jen.Id("lr")}),
		jen.Id("region").Dot("Run").Call(jen.Op("&").Id("m").Dot("update"), jen.Lit(parts)),
		jen.Id("m").Dot("update").Op("=").Id(typ).Values(),
		jen.Id("region").Dot("Leave").Call(),
	}
}

// nextStep advances m.Step: rt.NextStep saturates at rt.MaxStep instead
// of wrapping (a wrapped, negative step made rt.Adam panic and the
// schedule extrapolate), and starts a negative Step at 1.
func nextStep() jen.Code {
	return jen.Id("m").Dot("Step").Op("=").Qual(rtPath, "NextStep").Call(jen.Id("m").Dot("Step"))
}

// persistence emits ParamTensors, Save, Load, MarshalBinary and
// UnmarshalBinary.
func (g *modelGen) persistence() {
	jf, recv := g.jf, g.recv
	// Persistence.
	doc(jf, "ParamTensors lists the parameters as rt.Tensor views of m.Params, named by identity, each\n"+
		"with its role (rt.Role: a conv kernel, a linear weight, a bias...), which gives its layout in a\n"+
		"PyTorch state_dict (rt.SafetensorsOptions.Layout).")
	jf.Add(recv().Id("ParamTensors").Params().Index().Qual(rtPath, "Tensor").Block(
		jen.Return(jen.Index().Qual(rtPath, "Tensor").Values(g.tensors("Params", "")...)),
	))
	jf.Line()
	if g.m.Optim != nil {
		doc(jf, "Save writes the parameters to w in rt's parameter file format (not the optimizer's state\nor Step: SaveCheckpoint writes those too).")
	} else {
		doc(jf, "Save writes the parameters to w in rt's parameter file format.")
	}
	jf.Add(recv().Id("Save").Params(jen.Id("w").Qual("io", "Writer")).Error().Block(
		jen.Return(jen.Qual(rtPath, "Save").Call(jen.Id("w"), jen.Id("m").Dot("ParamTensors").Call())),
	))
	jf.Line()
	doc(jf, "Load reads parameters saved by Save. A file whose tensors differ in name, element type\nor shape (rt.ShapeError names the tensor and both shapes), or that holds NaN or infinite values\n(rt.ErrNonFinite), is rejected and m is left unchanged.")
	jf.Add(recv().Id("Load").Params(jen.Id("r").Qual("io", "Reader")).Error().Block(
		jen.Return(jen.Qual(rtPath, "Load").Call(jen.Id("r"), jen.Id("m").Dot("ParamTensors").Call())),
	))
	jf.Line()
	doc(jf, "SaveSafetensors writes the parameters to w in the safetensors format (rt.SaveSafetensors):\n"+
		"each under its identity (net.w1) or the name opt.Names gives it, in its memory order (an\n"+
		"`in -> out` weight is [out][in], as PyTorch's nn.Linear), or with opt.Layout = rt.LayoutPyTorch\n"+
		"in the layout of the equivalent PyTorch module's state_dict (a conv kernel [oc][ic][kh][kw]), or\n"+
		"the layout opt.Permute gives. The file records its layout, so LoadSafetensors reads it back\n"+
		"without options. opt may be nil.")
	jf.Add(recv().Id("SaveSafetensors").Params(jen.Id("w").Qual("io", "Writer"), jen.Id("opt").Op("*").Qual(rtPath, "SafetensorsOptions")).Error().Block(
		jen.Return(jen.Qual(rtPath, "SaveSafetensors").Call(jen.Id("w"), jen.Id("m").Dot("ParamTensors").Call(), jen.Id("opt"))),
	))
	jf.Line()
	doc(jf, "LoadSafetensors reads the parameters from a safetensors file (rt.LoadSafetensors), e.g. one\n"+
		"exported from PyTorch: opt.Names maps parameter identities (net.w1) to the file's tensor names\n"+
		"(fc1.weight), opt.Layout says the file's layout (rt.LayoutPyTorch for the state_dict of the\n"+
		"equivalent nn.Module: conv kernels are converted from [oc][ic][kh][kw]; rt.LayoutNative for\n"+
		"ocannlgen's order; unset, the layout a file written by SaveSafetensors records), opt.Permute\n"+
		"overrides it per parameter, and F16, BF16, F32 and F64 data are converted. A parameter whose\n"+
		"layout its shape cannot tell (a 3x3 conv kernel on 3 channels) is refused unless the layout is\n"+
		"given or recorded (rt.ErrAmbiguousLayout). Every missing, extra, mismatching or ambiguous\n"+
		"tensor is listed in the error; NaN and infinite values (rt.ErrNonFinite) and values beyond\n"+
		"the parameters' element type (rt.ErrOutOfRange) are refused, and so are opt.Names or\n"+
		"opt.Permute keys that name no parameter (rt.ErrInvalid). On any error m is left unchanged.\n"+
		"opt may be nil."+g.evenPaddedDoc()+g.flattenedDoc())
	jf.Add(recv().Id("LoadSafetensors").Params(jen.Id("r").Qual("io", "Reader"), jen.Id("opt").Op("*").Qual(rtPath, "SafetensorsOptions")).Error().Block(
		jen.Return(jen.Qual(rtPath, "LoadSafetensors").Call(jen.Id("r"), jen.Id("m").Dot("ParamTensors").Call(), jen.Id("opt"))),
	))
	jf.Line()
	doc(jf, "MarshalBinary encodes the parameters as Save does.")
	jf.Add(recv().Id("MarshalBinary").Params().Params(jen.Index().Byte(), jen.Error()).Block(
		jen.Var().Id("b").Qual("bytes", "Buffer"),
		jen.Err().Op(":=").Id("m").Dot("Save").Call(jen.Op("&").Id("b")),
		jen.Return(jen.Id("b").Dot("Bytes").Call(), jen.Err()),
	))
	jf.Line()
	doc(jf, "UnmarshalBinary decodes parameters encoded by MarshalBinary (see Load); bytes after the\nencoded parameters are an error (rt.ErrTrailingData).")
	jf.Add(recv().Id("UnmarshalBinary").Params(jen.Id("data").Index().Byte()).Error().Block(
		jen.Return(jen.Qual(rtPath, "Unmarshal").Call(jen.Id("data"), jen.Id("m").Dot("ParamTensors").Call())),
	))
	jf.Line()
}

// asElem converts a float64 expression to the element type.
func asElem(x *jen.Statement, elem string) *jen.Statement {
	if elem == "float64" {
		return x
	}
	return jen.Id(elem).Call(x)
}

// evenPaddedDoc is what the doc of LoadSafetensors adds when a conv
// kernel of the model has even padded windows (desc.ModelParam.EvenPadded):
// the PyTorch preset refuses it unless confirmed.
func (g *modelGen) evenPaddedDoc() string {
	ids := g.paramIDs(func(p *desc.ModelParam) bool { return len(p.EvenPadded) > 0 })
	if len(ids) == 0 {
		return ""
	}
	return "\n\nWith opt.Layout = rt.LayoutPyTorch, the kernels of padded convolutions with an even window (" +
		strings.Join(ids, ", ") + ")\n" +
		"are refused (rt.ErrEvenKernelPadding) unless opt.AllowEvenKernelPadding confirms them: ocannlgen\n" +
		"pads the extra cell of an even window on the left, PyTorch's padding='same' on the right."
}

// flattenedDoc is what the doc of LoadSafetensors adds when a linear
// weight of the model is fed by a flatten (desc.ModelParam.Flattened):
// its order in a PyTorch file must be given.
func (g *modelGen) flattenedDoc() string {
	ids := g.paramIDs(func(p *desc.ModelParam) bool { return len(p.Flattened) > 0 })
	if len(ids) == 0 {
		return ""
	}
	return "\n\nThe linear weights fed by a flatten (" + strings.Join(ids, ", ") + ") are refused from a file that\n" +
		"records no layout, and with opt.Layout = rt.LayoutPyTorch, unless opt.Views (rt.TorchFlattenLinear\n" +
		"for PyTorch's x.flatten(1) of NCHW activations) or opt.Permute gives their order (rt.ErrAmbiguousLayout)."
}

// paramIDs lists the identities of the model's parameters that keep
// holds for, in order.
func (g *modelGen) paramIDs(keep func(*desc.ModelParam) bool) []string {
	var ids []string
	for i := range g.m.Params {
		if keep(&g.m.Params[i]) {
			ids = append(ids, g.m.Params[i].ID)
		}
	}
	return ids
}

// tensors lists the arrays of a parameter set (Params, Grads or an
// optimizer state) as rt.Tensor literals named prefix+identity.
func (g *modelGen) tensors(set, prefix string) []jen.Code {
	m := g.m
	dataField := "Data32"
	if m.Elem == "float64" {
		dataField = "Data64"
	}
	var ts []jen.Code
	for i, p := range m.Params {
		var dims []jen.Code
		for _, d := range p.Dims {
			dims = append(dims, jen.Lit(d))
		}
		fields := jen.Dict{
			jen.Id("Name"):    jen.Lit(prefix + p.ID),
			jen.Id("Dims"):    jen.Index().Int().Values(dims...),
			jen.Id(dataField): g.sliceOf(set, i),
		}
		// The parameters' roles (their layout in a PyTorch state_dict);
		// the optimizer's state is never exchanged with PyTorch.
		if set == "Params" && prefix == "" && p.Role != "" {
			fields[jen.Id("Role")] = jen.Qual(rtPath, p.Role)
			for field, axes := range map[string][]int{"Spatial": p.Spatial, "EvenPadded": p.EvenPadded, "Flattened": p.Flattened} {
				if axes == nil {
					continue
				}
				var sp []jen.Code
				for _, a := range axes {
					sp = append(sp, jen.Lit(a))
				}
				fields[jen.Id(field)] = jen.Index().Int().Values(sp...)
			}
		}
		ts = append(ts, jen.Values(fields))
	}
	return ts
}

// optimizerState is the name checkpoints record for the optimizer and its
// state's parameter sets with their tensor name prefixes.
func (g *modelGen) optimizerState() (name string, sets, prefixes []string) {
	o := g.m.Optim
	switch {
	case g.adam:
		return o.Kind, []string{"adamM", "adamV"}, []string{"adam.m/", "adam.v/"}
	case g.momentum:
		return "sgd momentum", []string{"momentum"}, []string{"momentum/"}
	}
	return "sgd", nil, nil
}

// checkpoint emits checkpointTensors, SaveCheckpoint and LoadCheckpoint,
// when the model has an optimizer.
func (g *modelGen) checkpoint() {
	jf, m, recv := g.jf, g.m, g.recv
	if m.Optim == nil {
		return
	}
	name, sets, prefixes := g.optimizerState()
	ts := g.tensors("Params", "")
	state := "no optimizer state"
	if len(sets) > 0 {
		state = "the optimizer's state, named " + strings.Join(prefixes, "IDENTITY, ") + "IDENTITY"
	}
	for k, set := range sets {
		ts = append(ts, g.tensors(set, prefixes[k])...)
	}
	doc(jf, "checkpointTensors lists the parameters, named by identity, and "+state+",\nas rt.Tensor views of m.")
	jf.Add(recv().Id("checkpointTensors").Params().Index().Qual(rtPath, "Tensor").Block(
		jen.Return(jen.Index().Qual(rtPath, "Tensor").Values(ts...)),
	))
	jf.Line()
	doc(jf, fmt.Sprintf("SaveCheckpoint writes the training state to w: m.Step, the parameters and the\n"+
		"optimizer's state (rt.SaveCheckpoint, optimizer %q). Training resumed from it with\n"+
		"LoadCheckpoint takes, on the same inputs, the same steps bit for bit as training that never\n"+
		"stopped. Save writes the parameters alone.", name))
	jf.Add(recv().Id("SaveCheckpoint").Params(jen.Id("w").Qual("io", "Writer")).Error().Block(
		jen.Return(jen.Qual(rtPath, "SaveCheckpoint").Call(jen.Id("w"), jen.Id("m").Dot("Step"), jen.Lit(name), jen.Id("m").Dot("checkpointTensors").Call())),
	))
	jf.Line()
	doc(jf, "LoadCheckpoint reads a checkpoint written by SaveCheckpoint into m: the parameters, the\n"+
		"optimizer's state and m.Step. A damaged file, one written for another optimizer, one whose\n"+
		"tensors differ in name, element type or shape (every mismatch is listed), or one holding state\n"+
		"the optimizer cannot run (NaN or infinite values, a step above rt.MaxStep, a negative second\n"+
		"moment of Adam: rt.ErrNonFinite, rt.ErrOutOfRange) is rejected and m is left unchanged. The\n"+
		"gradients are not part of a checkpoint.")
	jf.Add(recv().Id("LoadCheckpoint").Params(jen.Id("r").Qual("io", "Reader")).Error().Block(
		jen.List(jen.Id("step"), jen.Err()).Op(":=").Qual(rtPath, "LoadCheckpoint").Call(jen.Id("r"), jen.Lit(name), jen.Id("m").Dot("checkpointTensors").Call()),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		jen.Id("m").Dot("Step").Op("=").Id("step"),
		jen.Return(jen.Nil()),
	))
	jf.Line()
}

func dimsText(ds []int) string {
	if len(ds) == 0 {
		return "[1]"
	}
	var b strings.Builder
	for _, d := range ds {
		b.WriteString("[" + strconv.Itoa(d) + "]")
	}
	return b.String()
}

// doc writes a doc comment as // lines (jennifer renders a multi-line
// Comment as a /* */ block).
func doc(jf *jen.File, text string) {
	for _, l := range strings.Split(text, "\n") {
		jf.Comment(l)
	}
}

// adamHelper declares ocannlAdam, which a float32 model's Update calls
// for each parameter instead of rt.Adam when the package has assembly
// kernels: the whole vectors in the Adam kernel of the best tier the CPU
// has (emit/asm's adam.go: rt.Adam's operations in the same order), the
// rest, and every element on other builds, in rt.Adam.
func adamHelper(jf *jen.File, set *asm.Set, parts bool) {
	if parts {
		doc(jf, "ocannlAdamIn is ocannlAdam on the elements [lo, hi) of p, g, m and v, the range clipped to\n"+
			"their length (a part of a parallel update: rt.Adam is elementwise, so the same bits).")
		jf.Func().Id("ocannlAdamIn").Params(jen.List(jen.Id("p"), jen.Id("g"), jen.Id("m"), jen.Id("v")).Index().Float32(), jen.List(jen.Id("lo"), jen.Id("hi"), jen.Id("step")).Int(),
			jen.List(jen.Id("lr"), jen.Id("beta1"), jen.Id("beta2"), jen.Id("eps"), jen.Id("wd")).Float32(), jen.Id("decoupled").Bool()).Block(
			jen.List(jen.Id("lo"), jen.Id("hi")).Op("=").List(jen.Max(jen.Id("lo"), jen.Lit(0)), jen.Min(jen.Id("hi"), jen.Len(jen.Id("p")))),
			jen.If(jen.Id("lo").Op("<").Id("hi")).Block(
				jen.Id("ocannlAdam").Call(jen.Id("p").Index(jen.Id("lo").Op(":").Id("hi")), jen.Id("g").Index(jen.Id("lo").Op(":").Id("hi")),
					jen.Id("m").Index(jen.Id("lo").Op(":").Id("hi")), jen.Id("v").Index(jen.Id("lo").Op(":").Id("hi")),
					jen.Id("step"), jen.Id("lr"), jen.Id("beta1"), jen.Id("beta2"), jen.Id("eps"), jen.Id("wd"), jen.Id("decoupled"))))
		jf.Line()
	}
	doc(jf, "ocannlAdam is rt.Adam for float32 without L2 weight decay, the whole vectors of p run by\n"+
		"the Adam kernel of the best tier the CPU has (rt.Adam's operations in the same order: the\n"+
		"same bits) and the rest by rt.Adam.")
	args := func(n jen.Code) []jen.Code {
		var out []jen.Code
		for _, x := range []string{"p", "g", "m", "v"} {
			out = append(out, jen.Op("&").Id(x).Index(jen.Lit(0)))
		}
		return append(out, n, jen.Op("&").Id("k"))
	}
	var body []jen.Code
	body = append(body,
		jen.If(jen.Len(jen.Id("g")).Op("!=").Len(jen.Id("p")).Op("||").Len(jen.Id("m")).Op("!=").Len(jen.Id("p")).Op("||").Len(jen.Id("v")).Op("!=").Len(jen.Id("p"))).Block(
			jen.Panic(jen.Lit("rt: Adam: grad, m, v and param lengths differ"))),
		jen.Id("n").Op(":=").Lit(0))
	var chain *jen.Statement
	for i, t := range set.Tiers() {
		lanes := asm.AdamLanes(t)
		blk := jen.Block(
			jen.If(jen.Id("n").Op("=").Len(jen.Id("p")).Op("&^").Lit(lanes-1), jen.Id("n").Op(">").Lit(0)).Block(
				jen.Id("k").Op(":=").Qual(rtPath, "AdamCoeffs").Call(jen.Id("step"), jen.Id("lr"), jen.Id("beta1"), jen.Id("beta2"), jen.Id("eps"), jen.Id("wd"), jen.Id("decoupled")),
				jen.Id(set.AdamName(t)).Call(args(jen.Id("n"))...)))
		cond := jen.If(jen.Id(t.Flag())).Add(blk)
		if i == 0 {
			chain = cond
		} else {
			chain = chain.Else().Add(cond)
		}
	}
	body = append(body, chain,
		jen.Qual(rtPath, "Adam").Call(jen.Id("p").Index(jen.Id("n").Op(":")), jen.Id("g").Index(jen.Id("n").Op(":")), jen.Id("m").Index(jen.Id("n").Op(":")), jen.Id("v").Index(jen.Id("n").Op(":")),
			jen.Id("step"), jen.Id("lr"), jen.Id("beta1"), jen.Id("beta2"), jen.Id("eps"), jen.Id("wd"), jen.Id("decoupled")))
	jf.Func().Id("ocannlAdam").Params(jen.List(jen.Id("p"), jen.Id("g"), jen.Id("m"), jen.Id("v")).Index().Float32(), jen.Id("step").Int(),
		jen.List(jen.Id("lr"), jen.Id("beta1"), jen.Id("beta2"), jen.Id("eps"), jen.Id("wd")).Float32(), jen.Id("decoupled").Bool()).Block(body...)
	jf.Line()
}
