//go:build cuda

package cuda_test

import (
	"encoding/gob"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/internal/testutil"
	rtcuda "github.com/ocannlgen/ocannlgen/rt/cuda"
)

// The GPU tests run on a machine with an NVIDIA GPU, the driver and NVRTC,
// from a test binary built elsewhere with -tags cuda, on the cases
// TestRecordGPUCases recorded (-gpucases DIR). Without the flag they
// skip; with it, a failure to open the GPU is a failure.

func openGPU(t testing.TB) *rtcuda.Device {
	t.Helper()
	if *gpuCases == "" {
		t.Skip("no -gpucases directory")
	}
	d, err := rtcuda.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func readCases(t testing.TB, name string) *caseFile {
	t.Helper()
	f, err := os.Open(filepath.Join(*gpuCases, name+".gob"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cf caseFile
	if err := gob.NewDecoder(f).Decode(&cf); err != nil {
		t.Fatal(err)
	}
	return &cf
}

func gpuSession(t testing.TB, d *rtcuda.Device, src []byte) *rtcuda.Session {
	t.Helper()
	s, err := d.NewSession(src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// TestGPUKernelsMatchInterpreter runs every recorded kernel (the
// gallery's; the demos' entries and backward kernels; TestTunedGEMMs's
// tuned, split-K and tensor-core kernels) on the GPU and compares with
// the interpreter's recorded outputs.
func TestGPUKernelsMatchInterpreter(t *testing.T) {
	d := openGPU(t)
	for _, pkg := range append(emuPackages, tunedCases) {
		t.Run(filepath.Base(pkg), func(t *testing.T) {
			cf := readCases(t, filepath.Base(pkg))
			s := gpuSession(t, d, cf.Source)
			for _, c := range cf.Cases {
				io := c.io()
				if err := s.Run(c.Kernel, io); err != nil {
					t.Fatalf("%s: %v", c.Kernel, err)
				}
				for n, want := range c.Outputs {
					compare(t, c.Kernel+"."+n, io[n].([]float64), want, c.Tol)
				}
			}
		})
	}
}

// TestGPUSplitKDeterministic runs the recorded split-K kernels twice on
// the same inputs: the outputs must be the same bits.
func TestGPUSplitKDeterministic(t *testing.T) {
	d := openGPU(t)
	cf := readCases(t, tunedCases)
	s := gpuSession(t, d, cf.Source)
	n := 0
	for _, c := range cf.Cases {
		if !strings.Contains(c.Kernel, "Split") {
			continue
		}
		n++
		var runs [2][]float64
		for i := range runs {
			io := c.io()
			if err := s.Run(c.Kernel, io); err != nil {
				t.Fatal(err)
			}
			runs[i] = io["c"].([]float64)
		}
		for i := range runs[0] {
			if math.Float64bits(runs[0][i]) != math.Float64bits(runs[1][i]) {
				t.Fatalf("%s: cell %d differs between two runs: %v, %v", c.Kernel, i, runs[0][i], runs[1][i])
			}
		}
	}
	if n == 0 {
		t.Fatal("no split-K kernel in the recorded cases")
	}
}

// BenchmarkGPUGEMM times the generated 4096^3 GEMM (a, b and c resident:
// a run is c's zeroing and the GEMM launch) in float32 (f32, to compare
// with cuBLAS with TF32 off) and on tensor cores (tf32, bf16: operands
// rounded to that precision, float32 accumulation), and reports GFLOP/s.
func BenchmarkGPUGEMM(b *testing.B) {
	d := openGPU(b)
	for _, prec := range gemmPrecisions {
		name := prec
		if name == "" {
			name = "f32"
		}
		b.Run(name, func(b *testing.B) {
			timeGEMM(b, d, gemmFile(prec), "gemm", [2]int{gemmN, gemmN}, [2]int{gemmN, gemmN}, 2*float64(gemmN)*gemmN*gemmN)
		})
	}
}

// timeGEMM times the kernel "Gemm" of the recorded CUDA file file on
// random operands a and b of dims da and db (drawn from key), after one
// warm-up run, and reports GFLOP/s for flop floating-point operations a
// run.
func timeGEMM(b *testing.B, d *rtcuda.Device, file, key string, da, db [2]int, flop float64) {
	src, err := os.ReadFile(filepath.Join(*gpuCases, file))
	if err != nil {
		b.Fatal(err)
	}
	s := gpuSession(b, d, src)
	r := testutil.KeyedRand(key, 1)
	for _, in := range []struct {
		name string
		dims [2]int
	}{{"a", da}, {"b", db}} {
		x := make([]float32, in.dims[0]*in.dims[1])
		for i := range x {
			x[i] = float32(r.Float64()*2 - 1)
		}
		if err := s.Upload(in.name, "float32", x); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Run("Gemm", nil); err != nil { // warm up
		b.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Run("Gemm", nil); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(flop*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkGPUTrainStep times each demo's training step on the GPU:
// parameters resident, the batch in, the backward kernel, the loss out,
// an SGD update (momentum 0.9) of every parameter with a gradient.
func BenchmarkGPUTrainStep(b *testing.B) {
	d := openGPU(b)
	for _, pkg := range emuPackages[1:] {
		b.Run(filepath.Base(pkg), func(b *testing.B) {
			cf := readCases(b, filepath.Base(pkg))
			s := gpuSession(b, d, cf.Source)
			for _, m := range cf.Models {
				for n, v := range m.Params {
					if err := s.Upload(n, m.Elem, v); err != nil {
						b.Fatal(err)
					}
				}
				io := map[string]any{"loss": make([]float64, 1)}
				for n, v := range m.Batch {
					io[n] = v
				}
				for n, v := range m.Index {
					io[n] = v
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := s.Run(m.Backward, io); err != nil {
						b.Fatal(err)
					}
					for _, g := range m.Grads {
						if err := s.SGD(m.Elem, "p"+g[1:], g, "m"+g[1:], 0.01, 0.9, 0, false); err != nil {
							b.Fatal(err)
						}
					}
				}
				if err := s.Sync(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
