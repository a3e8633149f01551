package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// compareGolden compares got with the golden file at path, or rewrites it
// with -update.
func compareGolden(t *testing.T, path string, got string) {
	t.Helper()
	name := filepath.Base(path)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/ocannlgen -run %s -update to create it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test ./cmd/ocannlgen -run %s -update if intended):\n--- got\n%s--- want\n%s", name, t.Name(), got, want)
	}
}

// testTime matches the timings and line numbers the go command prints.
var testTime = regexp.MustCompile(`\t[0-9.]+s$| \([0-9.]+s\)`)

// testLine matches the line number of a test failure.
var testLine = regexp.MustCompile(`_test\.go:[0-9]+:`)

// TestTwoPackageModule follows a user's module through the generate and
// check cycle, as a transcript pinned by testdata/twopkg.golden: a model
// package m (with an internal and an external test package), a command
// use that calls the model's generated methods on m.MLP and on a struct
// embedding it, `ocannlgen -check ./...` and `ocannlgen ./...` over the
// whole module (which once failed on use: "x.Init undefined"), then a
// changed directive that the build does not notice but `go test` and
// -check do. Without OCANNLGEN_E2E=1 it only generates the module and
// builds it.
func TestTwoPackageModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests a module")
	}
	dir := testutil.WriteRepoModule(t, map[string][]byte{})
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(testdata, "twopkg")
	testutil.CopyTree(t, src, dir, nil)
	t.Chdir(dir)
	var log strings.Builder
	cli := func(args ...string) {
		code, out, errs := runCLI(t, "", args...)
		fmt.Fprintf(&log, "$ ocannlgen %s\n%s%sexit %d\n", strings.Join(args, " "), out, errs, code)
	}
	var lastOut string
	goCmd := func(args ...string) error {
		out, err := testutil.GoCmd(t, dir, []string{"GOFLAGS=-mod=mod"}, args...)
		lastOut = out
		fmt.Fprintf(&log, "$ go %s\n", strings.Join(args, " "))
		for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			// Keep what does not depend on the machine: test verdicts and failures.
			if strings.HasPrefix(line, "ok ") || strings.HasPrefix(line, "FAIL") || strings.HasPrefix(line, "--- FAIL") || strings.Contains(line, "ocannl_gen") || strings.HasPrefix(line, "true") || strings.HasPrefix(line, "demo") {
				fmt.Fprintln(&log, testLine.ReplaceAllString(testTime.ReplaceAllString(line, ""), "_test.go:N:"))
			}
		}
		code := 0
		if err != nil {
			code = 1
		}
		fmt.Fprintf(&log, "exit %d\n", code)
		return err
	}
	cli("-check", "./...")
	cli("-v", "./...")
	if !testutil.IsEndToEnd() {
		// The quick run: the whole module generates and builds; the
		// transcript (vet, the tests, a stale directive) is an
		// end-to-end check.
		if !strings.HasSuffix(log.String(), "exit 0\n") {
			t.Fatalf("ocannlgen -v ./... failed:\n%s", log.String())
		}
		if err := goCmd("build", "./..."); err != nil {
			t.Fatalf("go build ./... after generation: %v\n%s\n%s", err, lastOut, log.String())
		}
		testutil.EndToEnd(t)
	}
	for _, args := range [][]string{{"build", "./..."}, {"vet", "./..."}, {"test", "-count=1", "./..."}, {"run", "./use"}} {
		if err := goCmd(args...); err != nil {
			t.Fatalf("go %v after generation: %v\n%s\n%s", args, err, lastOut, log.String())
		}
	}
	cli("-check", "./...")
	// The mistake: a changed directive, go generate forgotten.
	path := filepath.Join(dir, "m", "m.go")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), "mlp2[64, 32]", "mlp2[128, 32]", 1)
	if edited == string(b) {
		t.Fatal("fixture changed: no mlp2[64, 32] in m/m.go")
	}
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(&log, "# m/m.go: mlp2[64, 32] -> mlp2[128, 32], without go generate")
	if err := goCmd("build", "./..."); err != nil {
		t.Fatalf("the build broke on the stale model (the test expects it to build): %v", err)
	}
	if err := goCmd("test", "-count=1", "./m"); err == nil {
		t.Errorf("go test passed on a package whose directives changed after generation\n%s", log.String())
	}
	cli("-check", "./...")
	cli("./...")
	if err := goCmd("test", "-count=1", "./m"); err != nil {
		t.Errorf("go test after regenerating: %v\n%s", err, log.String())
	}
	compareGolden(t, filepath.Join(testdata, "twopkg.golden"), log.String())
}
