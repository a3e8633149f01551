package main

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestInferJSONContract(t *testing.T) {
	src := "input x : 32 | 2 = range\nlet h = relu ({w} * x + {b = 0.; o=[16]})\ninput t : 4:batch = 1\n"
	code, out, errs := runCLI(t, src, "infer", "--json", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	want := `{"tensors":[` +
		`{"name":"x","kind":"input","batch":[32],"input":[],"output":[2]},` +
		`{"name":"w","kind":"param","batch":[],"input":[2],"output":[16]},` +
		`{"name":"b","kind":"param","batch":[],"input":[],"output":[16]},` +
		`{"name":"h","kind":"let","batch":[32],"input":[],"output":[16]},` +
		`{"name":"t","kind":"input","batch":[],"input":[],"output":["4:batch"]}]}` + "\n"
	if out != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

func TestInferText(t *testing.T) {
	code, out, _ := runCLI(t, "input x : 32 | 2 = range\nlet h = relu ({w} * x + {b = 0.; o=[16]})\n", "infer", "-")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("want 4 lines, got %q", out)
	}
	for i, want := range []string{"x", "w", "b", "h"} {
		f := strings.Fields(lines[i])
		if f[0] != want {
			t.Errorf("line %d: %q, want name %s", i, lines[i], want)
		}
	}
	if !strings.Contains(lines[1], "2 -> 16") || !strings.Contains(lines[3], "32 | 16") {
		t.Errorf("unexpected shapes:\n%s", out)
	}
}

func TestInferErrors(t *testing.T) {
	code, out, _ := runCLI(t, "input x : 2 = range\nlet y = {w} * x\n", "infer", "--json", "-")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	var e struct {
		Error struct {
			Kind    string `json:"kind"`
			Message string `json:"message"`
			Line    int    `json:"line"`
			Col     int    `json:"col"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatal(err)
	}
	if e.Error.Kind != "hidden-dim" || e.Error.Line != 2 || e.Error.Col != 9 || !strings.Contains(e.Error.Message, `"w"`) {
		t.Fatalf("got %+v", e.Error)
	}
	// Text mode: file:line:col: kind: message on stderr.
	code, _, errs := runCLI(t, "input x : 9 = range\nlet y = x ++ \"2*o => o\"\n", "infer", "-")
	if code != 1 || !strings.HasPrefix(errs, "<stdin>:2:15: stride: ") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	// Usage errors exit 2.
	if code, _, _ := runCLI(t, "", "infer"); code != 2 {
		t.Fatalf("missing file: exit %d, want 2", code)
	}
	if code, _, _ := runCLI(t, "", "frobnicate"); code != 2 {
		t.Fatalf("unknown command: exit %d, want 2", code)
	}
}

func TestInferModel(t *testing.T) {
	src := "let net = mlp2[16, 16]\nloss train:\n  input x : 32 | 2\n  input y : 32 | 1\n  return hinge(net(x), y)\nentry predict:\n  input p : 1 | 2\n  return net(p)\n"
	code, out, errOut := runCLI(t, src, "infer", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"net.w1  param  2 -> 16", "net.w3  param  16 -> 1", "# entry predict", "predict  let    1 | 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runCLI(t, src, "infer", "--loops", "-")
	if code != 0 || !strings.Contains(out, "# backward of train") || !strings.Contains(out, "net.w1.grad") {
		t.Errorf("--loops: exit %d\n%s", code, out)
	}
	code, _, errOut = runCLI(t, "loss l:\n  input x : 4 | 2\n  return hinge({w} * relu({v} * x), x)\n", "infer", "-")
	if code != 1 || !strings.Contains(errOut, "<stdin>:3:") || !strings.Contains(errOut, `parameter "w"`) {
		t.Errorf("unpinned hidden dim: exit %d, %q", code, errOut)
	}
}

// TestInferKernels: --kernels explains, per nest, the assembly kernel or
// why the Go loops stay.
func TestInferKernels(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"infer", "--loops", "--kernels", "../../examples/programs/mlp.ocl"}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{
		"# kernels (float32; assembly tiers AVX512, AVX2)",
		"# _h2.1 = compose \"*\" of w2, h1\n  float32 dot kernel M=32 N=16 K=16: AVX512 4x4 tile, k unblocked; AVX2 gathered broadcast 6x16 tile, B gathered into the frame",
		"Go loops (not a contraction, and not a pointwise map",
		"Go loops (no unit-stride axis for a broadcast or dot kernel, or too short)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if code := run([]string{"infer", "--kernels", "--json", "../../examples/programs/mlp.ocl"}, nil, &out, &errb); code != 0 {
		t.Fatalf("--kernels without --loops: exit %d", code)
	}
}

// TestRunBudget: run refuses, before allocating, a program whose
// tensors need more memory than the budget (--max-mib, default 4 GiB),
// with a size error at the largest tensor; sizes infer accepts never
// crash it.
func TestRunBudget(t *testing.T) {
	big := "input x : 1 = 1\ninput y : 65536, 65536 = 1\nlet z = y *. 2\n"
	code, _, errs := runCLI(t, big, "run", "-")
	if code != 1 || !strings.HasPrefix(errs, "<stdin>:2:1: size: running this program needs about 131073 MiB (y alone 32768 MiB), more than the budget of 4096 MiB") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	// x and its float64 copy: 2 MiB in float64, 1.5 MiB in float32.
	small := "input x : 1024, 128 = 1\n"
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"--max-mib", "1"}, 1},
		{[]string{"--max-mib=2"}, 0},
		{[]string{"--max-mib=1", "--f32"}, 1},
		{[]string{"--max-mib", "2", "--f32"}, 0},
		{[]string{"--max-mib", "0"}, 2},
		{[]string{"--max-mib"}, 2},
	} {
		code, _, errs := runCLI(t, small, append(append([]string{"run"}, c.args...), "-")...)
		if code != c.code {
			t.Errorf("run %v: exit %d, want %d (%s)", c.args, code, c.code, errs)
		}
	}
	code, out, _ := runCLI(t, big, "run", "--json", "-")
	if code != 1 || !strings.Contains(out, `"kind":"size"`) {
		t.Errorf("--json: exit %d, %s", code, out)
	}
}

// TestInferLoopsLossWithoutParameter: infer --loops reports a loss that
// depends on no parameter at its entry line instead of panicking.
func TestInferLoopsLossWithoutParameter(t *testing.T) {
	src := "let net = linear[1]\nloss train:\n    input points : 32 | 2\n    return (points *. points) ++ \"...|... => 0\"\nentry predict:\n    input x : 1 | 2\n    return net(x)\n"
	code, _, errs := runCLI(t, src, "infer", "--loops", "-")
	if code != 1 || !strings.HasPrefix(errs, "<stdin>:2:1: the loss train depends on no parameter") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// TestInferErrorRelated checks that infer --json lists the positions an
// error's message cites, besides citing them in the message.
func TestInferErrorRelated(t *testing.T) {
	for _, tc := range []struct {
		src, message string
		related      []jsonRelated
	}{
		{"input x : 2\nlet y = (x\n", "expected ',' or ')' to close '(' at 2:9, found end of input", []jsonRelated{{Line: 2, Col: 9, Message: "'(' opened here"}}},
		{"sgd lr=0.1\nsgd lr=0.2\nloss l:\n  input x : 1\n  return x\n", "the optimizer is set twice (first at 1:1)", []jsonRelated{{Line: 1, Col: 1, Message: "the first optimizer setting"}}},
	} {
		code, out, _ := runCLI(t, tc.src, "infer", "--json", "-")
		var e struct {
			Error jsonError `json:"error"`
		}
		if err := json.Unmarshal([]byte(out), &e); err != nil || code != 1 {
			t.Fatalf("%q: exit %d, %v: %s", tc.src, code, err, out)
		}
		if e.Error.Message != tc.message || !reflect.DeepEqual(e.Error.Related, tc.related) {
			t.Errorf("%q: got %+v, want message %q, related %+v", tc.src, e.Error, tc.message, tc.related)
		}
	}
}

// TestInferLoopsLetNumber pins infer --loops for a let-bound number
// (issue 27, item 3): the scalar is listed, initialized and used under
// the let's name; the number written inline stays anonymous. In a model,
// the let of a layer body is named by its application's path, distinct
// for each application.
func TestInferLoopsLetNumber(t *testing.T) {
	src := "input x : 3 = range\nlet s = 2\nlet y = s *. x + 1\n"
	code, out, errs := runCLI(t, src, "infer", "--loops", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := `x  input  3
s  let    1
y  let    3

# init x (input)
init x: range over offsets

# init s (number)
init s: constant 2

# init _num.1 (number)
init _num.1: constant 1

# _y.1 = pointwise "*." of s, x
for i0 in 0..2:
  _y.1[i0] = s[0] * x[i0]

# y = pointwise "+" of _y.1, _num.1
for i0 in 0..2:
  y[i0] = _y.1[i0] + _num.1[0]
`
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	code, out, errs = runCLI(t, src, "infer", "--json", "--loops", "-")
	if code != 0 || !strings.Contains(out, `"rhs":["s","x"]`) || !strings.Contains(out, `"rhs":["_y.1","_num.1"]`) {
		t.Errorf("--json --loops: exit %d %s\n%s", code, errs, out)
	}

	model := "layer scale(x) :\n    let s = 2\n    return s *. x\n" +
		"loss train:\n    input x : 2 | 3\n    let h = scale(x) + scale(x)\n    return (h *. {w}) ++ \"...|... => 0\"\n"
	code, out, errs = runCLI(t, model, "infer", "--loops", "-")
	if code != 0 {
		t.Fatalf("model: exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"init train.scale#1/s: constant 2\n",
		"init train.scale#2/s: constant 2\n",
		"# _h.1 = pointwise \"*.\" of train.scale#1/s, x\n",
		"    _h.2[i0, i1] = train.scale#2/s[0] * x[i0, i1]\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("model: output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "_num") {
		t.Errorf("model: a let-bound number is anonymous:\n%s", out)
	}
}

// TestInferRejectsLikeGenerate: infer runs the model pipeline go generate
// runs (model.Compile), so it rejects the models generate rejects with the
// same message at the same place of the program: the run-time rows
// models of TestRunTimeRowsErrors (infer accepted those the model rules
// reject, such as a reduction of the rows), an entry returning an input
// and a loss that is not a single number; and it accepts a loss with
// run-time rows that generate accepts, whose loop nests are those of one
// row.
func TestInferRejectsLikeGenerate(t *testing.T) {
	for _, c := range runTimeRowsErrors {
		prog := strings.ReplaceAll(c.body, "//ocannl:", "") + "\n"
		for _, args := range [][]string{{"infer", "-"}, {"infer", "--loops", "-"}} {
			code, out, errs := runCLI(t, prog, args...)
			if code != 1 || out != "" || !strings.HasPrefix(errs, c.infer) {
				t.Errorf("%s, %v: exit %d, stdout %q, stderr %q, want it to start with %q", c.name, args, code, out, errs, c.infer)
			}
		}
		code, out, _ := runCLI(t, prog, "infer", "--json", "-")
		var e struct {
			Error jsonError `json:"error"`
		}
		if err := json.Unmarshal([]byte(out), &e); err != nil || code != 1 || e.Error.Line == 0 {
			t.Errorf("%s, --json: exit %d, %v: %s", c.name, code, err, out)
		}
	}
	for _, c := range []struct{ prog, want string }{
		{"entry p:\n  input x : 2 | 3\n  let y = x\n  return y\n",
			"<stdin>:4:10: entry p returns y, which no operation computes (it is the input x); return a value computed from it (e.g. id y)\n"},
		{"loss train:\n  input x : 2\n  return x *. 2\n",
			"<stdin>:3:12: the loss train must be a single number, but its shape is 2 (reduce it, e.g. with ++ \"...|... => 0\")\n"},
	} {
		if code, out, errs := runCLI(t, c.prog, "infer", "-"); code != 1 || out != "" || errs != c.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q, want %q", c.prog, code, out, errs, c.want)
		}
	}
	ok := "let net = linear[1]\nloss train:\n  input x : <=4 | 2\n  return (net(x) *. net(x)) ++ \"...|... => 0\"\n"
	code, out, errs := runCLI(t, ok, "infer", "--loops", "-")
	if code != 0 || !strings.Contains(out, "input  <=4 | 2") || !strings.Contains(out, "# loops of train (one row of <=4)") || !strings.Contains(out, "* x[0, i0]") {
		t.Errorf("a loss with run-time rows: exit %d, stderr %q, stdout\n%s", code, errs, out)
	}
}
