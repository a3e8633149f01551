package cuda_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/cuda"
	"github.com/ocannlgen/ocannlgen/emit/desc"
	"github.com/ocannlgen/ocannlgen/emit/target"
	"github.com/ocannlgen/ocannlgen/internal/testutil"
	"github.com/ocannlgen/ocannlgen/pipeline"
	rtcuda "github.com/ocannlgen/ocannlgen/rt/cuda"
)

// gemmShape is one matrix product of the GEMM benchmarks
// (BenchmarkGPUGEMMShapes; docs/bench/torch_cuda_bench.py times cuBLAS on
// the same shapes and layouts): c[M,N] = sum over K of a and b, a and b
// laid out as Spec says (a's dims A, b's dims B, memory order).
type gemmShape struct {
	Name    string
	M, N, K int
	A, B    [2]int
	Spec    string
}

// gemmShapes are the 4096^3 product and the scale decoder's MLP layer
// 384 -> 1536 over its 1024 tokens (bench/models.GPT: weights stored
// [out][in]) in its three layouts: the forward x·wᵀ, the input gradient
// dy·w and the weight gradient dyᵀ·x.
var gemmShapes = []gemmShape{
	{"gemm4096", 4096, 4096, 4096, [2]int{4096, 4096}, [2]int{4096, 4096}, "ik;kj=>ij"},
	{"decoder_fwd", 1024, 1536, 384, [2]int{1024, 384}, [2]int{1536, 384}, "ik;jk=>ij"},
	{"decoder_dx", 1024, 384, 1536, [2]int{1024, 1536}, [2]int{1536, 384}, "ik;kj=>ij"},
	{"decoder_dw", 1536, 384, 1024, [2]int{1024, 1536}, [2]int{1024, 384}, "ki;kj=>ij"},
}

// shapeKernel is shape s as a float32 kernel named name with inputs a, b
// and output c.
func shapeKernel(t testing.TB, s gemmShape, name string) (*desc.Kernel, error) {
	g := testutil.Compile(t, fmt.Sprintf("input a : %d,%d\ninput b : %d,%d\nlet c = a +* %q b", s.A[0], s.A[1], s.B[0], s.B[1], s.Spec))
	res, err := pipeline.CompileGraph(g, pipeline.Options{})
	if err != nil {
		return nil, err
	}
	k := &desc.Kernel{Name: name, Elem: "float32", Prog: res.Loops}
	for _, name := range []string{"a", "b", "c"} {
		k.Params = append(k.Params, desc.Param{Name: name, Tensor: testutil.Named(t, g, name), Output: name == "c"})
	}
	return k, nil
}

// shapeSource is the CUDA file of shape s: its kernel "Gemm", in float32
// (prec "") or on tensor cores (prec "tf32" or "bf16", as
// //ocannl:cuda tf32|bf16 asks).
func shapeSource(t testing.TB, s gemmShape, prec string) ([]byte, error) {
	k, err := shapeKernel(t, s, "Gemm")
	if err != nil {
		return nil, err
	}
	tg := target.GPU()
	tg.Precision = prec
	return cuda.Render(&desc.File{Package: "gemm", Kernels: []*desc.Kernel{k}}, tg)
}

// shapeFile is the recorded file of shape name at precision prec:
// gemm_<name>.cu in float32, gemm_<name>_<prec>.cu on tensor cores.
func shapeFile(name, prec string) string {
	if prec == "" {
		return "gemm_" + name + ".cu"
	}
	return "gemm_" + name + "_" + prec + ".cu"
}

// TestGEMMShapes: every benchmark shape renders as a GEMM of the right
// size, and a scaled-down twin of each decoder layout (M, N, K divided by
// 16, at least 8, plus 3 for partial tiles; one file, one g++ build)
// matches the interpreter in the emulation.
func TestGEMMShapes(t *testing.T) {
	var ks []*desc.Kernel
	for _, s := range gemmShapes {
		src, err := shapeSource(t, s, "")
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("GEMM: C %dx%d += A * B over %d", s.M, s.N, s.K); !strings.Contains(string(src), want) {
			t.Errorf("%s: no %q in the CUDA file", s.Name, want)
		}
		if s.Name == "gemm4096" {
			continue // the decoder_dx layout, scaled down, covers it
		}
		small := s
		div := func(n int) int { return max(n/16, 8) + 3 }
		dims := map[byte]int{'i': div(s.M), 'j': div(s.N), 'k': div(s.K)}
		spec := strings.Split(strings.Split(s.Spec, "=>")[0], ";")
		small.A, small.B = [2]int{dims[spec[0][0]], dims[spec[0][1]]}, [2]int{dims[spec[1][0]], dims[spec[1][1]]}
		k, err := shapeKernel(t, small, "Gemm_"+s.Name)
		if err != nil {
			t.Fatal(err)
		}
		ks = append(ks, k)
	}
	src, err := cuda.Render(&desc.File{Package: "gemm", Kernels: ks}, target.GPU())
	if err != nil {
		t.Fatal(err)
	}
	ses, err := rtcuda.NewSession(startEmu(t, emuBuild(t, "gemmshapes", src)), src)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ks {
		checkKernel(t, ses, k, 7)
	}
}

// TestRecordGPUGEMMShapes writes every benchmark shape's file at every
// precision of gemmPrecisions (shapeFile) into the -gpucases directory
// (skipped without it).
func TestRecordGPUGEMMShapes(t *testing.T) {
	if *gpuCases == "" {
		t.Skip("no -gpucases directory")
	}
	if err := os.MkdirAll(*gpuCases, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, s := range gemmShapes {
		for _, prec := range gemmPrecisions {
			src, err := shapeSource(t, s, prec)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(*gpuCases, shapeFile(s.Name, prec)), src, 0o666); err != nil {
				t.Fatal(err)
			}
		}
	}
}
