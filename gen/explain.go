package gen

import (
	"cmp"
	"errors"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/ocannlgen/ocannlgen/spec"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// ModelSource is one model declared with directives in a Go package, as
// `ocannlgen explain` reads it: its program (the directive lines, with
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
	// Elem is the element type ("float32", "float64").
	Elem string
	// Program is the parsed model program (nil when Err is set).
	Program *program.Program
	// Position maps a position of Program to the Go file.
	Position func(spec.Pos) token.Position
	// Err is a problem found reading the model's directives (a syntax
	// error, a size naming no integer constant), positioned in the Go
	// file; nil otherwise.
	Err *Error
}

// Models loads the packages matching patterns as Generate does and
// returns the models their directives declare, in package and source
// order, keeping those named in only (all when only is empty). It
// reports errors of loading; a model's own problems are in its Err.
func Models(patterns []string, only []string, opts Options) ([]ModelSource, error) {
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	pkgs, _, _, err := load(patterns, opts)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(pkgs, func(a, b *packages.Package) int { return cmp.Compare(a.ID, b.ID) })
	pkgs = slices.CompactFunc(pkgs, func(a, b *packages.Package) bool { return a.ID == b.ID })
	base := opts.Dir
	if base == "" {
		base, _ = os.Getwd()
	}
	var out []ModelSource
	for _, p := range pkgs {
		g := startPackage(p, opts)
		if g == nil {
			continue
		}
		for _, ms := range g.models {
			name := ms.spec.Name.Name
			if len(only) > 0 && !slices.Contains(only, name) {
				continue
			}
			out = append(out, explainSource(ms, p.PkgPath, base))
		}
	}
	if len(only) > 0 {
		for _, name := range only {
			if !slices.ContainsFunc(out, func(m ModelSource) bool { return m.Name == name }) {
				return out, errors.New("no model named " + name + " in " + strings.Join(patterns, " "))
			}
		}
	}
	return out, nil
}

func explainSource(ms *modelSrc, pkgPath, base string) ModelSource {
	m := ModelSource{Name: ms.spec.Name.Name, PkgPath: pkgPath, File: ms.head.Pos.Filename, Line: ms.head.Pos.Line, Col: ms.head.VerbCol, Position: ms.position}
	m.Display = m.File
	if rel, err := filepath.Rel(base, m.File); err == nil && !strings.HasPrefix(rel, "..") {
		m.Display = rel
	}
	m.Elem = "float32"
	if ms.head.Arg == "float64" {
		m.Elem = "float64"
	}
	first, last := ms.head.Pos.Line, ms.head.Pos.Line
	for _, d := range ms.lines {
		last = max(last, d.Pos.Line)
	}
	if b, err := os.ReadFile(m.File); err == nil {
		lines := strings.Split(string(b), "\n")
		if last <= len(lines) {
			m.FirstLine, m.Lines = first, lines[first-1:last]
		}
	}
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
