package explain

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/gen"
)

func buildFile(t *testing.T, path string) *Page {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return BuildFile(File{Name: path, Text: string(src)}, Options{Command: "test"})
}

func tensorNamed(e *Entry, name string) *Tensor {
	for i := range e.Tensors {
		if e.Tensors[i].Name == name {
			return &e.Tensors[i]
		}
	}
	return nil
}

// TestBuildProgram checks the page of examples/programs/mlp.ocl: shapes,
// what sized the parameters, projections and schedules.
func TestBuildProgram(t *testing.T) {
	p := buildFile(t, "../examples/programs/mlp.ocl")
	if len(p.Units) != 1 || p.Units[0].Failure != nil || len(p.Units[0].Entries) != 1 {
		t.Fatalf("units %+v", p.Units)
	}
	u := &p.Units[0]
	e := &u.Entries[0]
	if h1 := tensorNamed(e, "h1"); h1 == nil || h1.Shape.Text != "32 | 16" || !h1.Named || h1.Op < 0 {
		t.Fatalf("h1: %+v", h1)
	}
	var w1 *Param
	for i := range u.Params {
		if u.Params[i].Name == "w1" {
			w1 = &u.Params[i]
		}
	}
	if w1 == nil || w1.Shape.Text != "2 -> 16" || w1.Cells != 32 || w1.Bytes != 128 || len(w1.SizedBy) != 2 {
		t.Fatalf("w1: %+v", w1)
	}
	if sb := w1.SizedBy[0]; sb.Axis != "input 1" || sb.Size != "2" || sb.Step.Op != `compose "*" of w1, points` || sb.Step.At.Line != 7 {
		t.Errorf("w1 input sized by %+v", sb)
	}
	if sb := w1.SizedBy[1]; sb.Axis != "output 1" || sb.Step.Stage != "stage4" || sb.Step.StageRule == "" {
		t.Errorf("w1 output sized by %+v", sb)
	}
	if u.MemoryBytes <= 0 || len(u.Memory) == 0 {
		t.Errorf("memory %d %v", u.MemoryBytes, u.Memory)
	}
	compose := e.Ops[0]
	if compose.Kind != "compose" || compose.Proj == nil || compose.Proj.LHS != "[i0, i1]" || !slices.Equal(compose.Proj.RHS, []string{"[i1, i2]", "[i0, i2]"}) || !slices.Equal(compose.Proj.Reduced, []string{"i2"}) || !slices.Equal(compose.Proj.Product, []string{"i0<32", "i1<16", "i2<2"}) {
		t.Fatalf("compose: %+v %+v", compose, compose.Proj)
	}
	if !strings.HasPrefix(e.ScheduleHeader, "schedule: float32") {
		t.Errorf("schedule header %q", e.ScheduleHeader)
	}
	// Every operation runs in a nest of its own or fused into another's.
	fused := 0
	for _, o := range e.Ops {
		if len(o.Schedule) == 0 && o.FusedInto == "" {
			t.Errorf("op %s: no schedule", o.Desc)
		}
		if o.FusedInto != "" {
			fused++
		}
		for _, n := range o.Schedule {
			if n.Loops == "" || n.Kernel == "" || n.Family == "" {
				t.Errorf("op %s: nest %+v", o.Desc, n)
			}
		}
	}
	if fused == 0 {
		t.Errorf("no operation fused (the bias additions fuse into the relu's nest)")
	}
}

// TestBuildFailure checks the page of a program whose shapes conflict:
// the message `ocannlgen infer` prints, and the two sides.
func TestBuildFailure(t *testing.T) {
	p := buildFile(t, "testdata/mismatch.ocl")
	f := p.Units[0].Failure
	if f == nil {
		t.Fatal("no failure")
	}
	want := `testdata/mismatch.ocl:6:11: dim-mismatch: dimension mismatch: 5 vs 4 (result row [..., 5], operand row [4]) (in pointwise "+" of h, y)`
	if f.Message != want {
		t.Errorf("message\n%s\nwant\n%s", f.Message, want)
	}
	if f.At.Line != 6 || f.At.Col != 11 || f.At.Source != "src1" || f.Kind != "dim-mismatch" {
		t.Errorf("at %+v kind %s", f.At, f.Kind)
	}
	if len(f.Sides) != 2 || f.Relation != "⊑" || f.Constraint == "" {
		t.Fatalf("sides %+v", f)
	}
	// The result side's 5 came from w's o=[5] through the product and
	// the relu.
	res := f.Sides[0].Row.Axes
	if len(res) != 1 || res[0].Size != 5 || len(res[0].Steps) == 0 {
		t.Fatalf("result side %+v", f.Sides[0])
	}
	if last := res[0].Steps[len(res[0].Steps)-1]; !strings.Contains(last.Op, "w") || last.Value != "5" {
		t.Errorf("result side's size from %+v", last)
	}
	if op := f.Sides[1].Row.Axes; len(op) != 1 || op[0].Given != "4" {
		t.Errorf("operand side %+v", f.Sides[1])
	}
}

// TestBuildDeterministic builds the moons model's page twice.
func TestBuildDeterministic(t *testing.T) {
	a := buildFile(t, "../examples/programs/moons.ocl")
	b := buildFile(t, "../examples/programs/moons.ocl")
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two builds of moons.ocl differ")
	}
}

// TestBuildModels checks the pages of the zoo's models (Go directives):
// every model infers, positions point into the Go file, every loss
// operation is scheduled or fused.
func TestBuildModels(t *testing.T) {
	srcs, err := gen.Explainables([]string{"../examples/zoo"}, nil, gen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs.Models) < 10 {
		t.Fatalf("%d zoo models", len(srcs.Models))
	}
	p := BuildPackages("zoo", "..", srcs, Options{})
	for _, u := range p.Units {
		if u.Failure != nil {
			t.Errorf("%s: %s", u.Name, u.Failure.Message)
			continue
		}
		if len(u.Params) == 0 || u.MemoryBytes == 0 {
			t.Errorf("%s: no parameters", u.Name)
		}
		src := p.Sources[0]
		for _, s := range p.Sources {
			if s.ID == u.Pos.Source {
				src = s
			}
		}
		if u.Pos.Line < src.FirstLine || u.Pos.Line >= src.FirstLine+len(src.Lines) || !strings.Contains(src.Lines[u.Pos.Line-src.FirstLine], "//ocannl:model") {
			t.Errorf("%s: declared at %+v, outside its source view (lines %d..)", u.Name, u.Pos, src.FirstLine)
		}
		for _, o := range u.Entries[0].Ops {
			if o.At.Line < src.FirstLine || o.At.Line >= src.FirstLine+len(src.Lines) {
				t.Errorf("%s: op %s at %+v, outside the source view", u.Name, o.Desc, o.At)
				break
			}
		}
	}
	one, err := gen.Explainables([]string{"../examples/zoo"}, []string{"LeNet"}, gen.Options{})
	if err != nil || len(one.Models) != 1 || one.Models[0].Name != "LeNet" || len(one.Functions) != 0 {
		t.Fatalf("LeNet alone: %v %d", err, len(one.Models))
	}
	// The loss's first convolution: one nest in the entry point (the
	// Loss method's kernel), its gradients' nests in the training step's.
	lenet := BuildPackages("LeNet", "..", one, Options{})
	train := lenet.Units[0].Entries[0]
	if conv := train.Ops[0]; train.Kind != "loss" || !strings.HasPrefix(conv.Desc, "einsum") || len(conv.Schedule) != 1 || len(conv.Backward) == 0 {
		t.Errorf("LeNet's first convolution: %d nests, %d backward nests (%s)", len(conv.Schedule), len(conv.Backward), conv.Desc)
	}
	if aff := train.Ops[0].Proj.Affine; len(aff) == 0 || !strings.HasPrefix(aff[0], "images: ") || !strings.HasSuffix(aff[0], "(affine)") {
		t.Errorf("LeNet's first convolution's affine indices: %q", aff)
	}
	if predict := lenet.Units[0].Entries[1]; predict.Kind != "entry" || len(predict.Ops[0].Backward) != 0 || len(predict.Ops[0].Schedule) != 1 {
		t.Errorf("LeNet's predict: %d nests, %d backward", len(predict.Ops[0].Schedule), len(predict.Ops[0].Backward))
	}
	if _, err := gen.Explainables([]string{"../examples/zoo"}, []string{"NoSuch"}, gen.Options{}); err == nil {
		t.Fatal("no error for a missing model")
	}
}

// TestGoldenProgram renders the page of examples/programs/taste.ocl and
// compares it with testdata/taste.html (go test ./explain -run
// GoldenProgram -update writes it): the whole pipeline, from the
// program to the bytes of the page.
func TestGoldenProgram(t *testing.T) {
	p := buildFile(t, "../examples/programs/taste.ocl")
	var b strings.Builder
	if err := Render(&b, p); err != nil {
		t.Fatal(err)
	}
	const golden = "testdata/taste.html"
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Fatalf("the page of taste.ocl differs from %s (go test ./explain -run GoldenProgram -update, then review the diff)", golden)
	}
}

// BenchmarkExplainDecoder builds and renders the page of the 12-block
// decoder (examples/programs/decoder.ocl), reporting the page's size.
func BenchmarkExplainDecoder(b *testing.B) {
	src, err := os.ReadFile("../examples/programs/decoder.ocl")
	if err != nil {
		b.Fatal(err)
	}
	var size int
	for b.Loop() {
		p := BuildFile(File{Name: "decoder.ocl", Text: string(src)}, Options{})
		var sb strings.Builder
		if err := Render(&sb, p); err != nil {
			b.Fatal(err)
		}
		size = sb.Len()
	}
	b.ReportMetric(float64(size), "page-bytes")
}

// TestBuildFunctions checks the pages of examples/gallery's annotated
// functions: each is explained with its kernel's shapes and schedule,
// positioned at its directives in the Go file.
func TestBuildFunctions(t *testing.T) {
	srcs, err := gen.Explainables([]string{"../examples/gallery"}, []string{"MatMul"}, gen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs.Functions) != 1 || len(srcs.Models) != 0 {
		t.Fatalf("%d functions, %d models", len(srcs.Functions), len(srcs.Models))
	}
	p := BuildPackages("gallery#MatMul", "..", srcs, Options{})
	u := p.Units[0]
	if u.Kind != "function" || u.Name != "MatMul" || u.Failure != nil || len(u.Entries) != 1 {
		t.Fatalf("unit %+v", u)
	}
	src := p.Sources[0]
	e := u.Entries[0]
	scheduled := 0
	for _, o := range e.Ops {
		if o.At.Line < src.FirstLine || o.At.Line >= src.FirstLine+len(src.Lines) || !strings.Contains(src.Lines[o.At.Line-src.FirstLine], "//ocannl:") {
			t.Errorf("op %s at %+v: not on a directive line of the source view", o.Desc, o.At)
		}
		if len(o.Schedule) > 0 {
			scheduled++
		}
	}
	if scheduled == 0 || len(e.Tensors) == 0 {
		t.Errorf("%d tensors, %d scheduled operations", len(e.Tensors), scheduled)
	}
}

// TestBuildPackageFailures checks the pages of packages whose model or
// function go generate rejects (golden/testdata/bad): the page shows the
// message go generate prints (its golden file), positioned in the Go
// file, with the kind and the entry of an inference failure.
func TestBuildPackageFailures(t *testing.T) {
	dir, err := filepath.Abs("../golden/testdata/bad")
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"hidden", "disagree", "shape", "modelsyntax"} {
		srcs, err := gen.Explainables([]string{"./" + pkg}, nil, gen.Options{Dir: dir})
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		p := BuildPackages(pkg, dir, srcs, Options{})
		if len(p.Units) != 1 || p.Units[0].Failure == nil {
			t.Fatalf("%s: %d units, no failure", pkg, len(p.Units))
		}
		f := p.Units[0].Failure
		want, err := os.ReadFile(filepath.Join(dir, pkg+".golden"))
		if err != nil {
			t.Fatal(err)
		}
		if f.Message != strings.TrimSpace(string(want)) {
			t.Errorf("%s: the page shows\n%s\ngo generate prints\n%s", pkg, f.Message, want)
		}
		src := p.Sources[0]
		if f.At.Line < src.FirstLine || f.At.Line >= src.FirstLine+len(src.Lines) {
			t.Errorf("%s: failure at %+v, outside the source view (lines %d..%d)", pkg, f.At, src.FirstLine, src.FirstLine+len(src.Lines)-1)
		}
		if pkg == "hidden" && (f.Kind != "hidden-dim" || f.Entry != "train") {
			t.Errorf("%s: kind %s in entry %q", pkg, f.Kind, f.Entry)
		}
	}
}

// TestBuildBF16: the page of an //ocannl:einsum over rt.BF16 arrays
// names its element types and schedules its product as the
// rt/bf16.GemmBF16 call the code makes.
func TestBuildBF16(t *testing.T) {
	srcs, err := gen.Explainables([]string{"../internal/bf16einsum"}, []string{"MatMulTT"}, gen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs.Functions) != 1 {
		t.Fatalf("%d functions", len(srcs.Functions))
	}
	p := BuildPackages("bf16einsum#MatMulTT", "..", srcs, Options{})
	u := p.Units[0]
	if u.Failure != nil || len(u.Entries) != 1 || u.Elem != "rt.BF16 inputs, float32 output" {
		t.Fatalf("unit %+v", u)
	}
	found := false
	for _, o := range u.Entries[0].Ops {
		for _, n := range o.Schedule {
			found = found || strings.Contains(n.Kernel, "bf16 contraction 40x33x29 (rt/bf16.GemmBF16")
		}
	}
	if !found {
		t.Errorf("no nest scheduled as the rt/bf16.GemmBF16 call: %+v", u.Entries[0].Ops)
	}
}
