// Command gallery runs every kernel of the ocannlgen kernel gallery on
// deterministic random data, checks each against the loop-IR reference
// interpreter, and prints a table: kernel, spec, shapes, the largest
// relative error, ns/op, allocations and GFLOP/s.
//
//	go run ./examples/gallery [-seeds 3] [-time 100ms]
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/ocannlgen/ocannlgen/emit/desc"
	"github.com/ocannlgen/ocannlgen/gen"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
)

// entry binds a gallery function to a call that takes its operands as
// values of their exact types (so timing measures the kernel, not
// reflection).
type entry struct {
	name string
	fn   any
	call func(a []any)
}

func entries() []entry {
	type f32 = float32
	return []entry{
		{"MatMul", MatMul, func(a []any) { MatMul(a[0].(*[64][48]f32), a[1].(*[48][32]f32), a[2].(*[64][32]f32)) }},
		{"MatMulF64", MatMulF64, func(a []any) {
			MatMulF64(a[0].(*[64][48]float64), a[1].(*[48][32]float64), a[2].(*[64][32]float64))
		}},
		{"MatMul64", MatMul64, func(a []any) { MatMul64(a[0].(*[64][64]f32), a[1].(*[64][64]f32), a[2].(*[64][64]f32)) }},
		{"MatMul256", MatMul256, func(a []any) {
			MatMul256(a[0].(*[256][256]f32), a[1].(*[256][256]f32), a[2].(*[256][256]f32))
		}},
		{"MatMul512", MatMul512, func(a []any) {
			MatMul512(a[0].(*[512][512]f32), a[1].(*[512][512]f32), a[2].(*[512][512]f32))
		}},
		{"MLPLayer", MLPLayer, func(a []any) { MLPLayer(a[0].(*[32][784]f32), a[1].(*[784][128]f32), a[2].(*[32][128]f32)) }},
		{"BatchedMatMul", BatchedMatMul, func(a []any) {
			BatchedMatMul(a[0].(*[8][16][32]f32), a[1].(*[8][32][24]f32), a[2].(*[8][16][24]f32))
		}},
		{"PermuteKinds", PermuteKinds, func(a []any) { PermuteKinds(a[0].(*[4][6][5]f32), a[1].(*[6][5][4]f32)) }},
		{"Transpose", Transpose, func(a []any) { Transpose(a[0].(*[48][64]f32), a[1].(*[64][48]f32)) }},
		{"Trace", Trace, func(a []any) { Trace(a[0].(*[16][16]f32), a[1].(*[1]f32)) }},
		{"Diagonal", Diagonal, func(a []any) { Diagonal(a[0].(*[8]f32), a[1].(*[8][8]f32)) }},
		{"Outer", Outer, func(a []any) { Outer(a[0].(*[32]f32), a[1].(*[24]f32), a[2].(*[32][24]f32)) }},
		{"SumRows", SumRows, func(a []any) { SumRows(a[0].([]f32), a[1].([]f32)) }},
		{"SumBatch", SumBatch, func(a []any) { SumBatch(a[0].(*[4096][16]f32), a[1].(*[16]f32)) }},
		{"MaxRows", MaxRows, func(a []any) { MaxRows(a[0].(*[64][100]f32), a[1].(*[64]f32)) }},
		{"BiasGrad", BiasGrad, func(a []any) { BiasGrad(a[0].(*[8][5][5][16]f32), a[1].(*[16]f32)) }},
		{"RowMaxF64", RowMaxF64, func(a []any) { RowMaxF64(a[0].(*[48][10]float64), a[1].(*[48]float64)) }},
		{"ScaleShiftRelu", ScaleShiftRelu, func(a []any) {
			ScaleShiftRelu(a[0].(*[32][64]f32), a[1].(*[64]f32), a[2].(*[32][64]f32))
		}},
		{"Transcendentals", Transcendentals, func(a []any) { Transcendentals(a[0].(*[32][64]f32), a[1].(*[32][64]f32)) }},
		{"TranscendentalsF64", TranscendentalsF64, func(a []any) {
			TranscendentalsF64(a[0].(*[32][64]float64), a[1].(*[32][64]float64))
		}},
		{"Gelu", Gelu, func(a []any) { Gelu(a[0].(*[32][64]f32), a[1].(*[32][64]f32)) }},
		{"GeluF64", GeluF64, func(a []any) { GeluF64(a[0].(*[32][64]float64), a[1].(*[32][64]float64)) }},
		{"Conv2D", Conv2D, func(a []any) {
			Conv2D(a[0].(*[2][16][16][3]f32), a[1].(*[8][3][3][3]f32), a[2].(*[2][14][14][8]f32))
		}},
		{"Conv2DPadded", Conv2DPadded, func(a []any) {
			Conv2DPadded(a[0].(*[2][16][16][3]f32), a[1].(*[8][3][3][3]f32), a[2].(*[2][16][16][8]f32))
		}},
		{"Conv2DStrided", Conv2DStrided, func(a []any) {
			Conv2DStrided(a[0].(*[2][15][15][3]f32), a[1].(*[8][3][3][3]f32), a[2].(*[2][7][7][8]f32))
		}},
		{"Conv2DDilated", Conv2DDilated, func(a []any) {
			Conv2DDilated(a[0].(*[2][16][16][3]f32), a[1].(*[8][3][3][3]f32), a[2].(*[2][12][12][8]f32))
		}},
		{"MaxPool2x2", MaxPool2x2, func(a []any) { MaxPool2x2(a[0].(*[2][16][16][8]f32), a[1].(*[2][8][8][8]f32)) }},
		{"Interleave", Interleave, func(a []any) { Interleave(a[0].(*[32]f32), a[1].(*[32]f32), a[2].(*[64]f32)) }},
		{"DeinterleaveOdd", DeinterleaveOdd, func(a []any) { DeinterleaveOdd(a[0].(*[64]f32), a[1].(*[32]f32)) }},
		{"Concat", Concat, func(a []any) { Concat(a[0].(*[24]f32), a[1].(*[40]f32), a[2].(*[64]f32)) }},
		{"Prefix", Prefix, func(a []any) { Prefix(a[0].(*[64]f32), a[1].(*[24]f32)) }},
		{"Suffix", Suffix, func(a []any) { Suffix(a[0].(*[64]f32), a[1].(*[40]f32)) }},
		{"PartialUpdate", PartialUpdate, func(a []any) { PartialUpdate(a[0].(*[24]f32), a[1].(*[64]f32)) }},
		{"BlockMatrix", BlockMatrix, func(a []any) {
			BlockMatrix(a[0].(*[16][16]f32), a[1].(*[16][8]f32), a[2].(*[8][16]f32), a[3].(*[8][8]f32), a[4].(*[24][24]f32))
		}},
	}
}

// sourceDir is the gallery's source directory (the generator reads the
// annotated kernels from it).
func sourceDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "."
	}
	return filepath.Dir(file)
}

// loadKernels compiles the gallery's annotated functions (without writing
// anything) and returns them by function name.
func loadKernels(dir string) (map[string]*desc.Kernel, error) {
	res, err := gen.Generate([]string{"."}, gen.Options{Dir: dir, Check: true})
	if err != nil {
		return nil, err
	}
	out := map[string]*desc.Kernel{}
	for _, r := range res {
		for _, k := range r.Compiled {
			out[strings.TrimPrefix(k.Name, "ocannl")] = k
		}
	}
	return out, nil
}

// operands allocates a kernel's arguments from its Go signature and fills
// them with deterministic random values (the output too: kernels that
// update their output read it); it returns the arguments and, per tensor
// of the kernel's program, the same values for the interpreter.
func operands(fn any, k *desc.Kernel, rng *rand.Rand) ([]any, map[int][]float64, error) {
	ft := reflect.TypeOf(fn)
	if ft.NumIn() != len(k.Params) {
		return nil, nil, fmt.Errorf("%d parameters, kernel has %d", ft.NumIn(), len(k.Params))
	}
	args := make([]any, ft.NumIn())
	inputs := map[int][]float64{}
	for i, p := range k.Params {
		n := k.Prog.Tensors[p.Tensor].Size()
		vals := make([]float64, n)
		for j := range vals {
			vals[j] = rng.Float64()*2 - 1
		}
		t := ft.In(i)
		var v reflect.Value
		if t.Kind() == reflect.Slice {
			v = reflect.MakeSlice(t, n, n)
		} else {
			v = reflect.New(t.Elem())
		}
		flat := flatten(v)
		if flat.Len() != n {
			return nil, nil, fmt.Errorf("parameter %s holds %d cells, tensor has %d", p.Name, flat.Len(), n)
		}
		for j, x := range vals {
			flat.Index(j).SetFloat(x)
			// the interpreter sees exactly the values the kernel sees
			vals[j] = flat.Index(j).Float()
		}
		inputs[p.Tensor] = vals
		args[i] = v.Interface()
	}
	return args, inputs, nil
}

// flatten views a pointer to nested arrays, or a slice, as a flat slice
// of its cells (in memory order).
func flatten(v reflect.Value) reflect.Value {
	if v.Kind() == reflect.Slice {
		return v
	}
	e := v.Elem()
	n, t := 1, e.Type()
	for t.Kind() == reflect.Array {
		n *= t.Len()
		t = t.Elem()
	}
	return reflect.NewAt(reflect.ArrayOf(n, t), v.UnsafePointer()).Elem().Slice(0, n)
}

// tolF32 is the largest relative difference accepted between a float32
// kernel and the interpreter: the assembly kernels reassociate sums
// (vector lanes, k blocks, FMA), and a sum of K products may then differ
// by about K*2^-24 of the magnitudes summed (MLPLayer, K=784, by up to
// 1.5e-5). float64 kernels must agree to 1e-12.
const tolF32 = 5e-5

// check runs the kernel and the interpreter on the same random operands
// and returns the largest relative error of the output.
func check(e entry, k *desc.Kernel, seed uint64) (float64, error) {
	rng := rand.New(rand.NewPCG(seed, 0x0ca111))
	args, inputs, err := operands(e.fn, k, rng)
	if err != nil {
		return 0, err
	}
	e.call(args)
	var want []float64
	if k.Elem == "float64" {
		st, err := loopir.RunWith[float64](k.Prog, inputs)
		if err != nil {
			return 0, err
		}
		want = st.Values(k.Params[len(k.Params)-1].Tensor)
	} else {
		st, err := loopir.RunWith[float32](k.Prog, inputs)
		if err != nil {
			return 0, err
		}
		want = st.Values(k.Params[len(k.Params)-1].Tensor)
	}
	got := flatten(reflect.ValueOf(args[len(args)-1]))
	worst := 0.0
	for i, w := range want {
		g := got.Index(i).Float()
		d := math.Abs(g-w) / math.Max(1, math.Abs(w))
		if math.IsNaN(g) != math.IsNaN(w) {
			d = math.Inf(1)
		}
		worst = math.Max(worst, d)
	}
	return worst, nil
}

// flops counts the arithmetic of a kernel's operations: two per point of
// a sum of products, one per point of other reductions; 0 for pure data
// movement.
func flops(k *desc.Kernel) float64 {
	total := 0.0
	for _, op := range k.Prog.Graph.Ops {
		if op.Proj == nil {
			continue
		}
		points := 1.0
		for _, f := range op.Proj.Product {
			s := 0
			for _, x := range f.Extents {
				s += x
			}
			points *= float64(s)
		}
		switch {
		case op.Prim == ops.Mul && op.Accum == ops.AccAdd && op.Proj.Accumulate:
			total += 2 * points
		case op.Prim != ops.ID || op.Proj.Accumulate:
			total += points
		}
	}
	return total
}

func shapes(k *desc.Kernel) string {
	var parts []string
	for _, p := range k.Params {
		parts = append(parts, fmt.Sprintf("%s:%s", p.Name, k.Prog.Graph.Tensors[p.Tensor].Shape))
	}
	return strings.Join(parts, " ")
}

func directive(k *desc.Kernel) string {
	for _, d := range k.Doc {
		if strings.HasPrefix(d, "//ocannl:") && !strings.HasPrefix(d, "//ocannl:dims") && !strings.HasPrefix(d, "//ocannl:shape") {
			s := strings.TrimPrefix(d, "//ocannl:")
			if len(s) > 48 {
				s = s[:45] + "..."
			}
			return s
		}
	}
	return ""
}

func main() {
	seeds := flag.Int("seeds", 3, "random operand sets checked per kernel")
	benchTime := flag.Duration("time", 100*time.Millisecond, "minimum timing per kernel")
	flag.Parse()
	kernels, err := loadKernels(sourceDir())
	if err != nil {
		fmt.Fprintln(os.Stderr, "gallery:", err)
		os.Exit(1)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kernel\tdirective\tmax rel err\tns/op\tallocs/op\tGFLOP/s\t")
	failed := 0
	var shapeLines []string
	for _, e := range entries() {
		k := kernels[e.name]
		if k == nil {
			fmt.Fprintf(os.Stderr, "gallery: no compiled kernel for %s\n", e.name)
			failed++
			continue
		}
		worst := 0.0
		for s := range *seeds {
			d, err := check(e, k, uint64(s+1))
			if err != nil {
				fmt.Fprintf(os.Stderr, "gallery: %s: %v\n", e.name, err)
				failed++
				break
			}
			worst = math.Max(worst, d)
		}
		tol := tolF32
		if k.Elem == "float64" {
			tol = 1e-12
		}
		status := ""
		if worst > tol {
			status = " MISMATCH"
			failed++
		}
		args, _, _ := operands(e.fn, k, rand.New(rand.NewPCG(9, 9)))
		allocs := testing.AllocsPerRun(10, func() { e.call(args) })
		n, elapsed := 0, time.Duration(0)
		for elapsed < *benchTime {
			start := time.Now()
			for range max(1, n) {
				e.call(args)
			}
			elapsed += time.Since(start)
			n += max(1, n)
		}
		nsop := float64(elapsed.Nanoseconds()) / float64(n)
		gflops := "-"
		if f := flops(k); f > 0 {
			gflops = fmt.Sprintf("%.2f", f/nsop)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1e%s\t%.0f\t%.0f\t%s\t\n", e.name, directive(k), worst, status, nsop, allocs, gflops)
		shapeLines = append(shapeLines, fmt.Sprintf("  %-15s %s", e.name, shapes(k)))
	}
	_ = tw.Flush()
	fmt.Println("\nshapes (batch | input -> output):")
	for _, l := range shapeLines {
		fmt.Println(l)
	}
	if failed > 0 {
		fmt.Fprintf(os.Stderr, "gallery: %d kernel(s) failed\n", failed)
		os.Exit(1)
	}
	fmt.Printf("\nall %d kernels match the interpreter for %d random seeds\n", len(entries()), *seeds)
}
