package gen

import (
	"errors"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ocannlgen/ocannlgen/emit/desc"
	"github.com/ocannlgen/ocannlgen/spec"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// ModelSource is one model declared with directives in a Go package, as
// `ocannlgen explain` reads it (Explainables): its program (the directive lines, with
// every size naming a Go constant resolved) and the map from the
// program's positions to the Go file's.
type ModelSource struct {
	// Name is the model's Go type name; PkgPath its package.
	Name    string
	PkgPath string
	// File is the Go file's path; Display the same relative to
	// Options.Dir (or the working directory) when inside it.
	File    string
	Display string
	// Line and Col are the //ocannl:model line's position.
	Line, Col int
	// FirstLine is the file's line number of Lines[0]: the file's lines
	// from the model's first directive to its last.
	FirstLine int
	Lines     []string
	// Elem is the element type ("float32", "float64", or "bf16" for
	// //ocannl:model bf16: float32 with the contractions on rt/bf16).
	Elem string
	// Program is the parsed model program (nil when Err is set).
	Program *program.Program
	// Position maps a position of Program to the Go file.
	Position func(spec.Pos) token.Position
	// ErrorOf converts an error of model.Compile on Program into the
	// error go generate reports, positioned in the Go file.
	ErrorOf func(error) *Error
	// Err is a problem found reading the model's directives (a syntax
	// error, a size naming no integer constant), positioned in the Go
	// file; nil otherwise.
	Err *Error
}

// FunctionSource is one annotated function of a Go package, as
// `ocannlgen explain` reads it: the kernel go generate compiles for it
// and the map from its synthesized program's positions to the Go file.
type FunctionSource struct {
	// Name is the Go function's name; PkgPath its package.
	Name    string
	PkgPath string
	// File, Display, Line, Col, FirstLine and Lines: as for
	// ModelSource (Line and Col: the function's primary directive; Lines
	// from its first directive to the func line).
	File      string
	Display   string
	Line, Col int
	FirstLine int
	Lines     []string
	// Kernel is the compiled kernel (nil when Err is set): its lowered
	// program, whose Graph holds the inferred shapes.
	Kernel *desc.Kernel
	// Position maps a position of the kernel's program (and the column
	// inside a spec, or 0) to the Go file.
	Position func(spec.Pos, int) token.Position
	// Err is the function's first problem (a directive, inference or
	// lowering error), positioned in the Go file; nil otherwise.
	Err *Error
}

// Sources are the models and annotated functions of packages.
type Sources struct {
	Models    []ModelSource
	Functions []FunctionSource
}

// Explainables loads the packages matching patterns as Generate does and
// returns the models and annotated functions their directives declare,
// in package and source order, keeping those named in only (all when
// only is empty; a name in only that names nothing is an error). It
// reports errors of loading; a model's or function's own problems are in
// its Err.
func Explainables(patterns []string, only []string, opts Options) (Sources, error) {
	var out Sources
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	pkgs, _, _, err := load(patterns, opts)
	if err != nil {
		return out, err
	}
	base := opts.Dir
	if base == "" {
		base, _ = os.Getwd()
	}
	found := map[string]bool{}
	keep := func(name string) bool {
		if len(only) > 0 && !slices.Contains(only, name) {
			return false
		}
		found[name] = true
		return true
	}
	for _, p := range pkgs {
		g := startPackage(p, opts)
		if g == nil {
			continue
		}
		for _, ms := range g.models {
			if keep(ms.spec.Name.Name) {
				out.Models = append(out.Models, explainSource(ms, p.PkgPath, base))
			}
		}
		for _, k := range g.srcs {
			if keep(k.fn.Name.Name) {
				out.Functions = append(out.Functions, explainFunction(k, p.PkgPath, base))
			}
		}
	}
	for _, name := range only {
		if !found[name] {
			return out, errors.New("no model or annotated function named " + name + " in " + strings.Join(patterns, " "))
		}
	}
	return out, nil
}

// display is path relative to base when inside it.
func display(path, base string) string {
	if rel, err := filepath.Rel(base, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// fileLines are lines first..last (1-based) of a file, or nil.
func fileLines(path string, first, last int) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	lines := strings.Split(string(b), "\n")
	if first < 1 || last > len(lines) || first > last {
		return nil
	}
	return lines[first-1 : last]
}

func explainFunction(k *kernelSrc, pkgPath, base string) FunctionSource {
	pd := k.primary()
	f := FunctionSource{Name: k.fn.Name.Name, PkgPath: pkgPath, File: pd.Pos.Filename, Line: pd.Pos.Line, Col: pd.VerbCol}
	f.Display = display(f.File, base)
	first, last := pd.Pos.Line, k.fset.Position(k.fn.Pos()).Line
	for _, d := range k.dirs {
		first, last = min(first, d.Pos.Line), max(last, d.Pos.Line)
	}
	f.FirstLine, f.Lines = first, fileLines(f.File, first, last)
	kn, _, prog, errs := compileKernelProg(k)
	if len(errs) > 0 {
		f.Err = errs[0]
		return f
	}
	f.Kernel, f.Position = kn, prog.position
	return f
}

func explainSource(ms *modelSrc, pkgPath, base string) ModelSource {
	m := ModelSource{Name: ms.spec.Name.Name, PkgPath: pkgPath, File: ms.head.Pos.Filename, Line: ms.head.Pos.Line, Col: ms.head.VerbCol, Position: ms.position, ErrorOf: ms.modelErr}
	m.Display = display(m.File, base)
	m.Elem = "float32"
	if ms.head.Arg == "float64" || ms.head.Arg == "bf16" {
		m.Elem = ms.head.Arg
	}
	first, last := ms.head.Pos.Line, ms.head.Pos.Line
	for _, d := range ms.lines {
		last = max(last, d.Pos.Line)
	}
	m.FirstLine, m.Lines = first, fileLines(m.File, first, last)
	c := &modelCompiler{ms: ms, typeName: m.Name}
	if err := c.header(); err != nil {
		m.Err = err
		return m
	}
	prog, err := ms.program()
	if err != nil {
		m.Err = err
		return m
	}
	m.Program = prog
	return m
}
