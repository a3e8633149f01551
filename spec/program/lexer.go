package program

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ocannlgen/ocannlgen/ops"
	"github.com/ocannlgen/ocannlgen/spec"
)

// tokKind is the kind of a lexical token.
type tokKind int

const (
	tEOF     tokKind = iota
	tNewline         // end of a statement line (only outside brackets)
	tError           // a lexical error; msg holds the message
	tName            // identifier or keyword
	tNumber          // unsigned numeric literal
	tString          // double-quoted string; text holds the unescaped value
	tLogic           // ~logic:
	tAccum           // one of the assignment operators =: =+ =:+ ...
	tOp              // any other operator or punctuation; text holds it
)

// token is one lexical token.
type token struct {
	kind tokKind
	text string // name, number text, string value, operator spelling, error message
	pos  spec.Pos
}

// isOp reports whether t is the operator or punctuation op.
func (t token) isOp(op string) bool { return t.kind == tOp && t.text == op }

// isName reports whether t is the identifier or keyword name.
func (t token) isName(name string) bool { return t.kind == tName && t.text == name }

// describe renders t for an error message.
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of input"
	case tNewline:
		return "end of line"
	case tName:
		if isKeyword(t.text) {
			return "keyword " + spec.Quote(t.text)
		}
		return "name " + spec.Quote(t.text)
	case tNumber:
		return "number " + spec.Clip(t.text)
	case tString:
		return "string " + spec.QuoteWith(t.text, quoteString)
	case tLogic:
		return `"~logic:"`
	default:
		return spec.Quote(t.text)
	}
}

// matchOp returns the operator or punctuation at the start of s, longest
// match first, or "" when there is none. Assignment operators come first so
// that "=:+" wins over "=:" and "=".
func matchOp(s string) (op string, accum bool) {
	for _, a := range accumOps {
		if strings.HasPrefix(s, a) {
			return a, true
		}
	}
	for _, o := range [...]string{
		"**.", "+++", "++^", "@^+", "@^^",
		"*.", "/.", "++", "+*", "@|", "@@", "->", "<>", "[|", "|]",
		"*", "/", "+", "-", "<", "=", "(", ")", "[", "]", "{", "}",
		",", ";", ":", "|", "?",
	} {
		if strings.HasPrefix(s, o) {
			return o, false
		}
	}
	return "", false
}

// accumOps lists the assignment operators, longest first: "=:" and "="
// followed by each accumulator's symbol in package ops's table, and the
// plain "=:". Built once and never modified.
var accumOps = assignmentOps()

func assignmentOps() []string {
	out := []string{"=:"}
	for _, a := range ops.Accums() {
		out = append(out, "=:"+a.Symbol, "="+a.Symbol)
	}
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// lex splits src into tokens. A newline is a token only outside brackets
// (parentheses, brackets and braces), so bracketed expressions may span
// lines. Lexing stops at the first error, which becomes a tError token
// followed by tEOF; the parser reports it when it reaches it, so an earlier
// syntax error wins.
func lex(src string) []token {
	var toks []token
	line, lineStart := 1, 0
	depth := 0
	i := 0
	if strings.HasPrefix(src, "\uFEFF") {
		i = len("\uFEFF") // a byte-order mark is ignored
	}
	pos := func(at int) spec.Pos { return spec.Pos{Line: line, Col: at - lineStart + 1} }
	fail := func(at int, msg string) []token {
		p := pos(at)
		return append(toks, token{kind: tError, text: msg, pos: p}, token{kind: tEOF, pos: p})
	}
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\n':
			if depth == 0 {
				toks = append(toks, token{kind: tNewline, pos: pos(i)})
			}
			i++
			line, lineStart = line+1, i
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case isIdentStart(c):
			j := i + 1
			for j < len(src) && isIdentChar(src[j]) {
				j++
			}
			toks = append(toks, token{kind: tName, text: src[i:j], pos: pos(i)})
			i = j
			continue
		case isDigit(c):
			j, ok := scanNumber(src, i)
			if !ok {
				return fail(i, "invalid number "+spec.Quote(src[i:j]))
			}
			toks = append(toks, token{kind: tNumber, text: src[i:j], pos: pos(i)})
			i = j
			continue
		case c == '"':
			val, j, ok := scanString(src, i)
			if !ok {
				return fail(i, "unterminated string")
			}
			toks = append(toks, token{kind: tString, text: val, pos: pos(i)})
			i = j
			continue
		case c == '~':
			j := i + 1
			for j < len(src) && isIdentChar(src[j]) {
				j++
			}
			if src[i+1:j] == "logic" && j < len(src) && src[j] == ':' {
				toks = append(toks, token{kind: tLogic, text: "~logic:", pos: pos(i)})
				i = j + 1
				continue
			}
			return fail(i, `unknown label: only "~logic:" may follow an assignment`)
		}
		if strings.HasPrefix(src[i:], "**") && !strings.HasPrefix(src[i:], "**.") {
			return fail(i, `unknown operator "**" (the power operator is "**.")`)
		}
		op, accum := matchOp(src[i:])
		if accum {
			toks = append(toks, token{kind: tAccum, text: op, pos: pos(i)})
			i += len(op)
			continue
		}
		if op == "" {
			switch {
			case c == '@':
				return fail(i, `unknown operator starting with "@" (expected "@^+", "@^^", "@@" or "@|")`)
			case c < utf8.RuneSelf:
				return fail(i, fmt.Sprintf("unexpected character %q", rune(c)))
			}
			r, _ := utf8.DecodeRuneInString(src[i:])
			if r == utf8.RuneError {
				return fail(i, fmt.Sprintf("invalid UTF-8 byte 0x%02x", c))
			}
			return fail(i, fmt.Sprintf("unexpected character %q", r))
		}
		switch op {
		case "(", "[", "[|", "{":
			depth++
		case ")", "]", "|]", "}":
			if depth > 0 {
				depth--
			}
		}
		toks = append(toks, token{kind: tOp, text: op, pos: pos(i)})
		i += len(op)
	}
	return append(toks, token{kind: tEOF, pos: pos(i)})
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isIdentStart(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func isIdentChar(c byte) bool { return isIdentStart(c) || isDigit(c) || c == '\'' }

// scanNumber scans an OCaml-style numeric literal starting at a digit:
// digits, an optional '.' with optional digits, an optional exponent. It
// returns the end offset and whether the literal is well formed (it is not
// when the exponent has no digits or the number runs into a letter).
func scanNumber(src string, i int) (int, bool) {
	j := i
	for j < len(src) && isDigit(src[j]) {
		j++
	}
	if j < len(src) && src[j] == '.' {
		j++
		for j < len(src) && isDigit(src[j]) {
			j++
		}
	}
	if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
		k := j + 1
		if k < len(src) && (src[k] == '+' || src[k] == '-') {
			k++
		}
		if k >= len(src) || !isDigit(src[k]) {
			return k, false
		}
		for k < len(src) && isDigit(src[k]) {
			k++
		}
		j = k
	}
	if j < len(src) && isIdentChar(src[j]) {
		k := j
		for k < len(src) && isIdentChar(src[k]) {
			k++
		}
		return k, false
	}
	return j, true
}

// scanString scans a double-quoted string starting at src[i] == '"'. The
// escapes \" and \\ stand for a quote and a backslash; any other backslash
// is kept as written. Strings cannot span lines.
func scanString(src string, i int) (string, int, bool) {
	var b strings.Builder
	j := i + 1
	for j < len(src) {
		c := src[j]
		switch c {
		case '"':
			return b.String(), j + 1, true
		case '\n':
			return "", j, false
		case '\\':
			if j+1 < len(src) && (src[j+1] == '"' || src[j+1] == '\\') {
				b.WriteByte(src[j+1])
				j += 2
				continue
			}
		}
		b.WriteByte(c)
		j++
	}
	return "", j, false
}

// quoteString renders s as a string literal of the language.
func quoteString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}

// Flatten is the function `flatten x`, applied as a unary primitive is
// (a *Unary with this Func), which is no primitive: it reshapes x's
// output axes into one (docs/language.md, "Expressions").
const Flatten = "flatten"

// isFunc reports whether name is a unary primitive (FUNC), applied as
// `NAME atom` (package ops's table), or flatten.
func isFunc(name string) bool { return name == Flatten || ops.IsFunc(ops.PrimName(name), 1) }

// isTernary reports whether name is a ternary primitive, applied as
// `NAME atom atom atom` (where, fma).
func isTernary(name string) bool { return ops.IsFunc(ops.PrimName(name), 3) }

// isKeyword reports whether name is reserved and cannot name a tensor.
func isKeyword(name string) bool {
	switch name {
	case "input", "leaf", "param", "let", "dim", "range":
		return true
	}
	return isFunc(name) || isTernary(name)
}

// IsKeyword reports whether name is a reserved word of the language (a
// statement keyword or a primitive applied as a function), which cannot
// name a tensor.
func IsKeyword(name string) bool { return isKeyword(name) }
