package cuda

import (
	"reflect"
	"strings"
	"testing"
)

// TestNVRTCOptions: a file without headers compiles with the
// architecture and C++17 only; a tensor-core file (its #include of mma.h)
// gets an --include-path per existing CUDA include directory
// (OCANNL_CUDA_INCLUDE, then CUDA_HOME, CUDA_PATH, /usr/local/cuda), and
// is refused on a device older than compute capability 8.0.
func TestNVRTCOptions(t *testing.T) {
	env := map[string]string{"OCANNL_CUDA_INCLUDE": "/x/inc:/gone", "CUDA_HOME": "/opt/cuda", "CUDA_PATH": "/opt/cuda"}
	getenv := func(k string) string { return env[k] }
	isDir := func(p string) bool { return p != "/gone" }
	base := []string{"--gpu-architecture=compute_90", "--std=c++17"}
	opts, err := nvrtcOptions([]byte("extern \"C\" __global__ void f() {}\n"), 9, 0, getenv, isDir)
	if err != nil || !reflect.DeepEqual(opts, base) {
		t.Errorf("plain file: %v, %v", opts, err)
	}
	tc := []byte("#ifndef OCANNL_EMULATION\n#include <mma.h>\n#endif\n  nvcuda::wmma::fragment<...> f;\n")
	opts, err = nvrtcOptions(tc, 9, 0, getenv, isDir)
	want := append(base, "--include-path=/x/inc", "--include-path=/opt/cuda/include", "--include-path=/usr/local/cuda/include")
	if err != nil || !reflect.DeepEqual(opts, want) {
		t.Errorf("tensor-core file: %v, %v; want %v", opts, err, want)
	}
	if _, err := nvrtcOptions(tc, 7, 5, getenv, isDir); err == nil || !strings.Contains(err.Error(), "compute capability 8.0 or later; this device has 7.5") {
		t.Errorf("on a 7.5 device: %v", err)
	}
	if h := includeHint(`ocannl_gen.cu(3): catastrophic error: cannot open source file "mma.h"`); !strings.Contains(h, "OCANNL_CUDA_INCLUDE") {
		t.Errorf("no hint for a missing header: %q", h)
	}
}
