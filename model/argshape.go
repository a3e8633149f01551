package model

import (
	"errors"
	"strings"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/spec"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// A layer applied to a tensor with the wrong number of axes (conv2d to a
// flat 32 | 64) fails inside its body, in the equation of a spec
// operation's slot with the argument: the solver's message names row
// variables and the spec, at the inlined operation. The expander records
// which operands of a body's spec operations are the layer's arguments
// (argUse), and Infer reports such a failure at the application, in
// terms of the argument's slot in the spec and the argument's shape
// (argShapeError).

// application is one inlined application of a layer.
type application struct {
	inst *instance
	// site is where the layer is applied, as reported (the layer or
	// instance name of the call).
	site spec.Pos
	// args are the tensor arguments, in the layer's order.
	args []appArg
	// outer is the application whose body applies this one (nil for an
	// application in an entry).
	outer *application
}

// appArg is a tensor argument of an application.
type appArg struct {
	// tensor is the flat tensor the argument is bound to.
	tensor string
	// expr is the argument as written at the call.
	expr program.Expr
	// outer is the index of outer's argument this argument is (or
	// computes by pointwise functions), -1 when none.
	outer int
}

// argUse is an operand of a spec operation in a layer body that is one of
// the layer's tensor arguments, or computed from one by pointwise
// functions only (relu x, or a let bound to it).
type argUse struct {
	app *application
	arg int
	// opPos is the operation's position as reported.
	opPos spec.Pos
}

// derivedArg reports the tensor argument of the application whose body sc
// is that e is, or computes by unary pointwise functions alone.
func (x *expander) derivedArg(e program.Expr, sc *scope) (int, bool) {
	if sc.app == nil {
		return 0, false
	}
	for {
		switch v := e.(type) {
		case *program.Ident:
			i, ok := sc.fromArg[v.Name]
			return i, ok
		case *program.Unary:
			if v.Func == program.Flatten {
				return 0, false // not the argument's shape
			}
			e = v.X
		default:
			return 0, false
		}
	}
}

// recordArgUses records the operands of the spec operation r (written as
// operands in scope sc) that are tensor arguments of sc's application.
func (x *expander) recordArgUses(r program.Expr, operands []program.Expr, sc *scope) {
	var uses []*argUse
	for i, o := range operands {
		if k, ok := x.derivedArg(o, sc); ok {
			if uses == nil {
				uses = make([]*argUse, len(operands))
			}
			uses[i] = &argUse{app: sc.app, arg: k, opPos: r.ExprPos()}
		}
	}
	if uses != nil {
		x.entry.argUses[r] = uses
	}
}

// maxArgText bounds the length of an argument expression quoted in a
// message; a longer one is "the argument".
const maxArgText = 40

// argShapeError explains an inference error of entry e caused by a layer
// argument with a number of axes that the spec operation consuming it in
// the layer's body does not allow (inference.OperandRank): at the
// application, what the layer wants and what the argument has. It
// returns nil for any other error.
func argShapeError(e *Entry, err error) error {
	var ie *inference.Error
	if !errors.As(err, &ie) || ie.Operand == nil {
		return nil
	}
	o := ie.Operand
	uses := e.argUses[o.Node]
	if o.Arg >= len(uses) || uses[o.Arg] == nil {
		return nil
	}
	u := uses[o.Arg]
	a := u.app.args[u.arg]
	got, ok := o.ShapeOf(a.tensor)
	if !ok || o.Fits(got) {
		// A pointwise function between the argument and the operand
		// changed its number of axes (broadcasting): the argument
		// itself is not what the layer rejects.
		return nil
	}
	l := u.app.inst.def.st
	m := new(spec.Message).Printf("%s", l.Name)
	if n := u.app.inst.name; n != "" {
		m.Printf(" %s", n)
	}
	m.Printf(" wants its argument")
	if len(l.Args) > 1 {
		m.Printf(" %s", l.Args[u.arg].Name)
	}
	m.Printf(" as %s (%s", o.Wants(), o.WantsCount())
	if u.opPos != u.app.site {
		m.Printf(", for the operation").Cite(u.opPos, "the operation of "+l.Name+" using the argument")
	}
	m.Printf("), but ")
	switch text := program.Format(a.expr); {
	case !strings.ContainsAny(text, " ()"):
		m.Printf("%s", text)
	case len(text) <= maxArgText:
		m.Printf("the argument %s", text)
	default:
		m.Printf("the argument")
	}
	if out := u.app.outer; out != nil && a.outer >= 0 {
		ol := out.inst.def.st
		m.Printf(" (from the argument of %s", ol.Name)
		if n := out.inst.name; n != "" {
			m.Printf(" %s", n)
		}
		m.Printf(" applied").Cite(out.site, "the application of "+ol.Name).Printf(")")
	}
	m.Printf(" has shape %s (%s)", got, got.Count(o.Row))
	if isInput(e, a.tensor) {
		m.Printf("; declare input %s with %s", a.tensor, o.WantsCount())
	}
	msg, rel := m.Done()
	return &EntryError{Entry: e.Name, Err: &inference.Error{Kind: ie.Kind, Pos: u.app.site, Msg: msg, Related: rel, Err: err}}
}

// isInput reports whether name is one of e's inputs.
func isInput(e *Entry, name string) bool {
	for _, in := range e.Inputs {
		if in.Name == name {
			return true
		}
	}
	return false
}
