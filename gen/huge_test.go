package gen

import (
	"fmt"
	"strings"
	"testing"
)

// TestHugeDirectiveErrors: generation errors quote long specs,
// directives and names shortened (spec.Quote), at the exact column of
// the offending character: a few hundred bytes, not megabytes.
func TestHugeDirectiveErrors(t *testing.T) {
	var b strings.Builder
	for i := range 300000 {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "a%d", i)
	}
	labels := b.String()
	long := strings.Repeat("x", 300000)
	kernel := func(dirs ...string) string {
		return "package p\n\n// F is annotated.\n//\n" + strings.Join(dirs, "\n") + "\nfunc F(x []float32, out *[1]float32) { ocannlF(x, out) }\n"
	}
	for _, c := range []struct {
		name, src string
		line, col int
		msg       string
	}{
		// The spec starts at column 18; '?' is 4 bytes after the labels.
		{"spec syntax", kernel(`//ocannl:einsum "` + labels + ` => ?"`), 5, 18 + len(labels) + 4, `in spec "a0, a1, a2`},
		{"spec arity", kernel(`//ocannl:einsum "` + labels + `; i => i"`), 5, 18, `spec "a0, a1, a2`},
		{"near miss", kernel("// ocannl:einsum " + long), 5, 4, `malformed ocannl directive "// ocannl:einsum xxx`},
		{"unknown verb", kernel("//ocannl:" + long), 5, 10, "unknown directive //ocannl:xxx"},
		{"text after the spec", kernel(`//ocannl:einsum "i => 0" ` + long), 5, 26, `unexpected text after the spec string of //ocannl:einsum: "xxx`},
		{"dims", kernel(`//ocannl:einsum "i => 0"`, "//ocannl:dims "+long), 6, 15, `//ocannl:dims: expected NAME=VALUE (no spaces around '='), found "xxx`},
	} {
		r, err := runPipeline(c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		found := false
		for _, e := range r.Errs {
			if n := len(e.Error()); n > 1000 {
				t.Errorf("%s: an error of %d bytes: %.300s...", c.name, n, e.Error())
			}
			if e.Pos.Line == c.line && e.Pos.Column == c.col && strings.Contains(e.Msg, c.msg) {
				found = true
			}
		}
		if !found {
			var got []string
			for _, e := range r.Errs {
				got = append(got, fmt.Sprintf("%d:%d: %.200s", e.Pos.Line, e.Pos.Column, e.Msg))
			}
			t.Errorf("%s: want an error at %d:%d containing %q; got:\n%s", c.name, c.line, c.col, c.msg, strings.Join(got, "\n"))
		}
	}
}
