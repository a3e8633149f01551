package cuda

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// nvrtcOptions returns the NVRTC options compiling src for a device of
// compute capability major.minor: the architecture and C++17 and, when
// src includes headers (a package with //ocannl:cuda tf32 or bf16
// includes <mma.h> and <cuda_bf16.h>), an --include-path for every CUDA
// include directory that exists among OCANNL_CUDA_INCLUDE (a list of
// directories separated like PATH), $CUDA_HOME/include,
// $CUDA_PATH/include and /usr/local/cuda/include, in that order. (NVRTC
// also has built-in copies of some CUDA headers; the include directory
// of the installed toolkit, which matches the driver's NVRTC, is
// preferred.) Tensor-core kernels need compute capability 8.0 (tf32 and
// bf16 WMMA): on an older device it is an error naming the device's.
func nvrtcOptions(src []byte, major, minor int, getenv func(string) string, isDir func(string) bool) ([]string, error) {
	opts := []string{fmt.Sprintf("--gpu-architecture=compute_%d%d", major, minor), "--std=c++17"}
	if !bytes.Contains(src, []byte("#include")) {
		return opts, nil
	}
	if bytes.Contains(src, []byte("nvcuda::wmma")) && major < 8 {
		return nil, fmt.Errorf("cuda: the file runs matmuls on tensor cores (//ocannl:cuda tf32 or bf16), which needs compute capability 8.0 or later; this device has %d.%d (generate without the precision)", major, minor)
	}
	var dirs []string
	if v := getenv("OCANNL_CUDA_INCLUDE"); v != "" {
		dirs = append(dirs, filepath.SplitList(v)...)
	}
	for _, env := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if v := getenv(env); v != "" {
			dirs = append(dirs, filepath.Join(v, "include"))
		}
	}
	dirs = append(dirs, "/usr/local/cuda/include")
	seen := map[string]bool{}
	for _, d := range dirs {
		if d != "" && !seen[d] && isDir(d) {
			seen[d] = true
			opts = append(opts, "--include-path="+d)
		}
	}
	return opts, nil
}

// includeHint explains a compilation log that could not find a header.
func includeHint(log string) string {
	if !strings.Contains(log, "cannot open source file") {
		return ""
	}
	return "\n(the generated file includes CUDA headers for tensor cores: set OCANNL_CUDA_INCLUDE or CUDA_HOME to the CUDA toolkit, whose include directory holds mma.h and cuda_bf16.h)"
}

// osIsDir reports whether path is a directory.
func osIsDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
