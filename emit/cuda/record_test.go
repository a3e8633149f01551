package cuda_test

import (
	"encoding/gob"
	"flag"
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

// gpuCases is the directory of recorded GPU cases: TestRecordGPUCases
// writes it on a development machine, the cuda-tagged tests read it on a
// GPU machine (docs/benchmarks.md, "Running on a GPU").
var gpuCases = flag.String("gpucases", "", "directory of recorded GPU cases (written by TestRecordGPUCases, read by the cuda-tagged GPU tests)")

// caseFile is what TestRecordGPUCases records for one package: its
// generated CUDA file and, per kernel, random inputs with the
// interpreter's outputs.
type caseFile struct {
	Package string
	Source  []byte
	Cases   []kernelCase
	Models  []modelCase
}

type kernelCase struct {
	Kernel, Elem string
	Inputs       map[string][]float64
	// Index holds the index inputs' positions (a Session takes them as
	// []int32).
	Index   map[string][]int32
	Outputs map[string][]float64
	Tol     float64
}

// io is the case's inputs (index inputs as []int32) and zeroed outputs,
// as Session.Run takes them.
func (c *kernelCase) io() map[string]any {
	io := map[string]any{}
	for n, v := range c.Inputs {
		io[n] = v
	}
	for n, v := range c.Index {
		io[n] = v
	}
	for n, v := range c.Outputs {
		io[n] = make([]float64, len(v))
	}
	return io
}

// record fills the case's inputs from a session io map (randomInputs').
func (c *kernelCase) record(name string, v any) {
	switch v := v.(type) {
	case []int32:
		if c.Index == nil {
			c.Index = map[string][]int32{}
		}
		c.Index[name] = v
	case []float64:
		c.Inputs[name] = v
	}
}

// modelCase is a model's training step: its backward kernel, inputs
// (batch and parameters) and the parameter/gradient names.
type modelCase struct {
	Backward string
	Elem     string
	Batch    map[string][]float64
	// Index is the batch's index inputs.
	Index  map[string][]int32
	Params map[string][]float64
	Grads  []string // "g"+field, for each "p"+field with a gradient
}

// gemmN is the size of the recorded GEMM benchmark (4096^3, float32).
const gemmN = 4096

// TestRecordGPUCases writes the GPU cases (run with -gpucases DIR; skipped
// otherwise): for every opted-in package, PKG.gob with the generated file
// and every kernel's random inputs and interpreter outputs; tuned.gob,
// the same for TestTunedGEMMs's kernels (tuned tile, split-K, tf32 and
// bf16 tensor cores); gemm.cu, gemm_tf32.cu and gemm_bf16.cu, a 4096^3
// float32 matmul for the benchmark, in float32 and on tensor cores.
func TestRecordGPUCases(t *testing.T) {
	if *gpuCases == "" {
		t.Skip("no -gpucases directory")
	}
	if err := os.MkdirAll(*gpuCases, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, pkg := range emuPackages {
		res := generate(t, pkg)
		cf := caseFile{Package: pkg, Source: res.CUDAContent}
		for _, k := range res.Compiled {
			if work(k.Prog) > maxWork {
				continue
			}
			inputs, io := randomInputs(k, 3)
			want := interpret(t, k, inputs)
			kc := kernelCase{Kernel: k.Name, Elem: k.Elem, Inputs: map[string][]float64{}, Outputs: map[string][]float64{}, Tol: tolerance(k.Elem)}
			for _, p := range k.Params {
				if p.Output {
					kc.Outputs[p.Name] = want(p.Tensor)
				} else {
					kc.record(p.Name, io[p.Name])
				}
			}
			cf.Cases = append(cf.Cases, kc)
			if strings.HasSuffix(k.Name, "Backward") {
				cf.Models = append(cf.Models, modelOf(k, kc))
			}
		}
		f, err := os.Create(filepath.Join(*gpuCases, filepath.Base(pkg)+".gob"))
		if err != nil {
			t.Fatal(err)
		}
		if err := gob.NewEncoder(f).Encode(&cf); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, prec := range gemmPrecisions {
		_, src, err := gemmSourceAt(t, gemmN, prec)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(*gpuCases, gemmFile(prec)), src, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	// The tuned, split-K and tensor-core kernels of TestTunedGEMMs.
	set := tunedGEMMs(t)
	cf := caseFile{Package: tunedCases, Source: []byte(set.all())}
	for _, c := range set.cases {
		inputs, io := randomInputs(c.k, 3)
		want := interpret(t, c.k, inputs)
		kc := kernelCase{Kernel: c.k.Name, Elem: c.k.Elem, Inputs: map[string][]float64{}, Outputs: map[string][]float64{}, Tol: c.tol()}
		for _, p := range c.k.Params {
			if p.Output {
				kc.Outputs[p.Name] = want(p.Tensor)
			} else {
				kc.record(p.Name, io[p.Name])
			}
		}
		cf.Cases = append(cf.Cases, kc)
	}
	f, err := os.Create(filepath.Join(*gpuCases, tunedCases+".gob"))
	if err != nil {
		t.Fatal(err)
	}
	if err := gob.NewEncoder(f).Encode(&cf); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// tunedCases names the recorded case file of TestTunedGEMMs's kernels
// (tuned.gob), which the GPU tests run after the packages'.
const tunedCases = "tuned"

// gemmPrecisions are the benchmark GEMM's variants: float32 and the
// tensor-core precisions.
var gemmPrecisions = []string{"", "tf32", "bf16"}

// gemmFile is the recorded benchmark GEMM of a precision: gemm.cu,
// gemm_tf32.cu, gemm_bf16.cu.
func gemmFile(prec string) string {
	if prec == "" {
		return "gemm.cu"
	}
	return "gemm_" + prec + ".cu"
}

func modelOf(k *desc.Kernel, kc kernelCase) modelCase {
	mc := modelCase{Backward: k.Name, Elem: k.Elem, Batch: map[string][]float64{}, Index: kc.Index, Params: map[string][]float64{}}
	for _, p := range k.Params {
		switch {
		case !p.Output && isParam(p.Name):
			mc.Params[p.Name] = kc.Inputs[p.Name]
		case !p.Output && kc.Index[p.Name] == nil:
			mc.Batch[p.Name] = kc.Inputs[p.Name]
		case p.Name != "loss":
			mc.Grads = append(mc.Grads, p.Name)
		}
	}
	return mc
}

// gemmSource is the CUDA file of an n x n x n float32 matmul kernel
// "Gemm" with parameters a, b (inputs) and c (output).
func gemmSource(t *testing.T, n int) (*desc.Kernel, []byte, error) { return gemmSourceAt(t, n, "") }

// gemmSourceAt is gemmSource with the package precision prec ("", tf32,
// bf16).
func gemmSourceAt(t *testing.T, n int, prec string) (*desc.Kernel, []byte, error) {
	g := testutil.Compile(t, "input a : "+itoa(n)+","+itoa(n)+"\ninput b : "+itoa(n)+","+itoa(n)+"\nlet c = a +* \"ij;jk=>ik\" b")
	res, err := pipeline.CompileGraph(g, pipeline.Options{})
	if err != nil {
		return nil, nil, err
	}
	k := &desc.Kernel{Name: "Gemm", Elem: "float32", Prog: res.Loops}
	for _, name := range []string{"a", "b", "c"} {
		k.Params = append(k.Params, desc.Param{Name: name, Tensor: testutil.Named(t, g, name), Output: name == "c"})
	}
	tg := target.GPU()
	tg.Precision = prec
	src, err := cuda.Render(&desc.File{Package: "gemm", Kernels: []*desc.Kernel{k}}, tg)
	return k, src, err
}

func itoa(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

// TestGEMMSource: the benchmark's kernel is the tiled GEMM (checked at a
// size the emulation runs against the interpreter, 80^3, which also
// leaves partial tiles; at 4096^3 it is the tuned 128x128 tile with
// float4 loads of both operands).
func TestGEMMSource(t *testing.T) {
	k, src, err := gemmSource(t, 80)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "Tiled GEMM: C 80x80 += A * B over 80") {
		t.Fatalf("the matmul is not tiled:\n%s", src)
	}
	if _, big, err := gemmSource(t, gemmN); err != nil || !strings.Contains(string(big), "Tile 128x128, 8-deep slices in two stages, 256 threads; A: float4 along the reduction; B: float4 along the rows.") {
		t.Fatalf("the %d^3 benchmark GEMM is not the tuned tile (%v):\n%.3000s", gemmN, err, big)
	}
	s, err := rtcuda.NewSession(startEmu(t, emuBuild(t, "gemm80", src)), src)
	if err != nil {
		t.Fatal(err)
	}
	inputs, io := randomInputs(k, 1)
	if err := s.Run("Gemm", io); err != nil {
		t.Fatal(err)
	}
	want := interpret(t, k, inputs)(k.Params[2].Tensor)
	compare(t, "c", io["c"].([]float64), want, tolerance("float32"))
	// That the comparison can fail (broken tiles caught): TestTunedGEMMs.
}

// TestRowBlockKernelsLeftOut: the kernels of blocks of run-time rows
// (desc.Kernel.RowBlock, the Go methods') are not in the CUDA file; the
// entry's own kernel is.
func TestRowBlockKernelsLeftOut(t *testing.T) {
	k, _, err := gemmSource(t, 4)
	if err != nil {
		t.Fatal(err)
	}
	block := *k
	block.Name, block.RowBlock = desc.BlockKernel("Gemm", 4), true
	src, err := cuda.Render(&desc.File{Package: "gemm", Kernels: []*desc.Kernel{k, &block}}, target.GPU())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "Kernel Gemm ") || strings.Contains(string(src), block.Name) {
		t.Errorf("the CUDA file should have kernel Gemm and not %s:\n%s", block.Name, src)
	}
}

// TestBF16OperandKernelsLeftOut: a kernel over rt.BF16 arrays
// (desc.Kernel.BF16Operands, a CPU kernel only) is not in the CUDA file.
func TestBF16OperandKernelsLeftOut(t *testing.T) {
	k, _, err := gemmSource(t, 4)
	if err != nil {
		t.Fatal(err)
	}
	bf := *k
	bf.Name, bf.BF16, bf.BF16Operands = "GemmBF16Operands", true, true
	src, err := cuda.Render(&desc.File{Package: "gemm", Kernels: []*desc.Kernel{k, &bf}}, target.GPU())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "Kernel Gemm ") || strings.Contains(string(src), bf.Name) {
		t.Errorf("the CUDA file should have kernel Gemm and not %s:\n%s", bf.Name, src)
	}
}
