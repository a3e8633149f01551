//go:build cuda

package cuda_test

import (
	"encoding/gob"
	"os"
	"path/filepath"
	"testing"

	rtcuda "github.com/ocannlgen/ocannlgen/rt/cuda"
)

// TestGPUOptimizers trains internal/cudaadam's models (Adam; AdamW with
// clipping; SGD with clipping) for the recorded steps on the GPU, compares
// each step with the CPU's recorded trace (optimTol), and trains them
// again in a second session: the two runs must give the same bits (the
// clipping norm is a fixed-order reduction, with no atomics).
func TestGPUOptimizers(t *testing.T) {
	d := openGPU(t)
	f, err := os.Open(filepath.Join(*gpuCases, "optim.gob"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cf optimCaseFile
	if err := gob.NewDecoder(f).Decode(&cf); err != nil {
		t.Fatal(err)
	}
	for _, c := range cf.Cases {
		t.Run(c.Model, func(t *testing.T) {
			got := deviceTraining(t, gpuSession(t, d, cf.Source), c.Model, c.Elem, c.Init, c.LRs, c.Clip)
			worst := compareTraces(t, c.Elem, got, c.Want)
			t.Logf("%d steps on the GPU: largest difference from the CPU %.2g (tolerance %g)", len(c.LRs), worst, optimTol(c.Elem))
			if !sameBits(got, deviceTraining(t, gpuSession(t, d, cf.Source), c.Model, c.Elem, c.Init, c.LRs, c.Clip)) {
				t.Error("two runs on the GPU differ")
			}
		})
	}
}

// TestShimOptimizers trains internal/cudaadam's models through the cgo
// shim on the fake driver with the emulated kernels (as TestShimEmulated)
// and compares them with the CPU.
func TestShimOptimizers(t *testing.T) {
	res := generate(t, "internal/cudaadam")
	t.Setenv("OCANNL_LIBCUDA", fakeDriver(t, res.CUDAContent))
	t.Setenv("OCANNL_NVRTC", os.Getenv("OCANNL_LIBCUDA"))
	d, err := rtcuda.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, mk := range optimModels() {
		om := mk()
		t.Run(om.name, func(t *testing.T) {
			init, lrs, want := cpuTraining(mk)
			got := deviceTraining(t, gpuSession(t, d, res.CUDAContent), om.name, om.elem, init, lrs, om.gradNorm != nil)
			t.Logf("largest difference from the CPU %.2g", compareTraces(t, om.elem, got, want))
		})
	}
}

// BenchmarkGPUGEMMShapes times the generated float32 GEMM of each
// benchmark shape (gemmShapes: 4096^3 and the decoder's three layouts;
// a, b and c resident, a run is c's zeroing and the launch) and reports
// GFLOP/s (docs/bench/torch_cuda_bench.py prints cuBLAS's on the same
// shapes).
func BenchmarkGPUGEMMShapes(b *testing.B) {
	d := openGPU(b)
	for _, sh := range gemmShapes {
		for _, prec := range gemmPrecisions {
			name := sh.Name + "/f32"
			if prec != "" {
				name = sh.Name + "/" + prec
			}
			benchShape(b, d, sh, prec, name)
		}
	}
}

// benchShape times the recorded GEMM of shape sh at precision prec.
func benchShape(b *testing.B, d *rtcuda.Device, sh gemmShape, prec, name string) {
	b.Run(name, func(b *testing.B) {
		timeGEMM(b, d, shapeFile(sh.Name, prec), "gemmshape", sh.A, sh.B, 2*float64(sh.M)*float64(sh.N)*float64(sh.K))
	})
}
