package schedule

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/target"
	"github.com/ocannlgen/ocannlgen/pipeline"
)

// permutations lists the orders of xs.
func permutations(xs []string) [][]string {
	if len(xs) <= 1 {
		return [][]string{append([]string(nil), xs...)}
	}
	var out [][]string
	for i := range xs {
		rest := append(append([]string(nil), xs[:i]...), xs[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]string{xs[i]}, p...))
		}
	}
	return out
}

// TestEveryLayoutHasAKernel: every layout of a two-operand product, the
// four of a matrix product and the 216 of a batched one (each operand's
// and the result's axes in every order), of at least MinPackMACs
// multiply-adds, runs in an assembly kernel, in float32 and float64: as
// written, or with one or both operands packed (Pack). All but the 8
// batched layouts with the batch axis innermost in both operands and the
// result run in a contraction kernel; those 8 in a reduction kernel
// across the batch.
func TestEveryLayoutHasAKernel(t *testing.T) {
	size := map[string]int{"b": 4, "i": 48, "j": 64, "k": 40}
	tiers := []target.CPU{target.AVX512(), target.AVX2()}
	dims := func(ax []string) string {
		var d []string
		for _, a := range ax {
			d = append(d, fmt.Sprint(size[a]))
		}
		return strings.Join(d, ", ")
	}
	var specs [][3][]string
	for _, a := range permutations([]string{"i", "j"}) {
		for _, b := range permutations([]string{"j", "k"}) {
			specs = append(specs, [3][]string{a, b, {"i", "k"}})
		}
	}
	for _, a := range permutations([]string{"b", "i", "j"}) {
		for _, b := range permutations([]string{"b", "j", "k"}) {
			for _, c := range permutations([]string{"b", "i", "k"}) {
				specs = append(specs, [3][]string{a, b, c})
			}
		}
	}
	packed := 0
	for _, elem := range []string{"float32", "float64"} {
		for _, sp := range specs {
			spec := fmt.Sprintf("%s; %s => %s", strings.Join(sp[0], ","), strings.Join(sp[1], ","), strings.Join(sp[2], ","))
			src := fmt.Sprintf("input a : %s = range\ninput c : %s = range\nlet o = a +* \"%s\" c", dims(sp[0]), dims(sp[1]), spec)
			res, err := pipeline.Compile(src, pipeline.Options{})
			if err != nil {
				t.Fatal(err)
			}
			keep := map[int]bool{}
			for _, n := range res.Loops.Graph.Named {
				keep[n.Tensor] = true
			}
			s := Plan(res.Loops, Options{Elem: elem, Targets: tiers, Keep: keep})
			n := s.Nests[len(s.Nests)-1]
			bLast := len(sp[2]) == 3 && sp[0][2] == "b" && sp[1][2] == "b" && sp[2][2] == "b"
			if n.Kernel.Family == GoLoops || (n.Kernel.Family == Contraction) == bLast {
				t.Errorf("%s %s: %s", elem, spec, n.Kernel.Describe(s.Tiers))
			}
			if len(s.Nests) > 1 {
				packed++
			}
		}
	}
	if packed == 0 || packed == 2*len(specs) {
		t.Errorf("%d of %d layouts packed", packed, 2*len(specs))
	}
	t.Logf("%d layouts, %d packed", 2*len(specs), packed)
}
