package testutil

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ocannlgen/ocannlgen/inference"
)

func TestCompile(t *testing.T) {
	g := Compile(t, "\ninput a : 2,3 = range\ninput b : 3,4 = range\nlet c = a +* \"ij;jk=>ik\" b\n")
	if len(g.Ops) == 0 {
		t.Fatal("no operations")
	}
	for _, op := range g.Ops {
		if op.Proj == nil {
			t.Fatal("Compile did not derive projections")
		}
	}
}

func TestNamed(t *testing.T) {
	g := Compile(t, "input a : 2 = range\nlet y = a + a\n")
	for _, name := range []string{"a", "y"} {
		if id := Named(t, g, name); g.Tensors[id].Name != name {
			t.Errorf("Named(%s) = %d, which is %s", name, id, g.Tensors[id].Name)
		}
	}
	// A name bound twice gives its last binding.
	g = &inference.Graph{Named: []inference.NamedTensor{{Name: "x", Tensor: 1}, {Name: "z", Tensor: 2}, {Name: "x", Tensor: 3}}}
	if id := Named(t, g, "x"); id != 3 {
		t.Errorf("Named(x) = %d, want the last binding 3", id)
	}
}

func TestRepoRoot(t *testing.T) {
	root := RepoRoot(t)
	if _, err := os.Stat(filepath.Join(root, "internal", "testutil", "testutil.go")); err != nil {
		t.Fatalf("RepoRoot %s is not the repository root: %v", root, err)
	}
}

func TestCopyTree(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "copy")
	for name, data := range map[string]string{"a.txt": "A", "sub/b.txt": "B", "sub/skip.me": "S"} {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	CopyTree(t, src, dst, func(name string) bool { return name == "skip.me" })
	for name, want := range map[string]string{"a.txt": "A", "sub/b.txt": "B"} {
		if got, err := os.ReadFile(filepath.Join(dst, name)); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dst, "sub", "skip.me")); !os.IsNotExist(err) {
		t.Errorf("skipped file was copied (stat: %v)", err)
	}
}

func TestCloseRel(t *testing.T) {
	for _, c := range []struct {
		a, b, tol float64
		want      bool
	}{
		{1, 1 + 1e-7, 1e-6, true},
		{1, 1 + 1e-5, 1e-6, false},
		{1e6, 1e6 + 0.5, 1e-6, true}, // relative to the larger magnitude
		{0, 1e-7, 1e-6, true},        // absolute near zero
		{math.Inf(1), math.Inf(1), 1, true},
		{math.Inf(1), math.Inf(-1), 1, false},
		{math.NaN(), math.NaN(), 1, true},
		{math.NaN(), 0, 1, false},
	} {
		if got := CloseRel(c.a, c.b, c.tol); got != c.want {
			t.Errorf("CloseRel(%g, %g, %g) = %v, want %v", c.a, c.b, c.tol, got, c.want)
		}
	}
}

func TestKeyedRandAndFillGrid(t *testing.T) {
	a, b, c := make([]float64, 64), make([]float64, 64), make([]float64, 64)
	FillGrid(KeyedRand("k", 7), a)
	FillGrid(KeyedRand("k", 7), b)
	FillGrid(KeyedRand("other", 7), c)
	if !slices.Equal(a, b) {
		t.Error("the same key gives different values")
	}
	if slices.Equal(a, c) {
		t.Error("different keys give the same values")
	}
	for _, v := range a {
		if v < -2 || v >= 2 || v*1024 != math.Trunc(v*1024) || float64(float32(v)) != v {
			t.Fatalf("%g is not a float32-exact multiple of 1/1024 in [-2, 2)", v)
		}
	}
}

func TestWriteModuleGoCmd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	dir := WriteModule(t, map[string][]byte{"main.go": []byte("package main\n\nfunc main() { println(\"hi\") }\n")})
	out, err := GoCmd(t, dir, []string{"GOWORK=off", "GOFLAGS="}, "run", ".")
	if err != nil || out != "hi\n" {
		t.Fatalf("go run: %q, %v", out, err)
	}
}

func TestEndToEnd(t *testing.T) {
	for _, v := range []string{"", "0", "true", "1"} {
		t.Run("env="+v, func(t *testing.T) {
			t.Setenv(E2EEnv, v)
			if got, want := IsEndToEnd(), v == "1"; got != want {
				t.Errorf("IsEndToEnd() with %s=%q = %v, want %v", E2EEnv, v, got, want)
			}
			ran := make(chan bool, 1)
			// EndToEnd must skip exactly when IsEndToEnd is false: run it
			// in a subtest and see whether the subtest went on.
			t.Run("inner", func(t *testing.T) {
				EndToEnd(t)
				ran <- true
			})
			select {
			case <-ran:
				if v != "1" {
					t.Errorf("EndToEnd did not skip with %s=%q", E2EEnv, v)
				}
			default:
				if v == "1" {
					t.Errorf("EndToEnd skipped with %s=1", E2EEnv)
				}
			}
		})
	}
}
