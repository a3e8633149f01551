package program

import (
	"strings"
	"testing"
)

// TestHugeInputErrors: syntax errors quote long names, tokens and specs
// shortened (spec.Quote), at their exact positions.
func TestHugeInputErrors(t *testing.T) {
	long := strings.Repeat("x", 300000)
	for _, c := range []struct {
		name, src string
		line, col int
		msg       string
	}{
		{"a long target", "input " + long + " : 2 = 0\n" + long + " y", 2, 300002, `expected '=' or an assignment operator after "xxx`},
		{"a long name after an operator", "let y = x +* " + long, 1, 14, `expected a spec string after "+*", found name "xxx`},
		{"a long number", "let y = 1" + strings.Repeat("2", 300000) + "e", 1, 9, `invalid number "1222`},
	} {
		_, err := Parse(c.src)
		e, ok := err.(*Error)
		if !ok {
			t.Fatalf("%s: want an *Error, got %v", c.name, err)
		}
		if e.Pos.Line != c.line || e.Pos.Col != c.col || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("%s: %v: %.300s; want %d:%d and %q", c.name, e.Pos, e.Msg, c.line, c.col, c.msg)
		}
		if n := len(e.Error()); n > 500 {
			t.Errorf("%s: the error has %d bytes: %.300s...", c.name, n, e.Error())
		}
	}
}
