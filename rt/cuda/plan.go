// Package cuda runs the CUDA C that ocannlgen generates for a package
// opted in with //ocannl:cuda (its ocannl_gen.cu) on an NVIDIA GPU.
//
// The default build has no cgo and no GPU: Open returns an error saying
// the binary was built without the cuda build tag. Built with
// `-tags cuda`, the package loads libcuda.so.1 (the driver) and NVRTC
// (libnvrtc.so) with dlopen at run time, so building needs neither CUDA
// headers nor libraries; on a machine without them, or without a GPU,
// Open returns an error naming what is missing and the program keeps its
// CPU path. The GPU path is always an explicit opt-in: nothing here runs
// unless the program calls Open.
//
// A Session (Device.NewSession) compiles one generated file with NVRTC
// and owns one stream and the device buffers of its kernels, allocated
// once; named resident buffers (a model's parameters, gradients and
// optimizer state) stay on the device across calls, so a training step
// copies only the batch in and the loss out. The plan it follows (which
// functions to launch, with which grids and buffers) is read from the
// "@ocannl" comment lines of the generated file (ParsePlan).
//
// Data-parallel training on several GPUs, one rank (process) each:
// OpenNCCL loads NCCL (libnccl.so.2, or the path in OCANNL_NCCL) with
// dlopen too and joins the ranks of a dist.Comm (rt/dist/mpi); a step is
// Model.Backward on the rank's share of the batch, Model.SyncGrads (the
// gradients averaged on the devices: ncclReduce with ncclAvg to rank 0,
// then ncclBroadcast, so that every rank holds the same bits), and
// Model.Update. A collective that does not complete within the deadline
// (OCANNL_DIST_TIMEOUT, 2 minutes by default), or that NCCL reports
// failed (a rank that died or left), aborts the communicator and returns
// an error, never a hang.
//
// The package imports only the standard library and rt/dist (itself the
// standard library only).
package cuda

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// Plan is the launch plan of a generated CUDA file.
type Plan struct {
	// Kernels are the kernels in file order.
	Kernels []*KernelPlan
	// Models are the generated models, each with the kernels it calls.
	Models []ModelPlan
	// SGD maps an element type ("float32", "float64") to the name of its
	// SGD update function (present when a model has an optimizer).
	SGD map[string]string
	// OptimFuncs are the optimizer functions other than SGD: Adam's
	// update and the three steps of clipping by global norm (present
	// when a model of that element type needs them).
	OptimFuncs []OptimFunc
}

// OptimFunc is one optimizer function of the generated file (an
// "optfn" plan line): Role "adam" (rt.Adam), "sumsq" (partial sums of
// squares), "clipnorm" (the global norm and the clipping factor) or
// "clip" (the gradient scaled), for element type Elem, named Func, with
// arguments Sig, one letter each: P a pointer to elements, D a pointer
// to doubles, s an element scalar, d a double scalar, i an int.
type OptimFunc struct {
	Role, Elem, Func, Sig string
}

// OptimFunc returns the function of role role for element type elem, or
// nil.
func (p *Plan) OptimFunc(role, elem string) *OptimFunc {
	for i := range p.OptimFuncs {
		if f := &p.OptimFuncs[i]; f.Role == role && f.Elem == elem {
			return f
		}
	}
	return nil
}

// KernelPlan is how one generated kernel runs.
type KernelPlan struct {
	Name string
	// Elem is "float32" or "float64".
	Elem string
	// Bufs are the sizes in cells of the kernel's tensor buffers (margins
	// included), by tensor id; Names their tensors' names.
	Bufs  []int
	Names []string
	// Filled marks the buffers the kernel's first statement on them fills
	// whole (a run need not zero them).
	Filled []bool
	// Scratch is the number of scratch buffers ("scratch" lines: a split
	// GEMM's partial sums), the last ones of Bufs, named "" and Filled.
	Scratch int
	// Params are the kernel's parameters, in the generated Go function's
	// order.
	Params []ParamPlan
	// Launches run in order, after the buffers are zeroed and the input
	// parameters copied in.
	Launches []Launch
}

// ParamPlan is one parameter of a kernel: tensor Tensor, whose unpadded
// cells (memory order, dims Dims) sit in a buffer of dims Buf at offset
// Left on each axis.
type ParamPlan struct {
	Tensor          int
	Name            string
	Out             bool
	Dims, Buf, Left []int
	// Index is an index input's bound (0 for floats): Run takes its
	// positions as an []int32 and checks each is in [0, Index).
	Index int
}

// Size is the number of unpadded cells.
func (p *ParamPlan) Size() int {
	n := 1
	for _, d := range p.Dims {
		n *= d
	}
	return n
}

// Padded reports whether the buffer has margins.
func (p *ParamPlan) Padded() bool {
	for a := range p.Dims {
		if p.Buf[a] != p.Dims[a] {
			return true
		}
	}
	return false
}

// Launch is one kernel launch: Grid blocks of Block threads (x only), the
// function Func taking the buffers of tensors Args. Sync marks a function
// that uses __syncthreads (the emulation runs its threads concurrently).
type Launch struct {
	Func  string
	Grid  [3]int
	Block int
	Sync  bool
	Args  []int
}

// ModelPlan names a model's kernels, parameters and optimizer.
type ModelPlan struct {
	// Name is the generated model type (ocannlMoons); Elem its element
	// type.
	Name, Elem string
	Kernels    []string
	// Params are the model's parameters in ParamTensors order.
	Params []ModelParamPlan
	// Backward is the forward+backward kernel of the loss ("" when the
	// model has no loss).
	Backward string
	// Optim is the SGD setting (nil when the model has none); the
	// learning rate, which may decay, is the caller's (LearningRate()).
	Optim *OptimPlan
}

// ModelParamPlan is one model parameter: its identity (rt.Tensor.Name)
// and the kernels' names of its value and of its gradient ("" when the
// loss does not reach it); State marks model state the optimizer does not
// update (a running statistic).
type ModelParamPlan struct {
	ID, Param, Grad string
	State           bool
}

// OptimPlan is a model's optimizer setting (Model.Update runs it).
type OptimPlan struct {
	// Kind is "sgd", "adam" or "adamw".
	Kind                  string
	Momentum, WeightDecay float64
	Nesterov              bool
	// ClipNorm > 0 clips the gradients by their global norm first.
	ClipNorm float64
	// Beta1, Beta2 and Eps are Adam's (zero in a plan without them).
	Beta1, Beta2, Eps float64
}

// Model returns the plan of the model named name (the generated type),
// or nil.
func (p *Plan) Model(name string) *ModelPlan {
	for i := range p.Models {
		if p.Models[i].Name == name {
			return &p.Models[i]
		}
	}
	return nil
}

// Kernel returns the kernel named name, or nil.
func (p *Plan) Kernel(name string) *KernelPlan {
	for _, k := range p.Kernels {
		if k.Name == name {
			return k
		}
	}
	return nil
}

// ParsePlan reads the launch plan from a generated CUDA file's "@ocannl"
// comment lines.
func ParsePlan(src []byte) (*Plan, error) {
	p := &Plan{SGD: map[string]string{}}
	var cur *KernelPlan
	sc := bufio.NewScanner(strings.NewReader(string(src)))
	sc.Buffer(nil, 1<<24)
	line := 0
	for sc.Scan() {
		line++
		text, ok := strings.CutPrefix(sc.Text(), "// @ocannl ")
		if !ok {
			continue
		}
		f := strings.Fields(text)
		fail := func(format string, args ...any) error {
			return fmt.Errorf("cuda: plan line %d (%q): %s", line, sc.Text(), fmt.Sprintf(format, args...))
		}
		if len(f) < 2 {
			return nil, fail("too short")
		}
		if cur == nil && (f[0] == "buf" || f[0] == "scratch" || f[0] == "param" || f[0] == "launch" || f[0] == "end") {
			return nil, fail("outside a kernel")
		}
		var err error
		switch f[0] {
		case "kernel":
			if len(f) != 3 {
				return nil, fail("want kernel NAME ELEM")
			}
			cur = &KernelPlan{Name: f[1], Elem: f[2]}
			p.Kernels = append(p.Kernels, cur)
		case "buf":
			err = parseBuf(cur, f)
		case "scratch":
			err = parseScratch(cur, f)
		case "param":
			err = parseParam(cur, f)
		case "launch":
			err = parseLaunch(cur, f)
		case "end":
			cur = nil
		case "model":
			if len(f) != 4 || !strings.HasPrefix(f[3], "kernels=") {
				return nil, fail("want model NAME ELEM kernels=K,...")
			}
			p.Models = append(p.Models, ModelPlan{Name: f[1], Elem: f[2], Kernels: strings.Split(strings.TrimPrefix(f[3], "kernels="), ",")})
		case "modelparam", "backward", "optim":
			err = parseModelLine(p, f)
		case "optfn":
			if len(f) != 5 || strings.Trim(f[4], "PDsdi") != "" {
				return nil, fail("want optfn ROLE ELEM FUNC SIG (SIG of P, D, s, d, i)")
			}
			p.OptimFuncs = append(p.OptimFuncs, OptimFunc{Role: f[1], Elem: f[2], Func: f[3], Sig: f[4]})
		case "sgd":
			if len(f) != 3 {
				return nil, fail("want sgd ELEM FUNC")
			}
			p.SGD[f[1]] = f[2]
		default:
			return nil, fail("unknown line kind %q", f[0])
		}
		if err != nil {
			return nil, fail("%v", err)
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("cuda: plan of kernel %s has no end line", cur.Name)
	}
	return p, sc.Err()
}

func parseModelLine(p *Plan, f []string) error {
	m := p.Model(f[1])
	if m == nil {
		return fmt.Errorf("no model %s declared before", f[1])
	}
	switch {
	case f[0] == "modelparam" && (len(f) == 5 || len(f) == 6 && f[5] == "state"):
		grad := f[4]
		if grad == "-" {
			grad = ""
		}
		m.Params = append(m.Params, ModelParamPlan{ID: f[2], Param: f[3], Grad: grad, State: len(f) == 6})
	case f[0] == "backward" && len(f) == 3:
		m.Backward = f[2]
	case f[0] == "optim" && (len(f) == 7 || len(f) == 10):
		kind, ok := strings.CutPrefix(f[2], "kind=")
		if !ok {
			return fmt.Errorf("want kind=")
		}
		o := &OptimPlan{Kind: kind}
		var err error
		for i, key := range []string{"momentum=", "weight_decay=", "nesterov=", "clip_norm=", "beta1=", "beta2=", "eps="}[:len(f)-3] {
			v, ok := strings.CutPrefix(f[3+i], key)
			if !ok {
				return fmt.Errorf("want %s", key)
			}
			var x float64
			if x, err = strconv.ParseFloat(v, 64); err != nil {
				return fmt.Errorf("bad %s%s", key, v)
			}
			switch i {
			case 0:
				o.Momentum = x
			case 1:
				o.WeightDecay = x
			case 2:
				o.Nesterov = x != 0
			case 3:
				o.ClipNorm = x
			case 4:
				o.Beta1 = x
			case 5:
				o.Beta2 = x
			default:
				o.Eps = x
			}
		}
		m.Optim = o
	default:
		return fmt.Errorf("malformed %s line", f[0])
	}
	return nil
}

func parseBuf(k *KernelPlan, f []string) error {
	if len(f) != 4 && (len(f) != 5 || f[4] != "filled") {
		return fmt.Errorf("want buf ID SIZE NAME [filled]")
	}
	id, err1 := strconv.Atoi(f[1])
	n, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil || id != len(k.Bufs) || n < 0 {
		return fmt.Errorf("bad buffer id or size")
	}
	k.Bufs = append(k.Bufs, n)
	k.Names = append(k.Names, f[3])
	k.Filled = append(k.Filled, len(f) == 5)
	return nil
}

// parseScratch reads "scratch ID CELLS": a buffer of no tensor (a split
// GEMM's partial sums), after the tensors' buffers, that the kernel's
// launches write whole before reading: allocated like the others, never
// zeroed (Filled), never a parameter.
func parseScratch(k *KernelPlan, f []string) error {
	if len(f) != 3 {
		return fmt.Errorf("want scratch ID CELLS")
	}
	id, err1 := strconv.Atoi(f[1])
	n, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil || id != len(k.Bufs) || n <= 0 {
		return fmt.Errorf("bad scratch id or size")
	}
	k.Bufs = append(k.Bufs, n)
	k.Names = append(k.Names, "")
	k.Filled = append(k.Filled, true)
	k.Scratch++
	return nil
}

func parseParam(k *KernelPlan, f []string) error {
	index := 0
	if len(f) == 8 {
		v, ok := strings.CutPrefix(f[7], "index=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n <= 0 || f[3] != "in" {
			return fmt.Errorf("want index=N (N > 0) after the dims of an input")
		}
		index, f = n, f[:7]
	}
	if len(f) != 7 || (f[3] != "in" && f[3] != "out") {
		return fmt.Errorf("want param ID NAME in|out dims=.. buf=.. left=.. [index=N]")
	}
	t, err := strconv.Atoi(f[1])
	if err != nil || t < 0 || t >= len(k.Bufs) {
		return fmt.Errorf("bad tensor id %q", f[1])
	}
	pp := ParamPlan{Tensor: t, Name: f[2], Out: f[3] == "out", Index: index}
	for i, dst := range []*[]int{&pp.Dims, &pp.Buf, &pp.Left} {
		key := [...]string{"dims=", "buf=", "left="}[i]
		v, ok := strings.CutPrefix(f[4+i], key)
		if !ok {
			return fmt.Errorf("want %s", key)
		}
		if *dst, err = intList(v); err != nil {
			return err
		}
	}
	if len(pp.Buf) != len(pp.Dims) || len(pp.Left) != len(pp.Dims) {
		return fmt.Errorf("dims, buf and left differ in length")
	}
	n := 1
	for a := range pp.Dims {
		if pp.Left[a] < 0 || pp.Left[a]+pp.Dims[a] > pp.Buf[a] {
			return fmt.Errorf("axis %d does not fit its buffer", a)
		}
		n *= pp.Buf[a]
	}
	if n != k.Bufs[t] {
		return fmt.Errorf("buffer dims hold %d cells, the buffer %d", n, k.Bufs[t])
	}
	k.Params = append(k.Params, pp)
	return nil
}

func parseLaunch(k *KernelPlan, f []string) error {
	if len(f) != 6 {
		return fmt.Errorf("want launch FUNC grid=X,Y,Z block=N sync=S args=..")
	}
	l := Launch{Func: f[1]}
	vals := make([][]int, 4)
	for i, key := range []string{"grid=", "block=", "sync=", "args="} {
		v, ok := strings.CutPrefix(f[2+i], key)
		if !ok {
			return fmt.Errorf("want %s", key)
		}
		var err error
		if vals[i], err = intList(v); err != nil {
			return err
		}
	}
	if len(vals[0]) != 3 || len(vals[1]) != 1 || len(vals[2]) != 1 {
		return fmt.Errorf("bad grid, block or sync")
	}
	copy(l.Grid[:], vals[0])
	l.Block, l.Sync, l.Args = vals[1][0], vals[2][0] != 0, vals[3]
	for _, a := range l.Args {
		if a < 0 || a >= len(k.Bufs) {
			return fmt.Errorf("argument %d is no buffer", a)
		}
	}
	k.Launches = append(k.Launches, l)
	return nil
}

// intList parses "a,b,c" ("-": empty).
func intList(s string) ([]int, error) {
	if s == "-" {
		return []int{}, nil
	}
	parts := strings.Split(s, ",")
	out := make([]int, len(parts))
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil {
			return nil, fmt.Errorf("bad number %q", p)
		}
		out[i] = v
	}
	return out, nil
}
