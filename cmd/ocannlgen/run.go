package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/pipeline"
)

// compile infers shapes and projections and lowers the program.
func compile(src string) (*inference.Graph, *loopir.Program, error) {
	res, err := pipeline.Compile(src, pipeline.Options{})
	if err != nil {
		return nil, nil, err
	}
	return res.Graph, res.Loops, nil
}

// defaultMaxMiB is run's default memory budget: 4 GiB.
const defaultMaxMiB = 4096

// checkBudget estimates the memory run needs, before allocating any of
// it: the interpreter's buffers (margins included) in the element type,
// and the float64 copies of the named tensors it prints. It fails when
// the estimate exceeds the budget, naming the largest tensor.
func checkBudget(g *inference.Graph, prog *loopir.Program, f cliFlags) error {
	elem := 8.0
	if f.f32 {
		elem = 4
	}
	cells := func(dims []int) float64 {
		n := 1.0
		for _, d := range dims {
			n *= float64(d)
		}
		return n
	}
	total, largest, big := 0.0, 0.0, 0
	for i := range prog.Tensors {
		b := cells(prog.Tensors[i].BufDims) * elem
		total += b
		if b > largest {
			largest, big = b, i
		}
	}
	for _, n := range g.Named {
		total += cells(prog.Tensors[n.Tensor].Dims) * 8
	}
	limit := float64(f.maxMiB) * (1 << 20)
	if total <= limit {
		return nil
	}
	e := &inference.Error{Kind: inference.KindSize, Msg: fmt.Sprintf(
		"running this program needs about %.0f MiB (%s alone %.0f MiB), more than the budget of %d MiB; use smaller shapes, or raise the budget with --max-mib",
		math.Ceil(total/(1<<20)), prog.Tensors[big].Name, math.Ceil(largest/(1<<20)), f.maxMiB)}
	if big < len(g.Tensors) {
		e.Pos = g.Tensors[big].Pos
	}
	return e
}

// runProgram executes the lowered program in float64 (or float32) and
// returns each tensor's values in memory order.
func runProgram(prog *loopir.Program, f32 bool) (func(int) []float64, error) {
	if f32 {
		st, err := loopir.Run[float32](prog)
		if err != nil {
			return nil, err
		}
		return st.Values, nil
	}
	st, err := loopir.Run[float64](prog)
	if err != nil {
		return nil, err
	}
	return st.Values, nil
}

func runRun(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f, err := parseFlags(args, "json", "f32", "max-mib")
	if err != nil {
		fmt.Fprintf(stderr, "ocannlgen run: %v\n%s", err, usage)
		return 2
	}
	src, err := readInput(f.file, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "ocannlgen run: %v\n", err)
		return 2
	}
	g, prog, err := compile(src)
	if err != nil {
		return reportError(err, f.file, f.json, stdout, stderr)
	}
	if err := checkBudget(g, prog, f); err != nil {
		return reportError(err, f.file, f.json, stdout, stderr)
	}
	values, err := runProgram(prog, f.f32)
	if err != nil {
		return reportError(err, f.file, f.json, stdout, stderr)
	}
	if f.json {
		out := struct {
			Tensors []jsonTensor `json:"tensors"`
		}{Tensors: []jsonTensor{}}
		for _, n := range g.Named {
			jt := tensorJSON(g, n)
			jt.Values = jsonValues(values(n.Tensor))
			out.Tensors = append(out.Tensors, jt)
		}
		writeJSON(stdout, out)
		return 0
	}
	for i, n := range g.Named {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		t := g.Tensors[n.Tensor]
		fmt.Fprintf(stdout, "%s (%s): %s\n", n.Name, n.Kind, t.Shape)
		writeGrid(stdout, t.Shape.Dims(), values(n.Tensor))
	}
	return 0
}

// jsonValues maps non-finite values to large finite ones so the output
// stays valid JSON (encoding/json rejects NaN and infinities).
func jsonValues(vs []float64) []float64 {
	out := make([]float64, len(vs))
	for i, v := range vs {
		switch {
		case math.IsNaN(v):
			out[i] = 0
		case math.IsInf(v, 1):
			out[i] = math.MaxFloat64
		case math.IsInf(v, -1):
			out[i] = -math.MaxFloat64
		default:
			out[i] = v
		}
	}
	return out
}

// writeGrid prints values as a grid: the innermost axis along a line, the
// next one down the lines, and outer axes as labelled blocks.
func writeGrid(w io.Writer, dims []inference.Dim, vs []float64) {
	format := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	if len(dims) == 0 {
		if len(vs) > 0 {
			fmt.Fprintf(w, "  %s\n", format(vs[0]))
		}
		return
	}
	cols := dims[len(dims)-1].Size
	rows := 1
	if len(dims) >= 2 {
		rows = dims[len(dims)-2].Size
	}
	block := rows * cols
	outer := dims[:max(0, len(dims)-2)]
	nblocks := 1
	for _, d := range outer {
		nblocks *= d.Size
	}
	cells := make([]string, len(vs))
	width := 0
	for i, v := range vs {
		cells[i] = format(v)
		width = max(width, len(cells[i]))
	}
	idx := make([]int, len(outer))
	for b := range nblocks {
		if len(outer) > 0 {
			parts := make([]string, len(idx))
			for i, x := range idx {
				parts[i] = strconv.Itoa(x)
			}
			fmt.Fprintf(w, "  [%s, ...]\n", strings.Join(parts, ", "))
		}
		for r := range rows {
			var line strings.Builder
			line.WriteString("  ")
			for c := range cols {
				k := b*block + r*cols + c
				if k >= len(cells) {
					break
				}
				fmt.Fprintf(&line, " %*s", width, cells[k])
			}
			fmt.Fprintln(w, line.String())
		}
		for i := len(idx) - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < outer[i].Size {
				break
			}
			idx[i] = 0
		}
	}
}
