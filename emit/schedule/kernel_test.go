package schedule

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/emit/target"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/pipeline"
)

// lastNest lowers src and returns its last operation's first loop nest.
func lastNest(t *testing.T, src string) (*loopir.Program, []*loopir.For, *loopir.Store) {
	t.Helper()
	res, err := pipeline.Compile(src, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Loops
	for _, s := range p.Ops[len(p.Ops)-1].Body {
		if f, ok := s.(*loopir.For); ok {
			loops, st, ok := loopir.PerfectNest(f)
			if !ok {
				t.Fatalf("not a perfect nest:\n%s", p)
			}
			return p, loops, st
		}
	}
	t.Fatalf("no loop nest:\n%s", p)
	return nil, nil, nil
}

func tiers() []asm.Config { return []asm.Config{asm.AVX512(), asm.AVX2()} }

var nests = []struct {
	name, src string
	want      Family
}{
	{"matmul", "input a : 64, 48 = range\ninput b : 48, 32 = range\nlet c = a +* \"i,j; j,k => i,k\" b", Contraction},
	{"relu of a row", "input x : 8 | 512 = range\nlet y = relu x", Map},
	{"row sums", "input x : 64, 256 = range\nlet s = x ++ \"i,j => i\"", Reduce},
	{"too small a product", "input a : 4, 4 = range\ninput b : 4, 4 = range\nlet c = a +* \"i,j; j,k => i,k\" b", GoLoops},
}

// TestChooseTable: Choose picks the family the nest's shape calls for,
// and is the first family of the table whose Try accepts the nest (the
// one function behind every kernel decision).
func TestChooseTable(t *testing.T) {
	for _, c := range nests {
		t.Run(c.name, func(t *testing.T) {
			p, loops, st := lastNest(t, c.src)
			q := Query{Elem: "float32"}
			got := Choose(tiers(), p, loops, st, q)
			if got.Family != c.want {
				t.Fatalf("Choose = %v, want %v", got.Family, c.want)
			}
			first := GoLoops
			for _, f := range families {
				if _, ok := Try(f.family, tiers(), p, loops, st, q); ok {
					first = f.family
					break
				}
			}
			if first != got.Family {
				t.Errorf("the first family Try accepts is %v, Choose says %v", first, got.Family)
			}
			if Choose(nil, p, loops, st, q).Family != GoLoops {
				t.Errorf("without tiers the nest must run as Go loops")
			}
			if d := got.Describe(tiers()); (d == "") != (c.want == GoLoops) {
				t.Errorf("Describe = %q", d)
			}
		})
	}
}

// TestQuery: what the emitter knows changes the answer as documented: a
// +0 pre-fill is absorbed by a storing contraction, another value is
// filled first; a map absorbs none; a constant operand rules a kernel
// out; a map over an inlined temporary runs in every tier.
func TestQuery(t *testing.T) {
	p, loops, st := lastNest(t, nests[0].src)
	zero, one := 0.0, 1.0
	if c := Choose(tiers(), p, loops, st, Query{Elem: "float32", Init: &zero}); !c.Overwrite || c.PreFill {
		t.Errorf("+0 pre-fill: Overwrite %v PreFill %v", c.Overwrite, c.PreFill)
	}
	if c := Choose(tiers(), p, loops, st, Query{Elem: "float32", Init: &one}); c.Overwrite || !c.PreFill {
		t.Errorf("pre-fill 1: Overwrite %v PreFill %v", c.Overwrite, c.PreFill)
	}
	a := st.Value.(*loopir.Apply).Args[0].(*loopir.Load).Tensor
	if c := Choose(tiers(), p, loops, st, Query{Elem: "float32", Const: func(t int) bool { return t == a }}); c.Family != GoLoops {
		t.Errorf("a constant operand: %v, want Go loops", c.Family)
	}
	p, loops, st = lastNest(t, nests[1].src)
	if c := Choose(tiers(), p, loops, st, Query{Elem: "float32", Init: &zero}); c.Family == Map {
		t.Errorf("a map absorbed a pre-fill")
	}
	if c := Choose(tiers(), p, loops, st, Query{Elem: "float32", Inlined: true}); c.Family != Map || c.Map.Spec.AVX2Only || !c.Map.Spec.EmitsIn(asm.AVX512()) {
		t.Errorf("an inlined map: %v (want a map in every tier)", c.Family)
	}
	p, loops, st = lastNest(t, nests[2].src)
	if c := Choose([]asm.Config{asm.AVX512()}, p, loops, st, Query{Elem: "float32"}); c.Family != Reduce {
		t.Errorf("no reduction kernel in the AVX-512 tier alone: %v", c.Family)
	}
}

// TestExplainIsPlan: the explain output (`ocannlgen infer --kernels`)
// is the kernel view of the program's schedule: each nest's kernel as
// Plan chose it (Choose, with the fills the nest absorbs).
func TestExplainIsPlan(t *testing.T) {
	for _, c := range nests {
		res, err := pipeline.Compile(c.src, pipeline.Options{})
		if err != nil {
			t.Fatal(err)
		}
		out := Explain(res.Loops, "float32", target.AVX512(), target.AVX2())
		keep := map[int]bool{}
		for _, n := range res.Loops.Graph.Named {
			keep[n.Tensor] = true
		}
		s := Plan(res.Loops, Options{Elem: "float32", Targets: []target.CPU{target.AVX512(), target.AVX2()}, Keep: keep})
		if got := s.Nests[len(s.Nests)-1].Kernel.Family; got != c.want {
			t.Errorf("%s: the schedule's kernel is %v, want %v", c.name, got, c.want)
		}
		for _, n := range s.Nests {
			if want := "  " + n.kernelLine(s) + "\n"; !strings.Contains(out, want) {
				t.Errorf("%s: the explanation lacks %q:\n%s", c.name, want, out)
			}
		}
	}
}

// TestPlanSplit: the schedule of an MLP layer's product (32x128 cells,
// K=784: 2^21.6 multiply-adds, over the size rule) splits the loop of its
// 128 output units into 8 parts of 16 (the longest splittable loop with
// the best balance), and prints it; the product of a tiny layer stays
// serial, and a serial schedule prints no parallel line.
func TestPlanSplit(t *testing.T) {
	res, err := pipeline.Compile("input x : 32 | 784 = range\ninput w : 784 -> 128 = range\nlet h = w * x", pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	keep := map[int]bool{}
	for _, n := range res.Loops.Graph.Named {
		keep[n.Tensor] = true
	}
	tiers := []target.CPU{target.AVX512(), target.AVX2()}
	// h a local of 16 KiB on the stack: the pool cannot share it.
	if n := Plan(res.Loops, Options{Elem: "float32", Targets: tiers, Parallel: true}).Nests[0]; !n.Worth || !n.Stack || n.Split != nil {
		t.Errorf("with h on the stack: worth %v stack %v split %v", n.Worth, n.Stack, n.Split)
	}
	s := Plan(res.Loops, Options{Elem: "float32", Targets: tiers, Parallel: true, Keep: keep})
	if len(s.Nests) != 1 {
		t.Fatalf("%d nests:\n%s", len(s.Nests), s)
	}
	n := s.Nests[0]
	if !n.Worth || n.Stack || n.Split == nil || n.Split.Extent != 128 || n.Parts != 8 || n.Kernel.Family != Contraction || n.FillMode != FillFolded {
		t.Fatalf("nest: worth %v split %v parts %d kernel %v fill %v\n%s", n.Worth, n.Split, n.Parts, n.Kernel.Family, n.FillMode, s)
	}
	if m := Plan(res.Loops, Options{Elem: "float32", Targets: tiers, Parallel: true, Scratch: true}).Nests[0]; m.Split == nil {
		t.Errorf("with a scratch, the nest is not split")
	}
	if !strings.Contains(s.String(), fmt.Sprintf("parallel: i%d split into 8 parts of 16\n", n.Split.Var)) {
		t.Errorf("the printed schedule lacks the split:\n%s", s)
	}
	res, err = pipeline.Compile("input x : 2 | 8 = range\ninput w : 8 -> 4 = range\nlet h = w * x", pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s = Plan(res.Loops, Options{Elem: "float32", Parallel: true})
	if n := s.Nests[0]; n.Worth || n.Split != nil || n.Kernel.Family != GoLoops {
		t.Errorf("tiny layer: worth %v split %v kernel %v", n.Worth, n.Split, n.Kernel.Family)
	}
	if s := Plan(res.Loops, Options{Elem: "float32"}); strings.Contains(s.String(), "parallel:") {
		t.Errorf("a serial schedule prints a parallel line:\n%s", s)
	}
}
