package program

import (
	"strconv"
	"strings"

	"github.com/ocannlgen/ocannlgen/ops"
	"github.com/ocannlgen/ocannlgen/spec"
)

// Format renders e in the language, fully parenthesized: every operator
// application and function application is wrapped in parentheses, while
// names, numbers, literals, inline parameters and `dim NAME` are printed
// bare (neg is written as the function neg). ParseExpr(Format(e)) yields e
// again, ignoring positions, for any expression the parser produces that
// is not nested extremely deeply.
func Format(e Expr) string {
	pr := printer{full: true}
	pr.expr(e, lvAtom)
	return pr.b.String()
}

// String prints the program back in the language, one statement per line,
// with only the parentheses that the grammar requires. Parse(p.String())
// yields a program equal to p ignoring positions (for programs produced by
// Parse).
func (p *Program) String() string {
	var pr printer
	for _, s := range p.Stmts {
		pr.stmt(s)
		pr.b.WriteByte('\n')
	}
	return pr.b.String()
}

// Binding levels of the printer, loosest first.
const (
	lvCmp    = 1 + iota // < = <>
	lvAt                // @^+ @^^ @|
	lvAdd               // + - +* +++ ++
	lvMul               // * *. /. /
	lvPow               // **.
	lvSigned            // prefix -
	lvApp               // FUNC arg, where/fma a b c
	lvAtom              // names, numbers, literals, {param}, dim NAME, concatenations
)

// printer renders trees; full selects Format's fully parenthesized style.
type printer struct {
	b    strings.Builder
	full bool
}

// formatFloat renders a float so that the lexer reads it back exactly.
func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func numberText(n *Number) string {
	if n.Text != "" {
		return n.Text
	}
	return formatFloat(n.Value)
}

// negPrefix reports whether u is printed as a prefix minus: a neg whose
// operand is not a number written without a sign (-3 would read back as a
// negative number, so neg of 3 is printed with the function name).
func negPrefix(u *Unary) bool {
	if u.Func != string(ops.Neg) {
		return false
	}
	n, ok := u.X.(*Number)
	return !ok || strings.HasPrefix(numberText(n), "-")
}

// level returns how tightly e binds when printed without parentheses.
func level(e Expr) int {
	switch e := e.(type) {
	case *Binary:
		switch e.Op {
		case "<", "=", "<>":
			return lvCmp
		case "+", "-":
			return lvAdd
		}
		return lvMul
	case *Einsum:
		if e.Op == "@^+" || e.Op == "@^^" {
			return lvAt
		}
		return lvAdd
	case *Slice:
		return lvAt
	case *Pow:
		return lvPow
	case *Unary:
		if negPrefix(e) {
			return lvSigned
		}
		return lvApp
	case *Ternary:
		return lvApp
	}
	return lvAtom
}

// isAtPostfix reports whether e is a postfix @-level operation (@^^ or @|),
// which may stand unparenthesized on the left of another @-operator.
func isAtPostfix(e Expr) bool {
	switch e := e.(type) {
	case *Einsum:
		return e.Op == "@^^"
	case *Slice:
		return true
	}
	return false
}

// expr prints e where an expression binding at least as tightly as min is
// expected, parenthesizing it otherwise (always, in full mode, unless it is
// an atom).
func (pr *printer) expr(e Expr, min int) {
	lv := level(e)
	_, concat := e.(*Concat)
	if pr.full && (lv < lvAtom || concat) || !pr.full && lv < min {
		pr.b.WriteByte('(')
		pr.body(e)
		pr.b.WriteByte(')')
		return
	}
	pr.body(e)
}

// atLeft prints the left operand of an @-level operator.
func (pr *printer) atLeft(x Expr) {
	if !pr.full && isAtPostfix(x) {
		pr.body(x)
		return
	}
	pr.expr(x, lvAdd)
}

// arg prints a function argument: an atom, possibly behind minus signs.
func (pr *printer) arg(x Expr) {
	if u, ok := x.(*Unary); ok && !pr.full && negPrefix(u) {
		pr.minus()
		pr.arg(u.X)
		return
	}
	pr.expr(x, lvAtom)
}

// minus writes a prefix minus, separated by a space from a preceding one.
func (pr *printer) minus() {
	s := pr.b.String()
	if strings.HasSuffix(s, "-") {
		pr.b.WriteByte(' ')
	}
	pr.b.WriteByte('-')
}

// body prints e without outer parentheses.
func (pr *printer) body(e Expr) {
	b := &pr.b
	switch e := e.(type) {
	case nil:
		b.WriteString("<nil>")
	case *Ident:
		b.WriteString(e.Name)
	case *Number:
		if strings.HasPrefix(numberText(e), "-") && strings.HasSuffix(b.String(), "-") {
			b.WriteByte(' ')
		}
		b.WriteString(numberText(e))
	case *Literal:
		open, sep, close := "[", "; ", "]"
		switch e.Kind {
		case LitInput:
			open, sep, close = "(", ", ", ")"
		case LitBatch:
			open, close = "[|", "|]"
		}
		b.WriteString(open)
		for i, x := range e.Items {
			if i > 0 {
				b.WriteString(sep)
			}
			pr.expr(x, lvCmp)
		}
		if e.Kind == LitInput && len(e.Items) == 1 {
			b.WriteByte(',') // (x,) is a one-element input axis; (x) would be x
		}
		b.WriteString(close)
	case *Unary:
		if !pr.full && negPrefix(e) {
			pr.minus()
			pr.expr(e.X, lvSigned)
			return
		}
		b.WriteString(e.Func + " ")
		pr.arg(e.X)
	case *Binary:
		lv := level(e)
		pr.expr(e.X, lv)
		b.WriteString(" " + e.Op + " ")
		pr.expr(e.Y, lv+1)
	case *Pow:
		pr.expr(e.X, lvSigned)
		b.WriteString(" **. " + formatFloat(e.Exp))
	case *Einsum:
		if e.Op == "@^+" || e.Op == "@^^" {
			pr.atLeft(e.X)
		} else {
			pr.expr(e.X, lvAdd)
		}
		b.WriteString(" " + e.Op + " ")
		writeSpec(b, e.Spec, e.Captures)
		if e.Y != nil {
			b.WriteByte(' ')
			if e.Op == "@^+" {
				pr.expr(e.Y, lvAt)
			} else {
				pr.expr(e.Y, lvMul)
			}
		}
	case *Concat:
		b.WriteByte('(')
		for i, x := range e.Operands {
			if i > 0 {
				b.WriteString(", ")
			}
			pr.expr(x, lvCmp)
		}
		b.WriteString(") ++^ ")
		writeSpec(b, e.Spec, e.Captures)
	case *Slice:
		pr.atLeft(e.X)
		b.WriteString(" @| " + strconv.Itoa(e.Index))
	case *Ternary:
		b.WriteString(e.Op)
		for _, x := range []Expr{e.A, e.B, e.C} {
			b.WriteByte(' ')
			pr.arg(x)
		}
	case *InlineParam:
		b.WriteString("{" + e.Name)
		if e.Init != nil {
			b.WriteString(" = ")
			pr.expr(e.Init, lvCmp)
		}
		for _, f := range e.Fields {
			b.WriteString("; ")
			writeField(b, f)
		}
		b.WriteByte('}')
	case *DimRef:
		b.WriteString("dim " + e.Name)
	case *Instance:
		writeInstance(b, e)
	case *Call:
		switch c := e.Callee.(type) {
		case *Ident:
			b.WriteString(c.Name)
		case *Instance:
			writeInstance(b, c)
		default:
			b.WriteString("<unknown callee>")
		}
		b.WriteByte('(')
		for i, a := range e.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			pr.expr(a, lvCmp)
		}
		b.WriteByte(')')
	default:
		b.WriteString("<unknown expression>")
	}
}

func writeSpec(b *strings.Builder, spec string, caps []Capture) {
	b.WriteString(quoteString(spec))
	if len(caps) == 0 {
		return
	}
	b.WriteString(" [")
	for i, c := range caps {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(quoteString(c.Name))
	}
	b.WriteByte(']')
}

func writeInstance(b *strings.Builder, in *Instance) {
	b.WriteString(in.Layer + "[")
	for i, a := range in.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		if a.Name != "" {
			b.WriteString(a.Name + "=")
		}
		writeConfigValue(b, a.Value)
	}
	b.WriteByte(']')
}

func writeConfigValue(b *strings.Builder, v ConfigValue) {
	switch {
	case v.IsStr:
		b.WriteString(quoteString(v.Str))
	case v.Number != nil:
		b.WriteString(numberText(v.Number))
	default:
		b.WriteString(v.Ref)
	}
}

func writeField(b *strings.Builder, f Field) {
	b.WriteByte(f.Kind)
	b.WriteString("=[")
	for i, d := range f.Dims {
		if i > 0 {
			b.WriteString("; ")
		}
		if i < len(f.Names) && f.Names[i] != "" {
			b.WriteString(f.Names[i])
			continue
		}
		b.WriteString(strconv.Itoa(d))
	}
	b.WriteByte(']')
}

func writeRow(b *strings.Builder, r *RowDecl) {
	if r.Unknown {
		b.WriteByte('?')
		return
	}
	for i, d := range r.Dims {
		if i > 0 {
			b.WriteString(", ")
		}
		if d.Max {
			b.WriteString("<=")
		}
		if d.Name != "" {
			b.WriteString(d.Name)
		} else {
			b.WriteString(strconv.Itoa(d.Size))
		}
		if d.Basis != "" {
			b.WriteString(":" + d.Basis)
		}
	}
}

func writeShape(b *strings.Builder, s *ShapeDecl) {
	var sb strings.Builder
	if s.Batch != nil {
		writeRow(&sb, s.Batch)
		sb.WriteString(" | ")
	}
	if s.Input != nil {
		writeRow(&sb, s.Input)
		sb.WriteString(" -> ")
	}
	if s.Index != nil {
		sb.WriteString("index ")
		writeRow(&sb, &RowDecl{Dims: []DimDecl{*s.Index}})
	} else if s.Output != nil {
		writeRow(&sb, s.Output)
	}
	b.WriteString(" :")
	if t := strings.TrimSpace(sb.String()); t != "" {
		b.WriteString(" " + t)
	}
}

func (pr *printer) init(in *Init) {
	if in == nil {
		return
	}
	pr.b.WriteString(" = ")
	switch in.Kind {
	case InitRange:
		pr.b.WriteString("range")
	case InitDropout:
		pr.b.WriteString("dropout " + formatFloat(in.Number))
	case InitNumber:
		pr.b.WriteString(formatFloat(in.Number))
	case InitLiteral:
		pr.body(in.Literal)
	}
}

// startsWithFunc reports whether s begins with a FUNC name, which at the
// start of an assignment's right-hand side would read as `FUNC expr`.
func startsWithFunc(s string) bool {
	i := 0
	for i < len(s) && isIdentChar(s[i]) {
		i++
	}
	return isFunc(s[:i])
}

// rhsOperand renders an operand of an assignment's right-hand side.
func rhsOperand(e Expr, min int) string {
	pr := printer{}
	pr.expr(e, min)
	return pr.b.String()
}

func (pr *printer) stmt(s Stmt) {
	b := &pr.b
	switch s := s.(type) {
	case *InputStmt:
		b.WriteString("input " + s.Name)
		writeShape(b, s.Shape)
		pr.init(s.Init)
	case *LeafStmt:
		b.WriteString("leaf " + s.Name)
		if s.Shape != nil {
			writeShape(b, s.Shape)
		}
		pr.init(s.Init)
	case *ParamStmt:
		b.WriteString("param " + s.Name)
		pr.init(s.Init)
		for _, f := range s.Fields {
			b.WriteByte(' ')
			writeField(b, f)
		}
	case *LetStmt:
		b.WriteString("let " + s.Name + " = ")
		pr.expr(s.Expr, lvCmp)
	case *DimStmt:
		if s.ValueName != "" {
			b.WriteString("dim " + s.Name + " = " + s.ValueName)
		} else {
			b.WriteString("dim " + s.Name + " = " + strconv.Itoa(s.Value))
		}
	case *LayerStmt:
		b.WriteString("layer " + s.Name)
		if len(s.Config) > 0 {
			b.WriteByte('[')
			for i, c := range s.Config {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(c.Name)
				if c.Default != nil {
					b.WriteByte('=')
					writeConfigValue(b, *c.Default)
				}
			}
			b.WriteByte(']')
		}
		b.WriteByte('(')
		for i, a := range s.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(a.Name)
			if a.Index {
				b.WriteString(" : index")
			}
		}
		b.WriteByte(')')
		if !s.Block {
			b.WriteString(" = ")
			pr.expr(s.Result, lvCmp)
			return
		}
		b.WriteString(":")
		pr.block(s.Body, s.Result)
	case *EntryStmt:
		if s.Loss {
			b.WriteString("loss ")
		} else {
			b.WriteString("entry ")
		}
		b.WriteString(s.Name + ":")
		pr.block(s.Body, s.Result)
	case *OptimStmt:
		b.WriteString(optimText(s))
	case *AssignStmt:
		if s.Inline {
			b.WriteString("{ " + s.Target + " }")
		} else {
			b.WriteString(s.Target)
		}
		b.WriteString(" " + s.Accum + " ")
		switch {
		case isFunc(s.Op) && len(s.Args) == 1:
			b.WriteString(s.Op + " ")
			pr.expr(s.Args[0], lvCmp)
		case len(s.Args) == 2:
			// Print as the binary node the parser would have built.
			lv := level(&Binary{Op: s.Op})
			if s.Op == "**." {
				lv = lvPow
			}
			x := rhsOperand(s.Args[0], lv)
			if lv == lvPow {
				x = rhsOperand(s.Args[0], lvSigned)
			}
			if startsWithFunc(x) {
				x = "(" + x + ")"
			}
			b.WriteString(x + " " + s.Op + " ")
			if lv == lvPow {
				pr.expr(s.Args[1], lvAtom)
			} else {
				pr.expr(s.Args[1], lv+1)
			}
		case len(s.Args) == 1:
			x := rhsOperand(s.Args[0], lvCmp)
			if startsWithFunc(x) {
				x = "(" + x + ")"
			}
			b.WriteString(x)
		}
		if s.Logic != "" || s.LogicPos != (spec.Pos{}) {
			b.WriteString(" ~logic:" + quoteString(s.Logic))
		}
	default:
		b.WriteString("# unknown statement")
	}
}

// block prints the indented lines of a layer or entry block.
func (pr *printer) block(body []Stmt, result Expr) {
	for _, st := range body {
		pr.b.WriteString("\n    ")
		pr.stmt(st)
	}
	pr.b.WriteString("\n    return ")
	pr.expr(result, lvCmp)
}

// optimText prints an optimizer statement: its kind and settings.
func optimText(s *OptimStmt) string {
	var b strings.Builder
	b.WriteString(s.Kind)
	for _, st := range s.Settings {
		b.WriteString(" " + st.Name)
		if st.Value != nil {
			b.WriteString("=" + numberText(st.Value))
		} else if st.Word != "" {
			b.WriteString("=" + st.Word)
		}
	}
	return b.String()
}
