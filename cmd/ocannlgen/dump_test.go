package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/internal/testutil"
	"github.com/ocannlgen/ocannlgen/loopir"
)

// dumpSrc has a parameter whose axes the closing policy decides (w's
// output axis is capped by the addition with b: it closes to the join of
// its caps at stage 3, to the cap 16 at stage 4) and a padded
// convolution (the pad pass widens x's buffer).
const dumpSrc = `input x : 32 | 2 = range
let h = relu ({w} * x + {b = 0.; o=[16]})
input s : 11 = range
input k : 3 = 1
let c = s +* "o=+j; j => o" k
`

// TestDumpList: --dump=list prints every stage, in pipeline order, and
// needs no input file.
func TestDumpList(t *testing.T) {
	code, out, errs := runCLI(t, "", "infer", "--dump=list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var want []string
	want = append(want, "parse")
	want = append(want, inference.Stages()...)
	want = append(want, "projections")
	want = append(want, loopir.Names(loopir.Passes())...)
	want = append(want, "backward")
	if got := strings.Fields(out); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("stages:\n%s\nwant %v", out, want)
	}
	for _, s := range []string{"elaborate", "settle", "stage3", "stage7", "leftovers", "shapes"} {
		if !strings.Contains(out, s+"\n") {
			t.Errorf("no stage %s", s)
		}
	}
}

// TestDumpEachStage dumps the program after every stage and checks what
// each must show against facts worked out by hand from the closing
// policy and the passes.
func TestDumpEachStage(t *testing.T) {
	expect := map[string][]string{
		"parse":     {"let h = relu ({w} * x + {b = 0.; o=[16]})"},
		"elaborate": {"w (param): [] | [..r", "# open:"},
		"stage4":    {"w (param): [] | [2] -> [16]"},
		"shapes":    {"w (param): [] | [2] -> [16]", "h (let): [32] | [] -> [16]", "# open: 0 row variable(s), 0 dimension variable(s); deferred: 0 constraint(s)"},
		"projections": {"# einsum \"+*\" \"o=+j; j => o\" of s, k\nproduct: [i0<11, i1<3]\nc[i0] := s[i0+i1-1], k[i1]\nzero-init true, accumulate true",
			"# padded s: margins (left+right) 1+2"},
		"assign": {"c[i0] += s[i0+i1-1] * k[i1]\n  over i0 in 0..10, i1 in 0..2"},
		"loops":  {"for i0 in 0..10:", "not yet applied"},
		"pad":    {"buffer 14", "reset padding of s to 0", "c[i0] += s[i0 + i1] * k[i1]"},
		"check":  {"buffer 14"},
	}
	// At stage 3 w's output row is closed to the join of its caps, one
	// axis still unknown (an unnamed variable ?N); its input row is still
	// open beside x's axis 2.
	expectRe := map[string]*regexp.Regexp{
		"stage3": regexp.MustCompile(`w \(param\): \[\] \| \[\.\.r\d+\.\., 2\] -> \[\?\d+\]\n`),
	}
	// What a stage does not show yet: w's axes are open before stage 4.
	absent := map[string][]string{
		"elaborate": {"-> [16]\nb"},
		"stage3":    {"w (param): [] | [2] -> [16]"},
		"loops":     {"buffer 14"},
	}
	code, list, _ := runCLI(t, "", "infer", "--dump=list")
	if code != 0 {
		t.Fatal("--dump=list failed")
	}
	for _, stage := range strings.Fields(list) {
		if stage == "backward" {
			continue // TestDumpModel
		}
		code, out, errs := runCLI(t, dumpSrc, "infer", "--dump="+stage, "-")
		if code != 0 || errs != "" {
			t.Errorf("%s: exit %d: %s", stage, code, errs)
			continue
		}
		if strings.TrimSpace(out) == "" {
			t.Errorf("%s: empty dump", stage)
		}
		for _, w := range expect[stage] {
			if !strings.Contains(out, w) {
				t.Errorf("%s: dump lacks %q:\n%s", stage, w, out)
			}
		}
		if re := expectRe[stage]; re != nil && !re.MatchString(out) {
			t.Errorf("%s: dump does not match %s:\n%s", stage, re, out)
		}
		for _, w := range absent[stage] {
			if strings.Contains(out, w) {
				t.Errorf("%s: dump already shows %q:\n%s", stage, w, out)
			}
		}
	}
}

// TestDumpErrors: an unknown stage is a usage error naming every stage;
// --dump does not combine with --json or --loops, needs a value, and a
// program that fails before the stage reports the error.
func TestDumpErrors(t *testing.T) {
	code, out, errs := runCLI(t, dumpSrc, "infer", "--dump=stage9", "-")
	if code != 2 || out != "" || !strings.Contains(errs, `unknown stage "stage9" for --dump (stages: parse, elaborate, settle, stage3,`) ||
		!strings.Contains(errs, "pad, check, backward; --dump=list prints them)") {
		t.Errorf("unknown stage: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	for _, args := range [][]string{{"--dump=pad", "--json"}, {"--loops", "--dump=pad"}} {
		if code, _, errs := runCLI(t, dumpSrc, append(append([]string{"infer"}, args...), "-")...); code != 2 || !strings.Contains(errs, "--dump cannot be combined") {
			t.Errorf("%v: exit %d, %s", args, code, errs)
		}
	}
	if code, _, errs := runCLI(t, dumpSrc, "infer", "--dump", "-"); code != 2 || !strings.Contains(errs, `flag "--dump" needs a value`) {
		t.Errorf("--dump without value: exit %d, %s", code, errs)
	}
	if code, _, errs := runCLI(t, dumpSrc, "infer", "--json=1", "-"); code != 2 || !strings.Contains(errs, "takes no value") {
		t.Errorf("--json=1: exit %d, %s", code, errs)
	}
	if code, _, errs := runCLI(t, dumpSrc, "infer", "--dump=backward", "-"); code != 2 || !strings.Contains(errs, "loss entries only") {
		t.Errorf("backward of a plain program: exit %d, %s", code, errs)
	}
	// A hidden row fails at stage 4: the stage 3 dump still prints.
	bad := "input x : 3\nlet y = {w} * x\n"
	if code, out, errs := runCLI(t, bad, "infer", "--dump=stage3", "-"); code != 0 || !strings.Contains(out, "w (param)") {
		t.Errorf("stage3 before the error: exit %d, %q, %s", code, out, errs)
	}
	if code, _, errs := runCLI(t, bad, "infer", "--dump=stage4", "-"); code != 1 || !strings.Contains(errs, "<stdin>:2:9: hidden-dim:") {
		t.Errorf("stage4 error: exit %d, %s", code, errs)
	}
}

// TestDumpModel: a model's entries dump the stages after inference, and
// the loss its backward program.
func TestDumpModel(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "examples", "programs", "moons.ocl"))
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, string(src), "infer", "--dump=backward", "-")
	if code != 0 || !strings.HasPrefix(out, "# backward of train\n") || !strings.Contains(out, "net.w1.grad") {
		t.Errorf("backward: exit %d, %s\n%.600s", code, errs, out)
	}
	code, out, errs = runCLI(t, string(src), "infer", "--dump=loops", "-")
	if code != 0 || strings.Count(out, "# loops of ") < 2 || !strings.Contains(out, "for i0 in") {
		t.Errorf("loops: exit %d, %s\n%.600s", code, errs, out)
	}
	code, _, errs = runCLI(t, string(src), "infer", "--dump=stage3", "-")
	if code != 2 || !strings.Contains(errs, "a model's shapes are inferred by the model compiler") {
		t.Errorf("stage3 of a model: exit %d, %s", code, errs)
	}
}

// TestREADMEDump: the README's --dump example is the command's real
// output.
func TestREADMEDump(t *testing.T) {
	root := testutil.RepoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	taste, err := os.ReadFile(filepath.Join(root, "examples", "programs", "taste.ocl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, stage := range []string{"stage3", "stage4"} {
		code, out, errs := runCLI(t, string(taste), "infer", "--dump="+stage, "-")
		if code != 0 {
			t.Fatalf("%s: %s", stage, errs)
		}
		var line string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "w ") {
				line = l
			}
		}
		block := "$ go run ./cmd/ocannlgen infer --dump=" + stage + " examples/programs/taste.ocl | grep '^w'\n" + line + "\n"
		if line == "" || !strings.Contains(string(readme), block) {
			t.Errorf("README lacks\n%s", block)
		}
	}
}
