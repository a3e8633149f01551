package gen

import (
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/emit/cuda"
)

// hostPackages lists, for every package of the testdata/host module, the
// exact errors (relative to the module root) Generate reports on every
// platform: directives in test files and in files with build constraints,
// and sizes named by constants that files with build constraints declare.
var hostPackages = map[string][]string{
	// Every //ocannl: line of a test file (of the package or of its
	// external test package) is an error; a near miss gets the message
	// it gets in any other file, with the same addition.
	"intest": {
		"intest/k_test.go:7:10: //ocannl:expr in a test file: directives in _test.go files are not read (ocannlgen does not load tests); move it to a non-test .go file of the package",
		`intest/k_test.go:10:4: malformed ocannl directive "// ocannl:expr x": write //ocannl:expr x (no space or '+' before ocannl, no space before ':', lowercase); besides, directives in _test.go files are not read (ocannlgen does not load tests); move it to a non-test .go file of the package`,
		"intest/x_test.go:3:4: ocannl directives must be line comments written //ocannl:VERB ARGS, not /* */ comments; besides, directives in _test.go files are not read (ocannlgen does not load tests); move it to a non-test .go file of the package",
		"intest/x_test.go:5:10: //ocannl:cuda in a test file: directives in _test.go files are not read (ocannlgen does not load tests); move it to a non-test .go file of the package",
	},
	// Whether or not this platform builds the file.
	"osdirective": {
		`osdirective/k_arm64.go:3:4: malformed ocannl directive "// OCANNL:expr x": write //ocannl:expr x (no space or '+' before ocannl, no space before ':', lowercase); besides, directives are read only from files without build constraints, and this file has one (the _arm64 suffix of its name); move it to a file every platform builds (no //go:build line, no _GOOS or _GOARCH suffix), so that the generated code does not depend on the platform`,
		"osdirective/k_linux.go:5:10: //ocannl:expr in a file with build constraints (the _linux suffix of its name): directives are read only from files without build constraints; move it to a file every platform builds (no //go:build line, no _GOOS or _GOARCH suffix), so that the generated code does not depend on the platform",
		"osdirective/k_other.go:7:10: //ocannl:expr in a file with build constraints (a //go:build line): directives are read only from files without build constraints; move it to a file every platform builds (no //go:build line, no _GOOS or _GOARCH suffix), so that the generated code does not depend on the platform",
	},
	// Width is 4 on Linux and 8 elsewhere: no size may depend on it, named
	// in a directive or in a parameter's type, directly or through
	// another constant.
	"osconst": {
		"osconst/k.go:14:17: //ocannl:dims: i=Width: Width is declared in a file with build constraints: its value may differ between platforms, and the generated code must not; declare Width in a file without build constraints",
		"osconst/k.go:20:13: parameter x: its type depends on Width, which is declared in a file with build constraints: its value may differ between platforms, and the generated code must not; declare Width in a file without build constraints",
		"osconst/k.go:20:32: parameter out: its type depends on Width, which is declared in a file with build constraints: its value may differ between platforms, and the generated code must not; declare Width in a file without build constraints",
		"osconst/k.go:24:18: //ocannl:shape x: Width is declared in a file with build constraints: its value may differ between platforms, and the generated code must not; declare Width in a file without build constraints",
		"osconst/k.go:32:20: the size Twice in the shape of x: Twice depends on Width, which is declared in a file with build constraints: its value may differ between platforms, and the generated code must not; declare Width in a file without build constraints",
	},
}

// platformRun is what Generate produced for the host module on one
// platform: each package's generated files, and the errors.
type platformRun struct {
	files map[string]string // package path + "/" + file name -> content
	errs  []string
}

// generateFor generates the host module (check mode: nothing is
// written) as the go command sees it for goos/goarch.
func generateFor(t *testing.T, dir, goos, goarch string) platformRun {
	t.Helper()
	env := append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
	env = append(env, goEnv...)
	res, err := Generate([]string{"./..."}, Options{Dir: dir, Check: true, Env: env})
	run := platformRun{files: map[string]string{}, errs: errorLines(err, dir)}
	if err != nil && run.errs == nil {
		t.Fatalf("%s/%s: %v", goos, goarch, err)
	}
	for _, r := range res {
		run.files[r.PkgPath+"/"+OutputFile] = string(r.Content)
		for name, b := range r.Asm {
			run.files[r.PkgPath+"/"+name] = string(b)
		}
		if r.CUDAContent != nil {
			run.files[r.PkgPath+"/"+cuda.OutputFile] = string(r.CUDAContent)
		}
	}
	return run
}

// TestPlatformIndependent generates the testdata/host module as linux,
// windows, darwin and 386 would: the generated files and the errors are
// byte-identical, osfiles (whose per-OS files declare other things than
// directives) is generated, and the other packages have their exact
// errors.
func TestPlatformIndependent(t *testing.T) {
	t.Parallel()
	dir := copyModule(t, "host")
	var want []string
	for _, pkg := range []string{"intest", "osconst", "osdirective"} {
		want = append(want, hostPackages[pkg]...)
	}
	var first platformRun
	for i, pl := range [][2]string{{"linux", "amd64"}, {"windows", "amd64"}, {"darwin", "arm64"}, {"linux", "386"}} {
		run := generateFor(t, dir, pl[0], pl[1])
		if !slices.Equal(run.errs, want) {
			t.Errorf("%s/%s: errors:\n%s\nwant:\n%s", pl[0], pl[1], strings.Join(run.errs, "\n"), strings.Join(want, "\n"))
		}
		if got := run.files["example.com/host/osfiles/"+OutputFile]; !strings.Contains(got, "// Sources: k.go\n") || !strings.Contains(got, "func ocannlDouble(") {
			t.Errorf("%s/%s: osfiles generated:\n%s", pl[0], pl[1], got)
		}
		if len(run.files) != 1 {
			t.Errorf("%s/%s: generated %d files, want osfiles's only", pl[0], pl[1], len(run.files))
		}
		if i == 0 {
			first = run
			continue
		}
		for name, content := range first.files {
			if run.files[name] != content {
				t.Errorf("%s/%s: %s differs from linux/amd64's", pl[0], pl[1], name)
			}
		}
	}
}

// TestSymlinkedOutput: a generated file (ocannl_gen.go, its test, an
// assembly file, ocannl_gen.cu) that is a symbolic link is never written
// through, removed or read as the package's: generation and -check
// report it at the link, and the link and its target stay as they were,
// also when the file would be removed (no annotated function left, no
// assembly kernel, no //ocannl:cuda).
func TestSymlinkedOutput(t *testing.T) {
	t.Parallel()
	// What the link points to would not compile in the package: the
	// loader must not read it either (the link is the only error).
	generated := "// Code generated by ocannlgen. DO NOT EDIT.\n\npackage good\n\nfunc MatMul() {}\n"
	for _, c := range []struct {
		name, file string
		// empty removes every annotated function of the package first.
		empty bool
	}{
		{"output", OutputFile, false},
		{"test", TestFile, false},
		{"assembly", asm.AsmFile, false},
		{"cuda", cuda.OutputFile, false},
		{"removed output", OutputFile, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := copyFixture(t)
			pkg := filepath.Join(dir, "good")
			if c.empty {
				entries, err := os.ReadDir(pkg)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range entries {
					if !strings.HasSuffix(e.Name(), "_test.go") {
						os.Remove(filepath.Join(pkg, e.Name()))
					}
				}
				if err := os.WriteFile(filepath.Join(pkg, "doc.go"), []byte("// Package good has nothing annotated.\npackage good\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				os.Remove(filepath.Join(pkg, "good_test.go"))
			}
			target := filepath.Join(t.TempDir(), "elsewhere.go")
			if err := os.WriteFile(target, []byte(generated), 0o644); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(pkg, c.file)
			if err := os.Symlink(target, link); err != nil {
				t.Skipf("no symbolic links here: %v", err)
			}
			want := fmt.Sprintf("good/%s: %s is a symbolic link (to %s); ocannlgen never writes through a link or outside the package directory: delete the link (the file is generated) or make it a regular file", c.file, c.file, target)
			for _, check := range []bool{true, false} {
				res, err := Generate([]string{"./good"}, Options{Dir: dir, Check: check})
				if got := errorLines(err, dir); !slices.Equal(got, []string{want}) {
					t.Errorf("check %v: errors:\n%s\nwant:\n%s", check, strings.Join(got, "\n"), want)
				}
				for _, r := range res {
					t.Errorf("check %v: %s: %v", check, r.PkgPath, r.Status)
				}
				if b, err := os.ReadFile(target); err != nil || string(b) != generated {
					t.Fatalf("check %v: the link's target was changed: %q, %v", check, b, err)
				}
				if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
					t.Fatalf("check %v: the link was replaced or removed: %v", check, err)
				}
				if _, err := os.Stat(filepath.Join(pkg, OutputFile)); c.file != OutputFile && !errors.Is(err, os.ErrNotExist) {
					t.Errorf("check %v: %s was written beside the link", check, OutputFile)
				}
			}
		})
	}
}

// TestForeignCUDAFile: a hand-written ocannl_gen.cu is never overwritten,
// also when the package opts in to CUDA (it was, before the first pass
// checked it like the Go files).
func TestForeignCUDAFile(t *testing.T) {
	t.Parallel()
	dir := copyFixture(t)
	if err := os.WriteFile(filepath.Join(dir, "good", "cuda.go"), []byte("package good\n\n//ocannl:cuda\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cu := filepath.Join(dir, "good", cuda.OutputFile)
	mine := "// Mine is hand-written CUDA C.\n"
	if err := os.WriteFile(cu, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Generate([]string{"./good"}, Options{Dir: dir})
	want := "good/" + cuda.OutputFile + ":1:1: " + cuda.OutputFile +
		` exists but was not generated by ocannlgen (no "// Code generated by ocannlgen ... DO NOT EDIT." line); rename it or delete it`
	if got := errorLines(err, dir); !slices.Equal(got, []string{want}) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
	for _, r := range res {
		t.Errorf("%s: %v", r.PkgPath, r.Status)
	}
	if b, _ := os.ReadFile(cu); string(b) != mine {
		t.Fatal("the hand-written file was modified")
	}
}

// TestNameConstraint: the GOOS and GOARCH file-name suffixes the go
// command honors, and names that only look like them.
func TestNameConstraint(t *testing.T) {
	for name, want := range map[string]string{
		"k.go": "", "linux.go": "", "k_other.go": "", "k_unix.go": "", "k_test.go": "", "kernel_gen.go": "",
		"k_linux.go": "_linux", "k_windows_test.go": "_windows", "k_arm64.go": "_arm64", "k_darwin_arm64.go": "_darwin_arm64",
		"my_file_js.go": "_js", "k_wasm.go": "_wasm", "k_ios.go": "_ios", "k_android_test.go": "_android",
	} {
		if got := nameConstraint(name); got != want {
			t.Errorf("nameConstraint(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestConstraintOf: what makes a file build on some platforms only.
func TestConstraintOf(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"k.go", "// Package k.\npackage k\n\n//go:build linux\nfunc f() {}\n", ""}, // not in the header
		{"k.go", "//go:build linux\n\npackage k\n", "a //go:build line"},
		{"k.go", "// +build linux\n\npackage k\n", "a // +build line"},
		{"k.go", "// Copyright.\n\n//go:build !windows\n\n// Package k.\npackage k\n", "a //go:build line"},
		{"k.go", "package k\n\nimport \"C\"\n", `an import of "C" (cgo)`},
		{"k_linux.go", "//go:build amd64\n\npackage k\n", "the _linux suffix of its name"},
	} {
		f, err := parser.ParseFile(token.NewFileSet(), c.name, c.src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if got := constraintOf(c.name, f); got != c.want {
			t.Errorf("constraintOf(%q, %q) = %q, want %q", c.name, c.src, got, c.want)
		}
	}
}
