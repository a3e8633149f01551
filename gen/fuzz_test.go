package gen

import (
	"fmt"
	"go/types"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzGenerate drives the whole generator (directive scanning, model
// expansion, shape inference, projections, autodiff, lowering, emission,
// verification) on a package built from the fuzzer's input, and
// type-checks what it generates with rt importable. The oracle: either
// every error is positioned in the user's file and none is an internal
// error, or the generated file type-checks (errors the type checker then
// finds in the user's own file, such as a wrapper misusing the function
// it calls, are the user's); never a panic.
//
// The input is two parts. choices drives a grammar-aware generator that
// writes models and kernels from the language's productions and the
// standard layers (generator below); lines, when not empty, is one more
// model or annotated function written literally (one directive per
// line, without the //ocannl: prefix; the first line names the model's
// struct type, or is the function's declaration), so that seeds can pin
// the known hard cases and byte-level mutation explores their
// neighborhood. The seeds are in testdata/fuzz/FuzzGenerate: the classes
// of issue 13 (a loss without parameter, entry points and inputs named
// like generated members or locals, float32 constants out of range,
// colliding generated type names, element counts beyond the address
// space, an unused recursive layer), ordinary programs, and choices.
func FuzzGenerate(f *testing.F) {
	f.Fuzz(func(t *testing.T, lines string, choices []byte) {
		if len(lines) > 4000 || len(choices) > 4000 {
			return
		}
		src := fuzzSource(lines, choices)
		r, err := runPipeline(src)
		if err != nil {
			return // not a Go file (the literal model broke out of its comments)
		}
		if len(r.Errs) > 0 {
			for _, e := range r.Errs {
				if filepath.Base(e.Pos.Filename) != "p.go" || e.Pos.Line < 1 || e.Msg == "" || strings.Contains(e.Msg, "internal error") {
					t.Fatalf("unpositioned or internal error %v\nall errors:\n%v\nsource:\n%s", e, ErrorList(r.Errs), src)
				}
			}
			return
		}
		if r.Content == nil {
			return // nothing annotated
		}
		// Errors in the user's file (a wrapper that misuses the function
		// it calls, which only now exists) are the user's to fix.
		if errs := generatedFileErrors(typeCheckGenerated(src, r.Content, r.Other)); len(errs) > 0 {
			t.Fatalf("generation succeeded but the output does not type-check: %v\nsource:\n%s\ngenerated:\n%s", errs, src, r.Content)
		}
	})
}

// generatedFileErrors keeps the errors located in the generated file.
func generatedFileErrors(errs []error) []error {
	var out []error
	for _, err := range errs {
		if te, ok := err.(types.Error); !ok || filepath.Base(te.Fset.Position(te.Pos).Filename) == OutputFile {
			out = append(out, err)
		}
	}
	return out
}

// fuzzSource builds the package: the literal model, then what the
// choices generate.
func fuzzSource(lines string, choices []byte) string {
	g := &progGen{c: choices}
	// Sizes and dims may name these constants.
	g.w("package p\n\nconst (\n\tHidden = 8\n\tBig    = 1 << 40\n\tNeg    = -1\n)\n\n")
	if ls := strings.Split(lines, "\n"); strings.HasPrefix(lines, "func ") {
		// An annotated function: its declaration, then its directives.
		for _, l := range ls[1:] {
			g.w("//ocannl:%s\n", l)
		}
		g.w("%s\n\n", ls[0])
	} else if lines != "" {
		g.w("//ocannl:model\n")
		for _, l := range ls[1:] {
			g.w("//ocannl:%s\n", l)
		}
		g.w("type %s struct{ ocannl%s }\n\n", ls[0], ls[0])
	}
	for range g.n(3) {
		g.model()
	}
	for range g.n(3) {
		g.kernel()
	}
	return g.b.String()
}

// progGen writes directives from the choices, reading one byte per
// decision (zero once they run out).
type progGen struct {
	c     []byte
	b     strings.Builder
	scope []string // tensor names usable in expressions
	nets  []string // model-level instances
	fns   []string // user layers (name and arity 1)
	used  map[string]bool
	id    int
}

// name picks one of xs, usually one not used yet in the namespace ns.
func (g *progGen) name(ns string, xs ...string) string {
	if g.used == nil {
		g.used = map[string]bool{}
	}
	n := g.pick(xs...)
	if g.used[ns+" "+n] && g.n(4) != 3 {
		n = g.fresh(n)
	}
	g.used[ns+" "+n] = true
	return n
}

func (g *progGen) w(format string, args ...any) { fmt.Fprintf(&g.b, format, args...) }

// n returns a choice in [0, k).
func (g *progGen) n(k int) int {
	if len(g.c) == 0 {
		return 0
	}
	v := int(g.c[0])
	g.c = g.c[1:]
	return v % k
}

func (g *progGen) pick(xs ...string) string { return xs[g.n(len(xs))] }

func (g *progGen) fresh(base string) string {
	g.id++
	return fmt.Sprintf("%s%d", base, g.id)
}

// size is an axis size: mostly small, sometimes at or past a limit.
func (g *progGen) size() string {
	return g.pick("2", "3", "4", "1", "8", "16", "5", "0", "65536", "2147483648", "134217728", "1048576", "Hidden", "Big", "Neg")
}

// shape is an input's shape: batch | [input ->] output.
func (g *progGen) shape() string {
	switch g.n(8) {
	case 6:
		return g.pick("2 | 4, 4, 1", "1 | 6, 6, 2", "2, 4 | 8", "1, 3 | 4", "4 | 2 -> 3",
			"<=4 | 2", "<=16 | 4, 4, 1", "<=8, 2 | 3", "2 | <=3", "<=Hidden | 2", "<=0 | 2")
	case 7:
		return g.pick("4", "2, 3", "1", "3 -> 2", "8 | 1")
	}
	var rows []string
	for range 1 + g.n(2) {
		rows = append(rows, g.size())
	}
	s := g.size() + " | " + strings.Join(rows, ", ")
	if g.n(4) == 0 {
		s = g.size() + " | " + g.size() + " -> " + strings.Join(rows, ", ")
	}
	return s
}

// model writes one model.
func (g *progGen) model() {
	name := g.name("decl", "M", "Net", "A", "AParams", "ATrain", "Model", "Moons", "B")
	g.id++
	model := fmt.Sprint(g.id)
	g.w("//ocannl:model%s\n", g.pick("", "", " float64", " float32"))
	g.nets, g.fns = nil, nil
	for range g.n(2) {
		g.layer()
	}
	for range g.n(2) {
		net := g.pick("net", "enc", "head")
		g.w("//ocannl:let %s = %s\n", net, g.pick("mlp2[4, 4]", "linear[2]", "dense[3]", "layer_norm", "linear[1]"))
		g.nets = append(g.nets, net)
	}
	hasLoss := false
	for range 1 + g.n(3) {
		loss := !hasLoss && g.n(2) == 0
		hasLoss = hasLoss || loss
		g.entry(model, loss)
	}
	switch g.n(4) {
	case 0:
		g.w("//ocannl:sgd lr=%s%s%s%s\n", g.pick("0.1", "0.01", "1e39"), g.pick("", " momentum=0.9", " momentum=0.5 nesterov"),
			g.pick("", " weight_decay=0.0001", " lr_end=0.01 steps=100", " weight_decay=1e39"), g.pick("", " clip_norm=1"))
	case 1:
		g.w("//ocannl:%s lr=0.001%s%s\n", g.pick("adam", "adamw"), g.pick("", " beta1=0.8 beta2=0.99", " eps=1e-50", " eps=1e39", " weight_decay=0.01"),
			g.pick("", " clip_norm=0.5", " lr_end=0 steps=10"))
	}
	g.w("type %s struct{ ocannl%s }\n\n", name, name)
}

// layer writes a user layer.
func (g *progGen) layer() {
	name := g.pick("f", "g", "r", "dense")
	switch g.n(4) {
	case 0:
		g.w("//ocannl:layer %s[a=2](x) = x *. a\n", name)
	case 1:
		g.w("//ocannl:layer %s(x) = relu ({w} * x + {b = 0.; o=[%s]})\n", name, g.size())
	case 2:
		g.w("//ocannl:layer %s(x) = %s(x)\n", name, g.pick(name, "f", "g", "r"))
	default:
		g.w("//ocannl:layer %s[o=3](x) :\n//ocannl:let y = {w} * x\n//ocannl:return y + {b = %s; o=[o]}\n", name, g.pick("0.", "1e39", "[1; 2; 3]"))
	}
	g.fns = append(g.fns, name)
}

// entry writes an entry point or the loss.
func (g *progGen) entry(model string, loss bool) {
	verb := "entry"
	if loss {
		verb = "loss"
	}
	entry := g.name("entry"+model, "train", "predict", "score", "grads", "params", "step", "lR", "init", "m", "backward", "e", "runner", "saveCheckpoint", "gradNorm")
	g.w("//ocannl:%s %s:\n", verb, entry)
	g.scope = nil
	for range 1 + g.n(2) {
		in := g.name("input"+model+entry, "x", "y", "points", "labels", "m", "l", "out", "loss", "len", "math", "func", "w", "rt", "seed", "n", "err", "i")
		g.w("//ocannl:input %s : %s\n", in, g.shape())
		g.scope = append(g.scope, in)
	}
	for range g.n(3) {
		v := g.fresh("h")
		g.w("//ocannl:let %s = %s\n", v, g.expr(2))
		g.scope = append(g.scope, v)
	}
	if g.n(8) == 7 {
		g.w("//ocannl:dim %s = %s\n", g.pick("d", "k"), g.size())
	}
	ret := g.expr(3)
	if loss && g.n(4) != 0 {
		ret = "(" + ret + ") ++ \"...|... => 0\""
	}
	g.w("//ocannl:return %s\n", ret)
}

// expr writes an expression of at most depth levels.
func (g *progGen) expr(depth int) string {
	if depth <= 0 || g.n(3) == 0 {
		return g.atom()
	}
	a := g.expr(depth - 1)
	switch g.n(12) {
	case 9:
		return g.pick("conv2d[2]", "conv2d_valid[2, k=2]", "max_pool", "avg_pool[window=2, stride=1]", "attention[2, 2, 2]", "conv2d[1, k=1, stride=2]") + "(" + a + ")"
	case 10:
		switch g.n(5) {
		case 0:
			return "((" + a + ") **. " + g.pick("2", "-0.5", "0.5") + ")"
		case 1:
			return "((" + a + ") " + g.pick("<", "=", "<>") + " (" + g.expr(depth-1) + "))"
		case 2:
			return "(fma (" + a + ") (" + g.expr(depth-1) + ") (" + g.atom() + "))"
		case 3:
			return "((" + a + ") @| " + g.pick("0", "1", "3") + ")"
		default:
			return "masked_attention[1, 2, 2](" + a + ", " + g.expr(depth-1) + ")"
		}
	case 11:
		return "((" + a + ") ++ \"...|... => ...|0\", (" + g.expr(depth-1) + ") ++ \"...|... => ...|0\") ++^ " + g.pick(`"...|p; ...|q => ...|p^q"`, `"p; q => p^q"`)
	case 0:
		return g.pick("relu", "exp", "tanh", "neg", "sqrt", "log", "id") + " (" + a + ")"
	case 1:
		return "(" + a + " " + g.pick("+", "-", "*.", "/.", "*") + " " + g.expr(depth-1) + ")"
	case 2:
		return "(" + a + ") ++ " + g.pick(`"...|... => 0"`, `"...|...->... => 0"`, `"ij => ji"`, `"... | ... => ... | 0"`, `"...|..d.. => ...|0" ["d"]`, `"a^b => a"`)
	case 3:
		return "(" + a + ") +* " + g.pick(`"...|i; ...|i => ...|0"`, `"i,j; j,k => i,k"`, `"...|...; ...|... => ...|..."`) + " (" + g.expr(depth-1) + ")"
	case 4:
		return g.pick("dense[2]", "linear[3]", "softmax", "log_softmax", "layer_norm", "mlp2[2, 2]", "linear[1]") + "(" + a + ")"
	case 5:
		return g.pick("hinge", "cross_entropy") + "(" + a + ", " + g.expr(depth-1) + ")"
	case 6:
		if len(g.nets) > 0 {
			return g.pick(g.nets...) + "(" + a + ")"
		}
		return a
	case 7:
		if len(g.fns) > 0 {
			return g.pick(g.fns...) + "(" + a + ")"
		}
		return "(" + a + ") @^^ \"...|... => ...|0\""
	default:
		return "(where (" + a + ") (" + g.expr(depth-1) + ") (" + g.atom() + "))"
	}
}

// atom writes a name, a number or an inline parameter.
func (g *progGen) atom() string {
	switch g.n(6) {
	case 0, 1, 2:
		if len(g.scope) > 0 {
			return g.pick(g.scope...)
		}
		return "1"
	case 3:
		return g.pick("0.5", "2", "1e39", "-1", "0", "dim d", "[1; 2]", "[(1, 2); (3, 4)]", "[1; 2; 3; 4]")
	case 4:
		p := g.fresh("w")
		return "{" + p + g.pick("", " = kaiming", " = xavier", " = normal", " = 0.", " = 1e39", " = [1; 2]", "; o=["+g.size()+"]",
			"; o=[2]; i=[2]", " = uniform; b=[2]; o=[1]", " = -1e39; o=[3]") + "}"
	default:
		return "{" + g.fresh("b") + " = 0.; o=[" + g.size() + "]}"
	}
}

// kernel writes an annotated function from a template whose sizes the
// choices may break.
func (g *progGen) kernel() {
	name := g.name("decl", "K", "matMul", "F", "AParams")
	el := g.pick("float32", "float64")
	d := func() string {
		if g.n(5) == 4 {
			return g.size()
		}
		return "4"
	}
	arr := func(dims ...string) string { return "*[" + strings.Join(dims, "][") + "]" + el }
	var dirs, params []string
	switch g.n(6) {
	case 0:
		dirs = []string{`einsum "i,j; j,k => i,k"`}
		params = []string{"a " + arr(d(), d()), "b " + arr(d(), d()), "out " + arr(d(), d())}
	case 1:
		dirs = []string{`einmax "i,j => i"`}
		params = []string{"a " + arr(d(), d()), "out " + arr(d())}
	case 2:
		dirs = []string{"expr relu (x *. y + b)"}
		params = []string{"x " + arr(d(), d()), "y " + arr(d(), d()), "b " + arr(d()), "out " + arr(d(), d())}
	case 3:
		dirs = []string{`expr (a, b) ++^ "p; q => p^q"`}
		params = []string{"a " + arr(d()), "b " + arr(d()), "out " + arr("8")}
	case 4:
		dirs = []string{`do out =: id a ~logic:"i => 2*i"`, "do out " + g.pick("=+", "=:+", "=@^", "=*", "=-") + " id b ~logic:\"i => 2*i + 1\""}
		params = []string{"a " + arr(d()), "b " + arr(d()), "out " + arr("8")}
	default:
		dirs = []string{`einsum "i,j; j => i"`, "dims i=" + g.pick("Hidden", "8", "Big", "2147483648", "Neg") + " j=4"}
		params = []string{"w []" + el, "x " + arr(d()), "out []" + el}
		if g.n(3) == 2 {
			dirs = append(dirs, "shape out "+g.pick("Hidden", "8", "4 -> 2", "Neg"))
		}
	}
	var args []string
	for _, p := range params {
		args = append(args, strings.Fields(p)[0])
	}
	g.w("// %s is generated.\n//\n", name)
	for _, dir := range dirs {
		g.w("//ocannl:%s\n", dir)
	}
	g.w("func %s(%s) { ocannl%s(%s) }\n\n", name, strings.Join(params, ", "), strings.ToUpper(name[:1])+name[1:], strings.Join(args, ", "))
}
