package gen

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/ocannlgen/ocannlgen/emit/desc"
	"github.com/ocannlgen/ocannlgen/emit/gocode"
)

// Verification of the emitted Go. Every unit of a package's output (a
// model with its kernels, or one annotated function's kernel) is
// rendered on its own, parsed and type-checked with go/types before the
// package's file is written, so that ocannlgen never reports success for
// a file the Go compiler rejects. What the user controls and the Go side
// can trip over (entry point and input names that clash with what the
// emitter generates, generated type names that collide, sizes beyond
// what the compiler allows) is found here from the code actually
// emitted, not from a list of reserved names, and reported at the
// directive responsible: when a unit does not compile, every entry point
// and input is renamed to a name no user can pick; if that makes it
// compile, each name that breaks it again when it alone keeps its own is
// a culprit (several can be at once).
//
// The check imports nothing: the packages the generated code imports
// (rt, the standard library) are left unresolved, and go/types stays
// silent about their uses. Sizes are checked against the gc compiler's
// limit on the size of one value for the target's word size (types.Sizes
// of the loaded package, amd64's when unknown).

// unitCheck is the outcome of checking one rendered unit.
type unitCheck struct {
	// errs are the render error or the type errors (empty: the unit
	// compiles as far as go/types can tell without its imports).
	errs []string
	// decls are the unit's top-level names; imports the names its
	// imports bind in the file.
	decls, imports []string
	// large are the declarations (or types) too large for the target.
	large []string
}

// stateSize is the size of a model's generated struct (its state) on the
// target, as go/types lays it out (types.Sizes of the loaded package:
// the size unsafe.Sizeof reports there), with the size of each field.
type stateSize struct {
	total  int64
	fields []fieldSize
}

// fieldSize is the size of one field of a struct.
type fieldSize struct {
	name string
	size int64
}

// maxValueSize is the size in bytes a Go value must stay below on a
// target with the given word size: the gc compiler's MAXWIDTH (1<<50 on
// 64-bit targets) and, on 32-bit targets, the 31-bit limit on struct
// offsets and on sizes in its reflection tables.
func maxValueSize(wordSize int64) int64 {
	if wordSize >= 8 {
		return 1 << 50
	}
	return 1<<31 - 1
}

// checkUnit renders the models and kernels as one file and checks it.
func checkUnit(pkgName string, models []*desc.Model, kernels []*desc.Kernel, sizes types.Sizes) *unitCheck {
	uc := &unitCheck{}
	content, err := gocode.Render(&desc.File{Package: pkgName, Models: models, Kernels: kernels}, gocode.Options{})
	if err != nil {
		uc.errs = []string{err.Error()}
		return uc
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, OutputFile, content, parser.SkipObjectResolution)
	if err != nil {
		uc.errs = []string{err.Error()}
		return uc
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.Name != "_" {
				uc.decls = append(uc.decls, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					uc.decls = append(uc.decls, s.Name.Name)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						uc.decls = append(uc.decls, n.Name)
					}
				case *ast.ImportSpec:
					name := strings.Trim(s.Path.Value, `"`)
					name = name[strings.LastIndex(name, "/")+1:]
					if s.Name != nil {
						name = s.Name.Name
					}
					uc.imports = append(uc.imports, name)
				}
			}
		}
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{}}
	conf := types.Config{
		Importer: importerFunc(func(path string) (*types.Package, error) { return nil, errors.New("not imported") }),
		Sizes:    sizes,
		Error: func(err error) {
			if te, ok := err.(types.Error); ok && !strings.HasPrefix(te.Msg, "could not import") {
				uc.errs = append(uc.errs, te.Msg)
			}
		},
	}
	conf.Check(pkgName, fset, []*ast.File{f}, info)
	limit := maxValueSize(sizes.Sizeof(types.Typ[types.Uintptr]))
	tooLarge := func(t types.Type) bool {
		if b, ok := types.Unalias(t).(*types.Basic); t == nil || ok && (b.Kind() == types.Invalid || b.Info()&types.IsUntyped != 0) {
			return false
		}
		n := sizes.Sizeof(t)
		return n < 0 || n >= limit
	}
	for id, obj := range info.Defs {
		if obj != nil && tooLarge(obj.Type()) && !slices.Contains(uc.large, id.Name) {
			uc.large = append(uc.large, id.Name)
		}
	}
	for e, tv := range info.Types {
		if len(uc.large) > 0 {
			break
		}
		if tv.IsType() && tooLarge(tv.Type) && !slices.Contains(uc.large, types.ExprString(e)) {
			uc.large = append(uc.large, types.ExprString(e))
		}
	}
	slices.Sort(uc.large)
	return uc
}

// stateSizes returns the sizes on the target of the structs named names
// (the models' generated structs) that the generated file content
// declares: content is parsed and type-checked as checkUnit does, its
// imports unresolved (the structs hold rt's types by pointer only, so
// their sizes do not depend on them). It is the file as written, with
// the scratch space its kernels actually got (the assembly kernels' and
// parallel nests' included), not a unit rendered alone.
func stateSizes(content []byte, pkgName string, names []string, sizes types.Sizes) map[string]*stateSize {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, OutputFile, content, parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	conf := types.Config{
		Importer: importerFunc(func(path string) (*types.Package, error) { return nil, errors.New("not imported") }),
		Sizes:    sizes,
		Error:    func(error) {}, // verifyModel and verifyKernel reported what matters
	}
	pkg, _ := conf.Check(pkgName, fset, []*ast.File{f}, nil)
	if pkg == nil {
		return nil
	}
	out := map[string]*stateSize{}
	for _, name := range names {
		tn, _ := pkg.Scope().Lookup(name).(*types.TypeName)
		if tn == nil {
			continue
		}
		st, ok := tn.Type().Underlying().(*types.Struct)
		if !ok {
			continue
		}
		ss := &stateSize{total: sizes.Sizeof(st)}
		for f := range st.Fields() {
			ss.fields = append(ss.fields, fieldSize{f.Name(), sizes.Sizeof(f.Type())})
		}
		out[name] = ss
	}
	return out
}

// importerFunc adapts a function to types.Importer.
type importerFunc func(string) (*types.Package, error)

// Import imports path.
func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// verifyModel checks the Go code of a compiled model and attributes what
// does not compile to the entry point, input or model responsible.
func verifyModel(ms *modelSrc, pkgName string, gm *desc.Model, kernels []*desc.Kernel, sizes types.Sizes) (*unitCheck, []*Error) {
	uc := checkUnit(pkgName, []*desc.Model{gm}, kernels, sizes)
	if len(uc.large) > 0 {
		return uc, []*Error{ms.head.errAt(ms.head.VerbCol, "model %s: %s", ms.spec.Name.Name, largeMsg(uc.large, sizes))}
	}
	if len(uc.errs) == 0 {
		return uc, nil
	}
	// Entry points and inputs are renamed to names no user can pick: if
	// that makes the unit compile, each name that still breaks it when
	// it alone keeps its own name is a culprit.
	// failures returns the errors of the unit with every name renamed
	// but those keep selects (keep(i, -1): entry i's method, keep(i, j):
	// its input j).
	failures := func(keep func(i, j int) bool) []string {
		alt := renameAll(gm, kernels, keep)
		return checkUnit(pkgName, []*desc.Model{alt.gm}, alt.kernels, sizes).errs
	}
	var errs []*Error
	if len(failures(func(i, j int) bool { return false })) == 0 {
		for i := range gm.Entries {
			e := ms.entries[i]
			if f := failures(func(i2, j2 int) bool { return i2 == i && j2 < 0 }); len(f) > 0 {
				errs = append(errs, ms.errAt(e.Pos, "entry point %s would generate method %s, which clashes with what ocannlgen generates for model %s (the Go code would not compile: %s); rename the entry point",
					e.Name, gm.Entries[i].Method, ms.spec.Name.Name, f[0]))
			}
			for j, in := range e.Inputs {
				if f := failures(func(i2, j2 int) bool { return i2 == i && j2 == j }); len(f) > 0 {
					errs = append(errs, ms.errAt(in.Pos, "input %s of entry point %s clashes with a name the generated Go code uses (it would not compile: %s); rename the input",
						in.Name, e.Name, f[0]))
				}
			}
		}
	}
	if len(errs) == 0 {
		errs = append(errs, ms.head.errAt(ms.head.VerbCol, "internal error: the Go code generated for model %s does not compile: %s", ms.spec.Name.Name, strings.Join(uc.errs, "; ")))
	}
	return uc, errs
}

// verifyKernel checks the Go code of an annotated function's kernel.
func verifyKernel(k *kernelSrc, pkgName string, kern *desc.Kernel, sizes types.Sizes) (*unitCheck, []*Error) {
	uc := checkUnit(pkgName, nil, []*desc.Kernel{kern}, sizes)
	d := k.primary()
	switch {
	case len(uc.large) > 0:
		return uc, []*Error{d.errAt(d.ArgCol, "%s: %s", k.fn.Name.Name, largeMsg(uc.large, sizes))}
	case len(uc.errs) > 0:
		return uc, []*Error{d.errAt(d.ArgCol, "cannot generate %s: the Go code does not compile: %s", kern.Name, strings.Join(uc.errs, "; "))}
	}
	return uc, nil
}

func largeMsg(large []string, sizes types.Sizes) string {
	w := sizes.Sizeof(types.Typ[types.Uintptr])
	if len(large) > 4 {
		large = append(large[:4:4], "...")
	}
	return fmt.Sprintf("the generated Go code would hold more than the Go compiler allows in one value on %d-bit targets (%d bytes), in %s; use smaller shapes",
		8*w, maxValueSize(w), strings.Join(large, ", "))
}

// unitCopy is a model and its kernels with one name changed.
type unitCopy struct {
	gm      *desc.Model
	kernels []*desc.Kernel
}

func copyUnit(gm *desc.Model, kernels []*desc.Kernel) unitCopy {
	m := *gm
	m.Entries = slices.Clone(gm.Entries)
	u := unitCopy{gm: &m}
	for _, k := range kernels {
		c := *k
		c.Params = slices.Clone(k.Params)
		u.kernels = append(u.kernels, &c)
	}
	return u
}

// renameAll renames every entry point's method and kernel (keep(i,
// -1) false) and every input (keep(i, j) false) to names no user can
// pick: unique names starting with OcannlRenamed or ocannlRenamed.
func renameAll(gm *desc.Model, kernels []*desc.Kernel, keep func(i, j int) bool) unitCopy {
	u := copyUnit(gm, kernels)
	for i := range u.gm.Entries {
		e := &u.gm.Entries[i]
		// The kernels of entry i: its own and, for the loss, Backward,
		// each also for its blocks of rows.
		var ks []*desc.Kernel
		blocks := map[string]int{} // a block kernel of the entry: its rows
		for _, b := range e.Blocks {
			blocks[desc.BlockKernel(e.Kernel, b)] = b
		}
		for _, k := range u.kernels {
			_, block := blocks[k.Name]
			if k.Name == e.Kernel || block || e.Loss && (k.Name == gm.Backward || slices.ContainsFunc(e.Blocks, func(b int) bool { return k.Name == desc.BlockKernel(gm.Backward, b) })) {
				ks = append(ks, k)
			}
		}
		e.Inputs = slices.Clone(e.Inputs)
		for j := range e.Inputs {
			if keep(i, j) {
				continue
			}
			old, name := e.Inputs[j].Name, fmt.Sprintf("ocannlRenamed%d_%d", i, j)
			e.Inputs[j].Name = name
			for _, k := range ks {
				for p := range k.Params[:min(len(e.Inputs), len(k.Params))] {
					if k.Params[p].Name == old {
						k.Params[p].Name = name
					}
				}
			}
		}
		if keep(i, -1) {
			continue
		}
		method := fmt.Sprintf("OcannlRenamed%d", i)
		for _, k := range ks {
			name := gm.Name + method
			if b, ok := blocks[k.Name]; ok {
				name = desc.BlockKernel(name, b)
			} else if k.Name != e.Kernel {
				continue
			}
			k.Name = name
			if k.Scratch != "" {
				k.Scratch = k.Name + "Scratch"
			}
		}
		e.Method, e.Kernel = method, gm.Name+method
	}
	return u
}

// genVerifier checks the names of a package's units against each other
// and against the package.
type genVerifier struct {
	p     *packages.Package
	sizes types.Sizes
	// owner is the unit that generates each top-level name so far;
	// primary marks the names that are their unit's own name.
	owner   map[string]string
	primary map[string]bool
}

func newGenVerifier(p *packages.Package) *genVerifier {
	sizes := p.TypesSizes
	if sizes == nil {
		sizes = types.SizesFor("gc", "amd64")
	}
	return &genVerifier{p: p, sizes: sizes, owner: map[string]string{}, primary: map[string]bool{}}
}

// names reports the top-level names of a unit that another unit already
// generates or that the package declares (except primary, whose clashes
// with the package are reported before compiling), and the imports of
// the generated file that a package-level name would hide. The errors
// are built with errAt at column col.
func (v *genVerifier) names(uc *unitCheck, primary, what string, errAt func(int, string, ...any) *Error, col int) []*Error {
	if uc == nil {
		return nil
	}
	var errs []*Error
	scope := v.p.Types.Scope()
	for _, n := range uc.decls {
		if o, dup := v.owner[n]; dup {
			// Two functions generating one name are reported before
			// compiling (checkClashes).
			if !(n == primary && v.primary[n]) {
				errs = append(errs, errAt(col, "ocannlgen would generate %s for both %s and %s; rename one", n, o, what))
			}
			continue
		}
		v.owner[n], v.primary[n] = what, n == primary
		if obj := scope.Lookup(n); obj != nil && n != primary {
			errs = append(errs, cite(errAt(col, "%s is already declared; ocannlgen generates a declaration of that name for %s", n, what),
				len(n+" is already declared"), v.p.Fset.Position(obj.Pos()), "the declaration"))
		}
	}
	for _, n := range uc.imports {
		if obj := scope.Lookup(n); obj != nil {
			before := fmt.Sprintf("the generated code for %s imports package %s, but the package declares %s", what, n, n)
			errs = append(errs, cite(errAt(col, "%s; rename it", before), len(before), v.p.Fset.Position(obj.Pos()), "the declaration"))
		}
	}
	return errs
}

// cite adds a citation of q (what says what is there) at byte off of
// e's message.
func cite(e *Error, off int, q token.Position, what string) *Error {
	q.Offset = 0
	e.Related = append(e.Related, Related{Pos: q, Msg: what, Off: off})
	return e
}
