// Package testutil holds the helpers that the repository's tests share:
// compiling a program through shape and projection inference, locating the
// repository and the shared example cases, copying fixture trees, writing
// and running throwaway Go modules, deterministic test data, and the
// switch between the quick default run and the end-to-end checks
// (EndToEnd, IsEndToEnd). Only tests import it.
package testutil

import (
	"fmt"
	"hash/fnv"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/inference"
)

// E2EEnv is the environment variable that turns on the end-to-end
// checks: the tests that build and run whole modules, emulate every CUDA
// kernel, or compare every gallery kernel with the interpreter at full
// size. `go test ./...` leaves them out (or runs a representative subset)
// so that it stays quick; `OCANNLGEN_E2E=1 go test ./...` runs them all,
// and `bash .ci/run` does.
const E2EEnv = "OCANNLGEN_E2E"

// IsEndToEnd reports whether the end-to-end checks are on (OCANNLGEN_E2E
// is "1"). A test that shrinks its work in the default run (a subset of
// its cases, a smaller size) asks it; with the checks on it must do all
// of its work.
func IsEndToEnd() bool {
	return os.Getenv(E2EEnv) == "1"
}

// EndToEnd skips the test unless the end-to-end checks are on
// (IsEndToEnd). Call it first in a slow end-to-end test whose behaviour a
// faster test of the default run also covers.
func EndToEnd(t testing.TB) {
	t.Helper()
	if !IsEndToEnd() {
		t.Skip("end-to-end check: set OCANNLGEN_E2E=1 (bash .ci/run does)")
	}
}

// Compile runs shape inference and projection inference on a program,
// failing the test on an error. It is for the tests of the packages the
// pipeline imports (loopir, autodiff and their dependants' internal
// tests), which cannot import package pipeline; other tests call
// pipeline.Compile (or pipeline.CompileGraph on this graph) to lower.
func Compile(t testing.TB, src string) *inference.Graph {
	t.Helper()
	g, err := inference.InferSource(strings.TrimSpace(src) + "\n")
	if err != nil {
		t.Fatalf("inference: %v", err)
	}
	if err := inference.DeriveProjections(g); err != nil {
		t.Fatalf("projections: %v", err)
	}
	return g
}

// Named returns the tensor that name is bound to last in g, failing the
// test when there is none.
func Named(t testing.TB, g *inference.Graph, name string) int {
	t.Helper()
	id := -1
	for _, n := range g.Named {
		if n.Name == name {
			id = n.Tensor
		}
	}
	if id < 0 {
		t.Fatalf("no tensor named %q", name)
	}
	return id
}

// RepoRoot is the repository's root directory: the nearest directory
// holding a go.mod, from the working directory (a test's package
// directory) up.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// CasesDir locates the shared example cases: $OCANNLGEN_CASES, or
// ../shared/cases beside the repository. It skips the test when there is
// no such directory.
func CasesDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("OCANNLGEN_CASES")
	if dir == "" {
		dir = filepath.Join(RepoRoot(t), "..", "shared", "cases")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared cases not found at %s", dir)
	}
	return dir
}

// CopyTree copies the directory tree src to dst, leaving out the files for
// which skip (when not nil) reports true, and fails the test on an error.
func CopyTree(t testing.TB, src, dst string, skip func(name string) bool) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if skip != nil && skip(d.Name()) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// GoTool is the go command: the one on PATH, else GOROOT's. It skips the
// test when there is none.
func GoTool(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err != nil {
		t.Skip("no go command available")
	}
	return p
}

// GoCmd runs the go command in dir, with env added to the environment,
// and returns its combined output.
func GoCmd(t testing.TB, dir string, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(GoTool(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// WriteModule creates a module named gentest in a temporary directory with
// the given files (plus go.mod, which it adds to files) and returns the
// directory.
func WriteModule(t testing.TB, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = []byte("module gentest\n\ngo 1.26\n")
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// WriteRepoModule is WriteModule for a module that requires this
// repository (replaced by the working tree, with its go.sum) and the
// cpuid module generated assembly stubs import; run its go commands with
// GOFLAGS=-mod=mod.
func WriteRepoModule(t testing.TB, files map[string][]byte) string {
	t.Helper()
	dir := WriteModule(t, files)
	root := RepoRoot(t)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	cpuid := ""
	for _, line := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "github.com/klauspost/cpuid/v2" {
			cpuid = f[1]
		}
	}
	if cpuid == "" {
		t.Fatal("go.mod does not require github.com/klauspost/cpuid/v2")
	}
	gomod := fmt.Sprintf("module gentest\n\ngo 1.26\n\nrequire (\n\tgithub.com/ocannlgen/ocannlgen v0.0.0\n\tgithub.com/klauspost/cpuid/v2 %s\n)\n\nreplace github.com/ocannlgen/ocannlgen => %s\n", cpuid, root)
	for name, data := range map[string][]byte{"go.mod": []byte(gomod), "go.sum": sum} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// CloseRel reports |a-b| <= tol * max(1, |a|, |b|) (loopir's tolerance);
// infinities must be equal, and NaN matches only NaN.
func CloseRel(a, b, tol float64) bool {
	if math.IsInf(a, 0) || math.IsInf(b, 0) || math.IsNaN(a) || math.IsNaN(b) {
		return a == b || (math.IsNaN(a) && math.IsNaN(b))
	}
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// KeyedRand is a random source determined by key (its FNV-1a hash) and
// stream, so that a test case's data does not depend on the other cases.
func KeyedRand(key string, stream uint64) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(key))
	return rand.New(rand.NewPCG(h.Sum64(), stream))
}

// FillGrid fills vs with random multiples of 1/1024 in [-2, 2), which are
// exact in float32.
func FillGrid(r *rand.Rand, vs []float64) {
	for i := range vs {
		vs[i] = math.Floor((r.Float64()*4-2)*1024) / 1024
	}
}

// FieldDiff is how far one field of a gradient struct is from a
// reference: Worst is the largest |got - want| over its cells divided by
// Big, the largest |want| (+Inf for a NaN in got; Big is 0 when the
// reference is all zeros, and the comparison then checks nothing).
type FieldDiff struct {
	Name       string
	Worst, Big float64
}

// FieldDiffs compares got with want field by field, the two being the
// float32 cells of values of the struct type gt (whose fields are float32
// arrays) in memory order.
func FieldDiffs(gt reflect.Type, got, want []float32) []FieldDiff {
	var out []FieldDiff
	off := 0
	for i := range gt.NumField() {
		n := int(gt.Field(i).Type.Size() / 4)
		d := FieldDiff{Name: gt.Field(i).Name}
		for _, v := range want[off : off+n] {
			d.Big = max(d.Big, math.Abs(float64(v)))
		}
		for j := off; j < off+n; j++ {
			e := math.Abs(float64(got[j] - want[j]))
			if math.IsNaN(float64(got[j])) {
				e = math.Inf(1)
			}
			d.Worst = max(d.Worst, e/d.Big)
		}
		out = append(out, d)
		off += n
	}
	return out
}
