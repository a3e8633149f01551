package gen

import (
	"go/ast"
	"go/token"
	"sort"
	"strings"

	"github.com/ocannlgen/ocannlgen/spec"
)

// dirPrefix starts every directive: `//ocannl:VERB ARGS`.
const dirPrefix = "//ocannl:"

// Directive verbs.
const (
	verbEinsum = "einsum"
	verbEinmax = "einmax"
	verbExpr   = "expr"
	verbDo     = "do"
	verbDims   = "dims"
	verbShape  = "shape"
	// verbCUDA opts the package in to CUDA generation (ocannl_gen.cu).
	verbCUDA = "cuda"
)

var knownVerbs = map[string]bool{
	verbEinsum: true, verbEinmax: true, verbExpr: true, verbDo: true, verbDims: true, verbShape: true, verbCUDA: true,
	verbModel: true, "layer": true, "entry": true, "loss": true, "input": true, "let": true,
	"dim": true, "return": true, "sgd": true, "adam": true, "adamw": true,
}

func verbList() string {
	vs := make([]string, 0, len(knownVerbs))
	for v := range knownVerbs {
		vs = append(vs, v)
	}
	sort.Strings(vs)
	return strings.Join(vs, ", ")
}

// directive is one `//ocannl:VERB ARGS` comment line.
type directive struct {
	Verb string
	// Text is the comment as written, starting with "//".
	Text string
	// Pos is the position of the comment's first '/'.
	Pos token.Position
	// Arg is the argument text: everything after the verb and the white
	// space following it, with trailing white space removed.
	Arg string
	// VerbCol and ArgCol are the columns of the verb and of Arg's first
	// byte (for an empty Arg, the column just after the verb).
	VerbCol, ArgCol int
}

// at returns the directive's position with the column set to col.
func (d *directive) at(col int) token.Position {
	p := d.Pos
	p.Column = col
	p.Offset = 0
	return p
}

// errAt reports an error at column col of the directive's line.
func (d *directive) errAt(col int, format string, args ...any) *Error {
	return errAt(d.Pos, col, format, args...)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

func isVerbChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// parseComment classifies one comment. It returns the directive for a
// well-formed `//ocannl:VERB` line, an error for a malformed directive or
// a near miss, and (nil, nil) for any other comment.
func parseComment(fset *token.FileSet, c *ast.Comment) (*directive, *Error) {
	pos := fset.Position(c.Slash)
	text := c.Text
	if strings.HasPrefix(text, "/*") {
		body := strings.TrimSuffix(text[2:], "*/")
		if off, ok := nearMissOffset(body); ok {
			return nil, errAt(pos, pos.Column+2+off,
				"ocannl directives must be line comments written //ocannl:VERB ARGS, not /* */ comments")
		}
		return nil, nil
	}
	body := text[2:]
	if !strings.HasPrefix(body, "ocannl:") {
		if off, ok := nearMissOffset(body); ok {
			return nil, errAt(pos, pos.Column+2+off,
				"malformed ocannl directive %s: write %s (no space or '+' before ocannl, no space before ':', lowercase)",
				spec.Quote(text), spec.Clip(suggestion(body[off:])))
		}
		return nil, nil
	}
	verbOff := len(dirPrefix)
	i := verbOff
	for i < len(text) && isVerbChar(text[i]) {
		i++
	}
	verb := text[verbOff:i]
	verbCol := pos.Column + verbOff
	if verb == "" {
		return nil, errAt(pos, verbCol, "missing directive verb after //ocannl: (known verbs: %s)", verbList())
	}
	if i < len(text) && !isSpace(text[i]) {
		return nil, errAt(pos, pos.Column+i, "expected a space after the directive verb %s, found %q", spec.Quote(verb), text[i:i+1])
	}
	if !knownVerbs[verb] {
		if lv := strings.ToLower(verb); knownVerbs[lv] {
			return nil, errAt(pos, verbCol, "directive verbs are lowercase: write //ocannl:%s, not //ocannl:%s", lv, verb)
		}
		return nil, errAt(pos, verbCol, "unknown directive //ocannl:%s (known verbs: %s)", spec.Clip(verb), verbList())
	}
	j := i
	for j < len(text) && isSpace(text[j]) {
		j++
	}
	return &directive{
		Verb:    verb,
		Text:    text,
		Pos:     pos,
		Arg:     strings.TrimRight(text[j:], " \t\r"),
		VerbCol: verbCol,
		ArgCol:  pos.Column + j,
	}, nil
}

// nearMissOffset reports whether a comment body (the text after "//" or
// "/*") looks like an attempted ocannl directive: optional spaces or '+',
// then "ocannl" in any case, optional spaces, then ':'. It returns the
// offset of the word "ocannl" in body.
func nearMissOffset(body string) (int, bool) {
	i := 0
	for i < len(body) && (isSpace(body[i]) || body[i] == '+') {
		i++
	}
	if len(body)-i < len("ocannl") || !strings.EqualFold(body[i:i+len("ocannl")], "ocannl") {
		return 0, false
	}
	j := i + len("ocannl")
	for j < len(body) && isSpace(body[j]) {
		j++
	}
	return i, j < len(body) && body[j] == ':'
}

// suggestion rewrites a near-miss directive body starting at "ocannl" as
// the well-formed directive.
func suggestion(s string) string {
	colon := strings.IndexByte(s, ':')
	rest := strings.TrimLeft(s[colon+1:], " \t")
	i := 0
	for i < len(rest) && isVerbChar(rest[i]) {
		i++
	}
	return dirPrefix + strings.ToLower(rest[:i]) + rest[i:]
}
