package program

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ocannlgen/ocannlgen/ops"
	"github.com/ocannlgen/ocannlgen/spec"
)

// Limits that keep adversarial input from exhausting the stack, here and in
// the recursive walkers of the tree downstream.
const (
	// maxNesting bounds the nesting of parentheses, brackets and braces.
	maxNesting = 1000
	// maxTreeDepth bounds the depth of an expression tree (a chain
	// a + b + c + ... is as deep as it is long).
	maxTreeDepth = 5000
)

// parser is a recursive-descent parser over a pre-lexed token slice. It
// reports the first syntax error by panicking with a bailout, which Parse
// and ParseExpr turn back into an *Error.
type parser struct {
	toks    []token
	i       int
	nesting int // open brackets being parsed
	// depths records the depth of every non-leaf expression node built so
	// far (leaves have depth 0), to enforce maxTreeDepth.
	depths map[Expr]int
	// powExp remembers the exponent literal of each *Pow, so that an
	// assignment `t =: x **. 2` can hand it on as a *Number argument.
	powExp map[*Pow]*Number
}

// bailout carries a syntax error up the parser's call stack.
type bailout struct{ err *Error }

// Parse parses a whole program: one statement per line. A newline inside an
// open parenthesis, bracket or brace continues the statement. On failure it
// returns a nil program and an *Error locating the first problem.
func Parse(src string) (prog *Program, err error) {
	p := &parser{toks: lex(src)}
	defer func() {
		if err = asError(recover()); err != nil {
			prog = nil
		}
	}()
	prog = &Program{}
	for {
		p.skipNewlines()
		if p.tok().kind == tEOF {
			return prog, nil
		}
		prog.Stmts = append(prog.Stmts, p.parseStmt())
		p.endStmt()
	}
}

// ParseExpr parses a single expression (surrounding blank lines and
// comments are allowed). On failure it returns an *Error.
func ParseExpr(src string) (e Expr, err error) {
	p := &parser{toks: lex(src)}
	defer func() {
		if err = asError(recover()); err != nil {
			e = nil
		}
	}()
	p.skipNewlines()
	e = p.parseExpr()
	p.skipNewlines()
	if t := p.tok(); t.kind != tEOF {
		p.failTok(t, "unexpected %s", t.describe())
	}
	return e, nil
}

// asError converts a recovered bailout into the *Error it carries (nil
// when nothing was recovered); any other panic is a bug and is propagated.
func asError(r any) error {
	if r == nil {
		return nil
	}
	b, ok := r.(bailout)
	if !ok {
		panic(r)
	}
	return b.err
}

// ---- token access ----

// tok returns the current token, reporting a lexical error if the lexer
// stopped here.
func (p *parser) tok() token {
	t := p.toks[p.i]
	if t.kind == tError {
		p.fail(t.pos, "%s", t.text)
	}
	return t
}

// peek returns the token n places ahead without checking it.
func (p *parser) peek(n int) token {
	if p.i+n >= len(p.toks) {
		return p.toks[len(p.toks)-1]
	}
	return p.toks[p.i+n]
}

// next consumes and returns the current token.
func (p *parser) next() token {
	t := p.tok()
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) skipNewlines() {
	for p.tok().kind == tNewline {
		p.next()
	}
}

// fail aborts parsing with an error at pos.
func (p *parser) fail(pos spec.Pos, format string, args ...any) {
	panic(bailout{&Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}})
}

// failUnclosed aborts at t, which neither continues nor closes the
// bracket open: the message is want, cites open's position, then says
// what t is, followed by tail.
func (p *parser) failUnclosed(t, open token, want, tail string) {
	if t.kind == tError {
		p.fail(t.pos, "%s", t.text)
	}
	var m spec.Message
	m.Printf("%s", want).Cite(open.pos, fmt.Sprintf("'%s' opened here", open.text)).Printf(", found %s%s", t.describe(), tail)
	msg, rel := m.Done()
	panic(bailout{&Error{Pos: t.pos, Msg: msg, Related: rel}})
}

// failTok aborts at t; a lexical error token reports its own message.
func (p *parser) failTok(t token, format string, args ...any) {
	if t.kind == tError {
		p.fail(t.pos, "%s", t.text)
	}
	p.fail(t.pos, format, args...)
}

// acceptEq consumes an '=' if present. A "=-" lexed as an assignment
// operator is split into '=' and '-' (as in `let x =-3`).
func (p *parser) acceptEq() bool {
	t := p.tok()
	if t.isOp("=") {
		p.next()
		return true
	}
	if t.kind == tAccum && t.text == "=-" {
		p.toks[p.i] = token{kind: tOp, text: "-", pos: spec.Pos{Line: t.pos.Line, Col: t.pos.Col + 1}}
		return true
	}
	return false
}

// enter and leave track bracket nesting; enter is called at an opening
// bracket.
func (p *parser) enter() {
	p.nesting++
	if p.nesting > maxNesting {
		p.fail(p.tok().pos, "brackets nested too deeply (more than %d levels)", maxNesting)
	}
}

func (p *parser) leave() { p.nesting-- }

// track records the depth of the new node e built over kids and rejects
// trees deeper than maxTreeDepth. It returns e.
func track[T Expr](p *parser, e T, kids ...Expr) T {
	d := 0
	for _, k := range kids {
		if dk := p.depths[k]; dk > d {
			d = dk
		}
	}
	d++
	if d > maxTreeDepth {
		p.fail(e.ExprPos(), "expression nested too deeply (more than %d levels)", maxTreeDepth)
	}
	if p.depths == nil {
		p.depths = map[Expr]int{}
	}
	p.depths[e] = d
	return e
}

// expectName consumes a tensor name (not a reserved word); what names the
// construct for the error message ("input name" etc.).
func (p *parser) expectName(what string) token {
	t := p.tok()
	if t.kind != tName {
		p.failTok(t, "expected %s, found %s", what, t.describe())
	}
	if isKeyword(t.text) {
		p.fail(t.pos, "%s is a reserved word and cannot be used as a tensor name", spec.Quote(t.text))
	}
	return p.next()
}

// expectInt consumes a non-negative integer literal.
func (p *parser) expectInt(what string) (int, spec.Pos) {
	t := p.tok()
	if t.kind != tNumber {
		p.failTok(t, "expected an integer %s, found %s", what, t.describe())
	}
	if strings.IndexFunc(t.text, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		p.fail(t.pos, "expected an integer %s, found %s", what, t.describe())
	}
	n, err := strconv.Atoi(t.text)
	if err != nil {
		p.fail(t.pos, "integer %s out of range", spec.Clip(t.text))
	}
	p.next()
	return n, t.pos
}

// number consumes the number token t (the current token) and builds a
// *Number at pos, negated when neg.
func (p *parser) number(t token, neg bool, pos spec.Pos) *Number {
	v, err := strconv.ParseFloat(t.text, 64)
	if math.IsInf(v, 0) {
		p.fail(t.pos, "number %s out of range", spec.Clip(t.text))
	}
	if ne, ok := err.(*strconv.NumError); err != nil && !(ok && ne.Err == strconv.ErrRange) {
		// Not reachable for lexed numbers; underflow to zero is accepted.
		p.fail(t.pos, "invalid number %s", spec.Clip(t.text))
	}
	p.next()
	text := t.text
	if neg {
		v, text = -v, "-"+text
	}
	return &Number{Pos: pos, Value: v, Text: text}
}

// ---- statements ----

func (p *parser) endStmt() {
	t := p.tok()
	switch t.kind {
	case tNewline:
		p.next()
	case tEOF:
	default:
		p.failTok(t, "unexpected %s", t.describe())
	}
}

func (p *parser) parseStmt() Stmt {
	t := p.tok()
	if t.isOp("{") {
		return p.parseAssign()
	}
	if t.kind != tName {
		p.failTok(t, "unexpected %s (expected a statement)", t.describe())
	}
	if nt := p.peek(1); nt.kind == tName {
		switch t.text {
		case "layer":
			return p.parseLayer()
		case "entry", "loss":
			return p.parseEntry()
		case "sgd", "adam", "adamw":
			return p.parseOptim()
		}
	}
	switch t.text {
	case "input":
		return p.parseInput()
	case "leaf":
		return p.parseLeaf()
	case "param":
		return p.parseParam()
	case "dim":
		return p.parseDim()
	case "let":
		p.next()
		name := p.expectName("a name after let")
		if !p.acceptEq() {
			nt := p.tok()
			p.failTok(nt, "expected '=' after let name, found %s", nt.describe())
		}
		return &LetStmt{Pos: t.pos, Name: name.text, Expr: p.parseExpr()}
	}
	nt := p.peek(1)
	if isKeyword(t.text) {
		if nt.isOp("=") || nt.kind == tAccum {
			p.fail(t.pos, "%s is a reserved word and cannot be used as a tensor name", spec.Quote(t.text))
		}
		p.fail(t.pos, "unexpected keyword %s (expected a statement)", spec.Quote(t.text))
	}
	switch {
	case nt.isOp("="):
		p.next()
		p.next()
		return &LetStmt{Pos: t.pos, Name: t.text, Expr: p.parseExpr()}
	case nt.kind == tAccum:
		return p.parseAssign()
	}
	p.next()
	p.failTok(nt, "expected '=' or an assignment operator after %s, found %s", spec.Quote(t.text), nt.describe())
	return nil
}

func (p *parser) parseInput() Stmt {
	kw := p.next()
	name := p.expectName("a name after input")
	if t := p.tok(); !t.isOp(":") {
		p.failTok(t, "expected ':' after input name, found %s", t.describe())
	}
	p.next()
	s := &InputStmt{Pos: kw.pos, Name: name.text, Shape: p.parseShape()}
	if p.acceptEq() {
		s.Init = p.parseInit()
	}
	return s
}

func (p *parser) parseLeaf() Stmt {
	kw := p.next()
	name := p.expectName("a name after leaf")
	s := &LeafStmt{Pos: kw.pos, Name: name.text}
	if p.tok().isOp(":") {
		p.next()
		s.Shape = p.parseShape()
	}
	if p.acceptEq() {
		s.Init = p.parseInit()
	}
	return s
}

func (p *parser) parseParam() Stmt {
	kw := p.next()
	name := p.expectName("a name after param")
	s := &ParamStmt{Pos: kw.pos, Name: name.text}
	if p.acceptEq() {
		s.Init = p.parseInit()
	}
	for {
		t := p.tok()
		switch {
		case t.isOp(";"):
			p.next()
		case t.kind == tName:
			s.Fields = append(s.Fields, p.parseField())
		default:
			return s
		}
	}
}

func (p *parser) parseDim() Stmt {
	kw := p.next()
	t := p.tok()
	if t.kind != tName {
		p.failTok(t, "expected a label name after dim, found %s", t.describe())
	}
	p.next()
	if !p.acceptEq() {
		nt := p.tok()
		p.failTok(nt, "expected '=' after dim name, found %s", nt.describe())
	}
	if n := p.tok(); n.kind == tName {
		p.next()
		return &DimStmt{Pos: kw.pos, Name: t.text, ValueName: n.text}
	}
	v, _ := p.expectInt("size after '='")
	return &DimStmt{Pos: kw.pos, Name: t.text, Value: v}
}

func (p *parser) parseAssign() Stmt {
	first := p.tok()
	s := &AssignStmt{Pos: first.pos}
	if first.isOp("{") {
		p.next()
		name := p.expectName("a name after '{'")
		if t := p.tok(); !t.isOp("}") {
			p.failTok(t, "expected '}' after the name of an inline assignment target, found %s", t.describe())
		}
		p.next()
		s.Target, s.TargetPos, s.Inline = name.text, name.pos, true
	} else {
		name := p.expectName("a target name")
		s.Target, s.TargetPos = name.text, name.pos
	}
	acc := p.tok()
	if acc.kind != tAccum {
		p.failTok(acc, "expected an assignment operator (=:, =+, =:+, ...) after %s, found %s", spec.Quote(s.Target), acc.describe())
	}
	p.next()
	s.Accum = acc.text
	if t := p.tok(); t.kind == tName && isFunc(t.text) {
		p.next()
		s.Op = t.text
		s.Args = []Expr{p.parseExpr()}
	} else {
		switch e := p.parseExpr().(type) {
		case *Binary:
			s.Op, s.Args = e.Op, []Expr{e.X, e.Y}
		case *Pow:
			s.Op, s.Args = "**.", []Expr{e.X, p.powExp[e]}
		default:
			s.Args = []Expr{e}
		}
	}
	if t := p.tok(); t.kind == tLogic {
		p.next()
		st := p.tok()
		if st.kind != tString {
			p.failTok(st, "expected a string after ~logic:, found %s", st.describe())
		}
		p.next()
		s.Logic, s.LogicPos = st.text, st.pos
	}
	return s
}

// ---- shapes, inits, fields ----

func (p *parser) parseShape() *ShapeDecl {
	s := &ShapeDecl{Pos: p.tok().pos}
	if p.atIndex() {
		p.fail(p.tok().pos, "an index input needs its batch axes first: write BATCH | index N (for instance 8, 128 | index 256)")
	}
	r := p.parseRow()
	if p.tok().isOp("|") {
		p.next()
		s.Batch = r
		if p.atIndex() {
			s.Index = p.parseIndex()
			s.Output = &RowDecl{Pos: s.Index.Pos}
			return s
		}
		r = p.parseRow()
	}
	if p.tok().isOp("->") {
		p.next()
		s.Input = r
		if p.atIndex() {
			p.fail(p.tok().pos, "an index input has no input axes: write BATCH | index N")
		}
		r = p.parseRow()
	}
	s.Output = r
	if t := p.tok(); t.isOp("|") || t.isOp("->") {
		p.fail(t.pos, "unexpected %s in shape (the form is batch | input -> output)", t.describe())
	}
	return s
}

// parseDimSize parses a size: an integer, or a name (a Go constant).
func (p *parser) parseDimSize(what string) DimDecl {
	if n := p.tok(); n.kind == tName {
		p.next()
		return DimDecl{Pos: n.pos, Name: n.text}
	}
	size, pos := p.expectInt(what)
	return DimDecl{Pos: pos, Size: size}
}

// atIndex reports whether the next tokens are `index N` (or `index NAME`):
// an index input's bound.
func (p *parser) atIndex() bool {
	t, n := p.tok(), p.peek(1)
	return t.kind == tName && t.text == "index" && (n.kind == tNumber || n.kind == tName) && n.pos.Line == t.pos.Line
}

// parseIndex parses `index N` after the batch row: the whole output row of
// an index input.
func (p *parser) parseIndex() *DimDecl {
	p.next()
	d := p.parseDimSize("index bound")
	if d.Name == "" && d.Size <= 0 {
		p.fail(d.Pos, "index %d: the bound of an index input must be positive (the size of the axis its values index)", d.Size)
	}
	if t := p.tok(); t.isOp(",") || t.isOp("|") || t.isOp("->") || t.isOp(":") {
		p.fail(t.pos, "unexpected %s after index %s: `index N` is the whole output row of an index input (BATCH | index N)", t.describe(), p.describeDim(d))
	}
	return &d
}

func (p *parser) describeDim(d DimDecl) string {
	if d.Name != "" {
		return d.Name
	}
	return strconv.Itoa(d.Size)
}

func (p *parser) parseRow() *RowDecl {
	t := p.tok()
	r := &RowDecl{Pos: t.pos}
	if t.isOp("?") {
		p.next()
		r.Unknown = true
		return r
	}
	if t.kind != tNumber && t.kind != tName && !t.isOp("<") {
		return r // an empty row
	}
	for {
		max := false
		start := p.tok().pos
		if p.tok().isOp("<") {
			p.next()
			if e := p.tok(); !e.isOp("=") || e.pos.Col != start.Col+1 || e.pos.Line != start.Line {
				p.failTok(e, "expected <=N (a number of rows chosen at run time, at most N), found < followed by %s", e.describe())
			}
			p.next()
			max = true
		}
		d := p.parseDimSize("dimension size")
		if max {
			d.Pos, d.Max = start, true
		}
		if !max && p.tok().isOp(":") {
			p.next()
			b := p.tok()
			if b.kind != tName {
				p.failTok(b, "expected a basis name after ':', found %s", b.describe())
			}
			p.next()
			d.Basis = b.text
		}
		r.Dims = append(r.Dims, d)
		if !p.tok().isOp(",") {
			return r
		}
		p.next()
	}
}

func (p *parser) parseInit() *Init {
	t := p.tok()
	if t.isName("range") {
		p.next()
		return &Init{Pos: t.pos, Kind: InitRange}
	}
	if t.isName("dropout") {
		p.next()
		n := p.signedNumber("dropout probability")
		return &Init{Pos: t.pos, Kind: InitDropout, Number: n.Value}
	}
	if !(t.kind == tNumber || t.isOp("-") || t.isOp("(") || t.isOp("[") || t.isOp("[|")) {
		p.failTok(t, "expected an initializer (range, a number or a literal) after '=', found %s", t.describe())
	}
	switch e := p.parseArg("=").(type) {
	case *Number:
		return &Init{Pos: t.pos, Kind: InitNumber, Number: e.Value}
	case *Literal:
		p.checkNumericLiteral(e)
		return &Init{Pos: t.pos, Kind: InitLiteral, Literal: e}
	default:
		p.fail(e.ExprPos(), "an initializer must be range, a number or a literal of numbers")
	}
	return nil
}

func (p *parser) checkNumericLiteral(l *Literal) {
	for _, it := range l.Items {
		switch it := it.(type) {
		case *Number:
		case *Literal:
			p.checkNumericLiteral(it)
		default:
			p.fail(it.ExprPos(), "an initializer literal may contain only numbers and nested literals")
		}
	}
}

// fieldKind maps a field name to its kind byte; OCANNL's long names are
// accepted as aliases.
func fieldKind(name string) byte {
	switch name {
	case "o", "output_dims":
		return 'o'
	case "i", "input_dims":
		return 'i'
	case "b", "batch_dims":
		return 'b'
	}
	return 0
}

func (p *parser) parseField() Field {
	t := p.tok()
	if t.kind != tName {
		p.failTok(t, "expected a field (o=[...], i=[...] or b=[...]), found %s", t.describe())
	}
	k := fieldKind(t.text)
	if k == 0 {
		p.fail(t.pos, "unknown field %s (expected o, i or b)", spec.Quote(t.text))
	}
	p.next()
	if !p.acceptEq() {
		nt := p.tok()
		p.failTok(nt, "expected '=' after field %s, found %s", spec.Clip(t.text), nt.describe())
	}
	open := p.tok()
	if !open.isOp("[") {
		p.failTok(open, "expected '[' to start the dimensions of field %s, found %s", spec.Clip(t.text), open.describe())
	}
	p.next()
	f := Field{Pos: t.pos, Kind: k}
	for {
		if p.tok().isOp("]") {
			p.next()
			return f
		}
		if nt := p.tok(); nt.kind == tName {
			p.next()
			if f.Names == nil {
				f.Names = make([]string, len(f.Dims))
			}
			f.Dims = append(f.Dims, 0)
			f.Names = append(f.Names, nt.text)
		} else {
			n, _ := p.expectInt("dimension in field " + t.text)
			f.Dims = append(f.Dims, n)
			if f.Names != nil {
				f.Names = append(f.Names, "")
			}
		}
		switch c := p.tok(); {
		case c.isOp(";"):
			p.next()
		case c.isOp("]"):
		default:
			p.failTok(c, "expected ';' or ']' in the dimensions of field %s, found %s", spec.Clip(t.text), c.describe())
		}
	}
}

// ---- expressions ----
//
// Levels, loosest first:
//   comparison  < = <>            left
//   @-level     @^+ @^^ @|        right (@^^ and @| are postfix)
//   additive    + - +* +++ ++     left  (++ postfix; ++^ is bound to its tuple)
//   multiplic.  * *. /. /         left
//   power       **. NUMBER        (a chain a **. 2 **. 3 is rejected)
//   prefix -    -NUMBER is a negative number, -e is neg e
//   application FUNC atom | where atom atom atom | fma atom atom atom
//   atom        NAME NUMBER literal (e) {param} dim NAME

func (p *parser) parseExpr() Expr {
	x := p.parseAt()
	for {
		t := p.tok()
		var op string
		switch {
		case t.isOp("<"), t.isOp("="), t.isOp("<>"):
			op = t.text
			p.next()
		case t.kind == tAccum && t.text == "=-":
			p.acceptEq()
			op = "="
		default:
			return x
		}
		y := p.parseAt()
		x = track(p, &Binary{Pos: t.pos, Op: op, X: x, Y: y}, x, y)
	}
}

// parseAt parses the right-associative @-level. The chain is collected
// iteratively and folded from the right: in a @^+ "s" b @^+ "t" c, b and c
// pair first. The postfix @^^ and @| apply to the operand just parsed.
func (p *parser) parseAt() Expr {
	type link struct {
		x  Expr
		op *Einsum // the @^+ following x
	}
	var chain []link
	x := p.parseAdd()
	for {
		t := p.tok()
		switch {
		case t.isOp("@^+"):
			p.next()
			e := &Einsum{Pos: t.pos, Op: t.text}
			e.Spec, e.SpecPos, e.Captures = p.parseSpec(t.text)
			chain = append(chain, link{x, e})
			x = p.parseAdd()
		case t.isOp("@^^"):
			p.next()
			e := &Einsum{Pos: t.pos, Op: t.text, X: x}
			e.Spec, e.SpecPos, e.Captures = p.parseSpec(t.text)
			x = track(p, e, e.X)
		case t.isOp("@|"):
			p.next()
			n, _ := p.expectInt("index after '@|'")
			x = track(p, &Slice{Pos: t.pos, X: x, Index: n}, x)
			if nt := p.tok(); nt.kind == tOp && isTighterThanAt(nt.text) {
				p.fail(nt.pos, "the index of '@|' must be a single integer; parenthesize the sliced expression, as in (x @| 0) %s y", spec.Clip(nt.text))
			}
		default:
			for k := len(chain) - 1; k >= 0; k-- {
				e := chain[k].op
				e.X, e.Y = chain[k].x, x
				x = track(p, e, e.X, e.Y)
			}
			return x
		}
	}
}

// isTighterThanAt reports whether op is an infix operator binding tighter
// than the @-level (and so cannot follow the integer of `@|`).
func isTighterThanAt(op string) bool {
	switch op {
	case "+", "-", "+*", "+++", "++", "++^", "*", "*.", "/.", "/", "**.":
		return true
	}
	return false
}

func (p *parser) parseAdd() Expr {
	x := p.parseMul()
	for {
		t := p.tok()
		switch {
		case t.isOp("+"), t.isOp("-"):
			p.next()
			y := p.parseMul()
			x = track(p, &Binary{Pos: t.pos, Op: t.text, X: x, Y: y}, x, y)
		case t.isOp("+*"), t.isOp("+++"), t.isOp("@@"):
			p.next()
			e := &Einsum{Pos: t.pos, Op: t.text, X: x}
			e.Spec, e.SpecPos, e.Captures = p.parseSpec(t.text)
			e.Y = p.parseMul()
			x = track(p, e, e.X, e.Y)
		case t.isOp("++"):
			p.next()
			e := &Einsum{Pos: t.pos, Op: t.text, X: x}
			e.Spec, e.SpecPos, e.Captures = p.parseSpec(t.text)
			x = track(p, e, e.X)
		case t.isOp("++^"):
			p.fail(t.pos, `"++^" must follow a parenthesized list of operands, as in (a, b) ++^ "spec"`)
		default:
			return x
		}
	}
}

func (p *parser) parseMul() Expr {
	x := p.parsePow()
	for {
		t := p.tok()
		if !(t.isOp("*") || t.isOp("*.") || t.isOp("/.") || t.isOp("/")) {
			return x
		}
		p.next()
		y := p.parsePow()
		x = track(p, &Binary{Pos: t.pos, Op: t.text, X: x, Y: y}, x, y)
	}
}

func (p *parser) parsePow() Expr {
	x := p.parseSigned()
	t := p.tok()
	if !t.isOp("**.") {
		return x
	}
	p.next()
	var n *Number
	if open := p.tok(); open.isOp("(") {
		p.next()
		n = p.signedNumber("inside the parenthesized exponent of '**.'")
		if c := p.tok(); !c.isOp(")") {
			p.failUnclosed(c, open, "expected ')' to close '('", "")
		}
		p.next()
	} else {
		n = p.signedNumber("after '**.'")
	}
	pw := track(p, &Pow{Pos: t.pos, X: x, Exp: n.Value}, x)
	if p.powExp == nil {
		p.powExp = map[*Pow]*Number{}
	}
	p.powExp[pw] = n
	if nt := p.tok(); nt.isOp("**.") {
		p.fail(nt.pos, "the exponent of '**.' must be a single number; parenthesize the base, as in (x **. 2) **. 3")
	}
	return pw
}

// signedNumber parses an optionally negated number literal.
func (p *parser) signedNumber(where string) *Number {
	t := p.tok()
	pos, neg := t.pos, false
	if t.isOp("-") {
		p.next()
		t, neg = p.tok(), true
	}
	if t.kind != tNumber {
		p.failTok(t, "expected a number %s, found %s", where, t.describe())
	}
	return p.number(t, neg, pos)
}

// parseSigned parses prefix minuses: before a number a minus makes a
// negative number, otherwise it applies neg to its operand.
func (p *parser) parseSigned() Expr {
	return p.withMinus(p.parseApp)
}

// withMinus parses a run of prefix minuses followed by an operand parsed by
// operand, iteratively (so a long run cannot exhaust the stack).
func (p *parser) withMinus(operand func() Expr) Expr {
	var minus []spec.Pos
	var x Expr
	for {
		t := p.tok()
		if !t.isOp("-") {
			x = operand()
			break
		}
		p.next()
		if nt := p.tok(); nt.kind == tNumber {
			x = p.number(nt, true, t.pos)
			break
		}
		minus = append(minus, t.pos)
	}
	for k := len(minus) - 1; k >= 0; k-- {
		x = track(p, &Unary{Pos: minus[k], Func: string(ops.Neg), X: x}, x)
	}
	return x
}

func (p *parser) parseApp() Expr {
	t := p.tok()
	if t.kind == tName {
		switch {
		case isFunc(t.text):
			p.next()
			x := p.parseArg(t.text)
			return track(p, &Unary{Pos: t.pos, Func: t.text, X: x}, x)
		case isTernary(t.text):
			p.next()
			e := &Ternary{Pos: t.pos, Op: t.text}
			e.A = p.parseArg(t.text)
			e.B = p.parseArg(t.text)
			e.C = p.parseArg(t.text)
			return track(p, e, e.A, e.B, e.C)
		}
	}
	x := p.parseAtom()
	if id, ok := x.(*Ident); ok && startsAtom(p.tok()) {
		if n := p.tok(); n.isOp("(") || n.isOp("[") {
			p.fail(id.Pos, "unknown function %s (a layer is applied as %s(...) or %s[...](...), with no space before the bracket)", spec.Quote(id.Name), spec.Clip(id.Name), spec.Clip(id.Name))
		}
		p.fail(id.Pos, "unknown function %s", spec.Quote(id.Name))
	}
	return x
}

// parseArg parses an argument of a function application: an atom,
// optionally preceded by minuses.
func (p *parser) parseArg(fn string) Expr {
	return p.withMinus(func() Expr {
		t := p.tok()
		if t.kind == tName && (isFunc(t.text) || isTernary(t.text)) {
			p.fail(t.pos, "the application of %s must be parenthesized when used as an argument of %s", spec.Quote(t.text), spec.Quote(fn))
		}
		if !startsAtom(t) {
			p.failTok(t, "expected an argument after %s, found %s", spec.Quote(fn), t.describe())
		}
		return p.parseAtom()
	})
}

// startsAtom reports whether t can begin an atom.
func startsAtom(t token) bool {
	switch t.kind {
	case tName, tNumber:
		return true
	case tOp:
		switch t.text {
		case "(", "[", "[|", "{":
			return true
		}
	}
	return false
}

func (p *parser) parseAtom() Expr {
	t := p.tok()
	switch t.kind {
	case tName:
		switch {
		case t.text == "dim":
			p.next()
			n := p.tok()
			if n.kind != tName {
				p.failTok(n, "expected a label name after dim, found %s", n.describe())
			}
			p.next()
			return &DimRef{Pos: t.pos, Name: n.text}
		case t.text == "range":
			p.fail(t.pos, `"range" can only be used as an initializer`)
		case isKeyword(t.text):
			p.fail(t.pos, "unexpected keyword %s (expected an expression)", spec.Quote(t.text))
		}
		p.next()
		if adjacent(t, p.tok(), "(") || adjacent(t, p.tok(), "[") {
			return p.parseCall(t)
		}
		return &Ident{Pos: t.pos, Name: t.text}
	case tNumber:
		return p.number(t, false, t.pos)
	case tOp:
		switch t.text {
		case "(":
			return p.parseParen()
		case "[":
			return p.parseList(LitOutput, ";", "]")
		case "[|":
			return p.parseList(LitBatch, ";", "|]")
		case "{":
			return p.parseInline()
		}
	}
	p.failTok(t, "unexpected %s (expected an expression)", t.describe())
	return nil
}

// parseParen parses `( e )` (a parenthesized expression), `( e1, ... )`
// (an input-axis literal) or `( e1, ... ) ++^ "spec"` (a concatenation).
func (p *parser) parseParen() Expr {
	p.enter()
	defer p.leave()
	open := p.next()
	if p.tok().isOp(")") {
		p.next()
		if t := p.tok(); t.isOp("++^") {
			p.fail(t.pos, `"++^" needs at least one operand`)
		}
		return &Literal{Pos: open.pos, Kind: LitInput}
	}
	items := []Expr{p.parseExpr()}
	tuple := false
	for {
		t := p.tok()
		if t.isOp(")") {
			p.next()
			break
		}
		if !t.isOp(",") {
			p.failUnclosed(t, open, "expected ',' or ')' to close '('", "")
		}
		p.next()
		tuple = true
		if p.tok().isOp(")") {
			p.next()
			break
		}
		items = append(items, p.parseExpr())
	}
	if t := p.tok(); t.isOp("++^") {
		p.next()
		c := &Concat{Pos: t.pos, Operands: items}
		c.Spec, c.SpecPos, c.Captures = p.parseSpec(t.text)
		return track(p, c, items...)
	}
	if !tuple {
		return items[0]
	}
	return track(p, &Literal{Pos: open.pos, Kind: LitInput, Items: items}, items...)
}

// parseList parses `[ a; b ]` or `[| a; b |]`; a trailing separator is allowed.
func (p *parser) parseList(kind LitKind, sep, close string) Expr {
	p.enter()
	defer p.leave()
	open := p.next()
	l := &Literal{Pos: open.pos, Kind: kind}
	for {
		if p.tok().isOp(close) {
			p.next()
			return track(p, l, l.Items...)
		}
		l.Items = append(l.Items, p.parseExpr())
		t := p.tok()
		switch {
		case t.isOp(sep):
			p.next()
		case t.isOp(close):
		default:
			p.failUnclosed(t, open, fmt.Sprintf("expected '%s' or '%s' in the literal opened", sep, close),
				fmt.Sprintf(" (items of %s...%s are separated by '%s')", open.text, close, sep))
		}
	}
}

// parseInline parses an inline parameter `{ NAME [= expr] { ; field } }`.
func (p *parser) parseInline() Expr {
	p.enter()
	defer p.leave()
	open := p.next()
	name := p.expectName("a parameter name after '{'")
	ip := &InlineParam{Pos: open.pos, Name: name.text}
	if p.acceptEq() {
		ip.Init = p.parseExpr()
	}
	for {
		t := p.tok()
		switch {
		case t.isOp("}"):
			p.next()
			if ip.Init != nil {
				return track(p, ip, ip.Init)
			}
			return ip
		case t.isOp(";"):
			p.next()
			if !p.tok().isOp("}") {
				ip.Fields = append(ip.Fields, p.parseField())
			}
		default:
			p.failUnclosed(t, open, "expected ';' or '}' in the inline parameter opened", "")
		}
	}
}

// parseSpec parses the spec string after the einsum operator op and an
// optional capture list: a '[' directly followed by a string.
func (p *parser) parseSpec(op string) (string, spec.Pos, []Capture) {
	t := p.tok()
	if t.kind != tString {
		p.failTok(t, "expected a spec string after %s, found %s", spec.Quote(op), t.describe())
	}
	p.next()
	if !p.tok().isOp("[") || p.peek(1).kind != tString {
		return t.text, t.pos, nil
	}
	open := p.next()
	var caps []Capture
	for {
		s := p.tok()
		if s.kind != tString {
			p.failUnclosed(s, open, "expected a label string in the capture list opened", "")
		}
		p.next()
		caps = append(caps, Capture{Pos: s.pos, Name: s.text})
		c := p.tok()
		switch {
		case c.isOp(";"):
			p.next()
			if p.tok().isOp("]") {
				p.next()
				return t.text, t.pos, caps
			}
		case c.isOp("]"):
			p.next()
			return t.text, t.pos, caps
		default:
			p.failUnclosed(c, open, "expected ';' or ']' in the capture list opened", "")
		}
	}
}

// ---- models: layers, instances, entries, optimizer ----

// adjacent reports whether the token next is the operator op written
// directly after the name t, with no space.
func adjacent(t, next token, op string) bool {
	return next.isOp(op) && next.pos.Line == t.pos.Line && next.pos.Col == t.pos.Col+len(t.text)
}

// parseCall parses `NAME(args)`, `NAME[cfg]` or `NAME[cfg](args)`; the
// name has been consumed.
func (p *parser) parseCall(name token) Expr {
	var callee Expr = &Ident{Pos: name.pos, Name: name.text}
	if p.tok().isOp("[") {
		in := &Instance{Pos: name.pos, Layer: name.text}
		open := p.next()
		p.enter()
		for !p.tok().isOp("]") {
			in.Args = append(in.Args, p.parseConfigArg())
			switch c := p.tok(); {
			case c.isOp(","):
				p.next()
			case c.isOp("]"):
			default:
				p.failUnclosed(c, open, "expected ',' or ']' in the configuration of "+name.text+" opened", "")
			}
		}
		end := p.next()
		p.leave()
		if !adjacent(token{kind: tName, text: "]", pos: end.pos}, p.tok(), "(") {
			return in
		}
		callee = in
	}
	open := p.next() // "("
	p.enter()
	defer p.leave()
	c := &Call{Pos: name.pos, Callee: callee}
	for !p.tok().isOp(")") {
		c.Args = append(c.Args, p.parseExpr())
		switch t := p.tok(); {
		case t.isOp(","):
			p.next()
		case t.isOp(")"):
		default:
			p.failUnclosed(t, open, "expected ',' or ')' in the application of "+name.text+" opened", "")
		}
	}
	p.next()
	if len(c.Args) == 0 {
		p.fail(open.pos, "the application of %s needs at least one tensor argument", spec.Clip(name.text))
	}
	return track(p, c, c.Args...)
}

// parseConfigArg parses `VALUE` or `NAME = VALUE`.
func (p *parser) parseConfigArg() ConfigArg {
	t := p.tok()
	if nt := p.peek(1); t.kind == tName && (nt.isOp("=") || nt.kind == tAccum && nt.text == "=-") {
		p.next()
		p.acceptEq()
		return ConfigArg{Pos: t.pos, Name: t.text, Value: p.parseConfigValue()}
	}
	return ConfigArg{Pos: t.pos, Value: p.parseConfigValue()}
}

// parseConfigValue parses a number (possibly negative), a string or a name.
func (p *parser) parseConfigValue() ConfigValue {
	t := p.tok()
	switch {
	case t.kind == tString:
		p.next()
		return ConfigValue{Pos: t.pos, Str: t.text, IsStr: true}
	case t.kind == tName && !isKeyword(t.text):
		p.next()
		return ConfigValue{Pos: t.pos, Ref: t.text}
	case t.kind == tNumber || t.isOp("-"):
		return ConfigValue{Pos: t.pos, Number: p.signedNumber("configuration value")}
	}
	p.failTok(t, "expected a configuration value (a number, a string or a name), found %s", t.describe())
	return ConfigValue{}
}

// parseLayer parses a layer definition.
func (p *parser) parseLayer() Stmt {
	kw := p.next()
	name := p.expectName("a layer name after layer")
	if isKeyword(name.text) {
		p.fail(name.pos, "%s is a reserved word and cannot name a layer", spec.Quote(name.text))
	}
	l := &LayerStmt{Pos: kw.pos, Name: name.text}
	seen := map[string]bool{}
	if p.tok().isOp("[") {
		open := p.next()
		for !p.tok().isOp("]") {
			n := p.expectName("a configuration argument name")
			if isKeyword(n.text) {
				p.fail(n.pos, "%s is a reserved word and cannot name a configuration argument", spec.Quote(n.text))
			}
			if seen[n.text] {
				p.fail(n.pos, "configuration argument %s is declared twice", spec.Quote(n.text))
			}
			seen[n.text] = true
			cp := ConfigParam{Pos: n.pos, Name: n.text}
			if p.acceptEq() {
				v := p.parseConfigValue()
				if v.Ref != "" {
					p.fail(v.Pos, "a default value must be a number or a string")
				}
				cp.Default = &v
			}
			l.Config = append(l.Config, cp)
			switch c := p.tok(); {
			case c.isOp(","):
				p.next()
			case c.isOp("]"):
			default:
				p.failUnclosed(c, open, "expected ',' or ']' in the configuration of layer "+name.text+" opened", "")
			}
		}
		p.next()
	}
	if t := p.tok(); !t.isOp("(") {
		p.failTok(t, "expected '(' and the tensor arguments of layer %s, found %s", spec.Clip(name.text), t.describe())
	}
	open := p.next()
	for !p.tok().isOp(")") {
		n := p.expectName("a tensor argument name")
		if isKeyword(n.text) {
			p.fail(n.pos, "%s is a reserved word and cannot name an argument", spec.Quote(n.text))
		}
		if seen[n.text] {
			p.fail(n.pos, "argument %s is declared twice", spec.Quote(n.text))
		}
		seen[n.text] = true
		arg := Name{Pos: n.pos, Name: n.text}
		if p.tok().isOp(":") {
			p.next()
			if k := p.tok(); k.kind != tName || k.text != "index" {
				p.failTok(k, "expected index after ':' in the tensor argument %s of layer %s (an argument declared NAME : index takes an index input), found %s", spec.Clip(n.text), spec.Clip(name.text), k.describe())
			}
			p.next()
			arg.Index = true
		}
		l.Args = append(l.Args, arg)
		switch c := p.tok(); {
		case c.isOp(","):
			p.next()
		case c.isOp(")"):
		default:
			p.failUnclosed(c, open, "expected ',' or ')' in the arguments of layer "+name.text+" opened", "")
		}
	}
	p.next()
	if len(l.Args) == 0 {
		p.fail(open.pos, "layer %s needs at least one tensor argument", spec.Clip(name.text))
	}
	switch t := p.tok(); {
	case t.isOp("="):
		p.next()
		l.Result = p.parseExpr()
		return l
	case t.isOp(":"):
		p.next()
		l.Block = true
		l.Body, l.Result = p.parseBlock("layer "+name.text, false)
		return l
	default:
		p.failTok(t, "expected '=' or ':' after the arguments of layer %s, found %s", spec.Clip(name.text), t.describe())
	}
	return nil
}

// parseEntry parses `entry NAME :` or `loss NAME :` and its block.
func (p *parser) parseEntry() Stmt {
	kw := p.next()
	name := p.expectName("a name after " + kw.text)
	if isKeyword(name.text) {
		p.fail(name.pos, "%s is a reserved word and cannot name an entry point", spec.Quote(name.text))
	}
	if t := p.tok(); !t.isOp(":") {
		p.failTok(t, "expected ':' after %s %s, then its statements on the following lines, found %s", spec.Clip(kw.text), spec.Clip(name.text), t.describe())
	}
	p.next()
	e := &EntryStmt{Pos: kw.pos, Name: name.text, Loss: kw.text == "loss"}
	e.Body, e.Result = p.parseBlock(kw.text+" "+name.text, true)
	return e
}

// parseBlock parses the lines of a layer or entry up to and including
// `return EXPR`.
func (p *parser) parseBlock(what string, inputs bool) ([]Stmt, Expr) {
	t := p.tok()
	if t.kind != tNewline {
		p.failTok(t, "expected the end of the line after ':' of %s, found %s", what, t.describe())
	}
	var body []Stmt
	for {
		p.skipNewlines()
		t := p.tok()
		if t.kind == tEOF {
			p.fail(t.pos, "%s has no return statement", what)
		}
		if t.isName("return") && !p.peek(1).isOp("=") && p.peek(1).kind != tAccum {
			p.next()
			r := p.parseExpr()
			return body, r
		}
		if t.kind == tName {
			switch t.text {
			case "let", "dim":
			case "input":
				if !inputs {
					p.fail(t.pos, "input statements belong to entry points, not to %s", what)
				}
			case "layer", "entry", "loss", "sgd", "adam", "adamw":
				if p.peek(1).kind == tName {
					p.fail(t.pos, "%s is not closed by a return statement before this %s", what, spec.Clip(t.text))
				}
			default:
				if !p.peek(1).isOp("=") {
					p.fail(t.pos, "unexpected %s in %s (expected let, dim%s or return)", t.describe(), what, map[bool]string{true: ", input", false: ""}[inputs])
				}
			}
		} else {
			p.failTok(t, "unexpected %s in %s (expected let, dim or return)", t.describe(), what)
		}
		body = append(body, p.parseStmt())
		p.endStmt()
	}
}

// parseOptim parses `sgd NAME[=NUMBER|=WORD] ...` (or adam, adamw).
func (p *parser) parseOptim() Stmt {
	kw := p.next()
	o := &OptimStmt{Pos: kw.pos, Kind: kw.text}
	for {
		t := p.tok()
		if t.kind != tName {
			if len(o.Settings) == 0 {
				p.failTok(t, "expected settings after %s (lr=0.1 ...), found %s", o.Kind, t.describe())
			}
			return o
		}
		p.next()
		st := Setting{Pos: t.pos, Name: t.text}
		if p.acceptEq() {
			if w := p.tok(); w.kind == tName {
				p.next()
				st.Word, st.WordPos = w.text, w.pos
			} else {
				st.Value = p.signedNumber("value of " + t.text)
			}
		}
		o.Settings = append(o.Settings, st)
	}
}
