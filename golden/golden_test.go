// Package golden holds golden tests of ocannlgen's generated code and
// error messages, and the check that every generated file committed in
// the repository is up to date. Run `go test ./golden -update` to rewrite
// the golden files after an intended change.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/gen"
	"github.com/ocannlgen/ocannlgen/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// compareGolden compares got with testdata/name, or rewrites it with -update.
func compareGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./golden -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file (run go test ./golden -update if the change is intended)\n%s",
			name, firstDiff(string(want), string(got)))
	}
}

// firstDiff shows the first differing line.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + itoa(i+1) + ":\n  want: " + a + "\n  got:  " + b
		}
	}
	return ""
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

// TestGalleryGolden pins the generated code of the kernel gallery: its
// ocannl_gen.go and its ocannl_gen.cu.
func TestGalleryGolden(t *testing.T) {
	res, err := gen.Generate([]string{"./examples/gallery"}, gen.Options{Dir: testutil.RepoRoot(t), Check: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || len(res[0].Content) == 0 {
		t.Fatalf("want the gallery's generated file, got %+v", res)
	}
	if len(res[0].Kernels) < 25 {
		t.Fatalf("only %d gallery kernels", len(res[0].Kernels))
	}
	compareGolden(t, "gallery.golden", res[0].Content)
	if len(res[0].Asm[asm.AsmFile]) == 0 {
		t.Fatalf("the gallery has no assembly kernels")
	}
	compareGolden(t, "gallery_amd64.s.golden", res[0].Asm[asm.AsmFile])
	if res[0].CUDAContent == nil {
		t.Fatal("the gallery opts in to CUDA (//ocannl:cuda) but generated no CUDA file")
	}
	compareGolden(t, "gallery_cuda.golden", res[0].CUDAContent)
}

// TestBadPackages pins the file:line:col error of each bad package: a
// shape error (naming the spec label), a spec syntax error, an unknown
// directive verb, a near-miss directive, model errors, a misplaced model
// block, colliding entry methods, '?' as an entry's batch size, an
// undeclared constant as a size, '->' for '=>' in a spec, a misspelled
// layer, inputs with different batch sizes, a convolution applied to
// flat images, flatten of a tensor with no output axes, a directive in
// a test file and one in a file only Linux builds, an index input with
// bound 0 or written as the batch row, an index input used as floats,
// embedding applied to floats, a gather with two gathered labels, a
// dropout probability outside [0, 1), and batch_norm of a tensor with no channel (output) axis each
// yield one error naming the problem.
func TestBadPackages(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("testdata", "bad"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"shape", "spec", "verb", "nearmiss", "hidden", "disagree", "modelsyntax", "misplaced", "collide", "batchq", "constsize", "arrow", "layername", "batchmix", "reserved", "conv2dflat", "flattenempty", "testfile", "buildtag", "indexzero", "indexpos", "indexfloat", "embedfloat", "gatherspec", "dropoutp", "bnchannel"} {
		t.Run(pkg, func(t *testing.T) {
			_, err := gen.Generate([]string{"./" + pkg}, gen.Options{Dir: dir, Check: true})
			list, ok := err.(gen.ErrorList)
			if !ok {
				t.Fatalf("want an ErrorList, got %v (%T)", err, err)
			}
			if len(list) != 1 {
				t.Errorf("want exactly one error, got %d:\n%v", len(list), list)
			}
			var lines []string
			for _, e := range list {
				lines = append(lines, e.Rel(dir))
			}
			compareGolden(t, filepath.Join("bad", pkg+".golden"), []byte(strings.Join(lines, "\n")+"\n"))
		})
	}
}

// TestBadBF16Packages pins the errors of kernels over rt.BF16 arrays: an
// rt.BF16 operand mixed with a float32 one, an rt.BF16 output, and rt.BF16
// operands in a kernel that is not an //ocannl:einsum. Their sources are
// in golden/testdata/bf16bad, inside this module (they import rt), their
// goldens in golden/testdata/bad with the others.
func TestBadBF16Packages(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"bf16mixed", "bf16out", "bf16verb"} {
		t.Run(pkg, func(t *testing.T) {
			_, err := gen.Generate([]string{"./golden/testdata/bf16bad/" + pkg}, gen.Options{Dir: root, Check: true})
			list, ok := err.(gen.ErrorList)
			if !ok {
				t.Fatalf("want an ErrorList, got %v (%T)", err, err)
			}
			if len(list) != 1 {
				t.Errorf("want exactly one error, got %d:\n%v", len(list), list)
			}
			var lines []string
			for _, e := range list {
				lines = append(lines, e.Rel(root))
			}
			compareGolden(t, filepath.Join("bad", pkg+".golden"), []byte(strings.Join(lines, "\n")+"\n"))
		})
	}
}

// upToDateQuick is the packages TestGeneratedFilesUpToDate checks
// without the end-to-end checks (OCANNLGEN_E2E=1 and CI's ocannlgen
// -check ./... check every package): a model with a CUDA file, the
// optimizers' and loaders' models, and one kernel of each assembly
// family (regenerating the whole repository takes 10 s of CPU).
var upToDateQuick = []string{"./examples/moons", "./internal/loadcheck", "./internal/tiers"}

// TestGeneratedFilesUpToDate regenerates, in memory, every package of the
// repository that has annotated functions and fails when a committed
// ocannl_gen.go is missing, stale or no longer needed (like
// cmd/compile's TestGeneratedFilesUpToDate), and likewise for the CUDA
// files (ocannl_gen.cu): what `ocannlgen -check ./...` reports. Without
// OCANNLGEN_E2E=1 it regenerates only upToDateQuick.
func TestGeneratedFilesUpToDate(t *testing.T) {
	patterns := []string{"./..."}
	if !testutil.IsEndToEnd() {
		patterns = upToDateQuick
	}
	res, err := gen.Generate(patterns, gen.Options{Dir: testutil.RepoRoot(t), Check: true})
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, r := range res {
		if len(r.Kernels) > 0 {
			found++
		}
		if r.Status.OutOfDate() {
			t.Errorf("%s: generated file %s is %s; run go generate ./...", r.PkgPath, r.File, r.Status)
		}
		if r.CUDAStatus.OutOfDate() {
			t.Errorf("%s: generated file %s is %s; run go generate ./...", r.PkgPath, r.CUDAFile, r.CUDAStatus)
		}
	}
	if found == 0 {
		t.Fatal("no package with annotated functions found; the check would pass vacuously")
	}
	if !testutil.IsEndToEnd() && found != len(upToDateQuick) {
		t.Errorf("%d of the %d packages of upToDateQuick have annotated functions", found, len(upToDateQuick))
	}
}

// TestGoGenerateErrorPaths pins the file names of errors as
// `go generate ./...` prints them: the go command runs ocannlgen in each
// package's directory with GOFILE and GOPACKAGE set, and two packages
// each have a k.go; the paths are relative to the module root
// (testdata/bad), so they name different files.
func TestGoGenerateErrorPaths(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("testdata", "bad"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, pkg := range []string{"a", "b"} {
		dir := filepath.Join(root, "twok", pkg)
		env := map[string]string{"GOFILE": "k.go", "GOPACKAGE": pkg}
		base := gen.ErrorBase(dir, func(k string) string { return env[k] })
		if base != root {
			t.Fatalf("error base under go generate in %s: got %q, want the module root %q", dir, base, root)
		}
		_, err := gen.Generate(nil, gen.Options{Dir: dir, Check: true})
		list, ok := err.(gen.ErrorList)
		if !ok || len(list) != 1 {
			t.Fatalf("package %s: want one error, got %v", pkg, err)
		}
		lines = append(lines, list[0].Rel(base))
	}
	// Run directly (no GOFILE), paths stay relative to the working directory.
	if base := gen.ErrorBase(root, func(string) string { return "" }); base != root {
		t.Errorf("error base outside go generate: got %q, want the working directory %q", base, root)
	}
	compareGolden(t, filepath.Join("bad", "twok.golden"), []byte(strings.Join(lines, "\n")+"\n"))
}
