package cpu_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/internal/testutil"
)

// generatorOnly are the modules only the generator may import.
var generatorOnly = []string{"github.com/mmcloughlin/avo", "github.com/dave/jennifer", "golang.org/x/tools"}

// TestRuntimeDeps: the runtime packages and the demo programs (user
// binaries built on generated code) do not depend on the generator's
// modules.
func TestRuntimeDeps(t *testing.T) {
	root := testutil.RepoRoot(t)
	out, err := testutil.GoCmd(t, root, nil, "list", "-deps", "-f", "{{.ImportPath}}",
		"./rt/...", "./examples/cnn", "./examples/attention", "./examples/moons")
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(out) {
		for _, g := range generatorOnly {
			if strings.HasPrefix(p, g) {
				t.Errorf("runtime or demo code depends on %s", p)
			}
		}
	}
}

// TestGeneratedImports: every generated file of the examples imports only
// the standard library, rt, rt/dist (standard library only itself, see
// TestRuntimeDeps), rt/cpu and rt/bf16 (the bf16 contractions of
// //ocannl:model bf16; rt and rt/cpu only).
func TestGeneratedImports(t *testing.T) {
	root := testutil.RepoRoot(t)
	files, err := filepath.Glob(filepath.Join(root, "examples", "*", "ocannl_gen*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no generated files (%v)", err)
	}
	sawCPU := false
	for _, f := range files {
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range af.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			switch {
			case p == "github.com/ocannlgen/ocannlgen/rt", p == "github.com/ocannlgen/ocannlgen/rt/dist", p == "github.com/ocannlgen/ocannlgen/rt/bf16":
			case p == "github.com/ocannlgen/ocannlgen/rt/cpu":
				sawCPU = true
			case !strings.Contains(strings.SplitN(p, "/", 2)[0], "."):
				// the standard library
			default:
				t.Errorf("%s imports %s", f, p)
			}
		}
	}
	if !sawCPU {
		t.Error("no generated file imports rt/cpu (no assembly kernels?)")
	}
}

// TestDistStandardOnly: rt/dist, which every generated model with an
// optimizer imports, depends on the standard library only.
func TestDistStandardOnly(t *testing.T) {
	root := testutil.RepoRoot(t)
	out, err := testutil.GoCmd(t, root, nil, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./rt/dist")
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if got := strings.Fields(out); len(got) != 1 || got[0] != "github.com/ocannlgen/ocannlgen/rt/dist" {
		t.Errorf("rt/dist depends on %v", got)
	}
}
