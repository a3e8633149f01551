package ops_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"

	"github.com/ocannlgen/ocannlgen/ops"
)

const opsPath = "github.com/ocannlgen/ocannlgen/ops"

// TestNamesMatchTable: the PrimName and AccumName constants are exactly
// the names of the table's entries (and NoAccum, the plain store), so
// that a primitive renamed in the table is renamed for every user.
func TestNamesMatchTable(t *testing.T) {
	prims, accums := declaredNames(t)
	var table []string
	for _, p := range ops.Prims() {
		table = append(table, string(p.Name))
	}
	slices.Sort(table)
	if !slices.Equal(prims, table) {
		t.Errorf("PrimName constants %q, table %q", prims, table)
	}
	table = []string{string(ops.NoAccum)}
	for _, a := range ops.Accums() {
		table = append(table, string(a.Name))
	}
	slices.Sort(table)
	if !slices.Equal(accums, table) {
		t.Errorf("AccumName constants %q, table and NoAccum %q", accums, table)
	}
}

// declaredNames returns the values of package ops's PrimName and
// AccumName constants, sorted, read from its source.
func declaredNames(t *testing.T) (prims, accums []string) {
	t.Helper()
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes}, ".")
	if err != nil || len(pkgs) != 1 || len(pkgs[0].Errors) > 0 {
		t.Fatalf("loading ops: %v %v", err, pkgs)
	}
	scope := pkgs[0].Types.Scope()
	for _, n := range scope.Names() {
		c, ok := scope.Lookup(n).(*types.Const)
		if !ok {
			continue
		}
		switch nameType(c.Type()) {
		case "PrimName":
			prims = append(prims, mustUnquote(t, c.Val().ExactString()))
		case "AccumName":
			accums = append(accums, mustUnquote(t, c.Val().ExactString()))
		}
	}
	slices.Sort(prims)
	slices.Sort(accums)
	return prims, accums
}

func mustUnquote(t *testing.T, s string) string {
	t.Helper()
	u, err := strconv.Unquote(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// nameType is "PrimName" or "AccumName" when t is that type of package
// ops, else "".
func nameType(t types.Type) string {
	n, ok := t.(*types.Named)
	if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != opsPath {
		return ""
	}
	switch n.Obj().Name() {
	case "PrimName", "AccumName":
		return n.Obj().Name()
	}
	return ""
}

// TestNoLiteralNames: outside package ops, no non-test Go file of the
// module writes a primitive's or an accumulator's name as a string
// literal; they use the constants of names.go, so that renaming or
// removing an entry breaks the compilation of every user (issue 23).
// Two rules, over the type-checked syntax of every package:
//
//   - typed: a constant expression of type ops.PrimName or
//     ops.AccumName must be one of package ops's constants (not "exp",
//     ops.PrimName("exp"), or a local constant);
//   - untyped: a string literal holding a name of the table (or "", for
//     an accumulator) is never compared (==, !=, a switch case) with a
//     plain string whose name says it holds a primitive or an
//     accumulator (Prim, accum, prims[i].Name, the AST's Unary.Func).
func TestNoLiteralNames(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the whole module")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	found, err := literalNames(root, "./...")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Error(f)
	}
}

// TestLiteralNamesDetected: the scan of TestNoLiteralNames finds each
// form it forbids in a fixture package (testdata/literalnames), and
// accepts the constants.
func TestLiteralNamesDetected(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks a fixture package")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	found, err := literalNames(root, "./ops/testdata/literalnames")
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, f := range found {
		// file:line:col: ...
		parts := strings.SplitN(f, ":", 3)
		n, _ := strconv.Atoi(parts[1])
		lines = append(lines, n)
	}
	// The fixture marks each line that must be reported with "// BAD".
	want := badLines(t, filepath.Join(root, "ops", "testdata", "literalnames", "names.go"))
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("reported lines %v, want %v\n%s", lines, want, strings.Join(found, "\n"))
	}
}

func badLines(t *testing.T, path string) []int {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.TrimSpace(c.Text) == "// BAD" {
				lines = append(lines, fset.Position(c.Pos()).Line)
			}
		}
	}
	return lines
}

// literalNames reports, as "file:line:col: text", each use of a literal
// primitive or accumulator name (see TestNoLiteralNames) in the non-test
// files of the packages of pattern under root, package ops excepted.
func literalNames(root, pattern string) ([]string, error) {
	tableNames := map[string]bool{}
	for _, p := range ops.Prims() {
		tableNames[string(p.Name)] = true
	}
	for _, a := range ops.Accums() {
		tableNames[string(a.Name)] = true
	}
	fset := token.NewFileSet()
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
		Dir:  root,
		Fset: fset,
	}
	pkgs, err := packages.Load(cfg, pattern)
	if err != nil {
		return nil, err
	}
	var found []string
	for _, pkg := range pkgs {
		if len(pkg.Errors) > 0 {
			return nil, fmt.Errorf("%s: %v", pkg.PkgPath, pkg.Errors)
		}
		if pkg.PkgPath == opsPath {
			continue
		}
		info := pkg.TypesInfo
		report := func(n ast.Node, format string, args ...any) {
			pos := fset.Position(n.Pos())
			if rel, err := filepath.Rel(root, pos.Filename); err == nil {
				pos.Filename = rel
			}
			found = append(found, fmt.Sprintf("%s: %s", pos, fmt.Sprintf(format, args...)))
		}
		// isOpsConst: e names a constant of package ops.
		isOpsConst := func(e ast.Expr) bool {
			var id *ast.Ident
			switch e := ast.Unparen(e).(type) {
			case *ast.Ident:
				id = e
			case *ast.SelectorExpr:
				id = e.Sel
			default:
				return false
			}
			c, ok := info.Uses[id].(*types.Const)
			return ok && c.Pkg() != nil && c.Pkg().Path() == opsPath
		}
		// literalName: e is a string literal holding a table name, or
		// "", compared with other, a plain string named as a primitive
		// or an accumulator.
		literalName := func(e ast.Expr, other ast.Expr) (string, bool) {
			lit, ok := ast.Unparen(e).(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return "", false
			}
			if b, ok := info.TypeOf(other).(*types.Basic); !ok || b.Info()&types.IsString == 0 {
				return "", false
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return "", false
			}
			name := strings.ToLower(exprName(info, other))
			switch {
			case !strings.Contains(name, "prim") && !strings.Contains(name, "accum") && !strings.Contains(name, "func"):
				return "", false
			case tableNames[s], s == "" && strings.Contains(name, "accum"):
				return s, true
			}
			return "", false
		}
		for _, file := range pkg.Syntax {
			if strings.HasSuffix(fset.Position(file.Pos()).Filename, "_test.go") {
				continue
			}
			ast.Inspect(file, func(n ast.Node) bool {
				switch n := n.(type) {
				case ast.Expr:
					tv, ok := info.Types[n]
					if ok && tv.Value != nil && nameType(tv.Type) != "" {
						if !isOpsConst(n) {
							report(n, "%s written as %s: use package ops's constant", nameType(tv.Type), types.ExprString(n))
						}
						return false
					}
					if b, ok := n.(*ast.BinaryExpr); ok && (b.Op == token.EQL || b.Op == token.NEQ) {
						for _, side := range [][2]ast.Expr{{b.X, b.Y}, {b.Y, b.X}} {
							if s, ok := literalName(side[0], side[1]); ok {
								report(b, "%s compared with the string %q: make it an ops.PrimName or ops.AccumName", types.ExprString(side[1]), s)
							}
						}
					}
				case *ast.SwitchStmt:
					if n.Tag == nil {
						break
					}
					for _, c := range n.Body.List {
						for _, e := range c.(*ast.CaseClause).List {
							if s, ok := literalName(e, n.Tag); ok {
								report(e, "switch on %s has the case %q: make it an ops.PrimName or ops.AccumName", types.ExprString(n.Tag), s)
							}
						}
					}
				}
				return true
			})
		}
	}
	return found, nil
}

// exprName is the name an expression ends in: x for x, Prim for x.Prim,
// p.Name for p.Name (the owner says what a Name names), a's for a[i],
// f for f(x), and x's for a conversion T(x).
func exprName(info *types.Info, e ast.Expr) string {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		if e.Sel.Name == "Name" {
			return exprName(info, e.X) + "." + e.Sel.Name
		}
		return e.Sel.Name
	case *ast.IndexExpr:
		return exprName(info, e.X)
	case *ast.CallExpr:
		if len(e.Args) == 1 && info.Types[e.Fun].IsType() {
			return exprName(info, e.Args[0])
		}
		return exprName(info, e.Fun)
	}
	return ""
}
