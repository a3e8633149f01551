//go:build cuda

package cuda_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/internal/testutil"
	rtcuda "github.com/ocannlgen/ocannlgen/rt/cuda"
)

// TestShimEmulated runs the whole GPU path but the GPU: the cgo shim
// (rt/cuda built with -tags cuda) loads, through OCANNL_LIBCUDA and
// OCANNL_NVRTC, rt/cuda's fake driver (testdata/fakecuda.c, device memory
// in host memory) linked with the package's generated CUDA C compiled
// against the emulation header, whose launches therefore run; every kernel
// of moons and the gallery is compared with the interpreter.
func TestShimEmulated(t *testing.T) {
	for _, pkg := range []string{"examples/moons", "examples/gallery"} {
		t.Run(filepath.Base(pkg), func(t *testing.T) {
			res := generate(t, pkg)
			t.Setenv("OCANNL_LIBCUDA", fakeDriver(t, res.CUDAContent))
			t.Setenv("OCANNL_NVRTC", os.Getenv("OCANNL_LIBCUDA"))
			d, err := rtcuda.Open()
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			s, err := d.NewSession(res.CUDAContent)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if pkg == "examples/moons" {
				moonsOnEmulatedGPU(t)
			}
			for _, k := range res.Compiled {
				if work(k.Prog) > maxWork || k.RowBlock {
					continue // RowBlock: the Go methods' (not in the CUDA file)
				}
				checkKernel(t, s, k, 5)
			}
		})
	}
}

// moonsOnEmulatedGPU runs the two-moons demo with -gpu on the fake
// driver (OCANNL_LIBCUDA is set): it must say it trains on the GPU and
// reach the demo's accuracy.
func moonsOnEmulatedGPU(t *testing.T) {
	out, err := testutil.GoCmd(t, testutil.RepoRoot(t), []string{"OCANNL_LIBCUDA=" + os.Getenv("OCANNL_LIBCUDA"), "OCANNL_NVRTC=" + os.Getenv("OCANNL_NVRTC")},
		"run", "-tags", "cuda", "./examples/moons", "-gpu", "-png=", "-steps", "1200")
	if err != nil {
		t.Fatalf("moons -gpu: %v\n%s", err, out)
	}
	if !strings.Contains(out, "training on the GPU") || !strings.Contains(out, "held-out accuracy") {
		t.Fatalf("moons -gpu did not train on the (emulated) GPU:\n%s", out)
	}
	t.Logf("moons -gpu on the emulated driver: %s", out[strings.Index(out, "held-out accuracy"):][:30])
}

// TestShimDistCNN runs examples/distcnn with -gpu on the fake driver
// with its emulated kernels and rt/cuda's fake NCCL (testdata/fakenccl.c),
// in one process (one rank, dist.Local): Backward, SyncGrads through the
// NCCL shim, Update, every step on the (emulated) device; 20 steps (300
// reach 99.8%, in 2.5 minutes of emulation), then the parameters back on
// the host for the held-out accuracy.
func TestShimDistCNN(t *testing.T) {
	res := generate(t, "examples/distcnn")
	lib := fakeDriver(t, res.CUDAContent)
	nccl := filepath.Join(t.TempDir(), "libfakenccl.so")
	src, err := filepath.Abs(filepath.Join("..", "..", "rt", "cuda", "testdata", "fakenccl.c"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-shared", "-fPIC", "-o", nccl, src, "-lpthread").CombinedOutput(); err != nil {
		t.Fatalf("gcc fakenccl.c: %v\n%s", err, out)
	}
	out, err := testutil.GoCmd(t, testutil.RepoRoot(t), []string{"OCANNL_LIBCUDA=" + lib, "OCANNL_NVRTC=" + lib, "OCANNL_NCCL=" + nccl},
		"run", "-tags", "cuda", "./examples/distcnn", "-gpu", "-steps", "20", "-min-accuracy", "0")
	if err != nil {
		t.Fatalf("distcnn -gpu: %v\n%s", err, out)
	}
	if !strings.Contains(out, "training on the GPUs (NCCL)") {
		t.Fatalf("distcnn -gpu did not train on the (emulated) GPU:\n%s", out)
	}
	cpu, err := testutil.GoCmd(t, testutil.RepoRoot(t), nil, "run", "./examples/distcnn", "-steps", "20", "-min-accuracy", "0")
	if err != nil {
		t.Fatalf("distcnn: %v\n%s", err, cpu)
	}
	// The same 20 steps on the CPU classify the held-out glyphs alike (at
	// most 5 of 512 differing by rounding; measured: none).
	right := func(out string) int {
		m := regexp.MustCompile(`held-out accuracy: .* \((\d+)/512 glyphs\)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no held-out accuracy in\n%s", out)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	g, c := right(out), right(cpu)
	if g < c-5 || g > c+5 {
		t.Errorf("after 20 steps, %d held-out glyphs right on the emulated GPU, %d on the CPU", g, c)
	}
	t.Logf("after 20 steps: %d/512 held-out glyphs right on the emulated GPU, %d on the CPU", g, c)
}

// fakeDriver builds the fake driver with the emulated kernels of src.
func fakeDriver(t *testing.T, src []byte) string {
	t.Helper()
	gxx, err1 := exec.LookPath("g++")
	gcc, err2 := exec.LookPath("gcc")
	if err1 != nil || err2 != nil {
		t.Skip("no gcc and g++")
	}
	plan, err := rtcuda.ParsePlan(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	hdr, err := os.ReadFile(filepath.Join("testdata", "emu.h"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"emu.h": hdr, "ocannl_gen.cu": src, "launch.cpp": []byte(launchSource(plan))} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	fake, err := filepath.Abs(filepath.Join("..", "..", "rt", "cuda", "testdata", "fakecuda.c"))
	if err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(dir, "libfake.so")
	for _, c := range [][]string{
		{gcc, "-c", "-fPIC", "-DOCANNL_EMU", "-o", "fake.o", fake},
		{gxx, "-std=c++20", "-O1", "-fPIC", "-shared", "-w", "-o", lib, "launch.cpp", "fake.o"},
	} {
		cmd := exec.Command(c[0], c[1:]...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(c, " "), err, out)
		}
	}
	return lib
}

// launchSource is ocannl_emu_launch: cuLaunchKernel's arguments (pointers
// to the argument values) passed to the emulated function named fn.
func launchSource(plan *rtcuda.Plan) string {
	var b strings.Builder
	b.WriteString("#include \"emu.h\"\n#include \"ocannl_gen.cu\"\n\n")
	b.WriteString("extern \"C\" int ocannl_emu_launch(const char* fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, void** p) {\n")
	b.WriteString("  const std::string name(fn);\n  const dim3 grid{gx, gy, gz};\n")
	seen := map[string]bool{}
	for _, k := range plan.Kernels {
		ct := "float"
		if k.Elem == "float64" {
			ct = "double"
		}
		for _, l := range k.Launches {
			if seen[l.Func] {
				continue
			}
			seen[l.Func] = true
			args := make([]string, len(l.Args))
			for i := range l.Args {
				args[i] = fmt.Sprintf("*(%s**)p[%d]", ct, i)
			}
			fmt.Fprintf(&b, "  if (name == %q) { emu_launch(grid, bx, %v, [&] { %s(%s); }); return 0; }\n", l.Func, l.Sync, l.Func, strings.Join(args, ", "))
		}
	}
	for elem, fn := range plan.SGD {
		ct := "float"
		if elem == "float64" {
			ct = "double"
		}
		fmt.Fprintf(&b, "  if (name == %[1]q) { emu_launch(grid, bx, false, [&] { %[1]s(*(%[2]s**)p[0], *(%[2]s**)p[1], *(%[2]s**)p[2], *(%[2]s*)p[3], *(%[2]s*)p[4], *(%[2]s*)p[5], *(int*)p[6], *(int*)p[7]); }); return 0; }\n", fn, ct)
	}
	for _, f := range plan.OptimFuncs {
		ct := "float"
		if f.Elem == "float64" {
			ct = "double"
		}
		fmt.Fprintf(&b, "  if (name == %[1]q) { emu_launch(grid, bx, %[2]v, [&] { %[1]s(%[3]s); }); return 0; }\n", f.Func, f.Role == "sumsq" || f.Role == "clipnorm", optimArgs(f.Sig, func(i int, k byte) string {
			return map[byte]string{'P': fmt.Sprintf("*(%s**)p[%d]", ct, i), 'D': fmt.Sprintf("*(double**)p[%d]", i), 's': fmt.Sprintf("*(%s*)p[%d]", ct, i),
				'd': fmt.Sprintf("*(double*)p[%d]", i), 'i': fmt.Sprintf("*(int*)p[%d]", i)}[k]
		}))
	}
	b.WriteString("  return 500;  // CUDA_ERROR_NOT_FOUND\n}\n")
	return b.String()
}
