//go:build cuda

package cuda

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestShimWithFakeDriver runs the cgo shim against testdata/fakecuda.c
// built as libcuda.so.1 and libnvrtc.so (OCANNL_LIBCUDA, OCANNL_NVRTC):
// Open, NVRTC compilation (its failure reported with the log), device
// memory through the real copies, a driver error named with its call,
// Close; and a missing driver named by Open.
func TestShimWithFakeDriver(t *testing.T) {
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc")
	}
	dir := t.TempDir()
	lib := filepath.Join(dir, "libfakecuda.so")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", lib, filepath.Join("testdata", "fakecuda.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	t.Setenv("OCANNL_LIBCUDA", filepath.Join(dir, "missing.so"))
	if _, err := Open(); err == nil || !strings.Contains(err.Error(), "loading the CUDA driver") {
		t.Fatalf("Open without a driver: %v", err)
	}
	t.Setenv("OCANNL_LIBCUDA", lib)
	t.Setenv("OCANNL_NVRTC", lib)
	d, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.NewSession([]byte(src + "#error no\n")); err == nil || !strings.Contains(err.Error(), "nvrtcCompileProgram: NVRTC_ERROR_COMPILATION") || !strings.Contains(err.Error(), "#error directive") {
		t.Fatalf("a source that does not compile: %v", err)
	}
	s, err := d.NewSession([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{0.5, -1, 2}
	if err := s.Upload("pw", "float32", want); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 3)
	if err := s.Download("pw", got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("device round trip: %v, want %v", got, want)
	}
	err = s.Run("K", map[string]any{"x": make([]float32, 6), "out": make([]float32, 2)})
	if err == nil || err.Error() != "cuda: cuLaunchKernel(K_op0_0): CUDA_ERROR_ILLEGAL_ADDRESS (700)" {
		t.Fatalf("a failing launch: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.NewSession([]byte(src)); err == nil {
		t.Fatal("NewSession on a closed device")
	}
}
