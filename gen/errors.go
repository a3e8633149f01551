package gen

import (
	"cmp"
	"fmt"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Error is a problem found in a user package: a malformed or misplaced
// directive, a shape error of a kernel, an unsupported parameter, or an
// error reported by the Go loader. Pos locates it in the user's source;
// for directive problems the column points into the directive (for spec
// errors, at the offending character of the spec string).
type Error struct {
	Pos token.Position
	Msg string
}

// Error formats the error as `file:line:col: message` (omitting the
// parts of the position that are unknown).
func (e *Error) Error() string { return formatPos(e.Pos, "") + e.Msg }

// Rel formats the error like Error, with the file name relative to dir
// when the file lies inside dir (absolute otherwise, or when dir is "").
func (e *Error) Rel(dir string) string { return formatPos(e.Pos, dir) + e.Msg }

// ErrorBase returns the directory the command prints file names relative
// to, so that a printed path identifies its file from where the user ran
// the command. The go command runs a //go:generate line in the package's
// directory (and sets GOFILE and GOPACKAGE), so under `go generate ./...`
// paths relative to the working directory would all be bare file names
// (k.go): there they are relative to the module root, the directory of the
// nearest go.mod above wd (absolute when there is none). Run directly, the
// command prints them relative to wd. getenv is os.Getenv in the command.
func ErrorBase(wd string, getenv func(string) string) string {
	if getenv("GOFILE") == "" || getenv("GOPACKAGE") == "" {
		return wd
	}
	for dir := wd; dir != ""; {
		if st, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && !st.IsDir() {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return ""
}

func formatPos(p token.Position, dir string) string {
	name := p.Filename
	if dir != "" && name != "" {
		if r, err := filepath.Rel(dir, name); err == nil && !strings.HasPrefix(r, "..") {
			name = r
		}
	}
	switch {
	case name == "":
		return ""
	case p.Line == 0:
		return name + ": "
	case p.Column == 0:
		return fmt.Sprintf("%s:%d: ", name, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d: ", name, p.Line, p.Column)
}

// ErrorList is a list of errors, sorted by position and deduplicated by
// Generate.
type ErrorList []*Error

// Error joins the errors, one per line.
func (l ErrorList) Error() string {
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// sortErrors sorts errors by file, line, column and message and removes
// exact duplicates.
func sortErrors(l ErrorList) ErrorList {
	slices.SortFunc(l, func(a, b *Error) int {
		return cmp.Or(
			cmp.Compare(a.Pos.Filename, b.Pos.Filename),
			cmp.Compare(a.Pos.Line, b.Pos.Line),
			cmp.Compare(a.Pos.Column, b.Pos.Column),
			cmp.Compare(a.Msg, b.Msg),
		)
	})
	return slices.CompactFunc(l, func(a, b *Error) bool {
		return a.Pos == b.Pos && a.Msg == b.Msg
	})
}

// errAt builds an Error at p with the column replaced by col (when col > 0).
func errAt(p token.Position, col int, format string, args ...any) *Error {
	if col > 0 {
		p.Column = col
	}
	p.Offset = 0
	return &Error{Pos: p, Msg: fmt.Sprintf(format, args...)}
}

var posRE = regexp.MustCompile(`^(.*?):(\d+)(?::(\d+))?$`)

// parsePos parses the `file:line[:col]` positions of go/packages errors.
func parsePos(s string) token.Position {
	m := posRE.FindStringSubmatch(s)
	if m == nil {
		if s == "-" {
			s = ""
		}
		return token.Position{Filename: s}
	}
	line, _ := strconv.Atoi(m[2])
	col, _ := strconv.Atoi(m[3])
	return token.Position{Filename: m[1], Line: line, Column: col}
}
