package gen

import (
	"go/token"
	"strings"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/spec"
)

// progLine is one line of a synthesized program with the map back to the
// directive it came from: cols[k] is the source column of byte k of the
// line (0 for text the generator wrote itself, which maps to anchor).
type progLine struct {
	text   strings.Builder
	cols   []int
	anchor token.Position
	// specStart and specEnd delimit (1-based, inclusive-exclusive program
	// columns) the spec string copied from a Go string literal, and
	// specCols maps each byte of the unquoted spec to its source column.
	// Inference reports spec errors with SpecCol, a column in the
	// unquoted spec, which specCols maps exactly even when the Go literal
	// used escapes.
	specStart, specEnd int
	specCols           []int
}

// syn appends generator-written text.
func (l *progLine) syn(s string) {
	l.text.WriteString(s)
	for range len(s) {
		l.cols = append(l.cols, 0)
	}
}

// copyAt appends s copied from the source: byte k of s is at column col+k.
func (l *progLine) copyAt(s string, col int) {
	l.text.WriteString(s)
	for k := range len(s) {
		l.cols = append(l.cols, col+k)
	}
}

// mapAll appends s, every byte of which maps to column col.
func (l *progLine) mapAll(s string, col int) {
	l.text.WriteString(s)
	for range len(s) {
		l.cols = append(l.cols, col)
	}
}

// spec appends an unquoted spec as a program-language string literal;
// cols gives the source column of every byte of the spec.
func (l *progLine) spec(s string, cols []int) {
	l.syn(`"`)
	l.specStart = l.text.Len() + 1
	l.specCols = cols
	for k := 0; k < len(s); k++ {
		c := s[k]
		switch c {
		case '"', '\\':
			l.mapAll(`\`+string(c), cols[k])
		case '\n', '\r':
			// A program string cannot span lines; in a spec a newline is
			// white space like a blank.
			l.mapAll(" ", cols[k])
		default:
			l.mapAll(string(c), cols[k])
		}
	}
	l.specEnd = l.text.Len() + 1
	l.syn(`"`)
}

// synthProgram is a program text being synthesized, line by line.
type synthProgram struct {
	lines []*progLine
	// fallback is where positions that match no line map to.
	fallback token.Position
}

func (p *synthProgram) line(anchor token.Position) *progLine {
	anchor.Offset = 0
	l := &progLine{anchor: anchor}
	p.lines = append(p.lines, l)
	return l
}

// String returns the program text.
func (p *synthProgram) String() string {
	var b strings.Builder
	for _, l := range p.lines {
		b.WriteString(l.text.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// position maps a position of the synthesized program (and, for spec
// errors, the column inside the spec) back to the user's source.
func (p *synthProgram) position(ip spec.Pos, specCol int) token.Position {
	if ip.Line < 1 || ip.Line > len(p.lines) {
		return p.fallback
	}
	l := p.lines[ip.Line-1]
	at := func(col int) token.Position {
		q := l.anchor
		q.Column = col
		return q
	}
	if specCol > 0 && l.specStart > 0 && ip.Col >= l.specStart && ip.Col <= l.specEnd && specCol <= len(l.specCols) {
		return at(l.specCols[specCol-1])
	}
	switch {
	case ip.Col >= 1 && ip.Col <= len(l.cols) && l.cols[ip.Col-1] > 0:
		return at(l.cols[ip.Col-1])
	case ip.Col == len(l.cols)+1 && len(l.cols) > 0 && l.cols[len(l.cols)-1] > 0:
		// The end of the line, just after copied text.
		return at(l.cols[len(l.cols)-1] + 1)
	}
	return l.anchor
}

// mapInferenceError converts an error of inference or lowering on the
// synthesized program into an Error at the directive it came from, its
// related positions relocated likewise.
func (p *synthProgram) mapInferenceError(err error, g *inference.Graph) *Error {
	if e, ok := inference.AsError(err); ok {
		prefix := string(e.Kind) + ": "
		msg, rel := e.Uncited()
		return &Error{Pos: p.position(e.Pos, e.SpecCol), Msg: prefix + msg,
			Related: relocate(rel, len(prefix), func(q spec.Pos) token.Position { return p.position(q, 0) })}
	}
	where := p.fallback
	if le, ok := asLoopirError(err); ok && g != nil && le.Op >= 0 && le.Op < len(g.Ops) {
		where = p.position(g.Ops[le.Op].Pos, 0)
	}
	return &Error{Pos: where, Msg: err.Error()}
}
