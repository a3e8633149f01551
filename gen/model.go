package gen

import (
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ocannlgen/ocannlgen/autodiff"
	"github.com/ocannlgen/ocannlgen/emit/desc"
	"github.com/ocannlgen/ocannlgen/emit/target"
	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/model"
	"github.com/ocannlgen/ocannlgen/rt"
	"github.com/ocannlgen/ocannlgen/spec"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// Model directive verbs: `//ocannl:model [float32|float64]` opens a
// model on a struct type; the following directives are its program's
// lines, each starting with the statement's keyword.
const verbModel = "model"

var modelLineVerbs = map[string]bool{
	"layer": true, "entry": true, "loss": true, "input": true, "let": true,
	"dim": true, "return": true, "sgd": true, "adam": true, "adamw": true,
}

// reservedMethods are the methods and exported fields every model has
// (or may have), and the suffixes of its generated types (ocannlTParams,
// ocannlTRunner: an entry's kernel is ocannlT+method); entry points must
// not take their names.
var reservedMethods = map[string]bool{
	"Params": true, "Grads": true, "Step": true, "LR": true, "GradNorm": true,
	"Init": true, "Backward": true, "Update": true, "TrainStep": true, "LearningRate": true,
	"ParamTensors": true, "Save": true, "Load": true, "MarshalBinary": true, "UnmarshalBinary": true,
	"SaveCheckpoint": true, "LoadCheckpoint": true, "NewRunner": true, "Runner": true, "SaveSafetensors": true, "LoadSafetensors": true,
}

// modelSrc is an annotated struct type and its directives.
type modelSrc struct {
	fset *token.FileSet
	pkg  *types.Package // resolves the Go constants sizes may name
	plat *platform      // finds sizes declared in files with build constraints
	// guards are the constants the model's shapes name (set by compileModel).
	guards []desc.Guard
	spec   *ast.TypeSpec
	head   *directive   // the //ocannl:model line
	lines  []*directive // the program lines
	// entries are the expanded model's entry points (set by
	// compileModel), for the positions of verification errors.
	entries []*model.Entry
}

// genTypeName is the generated struct's name for a model type.
func genTypeName(name string) string { return genName(name) }

// methodName is an entry point's Go method name: the CamelCase of its
// name (predict_one: PredictOne), and for the loss entry that name
// followed by Loss (train: TrainLoss), since the method only evaluates the
// loss (TrainStep trains); a loss name that already ends in Loss is kept
// (train_loss: TrainLoss, loss: Loss).
func methodName(entry string, loss bool) string {
	name := camelCase(entry)
	if loss && !strings.HasSuffix(name, "Loss") {
		name += "Loss"
	}
	return name
}

// camelCase joins the '_'-separated words of an identifier, each with its
// first letter upper-cased: predict_one and predictOne give PredictOne.
func camelCase(id string) string {
	var b strings.Builder
	for _, w := range strings.Split(id, "_") {
		if w == "" {
			continue
		}
		r, n := utf8.DecodeRuneInString(w)
		b.WriteRune(unicode.ToUpper(r))
		b.WriteString(w[n:])
	}
	if b.Len() == 0 || !unicode.IsLetter([]rune(b.String())[0]) {
		return "E" + b.String()
	}
	return b.String()
}

// goFieldName turns a parameter identity (net.l1.w, dense#1.b) into an
// exported Go field name (NetL1W, Dense1B).
func goFieldName(id string) string {
	var b strings.Builder
	up := true
	for _, r := range id {
		switch {
		case r == '.' || r == '#' || r == '_' || r == '/' || r == '\'':
			up = true
		case up:
			b.WriteRune(unicode.ToUpper(r))
			up = false
		default:
			b.WriteRune(r)
		}
	}
	s := b.String()
	if s == "" || !unicode.IsLetter([]rune(s)[0]) {
		s = "P" + s
	}
	return s
}

// position maps a position of the model program to the source.
func (ms *modelSrc) position(p spec.Pos) token.Position {
	if p.Line < 1 || p.Line > len(ms.lines) {
		return ms.head.at(ms.head.VerbCol)
	}
	d := ms.lines[p.Line-1]
	col := d.Pos.Column + len(dirPrefix) + p.Col - 1
	if p.Col < 1 {
		col = d.VerbCol
	}
	return d.at(col)
}

func (ms *modelSrc) errAt(p spec.Pos, format string, args ...any) *Error {
	return &Error{Pos: ms.position(p), Msg: fmt.Sprintf(format, args...)}
}

// cited converts an error of the model program whose message (after
// prefix) cites related positions.
func (ms *modelSrc) cited(p spec.Pos, prefix, msg string, rel []spec.Related) *Error {
	return &Error{Pos: ms.position(p), Msg: prefix + msg, Related: relocate(rel, len(prefix), ms.position)}
}

// resolveSizes gives every size of an input or leaf shape written as a
// name the value of the package-level integer constant of that name, and
// returns the guards that break the build when such a constant changes
// (as for //ocannl:dims).
func (ms *modelSrc) resolveSizes(stmts []program.Stmt) ([]desc.Guard, error) {
	var guards []desc.Guard
	for _, st := range stmts {
		var sd *program.ShapeDecl
		var name string
		switch st := st.(type) {
		case *program.EntryStmt:
			gs, err := ms.resolveSizes(st.Body)
			if err != nil {
				return nil, err
			}
			for _, g := range gs {
				if !slices.Contains(guards, g) {
					guards = append(guards, g)
				}
			}
			continue
		case *program.InputStmt:
			sd, name = st.Shape, st.Name
		case *program.LeafStmt:
			sd, name = st.Shape, st.Name
		}
		if sd == nil {
			continue
		}
		rows := []*program.RowDecl{sd.Batch, sd.Input, sd.Output}
		if sd.Index != nil {
			rows = append(rows, &program.RowDecl{Dims: []program.DimDecl{*sd.Index}})
		}
		for k, r := range rows {
			if r == nil {
				continue
			}
			for i := range r.Dims {
				d := &r.Dims[i]
				if k == 3 {
					d = sd.Index // the index bound, `index NAME`
				}
				if d.Name == "" {
					continue
				}
				v, problem, kind := intConst(ms.pkg, ms.plat, d.Name)
				if problem != "" {
					return nil, ms.errAt(d.Pos, "the size %s in the shape of %s: %s%s", d.Name, name, problem, sizeHint(kind))
				}
				d.Size = v
				if g := (desc.Guard{Name: d.Name, Value: int64(v)}); !slices.Contains(guards, g) {
					guards = append(guards, g)
				}
			}
		}
	}
	return guards, nil
}

// program parses the model's lines as one program and gives every size
// naming a Go constant its value (ms.guards receives the constants).
func (ms *modelSrc) program() (*program.Program, *Error) {
	var text strings.Builder
	for _, d := range ms.lines {
		text.WriteString(d.Text[len(dirPrefix):])
		text.WriteByte('\n')
	}
	prog, err := program.Parse(text.String())
	if err != nil {
		var pe *program.Error
		if errors.As(err, &pe) {
			return nil, ms.cited(pe.Pos, "", pe.Msg, pe.Related)
		}
		return nil, ms.head.errAt(ms.head.VerbCol, "%v", err)
	}
	if ms.guards, err = ms.resolveSizes(prog.Stmts); err != nil {
		return nil, err.(*Error)
	}
	return prog, nil
}

// compileModel expands, infers and lowers a model and describes its Go
// side; ms.guards receives the guards of the Go constants its shapes
// name. The phases run in order on a modelCompiler; the first error stops
// them.
func compileModel(ms *modelSrc) (*desc.Model, []*desc.Kernel, []*Error) {
	c := &modelCompiler{ms: ms, typeName: ms.spec.Name.Name}
	for _, phase := range []func() *Error{c.header, c.expand, c.params, c.entries} {
		if err := phase(); err != nil {
			return nil, nil, []*Error{err}
		}
	}
	return c.gm, c.kernels, nil
}

// modelCompiler is the state of compiling one model. Its phases fill it
// in order: header (the element type), expand (the model through
// model.Compile: expanded, its shapes, each entry checked and
// compiled), params (the Go model and its parameters), entries (a
// kernel per entry point, and the backward kernel of the loss).
type modelCompiler struct {
	ms       *modelSrc
	typeName string
	elem     string
	// bf16: //ocannl:model bf16 (elem float32, the contractions on
	// bf16 operands; desc.Kernel.BF16).
	bf16 bool
	// mr is the model compiled by model.Compile (the expanded model
	// and its shapes: m and inf; each entry's kernel).
	mr  *model.Compiled
	m   *model.Model
	inf *model.Inferred
	gm  *desc.Model
	// index maps a parameter identity to its position in gm.Params.
	index   map[string]int
	kernels []*desc.Kernel
	// methods are the entry points' methods so far.
	methods map[string]*model.Entry
}

// header checks the //ocannl:model line and the type it annotates.
func (c *modelCompiler) header() *Error {
	ms := c.ms
	c.elem = "float32"
	switch ms.head.Arg {
	case "", "float32":
	case "float64":
		c.elem = "float64"
	case "bf16":
		c.bf16 = true
	default:
		return ms.head.errAt(ms.head.ArgCol, "//ocannl:model takes an optional element type, float32 (the default), float64 or bf16 (float32 with the contractions on bf16 operands), not %s", spec.Quote(ms.head.Arg))
	}
	if _, ok := ms.spec.Type.(*ast.StructType); !ok || ms.spec.TypeParams != nil {
		return ms.head.errAt(ms.head.VerbCol, "//ocannl:model belongs on a non-generic struct type (type %s struct { %s })", c.typeName, genTypeName(c.typeName))
	}
	if len(ms.lines) == 0 {
		return ms.head.errAt(ms.head.VerbCol, "model %s has no program: add //ocannl:layer, //ocannl:loss, //ocannl:entry ... lines after //ocannl:model", c.typeName)
	}
	return nil
}

// expand parses the model's lines and compiles the model through
// model.Compile (the pipeline `ocannlgen infer` runs): its layers
// expanded with the standard library, the shapes of every entry, and each
// entry checked and compiled. An expansion or inference error is
// reported here; an entry's error when entry reaches it, after the
// checks of the Go side that come before it.
func (c *modelCompiler) expand() *Error {
	ms := c.ms
	prog, perr := ms.program()
	if perr != nil {
		return perr
	}
	var err error
	if c.mr, err = model.Compile(prog); c.mr == nil {
		return ms.modelErr(err)
	}
	c.inf = c.mr.Inferred
	c.m = c.inf.Model
	ms.entries = c.m.Entries
	return nil
}

// params describes the Go model: its parameters (a field each, with the
// initializer) and the optimizer settings.
func (c *modelCompiler) params() *Error {
	ms := c.ms
	c.gm = &desc.Model{Type: c.typeName, Name: genTypeName(c.typeName), Elem: c.elem, Loss: -1}
	c.index = map[string]int{}
	fieldOwner := map[string]string{}
	roles := c.inf.ParamRoles()
	for _, p := range c.m.Params {
		s, ok := c.inf.Shapes[p.ID]
		if !ok {
			continue
		}
		f := goFieldName(p.ID)
		if o, dup := fieldOwner[f]; dup {
			return ms.errAt(p.Pos, "parameters %s and %s would both be stored in field %s; rename one", p.ID, o, f)
		}
		fieldOwner[f] = p.ID
		mp, err := c.param(p, s, f)
		if err != nil {
			return err
		}
		mp.Role, mp.Spatial = rtRole(roles[p.ID])
		if mp.Role == "RoleConvKernel" {
			mp.EvenPadded = roles[p.ID].EvenPadded
		}
		if mp.Role == "RoleLinearWeight" {
			mp.Flattened = roles[p.ID].Flattened
		}
		c.index[p.ID] = len(c.gm.Params)
		c.gm.Params = append(c.gm.Params, mp)
	}
	if o := c.m.Optim; o != nil {
		for _, v := range []float64{o.Momentum, o.WeightDecay, o.Beta1, o.Beta2, o.Eps} {
			if c.elem == "float32" && math.Abs(v) > math.MaxFloat32 {
				return ms.errAt(o.Pos, "%s: %g is beyond the float32 range (±%g)", o.Kind, v, float32(math.MaxFloat32))
			}
		}
		c.gm.Optim = &desc.ModelOptim{Kind: o.Kind, LR: o.LR, Momentum: o.Momentum, WeightDecay: o.WeightDecay, Nesterov: o.Nesterov,
			Beta1: o.Beta1, Beta2: o.Beta2, Eps: o.Eps, ClipNorm: o.ClipNorm,
			Schedule: o.Schedule, LREnd: o.LREnd, Steps: o.Steps, Warmup: o.Warmup, StepSize: o.StepSize, Gamma: o.Gamma}
	}
	return nil
}

// rtRole is the rt.Role constant of a parameter's role and its window
// axes (for a conv kernel).
func rtRole(r model.Role) (string, []int) {
	switch r.Kind {
	case model.RoleConvKernel:
		return "RoleConvKernel", r.Spatial
	case model.RoleLinearWeight:
		return "RoleLinearWeight", nil
	case model.RoleNormScale:
		return "RoleNormScale", nil
	case model.RoleBias:
		return "RoleBias", nil
	}
	return "RoleOther", nil
}

// param describes parameter p, of shape s, stored in field f.
func (c *modelCompiler) param(p *model.Param, s inference.Shape, f string) (desc.ModelParam, *Error) {
	ms := c.ms
	mp := desc.ModelParam{Field: f, ID: p.ID, Shape: s.String(), Dims: sizes(s.Dims()), State: p.State}
	mp.Init.FanIn, mp.Init.FanOut = prodDims(s.Input), prodDims(s.Output)
	switch p.Init {
	case model.InitUniform:
		mp.Init.Kind = "uniform"
	case model.InitConst:
		mp.Init.Kind, mp.Init.Value = "const", p.Value
		if c.elem == "float32" && math.Abs(p.Value) > math.MaxFloat32 {
			return mp, ms.errAt(p.Pos, "parameter %s: the initial value %g is beyond the float32 range (±%g); use a smaller value or //ocannl:model float64", p.ID, p.Value, float32(math.MaxFloat32))
		}
	case model.InitNormal:
		mp.Init.Kind = "normal"
	case model.InitKaiming:
		mp.Init.Kind = "kaiming"
		if len(s.Input) == 0 {
			return mp, ms.errAt(p.Pos, "kaiming initialization of %s needs input axes (its shape is %s)", p.ID, s)
		}
	case model.InitXavier:
		mp.Init.Kind = "xavier"
	case model.InitFanIn:
		mp.Init.Kind = "fan_in"
		if p.FanInOf != "" {
			ws, ok := c.inf.Shapes[p.FanInOf]
			if !ok {
				return mp, ms.errAt(p.Pos, "parameter %s: fan_in(%s): the layer has no parameter %s", p.ID, p.InitText[len("fan_in("):len(p.InitText)-1], p.FanInOf)
			}
			if len(ws.Input) == 0 {
				return mp, ms.errAt(p.Pos, "parameter %s: fan_in of %s needs input axes (its shape is %s)", p.ID, p.FanInOf, ws)
			}
			mp.Init.FanIn = prodDims(ws.Input)
			break
		}
		if len(s.Input) == 0 {
			return mp, ms.errAt(p.Pos, "fan_in initialization of %s needs input axes (its shape is %s)", p.ID, s)
		}
	case model.InitLiteral:
		vals, err := literalCells(c.inf, p.ID)
		if err != nil {
			return mp, ms.errAt(p.Pos, "parameter %s: %v", p.ID, err)
		}
		mp.Init.Kind, mp.Init.Values = "literal", vals
		for _, v := range vals {
			if c.elem == "float32" && math.Abs(v) > math.MaxFloat32 {
				return mp, ms.errAt(p.Pos, "parameter %s: the initial value %g is beyond the float32 range (±%g); use a smaller value or //ocannl:model float64", p.ID, v, float32(math.MaxFloat32))
			}
		}
	}
	return mp, nil
}

// entries compiles every entry point.
func (c *modelCompiler) entries() *Error {
	c.methods = map[string]*model.Entry{}
	for _, k := range c.mr.Kernels {
		if err := c.entry(k); err != nil {
			return err
		}
	}
	return nil
}

// entry adds the kernels of an entry point compiled by model.Compile, k:
// its forward kernel and, for the loss, the backward kernel. The entry's
// method name is checked first, then the entry's own error (k.Err) is
// reported.
func (c *modelCompiler) entry(k *model.EntryKernel) *Error {
	ms, gm, e := c.ms, c.gm, k.Entry
	method, merr := ms.entryMethod(e, c.methods)
	if merr != nil {
		return merr
	}
	if k.Err != nil {
		return ms.modelErr(k.Err)
	}
	kg := k.Kernel.Graph
	me, params := c.forward(k.Graph, kg, e, method, k.Kernel.Loops, k.Rows, k.RowsMean)
	if e.Loss {
		gm.Loss = len(gm.Entries) - 1
		c.backward(kg, e, me, params, k.Kernel.Gradients)
	}
	// The kernels for blocks of rows: the same kernels, on arrays of
	// b.Rows rows.
	for _, b := range k.Blocks {
		me := &gm.Entries[len(gm.Entries)-1]
		bg := b.Kernel.Graph
		if e.Loss && !sameGrads(e, kg, k.Kernel.Gradients, bg, b.Kernel.Gradients) {
			continue // Backward passes every kernel the same gradients
		}
		me.Blocks = append(me.Blocks, b.Rows)
		name := desc.BlockKernel(me.Kernel, b.Rows)
		params := c.kernelParams(bg, e, me.OutDims)
		fk := c.entryKernel(name, e, params, b.Kernel.Loops,
			fmt.Sprintf("Entry point %s of model %s on a block of %d rows (of at most %d).", e.Name, c.typeName, b.Rows, k.Rows))
		fk.RowBlock = true
		c.kernels = append(c.kernels, fk)
		if e.Loss {
			bk := c.backwardKernel(desc.BlockKernel(gm.Backward, b.Rows), bg, e, params, b.Kernel.Gradients,
				fmt.Sprintf("Forward and backward pass of loss %s of model %s on a block of %d rows (of at most %d).", e.Name, c.typeName, b.Rows, k.Rows))
			bk.RowBlock = true
			c.kernels = append(c.kernels, bk)
		}
	}
	return nil
}

// sameGrads reports whether the backward programs a (of graph ga) and b
// (of gb) of loss e compute the gradients of the same parameters.
func sameGrads(e *model.Entry, ga *inference.Graph, a *autodiff.Gradients, gb *inference.Graph, b *autodiff.Gradients) bool {
	for _, id := range e.Params {
		if (a.Of(model.Tensor(ga, id)) >= 0) != (b.Of(model.Tensor(gb, id)) >= 0) {
			return false
		}
	}
	return true
}

// kernelParams is the parameters of the kernel of entry e compiled from
// graph kg: its inputs, its parameters, then its result (a loss's: one
// cell, outDims).
func (c *modelCompiler) kernelParams(kg *inference.Graph, e *model.Entry, outDims []int) []desc.Param {
	gm := c.gm
	var params []desc.Param
	for _, in := range e.Inputs {
		kt := model.Tensor(kg, in.Name)
		params = append(params, desc.Param{Name: in.Name, Kind: desc.PtrArray, Tensor: kt, ArrayDims: orOne(sizes(kg.Tensors[kt].Shape.Dims()))})
	}
	for _, id := range e.Params {
		pi := c.index[id]
		params = append(params, desc.Param{Name: "p" + gm.Params[pi].Field, Kind: desc.PtrArray, Tensor: model.Tensor(kg, id), ArrayDims: []int{max(gm.Params[pi].Size(), 1)}})
	}
	// A loss's dropout masks (inputs the methods fill) and running
	// statistics (outputs TrainStep reads); an entry with run-time rows
	// has neither.
	for _, nz := range e.Noise {
		t := model.Tensor(kg, nz.Name)
		params = append(params, desc.Param{Name: "n" + goFieldName(nz.Name), Kind: desc.PtrArray, Tensor: t, ArrayDims: []int{max(prodDims(kg.Tensors[t].Shape.Dims()), 1)}})
	}
	for _, tr := range e.Tracks {
		t := model.Tensor(kg, tr.Stat)
		params = append(params, desc.Param{Name: "s" + goFieldName(tr.Stat), Kind: desc.PtrArray, Tensor: t, ArrayDims: []int{max(prodDims(kg.Tensors[t].Shape.Dims()), 1)}, Output: true})
	}
	krt := model.Tensor(kg, e.Result)
	if !e.Loss {
		outDims = orOne(sizes(kg.Tensors[krt].Shape.Dims()))
	}
	return append(params, desc.Param{Name: "out", Kind: desc.PtrArray, Tensor: krt, ArrayDims: outDims, Output: true})
}

// entryKernel is the kernel name of entry e, taking params, lowered to
// lp, documented by doc.
func (c *modelCompiler) entryKernel(name string, e *model.Entry, params []desc.Param, lp *loopir.Program, doc string) *desc.Kernel {
	return &desc.Kernel{Name: name, Elem: c.elem, BF16: c.bf16, Params: params, Prog: lp, Doc: []string{doc},
		// Intermediates of more than 64 KiB go to a scratch struct held
		// by the model (Go moves a local array of more than 128 KiB
		// to the heap); every CPU target's Loops.ScratchOver is the same.
		Scratch: name + "Scratch", ScratchOver: target.Generic().Loops.ScratchOver, PoolParam: true, ScratchOwned: true}
}

// forward adds the kernel and the model entry of entry point e, lowered
// to lp, and returns the entry and the kernel's parameters. The method's
// arrays have the shapes of g, the kernel's those of kg (g itself, or
// the entry with one row when it has run-time rows, at most rows; mean:
// its loss divides by them).
func (c *modelCompiler) forward(g, kg *inference.Graph, e *model.Entry, method string, lp *loopir.Program, rows int, mean bool) (desc.ModelEntry, []desc.Param) {
	gm := c.gm
	me := desc.ModelEntry{Method: method, Kernel: gm.Name + method, Loss: e.Loss, Rows: rows, RowsMean: mean}
	for _, in := range e.Inputs {
		t := model.Tensor(g, in.Name)
		dims := sizes(g.Tensors[t].Shape.Dims())
		me.Inputs = append(me.Inputs, desc.ModelInput{Name: in.Name, Dims: dims, Rows: rows > 0 && model.HasRows(g.Tensors[t].Shape), IndexBound: g.Tensors[t].IndexBound})
	}
	for _, id := range e.Params {
		me.Params = append(me.Params, c.index[id])
	}
	for _, nz := range e.Noise {
		t := model.Tensor(kg, nz.Name)
		me.Noise = append(me.Noise, desc.ModelNoise{Field: goFieldName(nz.Name), Size: max(prodDims(kg.Tensors[t].Shape.Dims()), 1), P: nz.P, Key: rt.ParamKey(nz.Name)})
	}
	for _, tr := range e.Tracks {
		t := model.Tensor(kg, tr.Stat)
		counter := -1
		if tr.Counter != "" {
			counter = c.index[tr.Counter]
		}
		me.Tracks = append(me.Tracks, desc.ModelTrack{State: c.index[tr.State], StatField: goFieldName(tr.Stat), Size: max(prodDims(kg.Tensors[t].Shape.Dims()), 1), Momentum: tr.Momentum, Counter: counter})
	}
	res := g.Tensors[model.Tensor(g, e.Result)]
	outDims := orOne(sizes(res.Shape.Dims()))
	if e.Loss {
		outDims = []int{1}
	}
	me.OutDims = outDims
	params := c.kernelParams(kg, e, outDims)
	doc := fmt.Sprintf("%s runs entry point %s of %s", method, e.Name, c.typeName)
	switch {
	case e.Loss && rows > 0:
		doc += fmt.Sprintf(" (forward only) on the first n rows of its inputs and returns the loss (1 <= n <= %d, otherwise it returns an *rt.RowsError).", rows)
	case e.Loss:
		doc += " (forward only) and returns the loss."
	case rows > 0:
		doc += fmt.Sprintf(" on the first n rows of its inputs (0 <= n <= %d, otherwise it returns an *rt.RowsError and reads and writes nothing)"+
			" and returns its result, shape %s, held in m until the next call: rows n and after keep what they held.", rows, res.Shape)
	default:
		doc += fmt.Sprintf(" and returns its result, shape %s, held in m until the next call.", res.Shape)
	}
	me.Doc = doc + " It does not allocate."
	kdoc := fmt.Sprintf("Entry point %s of model %s.", e.Name, c.typeName)
	if rows > 0 {
		kdoc = fmt.Sprintf("Entry point %s of model %s on one row (of at most %d).", e.Name, c.typeName, rows)
	}
	c.kernels = append(c.kernels, c.entryKernel(me.Kernel, e, params, lp, kdoc))
	gm.Entries = append(gm.Entries, me)
	return me, params
}

// backward adds the forward-and-backward kernel of the loss e, whose
// forward entry me takes params, from its gradients gr.
func (c *modelCompiler) backward(g *inference.Graph, e *model.Entry, me desc.ModelEntry, params []desc.Param, gr *autodiff.Gradients) {
	gm := c.gm
	gm.BackwardParams = me.Params
	for _, id := range e.Params {
		if pi := c.index[id]; gr.Of(model.Tensor(g, id)) >= 0 {
			gm.BackwardGrads = append(gm.BackwardGrads, pi)
		}
	}
	gm.Backward = gm.Name + "Backward"
	doc := fmt.Sprintf("Forward and backward pass of loss %s of model %s.", e.Name, c.typeName)
	if me.Rows > 0 {
		doc = fmt.Sprintf("Forward and backward pass of loss %s of model %s on one row (of at most %d).", e.Name, c.typeName, me.Rows)
	}
	c.kernels = append(c.kernels, c.backwardKernel(gm.Backward, g, e, params, gr, doc))
}

// backwardKernel is the forward-and-backward kernel name of the loss e,
// compiled from graph g, whose forward kernel takes params, from its
// gradients gr: the inputs and parameters, the gradients of
// Model.BackwardGrads, then the loss.
func (c *modelCompiler) backwardKernel(name string, g *inference.Graph, e *model.Entry, params []desc.Param, gr *autodiff.Gradients, doc string) *desc.Kernel {
	gm := c.gm
	var bparams []desc.Param
	bparams = append(bparams, params[:len(e.Inputs)+len(e.Params)+len(e.Noise)+len(e.Tracks)]...)
	for _, id := range e.Params {
		pi := c.index[id]
		gt := gr.Of(model.Tensor(g, id))
		if gt < 0 {
			continue
		}
		bparams = append(bparams, desc.Param{Name: "g" + gm.Params[pi].Field, Kind: desc.PtrArray, Tensor: gt, ArrayDims: []int{max(gm.Params[pi].Size(), 1)}, Output: true})
	}
	rt := model.Tensor(g, e.Result)
	bparams = append(bparams, desc.Param{Name: "loss", Kind: desc.PtrArray, Tensor: rt, ArrayDims: []int{1}, Output: true})
	return &desc.Kernel{Name: name, Elem: c.elem, BF16: c.bf16, Params: bparams, Prog: gr.Program, Doc: []string{doc},
		Scratch: name + "Scratch", ScratchOver: target.Generic().Loops.ScratchOver, PoolParam: true, ScratchOwned: true}
}

// entryMethod returns the Go method of entry e, an error when it is one
// every model has or one an earlier entry (in methods) generates, and
// records it in methods.
func (ms *modelSrc) entryMethod(e *model.Entry, methods map[string]*model.Entry) (string, *Error) {
	method := methodName(e.Name, e.Loss)
	if reservedMethods[method] {
		return "", ms.errAt(e.Pos, "entry point %s would generate method %s, a name the generated model uses for a field, method or type; rename it", e.Name, method)
	}
	if o := methods[method]; o != nil {
		msg, rel := new(spec.Message).Printf("entry points %s and %s (", e.Name, o.Name).Cite(o.Pos, "entry point "+o.Name).
			Printf(") would both generate method %s; rename one", method).Done()
		return "", ms.cited(e.Pos, "", msg, rel)
	}
	methods[method] = e
	return method, nil
}

// modelErr converts an error of model.Compile: of expansion, of
// inference, or an entry's (model.EntryKernel.Err).
func (ms *modelSrc) modelErr(err error) *Error {
	var me *model.Error
	if errors.As(err, &me) {
		return ms.cited(me.Pos, "", me.Msg, me.Related)
	}
	var ee *model.EntryError
	if errors.As(err, &ee) {
		if ie, ok := inference.AsError(ee.Err); ok {
			msg, rel := ie.Uncited()
			return ms.cited(ie.Pos, fmt.Sprintf("%s (entry %s): ", ie.Kind, ee.Entry), msg, rel)
		}
		return ms.errAt(spec.Pos{}, "entry %s: %v", ee.Entry, ee.Err)
	}
	return ms.errAt(spec.Pos{}, "%v", err)
}

func sizes(ds []inference.Dim) []int {
	out := make([]int, len(ds))
	for i, d := range ds {
		out[i] = d.Size
	}
	return out
}

func prodDims(ds []inference.Dim) int {
	n := 1
	for _, d := range ds {
		n *= d.Size
	}
	return n
}

func orOne(ds []int) []int {
	if len(ds) == 0 {
		return []int{1}
	}
	return ds
}

// literalCells returns the initial cells of a literal-initialized
// parameter, in memory order, from any graph that holds it.
func literalCells(inf *model.Inferred, id string) ([]float64, error) {
	for _, g := range inf.Graphs {
		t := model.Tensor(g, id)
		if t < 0 {
			continue
		}
		ti := g.Tensors[t]
		if ti.Init.Kind != inference.InitValues {
			return nil, fmt.Errorf("its literal initializer was not recorded")
		}
		return append([]float64(nil), ti.Init.Values...), nil
	}
	return nil, fmt.Errorf("not used by any entry point")
}

// StateWarnBytes is the size of a model's state above which Generate
// warns (Result.Warnings) without failing: 1 GiB. The state counted is
// everything the generated struct (ocannlM of model M) holds, as
// unsafe.Sizeof reports it on the target: the parameters, their
// gradients, the optimizer's buffers (SGD's momentum, Adam's two
// moments), a second set of gradients for a loss with run-time rows (its
// calls after the first, on blocks of rows, write there), the entry
// points' results, the kernels' scratch space, and the small fields
// (Pool, Step, LR). The generator sizes the struct from the code it
// emits (go/types, with the target's sizes), not from a list of what it
// holds; Result.StateSizes reports it. A runner (NewRunner) holds its
// own results and scratch on top. A model this large generates and
// compiles, and a value of it may then not fit in memory
// (dense[100000] on a 100000-wide input needs 112 GiB).
const StateWarnBytes = 1 << 30

// stateGroups names the fields of a model's generated struct in the
// warning; the results (out*, loss), the scratch areas (scratch*) and
// the other fields are counted together.
var stateGroups = map[string]string{
	"Params": "Params", "Grads": "Grads", "momentum": "momentum",
	"adamM": "Adam's first moments", "adamV": "Adam's second moments",
	"rowGrads": "the gradients of later blocks of rows",
}

// stateWarning returns a warning when the state of gm (st, the size of
// its generated struct) needs more than StateWarnBytes, positioned at
// the //ocannl:model line; nil otherwise.
func stateWarning(ms *modelSrc, gm *desc.Model, st *stateSize) *Error {
	if st == nil || st.total <= StateWarnBytes {
		return nil
	}
	var order []string
	sums := map[string]int64{}
	for _, f := range st.fields {
		g := stateGroups[f.name]
		switch {
		case g != "":
		case f.name == "loss" || strings.HasPrefix(f.name, "out"):
			g = "results"
		case strings.HasPrefix(f.name, "scratch"):
			g = "the kernels' scratch space"
		default:
			g = "the other fields"
		}
		if _, seen := sums[g]; !seen && g != "the other fields" {
			order = append(order, g)
		}
		sums[g] += f.size
	}
	var parts []string
	for _, g := range append(order, "the other fields") {
		if sums[g] > 0 {
			parts = append(parts, g+" "+byteSize(float64(sums[g])))
		}
	}
	params := 0.0 // float64: a product of sizes can exceed an int
	for i := range gm.Params {
		c := 1.0
		for _, d := range gm.Params[i].Dims {
			c *= float64(d)
		}
		params += c
	}
	return ms.head.errAt(ms.head.VerbCol, "warning: model %s needs %s for its state (the struct %s: %.0f %s parameters; %s), more than the %s at which ocannlgen warns: a value of it may not fit in memory",
		ms.spec.Name.Name, byteSize(float64(st.total)), gm.Name, params, gm.Elem, strings.Join(parts, ", "), byteSize(StateWarnBytes))
}

// byteSize formats a number of bytes in binary units, with one decimal
// above the KiB.
func byteSize(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", b)
	}
	return fmt.Sprintf("%.1f %s", b, units[i])
}

// ModelKernels are the kernels `go generate` renders for model cm
// (compiled by model.Compile, without error) of Go type typeName in
// element type elem ("float32" or "float64", or "bf16" for
// //ocannl:model bf16): each entry's kernel and the loss's backward
// kernel, as desc.Kernels (`ocannlgen infer --schedule` schedules them).
func ModelKernels(cm *model.Compiled, typeName, elem string) ([]*desc.Kernel, error) {
	if cm == nil || cm.Inferred == nil {
		return nil, fmt.Errorf("model %s is not compiled", typeName)
	}
	ms := &modelSrc{head: &directive{}, spec: &ast.TypeSpec{Name: ast.NewIdent(typeName)}}
	bf16 := elem == "bf16"
	if bf16 {
		elem = "float32"
	}
	c := &modelCompiler{ms: ms, typeName: typeName, elem: elem, bf16: bf16, mr: cm, inf: cm.Inferred, m: cm.Inferred.Model}
	for _, phase := range []func() *Error{c.params, c.entries} {
		if err := phase(); err != nil {
			return nil, err
		}
	}
	return c.kernels, nil
}

// ProgramKernel is the kernel `go generate` makes of a tensor program
// for a function binding every named tensor to a parameter (written ones
// as outputs), with a pooled scratch for the large locals: what
// `ocannlgen infer --schedule` and `ocannlgen explain` schedule.
func ProgramKernel(prog *loopir.Program, g *inference.Graph) *desc.Kernel {
	written := loopir.Written(prog)
	kn := &desc.Kernel{Name: "Program", Elem: "float32", Prog: prog, Scratch: "ProgramScratch", ScratchOver: KernelScratchOver, PoolScratch: true}
	for i, n := range g.Named {
		kn.Params = append(kn.Params, desc.Param{Name: "p" + strconv.Itoa(i), Kind: desc.PtrArray, Tensor: n.Tensor, Output: written[n.Tensor]})
	}
	return kn
}
