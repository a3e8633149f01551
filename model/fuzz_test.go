package model

import (
	"testing"

	"github.com/ocannlgen/ocannlgen/pipeline"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// FuzzModel: parsing, expanding and inferring any model text never
// panics; it either fails with an error or yields entries whose
// parameters have one shape each.
func FuzzModel(f *testing.F) {
	f.Add(moons)
	f.Add("layer f[a=2](x) = x *. a\nloss l:\ninput x : 2 | 3\nreturn (f(x) ++ \"...|... => 0\")\n")
	f.Add("layer r(x) = r(x)\nentry e:\ninput x : 2\nreturn r(x)\n")
	f.Add("let a = dense[4]\nlet b = a\nentry e:\ninput x : 1 | 2\nreturn a(b(x))\n")
	f.Add("entry e:\ninput x : 4 | 6,6,1\nreturn max_pool(conv2d_valid[2](x))\n")
	f.Add("let c = conv2d[2]\nloss t:\ninput x : 2 | 4,4,1\nreturn (linear[3](flatten(relu(c(x)))) ++ \"...|... => 0\")\n")
	f.Add("layer l[o](x) = {w = fan_in} * x + {b = fan_in(w); o=[o]}\nloss t:\ninput x : 2 | 3\nreturn (gelu(l[4](x)) ++ \"...|... => 0\")\nadamw lr=6e-4 schedule=cosine warmup=2 steps=9 lr_end=0\n")
	f.Add("let n = linear[2]\nloss t:\ninput x : 2 | 3\nreturn (n(x) ++ \"...|... => 0\")\nsgd lr=0.1 schedule=step step_size=3 gamma=0.5\n")
	f.Add("layer c[s](x) = x ++ \"$s*o<+k => o\" [\"k\"]\nentry e:\ninput x : 8\nreturn c[2](x)\n")
	std, err := program.Parse(StdSource())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 2000 {
			return
		}
		p, err := program.Parse(src)
		if err != nil {
			return
		}
		m, err := Expand(p, std)
		if err != nil {
			me, ok := err.(*Error)
			if !ok {
				t.Fatalf("Expand: error of type %T: %v", err, err)
			}
			checkCitations(t, me)
			return
		}
		inf, err := m.Infer()
		if err != nil {
			if me, ok := err.(*Error); ok {
				checkCitations(t, me)
			}
			return
		}
		for i, e := range m.Entries {
			for _, id := range e.Params {
				if s := paramShape(inf.Graphs[i], id); s.String() != inf.Shapes[id].String() {
					t.Fatalf("entry %s: %s has shape %s, model says %s", e.Name, id, s, inf.Shapes[id])
				}
			}
			if _, err := pipeline.CompileGraph(inf.Graphs[i], pipeline.Options{Goal: pipeline.Projected}); err != nil {
				return
			}
		}
	})
}

// checkCitations checks that every position an error cites is a
// position of the text, cited inside the message.
func checkCitations(t *testing.T, e *Error) {
	t.Helper()
	for _, r := range e.Related {
		if r.Pos.Line < 1 || r.Pos.Col < 1 || r.Off < 0 || r.Off > len(e.Msg) || r.Msg == "" {
			t.Fatalf("%v: bad related position %+v", e, r)
		}
	}
}
