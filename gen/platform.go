package gen

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Generation does not depend on the platform the generator runs on
// (docs/design.md, "The driver"). The loader loads a package as the go
// command builds it for GOOS/GOARCH, without its tests, so two kinds of
// files of a package directory are never read for directives:
//
//   - test files (_test.go): their directives would be ignored;
//   - files with build constraints (a //go:build or // +build line, a
//     _GOOS or _GOARCH suffix in the name, an import of "C"): their
//     directives would be read on some platforms only, and the generated
//     file (its kernels, its "// Sources:" line) would depend on the
//     platform that ran the generator.
//
// Every directive and near miss in such a file is a positioned error
// instead, on every platform: the driver reads these files from the
// directory itself (unreadDirectives). Sizes are the other way the
// platform could leak in: a Go constant (or type) that a size depends on
// must not be declared in a file with build constraints either (platform).

// notRead says why the directives of a file are not read.
const (
	testFileRule = "directives in _test.go files are not read (ocannlgen does not load tests); move it to a non-test .go file of the package"
	buildTagRule = "move it to a file every platform builds (no //go:build line, no _GOOS or _GOARCH suffix), so that the generated code does not depend on the platform"
)

// constraintOf says why the file named name (a base name) with syntax f
// (at least its header and imports) is built only on some platforms:
// the GOOS or GOARCH suffix of its name, a build constraint line in its
// header, or its import of "C" (cgo). It returns "" for a file every
// platform builds.
func constraintOf(name string, f *ast.File) string {
	if s := nameConstraint(name); s != "" {
		return "the " + s + " suffix of its name"
	}
	for _, cg := range f.Comments {
		if cg.Pos() >= f.Package {
			break
		}
		for _, c := range cg.List {
			switch {
			case constraint.IsGoBuild(c.Text):
				return "a //go:build line"
			case constraint.IsPlusBuild(c.Text):
				return "a // +build line"
			}
		}
	}
	for _, imp := range f.Imports {
		if imp.Path != nil && imp.Path.Value == `"C"` {
			return `an import of "C" (cgo)`
		}
	}
	return ""
}

// nameConstraint returns the _GOOS, _GOARCH or _GOOS_GOARCH suffix of a
// file name that restricts the file to some platforms ("" when none),
// as the go command reads it: the name is matched (its content aside)
// against two platforms that share neither GOOS nor GOARCH, so the list
// of known systems is the go/build package's own.
func nameConstraint(name string) string {
	base := strings.TrimSuffix(strings.TrimSuffix(name, ".go"), "_test")
	parts := strings.Split(base, "_")
	if len(parts) < 2 {
		return ""
	}
	if matchesEverywhere(name) {
		return ""
	}
	// Name the suffix: one known word, or two (GOOS_GOARCH).
	known := func(word string) bool { return !matchesEverywhere("x_" + word + ".go") }
	n := len(parts)
	if n >= 3 && known(parts[n-2]) {
		return "_" + parts[n-2] + "_" + parts[n-1]
	}
	return "_" + parts[n-1]
}

// matchesEverywhere reports whether go/build matches a file name, with
// an unconstrained content, on both linux/amd64 and windows/arm64.
func matchesEverywhere(name string) bool {
	for _, pl := range [][2]string{{"linux", "amd64"}, {"windows", "arm64"}} {
		ctxt := build.Context{GOOS: pl[0], GOARCH: pl[1], Compiler: "gc",
			OpenFile: func(string) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("package p\n")), nil }}
		if ok, err := ctxt.MatchFile(".", name); err != nil || !ok {
			return false
		}
	}
	return true
}

// packageFiles classifies the .go files of a package directory (not the
// generated ones): unread holds the syntax of every test file and every
// file with build constraints, with why its directives are not read;
// constrained the base names of the loaded files with build constraints
// (scanPackage skips them). Files the loader did not load are parsed
// from disk (fset positions them).
type packageFiles struct {
	fset        *token.FileSet
	unread      []unreadFile
	constrained map[string]bool
}

// unreadFile is a file whose directives are not read.
type unreadFile struct {
	f    *ast.File
	fset *token.FileSet
	// test is set for a test file; why says what constrains any other.
	test bool
	why  string
}

// classifyFiles reads the directory of package files loaded (by base
// name), and returns its files whose directives are not read. A
// directory that cannot be read (a package given in memory) has none.
func classifyFiles(dir string, loaded map[string]*ast.File, fset *token.FileSet) *packageFiles {
	pf := &packageFiles{fset: token.NewFileSet(), constrained: map[string]bool{}}
	for name, f := range loaded {
		if why := constraintOf(name, f); why != "" {
			pf.constrained[name] = true
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		// A package given in memory: its loaded files only.
		for _, name := range slices.Sorted(maps.Keys(loaded)) {
			if pf.constrained[name] {
				pf.unread = append(pf.unread, unreadFile{f: loaded[name], fset: fset, why: constraintOf(name, loaded[name])})
			}
		}
		return pf
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "ocannl_gen") {
			continue
		}
		test := strings.HasSuffix(name, "_test.go")
		f, ffset := loaded[name], fset
		if f != nil && !test && !pf.constrained[name] {
			continue
		}
		if f == nil {
			ffset = pf.fset
			f, _ = parser.ParseFile(ffset, filepath.Join(dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
			if f == nil {
				continue
			}
		}
		u := unreadFile{f: f, fset: ffset, test: test}
		if !test {
			if u.why = constraintOf(name, f); u.why == "" {
				// Not loaded for another reason (the loader reports it).
				continue
			}
		}
		pf.unread = append(pf.unread, u)
	}
	return pf
}

// unreadDirectives reports every directive and near miss in the files
// whose directives are not read, and records the functions and types
// they annotate in attempted (and a model's type in misplacedModels), so
// that their uses of the generated names are not second errors where
// the file is loaded.
func (pf *packageFiles) unreadDirectives(attempted, misplacedModels map[string]bool) []*Error {
	var errs []*Error
	for _, u := range pf.unread {
		docOf, typeOf := funcDocComments(u.f), typeDocComments(u.f)
		for _, cg := range u.f.Comments {
			for _, c := range cg.List {
				d, err := parseComment(u.fset, c)
				switch {
				case err != nil && u.test:
					err.Msg += "; besides, " + testFileRule
				case err != nil:
					err.Msg += "; besides, directives are read only from files without build constraints, and this file has one (" + u.why + "); " + buildTagRule
				case d == nil:
					continue
				case u.test:
					err = d.errAt(d.VerbCol, "//ocannl:%s in a test file: %s", d.Verb, testFileRule)
				default:
					err = d.errAt(d.VerbCol, "//ocannl:%s in a file with build constraints (%s): directives are read only from files without build constraints; %s", d.Verb, u.why, buildTagRule)
				}
				errs = append(errs, err)
				if fd := docOf[c]; fd != nil {
					attempted[genName(fd.Name.Name)] = true
				}
				if ts := typeOf[c]; ts != nil {
					attempted[genTypeName(ts.Name.Name)] = true
					misplacedModels[ts.Name.Name] = true
				}
			}
		}
	}
	return errs
}

// platform finds the sizes that depend on a declaration of a file with
// build constraints: a constant whose value, or a type whose
// definition, may differ between platforms, so that code generated from
// it would too.
type platform struct {
	fset        *token.FileSet
	pkg         *types.Package
	info        *types.Info
	constrained map[string]bool // base names of the loaded files with build constraints
	// decls holds the expressions each package-level constant and type
	// is declared with (a constant's type and value, iota's implicit
	// repetition included; a type's definition).
	decls map[types.Object][]ast.Expr
	// memo holds the culprit of each object looked at (nil: none);
	// visiting the objects being looked at.
	memo     map[types.Object]types.Object
	visiting map[types.Object]bool
}

// newPlatform indexes the package-level declarations of files.
func newPlatform(fset *token.FileSet, pkg *types.Package, info *types.Info, files []*ast.File, constrained map[string]bool) *platform {
	pl := &platform{fset: fset, pkg: pkg, info: info, constrained: constrained,
		decls: map[types.Object][]ast.Expr{}, memo: map[types.Object]types.Object{}, visiting: map[types.Object]bool{}}
	if info == nil {
		return pl
	}
	for _, f := range files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			var typ ast.Expr
			var values []ast.Expr
			for _, sp := range gd.Specs {
				switch sp := sp.(type) {
				case *ast.TypeSpec:
					if obj := info.Defs[sp.Name]; obj != nil {
						pl.decls[obj] = []ast.Expr{sp.Type}
					}
				case *ast.ValueSpec:
					if gd.Tok != token.CONST {
						continue
					}
					if sp.Type != nil || len(sp.Values) > 0 {
						typ, values = sp.Type, sp.Values
					}
					for i, n := range sp.Names {
						obj := info.Defs[n]
						if obj == nil {
							continue
						}
						if typ != nil {
							pl.decls[obj] = append(pl.decls[obj], typ)
						}
						if i < len(values) {
							pl.decls[obj] = append(pl.decls[obj], values[i])
						}
					}
				}
			}
		}
	}
	return pl
}

// culprit returns the declaration of a file with build constraints that
// obj, a constant or type of the package, is or depends on (through the
// package's other constants and types); nil when none.
func (pl *platform) culprit(obj types.Object) types.Object {
	if pl == nil || obj == nil || obj.Pkg() != pl.pkg {
		return nil
	}
	switch obj.(type) {
	case *types.Const, *types.TypeName:
	default:
		return nil
	}
	if c, ok := pl.memo[obj]; ok {
		return c
	}
	if pl.visiting[obj] {
		return nil // a cycle (a type that refers to itself)
	}
	pl.visiting[obj] = true
	var found types.Object
	if pl.constrained[filepath.Base(pl.fset.Position(obj.Pos()).Filename)] {
		found = obj
	}
	for _, e := range pl.decls[obj] {
		if found != nil {
			break
		}
		found = pl.exprCulprit(e)
	}
	delete(pl.visiting, obj)
	pl.memo[obj] = found
	return found
}

// exprCulprit returns the culprit (see culprit) of the first identifier
// of e that has one.
func (pl *platform) exprCulprit(e ast.Expr) types.Object {
	if pl == nil || pl.info == nil || e == nil {
		return nil
	}
	var found types.Object
	ast.Inspect(e, func(n ast.Node) bool {
		if found != nil {
			return false
		}
		if id, ok := n.(*ast.Ident); ok {
			found = pl.culprit(pl.info.Uses[id])
		}
		return found == nil
	})
	return found
}

// platformProblem says why name (a constant, or "its type" for a parameter)
// cannot be used because it is or depends on culprit.
func platformProblem(name string, culprit types.Object) string {
	what := "its value"
	if _, ok := culprit.(*types.TypeName); ok {
		what = "its definition"
	}
	rest := fmt.Sprintf("declared in a file with build constraints: %s may differ between platforms, and the generated code must not; declare %s in a file without build constraints", what, culprit.Name())
	if name == culprit.Name() {
		return name + " is " + rest
	}
	return name + " depends on " + culprit.Name() + ", which is " + rest
}
