package spec

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestQuote: a short text is quoted as %q quotes it; a long one keeps
// its quoted beginning (whole characters, at most 60 quoted bytes), then
// "..." and its length; Clip does the same without the quotes.
func TestQuote(t *testing.T) {
	long := strings.Repeat("ab ", 1000)
	for _, c := range []struct{ in, quote, clip string }{
		{"", `""`, ""},
		{"i, j => i", `"i, j => i"`, "i, j => i"},
		{`a"b\c`, `"a\"b\\c"`, `a"b\c`},
		{strings.Repeat("x", 78), strconv.Quote(strings.Repeat("x", 78)), strings.Repeat("x", 78)},
		{strings.Repeat("x", 79), `"` + strings.Repeat("x", 58) + `"... (79 bytes)`, strings.Repeat("x", 79)},
		{long, `"` + long[:58] + `"... (3000 bytes)`, long[:60] + "... (3000 bytes)"},
		// Whole characters: é is two bytes, and a quote of 59 of them
		// would hold 118 bytes.
		{strings.Repeat("é", 100), `"` + strings.Repeat("é", 29) + `"... (200 bytes)`, strings.Repeat("é", 30) + "... (200 bytes)"},
		// Escapes count as quoted.
		{strings.Repeat("\x00", 100), `"` + strings.Repeat(`\x00`, 14) + `"... (100 bytes)`, strings.Repeat("\x00", 60) + "... (100 bytes)"},
	} {
		if got := Quote(c.in); got != c.quote {
			t.Errorf("Quote(%.20q...) = %s, want %s", c.in, got, c.quote)
		}
		if got := Clip(c.in); got != c.clip {
			t.Errorf("Clip(%.20q...) = %s, want %s", c.in, got, c.clip)
		}
		if got := Quote(c.in); len(got) > QuoteMax+20 {
			t.Errorf("Quote(%.20q...) has %d bytes", c.in, len(got))
		}
	}
}

// hugeLabels is a multichar slot of n labels: "a0, a1, ..., a{n-1}".
func hugeLabels(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "a%d", i)
	}
	return b.String()
}

// TestHugeSpecErrors: the errors of a spec of 300,000 labels quote it
// shortened (a few hundred bytes, not megabytes), at the exact column.
func TestHugeSpecErrors(t *testing.T) {
	labels := hugeLabels(300000)
	long := strings.Repeat("x", 300000)
	for _, c := range []struct {
		name, spec string
		slot       bool
		col        int
		msg        string
	}{
		{"unexpected character", labels + " => ?", false, len(labels) + 5, "unexpected character '?'"},
		{"arrow for =>", labels + " -> b", false, len(labels) + 2, `did you mean "a0, a1, a2`},
		{"a long label", "i, j " + long, true, 6, `expected ',' before label "xxx`},
		{"a long stride", long + "*i => i", false, 1, `stride must be an integer literal, not "xxx`},
	} {
		var err error
		if c.slot {
			_, err = ParseSlot(c.spec)
		} else {
			_, err = ParseEinsum(c.spec)
		}
		e, ok := err.(*Error)
		if !ok {
			t.Fatalf("%s: want an *Error, got %T", c.name, err)
		}
		if e.Col != c.col || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("%s: column %d, message %.300s; want column %d and %q", c.name, e.Col, e.Msg, c.col, c.msg)
		}
		if n := len(e.Error()); n > 500 {
			t.Errorf("%s: the error has %d bytes: %.300s...", c.name, n, e.Error())
		}
	}
}
