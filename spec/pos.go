package spec

import (
	"fmt"
	"slices"
	"strings"
)

// Pos is a position in a program text: a 1-based line and a 1-based byte
// column. It is the one position type of the pipeline: the program
// parser, inference, model expansion and lowering report positions as
// Pos values, and the driver (package gen) relocates them to Go source
// positions by transforming the values. The zero Pos means unknown.
//
// Positions are values end to end: an error carries its own position and
// the positions its message cites (Related) as fields, and only the final
// printers (the errors' Error methods, gen's error printer, the command)
// write positions as text.
type Pos struct {
	Line, Col int
}

// String renders the position as LINE:COL.
func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// Related is a position an error refers to besides its own, such as the
// opening bracket a missing closing bracket belongs to, or the first of
// two conflicting definitions.
type Related struct {
	Pos Pos
	// Msg says what is at Pos ("'(' opened here"), for tools that list
	// related positions separately (an editor's related information).
	Msg string
	// Off is the byte offset in the error's message where the message
	// cites Pos; printers insert the citation there (see Cite). -1 when
	// the message does not cite it.
	Off int
}

// Message is an error message under construction that cites positions:
// text and citations in order. The zero Message is empty.
type Message struct {
	b       strings.Builder
	related []Related
}

// Printf appends formatted text.
func (m *Message) Printf(format string, args ...any) *Message {
	fmt.Fprintf(&m.b, format, args...)
	return m
}

// Cite cites p at the end of the text so far; what says what is at p.
func (m *Message) Cite(p Pos, what string) *Message {
	m.related = append(m.related, Related{Pos: p, Msg: what, Off: m.b.Len()})
	return m
}

// Done returns the message text (without citations) and the cited
// positions.
func (m *Message) Done() (string, []Related) { return m.b.String(), m.related }

// Cite renders a message that cites related positions: msg with the
// citation " at " + render(pos) inserted at each related position's
// offset ("at " + render(pos) right after an opening parenthesis).
// Related positions the message does not cite (Off < 0) are skipped.
// Every printer of errors with related positions renders them through
// Cite, each with its own rendering of a position.
func Cite(msg string, related []Related, render func(Pos) string) string {
	offs := make([]int, len(related))
	texts := make([]string, len(related))
	for i, r := range related {
		offs[i], texts[i] = r.Off, render(r.Pos)
	}
	return Splice(msg, offs, texts)
}

// Splice inserts citations into msg: texts[i], introduced by " at " (by
// "at " right after an opening parenthesis), at byte offset offs[i].
// Offsets out of range are skipped. Cite is Splice for Pos values;
// printers of other position types (go/token's, in package gen) use
// Splice directly.
func Splice(msg string, offs []int, texts []string) string {
	order := make([]int, 0, len(offs))
	for i, o := range offs {
		if o >= 0 && o <= len(msg) {
			order = append(order, i)
		}
	}
	if len(order) == 0 {
		return msg
	}
	slices.SortStableFunc(order, func(a, b int) int { return offs[a] - offs[b] })
	var b strings.Builder
	last := 0
	for _, i := range order {
		b.WriteString(msg[last:offs[i]])
		if offs[i] > 0 && msg[offs[i]-1] == '(' {
			b.WriteString("at ")
		} else {
			b.WriteString(" at ")
		}
		b.WriteString(texts[i])
		last = offs[i]
	}
	b.WriteString(msg[last:])
	return b.String()
}
