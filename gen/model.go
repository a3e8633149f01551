package gen

import (
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ocannlgen/ocannlgen/autodiff"
	"github.com/ocannlgen/ocannlgen/emit/gocode"
	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/model"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// Model directive verbs: `//ocannl:model [float32|float64]` opens a
// model on a struct type; the following directives are its program's
// lines, each starting with the statement's keyword.
const verbModel = "model"

var modelLineVerbs = map[string]bool{
	"layer": true, "entry": true, "loss": true, "input": true, "let": true,
	"dim": true, "return": true, "sgd": true,
}

// reservedMethods are the methods every model has; entry points must not
// take their names.
var reservedMethods = map[string]bool{
	"Init": true, "Backward": true, "Update": true, "TrainStep": true, "LearningRate": true,
	"ParamTensors": true, "Save": true, "Load": true, "MarshalBinary": true, "UnmarshalBinary": true,
}

// modelSrc is an annotated struct type and its directives.
type modelSrc struct {
	fset  *token.FileSet
	spec  *ast.TypeSpec
	head  *directive   // the //ocannl:model line
	lines []*directive // the program lines
	// entries are the expanded model's entry points (set by
	// compileModel), for positions.
	entries []*model.Entry
}

// genTypeName is the generated struct's name for a model type.
func genTypeName(name string) string { return genName(name) }

// methodName is an entry point's Go method name.
func methodName(entry string) string {
	r, n := utf8.DecodeRuneInString(entry)
	return string(unicode.ToUpper(r)) + entry[n:]
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
func (ms *modelSrc) position(p program.Pos) token.Position {
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

func (ms *modelSrc) errAt(p program.Pos, format string, args ...any) *Error {
	where := ms.position(p)
	msg := fmt.Sprintf(format, args...)
	msg = rewritePositions(msg, where, func(line, col int) token.Position {
		return ms.position(program.Pos{Line: line, Col: col})
	})
	return &Error{Pos: where, Msg: msg}
}

// compileModel expands, infers and lowers a model and describes its Go
// side.
func compileModel(ms *modelSrc) (*gocode.Model, []*gocode.Kernel, []*Error) {
	typeName := ms.spec.Name.Name
	elem := "float32"
	switch ms.head.Arg {
	case "", "float32":
	case "float64":
		elem = "float64"
	default:
		return nil, nil, []*Error{ms.head.errAt(ms.head.ArgCol, "//ocannl:model takes an optional element type, float32 (the default) or float64, not %q", ms.head.Arg)}
	}
	if _, ok := ms.spec.Type.(*ast.StructType); !ok || ms.spec.TypeParams != nil {
		return nil, nil, []*Error{ms.head.errAt(ms.head.VerbCol, "//ocannl:model belongs on a non-generic struct type (type %s struct { %s })", typeName, genTypeName(typeName))}
	}
	if len(ms.lines) == 0 {
		return nil, nil, []*Error{ms.head.errAt(ms.head.VerbCol, "model %s has no program: add //ocannl:layer, //ocannl:loss, //ocannl:entry ... lines after //ocannl:model", typeName)}
	}
	var text strings.Builder
	for _, d := range ms.lines {
		text.WriteString(d.Text[len(dirPrefix):])
		text.WriteByte('\n')
	}
	prog, err := program.Parse(text.String())
	if err != nil {
		var pe *program.Error
		if errors.As(err, &pe) {
			return nil, nil, []*Error{ms.errAt(pe.Pos, "%s", pe.Msg)}
		}
		return nil, nil, []*Error{ms.head.errAt(ms.head.VerbCol, "%v", err)}
	}
	std, err := program.Parse(model.StdSource())
	if err != nil {
		return nil, nil, []*Error{ms.head.errAt(ms.head.VerbCol, "internal error: the standard library does not parse: %v", err)}
	}
	m, err := model.Expand(prog, std)
	if err != nil {
		return nil, nil, []*Error{ms.modelErr(err)}
	}
	inf, err := m.Infer()
	if err != nil {
		return nil, nil, []*Error{ms.modelErr(err)}
	}
	ms.entries = m.Entries
	gm := &gocode.Model{Type: typeName, Name: genTypeName(typeName), Elem: elem, Loss: -1}
	// Parameters.
	index := map[string]int{}
	fieldOwner := map[string]string{}
	for _, p := range m.Params {
		s, ok := inf.Shapes[p.ID]
		if !ok {
			continue
		}
		f := goFieldName(p.ID)
		if o, dup := fieldOwner[f]; dup {
			return nil, nil, []*Error{ms.errAt(p.Pos, "parameters %s and %s would both be stored in field %s; rename one", p.ID, o, f)}
		}
		fieldOwner[f] = p.ID
		mp := gocode.ModelParam{Field: f, ID: p.ID, Shape: s.String(), Dims: sizes(s.Dims())}
		mp.Init.FanIn, mp.Init.FanOut = prodDims(s.Input), prodDims(s.Output)
		switch p.Init {
		case model.InitUniform:
			mp.Init.Kind = "uniform"
		case model.InitConst:
			mp.Init.Kind, mp.Init.Value = "const", p.Value
			if elem == "float32" && math.Abs(p.Value) > math.MaxFloat32 {
				return nil, nil, []*Error{ms.errAt(p.Pos, "parameter %s: the initial value %g is beyond the float32 range (±%g); use a smaller value or //ocannl:model float64", p.ID, p.Value, float32(math.MaxFloat32))}
			}
		case model.InitNormal:
			mp.Init.Kind = "normal"
		case model.InitKaiming:
			mp.Init.Kind = "kaiming"
			if len(s.Input) == 0 {
				return nil, nil, []*Error{ms.errAt(p.Pos, "kaiming initialization of %s needs input axes (its shape is %s)", p.ID, s)}
			}
		case model.InitXavier:
			mp.Init.Kind = "xavier"
		case model.InitLiteral:
			vals, err := literalCells(inf, p.ID)
			if err != nil {
				return nil, nil, []*Error{ms.errAt(p.Pos, "parameter %s: %v", p.ID, err)}
			}
			mp.Init.Kind, mp.Init.Values = "literal", vals
			for _, v := range vals {
				if elem == "float32" && math.Abs(v) > math.MaxFloat32 {
					return nil, nil, []*Error{ms.errAt(p.Pos, "parameter %s: the initial value %g is beyond the float32 range (±%g); use a smaller value or //ocannl:model float64", p.ID, v, float32(math.MaxFloat32))}
				}
			}
		}
		index[p.ID] = len(gm.Params)
		gm.Params = append(gm.Params, mp)
	}
	if m.Optim != nil {
		o := m.Optim
		for _, v := range []float64{o.Momentum, o.WeightDecay} {
			if elem == "float32" && math.Abs(v) > math.MaxFloat32 {
				return nil, nil, []*Error{ms.errAt(o.Pos, "sgd: %g is beyond the float32 range (±%g)", v, float32(math.MaxFloat32))}
			}
		}
		gm.Optim = &gocode.ModelOptim{LR: o.LR, Momentum: o.Momentum, WeightDecay: o.WeightDecay, Nesterov: o.Nesterov, LREnd: o.LREnd, Steps: o.Steps}
	}
	var kernels []*gocode.Kernel
	methods := map[string]bool{}
	for i, e := range m.Entries {
		g := inf.Graphs[i]
		method := methodName(e.Name)
		if reservedMethods[method] || methods[method] {
			return nil, nil, []*Error{ms.errAt(e.Pos, "entry point %s would generate method %s, which %s; rename it", e.Name, method,
				map[bool]string{true: "every model has", false: "another entry point generates"}[reservedMethods[method]])}
		}
		methods[method] = true
		if err := inference.DeriveProjections(g); err != nil {
			return nil, nil, []*Error{ms.modelErr(&model.EntryError{Entry: e.Name, Err: err})}
		}
		me := gocode.ModelEntry{Method: method, Kernel: gm.Name + method, Loss: e.Loss}
		var params []gocode.Param
		for _, in := range e.Inputs {
			t := model.Tensor(g, in.Name)
			dims := sizes(g.Tensors[t].Shape.Dims())
			me.Inputs = append(me.Inputs, gocode.ModelInput{Name: in.Name, Dims: dims})
			params = append(params, gocode.Param{Name: in.Name, Kind: gocode.PtrArray, Tensor: t, ArrayDims: orOne(dims)})
		}
		for _, id := range e.Params {
			pi := index[id]
			me.Params = append(me.Params, pi)
			params = append(params, gocode.Param{Name: "p" + gm.Params[pi].Field, Kind: gocode.PtrArray, Tensor: model.Tensor(g, id), ArrayDims: []int{max(gm.Params[pi].Size(), 1)}})
		}
		rt := model.Tensor(g, e.Result)
		res := g.Tensors[rt]
		if res.Op < 0 {
			return nil, nil, []*Error{ms.errAt(e.ResultPos, "entry %s returns %s, which no operation computes (it is the %s %s); return a value computed from it (e.g. id %s)", e.Name, e.Result, res.Kind, res.Name, e.Result)}
		}
		if e.Loss && res.Shape.Size() != 1 {
			return nil, nil, []*Error{ms.errAt(e.ResultPos, "the loss %s must be a single number, but its shape is %s (reduce it, e.g. with ++ \"...|... => 0\")", e.Name, res.Shape)}
		}
		outDims := orOne(sizes(res.Shape.Dims()))
		if e.Loss {
			outDims = []int{1}
		}
		me.OutDims = outDims
		params = append(params, gocode.Param{Name: "out", Kind: gocode.PtrArray, Tensor: rt, ArrayDims: outDims, Output: true})
		lp, err := loopir.Lower(g)
		if err != nil {
			return nil, nil, []*Error{ms.modelErr(&model.EntryError{Entry: e.Name, Err: err})}
		}
		doc := fmt.Sprintf("%s runs entry point %s of %s", method, e.Name, typeName)
		if e.Loss {
			doc += " (forward only) and returns the loss."
		} else {
			doc += fmt.Sprintf(" and returns its result, shape %s, held in m until the next call.", res.Shape)
		}
		me.Doc = doc + " It does not allocate."
		kernels = append(kernels, &gocode.Kernel{Name: me.Kernel, Elem: elem, Params: params, Prog: lp,
			Doc: []string{fmt.Sprintf("Entry point %s of model %s.", e.Name, typeName)},
			// Intermediates of more than 64 KiB go to a scratch struct held
			// by the model (Go moves a local array of more than 128 KiB
			// to the heap).
			Scratch: me.Kernel + "Scratch", ScratchOver: gocode.DefaultScratchOver})
		gm.Entries = append(gm.Entries, me)
		if !e.Loss {
			continue
		}
		gm.Loss = len(gm.Entries) - 1
		gr, err := autodiff.BackwardParams(g, rt)
		if errors.Is(err, autodiff.ErrNoParameter) {
			return nil, nil, []*Error{ms.errAt(e.Pos, "%s", noParamMsg(e.Name))}
		}
		if err != nil {
			return nil, nil, []*Error{ms.errAt(e.Pos, "loss %s: %v", e.Name, err)}
		}
		var bparams []gocode.Param
		bparams = append(bparams, params[:len(e.Inputs)+len(e.Params)]...)
		gm.BackwardParams = me.Params
		for _, id := range e.Params {
			pi := index[id]
			gt := gr.Of(model.Tensor(g, id))
			if gt < 0 {
				continue
			}
			gm.BackwardGrads = append(gm.BackwardGrads, pi)
			bparams = append(bparams, gocode.Param{Name: "g" + gm.Params[pi].Field, Kind: gocode.PtrArray, Tensor: gt, ArrayDims: []int{max(gm.Params[pi].Size(), 1)}, Output: true})
		}
		bparams = append(bparams, gocode.Param{Name: "loss", Kind: gocode.PtrArray, Tensor: rt, ArrayDims: []int{1}, Output: true})
		gm.Backward = gm.Name + "Backward"
		kernels = append(kernels, &gocode.Kernel{Name: gm.Backward, Elem: elem, Params: bparams, Prog: gr.Program,
			Doc:     []string{fmt.Sprintf("Forward and backward pass of loss %s of model %s.", e.Name, typeName)},
			Scratch: gm.Backward + "Scratch", ScratchOver: gocode.DefaultScratchOver})
	}
	return gm, kernels, nil
}

// noParamMsg explains why a loss that depends on no parameter is an
// error (autodiff.ErrNoParameter).
func noParamMsg(entry string) string {
	return fmt.Sprintf("the loss %s depends on no parameter (through differentiable operations), so training it would change nothing; make it depend on one, or declare it with entry instead of loss", entry)
}

// modelErr converts an expansion or inference error.
func (ms *modelSrc) modelErr(err error) *Error {
	var me *model.Error
	if errors.As(err, &me) {
		return ms.errAt(me.Pos, "%s", me.Msg)
	}
	var ee *model.EntryError
	if errors.As(err, &ee) {
		if ie, ok := inference.AsError(ee.Err); ok {
			return ms.errAt(program.Pos{Line: ie.Pos.Line, Col: ie.Pos.Col}, "%s (entry %s): %s", ie.Kind, ee.Entry, ie.Detail())
		}
		return ms.errAt(program.Pos{}, "entry %s: %v", ee.Entry, ee.Err)
	}
	return ms.errAt(program.Pos{}, "%v", err)
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
