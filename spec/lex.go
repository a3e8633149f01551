package spec

import (
	"fmt"
	"math"
	"strconv"
)

// maxInt is the largest integer literal accepted in a spec: 2^31, or
// the largest int on 32-bit platforms.
const maxInt = min(1<<31, math.MaxInt)

// tokKind is the kind of a lexical token.
type tokKind int

const (
	tkEOF        tokKind = iota
	tkErr                // a lexical error; msg holds the message
	tkIdent              // identifier (one letter in single-char mode)
	tkInt                // maximal digit run
	tkUnderscore         // '_'
	tkComma              // ','
	tkPipe               // '|'
	tkArrow              // '->'
	tkDArrow             // '=>'
	tkSemi               // ';'
	tkPlus               // '+'
	tkStar               // '*'
	tkCaret              // '^'
	tkEllipsis           // '...'
	tkDotDot             // '..'
	tkEquals             // '='
	tkLess               // '<'
)

// token is one lexical token. col is the 1-based byte column of its first
// byte; text is its source text (for tkErr, the error message).
type token struct {
	kind tokKind
	col  int
	text string
	val  int // value of a tkInt
}

// describe renders the token for error messages.
func (t token) describe() string {
	switch t.kind {
	case tkEOF:
		return "end of spec"
	case tkIdent:
		return "label " + Quote(t.text)
	case tkInt:
		return fmt.Sprintf("integer %s", t.text)
	}
	return "'" + t.text + "'"
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// lex splits src into tokens in the given mode. Lexing stops at the first
// lexical error, which is returned as a final tkErr token so that the parser
// reports errors in source order. The last token is always tkEOF or tkErr.
func lex(src string, multichar bool) []token {
	var toks []token
	i := 0
	for {
		for i < len(src) && isSpace(src[i]) {
			i++
		}
		if i >= len(src) {
			return append(toks, token{kind: tkEOF, col: len(src) + 1})
		}
		col := i + 1
		c := src[i]
		simple := func(k tokKind, n int) {
			toks = append(toks, token{kind: k, col: col, text: src[i : i+n]})
			i += n
		}
		switch {
		case c == '|':
			simple(tkPipe, 1)
		case c == ';':
			simple(tkSemi, 1)
		case c == '-' && i+1 < len(src) && src[i+1] == '>':
			simple(tkArrow, 2)
		case c == '=' && i+1 < len(src) && src[i+1] == '>':
			simple(tkDArrow, 2)
		case c == '.' && i+2 < len(src) && src[i+1] == '.' && src[i+2] == '.':
			simple(tkEllipsis, 3)
		case c == '.' && i+1 < len(src) && src[i+1] == '.':
			simple(tkDotDot, 2)
		case c == '=':
			simple(tkEquals, 1)
		case c == '<':
			simple(tkLess, 1)
		case c == '_':
			simple(tkUnderscore, 1)
		case isDigit(c):
			j := i
			v := 0
			over := false
			for j < len(src) && isDigit(src[j]) {
				if !over {
					v = v*10 + int(src[j]-'0')
					if v > maxInt {
						over = true
					}
				}
				j++
			}
			if over {
				return append(toks, token{kind: tkErr, col: col,
					text: fmt.Sprintf("integer %s is too large (the maximum is %d)", Clip(src[i:j]), maxInt)})
			}
			toks = append(toks, token{kind: tkInt, col: col, text: src[i:j], val: v})
			i = j
		case isAlpha(c):
			j := i + 1
			if multichar {
				for j < len(src) && (isAlpha(src[j]) || isDigit(src[j]) || src[j] == '_') {
					j++
				}
			}
			simple(tkIdent, j-i)
		case multichar && c == ',':
			simple(tkComma, 1)
		case multichar && c == '+':
			simple(tkPlus, 1)
		case multichar && c == '*':
			simple(tkStar, 1)
		case multichar && c == '^':
			simple(tkCaret, 1)
		case multichar && c == '&':
			return append(toks, token{kind: tkErr, col: col, text: "'&' is reserved"})
		default:
			mode := "single-char"
			if multichar {
				mode = "multichar"
			}
			hint := ""
			switch c {
			case '-':
				hint = " (did you mean '->'?)"
			case '.':
				hint = " (a row variable is '...' or '..name..')"
			case '>':
				hint = " (did you mean '->' or '=>'?)"
			}
			return append(toks, token{kind: tkErr, col: col,
				text: fmt.Sprintf("unexpected %s in %s mode%s", charName(c), mode, hint)})
		}
	}
}

// charName renders a byte for an error message.
func charName(c byte) string {
	if c < 0x20 || c >= 0x7f {
		return fmt.Sprintf("byte 0x%02x", c)
	}
	return "character " + strconv.QuoteRune(rune(c))
}
