package gocode

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/desc"
	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/internal/testutil"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/pipeline"
)

// The end-to-end tests compile programs with inference and loopir,
// render kernels, build them with a generated harness in a temporary
// module, run them on deterministic random inputs and compare with
// loopir's interpreter on the same inputs.

// pspec binds a named tensor of the program to a parameter.
type pspec struct {
	name string
	kind desc.ParamKind
	out  bool
	// as names the Go parameter (default: the tensor's name).
	as string
	// flat: a PtrArray parameter whose Go array is one-dimensional;
	// dims: its Go array dims (a regrouping of the tensor's).
	flat bool
	dims []int
}

func (p pspec) goName() string {
	if p.as != "" {
		return p.as
	}
	return p.name
}

// ecase is one kernel of the end-to-end tests.
type ecase struct {
	kernel, elem, src string
	params            []pspec
}

func pa(name string) pspec { return pspec{name: name, kind: desc.PtrArray} }
func sl(name string) pspec { return pspec{name: name, kind: desc.Slice} }
func out(p pspec) pspec    { p.out = true; return p }
func ptrs(names ...string) []pspec {
	ps := make([]pspec, len(names))
	for i, n := range names {
		ps[i] = pa(n)
	}
	ps[len(ps)-1].out = true
	return ps
}

// built is a compiled case with its inputs and the interpreter's outputs.
type built struct {
	c      ecase
	k      *desc.Kernel
	p      *loopir.Program
	data   [][]float64 // per parameter: the initial contents
	want   [][]float64 // per output parameter (nil for inputs)
	tensor []int
}

// compileProgram runs shape inference, projection inference and lowering
// after replacing the initializers of the named leaves by vals.
func compileProgram(t testing.TB, src string, init func(g *inference.Graph)) (*inference.Graph, *loopir.Program) {
	t.Helper()
	g := testutil.Compile(t, src)
	if init != nil {
		init(g)
	}
	res, err := pipeline.CompileGraph(g, pipeline.Options{})
	if err != nil {
		t.Fatalf("lower: %v", err)
	}
	return g, res.Loops
}

func isLeaf(k inference.TensorKind) bool {
	return k != inference.Result && k != inference.Target
}

// garbage is the initial content of result and target outputs: the
// kernel must not depend on it.
const garbage = 12345.5

// bindParams binds b's parameters to their tensors in g: a leaf gets
// random values from r as its initializer, a result or target starts as
// garbage.
func (b *built) bindParams(t testing.TB, g *inference.Graph, r *rand.Rand) {
	t.Helper()
	for _, ps := range b.c.params {
		id := testutil.Named(t, g, ps.name)
		tn := g.Tensors[id]
		vals := make([]float64, tn.Shape.Size())
		if isLeaf(tn.Kind) {
			testutil.FillGrid(r, vals)
			tn.Init = inference.TensorInit{Kind: inference.InitValues, Values: vals}
		} else {
			for i := range vals {
				vals[i] = garbage
			}
		}
		b.tensor = append(b.tensor, id)
		b.data = append(b.data, vals)
	}
}

// build compiles c (prepare) and runs the interpreter on it (interpret).
func build(t testing.TB, c ecase) *built {
	t.Helper()
	b := prepare(t, c)
	b.interpret(t)
	return b
}

// prepare compiles c's program with random leaves and makes its kernel;
// b.want stays nil until interpret.
func prepare(t testing.TB, c ecase) *built {
	t.Helper()
	r := testutil.KeyedRand(c.kernel, 7)
	b := &built{c: c}
	g, p := compileProgram(t, c.src, func(g *inference.Graph) {
		b.bindParams(t, g, r)
	})
	_ = g
	b.p = p
	b.k = &desc.Kernel{Name: c.kernel, Elem: c.elem, Prog: p, Doc: []string{"test kernel " + c.kernel}}
	for i, ps := range c.params {
		pr := desc.Param{Name: ps.goName(), Kind: ps.kind, Tensor: b.tensor[i], Output: ps.out}
		if ps.flat {
			pr.ArrayDims = []int{p.Tensors[b.tensor[i]].Size()}
		}
		if ps.dims != nil {
			pr.ArrayDims = ps.dims
		}
		b.k.Params = append(b.k.Params, pr)
	}
	return b
}

// interpret runs the interpreter on b's program and sets b.want (one
// entry per parameter: the output's values, nil for an input).
func (b *built) interpret(t testing.TB) {
	t.Helper()
	var values func(int) []float64
	switch b.c.elem {
	case "float32":
		s, err := loopir.Run[float32](b.p)
		if err != nil {
			t.Fatalf("%s: interpreter: %v", b.c.kernel, err)
		}
		values = s.Values
	default:
		s, err := loopir.Run[float64](b.p)
		if err != nil {
			t.Fatalf("%s: interpreter: %v", b.c.kernel, err)
		}
		values = s.Values
	}
	b.want = nil
	for i, ps := range b.c.params {
		var w []float64
		if ps.out {
			w = values(b.tensor[i])
		}
		b.want = append(b.want, w)
	}
}

func goTypeOf(dims []int, elem string) string {
	var s strings.Builder
	for _, d := range dims {
		fmt.Fprintf(&s, "[%d]", d)
	}
	return s.String() + elem
}

func tensorDims(p *loopir.Program, t int) []int {
	d := p.Tensors[t].Dims
	if len(d) == 0 {
		return []int{1}
	}
	return d
}

// writeData writes the statement of main that declares v as a slice of
// elem holding data.
func writeData(w *strings.Builder, v, elem string, data []float64) {
	fmt.Fprintf(w, "\t\t%s := []%s{", v, elem)
	for j, x := range data {
		if j > 0 {
			w.WriteString(", ")
		}
		w.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
	}
	w.WriteString("}\n")
}

// arg is the argument of main's kernel call for parameter i, whose data
// is in the slice v: the slice itself, or a pointer to an array over it.
func (b *built) arg(i int, v string) string {
	ps := b.c.params[i]
	if ps.kind == desc.Slice {
		return v
	}
	dims := tensorDims(b.p, b.tensor[i])
	if ps.flat {
		dims = []int{len(b.data[i])}
	}
	if ps.dims != nil {
		dims = ps.dims
	}
	return fmt.Sprintf("(*%s)(unsafe.Pointer(&%s[0]))", goTypeOf(dims, b.c.elem), v)
}

// harnessCall writes the block of main that runs one kernel and prints
// its outputs: "<kernel> <param> v1 v2 ...".
func harnessCall(w *strings.Builder, b *built) {
	fmt.Fprintf(w, "\t{\n")
	var args []string
	for i := range b.c.params {
		v := "d" + strconv.Itoa(i)
		writeData(w, v, b.c.elem, b.data[i])
		args = append(args, b.arg(i, v))
	}
	fmt.Fprintf(w, "\t\t%s(%s)\n", b.c.kernel, strings.Join(args, ", "))
	for i, ps := range b.c.params {
		if ps.out {
			fmt.Fprintf(w, "\t\temit(%q, %q, d%d)\n", b.c.kernel, ps.name, i)
		}
	}
	fmt.Fprintf(w, "\t}\n")
}

const harnessHead = `package main

import (
	"fmt"
	"strconv"
	"strings"
	"unsafe"
)

func emit[T float32 | float64](kernel, name string, vs []T) {
	var b strings.Builder
	b.WriteString(kernel + " " + name)
	for _, v := range vs {
		b.WriteString(" " + strconv.FormatFloat(float64(v), 'g', -1, 64))
	}
	fmt.Println(b.String())
}

var _ = unsafe.Pointer(nil)

`

// runVetModule writes kernels.go and main.go into a fresh module, runs it
// and vets it, and returns the outputs main printed (see parseOutputs).
func runVetModule(t testing.TB, src []byte, main string) map[string][]float64 {
	t.Helper()
	files := map[string][]byte{"kernels.go": src, "main.go": []byte(main)}
	env := goEnv
	var dir string
	if bytes.Contains(src, []byte(`"github.com/ocannlgen/ocannlgen/rt"`)) {
		// The float32 GELU calls package rt.
		dir = testutil.WriteRepoModule(t, files)
		env = append(slices.Clone(goEnv), "GOFLAGS=-mod=mod")
	} else {
		dir = testutil.WriteModule(t, files)
	}
	runOut, err := testutil.GoCmd(t, dir, env, "run", ".")
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, head(runOut, 4000))
	}
	if o, err := testutil.GoCmd(t, dir, env, "vet", "."); err != nil {
		t.Errorf("go vet: %v\n%s", err, o)
	}
	got, _ := parseOutputs(t, runOut)
	return got
}

// goEnv isolates the throwaway modules from the environment's workspace,
// flags and toolchain switching.
var goEnv = []string{"GOTOOLCHAIN=local", "GOFLAGS=", "GOWORK=off", "GO111MODULE=on"}

// parseOutputs reads the harness's "<kernel> <param> values..." lines.
func parseOutputs(t testing.TB, text string) (map[string][]float64, map[string]string) {
	t.Helper()
	got := map[string][]float64{}
	other := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		if strings.HasPrefix(f[0], "!") {
			other[f[0]] = strings.TrimSpace(strings.TrimPrefix(sc.Text(), f[0]))
			continue
		}
		var vs []float64
		for _, s := range f[2:] {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("bad value %q in %q", s, sc.Text())
			}
			vs = append(vs, v)
		}
		got[f[0]+" "+f[1]] = vs
	}
	return got, other
}

func tolerance(elem string) float64 {
	if elem == "float32" {
		return 1e-5
	}
	return 1e-12
}
