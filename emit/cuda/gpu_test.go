//go:build cuda

package cuda_test

import (
	"encoding/gob"
	"os"
	"path/filepath"
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
// gallery's; the demos' entries and backward kernels) on the GPU and
// compares with the interpreter's recorded outputs.
func TestGPUKernelsMatchInterpreter(t *testing.T) {
	d := openGPU(t)
	for _, pkg := range emuPackages {
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

// BenchmarkGPUGEMM times the generated 4096^3 float32 GEMM (a, b and c
// resident: a run is c's zeroing and the GEMM launch) and reports
// GFLOP/s.
func BenchmarkGPUGEMM(b *testing.B) {
	d := openGPU(b)
	src, err := os.ReadFile(filepath.Join(*gpuCases, "gemm.cu"))
	if err != nil {
		b.Fatal(err)
	}
	s := gpuSession(b, d, src)
	r := testutil.KeyedRand("gemm", 1)
	x := make([]float32, gemmN*gemmN)
	for _, name := range []string{"a", "b"} {
		for i := range x {
			x[i] = float32(r.Float64()*2 - 1)
		}
		if err := s.Upload(name, "float32", x); err != nil {
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
	b.ReportMetric(2*float64(gemmN)*gemmN*gemmN*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
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
