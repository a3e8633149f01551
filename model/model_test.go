package model

import (
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/spec"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

func mustStd(t *testing.T) *program.Program {
	t.Helper()
	p, err := program.Parse(StdSource())
	if err != nil {
		t.Fatalf("std.ocl: %v", err)
	}
	return p
}

func expand(t *testing.T, src string) (*Model, error) {
	t.Helper()
	p, err := program.Parse(src)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return Expand(p, mustStd(t))
}

const moons = `
layer net[h](x):
    let a1 = relu ({w1} * x + {b1 = 0.; o=[h]})
    let a2 = relu ({w2} * a1 + {b2 = 0.; o=[h]})
    return {w3} * a2 + {b3 = 0.}
let mlp = net[16]
loss train:
    input points : 32 | 2
    input labels : 32 | 1
    return hinge(mlp(points), labels)
entry predict:
    input p : 1 | 2
    return mlp(p)
sgd lr=0.1 momentum=0.9
`

func TestExpandMoons(t *testing.T) {
	m, err := expand(t, moons)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Entries) != 2 || len(m.Params) != 6 {
		t.Fatalf("entries %d params %d", len(m.Entries), len(m.Params))
	}
	want := "mlp.b1 mlp.b2 mlp.b3 mlp.w1 mlp.w2 mlp.w3"
	if got := strings.Join(SortedIDs(m.Params), " "); got != want {
		t.Errorf("params %s, want %s", got, want)
	}
	inf, err := m.Infer()
	if err != nil {
		t.Fatal(err)
	}
	shapes := map[string]string{}
	for i, e := range m.Entries {
		for _, id := range e.Params {
			shapes[id] = tensorShape(t, inf.Graphs[i], id)
		}
	}
	if shapes["mlp.w1"] != "2 -> 16" || shapes["mlp.w3"] != "16 -> 1" {
		t.Errorf("shapes %v", shapes)
	}
}

func tensorShape(t *testing.T, g *inference.Graph, name string) string {
	for _, n := range g.Named {
		if n.Name == name {
			return g.Tensors[n.Tensor].Shape.String()
		}
	}
	t.Fatalf("no tensor %s", name)
	return ""
}

func TestBareLayerInstance(t *testing.T) {
	m, err := expand(t, "let ln = layer_norm\nentry f:\n  input x : 4 | 3\n  return ln(x)\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(SortedIDs(m.Params), " "); got != "ln.beta ln.gamma" {
		t.Errorf("params %s", got)
	}
}

func TestNameClashes(t *testing.T) {
	for _, src := range []string{
		"loss l:\n  input x : 2\n  let c = x *. {c}\n  return c ++ \"...|... => 0\"\n",
		"loss l:\n  input x : 2\n  let c = x *. 2\n  return (c *. {c}) ++ \"...|... => 0\"\n",
		"loss l:\n  input x : 2\n  return (x *. {x}) ++ \"...|... => 0\"\n",
	} {
		if _, err := expand(t, src); err == nil || !strings.Contains(err.Error(), "already the name") {
			t.Errorf("%q: err = %v", src, err)
		}
	}
}

func TestLetAliasesParam(t *testing.T) {
	m, err := expand(t, "loss l:\n  input r : 3\n  let a = {a = normal; o=[3]}\n  return (a *. r) ++ \"...|... => 0\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Infer(); err != nil {
		t.Fatal(err)
	}
}

func TestExponentialExpansion(t *testing.T) {
	src := "layer a(x) = x + x\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p"} {
		src += "layer " + n + "(x) = " + prev + "(" + prev + "(x))\n"
		prev = n
	}
	src += "entry z:\n  input x : 2\n  return p(x)\n"
	if _, err := expand(t, src); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("err = %v", err)
	}
}

// TestRecursiveLayers: a layer applying itself, directly or through
// others, is an error at the application even when no entry point uses
// it; a layer named like a hiding argument, local or instance is not.
func TestRecursiveLayers(t *testing.T) {
	std, err := program.Parse(StdSource())
	if err != nil {
		t.Fatal(err)
	}
	entry := "entry e:\n    input x : 2\n    return x + {w}\n"
	for _, c := range []struct{ src, want string }{
		{"layer r(x) = r(x)\n" + entry, "1:14: layer r applies itself"},
		{"layer r(x) = r[2](x)\n" + entry, "1:14: layer r applies itself"},
		{"layer f(x) = g(x)\nlayer g(x) = relu (f(x))\n" + entry, "2:20: layer g applies f, which applies g again (recursive layers are not supported; cycle: [f g f])"},
		{"layer f(x) :\n    let i = f\n    return i(x)\n" + entry, "2:13: layer f applies itself"},
		{"layer a(x) = b(x)\nlayer b(x) = c(x)\nlayer c(x) = a(x)\n" + entry, "3:14: layer c applies a, which applies c again"},
	} {
		p, err := program.Parse(c.src)
		if err != nil {
			t.Fatalf("%q: %v", c.src, err)
		}
		_, err = Expand(p, std)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.src, err, c.want)
		}
	}
	for _, src := range []string{
		"layer f(x) = x *. 2\nlayer g(f) = f *. 3\n" + entry,
		"layer f(x) = x *. 2\nlayer g(x) :\n    let f = x *. 3\n    return f\n" + entry,
		"layer f(x) = dense[2](x)\nlayer g(x) = f(f(x))\n" + entry,
	} {
		p, err := program.Parse(src)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if _, err := Expand(p, std); err != nil {
			t.Errorf("%q: %v", src, err)
		}
	}
}

// TestOptimizerSettings: each optimizer's defaults, its settings, and the
// errors for settings that do not belong to it or are out of range.
func TestOptimizerSettings(t *testing.T) {
	const entry = "entry f:\n  input x : 2\n  return x\n"
	for _, c := range []struct {
		line string
		want Optim
	}{
		{"sgd lr=0.1 momentum=0.9 nesterov clip_norm=5", Optim{Kind: "sgd", LR: 0.1, Momentum: 0.9, Nesterov: true, ClipNorm: 5, Schedule: "constant"}},
		{"adam lr=0.001", Optim{Kind: "adam", LR: 0.001, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Schedule: "constant"}},
		{"adamw lr=0.001", Optim{Kind: "adamw", LR: 0.001, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01, Schedule: "constant"}},
		{"adamw lr=0.002 beta1=0.8 beta2=0.99 eps=1e-6 weight_decay=0 clip_norm=1 lr_end=0 steps=10",
			Optim{Kind: "adamw", LR: 0.002, Beta1: 0.8, Beta2: 0.99, Eps: 1e-6, ClipNorm: 1, Steps: 10, Schedule: "linear"}},
		{"adamw lr=6e-4 schedule=cosine warmup=100 steps=5000 lr_end=6e-5",
			Optim{Kind: "adamw", LR: 6e-4, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01, Schedule: "cosine", Warmup: 100, Steps: 5000, LREnd: 6e-5}},
		{"sgd lr=0.1 schedule=step step_size=30", Optim{Kind: "sgd", LR: 0.1, Schedule: "step", StepSize: 30, Gamma: 0.1}},
		{"sgd lr=0.1 schedule=step step_size=7 gamma=0.5 warmup=10", Optim{Kind: "sgd", LR: 0.1, Schedule: "step", StepSize: 7, Gamma: 0.5, Warmup: 10}},
		{"adam lr=0.1 warmup=50", Optim{Kind: "adam", LR: 0.1, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Schedule: "constant", Warmup: 50}},
	} {
		m, err := expand(t, entry+c.line+"\n")
		if err != nil {
			t.Errorf("%s: %v", c.line, err)
			continue
		}
		got := *m.Optim
		got.Pos = spec.Pos{}
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.line, got, c.want)
		}
	}
	for _, c := range []struct{ line, err string }{
		{"adam lr=0.1 momentum=0.9", `4:13: unknown adam setting "momentum" (known: lr, beta1, beta2, eps, weight_decay, clip_norm, schedule, lr_end, steps, warmup, step_size, gamma)`},
		{"adam lr=0.1 schedule=cosinus steps=9", "4:22: schedule must be constant, linear, cosine or step"},
		{"adam lr=0.1 schedule steps=9", "4:13: schedule must be constant, linear, cosine or step"},
		{"adam lr=0.1 steps=many", `4:19: adam setting steps takes a number, not "many"`},
		{"adam lr=0.1 schedule=cosine", "4:1: schedule=cosine needs steps"},
		{"adam lr=0.1 schedule=cosine steps=10 warmup=10", "4:1: warmup (10 steps) must end before steps (10)"},
		{"adam lr=0.1 schedule=linear steps=10", "4:1: lr_end and steps go together"},
		{"adam lr=0.1 schedule=step", "4:1: schedule=step needs step_size"},
		{"adam lr=0.1 schedule=step step_size=5 steps=100", "4:1: steps belongs to schedule=linear or cosine, not step"},
		{"adam lr=0.1 gamma=0.5", "4:1: step_size and gamma belong to schedule=step"},
		{"sgd lr=0.1 warmup=1.5", "4:12: warmup must be a non-negative integer"},
		{"sgd lr=0.1 schedule=step step_size=0", "4:26: step_size must be a positive integer"},
		{"adamw lr=0.1 nesterov", `4:14: adamw setting nesterov needs a value`},
		{"sgd lr=0.1 beta1=0.9", `4:12: unknown sgd setting "beta1"`},
		{"adam lr=0.1 beta2=1", "4:1: beta1 and beta2 must be below 1"},
		{"adam lr=0.1 eps=0", "4:1: eps must be positive"},
		{"sgd lr=0.1 clip_norm=0", "4:12: clip_norm must be positive"},
		{"adam beta1=0.5", "4:1: adam needs a learning rate"},
		{"adam lr=0.1 lr=0.2", "4:13: adam setting lr is given twice"},
		{"sgd lr=0.1\nadam lr=0.1", "5:1: the optimizer is set twice"},
	} {
		_, err := expand(t, entry+c.line+"\n")
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: err = %v, want %q", c.line, err, c.err)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"dense", "dense", 0}, {"dence", "dense", 1},
		{"kitten", "sitting", 3}, {"linaer", "linear", 2}, {"mlp", "mpl", 2}, {"héllo", "hello", 1},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := editDistance(tc.b, tc.a); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.b, tc.a, got, tc.want)
		}
	}
}

// TestUnknownLayerSuggestion: an unknown layer suggests the nearest
// layer of the model or the standard library, only when it is close.
func TestUnknownLayerSuggestion(t *testing.T) {
	for _, tc := range []struct{ call, want string }{
		{"dence[4](x)", `unknown layer "dence" (did you mean dense?)`},
		{"lineer[4](x)", `unknown layer "lineer" (did you mean linear?)`},
		{"mine2(x)", `unknown layer "mine2" (did you mean mine?)`},
		{"let n = lineer[4]\n  return n(x)", `unknown layer "lineer" (did you mean linear?)`},
		{"frobnicate(x)", `unknown layer "frobnicate"`},
	} {
		body := "return " + tc.call
		if strings.HasPrefix(tc.call, "let") {
			body = tc.call
		}
		src := "layer mine(x) = relu x\nentry e:\n  input x : 2\n  " + body + "\n"
		_, err := expand(t, src)
		if err == nil || !strings.HasSuffix(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want ... %s", tc.call, err, tc.want)
		}
	}
}

// TestBatchMismatch: inputs whose batch sizes differ are named when
// equal batch sizes would make the entry infer; an error that equal
// batch sizes do not fix is reported as it is.
func TestBatchMismatch(t *testing.T) {
	infer := func(src string) error {
		t.Helper()
		m, err := expand(t, src)
		if err != nil {
			t.Fatalf("expand: %v", err)
		}
		_, err = m.Infer()
		return err
	}
	err := infer("let net = mlp2[16, 16]\nloss train:\n    input points : 32 | 2\n    input labels : 16 | 1\n    return hinge(net(points), labels)\n")
	want := "4:20: input labels has batch size 16 but input points has batch size 32, and entry train combines them (at 5:12); declare the same batch size for both"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	err = infer("entry e:\n    input a : 4 | 3\n    input b : 2 | 5\n    return a + b\n")
	if err == nil || strings.Contains(err.Error(), "batch size") || !strings.Contains(err.Error(), "dimension mismatch") {
		t.Errorf("a mismatch equal batch sizes do not fix: got %v", err)
	}
}
