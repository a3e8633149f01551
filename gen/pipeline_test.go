package gen

import (
	"fmt"
	"github.com/ocannlgen/ocannlgen/emit/asm"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/go/packages"
)

// The in-process pipeline: a package made of one Go source file is
// parsed and type-checked with go/types (as go/packages would load it),
// handed to generatePackage in check mode (nothing is written), and the
// generated file is type-checked together with the source, with the
// runtime package rt importable. Tests and FuzzGenerate use it instead of
// Generate, which runs the go command.

// pipeDir is the (nonexistent) directory of the in-process package.
const pipeDir = "/ocannlgen-inprocess/p"

// pipeImporter imports rt and the standard library from source, once
// per process.
var pipeImporter struct {
	sync.Mutex
	fset *token.FileSet
	imp  types.Importer
}

func importFromSource(path string) (*types.Package, error) {
	pipeImporter.Lock()
	defer pipeImporter.Unlock()
	if pipeImporter.imp == nil {
		pipeImporter.fset = token.NewFileSet()
		pipeImporter.imp = importer.ForCompiler(pipeImporter.fset, "source", nil)
	}
	return pipeImporter.imp.Import(path)
}

// pipeResult is what the in-process pipeline produced.
type pipeResult struct {
	// Content is the generated file (nil when generation failed).
	Content []byte
	// Other is the assembly kernels' file for builds without them (nil
	// when there are none).
	Other []byte
	// Errs are the generation errors.
	Errs []*Error
}

// loadSource type-checks src as the only file of package example.com/p
// the way go/packages loads a package whose generated file is missing.
// It reports an error when src is not a Go file at all.
func loadSource(src string) (*packages.Package, error) {
	fset := token.NewFileSet()
	name := filepath.Join(pipeDir, "p.go")
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	info := &types.Info{
		Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{},
		Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{},
	}
	var errs []packages.Error
	var typeErrs []types.Error
	conf := types.Config{
		Importer: importerFunc(importFromSource),
		Sizes:    types.SizesFor("gc", "amd64"),
		Error: func(err error) {
			te := err.(types.Error)
			typeErrs = append(typeErrs, te)
			errs = append(errs, packages.Error{Pos: te.Fset.Position(te.Pos).String(), Msg: te.Msg, Kind: packages.TypeError})
		},
	}
	pkg, _ := conf.Check("example.com/p", fset, []*ast.File{f}, info)
	return &packages.Package{
		ID: "example.com/p", Name: f.Name.Name, PkgPath: "example.com/p", Dir: pipeDir,
		GoFiles: []string{name}, Fset: fset, Syntax: []*ast.File{f}, Types: pkg, TypesInfo: info,
		Errors: errs, TypeErrors: typeErrs, TypesSizes: conf.Sizes,
	}, nil
}

// runPipeline generates src's package in process.
func runPipeline(src string) (*pipeResult, error) {
	p, err := loadSource(src)
	if err != nil {
		return nil, err
	}
	res, errs := generatePackage(p, Options{Check: true}, nil)
	out := &pipeResult{Errs: errs}
	if res != nil {
		out.Content = res.Content
		out.Other = res.Asm[asm.OtherFile]
	}
	return out, nil
}

// typeCheckGenerated type-checks the generated file together with the
// source, with rt and the standard library importable, and returns the
// errors (nil when the package compiles as far as go/types can tell).
func typeCheckGenerated(src string, content []byte, other []byte) []error {
	fset := token.NewFileSet()
	var files []*ast.File
	var errs []error
	fls := []struct{ name, text string }{{"p.go", src}, {OutputFile, string(content)}}
	if other != nil {
		// The assembly kernels' stand-ins: the same names as the stubs,
		// without their import of rt/cpu.
		fls = append(fls, struct{ name, text string }{asm.OtherFile, string(other)})
	}
	for _, fl := range fls {
		f, err := parser.ParseFile(fset, filepath.Join(pipeDir, fl.name), fl.text, parser.SkipObjectResolution)
		if err != nil {
			return []error{err}
		}
		files = append(files, f)
	}
	conf := types.Config{
		Importer: importerFunc(importFromSource),
		Sizes:    types.SizesFor("gc", "amd64"),
		Error:    func(err error) { errs = append(errs, err) },
	}
	conf.Check("example.com/p", fset, files, nil)
	return errs
}

// mustGenerate runs the pipeline on src and fails unless it generates a
// file that type-checks.
func mustGenerate(t *testing.T, src string) []byte {
	t.Helper()
	r, err := runPipeline(src)
	if err != nil {
		t.Fatalf("the source does not parse: %v\n%s", err, src)
	}
	if len(r.Errs) > 0 {
		t.Fatalf("generation failed:\n%v\nsource:\n%s", ErrorList(r.Errs), src)
	}
	if errs := typeCheckGenerated(src, r.Content, r.Other); len(errs) > 0 {
		t.Fatalf("the generated file does not type-check: %v\nsource:\n%s", errs, src)
	}
	return r.Content
}

// mustFail runs the pipeline on src and fails unless generation fails
// with an error at line:col of p.go whose message contains want.
func mustFail(t *testing.T, src string, line, col int, want string) {
	t.Helper()
	r, err := runPipeline(src)
	if err != nil {
		t.Fatalf("the source does not parse: %v\n%s", err, src)
	}
	if len(r.Errs) == 0 {
		t.Fatalf("generation succeeded; want an error at %d:%d containing %q\nsource:\n%s", line, col, want, src)
	}
	for _, e := range r.Errs {
		if filepath.Base(e.Pos.Filename) == "p.go" && e.Pos.Line == line && e.Pos.Column == col && strings.Contains(e.Msg, want) {
			return
		}
	}
	t.Fatalf("want an error at p.go:%d:%d containing %q; got:\n%v", line, col, want, ErrorList(r.Errs))
}

// modelSource is a package with one model type Name whose directive
// lines (without the //ocannl: prefix) are lines; the model line is line
// 3 and the first program line line 4.
func modelSource(name string, lines ...string) string {
	var b strings.Builder
	b.WriteString("package p\n\n//ocannl:model\n")
	for _, l := range lines {
		b.WriteString("//ocannl:" + l + "\n")
	}
	fmt.Fprintf(&b, "type %s struct{ ocannl%s }\n", name, name)
	return b.String()
}

// TestPipelineHarness: the in-process pipeline generates a small model
// that type-checks, and the type check of the generated file does find
// errors (a generated file with a mistake is rejected).
func TestPipelineHarness(t *testing.T) {
	src := modelSource("Small", "loss train:", "input x : 4 | 3", "return (linear[2](x) *. linear[2](x)) ++ \"...|... => 0\"", "sgd lr=0.1")
	content := mustGenerate(t, src)
	if !strings.Contains(string(content), "func (m *ocannlSmall) TrainStep(") {
		t.Fatalf("no TrainStep in\n%s", content)
	}
	bad := strings.Replace(string(content), "m.Step = rt.NextStep(m.Step)", "m.Step = rt.NextStep(m.Step) + 1.5", 1)
	if bad == string(content) {
		t.Fatal("no m.Step = rt.NextStep(m.Step) in the generated Update")
	}
	if errs := typeCheckGenerated(src, []byte(bad), nil); len(errs) == 0 {
		t.Fatal("a generated file with a float step increment type-checks")
	}
}
