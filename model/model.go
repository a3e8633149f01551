// Package model expands a model program (docs/language.md, "Models and
// layers") into one flat program per entry point: layers are inlined at
// each application with fresh intermediate tensors (the seeds'
// polymorphism by application), parameters get stable identities from the
// instance path (the unit-parameter idiom), and configuration arguments
// are substituted. The flat programs then go through shape inference like
// any other program. Compile runs a model program through the whole
// pipeline (expansion, inference, each entry's rules and kernels): the
// one sequence the go:generate driver and `ocannlgen infer` share. It is
// a generator-side package.
package model

import (
	_ "embed"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/ocannlgen/ocannlgen/ops"
	"github.com/ocannlgen/ocannlgen/spec"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

//go:embed std.ocl
var stdSource string

// StdSource returns the text of the standard block library, which every
// model can use.
func StdSource() string { return stdSource }

// Model is an expanded model.
type Model struct {
	// Entries are the entry points in source order.
	Entries []*Entry
	// Params are the parameters used by some entry, in order of first use
	// (entries in source order).
	Params []*Param
	// Optim is the optimizer's settings; nil when the model has no sgd line.
	Optim *Optim
}

// Entry is one entry point, expanded.
type Entry struct {
	Name string
	Loss bool
	Pos  spec.Pos
	// Inputs are the entry's input declarations, in order (they are also
	// the first statements of Prog).
	Inputs []*program.InputStmt
	// Prog is the flat program: inputs, inlined layer bodies, and the
	// result.
	Prog *program.Program
	// Result is the name of the result tensor in Prog; ResultPos is the
	// position of the return expression.
	Result    string
	ResultPos spec.Pos
	// Params are the identities of the parameters the entry uses, in order
	// of first use.
	Params []string
	// ParamPos is where each parameter is first used in this entry (the
	// inline parameter, or the application site for a library layer).
	ParamPos map[string]spec.Pos
	// Tracks are the running statistics a loss entry updates after each
	// training step (running(...), the standard batch_norm).
	Tracks []Track
	// Noise are the dropout masks of a loss entry (`{mask = dropout(p)}`,
	// the standard layer dropout[p]), leaves of Prog that the generated
	// methods fill at every training step; in other entries a dropout is
	// the identity.
	Noise []Noise

	// argUses maps each spec operation of Prog inlined from a layer body
	// to its operands that are the layer's tensor arguments (nil for the
	// others), to explain shape errors at the application (argshape.go).
	argUses map[program.Expr][]*argUse
}

// InitKind is how a parameter is initialized.
type InitKind int

// Initialization kinds.
const (
	// InitUniform is OCANNL's default: 0.5·(u − 0.5), uniform on [−0.25, 0.25).
	InitUniform InitKind = iota
	// InitConst fills every cell with Value.
	InitConst
	// InitLiteral fills the cells from a numeric literal (Literal).
	InitLiteral
	// InitNormal draws N(0, 1) (Box–Muller).
	InitNormal
	// InitKaiming draws N(0, 2/fan_in).
	InitKaiming
	// InitXavier draws N(0, 2/(fan_in + fan_out)).
	InitXavier
	// InitFanIn draws uniformly on ±1/sqrt(fan_in): PyTorch's default
	// for the weights of nn.Linear and nn.Conv2d (kaiming_uniform_ with
	// a = sqrt(5)), rt.FanInUniform.
	InitFanIn
)

// Param is a learnable parameter of the model.
type Param struct {
	// ID is the parameter's identity: the dotted instance path and the
	// parameter's name (`net.w1`). It keys the random initialization.
	ID   string
	Pos  spec.Pos
	Init InitKind
	// Value is the constant of InitConst.
	Value float64
	// Literal is the literal of InitLiteral.
	Literal *program.Literal
	// InitText is the initializer as written, for comparing declarations.
	InitText string
	// FanInOf, for InitFanIn written `fan_in(w)`, is the identity of the
	// parameter whose fan-in bounds the draw (PyTorch's bias of a linear
	// or convolution layer takes its weight's); "" for the parameter's own.
	FanInOf string
	// State marks model state that is not trained: a running statistic
	// (the second argument of running(...)) or a step counter. It is
	// saved and loaded with the parameters but gets no gradient and no
	// optimizer update; TrainStep updates it (Entry.Tracks).
	State bool
	// Counter marks a state counting training steps (a scalar: no axes).
	Counter bool
}

// Optim holds the optimizer's settings.
type Optim struct {
	Pos spec.Pos
	// Kind is "sgd", "adam" or "adamw".
	Kind        string
	LR          float64
	Momentum    float64 // sgd
	WeightDecay float64
	Nesterov    bool // sgd
	// Beta1, Beta2 and Eps are Adam's (adam, adamw; defaults 0.9, 0.999,
	// 1e-8).
	Beta1, Beta2, Eps float64
	// ClipNorm > 0 clips the gradients by their global norm before every
	// step (any kind).
	ClipNorm float64
	// Schedule is the learning-rate schedule: "constant", "linear"
	// (from LR to LREnd over Steps steps), "cosine" (half a cosine from
	// LR to LREnd over Steps steps) or "step" (LR times Gamma every
	// StepSize steps); Warmup steps first rise linearly to LR (see
	// rt.LRSchedule, which each is equal to PyTorch's scheduler).
	Schedule string
	LREnd    float64
	Steps    int
	Warmup   int
	StepSize int
	Gamma    float64
}

// Error is an expansion error, or an entry's error that the model
// rules (not shape inference) find, at a position of the model text.
type Error struct {
	Pos spec.Pos
	// Msg is the message without the citations of Related positions.
	Msg string
	// Related are the other positions of the model text Msg cites (the
	// first of two conflicting definitions).
	Related []spec.Related
	// Err, when not nil, is the error Msg explains (the backward pass's
	// autodiff.ErrNoParameter, say).
	Err error
}

// Error renders the error as LINE:COL: message, citing related
// positions as LINE:COL.
func (e *Error) Error() string { return e.Pos.String() + ": " + e.Message() }

// Message is the message with its citations, without the error's own
// position.
func (e *Error) Message() string { return spec.Cite(e.Msg, e.Related, spec.Pos.String) }

// Unwrap returns the error Msg explains, or nil.
func (e *Error) Unwrap() error { return e.Err }

// maxDepth bounds the nesting of layer applications.
const maxDepth = 64

// maxApplications and maxStatements bound the layer applications inlined
// into one entry and the statements of its flat program: layers applying
// each other twice at every level would otherwise expand exponentially.
// Real models stay far below (a 96-block transformer applies about 1,000
// layers).
const (
	maxApplications = 2000
	maxStatements   = 20000
)

// layerDef is a layer definition and where it comes from.
type layerDef struct {
	st  *program.LayerStmt
	std bool
	// alt is the other definition of the same name, which differs in the
	// arguments declared `NAME : index` (cross_entropy with one-hot or
	// index targets); an application takes the one its arguments fit.
	alt *layerDef
}

// cfgVal is a configuration value.
type cfgVal struct {
	num   float64
	str   string
	isStr bool
}

func (v cfgVal) text() string {
	if v.isStr {
		return v.str
	}
	if v.num == math.Trunc(v.num) && math.Abs(v.num) < 1e15 {
		return strconv.FormatInt(int64(v.num), 10)
	}
	return strconv.FormatFloat(v.num, 'g', -1, 64)
}

// instance is an instantiated layer: its configuration and nested
// instances. Its parameters are named path.NAME.
type instance struct {
	def  *layerDef
	cfg  map[string]cfgVal
	path string
	// name is the name a let bound the instance to, "" for an anonymous
	// instance.
	name string
	// children are the instances bound by let in the body, and the
	// anonymous instances keyed by their call.
	children map[string]*instance
	anon     map[*program.Call]*instance
	anonN    map[string]int
	// apps counts the applications in the current entry (for fresh names).
	apps int
}

// binding is what a name stands for in a scope.
type binding struct {
	tensor string // flat tensor name
	inst   *instance
	cfg    *cfgVal
}

// scope is the environment of a layer body or entry.
type scope struct {
	vars map[string]binding
	// inst is the instance whose body this is (nil in an entry).
	inst *instance
	// prefix names the scope's intermediate tensors.
	prefix string
	// paramPath prefixes the identities of inline parameters.
	paramPath string
	// anonOwner holds the anonymous instances of the scope.
	anonOwner *instance
	// at maps a position of the body to the position reported (library
	// layers report the application site).
	at func(spec.Pos) spec.Pos
	// lexical is true in a layer body: unknown names are errors there.
	lexical bool
	// app is the application whose body this is (nil in an entry), and
	// fromArg maps the body's names that are a tensor argument, or a let
	// computed from one by pointwise functions, to the argument's index.
	app     *application
	fromArg map[string]int
}

// expander holds the state of one expansion.
type expander struct {
	layers map[string]*layerDef
	top    map[string]*instance
	params map[string]*Param
	order  []string
	// per entry:
	out      []program.Stmt
	used     map[string]bool
	entry    *Entry
	stack    []string
	names    map[string]bool
	entryTop *instance // holds the entry's own anonymous and let instances
	apps     int       // layer applications inlined into the entry so far
	// indexed holds the flat names bound to an index input.
	indexed map[string]bool
	// discarded: an evaluation entry applied running(...), whose
	// statistic the entry does not compute (dropDead removes it).
	discarded bool
}

func fail(p spec.Pos, format string, args ...any) error {
	return &Error{Pos: p, Msg: fmt.Sprintf(format, args...)}
}

// failCited returns an error at p with a message that cites positions.
func failCited(p spec.Pos, m *spec.Message) error {
	msg, rel := m.Done()
	return &Error{Pos: p, Msg: msg, Related: rel}
}

// Expand expands the model program user, with the layers of std (the
// standard library, or nil) available. Positions in errors are those of
// user; a problem inside a library layer is reported at its application.
func Expand(user, std *program.Program) (*Model, error) {
	x := &expander{layers: map[string]*layerDef{}, top: map[string]*instance{}, params: map[string]*Param{}}
	if std != nil {
		for _, s := range std.Stmts {
			l, ok := s.(*program.LayerStmt)
			if !ok {
				return nil, fail(s.StmtPos(), "the library may only define layers")
			}
			if err := x.define(&layerDef{st: l, std: true}); err != nil {
				return nil, err
			}
		}
	}
	m := &Model{}
	userLayers := map[string]bool{}
	for _, s := range user.Stmts {
		if l, ok := s.(*program.LayerStmt); ok {
			if !userLayers[l.Name] {
				delete(x.layers, l.Name) // a user layer replaces the library's
			}
			userLayers[l.Name] = true
			if err := x.define(&layerDef{st: l}); err != nil {
				return nil, err
			}
		}
	}
	topNames := map[string]bool{}
	for _, s := range user.Stmts {
		if l, ok := s.(*program.LetStmt); ok {
			topNames[l.Name] = true
		}
	}
	if err := checkRecursion(user, x.layers, topNames); err != nil {
		return nil, err
	}
	entryNames := map[string]bool{}
	for _, s := range user.Stmts {
		switch s := s.(type) {
		case *program.LayerStmt:
		case *program.LetStmt:
			in, ok := x.asInstance(s.Expr)
			if !ok {
				return nil, fail(s.Pos, "at model level, let binds a layer instance (let net = mlp[16]); tensors are computed inside entry points")
			}
			if _, dup := x.top[s.Name]; dup {
				return nil, fail(s.Pos, "instance %s is defined twice", s.Name)
			}
			inst, err := x.instantiate(in, s.Name, nil)
			if err != nil {
				return nil, err
			}
			inst.name = s.Name
			x.top[s.Name] = inst
		case *program.EntryStmt:
			if entryNames[s.Name] {
				return nil, fail(s.Pos, "entry point %s is defined twice", s.Name)
			}
			entryNames[s.Name] = true
		case *program.OptimStmt:
			if m.Optim != nil {
				return nil, failCited(s.Pos, new(spec.Message).Printf("the optimizer is set twice (first").Cite(m.Optim.Pos, "the first optimizer setting").Printf(")"))
			}
			o, err := optim(s)
			if err != nil {
				return nil, err
			}
			m.Optim = o
		default:
			return nil, fail(s.StmtPos(), "a model holds layer definitions, instances (let NAME = LAYER[...]), entry points (entry/loss) and optimizer settings (sgd, adam or adamw); put this statement inside an entry point")
		}
	}
	losses := 0
	for _, s := range user.Stmts {
		e, ok := s.(*program.EntryStmt)
		if !ok {
			continue
		}
		if e.Loss {
			losses++
			if losses > 1 {
				return nil, fail(e.Pos, "a model has at most one loss")
			}
		}
		ent, err := x.expandEntry(e)
		if err != nil {
			return nil, err
		}
		m.Entries = append(m.Entries, ent)
	}
	if len(m.Entries) == 0 {
		return nil, fail(spec.Pos{Line: 1, Col: 1}, "the model has no entry point (entry NAME: or loss NAME:)")
	}
	for _, id := range x.order {
		m.Params = append(m.Params, x.params[id])
	}
	return m, nil
}

// optimSettings lists each optimizer's settings, for errors.
var optimSettings = map[string]string{
	"sgd":   "lr, momentum, nesterov, weight_decay, clip_norm, " + scheduleSettings,
	"adam":  "lr, beta1, beta2, eps, weight_decay, clip_norm, " + scheduleSettings,
	"adamw": "lr, beta1, beta2, eps, weight_decay, clip_norm, " + scheduleSettings,
}

// scheduleSettings are the learning-rate schedule's settings, which
// every optimizer takes.
const scheduleSettings = "schedule, lr_end, steps, warmup, step_size, gamma"

// schedules are the values of schedule=.
var schedules = map[string]bool{"constant": true, "linear": true, "cosine": true, "step": true}

func optim(s *program.OptimStmt) (*Optim, error) {
	o := &Optim{Pos: s.Pos, Kind: s.Kind}
	adam := s.Kind != "sgd"
	if adam {
		o.Beta1, o.Beta2, o.Eps = 0.9, 0.999, 1e-8
		if s.Kind == "adamw" {
			o.WeightDecay = 0.01 // PyTorch's AdamW default
		}
	}
	seen := map[string]bool{}
	hasLR := false
	for _, st := range s.Settings {
		if seen[st.Name] {
			return nil, fail(st.Pos, "%s setting %s is given twice", s.Kind, st.Name)
		}
		seen[st.Name] = true
		if st.Name == "nesterov" && !adam {
			if st.Value != nil {
				return nil, fail(st.Pos, "nesterov is a flag and takes no value")
			}
			o.Nesterov = true
			continue
		}
		if st.Name == "schedule" {
			if st.Word == "" || !schedules[st.Word] {
				at := st.WordPos
				if st.Word == "" {
					at = st.Pos
				}
				return nil, fail(at, "schedule must be constant, linear, cosine or step (schedule=cosine)")
			}
			o.Schedule = st.Word
			continue
		}
		if st.Word != "" {
			return nil, fail(st.WordPos, "%s setting %s takes a number, not %s", s.Kind, st.Name, spec.Quote(st.Word))
		}
		if st.Value == nil {
			return nil, fail(st.Pos, "%s setting %s needs a value (%s=NUMBER)", s.Kind, st.Name, st.Name)
		}
		v := st.Value.Value
		switch {
		case st.Name == "lr":
			o.LR, hasLR = v, true
		case st.Name == "momentum" && !adam:
			o.Momentum = v
		case st.Name == "beta1" && adam:
			o.Beta1 = v
		case st.Name == "beta2" && adam:
			o.Beta2 = v
		case st.Name == "eps" && adam:
			o.Eps = v
		case st.Name == "weight_decay":
			o.WeightDecay = v
		case st.Name == "clip_norm":
			o.ClipNorm = v
			if !(v > 0) {
				return nil, fail(st.Pos, "clip_norm must be positive (the largest global gradient norm)")
			}
		case st.Name == "lr_end":
			o.LREnd = v
		case st.Name == "steps":
			if v != math.Trunc(v) || v < 1 || v > 1<<40 {
				return nil, fail(st.Pos, "steps must be a positive integer")
			}
			o.Steps = int(v)
		case st.Name == "step_size":
			if v != math.Trunc(v) || v < 1 || v > 1<<40 {
				return nil, fail(st.Pos, "step_size must be a positive integer")
			}
			o.StepSize = int(v)
		case st.Name == "warmup":
			if v != math.Trunc(v) || v < 0 || v > 1<<40 {
				return nil, fail(st.Pos, "warmup must be a non-negative integer (a number of steps)")
			}
			o.Warmup = int(v)
		case st.Name == "gamma":
			o.Gamma = v
		default:
			return nil, fail(st.Pos, "unknown %s setting %s (known: %s)", s.Kind, spec.Quote(st.Name), optimSettings[s.Kind])
		}
		if v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, fail(st.Pos, "%s setting %s must be a finite non-negative number", s.Kind, st.Name)
		}
	}
	if !hasLR {
		return nil, fail(s.Pos, "%s needs a learning rate (lr=NUMBER)", s.Kind)
	}
	if o.Momentum >= 1 {
		return nil, fail(s.Pos, "momentum must be below 1")
	}
	if adam && (o.Beta1 >= 1 || o.Beta2 >= 1) {
		return nil, fail(s.Pos, "beta1 and beta2 must be below 1")
	}
	if adam && !(o.Eps > 0) {
		return nil, fail(s.Pos, "eps must be positive")
	}
	if err := o.schedule(s.Pos, seen); err != nil {
		return nil, err
	}
	if o.Nesterov && o.Momentum == 0 {
		return nil, fail(s.Pos, "nesterov needs momentum > 0")
	}
	return o, nil
}

// schedule checks the learning-rate schedule's settings (seen: the
// settings given) and completes o's: without schedule=, lr_end and steps
// make it linear, and nothing constant.
func (o *Optim) schedule(pos spec.Pos, seen map[string]bool) error {
	if o.Schedule == "" {
		o.Schedule = "constant"
		if seen["lr_end"] || seen["steps"] {
			o.Schedule = "linear"
		}
	}
	switch o.Schedule {
	case "linear":
		if !seen["lr_end"] || !seen["steps"] {
			return fail(pos, "lr_end and steps go together (a linear decay from lr to lr_end over steps)")
		}
	case "cosine":
		if !seen["steps"] {
			return fail(pos, "schedule=cosine needs steps (the decay from lr to lr_end, 0 by default, ends at that step)")
		}
	default:
		for _, n := range []string{"lr_end", "steps"} {
			if seen[n] {
				return fail(pos, "%s belongs to schedule=linear or cosine, not %s", n, o.Schedule)
			}
		}
	}
	if o.Schedule == "step" {
		if !seen["step_size"] {
			return fail(pos, "schedule=step needs step_size (the number of steps between two decays by gamma, 0.1 by default)")
		}
		if !seen["gamma"] {
			o.Gamma = 0.1 // PyTorch's StepLR default
		}
	} else if seen["step_size"] || seen["gamma"] {
		return fail(pos, "step_size and gamma belong to schedule=step")
	}
	if (o.Schedule == "linear" || o.Schedule == "cosine") && o.Warmup >= o.Steps {
		return fail(pos, "warmup (%d steps) must end before steps (%d)", o.Warmup, o.Steps)
	}
	return nil
}

// asInstance reads the right-hand side of a let as an instance: LAYER[...]
// or a bare layer name (an instance with the default configuration).
func (x *expander) asInstance(e program.Expr) (*program.Instance, bool) {
	switch e := e.(type) {
	case *program.Instance:
		return e, true
	case *program.Ident:
		if _, ok := x.layers[e.Name]; ok {
			return &program.Instance{Pos: e.Pos, Layer: e.Name}, true
		}
	}
	return nil, false
}

// instantiate creates an instance of in.Layer named name under parent
// (nil: model or entry level, whose path is name itself).
func (x *expander) instantiate(in *program.Instance, name string, sc *scope) (*instance, error) {
	def, ok := x.layers[in.Layer]
	if !ok {
		return nil, fail(x.at(sc, in.Pos), "%s", x.unknownLayer(in.Layer))
	}
	cfg, err := x.bindConfig(def, in.Args, in.Pos, sc)
	if err != nil {
		return nil, err
	}
	return x.newInstance(def, cfg, name), nil
}

func (x *expander) newInstance(def *layerDef, cfg map[string]cfgVal, path string) *instance {
	return &instance{def: def, cfg: cfg, path: path, children: map[string]*instance{}, anon: map[*program.Call]*instance{}, anonN: map[string]int{}}
}

func (x *expander) at(sc *scope, p spec.Pos) spec.Pos {
	if sc == nil || sc.at == nil {
		return p
	}
	return sc.at(p)
}

// bindConfig matches configuration arguments to a layer's parameters.
func (x *expander) bindConfig(def *layerDef, args []program.ConfigArg, site spec.Pos, sc *scope) (map[string]cfgVal, error) {
	l := def.st
	cfg := map[string]cfgVal{}
	named := false
	for i, a := range args {
		p := x.at(sc, a.Pos)
		var v cfgVal
		switch {
		case a.Value.IsStr:
			v = cfgVal{str: a.Value.Str, isStr: true}
		case a.Value.Number != nil:
			v = cfgVal{num: a.Value.Number.Value}
		default:
			var b binding
			ok := false
			if sc != nil {
				b, ok = sc.vars[a.Value.Ref]
			}
			if !ok || b.cfg == nil {
				return nil, fail(p, "%s is not a configuration argument in scope (configuration values are numbers, strings, or the enclosing layer's configuration names)", a.Value.Ref)
			}
			v = *b.cfg
		}
		key := a.Name
		if key == "" {
			if named {
				return nil, fail(p, "a positional configuration argument follows a named one")
			}
			if i >= len(l.Config) {
				return nil, fail(p, "layer %s takes %d configuration argument(s), given %d", l.Name, len(l.Config), len(args))
			}
			key = l.Config[i].Name
		} else {
			named = true
			found := false
			for _, c := range l.Config {
				found = found || c.Name == key
			}
			if !found {
				return nil, fail(p, "layer %s has no configuration argument %s", spec.Clip(l.Name), spec.Quote(key))
			}
		}
		if _, dup := cfg[key]; dup {
			return nil, fail(p, "configuration argument %s of layer %s is given twice", key, l.Name)
		}
		cfg[key] = v
	}
	for _, c := range l.Config {
		if _, ok := cfg[c.Name]; ok {
			continue
		}
		if c.Default == nil {
			return nil, fail(x.at(sc, site), "layer %s needs its configuration argument %s (write %s[%s=...])", l.Name, c.Name, l.Name, c.Name)
		}
		if c.Default.IsStr {
			cfg[c.Name] = cfgVal{str: c.Default.Str, isStr: true}
		} else {
			cfg[c.Name] = cfgVal{num: c.Default.Number.Value}
		}
	}
	return cfg, nil
}

// expandEntry builds the flat program of one entry point.
func (x *expander) expandEntry(e *program.EntryStmt) (*Entry, error) {
	x.out, x.used, x.stack, x.apps = nil, map[string]bool{}, nil, 0
	x.names, x.indexed, x.discarded = map[string]bool{}, map[string]bool{}, false
	ent := &Entry{Name: e.Name, Loss: e.Loss, Pos: e.Pos, ParamPos: map[string]spec.Pos{}, argUses: map[program.Expr][]*argUse{}}
	x.entry = ent
	x.entryTop = x.newInstance(nil, nil, e.Name)
	resetApps(x.top)
	sc := &scope{vars: map[string]binding{}, prefix: "", paramPath: "", anonOwner: x.entryTop}
	for name, in := range x.top {
		sc.vars[name] = binding{inst: in}
	}
	for _, s := range e.Body {
		switch s := s.(type) {
		case *program.InputStmt:
			if err := x.defineName(sc, s.Name, s.Pos); err != nil {
				return nil, err
			}
			if err := unknownInputRow(s); err != nil {
				return nil, err
			}
			in := *s
			ent.Inputs = append(ent.Inputs, &in)
			x.out = append(x.out, &in)
			sc.vars[s.Name] = binding{tensor: s.Name}
			if s.Shape != nil && s.Shape.Index != nil {
				x.indexed[s.Name] = true
			}
		default:
			if err := x.bodyStmt(s, sc); err != nil {
				return nil, err
			}
		}
	}
	if len(ent.Inputs) == 0 {
		return nil, fail(e.Pos, "entry point %s has no input (declare them with input NAME : SHAPE)", e.Name)
	}
	ent.ResultPos = e.Result.ExprPos()
	r, err := x.expr(e.Result, sc)
	if err != nil {
		return nil, err
	}
	if id, ok := r.(*program.Ident); ok && !x.isInput(id.Name) {
		ent.Result = id.Name
	} else {
		name := e.Name
		if x.names[name] {
			name = e.Name + ".result"
		}
		switch r.(type) {
		case *program.Ident, *program.InlineParam, *program.Number, *program.DimRef:
			r = &program.Unary{Pos: r.ExprPos(), Func: string(ops.ID), X: r}
		}
		x.names[name] = true
		x.out = append(x.out, &program.LetStmt{Pos: e.Result.ExprPos(), Name: name, Expr: r})
		ent.Result = name
	}
	if x.discarded {
		x.dropDead(ent.Result)
	}
	ent.Prog = &program.Program{Stmts: x.out}
	return ent, nil
}

// unknownInputRow rejects '?' in an entry's input: the entry's Go method
// takes arrays of fixed sizes, so every row must be written ('?' would
// silently leave the batch row empty: one example).
func unknownInputRow(s *program.InputStmt) error {
	sd := s.Shape
	if sd.Batch != nil && sd.Batch.Unknown {
		rest := shapeText(&program.ShapeDecl{Input: sd.Input, Output: sd.Output})
		return fail(sd.Batch.Pos, "input %s: an entry point's batch size cannot be '?' (inferred); write it: input %s : 1 | %s for one example, input %s : 32 | %s for a batch of 32 (batch sizes chosen at run time are not supported yet)",
			s.Name, s.Name, rest, s.Name, rest)
	}
	for _, r := range []*program.RowDecl{sd.Input, sd.Output} {
		if r != nil && r.Unknown {
			return fail(r.Pos, "input %s: an entry point's input must give every size; '?' (a row to infer) is only for leaf tensors", s.Name)
		}
	}
	return nil
}

// rowText renders a declared row as written (`32`, `4, 8`, `?`); "" for
// an absent or empty row.
func rowText(r *program.RowDecl) string {
	if r == nil {
		return ""
	}
	if r.Unknown {
		return "?"
	}
	var parts []string
	for _, d := range r.Dims {
		p := strconv.Itoa(d.Size)
		if d.Name != "" && d.Size == 0 {
			p = d.Name
		}
		if d.Basis != "" {
			p += ":" + d.Basis
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// shapeText renders a declared shape as written (`2 -> 3`).
func shapeText(sd *program.ShapeDecl) string {
	row := rowText
	var b strings.Builder
	if sd.Batch != nil {
		b.WriteString(row(sd.Batch) + " | ")
	}
	if sd.Input != nil {
		b.WriteString(row(sd.Input) + " -> ")
	}
	b.WriteString(row(sd.Output))
	return strings.TrimSpace(b.String())
}

func resetApps(m map[string]*instance) {
	for _, in := range m {
		in.apps = 0
		resetApps(in.children)
		for _, a := range in.anon {
			a.apps = 0
			resetApps(a.children)
		}
	}
}

func (x *expander) isInput(name string) bool {
	for _, in := range x.entry.Inputs {
		if in.Name == name {
			return true
		}
	}
	return false
}

func (x *expander) defineName(sc *scope, name string, p spec.Pos) error {
	if b, ok := sc.vars[name]; ok && (b.tensor != "" || b.inst != nil && sc.prefix != "") {
		return fail(x.at(sc, p), "%s is already defined", name)
	}
	return nil
}

// bodyStmt expands a let or dim statement of an entry or layer body.
func (x *expander) bodyStmt(s program.Stmt, sc *scope) error {
	switch s := s.(type) {
	case *program.LetStmt:
		if err := x.defineName(sc, s.Name, s.Pos); err != nil {
			return err
		}
		in, ok := x.asInstance(s.Expr)
		if id, isID := s.Expr.(*program.Ident); isID {
			if _, bound := sc.vars[id.Name]; bound {
				ok = false // a tensor or instance of the scope shadows the layer
			}
		}
		if ok {
			var inst *instance
			if sc.inst != nil {
				inst = sc.inst.children[s.Name]
			} else {
				inst = x.entryTop.children[s.Name]
			}
			if inst == nil {
				path := s.Name
				if sc.paramPath != "" {
					path = sc.paramPath + "." + s.Name
				} else {
					path = x.entry.Name + "." + s.Name
				}
				var err error
				if inst, err = x.instantiate(in, path, sc); err != nil {
					return err
				}
				inst.name = s.Name
				if sc.inst != nil {
					sc.inst.children[s.Name] = inst
				} else {
					x.entryTop.children[s.Name] = inst
				}
			}
			sc.vars[s.Name] = binding{inst: inst}
			return nil
		}
		arg, derived := x.derivedArg(s.Expr, sc)
		e, err := x.expr(s.Expr, sc)
		if err != nil {
			return err
		}
		if derived {
			sc.fromArg[s.Name] = arg
		}
		name := sc.prefix + s.Name
		if x.used[name] && !aliases(e, name) {
			return fail(x.at(sc, s.Pos), "%s is already the name of a parameter ({%s}) in entry %s", s.Name, s.Name, x.entry.Name)
		}
		if x.names[name] {
			return fail(x.at(sc, s.Pos), "%s is already defined", s.Name)
		}
		x.names[name] = true
		x.out = append(x.out, &program.LetStmt{Pos: x.at(sc, s.Pos), Name: name, Expr: e})
		sc.vars[s.Name] = binding{tensor: name}
		if id, ok := e.(*program.Ident); ok && x.indexed[id.Name] {
			x.indexed[name] = true
		}
		return nil
	case *program.DimStmt:
		d := &program.DimStmt{Pos: x.at(sc, s.Pos), Name: s.Name, Value: s.Value}
		if s.ValueName != "" {
			n, err := x.intCfg(sc, s.ValueName, s.Pos, "dim "+s.Name)
			if err != nil {
				return err
			}
			d.Value = n
		}
		x.out = append(x.out, d)
		return nil
	}
	return fail(x.at(sc, s.StmtPos()), "unexpected statement in a block")
}

// aliases reports whether e is the parameter named name itself (`let w =
// {w}`, OCANNL's idiom for naming a parameter).
func aliases(e program.Expr, name string) bool {
	switch e := e.(type) {
	case *program.InlineParam:
		return e.Name == name
	case *program.Ident:
		return e.Name == name
	}
	return false
}

// intCfg resolves a configuration name to a positive integer.
func (x *expander) intCfg(sc *scope, name string, p spec.Pos, what string) (int, error) {
	b, ok := sc.vars[name]
	if !ok || b.cfg == nil {
		return 0, fail(x.at(sc, p), "%s: %s is not a configuration argument", what, name)
	}
	v := b.cfg
	if v.isStr || v.num != math.Trunc(v.num) || v.num < 1 || v.num > 1<<40 {
		return 0, fail(x.at(sc, p), "%s: configuration %s = %s is not a positive integer", what, name, v.text())
	}
	return int(v.num), nil
}

// apply inlines one application of inst to args.
func (x *expander) apply(inst *instance, args []program.Expr, site spec.Pos, sc *scope) (program.Expr, error) {
	l, err := x.variant(inst.def, args, site, sc)
	if err != nil {
		return nil, err
	}
	if len(x.stack) >= maxDepth {
		return nil, fail(x.at(sc, site), "layer applications nest deeper than %d", maxDepth)
	}
	for _, n := range x.stack {
		if n == l.Name {
			return nil, fail(x.at(sc, site), "layer %s applies itself (recursive layers are not supported)", l.Name)
		}
	}
	if len(args) != len(l.Args) {
		return nil, fail(x.at(sc, site), "layer %s takes %d tensor argument(s), given %d", l.Name, len(l.Args), len(args))
	}
	x.apps++
	if x.apps > maxApplications || len(x.out) > maxStatements {
		return nil, fail(x.at(sc, site), "entry %s expands to more than %d layer applications or %d statements (layers applying each other repeatedly expand exponentially)", x.entry.Name, maxApplications, maxStatements)
	}
	inst.apps++
	prefix := inst.path + "/"
	if inst.apps > 1 {
		prefix = inst.path + "@" + strconv.Itoa(inst.apps) + "/"
	}
	body := &scope{vars: map[string]binding{}, inst: inst, prefix: prefix, paramPath: inst.path, anonOwner: inst, lexical: true,
		app: &application{inst: inst, site: x.at(sc, site), outer: sc.app}, fromArg: map[string]int{}}
	if inst.def.std {
		callSite := x.at(sc, site)
		body.at = func(spec.Pos) spec.Pos { return callSite }
	}
	for name, in := range x.top {
		body.vars[name] = binding{inst: in}
	}
	for k, v := range inst.cfg {
		v := v
		body.vars[k] = binding{cfg: &v}
	}
	for i, a := range args {
		e, err := x.expr(a, sc)
		if err != nil {
			return nil, err
		}
		name := l.Args[i].Name
		body.fromArg[name] = i
		aa := appArg{expr: a, outer: -1}
		if k, ok := x.derivedArg(a, sc); ok {
			aa.outer = k
		}
		if id, ok := e.(*program.Ident); ok {
			body.vars[name] = binding{tensor: id.Name}
			aa.tensor = id.Name
			body.app.args = append(body.app.args, aa)
			continue
		}
		flat := prefix + name
		aa.tensor = flat
		body.app.args = append(body.app.args, aa)
		x.names[flat] = true
		x.out = append(x.out, &program.LetStmt{Pos: e.ExprPos(), Name: flat, Expr: e})
		body.vars[name] = binding{tensor: flat}
	}
	x.stack = append(x.stack, l.Name)
	defer func() { x.stack = x.stack[:len(x.stack)-1] }()
	for _, s := range l.Body {
		if err := x.bodyStmt(s, body); err != nil {
			return nil, err
		}
	}
	return x.expr(l.Result, body)
}

// namedInits are the initializer names of inline parameters.
var namedInits = map[string]InitKind{"uniform": InitUniform, "normal": InitNormal, "kaiming": InitKaiming, "xavier": InitXavier, "fan_in": InitFanIn}

// expr rewrites an expression of scope sc into the flat program.
func (x *expander) expr(e program.Expr, sc *scope) (program.Expr, error) {
	switch e := e.(type) {
	case *program.Ident:
		b, ok := sc.vars[e.Name]
		switch {
		case ok && b.tensor != "":
			return &program.Ident{Pos: x.at(sc, e.Pos), Name: b.tensor}, nil
		case ok && b.cfg != nil:
			if b.cfg.isStr {
				return nil, fail(x.at(sc, e.Pos), "configuration %s is a string (%s), not a number", spec.Clip(e.Name), spec.Quote(b.cfg.str))
			}
			return &program.Number{Pos: x.at(sc, e.Pos), Value: b.cfg.num, Text: b.cfg.text()}, nil
		case ok && b.inst != nil:
			return nil, fail(x.at(sc, e.Pos), "%s is a layer instance, not a tensor (apply it: %s(x))", e.Name, e.Name)
		case sc.lexical:
			return nil, fail(x.at(sc, e.Pos), "undefined name %s in layer %s (a layer sees only its arguments, its lets and its configuration)", spec.Quote(e.Name), spec.Clip(sc.inst.def.st.Name))
		}
		return &program.Ident{Pos: x.at(sc, e.Pos), Name: e.Name}, nil
	case *program.Number:
		n := *e
		n.Pos = x.at(sc, e.Pos)
		return &n, nil
	case *program.DimRef:
		return &program.DimRef{Pos: x.at(sc, e.Pos), Name: e.Name}, nil
	case *program.Literal:
		l := &program.Literal{Pos: x.at(sc, e.Pos), Kind: e.Kind}
		for _, it := range e.Items {
			r, err := x.expr(it, sc)
			if err != nil {
				return nil, err
			}
			l.Items = append(l.Items, r)
		}
		return l, nil
	case *program.Unary:
		a, err := x.expr(e.X, sc)
		if err != nil {
			return nil, err
		}
		return &program.Unary{Pos: x.at(sc, e.Pos), Func: e.Func, X: a}, nil
	case *program.Binary:
		a, err := x.expr(e.X, sc)
		if err != nil {
			return nil, err
		}
		b, err := x.expr(e.Y, sc)
		if err != nil {
			return nil, err
		}
		return &program.Binary{Pos: x.at(sc, e.Pos), Op: e.Op, X: a, Y: b}, nil
	case *program.Pow:
		a, err := x.expr(e.X, sc)
		if err != nil {
			return nil, err
		}
		return &program.Pow{Pos: x.at(sc, e.Pos), X: a, Exp: e.Exp}, nil
	case *program.Slice:
		a, err := x.expr(e.X, sc)
		if err != nil {
			return nil, err
		}
		return &program.Slice{Pos: x.at(sc, e.Pos), X: a, Index: e.Index}, nil
	case *program.Ternary:
		var ops [3]program.Expr
		for i, o := range []program.Expr{e.A, e.B, e.C} {
			r, err := x.expr(o, sc)
			if err != nil {
				return nil, err
			}
			ops[i] = r
		}
		return &program.Ternary{Pos: x.at(sc, e.Pos), Op: e.Op, A: ops[0], B: ops[1], C: ops[2]}, nil
	case *program.Einsum:
		spec, err := x.interpolate(e.Spec, e.SpecPos, sc)
		if err != nil {
			return nil, err
		}
		r := &program.Einsum{Pos: x.at(sc, e.Pos), Op: e.Op, Spec: spec, SpecPos: x.at(sc, e.SpecPos), Captures: x.caps(e.Captures, sc)}
		if r.X, err = x.expr(e.X, sc); err != nil {
			return nil, err
		}
		operands := []program.Expr{e.X}
		if e.Y != nil {
			if r.Y, err = x.expr(e.Y, sc); err != nil {
				return nil, err
			}
			operands = append(operands, e.Y)
		}
		x.recordArgUses(r, operands, sc)
		return r, nil
	case *program.Concat:
		spec, err := x.interpolate(e.Spec, e.SpecPos, sc)
		if err != nil {
			return nil, err
		}
		r := &program.Concat{Pos: x.at(sc, e.Pos), Spec: spec, SpecPos: x.at(sc, e.SpecPos), Captures: x.caps(e.Captures, sc)}
		for _, o := range e.Operands {
			a, err := x.expr(o, sc)
			if err != nil {
				return nil, err
			}
			r.Operands = append(r.Operands, a)
		}
		x.recordArgUses(r, e.Operands, sc)
		return r, nil
	case *program.InlineParam:
		return x.inlineParam(e, sc)
	case *program.Instance:
		return nil, fail(x.at(sc, e.Pos), "an instance %s[...] must be bound with let or applied to arguments", e.Layer)
	case *program.Call:
		if f, ok := e.Callee.(*program.Ident); ok && f.Name == "running" && x.layers["running"] == nil {
			if _, bound := sc.vars["running"]; !bound {
				return x.running(e, sc)
			}
		}
		return x.call(e, sc)
	}
	return nil, fail(x.at(sc, e.ExprPos()), "unsupported expression %T", e)
}

func (x *expander) caps(cs []program.Capture, sc *scope) []program.Capture {
	var out []program.Capture
	for _, c := range cs {
		out = append(out, program.Capture{Pos: x.at(sc, c.Pos), Name: c.Name})
	}
	return out
}

// interpolate replaces $NAME and ${NAME} in a spec by configuration values.
func (x *expander) interpolate(src string, p spec.Pos, sc *scope) (string, error) {
	if !strings.Contains(src, "$") {
		return src, nil
	}
	var b strings.Builder
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c != '$' {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		brace := j < len(src) && src[j] == '{'
		if brace {
			j++
		}
		k := j
		for k < len(src) && (src[k] == '_' || src[k] >= 'a' && src[k] <= 'z' || src[k] >= 'A' && src[k] <= 'Z' || k > j && src[k] >= '0' && src[k] <= '9') {
			k++
		}
		name := src[j:k]
		at := x.at(sc, spec.Pos{Line: p.Line, Col: p.Col + 1 + i})
		if name == "" || brace && (k >= len(src) || src[k] != '}') {
			return "", fail(at, "malformed $ in spec %s (write $NAME or ${NAME})", spec.Quote(src))
		}
		bd, ok := sc.vars[name]
		if !ok || bd.cfg == nil {
			return "", fail(at, "$%s in spec %s is not a configuration argument", spec.Clip(name), spec.Quote(src))
		}
		b.WriteString(bd.cfg.text())
		if brace {
			k++
		}
		i = k - 1
	}
	return b.String(), nil
}

// inlineParam turns `{w ...}` into the parameter with its identity.
func (x *expander) inlineParam(e *program.InlineParam, sc *scope) (program.Expr, error) {
	p := x.at(sc, e.Pos)
	id := e.Name
	if sc.paramPath != "" {
		id = sc.paramPath + "." + e.Name
	}
	if x.names[id] || x.isInput(id) {
		return nil, fail(p, "parameter {%s}: %s is already the name of a tensor in entry %s", e.Name, id, x.entry.Name)
	}
	prm := &Param{ID: id, Pos: p}
	var init program.Expr
	switch in := e.Init.(type) {
	case nil:
	case *program.Ident:
		k, ok := namedInits[in.Name]
		if !ok {
			return nil, fail(x.at(sc, in.Pos), "unknown initializer %s (a number, a numeric literal, uniform, normal, kaiming, xavier or fan_in)", spec.Quote(in.Name))
		}
		prm.Init, prm.InitText = k, in.Name
	case *program.Call:
		if f, ok := in.Callee.(*program.Ident); ok && f.Name == "dropout" {
			return x.noise(e, in, sc)
		}
		// fan_in(w): the fan-in of the layer's parameter w.
		f, ok := in.Callee.(*program.Ident)
		var arg *program.Ident
		if len(in.Args) == 1 {
			arg, _ = in.Args[0].(*program.Ident)
		}
		if !ok || f.Name != "fan_in" || arg == nil {
			return nil, fail(x.at(sc, in.Pos), "a parameter's initial value may apply only fan_in, to one of the layer's parameters: fan_in(w)")
		}
		prm.Init, prm.InitText, prm.FanInOf = InitFanIn, "fan_in("+arg.Name+")", arg.Name
		if sc.paramPath != "" {
			prm.FanInOf = sc.paramPath + "." + arg.Name
		}
	case *program.Number:
		prm.Init, prm.Value, prm.InitText = InitConst, in.Value, strconv.FormatFloat(in.Value, 'g', -1, 64)
		init = &program.Number{Pos: p, Value: in.Value, Text: in.Text}
	case *program.Literal:
		r, err := x.expr(in, sc)
		if err != nil {
			return nil, err
		}
		prm.Init, prm.Literal, prm.InitText = InitLiteral, r.(*program.Literal), program.Format(in)
		init = r
	default:
		return nil, fail(x.at(sc, e.Init.ExprPos()), "a parameter's initial value must be a number, a numeric literal, or one of uniform, normal, kaiming, xavier, fan_in")
	}
	var fields []program.Field
	for _, f := range e.Fields {
		nf := program.Field{Pos: p, Kind: f.Kind, Dims: append([]int(nil), f.Dims...)}
		for i, n := range f.Names {
			if n == "" {
				continue
			}
			v, err := x.intCfg(sc, n, f.Pos, fmt.Sprintf("field %c of {%s}", f.Kind, e.Name))
			if err != nil {
				return nil, err
			}
			nf.Dims[i] = v
		}
		fields = append(fields, nf)
	}
	if old, ok := x.params[id]; ok {
		if e.Init != nil && old.InitText != "" && old.InitText != prm.InitText {
			return nil, failCited(p, new(spec.Message).Printf("parameter %s is initialized as %s here and as %s", id, prm.InitText, old.InitText).Cite(old.Pos, "the other initialization"))
		}
		if old.InitText == "" && prm.InitText != "" {
			prm.Pos = old.Pos
			*old = *prm
		}
	} else {
		x.params[id] = prm
		x.order = append(x.order, id)
	}
	if x.used[id] {
		return &program.Ident{Pos: p, Name: id}, nil
	}
	x.used[id] = true
	x.entry.Params = append(x.entry.Params, id)
	x.entry.ParamPos[id] = p
	return &program.InlineParam{Pos: p, Name: id, Init: init, Fields: fields}, nil
}

// unknownLayer is the message for an unknown layer name, suggesting the
// nearest defined layer (the model's or the standard library's) when one
// is close: at most a third of the name's letters edited (at least one).
func (x *expander) unknownLayer(name string) string {
	best, bestD := "", 0
	for l := range x.layers {
		d := editDistance(name, l)
		if best == "" || d < bestD || d == bestD && l < best {
			best, bestD = l, d
		}
	}
	if best != "" && bestD <= max(1, len([]rune(name))/3) {
		return fmt.Sprintf("unknown layer %s (did you mean %s?)", spec.Quote(name), best)
	}
	return "unknown layer " + spec.Quote(name)
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// call expands a layer application.
func (x *expander) call(c *program.Call, sc *scope) (program.Expr, error) {
	switch cal := c.Callee.(type) {
	case *program.Ident:
		if b, ok := sc.vars[cal.Name]; ok {
			if b.inst == nil {
				return nil, fail(x.at(sc, cal.Pos), "%s is not a layer or an instance", cal.Name)
			}
			return x.apply(b.inst, c.Args, c.Pos, sc)
		}
		def, ok := x.layers[cal.Name]
		if !ok {
			return nil, fail(x.at(sc, cal.Pos), "%s", x.unknownLayer(cal.Name))
		}
		inst, err := x.anonymous(c, def, nil, sc)
		if err != nil {
			return nil, err
		}
		return x.apply(inst, c.Args, c.Pos, sc)
	case *program.Instance:
		def, ok := x.layers[cal.Layer]
		if !ok {
			return nil, fail(x.at(sc, cal.Pos), "%s", x.unknownLayer(cal.Layer))
		}
		inst, err := x.anonymous(c, def, cal.Args, sc)
		if err != nil {
			return nil, err
		}
		return x.apply(inst, c.Args, c.Pos, sc)
	}
	return nil, fail(x.at(sc, c.Pos), "unsupported callee %T", c.Callee)
}

// anonymous returns the anonymous instance of the call c in scope sc,
// creating it on the scope owner's first encounter.
func (x *expander) anonymous(c *program.Call, def *layerDef, args []program.ConfigArg, sc *scope) (*instance, error) {
	owner := sc.anonOwner
	if in, ok := owner.anon[c]; ok {
		return in, nil
	}
	cfg, err := x.bindConfig(def, args, c.Pos, sc)
	if err != nil {
		return nil, err
	}
	owner.anonN[def.st.Name]++
	name := def.st.Name + "#" + strconv.Itoa(owner.anonN[def.st.Name])
	path := owner.path + "." + name
	in := x.newInstance(def, cfg, path)
	owner.anon[c] = in
	return in, nil
}

// SortedIDs returns the identities of ps sorted, for stable listings.
func SortedIDs(ps []*Param) []string {
	var ids []string
	for _, p := range ps {
		ids = append(ids, p.ID)
	}
	sort.Strings(ids)
	return ids
}
