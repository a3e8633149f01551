package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExplain runs `ocannlgen explain --html` on a program, a failing
// program and a package's model: the page is written, a failure is
// printed as `infer` prints it (exit 1), and bad command lines exit 2.
func TestExplain(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "mlp.html")
	code, stdout, stderr := runCLI(t, "", "explain", "--html", "-o", out, "../../examples/programs/mlp.ocl")
	if code != 0 || !strings.HasPrefix(stdout, "wrote "+out) || stderr != "" {
		t.Fatalf("mlp: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-status="ok"`, `data-tensor="w1" data-shape="2 -&gt; 16"`, `class="prov`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("mlp page lacks %s", want)
		}
	}

	// A failing program: its page, and the message `infer` prints.
	bad := "../../explain/testdata/mismatch.ocl"
	_, _, inferErr := runCLI(t, "", "infer", bad)
	code, stdout, stderr = runCLI(t, "", "explain", "--html", "-o", "-", bad)
	if code != 1 || stderr != inferErr || !strings.Contains(stdout, `id="failure"`) || !strings.Contains(stdout, `<mark class="failing"`) {
		t.Fatalf("mismatch: exit %d, stderr %q (infer: %q), page of %d bytes", code, stderr, inferErr, len(stdout))
	}

	// One model of a Go package.
	code, stdout, stderr = runCLI(t, "", "explain", "--html", "-o", "-", "../../examples/zoo#LeNet")
	if code != 0 || !strings.Contains(stdout, "LeNet") || strings.Contains(stdout, "MobileNet") {
		t.Fatalf("zoo#LeNet: exit %d, stderr %q", code, stderr)
	}

	for _, args := range [][]string{
		{"explain", "../../examples/programs/mlp.ocl"},
		{"explain", "--html"},
		{"explain", "--html", "--bogus", "x.ocl"},
		{"explain", "--html", "a.ocl", "b.ocl"},
	} {
		if code, _, stderr := runCLI(t, "", args...); code != 2 || stderr == "" {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
		}
	}
	if code, _, stderr := runCLI(t, "", "explain", "--html", "-o", "-", "../../examples/zoo#NoSuch"); code != 1 || !strings.Contains(stderr, "no model or annotated function named NoSuch") {
		t.Errorf("zoo#NoSuch: exit %d, stderr %q", code, stderr)
	}
}
