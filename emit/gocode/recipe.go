package gocode

import (
	"fmt"
	"go/ast"
	"go/parser"
	"path"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/ocannlgen/ocannlgen/ops"
)

// This file renders the Go recipes of package ops's table (ops.GoRecipe,
// ops.GoAccum): a template is parsed as a Go expression and rebuilt with
// jennifer, the operands $0, $1, $2 replaced by the compiled operands and
// pkg.F by a qualified identifier (which adds the import).

// where is the position of an operand in a template; it decides how the
// operand is written (see ops.GoRecipe).
type where int

const (
	asIs       where = iota // alone, an argument of min/max, assigned to $r
	inOperator              // an operand of an operator: parenthesized when compound
	converted               // an argument of a package function, $r's initializer
)

// Placeholders stand for $0..$2 and $r while a template is parsed.
const (
	argIdent  = "ocannlRecipeArg"
	tempIdent = "ocannlRecipeTemp"
)

var placeholders = strings.NewReplacer("$0", argIdent+"0", "$1", argIdent+"1", "$2", argIdent+"2", "$r", tempIdent)

// parseTemplate parses a recipe template.
func parseTemplate(tmpl string) (ast.Expr, error) {
	src := placeholders.Replace(tmpl)
	if strings.Contains(src, "$") {
		return nil, fmt.Errorf("template %q: unknown placeholder", tmpl)
	}
	e, err := parser.ParseExpr(src)
	if err != nil {
		return nil, fmt.Errorf("template %q: %w", tmpl, err)
	}
	return e, nil
}

// recipe renders templates over compiled operands.
type recipe struct {
	k    *kgen
	args []val
	// f64: operands are converted to float64 (a float64 recipe in a
	// kernel of another element type).
	f64     bool
	temp    string
	imports []string
}

// operand renders operand i standing at w.
func (r *recipe) operand(i int, w where) (jen.Code, error) {
	if i >= len(r.args) {
		return nil, fmt.Errorf("operand $%d of %d", i, len(r.args))
	}
	v := r.args[i]
	switch {
	case r.f64:
		return jen.Id("float64").Call(r.k.typed(v)), nil
	case w == inOperator:
		return paren(v), nil
	case w == converted:
		return r.k.typed(v), nil
	}
	return v.c, nil
}

// code rebuilds template node e standing at w.
func (r *recipe) code(e ast.Expr, w where) (jen.Code, error) {
	switch e := e.(type) {
	case *ast.Ident:
		if n, ok := strings.CutPrefix(e.Name, argIdent); ok && len(n) == 1 {
			return r.operand(int(n[0]-'0'), w)
		}
		if e.Name == tempIdent {
			if r.temp == "" {
				return nil, fmt.Errorf("$r outside a branch recipe")
			}
			return jen.Id(r.temp), nil
		}
		return jen.Id(e.Name), nil
	case *ast.BasicLit:
		return jen.Id(e.Value), nil
	case *ast.ParenExpr:
		x, err := r.code(e.X, asIs)
		return jen.Parens(x), err
	case *ast.UnaryExpr:
		x, err := r.code(e.X, inOperator)
		return jen.Op(e.Op.String()).Add(x), err
	case *ast.BinaryExpr:
		x, err := r.code(e.X, inOperator)
		if err != nil {
			return nil, err
		}
		y, err := r.code(e.Y, inOperator)
		return jen.Add(x).Op(e.Op.String()).Add(y), err
	case *ast.CallExpr:
		return r.call(e)
	}
	return nil, fmt.Errorf("unsupported template expression %T", e)
}

// call rebuilds a call of a builtin (min, max) or of a package function.
func (r *recipe) call(e *ast.CallExpr) (jen.Code, error) {
	var fn *jen.Statement
	argsAt := asIs
	switch f := e.Fun.(type) {
	case *ast.Ident:
		fn = jen.Id(f.Name)
	case *ast.SelectorExpr:
		pkg, ok := f.X.(*ast.Ident)
		if !ok {
			return nil, fmt.Errorf("unsupported function %T", f.X)
		}
		for _, imp := range r.imports {
			if path.Base(imp) == pkg.Name {
				fn = jen.Qual(imp, f.Sel.Name)
			}
		}
		if fn == nil {
			return nil, fmt.Errorf("package %s is not among the recipe's imports %q", pkg.Name, r.imports)
		}
		argsAt = converted
	default:
		return nil, fmt.Errorf("unsupported function %T", f)
	}
	args := make([]jen.Code, len(e.Args))
	for i, a := range e.Args {
		c, err := r.code(a, argsAt)
		if err != nil {
			return nil, err
		}
		args[i] = c
	}
	return fn.Call(args...), nil
}

// expr renders an expression recipe.
func (r *recipe) expr(tmpl string, float64Recipe bool) (val, error) {
	e, err := parseTemplate(tmpl)
	if err != nil {
		return val{}, err
	}
	convert := float64Recipe && r.k.elem != "float64"
	r.f64 = convert
	if id, ok := e.(*ast.Ident); ok && !convert && strings.HasPrefix(id.Name, argIdent) {
		if i := int(id.Name[len(argIdent)] - '0'); i < len(r.args) {
			return r.args[i], nil // the operand itself
		}
	}
	c, err := r.code(e, asIs)
	if err != nil {
		return val{}, err
	}
	if convert {
		return val{c: r.k.fromF64(c)}, nil
	}
	switch e.(type) {
	case *ast.BinaryExpr, *ast.UnaryExpr:
		return val{c: c, compound: true}, nil
	}
	return val{c: c}, nil
}

// branch renders a branch recipe: statements into blk, the temporary as
// the value.
func (r *recipe) branch(b *ops.GoBranch, blk *[]jen.Code) (val, error) {
	r.temp = r.k.names.fresh("r")
	var init jen.Code = jen.Var().Id(r.temp).Id(r.k.elem)
	if b.Init != "" {
		e, err := parseTemplate(b.Init)
		if err != nil {
			return val{}, err
		}
		c, err := r.code(e, converted)
		if err != nil {
			return val{}, err
		}
		init = jen.Id(r.temp).Op(":=").Add(c)
	}
	cond, err := parseTemplate(b.Cond)
	if err != nil {
		return val{}, err
	}
	then, err := parseTemplate(b.Then)
	if err != nil {
		return val{}, err
	}
	cc, err := r.code(cond, asIs)
	if err != nil {
		return val{}, err
	}
	tc, err := r.code(then, asIs)
	if err != nil {
		return val{}, err
	}
	*blk = append(*blk, init, jen.If(cc).Block(jen.Id(r.temp).Op("=").Add(tc)))
	return val{c: jen.Id(r.temp)}, nil
}

// applyRecipe computes primitive p on compiled operands (none of them
// all constant: those are folded before).
func (k *kgen) applyRecipe(p *ops.Prim, args []val, blk *[]jen.Code) (val, error) {
	if len(args) > 0 {
		all := true
		for _, a := range args {
			all = all && a.untyped
		}
		if all {
			// An expression of untyped constants only would take Go's
			// default type: the first operand gets the element type.
			args = append([]val{{c: k.typed(args[0])}}, args[1:]...)
		}
	}
	r := &recipe{k: k, args: args, imports: p.Go.Imports}
	var v val
	var err error
	switch {
	case p.Go.Float32 != "" && k.elem == "float32":
		v, err = r.expr(p.Go.Float32, false)
	case p.Go.Branch != nil:
		v, err = r.branch(p.Go.Branch, blk)
	default:
		v, err = r.expr(p.Go.Expr, p.Go.Float64)
	}
	if err != nil {
		return val{}, fmt.Errorf("primitive %q: Go recipe: %w", p.Name, err)
	}
	return v, nil
}

// accumRecipe is the statement storing v into cell under accumulator a.
func (k *kgen) accumRecipe(a *ops.Accum, cell func() jen.Code, v val) (jen.Code, error) {
	if a.Go.AssignOp != "" {
		return jen.Add(cell()).Op(a.Go.AssignOp).Add(v.c), nil
	}
	e, err := parseTemplate(a.Go.Expr)
	if err != nil {
		return nil, fmt.Errorf("accumulator %q: Go recipe: %w", a.Name, err)
	}
	lhs := cell()
	r := &recipe{k: k, args: []val{{c: cell()}, v}}
	c, err := r.code(e, asIs)
	if err != nil {
		return nil, fmt.Errorf("accumulator %q: Go recipe: %w", a.Name, err)
	}
	return jen.Add(lhs).Op("=").Add(c), nil
}
