package spec

import (
	"fmt"
	"strings"
)

// IsMultichar reports whether src is read in multichar mode: it is iff src
// contains any of ',' '*' '+' '^' '&' '<', or a '=' that is not immediately
// followed by '>'. In single-char mode every letter is an axis label of its
// own; in multichar mode axes are comma-separated identifiers.
func IsMultichar(src string) bool {
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case ',', '*', '+', '^', '&', '<':
			return true
		case '=':
			if i+1 >= len(src) || src[i+1] != '>' {
				return true
			}
		}
	}
	return false
}

// ParseEinsum parses a full einsum spec `rhs (';' rhs)* '=>' lhs` with at
// least one right-hand-side slot. Errors are *Error values.
func ParseEinsum(src string) (*Einsum, error) {
	p := newParser(src)
	if err := p.checkEmpty(); err != nil {
		return nil, err
	}
	e := &Einsum{Src: src, Multichar: p.multichar}
	for {
		s, err := p.parseSlot()
		if err != nil {
			return nil, err
		}
		e.RHS = append(e.RHS, *s)
		t := p.next()
		switch t.kind {
		case tkSemi:
			continue
		case tkDArrow:
		case tkEOF:
			// "i,j; j,k -> i,k": '->' written for '=>' parses as the last
			// slot's input row; point at it and show the fix.
			if a := strings.LastIndex(src, "->"); a > strings.LastIndex(src, ";") && !strings.Contains(src, "=>") {
				return nil, p.errAt(a+1, fmt.Sprintf("missing '=>': an einsum spec is `rhs1; rhs2; ... => result`, and '->' separates a slot's input axes from its output axes: did you mean %s?",
					Quote(src[:a]+"=>"+src[a+2:])))
			}
			return nil, p.errAt(t.col, "missing '=>': an einsum spec is `rhs1; rhs2; ... => result`")
		default:
			return nil, p.unexpected(t, "")
		}
		break
	}
	lhs, err := p.parseSlot()
	if err != nil {
		return nil, err
	}
	e.LHS = *lhs
	switch t := p.next(); t.kind {
	case tkEOF:
		return e, nil
	case tkSemi:
		return nil, p.errAt(t.col, "unexpected ';' after '=>': the result is a single slot")
	case tkDArrow:
		return nil, p.errAt(t.col, "unexpected second '=>'")
	default:
		return nil, p.unexpected(t, "")
	}
}

// ParseSlot parses a single shape spec `[batch '|'] [input '->'] output`
// with no ';' or '=>'. Errors are *Error values.
func ParseSlot(src string) (*Slot, error) {
	p := newParser(src)
	if err := p.checkEmpty(); err != nil {
		return nil, err
	}
	s, err := p.parseSlot()
	if err != nil {
		return nil, err
	}
	switch t := p.next(); t.kind {
	case tkEOF:
		return s, nil
	case tkSemi, tkDArrow:
		return nil, p.errAt(t.col, fmt.Sprintf("unexpected '%s': a shape spec is a single slot, not an einsum spec", Clip(t.text)))
	default:
		return nil, p.unexpected(t, "")
	}
}

// parser is a recursive-descent parser over a pre-lexed token list.
type parser struct {
	src       string
	multichar bool
	toks      []token
	pos       int
}

func newParser(src string) *parser {
	m := IsMultichar(src)
	return &parser{src: src, multichar: m, toks: lex(src, m)}
}

// peek returns the token k positions ahead (0 = current). Past the end it
// returns the final token (tkEOF or tkErr).
func (p *parser) peek(k int) token {
	if p.pos+k < len(p.toks) {
		return p.toks[p.pos+k]
	}
	return p.toks[len(p.toks)-1]
}

// next consumes and returns the current token. The final token is never
// consumed past.
func (p *parser) next() token {
	t := p.peek(0)
	if p.pos < len(p.toks)-1 {
		p.pos++
	}
	return t
}

func (p *parser) errAt(col int, msg string) *Error {
	return &Error{Spec: p.src, Col: col, Msg: msg}
}

// unexpected reports t as unexpected; a lexical error token reports its own
// message instead. ctx, if non-empty, is appended to the message.
func (p *parser) unexpected(t token, ctx string) *Error {
	if t.kind == tkErr {
		return p.errAt(t.col, t.text)
	}
	msg := "unexpected " + t.describe()
	if ctx != "" {
		msg += ": " + ctx
	}
	return p.errAt(t.col, msg)
}

func (p *parser) checkEmpty() error {
	if p.toks[0].kind == tkEOF {
		return p.errAt(1, "empty spec")
	}
	return nil
}

// parseSlot parses `row ['|' row] ['->' row]` (shape_spec) and stops at
// ';', '=>' or the end.
func (p *parser) parseSlot() (*Slot, error) {
	s := &Slot{Col: p.peek(0).col}
	sawArrow := false
	first, err := p.parseRow()
	if err != nil {
		return nil, err
	}
	switch t := p.peek(0); t.kind {
	case tkPipe:
		p.next()
		second, err := p.parseRow()
		if err != nil {
			return nil, err
		}
		s.Rows[Batch] = first
		if p.peek(0).kind == tkArrow {
			p.next()
			sawArrow = true
			third, err := p.parseRow()
			if err != nil {
				return nil, err
			}
			s.Rows[Input] = second
			s.Rows[Output] = third
		} else {
			s.Rows[Output] = second
		}
	case tkArrow:
		p.next()
		sawArrow = true
		second, err := p.parseRow()
		if err != nil {
			return nil, err
		}
		s.Rows[Input] = first
		s.Rows[Output] = second
	default:
		s.Rows[Output] = first
	}
	for k := range s.Rows {
		if s.Rows[k].Ellipsis {
			s.Rows[k].Var = Kind(k).String()
		}
	}
	switch t := p.peek(0); t.kind {
	case tkSemi, tkDArrow, tkEOF:
		return s, nil
	case tkPipe:
		if sawArrow {
			return nil, p.errAt(t.col, "unexpected '|': the batch row ('|') must come before the input row ('->')")
		}
		return nil, p.errAt(t.col, "unexpected '|': a slot has at most one '|'")
	case tkArrow:
		return nil, p.errAt(t.col, "unexpected '->': a slot has at most one '->'")
	default:
		return nil, p.unexpected(t, "")
	}
}

// parseRow parses one row: axes with at most one row variable, ended by
// '|', '->', ';', '=>' or the end. The caller names a '...' row variable
// after the row's kind.
func (p *parser) parseRow() (Row, error) {
	var r Row
	const (
		none = iota
		axis
		rowVar
	)
	last := none       // the last item parsed
	pendingComma := -1 // column of a comma after the last item, or -1
	for {
		t := p.peek(0)
		switch t.kind {
		case tkPipe, tkArrow, tkSemi, tkDArrow, tkEOF:
			return r, nil
		case tkComma:
			if last == none {
				return r, p.errAt(t.col, "unexpected ',': expected an axis or a row variable before ','")
			}
			if pendingComma >= 0 {
				return r, p.errAt(t.col, "unexpected ',': two commas in a row")
			}
			pendingComma = t.col
			p.next()
		case tkEllipsis, tkDotDot:
			if r.HasVar {
				return r, p.errAt(t.col, "a row can have at most one row variable ('...' or '..name..')")
			}
			if err := p.parseRowVar(&r); err != nil {
				return r, err
			}
			r.Beg, r.End = r.End, nil
			last, pendingComma = rowVar, -1
		case tkIdent, tkInt, tkUnderscore:
			if p.multichar && last == axis && pendingComma < 0 {
				return r, p.errAt(t.col, fmt.Sprintf("expected ',' before %s: axes are comma-separated in multichar mode", t.describe()))
			}
			a, err := p.parseAxis()
			if err != nil {
				return r, err
			}
			r.End = append(r.End, a)
			last, pendingComma = axis, -1
		default:
			if last == axis && pendingComma < 0 {
				return r, p.unexpected(t, "expected ',' or the end of the axis")
			}
			return r, p.unexpected(t, "expected an axis")
		}
	}
}

// parseRowVar parses '...' or '..' IDENT [','] '..' into r.
func (p *parser) parseRowVar(r *Row) error {
	open := p.next()
	r.HasVar = true
	r.VarCol = open.col
	if open.kind == tkEllipsis {
		r.Ellipsis = true
		return nil
	}
	name := p.next()
	switch name.kind {
	case tkIdent:
	case tkEOF:
		return p.errAt(open.col, "unterminated row variable: expected a name and '..' after '..'")
	default:
		return p.unexpected(name, "expected a row variable name after '..'")
	}
	if p.peek(0).kind == tkComma {
		p.next()
	}
	closing := p.next()
	switch closing.kind {
	case tkDotDot:
	case tkEOF:
		return p.errAt(open.col, fmt.Sprintf("unterminated row variable '..%s': expected a closing '..'", name.text))
	case tkIdent:
		if !p.multichar && closing.col == name.col+1 {
			return p.errAt(closing.col, "a row variable name must be a single letter in single-char mode (use multichar mode, e.g. add a comma, for longer names)")
		}
		return p.unexpected(closing, fmt.Sprintf("expected '..' to close row variable '..%s'", name.text))
	default:
		return p.unexpected(closing, fmt.Sprintf("expected '..' to close row variable '..%s'", name.text))
	}
	r.Var = name.text
	return nil
}

// isAffineOp reports whether t continues an affine expression.
func isAffineOp(t token) bool {
	switch t.kind {
	case tkStar, tkPlus, tkEquals, tkLess:
		return true
	}
	return false
}

// parseAxis parses one axis starting at an identifier, integer or '_'.
func (p *parser) parseAxis() (Axis, error) {
	t := p.next()
	a := Axis{Col: t.col}
	nt := p.peek(0)
	switch t.kind {
	case tkUnderscore:
		if isAffineOp(nt) || nt.kind == tkCaret {
			return a, p.errAt(nt.col, fmt.Sprintf("unexpected '%s' after '_': '_' can only be a plain label", Clip(nt.text)))
		}
		a.Kind, a.Label = AxisLabel, "_"
		return a, nil
	case tkInt:
		switch nt.kind {
		case tkStar:
			if t.val < 1 {
				return a, p.errAt(t.col, "stride must be >= 1")
			}
			p.next()
			over := p.next()
			if over.kind != tkIdent {
				return a, p.unexpected(over, "expected a label after the stride's '*'")
			}
			return p.parseAffineTail(a, t.val, over)
		case tkCaret:
			return p.parseConcat(a, t)
		case tkPlus, tkEquals, tkLess:
			return a, p.errAt(nt.col, fmt.Sprintf("unexpected '%s' after integer %s: an affine axis starts with a label or `stride*label`", nt.text, t.text))
		}
		a.Kind, a.Fixed = AxisFixed, t.val
		return a, nil
	case tkIdent:
		switch nt.kind {
		case tkStar:
			return a, p.errAt(t.col, "stride must be an integer literal, not "+Quote(t.text))
		case tkCaret:
			return p.parseConcat(a, t)
		case tkPlus, tkEquals, tkLess:
			return p.parseAffineTail(a, 1, t)
		}
		a.Kind, a.Label = AxisLabel, t.text
		return a, nil
	}
	return a, p.unexpected(t, "expected an axis")
}

// parseAffineTail parses what follows `[stride*]over`: a convolution
// `{=|<}+ [off+] [d*]kernel [+off]`, an offset `+ INT`, or nothing.
func (p *parser) parseAffineTail(a Axis, stride int, over token) (Axis, error) {
	aff := &Affine{Stride: stride, Over: over.text, OverCol: over.col}
	a.Kind, a.Affine = AxisAffine, aff
	t := p.peek(0)
	switch t.kind {
	case tkEquals, tkLess:
		p.next()
		plus := p.next()
		if plus.kind != tkPlus {
			return a, p.unexpected(plus, fmt.Sprintf("expected '+' after '%s' (write `%s+kernel`)", Clip(t.text), Clip(t.text)))
		}
		conv := &Conv{Dilation: 1, Padded: t.kind == tkEquals}
		aff.Conv = conv
		offsetSeen := false
		x := p.next()
		if x.kind == tkInt && p.peek(0).kind == tkPlus {
			// Offset before the kernel: `=+off+[d*]kernel`.
			aff.Offset = x.val
			offsetSeen = true
			p.next()
			x = p.next()
		}
		switch x.kind {
		case tkInt:
			if star := p.next(); star.kind != tkStar {
				if offsetSeen {
					return a, p.unexpected(star, "expected '*' after the dilation (write `dilation*kernel`)")
				}
				return a, p.unexpected(star, "expected `dilation*kernel` or `offset+kernel` after the integer")
			}
			if x.val < 1 {
				return a, p.errAt(x.col, "dilation must be >= 1")
			}
			conv.Dilation = x.val
			k := p.next()
			if k.kind != tkIdent {
				return a, p.unexpected(k, "expected a kernel label after the dilation's '*'")
			}
			conv.Kernel, conv.KernelCol = k.text, k.col
		case tkIdent:
			if p.peek(0).kind == tkStar {
				return a, p.errAt(x.col, "dilation must be an integer literal, not "+Quote(x.text))
			}
			conv.Kernel, conv.KernelCol = x.text, x.col
		default:
			return a, p.unexpected(x, "expected a kernel label (optionally `dilation*kernel`) in the convolution")
		}
		if plus := p.peek(0); plus.kind == tkPlus {
			if offsetSeen {
				return a, p.errAt(plus.col, "the convolution offset is given twice")
			}
			p.next()
			off := p.next()
			if off.kind != tkInt {
				return a, p.unexpected(off, "expected an integer offset after '+'")
			}
			aff.Offset = off.val
		}
	case tkPlus:
		x := p.peek(1)
		switch {
		case x.kind == tkInt && p.peek(2).kind != tkStar && p.peek(2).kind != tkPlus:
			p.next()
			p.next()
			aff.Offset = x.val
		case x.kind == tkInt || x.kind == tkIdent:
			return a, p.errAt(t.col, "convolution needs a padding mode: write `=+` (padded) or `<+` (valid)")
		default:
			p.next()
			return a, p.unexpected(x, "expected an integer offset or a kernel after '+'")
		}
	}
	if t := p.peek(0); t.kind == tkCaret {
		return a, p.errAt(t.col, "concatenation components cannot be affine")
	} else if isAffineOp(t) {
		return a, p.errAt(t.col, fmt.Sprintf("unexpected '%s' after the affine axis", Clip(t.text)))
	}
	return a, nil
}

// parseConcat parses `part ('^' part)+` where first is the first component.
func (p *parser) parseConcat(a Axis, first token) (Axis, error) {
	a.Kind = AxisConcat
	part := first
	for {
		cp := ConcatPart{Col: part.col}
		switch part.kind {
		case tkIdent:
			cp.Label = part.text
		case tkInt:
			if part.val < 1 {
				return a, p.errAt(part.col, "an integer concatenation component must be >= 1")
			}
			cp.Size = part.val
		case tkUnderscore:
			return a, p.errAt(part.col, "'_' cannot be a concatenation component")
		default:
			return a, p.unexpected(part, "expected a label or an integer after '^'")
		}
		a.Concat = append(a.Concat, cp)
		t := p.peek(0)
		if isAffineOp(t) {
			return a, p.errAt(t.col, "concatenation components cannot be affine")
		}
		if t.kind != tkCaret {
			return a, nil
		}
		p.next()
		part = p.next()
	}
}
