package gen

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/cuda"
)

// TestCUDAOptIn: //ocannl:cuda makes the package's generation also write
// ocannl_gen.cu (the same kernels, with a launch plan), leaves
// ocannl_gen.go byte-identical (ocannl_gen_test.go's directive hash
// changes), is reported by check mode when stale or
// missing, and removing the directive removes the file.
func TestCUDAOptIn(t *testing.T) {
	t.Parallel()
	dir := copyFixture(t)
	r0 := generate(t, dir, false, "./good")[0]
	if r0.CUDAFile != "" || r0.CUDAContent != nil {
		t.Fatalf("without the directive: CUDA file %q", r0.CUDAFile)
	}
	extra := filepath.Join(dir, "good", "cuda.go")
	if err := os.WriteFile(extra, []byte("package good\n\n//ocannl:cuda\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if r := generate(t, dir, true, "./good")[0]; r.CUDAStatus != Missing {
		t.Fatalf("check before writing: status %v, want missing", r.CUDAStatus)
	}
	r1 := generate(t, dir, false, "./good")[0]
	cu := filepath.Join(dir, "good", cuda.OutputFile)
	// The Go files' status is Written: the new directive line changes the
	// hash in ocannl_gen_test.go; ocannl_gen.go itself stays (below).
	if r1.CUDAFile != cu || r1.CUDAStatus != Written || r1.Status != Written {
		t.Fatalf("with the directive: %s %v, Go files %v; want %s written, Go files written (the test's hash)", r1.CUDAFile, r1.CUDAStatus, r1.Status, cu)
	}
	if !bytes.Equal(r1.Content, r0.Content) {
		t.Fatal("the directive changed ocannl_gen.go")
	}
	b, err := os.ReadFile(cu)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range goodKernels {
		if !bytes.Contains(b, []byte("// @ocannl kernel "+k+" ")) {
			t.Errorf("%s has no plan for %s", cuda.OutputFile, k)
		}
	}
	if !isGenerated(b) {
		t.Errorf("%s lacks the generated-code header", cuda.OutputFile)
	}
	if r := generate(t, dir, true, "./good")[0]; r.CUDAStatus != Unchanged {
		t.Fatalf("check after writing: %v", r.CUDAStatus)
	}
	if err := os.WriteFile(cu, append(b, "// edited\n"...), 0o666); err != nil {
		t.Fatal(err)
	}
	if r := generate(t, dir, true, "./good")[0]; r.CUDAStatus != Stale {
		t.Fatalf("check after an edit: %v, want out of date", r.CUDAStatus)
	}
	if err := os.Remove(extra); err != nil {
		t.Fatal(err)
	}
	if r := generate(t, dir, true, "./good")[0]; r.CUDAStatus != Unneeded {
		t.Fatalf("check without the directive: %v, want unneeded", r.CUDAStatus)
	}
	if r := generate(t, dir, false, "./good")[0]; r.CUDAStatus != Removed {
		t.Fatalf("generate without the directive: %v, want removed", r.CUDAStatus)
	}
	if _, err := os.Stat(cu); !os.IsNotExist(err) {
		t.Fatalf("%s still exists: %v", cu, err)
	}
}

// TestCUDADirectiveErrors: a misused //ocannl:cuda is a positioned error.
func TestCUDADirectiveErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, src, want string }{
		{"args", "package good\n\n//ocannl:cuda fast\n", `cuda.go:3:15: //ocannl:cuda takes no argument or a tensor-core precision, tf32 or bf16, not "fast"`},
		{"case", "package good\n\n//ocannl:cuda TF32\n", `cuda.go:3:15: //ocannl:cuda takes no argument or a tensor-core precision, tf32 or bf16, not "TF32"`},
		{"two", "package good\n\n//ocannl:cuda tf32 bf16\n", `cuda.go:3:15: //ocannl:cuda takes no argument or a tensor-core precision, tf32 or bf16, not "tf32 bf16"`},
		{"doc", "package good\n\n//ocannl:cuda\nfunc F() {}\n", "cuda.go:3:10: //ocannl:cuda is a package directive"},
		{"twice", "package good\n\n//ocannl:cuda\n\n//ocannl:cuda\n", "cuda.go:5:10: a second //ocannl:cuda in the package (the first is at line 3)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyFixture(t)
			if err := os.WriteFile(filepath.Join(dir, "good", "cuda.go"), []byte(c.src), 0o666); err != nil {
				t.Fatal(err)
			}
			_, err := Generate([]string{"./good"}, Options{Dir: dir, Check: true})
			if err == nil || !strings.Contains(strings.Join(errorLines(err, dir), "\n"), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// TestCUDAPrecision: //ocannl:cuda tf32 (or bf16) puts the package's
// float32 matmul-class nests on tensor cores at that precision; the
// other kernels and ocannl_gen.go are unchanged.
func TestCUDAPrecision(t *testing.T) {
	t.Parallel()
	dir := copyFixture(t)
	const big = "\n// Big multiplies a by b.\n//\n//ocannl:einsum \"i,j; j,k => i,k\"\nfunc Big(a *[16][24]float32, b *[24][20]float32, out *[16][20]float32) { ocannlBig(a, b, out) }\n"
	var plain []byte
	for _, c := range []struct{ arg, want string }{
		{"", "Tiled GEMM: C 16x20"},
		{" tf32", "Tensor-core GEMM (tf32, float32 accumulation): C 16x20"},
		{" bf16", "Tensor-core GEMM (bf16, float32 accumulation): C 16x20"},
	} {
		if err := os.WriteFile(filepath.Join(dir, "good", "cuda.go"), []byte("package good\n\n//ocannl:cuda"+c.arg+"\n"+big), 0o666); err != nil {
			t.Fatal(err)
		}
		res, err := Generate([]string{"./good"}, Options{Dir: dir, Check: true})
		if err != nil {
			t.Fatalf("//ocannl:cuda%s: %v", c.arg, err)
		}
		cu := string(res[0].CUDAContent)
		if !strings.Contains(cu, c.want) {
			t.Errorf("//ocannl:cuda%s: the file lacks %q:\n%s", c.arg, c.want, cu)
		}
		if c.arg == "" {
			plain = res[0].Content
		} else if !bytes.Equal(res[0].Content, plain) {
			t.Errorf("//ocannl:cuda%s changed ocannl_gen.go", c.arg)
		}
	}
}
