package inference_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/inference"
)

// genMLP returns a deep MLP program: each layer is relu(w*h + b), with
// every weight's shape inferred from use (3 operations per layer).
func genMLP(layers int) string {
	var b strings.Builder
	b.WriteString("input x : 32 | 64 = range\nlet h0 = x\n")
	for i := 1; i <= layers; i++ {
		fmt.Fprintf(&b, "let h%d = relu ({w%d} * h%d + {b%d = 0; o=[%d]})\n", i, i, i-1, i, 32+i%7)
	}
	fmt.Fprintf(&b, "let loss = h%d ++ \"...|... => 0\"\n", layers)
	return b.String()
}

// genTransformer returns a stack of post-norm attention blocks written out
// in the program language (about 30 operations per block), with shapes of
// all projections inferred from use.
func genTransformer(blocks int) string {
	var b strings.Builder
	b.WriteString("input x : 2,8 | 64 = range\nlet y0 = x\n")
	for i := 1; i <= blocks; i++ {
		p := fmt.Sprintf("l%d_", i)
		prev := fmt.Sprintf("y%d", i-1)
		fmt.Fprintf(&b, "let %sq = {%swq} * %s\n", p, p, prev)
		fmt.Fprintf(&b, "let %sk = {%swk} * %s\n", p, p, prev)
		fmt.Fprintf(&b, "let %sv = {%swv} * %s\n", p, p, prev)
		fmt.Fprintf(&b, "let %ss = (%sq +* \" ... s | h d; ... t | h d => ... s | t -> h\" [\"h\"; \"d\"] %sk) /. sqrt (dim d)\n", p, p, p)
		b.WriteString("dim h = 4\ndim d = 16\n")
		fmt.Fprintf(&b, "let %smx = %ss @^^ \" ... | t -> ... => ... | 0 -> ...\"\n", p, p)
		fmt.Fprintf(&b, "let %sex = exp (%ss - %smx)\n", p, p, p)
		fmt.Fprintf(&b, "let %sa = %sex /. (%sex ++ \" ... | t -> ... => ... | 0 -> ...\")\n", p, p, p)
		fmt.Fprintf(&b, "let %sho = %sa +* \" ... s | t -> h; ... t | h e => ... s | h e\" [\"e\"] %sv\n", p, p, p)
		b.WriteString("dim e = 16\n")
		fmt.Fprintf(&b, "let %sr = %s + ({%swo} * %sho)\n", p, prev, p, p)
		fmt.Fprintf(&b, "let %smean = %sr ++ \" ... | ..m.. => ... | 0 \" [\"m\"]\n", p, p)
		fmt.Fprintf(&b, "let %sc = (%sr - %smean) /. dim m\n", p, p, p)
		fmt.Fprintf(&b, "let %svar = (%sc *. %sc) ++ \" ... | ... => ... | 0 \"\n", p, p, p)
		fmt.Fprintf(&b, "let %sn = %sc /. sqrt (%svar + 0.00001)\n", p, p, p)
		fmt.Fprintf(&b, "let %sln = ({%sg = 1} *. %sn) + {%sbeta = 0}\n", p, p, p, p)
		fmt.Fprintf(&b, "let %sf = {%swf2} * relu (({%swf} * %sln) + {%sbf = 0; o=[128]})\n", p, p, p, p, p)
		fmt.Fprintf(&b, "let y%d = %sln + %sf\n", i, p, p)
	}
	fmt.Fprintf(&b, "let loss = y%d ++ \"...|... => 0\"\n", blocks)
	return b.String()
}

func opsOf(tb testing.TB, src string) int {
	g, err := inference.InferSource(src)
	if err != nil {
		tb.Fatalf("inference failed: %v", err)
	}
	return len(g.Ops)
}

func TestGeneratedProgramsInfer(t *testing.T) {
	g, err := inference.InferSource(genTransformer(2))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range g.Named {
		if n.Name == "l2_wq" {
			if got := g.Tensors[n.Tensor].Shape.String(); got != "64 -> 4,16" {
				t.Errorf("l2_wq: %s, want 64 -> 4,16", got)
			}
		}
		if n.Name == "y2" {
			if got := g.Tensors[n.Tensor].Shape.String(); got != "2,8 | 64" {
				t.Errorf("y2: %s, want 2,8 | 64", got)
			}
		}
	}
	if _, err := inference.InferSource(genMLP(3)); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkInfer measures inference cost against program size. The
// reported ops/run metric is the number of operations in the program.
func BenchmarkInfer(b *testing.B) {
	for _, tc := range []struct {
		name string
		src  string
	}{
		{"mlp/100ops", genMLP(33)},
		{"mlp/1000ops", genMLP(333)},
		{"mlp/10000ops", genMLP(3333)},
		{"transformer/100ops", genTransformer(4)},
		{"transformer/1000ops", genTransformer(36)},
		{"transformer/10000ops", genTransformer(360)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			n := opsOf(b, tc.src)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := inference.InferSource(tc.src); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n), "ops")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/op-node")
		})
	}
}
