package gen

import (
	"go/token"
	"testing"
)

// TestParsePos checks the parsing of go/packages' Error.Pos field.
func TestParsePos(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want token.Position
	}{
		{"/a/b.go:3:7", token.Position{Filename: "/a/b.go", Line: 3, Column: 7}},
		{"/a/b.go:3", token.Position{Filename: "/a/b.go", Line: 3}},
		{"/a/b.go", token.Position{Filename: "/a/b.go"}},
		{`C:\a\b.go:12:1`, token.Position{Filename: `C:\a\b.go`, Line: 12, Column: 1}},
		{"-", token.Position{}},
		{"", token.Position{}},
	} {
		if got := parsePos(tc.in); got != tc.want {
			t.Errorf("parsePos(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// TestCitationRendering checks how Error cites a related position: on
// the error's own line as "column C", elsewhere as FILE:LINE:COL with
// the file's base name, a line of the same file as "line L"; right after
// '(' without the leading space.
func TestCitationRendering(t *testing.T) {
	at := func(file string, line, col int) token.Position {
		return token.Position{Filename: file, Line: line, Column: col}
	}
	e := citeAt(at("/x/a.go", 3, 9), 0, "first", at("/x/a.go", 3, 2), "here", ", then")
	if got, want := e.Error(), "/x/a.go:3:9: first at column 2, then"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	e = citeAt(at("/x/a.go", 3, 9), 0, "f and g (", at("/x/b.go", 5, 1), "g", ") clash")
	if got, want := e.Error(), "/x/a.go:3:9: f and g (at b.go:5:1) clash"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// A position without a column cites a line.
	e = citeAt(at("/x/a.go", 3, 9), 0, "again", at("/x/a.go", 2, 0), "first", "")
	if got, want := e.Error(), "/x/a.go:3:9: again at line 2"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
