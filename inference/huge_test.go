package inference_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/inference"
)

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

// TestHugeSpecErrors: the inference errors of a spec of 300,000 labels
// (and of a name of 300,000 bytes) quote it shortened and list long rows
// elided: a few hundred bytes instead of megabytes, at the exact position
// (and column inside the spec).
func TestHugeSpecErrors(t *testing.T) {
	labels := hugeLabels(300000)
	long := strings.Repeat("x", 300000)
	for _, c := range []struct {
		name, src string
		kind      inference.ErrorKind
		line, col int
		specCol   int
		msg       string
	}{
		{"arity", "input x : 2 = 0\nlet y = x +* \"" + labels + " => q\" x\n", inference.KindArity, 2, 11, 0, `spec "a0, a1, a2`},
		{"rank", "input x : 2 = 0\nlet y = x +* \"" + labels + "; i => i\" x\n", inference.KindRankMismatch, 2, 15, 1, "number of axes mismatch: 300000 axes [$1, $2, $3"},
		{"syntax", "input x : 2 = 0\nlet y = x ++ \"" + labels + " => ?\"\n", inference.KindParse, 2, 15 + len(labels) + 4, len(labels) + 5, `in spec "a0, a1, a2`},
		{"undefined", "input x : 2 = 0\nlet y = x + " + long + "\n", inference.KindName, 2, 13, 0, `undefined name "xxx`},
	} {
		_, err := inference.InferSource(c.src)
		e, ok := inference.AsError(err)
		if !ok {
			t.Fatalf("%s: want an *inference.Error, got %.300v", c.name, err)
		}
		if e.Kind != c.kind || e.Pos.Line != c.line || e.Pos.Col != c.col || e.SpecCol != c.specCol || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("%s: %s at %v (spec column %d): %.300s; want %s at %d:%d (%d) and %q", c.name, e.Kind, e.Pos, e.SpecCol, e.Msg, c.kind, c.line, c.col, c.specCol, c.msg)
		}
		if n := len(e.Error()); n > 1000 {
			t.Errorf("%s: the error has %d bytes: %.300s...", c.name, n, e.Error())
		}
	}
}
