package cuda_test

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/cuda"
	"github.com/ocannlgen/ocannlgen/emit/desc"
	"github.com/ocannlgen/ocannlgen/gen"
	"github.com/ocannlgen/ocannlgen/internal/testutil"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/rt"
	rtcuda "github.com/ocannlgen/ocannlgen/rt/cuda"
)

// The emulation tests compile each opted-in package's generated CUDA C as
// C++ against testdata/emu.h (blocks and threads as loops, or as
// std::threads at a barrier for functions that use __syncthreads), drive
// it through rt/cuda's Session (the very host logic the GPU path runs,
// over an emulated Driver) and compare every kernel's outputs with the
// loop-IR interpreter on random inputs.

// emuPackages are the packages opted in to CUDA generation.
var emuPackages = []string{"examples/gallery", "examples/moons", "examples/cnn", "examples/attention", "internal/cudagather"}

// emuRun is the packages the emulation tests compile and run (compiling
// each package's CUDA C with g++ takes seconds): under -short only the
// moons demo; by default the gallery (every kind of kernel the emitter
// writes) and the moons demo (the cheapest model, for the training step);
// with the end-to-end checks on (OCANNLGEN_E2E=1, as CI runs them) all of
// emuPackages, adding the CNN and attention demos.
func emuRun() []string {
	switch {
	case testing.Short():
		return []string{"examples/moons"}
	case testutil.IsEndToEnd():
		return emuPackages
	}
	return []string{"examples/gallery", "examples/moons"}
}

// skipBig reports whether TestEmulatedKernelsMatchInterpreter leaves out
// a kernel of n interpreted iterations: under -short one over maxWork;
// without the end-to-end checks one over defaultWork; with them (and
// without -short) none.
func skipBig(n int) bool {
	switch {
	case testing.Short():
		return n > maxWork
	case testutil.IsEndToEnd():
		return false
	}
	return n > defaultWork
}

// defaultWork bounds, without the end-to-end checks, the interpreted
// iterations of a kernel TestEmulatedKernelsMatchInterpreter runs: it
// leaves out the gallery's 256^3 and 512^3 matmuls and its MLP layer,
// whose smaller twins (MatMul, MatMul64, BatchedMatMul) run.
const defaultWork = 1_000_000

// generated caches gen's check-mode results per package, built the
// emulation binaries per package (in buildDir, removed by TestMain).
var (
	generated = struct {
		sync.Mutex
		m map[string]*gen.Result
	}{m: map[string]*gen.Result{}}
	built = struct {
		sync.Mutex
		m map[string]string
	}{m: map[string]string{}}
	buildDir string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ocannl-emu")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func generate(t *testing.T, pkg string) *gen.Result {
	t.Helper()
	generated.Lock()
	defer generated.Unlock()
	if r := generated.m[pkg]; r != nil {
		return r
	}
	res, err := gen.Generate([]string{"./" + pkg}, gen.Options{Dir: testutil.RepoRoot(t), Check: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].CUDAContent == nil {
		t.Fatalf("%s: no generated CUDA file (is //ocannl:cuda there?)", pkg)
	}
	if res[0].CUDAStatus.OutOfDate() {
		t.Fatalf("%s: %s is %s; run go generate", pkg, cuda.OutputFile, res[0].CUDAStatus)
	}
	generated.m[pkg] = &res[0]
	return &res[0]
}

// dispatchSource is the C++ driver: emu.h's main loop with a dispatch
// function calling each function of the plan.
func dispatchSource(plan *rtcuda.Plan) string {
	var b strings.Builder
	b.WriteString("#include \"emu.h\"\n#include \"ocannl_gen.cu\"\n\n")
	b.WriteString("static bool dispatch(const std::string& fn, dim3 grid, unsigned block, bool sync, const std::vector<void*>& p, const std::vector<uint64_t>& u) {\n")
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
				args[i] = fmt.Sprintf("(%s*)p[%d]", ct, i)
			}
			fmt.Fprintf(&b, "  if (fn == %q) { emu_launch(grid, block, sync, [&] { %s(%s); }); return true; }\n", l.Func, l.Func, strings.Join(args, ", "))
		}
	}
	for elem, fn := range plan.SGD {
		ct, conv := "float", "emu_f32"
		if elem == "float64" {
			ct, conv = "double", "emu_f64"
		}
		fmt.Fprintf(&b, "  if (fn == %[1]q) { emu_launch(grid, block, sync, [&] { %[1]s((%[2]s*)p[0], (%[2]s*)p[1], (%[2]s*)p[2], %[3]s(u[3]), %[3]s(u[4]), %[3]s(u[5]), (int)u[6], (int)u[7]); }); return true; }\n", fn, ct, conv)
	}
	for _, f := range plan.OptimFuncs {
		ct, conv := "float", "emu_f32"
		if f.Elem == "float64" {
			ct, conv = "double", "emu_f64"
		}
		fmt.Fprintf(&b, "  if (fn == %[1]q) { emu_launch(grid, block, sync, [&] { %[1]s(%[2]s); }); return true; }\n", f.Func, optimArgs(f.Sig, func(i int, k byte) string {
			return map[byte]string{'P': fmt.Sprintf("(%s*)p[%d]", ct, i), 'D': fmt.Sprintf("(double*)p[%d]", i), 's': fmt.Sprintf("%s(u[%d])", conv, i),
				'd': fmt.Sprintf("emu_f64(u[%d])", i), 'i': fmt.Sprintf("(int)u[%d]", i)}[k]
		}))
	}
	b.WriteString("  return false;\n}\n\nint main() { return emu_main(dispatch); }\n")
	return b.String()
}

// optimArgs renders the arguments of an optimizer function of signature
// sig (rtcuda.OptimFunc), each by arg.
func optimArgs(sig string, arg func(i int, kind byte) string) string {
	args := make([]string, len(sig))
	for i := range sig {
		args[i] = arg(i, sig[i])
	}
	return strings.Join(args, ", ")
}

// emuBuild compiles the package's CUDA C with g++ (skipping when there is
// none) and returns the binary (built once per package).
func emuBuild(t *testing.T, pkg string, src []byte) string {
	t.Helper()
	built.Lock()
	defer built.Unlock()
	if bin := built.m[pkg]; bin != "" {
		return bin
	}
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++: the emulation tests need a C++20 compiler")
	}
	plan, err := rtcuda.ParsePlan(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(buildDir, filepath.Base(pkg))
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	hdr, err := os.ReadFile(filepath.Join("testdata", "emu.h"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"emu.h": hdr, "ocannl_gen.cu": src, "driver.cpp": []byte(dispatchSource(plan))} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "emu")
	cmd := exec.Command(gxx, "-std=c++20", "-O1", "-pthread", "-Wall", "-Wno-unknown-pragmas", "-Wno-unused-variable", "-o", bin, "driver.cpp")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	built.m[pkg] = bin
	return bin
}

// emu is an rtcuda.Driver talking to the emulation binary.
type emu struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	w       *bufio.Writer
	out     *bufio.Reader
	next    rtcuda.Ptr
	pending [][]byte
}

func startEmu(t *testing.T, bin string) *emu {
	t.Helper()
	cmd := exec.Command(bin)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	e := &emu{cmd: cmd, in: in, w: bufio.NewWriter(in), out: bufio.NewReaderSize(out, 1<<20)}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	return e
}

func (e *emu) Compile([]byte) error { return nil } // compiled by emuBuild

func (e *emu) Alloc(bytes int) (rtcuda.Ptr, error) {
	e.next++
	fmt.Fprintf(e.w, "alloc %d %d\n", e.next, bytes)
	return e.next, nil
}

func (e *emu) Free(p rtcuda.Ptr) error { fmt.Fprintf(e.w, "free %d\n", p); return nil }

func (e *emu) Zero(p rtcuda.Ptr, bytes int) error {
	fmt.Fprintf(e.w, "zero %d %d\n", p, bytes)
	return nil
}

func (e *emu) Upload(dst rtcuda.Ptr, src []byte) error {
	fmt.Fprintf(e.w, "up %d %s\n", dst, hex.EncodeToString(src))
	return nil
}

func (e *emu) Download(dst []byte, src rtcuda.Ptr) error {
	fmt.Fprintf(e.w, "down %d %d\n", src, len(dst))
	e.pending = append(e.pending, dst)
	return nil
}

func (e *emu) Launch(fn string, grid [3]int, block int, sync bool, args []any) error {
	s := 0
	if sync {
		s = 1
	}
	fmt.Fprintf(e.w, "launch %s %d %d %d %d %d %d", fn, grid[0], grid[1], grid[2], block, s, len(args))
	for _, a := range args {
		switch a := a.(type) {
		case rtcuda.Ptr:
			fmt.Fprintf(e.w, " p %d", a)
		case float32:
			fmt.Fprintf(e.w, " u %d", math.Float32bits(a))
		case float64:
			fmt.Fprintf(e.w, " u %d", math.Float64bits(a))
		case int32:
			fmt.Fprintf(e.w, " u %d", a)
		default:
			return fmt.Errorf("emu: argument of type %T", a)
		}
	}
	e.w.WriteString("\n")
	return nil
}

func (e *emu) Sync() error {
	e.w.WriteString("sync\n")
	if err := e.w.Flush(); err != nil {
		return err
	}
	pending := e.pending
	e.pending = nil
	for _, dst := range append(pending, nil) {
		line, err := e.out.ReadString('\n')
		if err != nil {
			return fmt.Errorf("emu: %v", err)
		}
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "error:") {
			return fmt.Errorf("emu: %s", line)
		}
		if dst == nil {
			if line != "ok" {
				return fmt.Errorf("emu: want ok, got %.40q", line)
			}
			continue
		}
		b, err := hex.DecodeString(line)
		if err != nil || len(b) != len(dst) {
			return fmt.Errorf("emu: bad download line (%d bytes for %d): %v", len(b), len(dst), err)
		}
		copy(dst, b)
	}
	return nil
}

func (e *emu) Close() error { return nil }

// session builds and starts the emulation of pkg's generated file.
func session(t *testing.T, pkg string) (*gen.Result, *rtcuda.Session) {
	res := generate(t, pkg)
	bin := emuBuild(t, pkg, res.CUDAContent)
	s, err := rtcuda.NewSession(startEmu(t, bin), res.CUDAContent)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return res, s
}

// randomInputs draws every input parameter of k uniformly in [-1, 1)
// (rounded to the element type) and returns the interpreter's inputs and
// the session's io map (with zeroed output slices).
func randomInputs(k *desc.Kernel, seed uint64) (map[int][]float64, map[string]any) {
	r := testutil.KeyedRand(k.Name, seed)
	inputs, io := map[int][]float64{}, map[string]any{}
	for _, p := range k.Params {
		n := k.Prog.Tensors[p.Tensor].Size()
		if p.Output {
			io[p.Name] = make([]float64, n)
			continue
		}
		vals := make([]float64, n)
		if bound := k.Prog.Tensors[p.Tensor].IndexBound; bound > 0 {
			// An index input: positions, given to the session as int32.
			ids := make([]int32, n)
			for i := range ids {
				ids[i] = int32(r.IntN(bound))
				vals[i] = float64(ids[i])
			}
			inputs[p.Tensor], io[p.Name] = vals, ids
			continue
		}
		for i := range vals {
			vals[i] = r.Float64()*2 - 1
			if k.Elem == "float32" {
				vals[i] = float64(float32(vals[i]))
			}
		}
		inputs[p.Tensor], io[p.Name] = vals, vals
	}
	return inputs, io
}

func interpret(t *testing.T, k *desc.Kernel, inputs map[int][]float64) func(tensor int) []float64 {
	t.Helper()
	if k.Elem == "float64" {
		st, err := loopir.RunWith[float64](k.Prog, inputs)
		if err != nil {
			t.Fatal(err)
		}
		return st.Values
	}
	st, err := loopir.RunWith[float32](k.Prog, inputs)
	if err != nil {
		t.Fatal(err)
	}
	return st.Values
}

func tolerance(elem string) float64 {
	if elem == "float64" {
		return 1e-10
	}
	return 2e-4
}

// compare reports the cells of got that differ from want.
func compare(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	bad := 0
	for i := range want {
		if !testutil.CloseRel(got[i], want[i], tol) {
			if bad < 3 {
				t.Errorf("%s[%d] = %v, the interpreter says %v", what, i, got[i], want[i])
			}
			bad++
		}
	}
	if bad > 3 {
		t.Errorf("%s: %d cells differ in all", what, bad)
	}
}

// maxWork bounds the interpreted iterations of a kernel the emulation
// tests run under -short, and the shim and recording tests always (the
// 512^3 gallery matmul takes the interpreter 20 s; its smaller twins
// run).
const maxWork = 20_000_000

// work counts the store executions of a program.
func work(p *loopir.Program) int {
	var count func(s loopir.Stmt) int
	count = func(s loopir.Stmt) int {
		f, ok := s.(*loopir.For)
		if !ok {
			return 1
		}
		n := 0
		for _, c := range f.Body {
			n += count(c)
		}
		return f.Extent * n
	}
	n := 0
	for _, o := range p.Ops {
		for _, s := range o.Body {
			n += count(s)
		}
	}
	return n
}

// TestEmulatedKernelsMatchInterpreter runs every kernel of every opted-in
// package (the gallery's, and the demos' forward entries and backward
// kernels) in the emulation and compares each output with the
// interpreter. Without OCANNLGEN_E2E=1 it runs the packages and kernels
// emuRun and skipBig leave in.
func TestEmulatedKernelsMatchInterpreter(t *testing.T) {
	for _, pkg := range emuRun() {
		t.Run(filepath.Base(pkg), func(t *testing.T) {
			res, s := session(t, pkg)
			if len(res.Compiled) == 0 {
				t.Fatal("no kernels")
			}
			for _, k := range res.Compiled {
				if k.RowBlock {
					continue // not rendered for CUDA
				}
				if n := work(k.Prog); skipBig(n) {
					t.Logf("%s: skipped (%d interpreted iterations; its smaller twins run; see skipBig)", k.Name, n)
					continue
				}
				checkKernel(t, s, k, 1)
			}
		})
	}
}

// checkKernel runs kernel k on random inputs drawn with seed through the
// session and compares every output with the interpreter.
func checkKernel(t *testing.T, s *rtcuda.Session, k *desc.Kernel, seed uint64) {
	t.Helper()
	inputs, io := randomInputs(k, seed)
	if err := s.Run(k.Name, io); err != nil {
		t.Fatalf("%s: %v", k.Name, err)
	}
	want := interpret(t, k, inputs)
	for _, p := range k.Params {
		if p.Output {
			compare(t, k.Name+"."+p.Name, io[p.Name].([]float64), want(p.Tensor), tolerance(k.Elem))
		}
	}
}

// TestEmulatedTrainStep runs each demo model's training step the way the
// GPU path does: the parameters uploaded once as resident buffers, the
// backward kernel run with only the batch in and the loss out (the
// gradients stay resident), then two SGD updates with momentum on the
// device. Gradients and loss are compared with the interpreter, the
// updated parameters with rt.SGD applied on the host to the same
// gradients.
func TestEmulatedTrainStep(t *testing.T) {
	for _, pkg := range emuRun() {
		if pkg == emuPackages[0] {
			continue // the gallery has no model
		}
		t.Run(filepath.Base(pkg), func(t *testing.T) {
			res, s := session(t, pkg)
			models := s.Plan().Models
			if len(models) == 0 {
				t.Fatal("no model in the plan")
			}
			for _, m := range models {
				var k *desc.Kernel
				for _, c := range res.Compiled {
					if c.Name == m.Name+"Backward" {
						k = c
					}
				}
				if k == nil {
					t.Fatalf("model %s: no backward kernel", m.Name)
				}
				trainStep(t, s, k)
				_, fresh := session(t, pkg) // momentum buffers start at zero
				modelStep(t, fresh, k, m.Name)
			}
		})
	}
}

func trainStep(t *testing.T, s *rtcuda.Session, k *desc.Kernel) {
	inputs, io := randomInputs(k, 2)
	var params []desc.Param
	for _, p := range k.Params {
		switch {
		case !p.Output && isParam(p.Name):
			if err := s.Upload(p.Name, k.Elem, io[p.Name]); err != nil {
				t.Fatal(err)
			}
			delete(io, p.Name)
			params = append(params, p)
		case p.Output && p.Name != "loss":
			delete(io, p.Name) // the gradients stay on the device
		}
	}
	if len(params) == 0 {
		t.Fatalf("%s: no parameters", k.Name)
	}
	if err := s.Run(k.Name, io); err != nil {
		t.Fatal(err)
	}
	want := interpret(t, k, inputs)
	tol := tolerance(k.Elem)
	for _, p := range k.Params {
		if p.Name == "loss" {
			compare(t, k.Name+".loss", io["loss"].([]float64), want(p.Tensor), tol)
		}
	}
	grads := map[string][]float64{}
	for _, p := range k.Params {
		if !p.Output || p.Name == "loss" {
			continue
		}
		g := make([]float64, k.Prog.Tensors[p.Tensor].Size())
		if err := s.Download(p.Name, g); err != nil {
			t.Fatal(err)
		}
		compare(t, k.Name+"."+p.Name, g, want(p.Tensor), tol)
		grads[p.Name] = g
	}
	const lr, mom, wd = 0.1, 0.9, 1e-4
	for _, p := range params {
		g := grads["g"+p.Name[1:]]
		if g == nil {
			continue
		}
		for range 2 {
			if err := s.SGD(k.Elem, p.Name, "g"+p.Name[1:], "m"+p.Name[1:], lr, mom, wd, false); err != nil {
				t.Fatal(err)
			}
		}
		got := make([]float64, len(g))
		if err := s.Download(p.Name, got); err != nil {
			t.Fatal(err)
		}
		compare(t, p.Name+" after 2 SGD steps", got, hostSGD(k.Elem, inputs[p.Tensor], g, lr, mom, wd, false, 2), 1e-6)
	}
}

// isParam reports whether a model kernel's parameter name is a model
// parameter's value ("p" + an exported field name), not an input.
func isParam(name string) bool {
	return len(name) > 1 && name[0] == 'p' && name[1] >= 'A' && name[1] <= 'Z'
}

// hostSGD applies rt.SGD steps times at the element type.
func hostSGD(elem string, p0, g []float64, lr, mom, wd float64, nesterov bool, steps int) []float64 {
	out := make([]float64, len(p0))
	if elem == "float64" {
		p, m := append([]float64(nil), p0...), make([]float64, len(p0))
		for range steps {
			rt.SGD(p, g, m, lr, mom, wd, nesterov)
		}
		copy(out, p)
		return out
	}
	p, g32, m := make([]float32, len(p0)), make([]float32, len(g)), make([]float32, len(p0))
	for i := range p0 {
		p[i], g32[i] = float32(p0[i]), float32(g[i])
	}
	for range steps {
		rt.SGD(p, g32, m, float32(lr), float32(mom), float32(wd), nesterov)
	}
	for i, v := range p {
		out[i] = float64(v)
	}
	return out
}

// modelStep runs rtcuda.Model's Load, TrainStep and Save on fresh random
// parameters (as rt.Tensors, the model's ParamTensors): the loss must be
// the interpreter's and the saved parameters one SGD step (the plan's
// momentum, weight decay and Nesterov flag) from the loaded ones along
// the interpreter's gradients.
func modelStep(t *testing.T, s *rtcuda.Session, k *desc.Kernel, model string) {
	m, err := s.Model(model)
	if err != nil {
		t.Fatal(err)
	}
	mp := s.Plan().Model(model)
	inputs, io := randomInputs(k, 4)
	want := interpret(t, k, inputs)
	tensorOf := map[string]int{}
	for _, p := range k.Params {
		tensorOf[p.Name] = p.Tensor
	}
	var ts []rt.Tensor
	for _, p := range mp.Params {
		vals := io[p.Param].([]float64)
		tn := rt.Tensor{Name: p.ID}
		if k.Elem == "float64" {
			tn.Data64 = append([]float64(nil), vals...)
		} else {
			for _, v := range vals {
				tn.Data32 = append(tn.Data32, float32(v))
			}
		}
		ts = append(ts, tn)
	}
	if err := m.Load(ts); err != nil {
		t.Fatal(err)
	}
	batch := map[string]any{}
	for _, p := range k.Params {
		if !p.Output && !isParam(p.Name) {
			batch[p.Name] = io[p.Name]
		}
	}
	const lr = 0.05
	loss, err := m.TrainStep(batch, lr)
	if err != nil {
		t.Fatal(err)
	}
	compare(t, model+" loss", []float64{loss}, want(tensorOf["loss"]), tolerance(k.Elem))
	if err := m.Save(ts); err != nil {
		t.Fatal(err)
	}
	o := mp.Optim
	for i, p := range mp.Params {
		if p.Grad == "" {
			continue
		}
		got := ts[i].Data64
		if k.Elem == "float32" {
			got = make([]float64, len(ts[i].Data32))
			for j, v := range ts[i].Data32 {
				got[j] = float64(v)
			}
		}
		exp := hostSGD(k.Elem, inputs[tensorOf[p.Param]], want(tensorOf[p.Grad]), lr, o.Momentum, o.WeightDecay, o.Nesterov, 1)
		compare(t, model+" saved "+p.ID, got, exp, 1e-4)
	}
}
