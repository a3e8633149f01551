package schedule

import (
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
// out; a map over an inlined temporary runs in the AVX2 tier only.
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
	if c := Choose(tiers(), p, loops, st, Query{Elem: "float32", Inlined: true}); c.Family != Map || !c.Map.Spec.AVX2Only {
		t.Errorf("an inlined map: %v", c.Family)
	}
	p, loops, st = lastNest(t, nests[2].src)
	if c := Choose([]asm.Config{asm.AVX512()}, p, loops, st, Query{Elem: "float32"}); c.Family == Reduce {
		t.Errorf("a reduction kernel without the AVX2 tier")
	}
}

// TestExplainIsChoose: the explain output (`ocannlgen infer --kernels`)
// describes each nest with Choose's answer.
func TestExplainIsChoose(t *testing.T) {
	for _, c := range nests {
		res, err := pipeline.Compile(c.src, pipeline.Options{})
		if err != nil {
			t.Fatal(err)
		}
		out := Explain(res.Loops, "float32", target.AVX512(), target.AVX2())
		p, loops, st := lastNest(t, c.src)
		ch := Choose(tiers(), p, loops, st, Query{Elem: "float32"})
		if want := ch.Describe(tiers()); c.want != GoLoops && !strings.Contains(out, want) {
			t.Errorf("%s: the explanation lacks %q:\n%s", c.name, want, out)
		}
		if c.want == GoLoops && !strings.Contains(out, "Go loops (") {
			t.Errorf("%s: %s", c.name, out)
		}
	}
}
