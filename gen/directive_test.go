package gen

import (
	"go/ast"
	"go/token"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/spec"
)

func comment(text string, col int) (*token.FileSet, *ast.Comment) {
	fset := token.NewFileSet()
	// A file whose line 3 holds the comment at the given column.
	src := "package p\n\n" + strings.Repeat(" ", col-1) + text + "\n"
	f := fset.AddFile("x.go", -1, len(src))
	f.SetLinesForContent([]byte(src))
	off := strings.LastIndex(src, text)
	return fset, &ast.Comment{Slash: f.Pos(off), Text: text}
}

func TestParseComment(t *testing.T) {
	tests := []struct {
		text string
		// For a directive: verb, arg and arg column; for an error: its
		// column and a substring of its message. Neither: not ours.
		verb, arg string
		argCol    int
		errCol    int
		errSub    string
	}{
		{text: `//ocannl:einsum "i,j; j,k => i,k"`, verb: "einsum", arg: `"i,j; j,k => i,k"`, argCol: 17},
		{text: "//ocannl:dims\ti=4  j=N  ", verb: "dims", arg: "i=4  j=N", argCol: 15},
		{text: `//ocannl:expr`, verb: "expr", arg: "", argCol: 14},
		{text: `// ordinary comment mentioning ocannl: fine`},
		{text: `// ocannlgen: the command`},
		{text: `//go:generate ocannlgen`},
		{text: `// ocannl:einsum "i => i"`, errCol: 4, errSub: `write //ocannl:einsum "i => i"`},
		{text: `//ocannl :einsum "i => i"`, errCol: 3, errSub: "malformed ocannl directive"},
		{text: `//+ocannl:einsum "i => i"`, errCol: 4, errSub: "no space or '+' before ocannl"},
		{text: `// +ocannl:einsum "i => i"`, errCol: 5, errSub: "malformed"},
		{text: `//OCANNL:einsum "i => i"`, errCol: 3, errSub: "malformed"},
		{text: `//Ocannl:expr x`, errCol: 3, errSub: "write //ocannl:expr x"},
		{text: `//ocannl:Einsum "i => i"`, errCol: 10, errSub: "directive verbs are lowercase: write //ocannl:einsum"},
		{text: `//ocannl:einsun "i => i"`, errCol: 10, errSub: "unknown directive //ocannl:einsun"},
		{text: `//ocannl:`, errCol: 10, errSub: "missing directive verb"},
		{text: `//ocannl:einsum"i => i"`, errCol: 16, errSub: "expected a space after the directive verb"},
		{text: `/* ocannl:einsum "i => i" */`, errCol: 4, errSub: "not /* */ comments"},
		{text: `/* a block comment */`},
	}
	for _, tc := range tests {
		fset, c := comment(tc.text, 1)
		d, err := parseComment(fset, c)
		switch {
		case tc.errCol > 0:
			if err == nil || err.Pos.Column != tc.errCol || err.Pos.Line != 3 || !strings.Contains(err.Msg, tc.errSub) {
				t.Errorf("%q: got %v, want an error at 3:%d containing %q", tc.text, err, tc.errCol, tc.errSub)
			}
		case tc.verb != "":
			if err != nil || d == nil || d.Verb != tc.verb || d.Arg != tc.arg || d.ArgCol != tc.argCol || d.VerbCol != 10 {
				t.Errorf("%q: got %+v, %v; want verb %q arg %q at column %d", tc.text, d, err, tc.verb, tc.arg, tc.argCol)
			}
		default:
			if d != nil || err != nil {
				t.Errorf("%q: got %+v, %v; want neither a directive nor an error", tc.text, d, err)
			}
		}
	}
	// Columns are absolute: an indented comment shifts them.
	fset, c := comment(`//ocannl:expr x`, 5)
	if d, _ := parseComment(fset, c); d == nil || d.ArgCol != 19 || d.VerbCol != 14 {
		t.Errorf("indented: got %+v", d)
	}
}

func TestParseGoStringColumns(t *testing.T) {
	d := &directive{Verb: "einsum"}
	// `"a\x2bb\tc"` starting at column 10: the escape \x2b (columns 12-15)
	// yields '+', \t (17-18) a tab, and é is two bytes of one character.
	s, cols, n, err := parseGoString(d, `"a\x2bb\tcé" rest`, 10, "a spec")
	if err != nil {
		t.Fatal(err)
	}
	if s != "a+b\tcé" || n != len(`"a\x2bb\tcé"`) {
		t.Fatalf("got %q (len %d)", s, n)
	}
	want := []int{11, 12, 16, 17, 19, 20, 20}
	if len(cols) != len(want) {
		t.Fatalf("cols %v, want %v", cols, want)
	}
	for i := range want {
		if cols[i] != want[i] {
			t.Fatalf("cols %v, want %v", cols, want)
		}
	}
	for _, bad := range []string{"`raw`", `'c'`, `"open`, ``} {
		if _, _, _, err := parseGoString(d, bad, 1, "a spec"); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestPositionMapping checks the map from positions in a synthesized
// program back to the directive, including spec columns behind escapes.
func TestPositionMapping(t *testing.T) {
	anchor := token.Position{Filename: "f.go", Line: 7, Column: 17}
	p := &synthProgram{fallback: token.Position{Filename: "f.go", Line: 1, Column: 1}}
	l := p.line(anchor)
	l.syn("let out = a ++ ")
	// Spec `x"y` whose quote was written \" in Go: source columns 18, 19-20, 21.
	l.spec(`x"y`, []int{18, 19, 21})
	l2 := p.line(token.Position{Filename: "f.go", Line: 8, Column: 15})
	l2.syn("dim ")
	l2.copyAt("k", 15)
	l2.syn(" = ")
	l2.mapAll("12", 17)
	if got := p.String(); got != "let out = a ++ \"x\\\"y\"\ndim k = 12\n" {
		t.Fatalf("program %q", got)
	}
	tests := []struct {
		line, col, specCol int
		want               token.Position
	}{
		{1, 1, 0, token.Position{Filename: "f.go", Line: 7, Column: 17}},  // synthesized: the anchor
		{1, 17, 0, token.Position{Filename: "f.go", Line: 7, Column: 18}}, // x
		{1, 18, 0, token.Position{Filename: "f.go", Line: 7, Column: 19}}, // the escaped quote
		{1, 19, 3, token.Position{Filename: "f.go", Line: 7, Column: 21}}, // spec column 3 (y), whatever the program column
		{2, 5, 0, token.Position{Filename: "f.go", Line: 8, Column: 15}},
		{2, 10, 0, token.Position{Filename: "f.go", Line: 8, Column: 17}},
		{2, 1, 0, token.Position{Filename: "f.go", Line: 8, Column: 15}},
		{3, 1, 0, token.Position{Filename: "f.go", Line: 1, Column: 1}}, // no such line: the fallback
	}
	for _, tc := range tests {
		if got := p.position(spec.Pos{Line: tc.line, Col: tc.col}, tc.specCol); got != tc.want {
			t.Errorf("%d:%d (spec %d): got %v, want %v", tc.line, tc.col, tc.specCol, got, tc.want)
		}
	}
}

func TestGenName(t *testing.T) {
	for in, want := range map[string]string{"MatMul": "ocannlMatMul", "matMul": "ocannlMatMul", "x": "ocannlX", "_f": "ocannl_f", "ébène": "ocannlÉbène"} {
		if got := genName(in); got != want {
			t.Errorf("genName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMethodName: entry methods are the CamelCase of the entry name, and
// the loss entry's adds Loss unless the name already ends with it.
func TestMethodName(t *testing.T) {
	for _, tc := range []struct {
		entry string
		loss  bool
		want  string
	}{
		{"predict", false, "Predict"},
		{"predict_one", false, "PredictOne"},
		{"predictOne", false, "PredictOne"},
		{"predict__one_", false, "PredictOne"},
		{"_x", false, "X"},
		{"été", false, "Été"},
		{"train", true, "TrainLoss"},
		{"train_loss", true, "TrainLoss"},
		{"loss", true, "Loss"},
		{"objective", true, "ObjectiveLoss"},
		{"train_step", false, "TrainStep"},
	} {
		if got := methodName(tc.entry, tc.loss); got != tc.want {
			t.Errorf("methodName(%q, %v) = %q, want %q", tc.entry, tc.loss, got, tc.want)
		}
	}
}
