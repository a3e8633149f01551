package gen

import (
	"cmp"
	"fmt"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ocannlgen/ocannlgen/spec"
)

// Error is a problem found in a user package: a malformed or misplaced
// directive, a shape error of a kernel, an unsupported parameter, or an
// error reported by the Go loader. Pos locates it in the user's source;
// for directive problems the column points into the directive (for spec
// errors, at the offending character of the spec string).
type Error struct {
	Pos token.Position
	// Msg is the message without the citations of Related positions.
	Msg string
	// Related are the other source positions Msg cites (the first of two
	// conflicting declarations, the opening bracket of a syntax error).
	Related []Related
}

// Related is a source position an Error cites: spec.Related relocated to
// the user's source.
type Related struct {
	Pos token.Position
	// Msg says what is at Pos.
	Msg string
	// Off is the byte offset in the Error's Msg where the citation goes.
	Off int
}

// Error formats the error as `file:line:col: message` (omitting the
// parts of the position that are unknown).
func (e *Error) Error() string { return formatPos(e.Pos, "") + e.Message() }

// Rel formats the error like Error, with the file name relative to dir
// when the file lies inside dir (absolute otherwise, or when dir is "").
func (e *Error) Rel(dir string) string { return formatPos(e.Pos, dir) + e.Message() }

// Message is the message with its citations, without the error's own
// position: a related position on the error's own line is cited as
// "column C", a line of the error's file without a column (a directive
// as a whole) as "line L", any other as FILE:LINE:COL (the file's base
// name).
func (e *Error) Message() string {
	offs := make([]int, len(e.Related))
	texts := make([]string, len(e.Related))
	for i, r := range e.Related {
		offs[i] = r.Off
		q := r.Pos
		switch sameFile := q.Filename == e.Pos.Filename; {
		case sameFile && q.Line == e.Pos.Line && q.Column > 0:
			texts[i] = fmt.Sprintf("column %d", q.Column)
		case sameFile && q.Column == 0:
			texts[i] = fmt.Sprintf("line %d", q.Line)
		case q.Column == 0:
			texts[i] = fmt.Sprintf("%s:%d", filepath.Base(q.Filename), q.Line)
		default:
			texts[i] = fmt.Sprintf("%s:%d:%d", filepath.Base(q.Filename), q.Line, q.Column)
		}
	}
	return spec.Splice(e.Msg, offs, texts)
}

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
			cmp.Compare(a.Message(), b.Message()),
		)
	})
	return slices.CompactFunc(l, func(a, b *Error) bool {
		return a.Pos == b.Pos && a.Message() == b.Message()
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

// citeAt builds an Error at p (column col when col > 0) whose message
// is before, a citation of q (what says what is there), then after.
func citeAt(p token.Position, col int, before string, q token.Position, what, after string) *Error {
	e := errAt(p, col, "%s%s", before, after)
	q.Offset = 0
	e.Related = []Related{{Pos: q, Msg: what, Off: len(before)}}
	return e
}

// relocate maps the related positions of a message to source positions;
// shift is the length of the text the Error's Msg puts before the
// message.
func relocate(rel []spec.Related, shift int, at func(spec.Pos) token.Position) []Related {
	var out []Related
	for _, r := range rel {
		off := r.Off
		if off >= 0 {
			off += shift
		}
		out = append(out, Related{Pos: at(r.Pos), Msg: r.Msg, Off: off})
	}
	return out
}

// parsePos parses the Pos field of a go/packages error: `file:line:col`,
// `file:line`, `file`, or "" or "-" when unknown. (Only that field is
// parsed; messages are never.)
func parsePos(s string) token.Position {
	if s == "-" {
		return token.Position{}
	}
	var nums []int
	rest := s
	for len(nums) < 2 {
		i := strings.LastIndexByte(rest, ':')
		if i < 0 {
			break
		}
		n, err := strconv.Atoi(rest[i+1:])
		if err != nil || n < 0 {
			break
		}
		nums = append(nums, n)
		rest = rest[:i]
	}
	switch len(nums) {
	case 0:
		return token.Position{Filename: s}
	case 1:
		return token.Position{Filename: rest, Line: nums[0]}
	}
	return token.Position{Filename: rest, Line: nums[1], Column: nums[0]}
}
