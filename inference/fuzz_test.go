package inference_test

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/pipeline"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// FuzzInfer feeds arbitrary programs to the whole pipeline (parser,
// elaboration, solver, closing). It must never panic, must terminate
// quickly, must fail only with an *inference.Error, and must be
// deterministic: a second run gives identical shapes.
func FuzzInfer(f *testing.F) {
	for _, s := range []string{
		"input x : 32 | 2 = range\nlet h = relu ({w} * x + {b = 0.; o=[16]})\n",
		"leaf a\nlet c = a ++ \"..r.. => ..r.., 1\"\n",
		"leaf a\nlet b = a +* \"..r..; ..r.., i => ..r..\" a\n",
		"input src : 7 = range\n{m} =:+ id src ~logic:\"a^b^c => b\"\n",
		"input x : 2 = range\ninput y : 3 = range\nlet c = (x, y) ++^ \"a; b => a^b^c\"\n",
		"input img : 9,9,1 = range\nlet o = (img +* \"... | 2*oh<+kh, 2*ow<+kw, ..ic..; kh, kw, ..ic.. -> ..oc.. => ... | oh, ow, ..oc..\" [\"kh\"; \"kw\"; \"oc\"] {k}) + {bias = 0}\ndim kh = 3\ndim kw = 3\ndim oc = 4\n",
		"leaf a\nleaf b\nlet c = a + b\nlet d = a *. (b ++ \"...|... => ...|..., 2\")\n",
		"input t1 : 4 = range\ninput t2 : 4 = range\n{t} =:+ id t1 ~logic:\"i => 2*i\"\nt =+ id t2 ~logic:\"i => 2*i + 1\"\n",
		genMLP(3), genTransformer(1),
		"input f : 8 = 1\nlet p = id f\nlet c = id p\ninput q : 2,8 = 1\nlet r = q *. c\n",
		"input x : 2 | 3 -> 4,5 = range\nleaf l\nlet y = {w; o=[2]} * flatten (x + l)\nlet z = flatten (x ++ \"... | ... -> a, b => ... | ... -> a, b, c\" [\"c\"]) +* \"... | ... -> k; k => ...\" {v}\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		start := time.Now()
		g, err := inference.InferSource(src)
		if d := time.Since(start); d > 200*time.Millisecond && os.Getenv("FUZZ_SLOW_LOG") != "" {
			if fh, err := os.OpenFile(os.Getenv("FUZZ_SLOW_LOG"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				fmt.Fprintf(fh, "%v %q\n", d, src)
				fh.Close()
			}
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("inference took %v", d)
		}
		// Every stage's state prints (the --dump printer), also before a
		// failing stage, and observing does not change the result.
		if p, perr := program.Parse(src); perr == nil {
			g3, err3 := inference.InferObserved(p, func(_ string, d func(io.Writer)) error {
				d(io.Discard)
				return nil
			})
			if fmt.Sprint(err3) != fmt.Sprint(err) || (err == nil && dump(g3) != dump(g)) {
				t.Fatalf("observed run: %v, want %v", err3, err)
			}
		}
		if err != nil {
			e, ok := inference.AsError(err)
			if !ok {
				t.Fatalf("error %v (%T) is not an *inference.Error", err, err)
			}
			if strings.Contains(e.Msg, "internal error") {
				t.Fatalf("internal error on a program: %v", err)
			}
			return
		}
		// Every tensor's provenance reads back, with as many axes as its
		// shape has.
		for _, tn := range g.Tensors {
			prov, ok := g.Provenance(tn.ID)
			if !ok {
				t.Fatalf("no provenance for %s", tn.Name)
			}
			for k, ds := range [3][]inference.Dim{tn.Shape.Batch, tn.Shape.Input, tn.Shape.Output} {
				if len(prov[k].Axes) != len(ds) {
					t.Fatalf("%s row %d: %d axes in the provenance, %d in the shape", tn.Name, k, len(prov[k].Axes), len(ds))
				}
			}
		}
		// Lemma 7.7: when shapes are solved, each operation's local
		// re-solve succeeds, so projection inference cannot fail; lowering
		// may only reject an ambiguous concatenation.
		res, err := pipeline.CompileGraph(g, pipeline.Options{})
		if !res.Projected {
			t.Fatalf("shape inference succeeded but projections failed: %v", err)
		}
		if err != nil && !strings.Contains(err.Error(), "ambiguous") {
			t.Fatalf("lowering failed: %v", err)
		}
		g2, err := inference.InferSource(src)
		if err != nil {
			t.Fatalf("second run failed: %v", err)
		}
		if a, b := dump(g), dump(g2); a != b {
			t.Fatalf("nondeterministic:\n%s\nvs\n%s", a, b)
		}
	})
}

func dump(g *inference.Graph) string {
	s := ""
	for _, n := range g.Named {
		s += fmt.Sprintf("%s %s %s\n", n.Name, n.Kind, g.Tensors[n.Tensor].Shape)
	}
	return s
}
