package gen

import (
	"fmt"
	"go/types"
	"strings"
	"testing"
)

const sqLoss = `return (linear[1](x) *. linear[1](x)) ++ "...|... => 0"`

// TestLossWithoutParameter: a loss computed from inputs alone is an
// error at its entry line, also when another entry has parameters.
func TestLossWithoutParameter(t *testing.T) {
	mustFail(t, modelSource("A", "loss train:", "input points : 32 | 2", `return (points *. points) ++ "...|... => 0"`,
		"entry predict:", "input x : 1 | 2", "return linear[1](x)"), 4, 10, "the loss train depends on no parameter")
	mustFail(t, modelSource("A", "loss train:", "input x : 4 | 2", `return (x < {w; o=[2]}) ++ "...|... => 0"`), 4, 10, "depends on no parameter")
}

// TestEntryNameClashes: an entry point whose method would clash with a
// member or declaration the emitter generates is an error at the entry
// line; the list of clashing names comes from the generated code.
func TestEntryNameClashes(t *testing.T) {
	for _, name := range []string{"grads", "params", "init", "backward", "save", "marshalBinary", "paramTensors", "step", "lR", "trainStep", "update", "learningRate"} {
		t.Run(name, func(t *testing.T) {
			src := modelSource("A", "loss train:", "input x : 4 | 2", sqLoss, "entry "+name+":", "input x : 1 | 2", "return linear[1](x)", "sgd lr=0.1")
			mustFail(t, src, 7, 10, "entry point "+name+" would generate method")
		})
	}
	// Other names are free.
	mustGenerate(t, modelSource("A", "loss train:", "input x : 4 | 2", sqLoss, "entry score:", "input x : 1 | 2", "return linear[1](x)"))
}

// TestInputNameClashes: an input named like the receiver or a local of
// the generated methods, a Go keyword or a predeclared identifier is an
// error at its input line; other names generate Go that compiles.
func TestInputNameClashes(t *testing.T) {
	for _, name := range []string{"m", "l", "func", "type", "len", "float32", "math", "out", "loss", "nil", "x'", "_"} {
		t.Run(name, func(t *testing.T) {
			src := modelSource("A", "loss train:", "input "+name+" : 4 | 2", strings.ReplaceAll(sqLoss, "(x)", "("+name+")"), "sgd lr=0.1")
			mustFail(t, src, 5, 10, "input "+name+" of entry point train")
		})
	}
	// With run-time rows the methods take n and declare err and i: the
	// names the verification derives follow what the emitter generates.
	for _, name := range []string{"n", "err", "i"} {
		t.Run("rows-"+name, func(t *testing.T) {
			src := modelSource("A", "let net = linear[1]", "loss train:", "input "+name+" : <=4 | 2", "return (net("+name+") *. net("+name+")) ++ \"...|... => 0\"", "sgd lr=0.1")
			mustFail(t, src, 6, 10, "input "+name+" of entry point train")
		})
	}
	for _, name := range []string{"seed", "r", "w", "data", "rt", "io", "bytes", "s", "lr", "b", "err"} {
		t.Run(name, func(t *testing.T) {
			mustGenerate(t, modelSource("A", "loss train:", "input "+name+" : 4 | 2", strings.ReplaceAll(sqLoss, "(x)", "("+name+")"), "sgd lr=0.1"))
		})
	}
}

// TestFloat32Constants: initial values and optimizer constants beyond
// float32's range are errors at the parameter (or sgd line) of a float32
// model, and fine in a float64 model.
func TestFloat32Constants(t *testing.T) {
	mustFail(t, modelSource("A", "loss train:", "input x : 4 | 2", `return (x *. {w = 1e39}) ++ "...|... => 0"`), 6, 23, "the initial value 1e+39 is beyond the float32 range")
	mustFail(t, modelSource("A", "loss train:", "input x : 4 | 2", `return (x *. {w = [1; -1e39]}) ++ "...|... => 0"`), 6, 23, "the initial value -1e+39 is beyond the float32 range")
	mustFail(t, modelSource("A", "loss train:", "input x : 4 | 2", sqLoss, "sgd lr=0.1 weight_decay=1e39"), 7, 10, "sgd: 1e+39 is beyond the float32 range")
	src := strings.Replace(modelSource("A", "loss train:", "input x : 4 | 2", `return (x *. {w = 1e39}) ++ "...|... => 0"`), "//ocannl:model", "//ocannl:model float64", 1)
	mustGenerate(t, src)
}

// TestGeneratedNamesCollide: models whose generated declarations
// collide (A's parameter set ocannlAParams and model AParams's state),
// or a package declaration that a generated one would redeclare or an
// import would hide, are errors at the model line.
func TestGeneratedNamesCollide(t *testing.T) {
	a := modelSource("A", "loss train:", "input x : 4 | 2", sqLoss)
	src := a + "\n//ocannl:model\n//ocannl:entry e:\n//ocannl:input x : 1\n//ocannl:return x + {w}\ntype AParams struct{ ocannlAParams }\n"
	mustFail(t, src, 9, 10, "ocannlgen would generate ocannlAParams for both model A and model AParams")
	mustFail(t, a+"\ntype ocannlATrainLoss int\n", 3, 10, "ocannlATrainLoss is already declared")
	mustFail(t, modelSource("A", "loss train:", "input x : 4 | 2", sqLoss)+"\nvar rt = 1\n", 3, 10, "imports package rt, but the package declares rt")
}

// TestSizeBeyondCompilerLimit: a model or kernel whose generated values
// exceed what the Go compiler accepts (each tensor within inference's
// limits) is an error at its directive, for the target's word size.
func TestSizeBeyondCompilerLimit(t *testing.T) {
	// 2^47 float32 cells (2^49 bytes) twice, in a scratch and its gradient.
	src := modelSource("A", "loss train:", "input x : 134217728, 1048576 | 1", `return (x *. {w}) ++ "...|... => 0"`)
	mustFail(t, src, 3, 10, "more than the Go compiler allows in one value on 64-bit targets")
	// An intermediate of 2^47 float64 cells (2^50 bytes) in a function kernel.
	src = "package p\n\n//ocannl:expr (a +++ \"i; j => i j\" b) ++ \"i j => i\"\nfunc K(a *[16777216]float64, b *[8388608]float64, out *[16777216]float64) { ocannlK(a, b, out) }\n"
	mustFail(t, src, 3, 15, "more than the Go compiler allows")
	// On a 32-bit target 2^31 bytes are already too many; a small model is fine.
	p, err := loadSource(modelSource("A", "loss train:", "input x : 65536, 8192 | 1", `return (x *. {w}) ++ "...|... => 0"`))
	if err != nil {
		t.Fatal(err)
	}
	p.TypesSizes = types.SizesFor("gc", "386")
	if _, errs := generatePackage(p, Options{Check: true}, nil); len(errs) != 1 || !strings.Contains(errs[0].Msg, "on 32-bit targets") {
		t.Errorf("32-bit target: got %v, want a size error", ErrorList(errs))
	}
	p.TypesSizes = types.SizesFor("gc", "amd64")
	if _, errs := generatePackage(p, Options{Check: true}, nil); len(errs) != 0 {
		t.Errorf("64-bit target: %v", ErrorList(errs))
	}
}

// TestModelWithoutParameters: a model whose entries use no parameter
// still generates Go that compiles, optimizer included.
func TestModelWithoutParameters(t *testing.T) {
	mustGenerate(t, modelSource("A", "entry e:", "input x : 2", "return relu(x)", "sgd lr=0.1 momentum=0.9"))
	mustGenerate(t, modelSource("A", "entry e:", "input x : 2", "return relu(x)", "sgd lr=0.1 clip_norm=1"))
	mustGenerate(t, modelSource("A", "entry e:", "input x : 2", "return relu(x)", "adamw lr=0.1 clip_norm=1"))
}

// TestEntryReturnsItsInput: an entry returning a name bound to an input,
// a parameter or a number as it is is an error at its return
// expression; returning an input itself generates a copy.
func TestEntryReturnsItsInput(t *testing.T) {
	mustGenerate(t, modelSource("A", "entry e:", "input x : 2", "return x"))
	mustFail(t, modelSource("A", "entry e:", "input x : 2", "let y = x", "return y"), 7, 17, "entry e returns y, which no operation computes (it is the input x)")
	// A bare undefined name as the result (found by FuzzGenerate).
	mustFail(t, modelSource("A", "entry e:", "input x : 2", "return nope"), 6, 17, `entry e returns nope, which is not defined: undefined name "nope"`)
	mustFail(t, modelSource("A", "entry e:", "input x : 2", "let y = {w; o=[2]}", "return y"), 7, 17, "entry e returns y")
	mustFail(t, modelSource("A", "entry e:", "input x : 2", "let y = 3", "return y"), 7, 17, "entry e returns y")
	mustGenerate(t, modelSource("A", "entry e:", "input x : 2", "let y = x", "return id y"))
}

// TestUnusedLiteral: a literal the result does not use is neither
// initialized nor declared (Go rejected the unused local).
func TestUnusedLiteral(t *testing.T) {
	content := mustGenerate(t, modelSource("A", "entry predict:", "input x : 2", "let h2 = [(1, 2); (3, 4)]", "return x *. 2"))
	if strings.Contains(string(content), "lit_1") {
		t.Errorf("the unused literal is still generated:\n%s", content)
	}
	// The literal is read, but the emitter folds the read away (the
	// condition is a nonzero constant).
	content = mustGenerate(t, modelSource("A", "entry e:", "input x : 2 | 2", "let c = 3", `return (x *. where c c [1; 2]) ++ "...|...->... => 0"`))
	if strings.Contains(string(content), "lit_1 =") {
		t.Errorf("the literal whose reads were folded away is still initialized:\n%s", content)
	}
}

// TestSeveralClashes: clashes of several names in one model are each
// reported at their own line.
func TestSeveralClashes(t *testing.T) {
	src := modelSource("A", "loss train:", "input l : 4 | 2", strings.ReplaceAll(sqLoss, "(x)", "(l)"), "entry predict:", "input m : 1 | 2", "return linear[1](m)", "sgd lr=0.1")
	r, err := runPipeline(src)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range r.Errs {
		got = append(got, fmt.Sprintf("%d:%d", e.Pos.Line, e.Pos.Column))
	}
	if len(r.Errs) != 2 || got[0] != "5:10" || got[1] != "8:10" ||
		!strings.Contains(r.Errs[0].Msg, "input l of entry point train") || !strings.Contains(r.Errs[1].Msg, "input m of entry point predict") {
		t.Errorf("got %v", ErrorList(r.Errs))
	}
}
