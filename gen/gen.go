// Package gen is the go:generate driver of ocannlgen: it loads Go
// packages, reads the `//ocannl:` directives of annotated function
// declarations, compiles each annotated function into a kernel (program
// synthesis, shape inference, projections, lowering) and writes one
// ocannl_gen.go per package through the emitter (package emit/gocode).
//
// See docs/design.md, "Code generation: directives and the go:generate
// driver", for the user-facing design.
package gen

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/tools/go/packages"

	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/emit/cuda"
	"github.com/ocannlgen/ocannlgen/emit/desc"
	"github.com/ocannlgen/ocannlgen/emit/gocode"
	"github.com/ocannlgen/ocannlgen/emit/target"
	"github.com/ocannlgen/ocannlgen/spec"
)

// OutputFile is the name of the generated file in each package directory.
const OutputFile = "ocannl_gen.go"

// Options configure Generate.
type Options struct {
	// Dir is the directory the package patterns are resolved in (and the
	// go command runs in); "" means the current directory.
	Dir string
	// Check writes nothing: every file that is missing, out of date or no
	// longer needed is reported with a Stale, Missing or Unneeded status.
	Check bool
	// Env is the go command's environment; nil means os.Environ().
	Env []string
	// BuildFlags are passed to the go command (e.g. "-tags=foo").
	BuildFlags []string
	// NoAsm generates no assembly kernels: the Go loops only (and any
	// assembly files of an earlier run are deleted).
	NoAsm bool
	// Serial generates no parallel loop nests: every kernel runs on the
	// calling goroutine (gocode.Options.Parallel off).
	Serial bool
	// NoWinograd keeps the float32 3x3 convolutions on the direct
	// kernels in every tier (target.Vector.Winograd off): their sums then
	// follow the contraction rules of docs/language.md exactly, at the
	// direct kernels' speed (docs/design.md, "Winograd convolutions").
	NoWinograd bool
	// NoMaskBlocks runs the contractions over a causal mask whole in
	// every tier (target.Kernels.MaskBlock 0): the products above the
	// diagonal are then computed, so an Inf or NaN in an operand cell the
	// mask zeroes reaches the sums as in the Go loops (docs/design.md,
	// "Masks known at run time").
	NoMaskBlocks bool
}

// Status says what Generate did (or, with Options.Check, would do) with a
// package's ocannl_gen.go.
type Status int

// Statuses.
const (
	// Unchanged: the file on disk is up to date.
	Unchanged Status = iota
	// Written: the file was created or updated.
	Written
	// Removed: the package has no annotated function any more, and its
	// stale ocannl_gen.go was deleted.
	Removed
	// Missing (check mode): the file does not exist yet.
	Missing
	// Stale (check mode): the file's content is out of date.
	Stale
	// Unneeded (check mode): the package has no annotated function but
	// still has an ocannl_gen.go.
	Unneeded
)

// String describes the status.
func (s Status) String() string {
	switch s {
	case Unchanged:
		return "up to date"
	case Written:
		return "written"
	case Removed:
		return "removed"
	case Missing:
		return "missing"
	case Stale:
		return "out of date"
	case Unneeded:
		return "no longer needed (the package has no annotated function)"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// OutOfDate reports whether the status is one of the check-mode findings.
func (s Status) OutOfDate() bool { return s == Missing || s == Stale || s == Unneeded }

// Result describes the generated file of one package.
type Result struct {
	// PkgPath is the package's import path.
	PkgPath string
	// File is the absolute path of the package's ocannl_gen.go.
	File string
	// Kernels are the generated function names, in source order.
	Kernels []string
	// Status says what happened to File.
	Status Status
	// Content is the generated source (nil when the package has no kernel).
	Content []byte
	// Compiled are the kernels as handed to the emitter: each one's
	// lowered program and parameter bindings, in source order. Tools and
	// tests use them to run the reference interpreter on the same kernels.
	Compiled []*desc.Kernel
	// Asm are the assembly kernel files (asm.FileNames: name -> content;
	// nil when no nest became an assembly kernel).
	Asm map[string][]byte
	// CUDAFile is the package's ocannl_gen.cu ("" when the package has
	// not opted in with //ocannl:cuda and has no such file), CUDAStatus
	// what happened to it and CUDAContent its generated text (nil when not
	// opted in).
	CUDAFile    string
	CUDAStatus  Status
	CUDAContent []byte
	// Warnings are positioned notes that do not stop generation, each
	// message starting with "warning: ": a model whose state needs more
	// than StateWarnBytes.
	Warnings []*Error
	// StateSizes are the sizes in bytes of the models' generated structs
	// on the target (unsafe.Sizeof of ocannlM for model M), by model type
	// name: what StateWarnBytes is compared with.
	StateSizes map[string]int64
}

// loadMode is what the driver needs from go/packages.
const loadMode = packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
	packages.NeedTypes | packages.NeedTypesInfo | packages.NeedTypesSizes | packages.NeedModule

// Generate loads the packages matching patterns (default ".") and
// generates ocannl_gen.go for every package with at least one annotated
// function, deleting a stale ocannl_gen.go of a package that has none.
// A file is written only when its content changes. Packages are
// independent: a package with errors is left untouched while the others
// are generated. The returned error is an ErrorList (sorted, without
// duplicates) when user code has problems, or another error when the
// packages cannot be loaded at all; the results of the packages that
// succeeded are returned either way.
func Generate(patterns []string, opts Options) ([]Result, error) {
	pkgs, foreign, errs, err := load(patterns, opts)
	if err != nil {
		return nil, err
	}
	// Every package's directives are scanned before any package's type
	// errors are filtered, so that a package using another's model (x.Init
	// on an m.MLP, whose methods m's generated file is about to declare) is
	// not failed for the bootstrap of a package loaded with it.
	gens := make([]*pkgGen, len(pkgs))
	models := map[string]bool{}
	for i, p := range pkgs {
		gens[i] = startPackage(p, opts)
		if gens[i] != nil {
			for t := range gens[i].modelTypes {
				models[p.PkgPath+"."+t] = true
			}
		}
	}
	var results []Result
	for i, p := range pkgs {
		var res *Result
		var perrs []*Error
		if gens[i] == nil {
			perrs = loadFailure(p)
		} else {
			res, perrs = gens[i].finish(opts, foreign, models)
		}
		errs = append(errs, perrs...)
		if res != nil {
			results = append(results, *res)
		}
	}
	if len(errs) > 0 {
		return results, sortErrors(errs)
	}
	return results, nil
}

// load loads the packages matching patterns (default ".") as Generate
// reads them, sorted by ID without duplicates: every existing generated
// file replaced by an empty file of the same package, so that stale
// output never interferes. foreign are
// the output files that are not ocannlgen's (never touched), errs the
// problems found with them.
func load(patterns []string, opts Options) (pkgs []*packages.Package, foreign map[string]bool, errs ErrorList, err error) {
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	// Pass 1 (go list only) finds the package directories, so that every
	// existing ocannl_gen.go can be replaced by an empty file of the same
	// package while loading: stale output never interferes.
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles, Dir: opts.Dir, Env: opts.Env, BuildFlags: opts.BuildFlags}
	listed, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("loading packages: %w", err)
	}
	overlay := map[string][]byte{}
	foreign = map[string]bool{}
	for _, p := range listed {
		dir := pkgDir(p)
		if dir == "" || p.Name == "" {
			continue
		}
		for _, name := range append(generatedFiles(), cuda.OutputFile) {
			path := filepath.Join(dir, name)
			if e := notRegular(path); e != nil {
				// Never read, written or removed through a link: the
				// loader reads an empty file in its place.
				foreign[filepath.Join(dir, OutputFile)] = true
				errs = append(errs, e)
				if strings.HasSuffix(name, ".go") && name != TestFile {
					overlay[path] = []byte("package " + p.Name + "\n")
				}
				continue
			}
			b, err := os.ReadFile(path)
			if err != nil {
				continue
			}
			if !isGenerated(b) {
				foreign[filepath.Join(dir, OutputFile)] = true
				errs = append(errs, &Error{Pos: token.Position{Filename: path, Line: 1, Column: 1},
					Msg: name + " exists but was not generated by ocannlgen (no \"// Code generated by ocannlgen ... DO NOT EDIT.\" line); rename it or delete it"})
				continue
			}
			if strings.HasSuffix(name, ".go") && name != TestFile {
				overlay[path] = []byte("package " + p.Name + "\n")
			}
		}
	}
	cfg = &packages.Config{Mode: loadMode, Dir: opts.Dir, Env: opts.Env, BuildFlags: opts.BuildFlags, Overlay: overlay}
	pkgs, err = packages.Load(cfg, patterns...)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("loading packages: %w", err)
	}
	slices.SortFunc(pkgs, func(a, b *packages.Package) int { return cmp.Compare(a.ID, b.ID) })
	pkgs = slices.CompactFunc(pkgs, func(a, b *packages.Package) bool { return a.ID == b.ID })
	return pkgs, foreign, errs, nil
}

func pkgDir(p *packages.Package) string {
	if p.Dir != "" {
		return p.Dir
	}
	for _, f := range slices.Concat(p.GoFiles, p.CompiledGoFiles, p.OtherFiles, p.IgnoredFiles) {
		return filepath.Dir(f)
	}
	return ""
}

// generatedRE matches the header line Go tools recognize as marking a
// generated file; isGenerated also requires it to name ocannlgen.
var generatedRE = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

func isGenerated(src []byte) bool {
	m := generatedRE.Find(src)
	return m != nil && bytes.Contains(m, []byte("ocannlgen"))
}

// generatePackage generates (or checks) one package's file (see
// startPackage and finish), as the only package of a load.
func generatePackage(p *packages.Package, opts Options, foreign map[string]bool) (*Result, []*Error) {
	g := startPackage(p, opts)
	if g == nil {
		return nil, loadFailure(p)
	}
	return g.finish(opts, foreign, nil)
}

// startPackage begins one package's generation: it scans the directives
// and collects the generated names (and checks them against the
// package's declarations). It returns nil for a package the loader could
// not load.
func startPackage(p *packages.Package, opts Options) *pkgGen {
	dir := pkgDir(p)
	if dir == "" || p.Types == nil || p.Fset == nil {
		return nil
	}
	g := &pkgGen{p: p, out: filepath.Join(dir, OutputFile), f: &desc.File{Package: p.Name}}
	if !opts.NoAsm && asmAvailable(p) {
		tiers := asm.Tiers()
		for i := range tiers {
			if opts.NoWinograd {
				tiers[i].Vector.Winograd = false
			}
			if opts.NoMaskBlocks {
				tiers[i].Kernels.MaskBlock = 0
			}
		}
		g.goOpts.Asm = asm.NewSet(tiers...)
	}
	// The loaded files by base name, the generated ones aside (their
	// build constraints are ocannlgen's own).
	loaded := map[string]*ast.File{}
	for _, f := range p.Syntax {
		if name := filepath.Base(p.Fset.Position(f.Package).Filename); !strings.HasPrefix(name, "ocannl_gen") {
			loaded[name] = f
		}
	}
	files := classifyFiles(dir, loaded, p.Fset)
	plat := newPlatform(p.Fset, p.Types, p.TypesInfo, p.Syntax, files.constrained)
	var attempted, misplacedModels map[string]bool
	g.srcs, g.models, attempted, misplacedModels, g.cudaDir, g.errs = scanPackage(p, g.out, files.constrained, plat)
	g.errs = append(g.errs, files.unreadDirectives(attempted, misplacedModels)...)
	g.collectNames(attempted, misplacedModels)
	return g
}

// finish generates (or checks) the package's file, in phases: filter the
// loader's errors (models names the model types, "path.Type", of every
// package generated in the same run), compile the models and kernels,
// then render and write (or check) the file.
func (g *pkgGen) finish(opts Options, foreign, models map[string]bool) (*Result, []*Error) {
	p := g.p
	loadErrs := packageErrors(p, g.names, g.modelTypes, models)
	g.errs = append(g.errs, loadErrs...)
	g.checkClashes()
	if foreign[g.out] {
		return nil, g.errs
	}
	// Parallel nests import rt: like the assembly dispatch, only where the
	// module may import ocannlgen's packages.
	g.goOpts.Parallel = !opts.Serial && asmAvailable(p)
	// Kernels are compiled even when directives elsewhere have errors, so
	// that one run reports everything, but not on a package that does not
	// type-check: its types could cause misleading kernel errors.
	if len(loadErrs) == 0 {
		g.compileModels()
		g.compileKernels()
	}
	if len(g.errs) > 0 {
		return nil, g.errs
	}
	return g.write(opts.Check)
}

// loadFailure reports a package the loader could not load.
func loadFailure(p *packages.Package) []*Error {
	var errs []*Error
	for _, e := range p.Errors {
		errs = append(errs, &Error{Pos: parsePos(e.Pos), Msg: e.Msg})
	}
	if len(errs) == 0 {
		errs = append(errs, &Error{Msg: fmt.Sprintf("package %s could not be loaded", p.ID)})
	}
	return errs
}

// pkgGen is one package's generation, phase by phase (generatePackage).
type pkgGen struct {
	p      *packages.Package
	out    string // the absolute path of the package's ocannl_gen.go
	srcs   []*kernelSrc
	models []*modelSrc
	// names are the names the generated file will declare (and those of
	// functions whose directives are broken); modelTypes the model types.
	names, modelTypes map[string]bool
	errs              []*Error
	modelOf           []*modelSrc // the source of each of f.Models
	f                 *desc.File
	// goOpts are the Go back end's settings: the assembly kernel set
	// that rendering f fills, and whether nests run in parallel.
	goOpts      gocode.Options
	kernelNames []string
	// cudaDir is the package's //ocannl:cuda directive (nil: no CUDA file).
	cudaDir *directive
	// gv verifies the emitted Go of each model and kernel (verify.go).
	gv *genVerifier
}

func (g *pkgGen) pos(p token.Pos) token.Position { return g.p.Fset.Position(p) }

// verifier returns the package's verifier of emitted Go, made on first use.
func (g *pkgGen) verifier() *genVerifier {
	if g.gv == nil {
		g.gv = newGenVerifier(g.p)
	}
	return g.gv
}

// collectNames records the names the generated file declares (and
// those of functions with broken directives, attempted) and the model
// types (and those a misplaced model block was meant for), and reports a
// model whose generated type name the package already declares.
func (g *pkgGen) collectNames(attempted, misplacedModels map[string]bool) {
	g.names, g.modelTypes = map[string]bool{}, map[string]bool{}
	for _, k := range g.srcs {
		g.names[genName(k.fn.Name.Name)] = true
	}
	for _, ms := range g.models {
		name := genTypeName(ms.spec.Name.Name)
		g.names[name] = true
		g.modelTypes[ms.spec.Name.Name] = true
		if obj := g.p.Types.Scope().Lookup(name); obj != nil {
			g.errs = append(g.errs, citeAt(g.pos(ms.spec.Name.Pos()), 0, name+" is already declared",
				g.pos(obj.Pos()), "the declaration", "; ocannlgen generates a type of that name for model "+ms.spec.Name.Name))
		}
	}
	for n := range attempted {
		g.names[n] = true
	}
	// The dispatch flags of the assembly kernels (user code may read or
	// set them, e.g. to compare the tiers).
	for _, t := range asm.Tiers() {
		g.names[asm.Tier(t).Flag()] = true
	}
	for n := range misplacedModels {
		g.modelTypes[n] = true
	}
}

// checkClashes reports two annotated functions with one generated name,
// and a generated function name the package already declares.
func (g *pkgGen) checkClashes() {
	seen := map[string]*kernelSrc{}
	for _, k := range g.srcs {
		name := genName(k.fn.Name.Name)
		pos := g.pos(k.fn.Name.Pos())
		if o := seen[name]; o != nil {
			g.errs = append(g.errs, citeAt(pos, 0, k.fn.Name.Name+" and "+o.fn.Name.Name+" (",
				g.pos(o.fn.Name.Pos()), "the other function", ") would both generate "+name+"; rename one"))
			continue
		}
		seen[name] = k
		if obj := g.p.Types.Scope().Lookup(name); obj != nil {
			g.errs = append(g.errs, citeAt(pos, 0, name+" is already declared",
				g.pos(obj.Pos()), "the declaration", "; ocannlgen generates a function of that name for "+k.fn.Name.Name))
		}
	}
}

// addSource records the source file of a generated declaration.
func (g *pkgGen) addSource(p token.Pos) {
	if src := filepath.Base(g.pos(p).Filename); !slices.Contains(g.f.Sources, src) {
		g.f.Sources = append(g.f.Sources, src)
	}
}

// compileModels compiles every model into the file.
func (g *pkgGen) compileModels() {
	for _, ms := range g.models {
		gm, kerns, merrs := compileModel(ms)
		if len(merrs) == 0 {
			var uc *unitCheck
			uc, merrs = verifyModel(ms, g.p.Name, gm, kerns, g.verifier().sizes)
			merrs = append(merrs, g.gv.names(uc, gm.Name, "model "+ms.spec.Name.Name, ms.head.errAt, ms.head.VerbCol)...)
		}
		if len(merrs) > 0 {
			g.errs = append(g.errs, merrs...)
			continue
		}
		addGuards(g.f, ms.guards)
		g.f.Models = append(g.f.Models, gm)
		g.modelOf = append(g.modelOf, ms)
		for _, kn := range kerns {
			g.f.Kernels = append(g.f.Kernels, kn)
			g.kernelNames = append(g.kernelNames, kn.Name)
		}
		g.addSource(ms.spec.Pos())
	}
}

// compileKernels compiles every annotated function into the file.
func (g *pkgGen) compileKernels() {
	for _, k := range g.srcs {
		kern, guards, kerrs := compileKernel(k)
		if len(kerrs) == 0 {
			var uc *unitCheck
			uc, kerrs = verifyKernel(k, g.p.Name, kern, g.verifier().sizes)
			d := k.primary()
			kerrs = append(kerrs, g.gv.names(uc, kern.Name, "function "+k.fn.Name.Name, d.errAt, d.ArgCol)...)
		}
		if len(kerrs) > 0 {
			g.errs = append(g.errs, kerrs...)
			continue
		}
		g.f.Kernels = append(g.f.Kernels, kern)
		g.kernelNames = append(g.kernelNames, kern.Name)
		addGuards(g.f, guards)
		g.addSource(k.fn.Pos())
	}
}

// write renders the file and the assembly files and writes those whose
// content changes (with check, only compares), then the CUDA file; a
// package without kernels has its stale files removed.
func (g *pkgGen) write(check bool) (*Result, []*Error) {
	res := &Result{PkgPath: g.p.PkgPath, File: g.out, Kernels: g.kernelNames, Compiled: g.f.Kernels}
	dir := filepath.Dir(g.out)
	want := map[string][]byte{}
	if len(g.f.Kernels) > 0 {
		slices.Sort(g.f.Sources)
		content, err := gocode.Render(g.f, g.goOpts)
		if err != nil {
			return nil, renderErrors(g.f, g.srcs, g.models, g.out, err)
		}
		res.Content = content
		want[OutputFile] = content
		g.states(res)
		// A package given in memory (no directory on disk: tests of the
		// pipeline) has no files for the test to hash, and gets none.
		if hash, err := directiveHash(dir); err == nil {
			if want[TestFile], err = testFileSource(g.p.Name, hash); err != nil {
				return nil, []*Error{{Pos: token.Position{Filename: filepath.Join(dir, TestFile)}, Msg: err.Error()}}
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, []*Error{{Pos: token.Position{Filename: filepath.Join(dir, TestFile)}, Msg: err.Error()}}
		}
		if g.goOpts.Asm != nil {
			files, err := g.goOpts.Asm.Files(g.p.Name)
			if err != nil {
				return nil, []*Error{{Pos: token.Position{Filename: filepath.Join(dir, asm.AsmFile)}, Msg: err.Error()}}
			}
			res.Asm = files
			maps.Copy(want, files)
		}
	}
	st, err := syncFiles(dir, want, check)
	if e := (*Error)(nil); errors.As(err, &e) {
		return nil, []*Error{e}
	} else if err != nil {
		return nil, []*Error{{Pos: token.Position{Filename: g.out}, Msg: err.Error()}}
	}
	if len(g.f.Kernels) == 0 {
		if st == Unchanged {
			return nil, nil
		}
		res.Status = st
		return res, nil
	}
	res.Status = st
	if err := generateCUDA(res, g.f, dir, g.cudaDir, check); err != nil {
		return nil, []*Error{err}
	}
	return res, nil
}

// states sizes the models' generated structs in the rendered file
// (Result.StateSizes) and warns about those above StateWarnBytes.
func (g *pkgGen) states(res *Result) {
	if len(g.f.Models) == 0 {
		return
	}
	var names []string
	for _, gm := range g.f.Models {
		names = append(names, gm.Name)
	}
	sizes := stateSizes(res.Content, g.p.Name, names, g.verifier().sizes)
	for i, gm := range g.f.Models {
		st := sizes[gm.Name]
		if st == nil {
			continue
		}
		ms := g.modelOf[i]
		if res.StateSizes == nil {
			res.StateSizes = map[string]int64{}
		}
		res.StateSizes[ms.spec.Name.Name] = st.total
		if w := stateWarning(ms, gm, st); w != nil {
			res.Warnings = append(res.Warnings, w)
		}
	}
}

// ocannlgenModule is the module whose rt/cpu the assembly dispatch
// imports.
const ocannlgenModule = "github.com/ocannlgen/ocannlgen"

// asmAvailable reports whether p's generated code may import rt/cpu (the
// assembly kernels' dispatch): p's module is ocannlgen's or its go.mod
// requires it (as `go get -tool` does). A module without it gets the Go
// loops only. When the module is unknown (no go.mod), it is assumed.
func asmAvailable(p *packages.Package) bool {
	m := p.Module
	if m == nil || m.Path == ocannlgenModule || m.GoMod == "" {
		return true
	}
	b, err := os.ReadFile(m.GoMod)
	if err != nil {
		return true
	}
	f, err := modfile.ParseLax(m.GoMod, b, nil)
	if err != nil {
		return true
	}
	for _, r := range f.Require {
		if r.Mod.Path == ocannlgenModule {
			return true
		}
	}
	return false
}

// generatedFiles are the names of the files a package directory may get
// besides ocannl_gen.cu: the Go file, its test and the assembly files.
func generatedFiles() []string {
	return append([]string{OutputFile, TestFile}, asm.FileNames()...)
}

// notRegular returns the error for a generated file's path that is a
// symbolic link or anything else that is not a regular file (nil when
// the path is a regular file or does not exist). Generated files are
// written in place: writing, removing or comparing through a link would
// reach a file outside the package directory (or the link's target in
// another package), so the driver refuses instead, at the link, and
// touches nothing of the package.
func notRegular(path string) *Error {
	fi, err := os.Lstat(path)
	switch {
	case err != nil && errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return &Error{Pos: token.Position{Filename: path}, Msg: err.Error()}
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return &Error{Pos: token.Position{Filename: path}, Msg: fmt.Sprintf(
			"%s is a symbolic link (to %s); ocannlgen never writes through a link or outside the package directory: delete the link (the file is generated) or make it a regular file",
			filepath.Base(path), target)}
	case !fi.Mode().IsRegular():
		return &Error{Pos: token.Position{Filename: path}, Msg: fmt.Sprintf(
			"%s is not a regular file (%s); ocannlgen writes its generated files in place: delete it or rename it", filepath.Base(path), fi.Mode().Type())}
	}
	return nil
}

// syncFiles brings the generated Go, test and assembly files of a package
// directory to want (name -> content; a file not in want must not
// exist), or with check only reports what it would do. The status is that
// of the whole set: Unchanged, Written or Removed (everything deleted),
// and in check mode Missing (the Go file does not exist), Stale or
// Unneeded.
func syncFiles(dir string, want map[string][]byte, check bool) (Status, error) {
	changed, missing := false, false
	// Nothing is read, written or removed unless every file is a regular
	// file or absent (Generate's first pass reports this too).
	for _, name := range generatedFiles() {
		if e := notRegular(filepath.Join(dir, name)); e != nil {
			return 0, e
		}
	}
	for _, name := range generatedFiles() {
		path := filepath.Join(dir, name)
		old, err := os.ReadFile(path)
		exists := err == nil
		content, wanted := want[name]
		switch {
		case wanted && exists && bytes.Equal(old, content), !wanted && !exists:
			continue
		case check:
			changed = true
			missing = missing || (name == OutputFile && !exists)
		case wanted:
			if err := os.WriteFile(path, content, 0o666); err != nil {
				return 0, err
			}
			changed = true
		default:
			if err := os.Remove(path); err != nil {
				return 0, err
			}
			changed = true
		}
	}
	switch {
	case !changed:
		return Unchanged, nil
	case check && len(want) == 0:
		return Unneeded, nil
	case check && missing:
		return Missing, nil
	case check:
		return Stale, nil
	case len(want) == 0:
		return Removed, nil
	}
	return Written, nil
}

// syncFile makes the file at path hold content (with check, only says
// whether it does); nil content means the file should not exist.
func syncFile(path string, content []byte, check bool) (Status, *Error) {
	if e := notRegular(path); e != nil {
		return 0, e
	}
	old, readErr := os.ReadFile(path)
	exists := readErr == nil
	fail := func(err error) (Status, *Error) {
		return 0, &Error{Pos: token.Position{Filename: path}, Msg: err.Error()}
	}
	switch {
	case content == nil && !exists:
		return Unchanged, nil
	case content == nil && !isGenerated(old):
		return fail(fmt.Errorf("%s exists but was not generated by ocannlgen; rename it or delete it", filepath.Base(path)))
	case content == nil && check:
		return Unneeded, nil
	case content == nil:
		if err := os.Remove(path); err != nil {
			return fail(err)
		}
		return Removed, nil
	case exists && bytes.Equal(old, content):
		return Unchanged, nil
	case check && !exists:
		return Missing, nil
	case check:
		return Stale, nil
	}
	if err := os.WriteFile(path, content, 0o666); err != nil {
		return fail(err)
	}
	return Written, nil
}

// generateCUDA writes (or checks) the package's ocannl_gen.cu: the CUDA C
// of every kernel when the package opted in with //ocannl:cuda (d; its
// argument, tf32 or bf16, puts matmul-class nests on tensor cores at that
// precision); without the directive, a generated ocannl_gen.cu left from
// before is removed.
func generateCUDA(res *Result, f *desc.File, dir string, d *directive, check bool) *Error {
	res.CUDAFile = filepath.Join(dir, cuda.OutputFile)
	var content []byte
	if d != nil {
		t := target.GPU()
		t.Precision = d.Arg
		var err error
		if content, err = cuda.Render(f, t); err != nil {
			return &Error{Pos: token.Position{Filename: res.CUDAFile}, Msg: err.Error()}
		}
	}
	st, werr := syncFile(res.CUDAFile, content, check)
	if werr != nil {
		return werr
	}
	res.CUDAContent, res.CUDAStatus = content, st
	if content == nil && st == Unchanged {
		res.CUDAFile = ""
	}
	return nil
}

// addGuards adds the constant guards gs to f, each once (the same
// constant name always has the same value).
func addGuards(f *desc.File, gs []desc.Guard) {
	for _, g := range gs {
		if !slices.Contains(f.Guards, g) {
			f.Guards = append(f.Guards, g)
		}
	}
}

// scanPackage reads the directives of every comment of every file: each
// well-formed directive in the doc comment of a function declaration is
// attached to it; any other directive, and every malformed directive or
// near miss, is an error. The annotated functions come back in source
// order (by file name, then position).
//
// attempted holds the generated names of functions and types whose
// directives have errors (their use is not a second error); misplacedModels
// the types a misplaced //ocannl:model block was probably meant for.
func scanPackage(p *packages.Package, out string, constrained map[string]bool, plat *platform) (srcs []*kernelSrc, models []*modelSrc, attempted, misplacedModels map[string]bool, cudaDir *directive, errs []*Error) {
	s := &pkgScan{p: p, plat: plat, attempted: map[string]bool{}, misplacedModels: map[string]bool{}}
	files := slices.Clone(p.Syntax)
	name := func(f *ast.File) string { return p.Fset.Position(f.Package).Filename }
	slices.SortFunc(files, func(a, b *ast.File) int { return cmp.Compare(name(a), name(b)) })
	for _, f := range files {
		if name(f) == out || constrained[filepath.Base(name(f))] {
			// A file with build constraints is reported by
			// unreadDirectives instead, on every platform.
			continue
		}
		s.scanFile(f)
	}
	s.sortBySource()
	return s.srcs, s.models, s.attempted, s.misplacedModels, s.cudaDir, s.errs
}

// pkgScan is the state of scanPackage across the files of a package:
// what it has found so far, in the order found.
type pkgScan struct {
	p                          *packages.Package
	plat                       *platform
	srcs                       []*kernelSrc
	models                     []*modelSrc
	attempted, misplacedModels map[string]bool
	cudaDir                    *directive
	errs                       []*Error
}

// fileScan is the state of scanPackage within one file: which comments
// are the doc comments of which declarations, and the kernels and models
// of the file found so far.
type fileScan struct {
	*pkgScan
	f      *ast.File
	docOf  map[*ast.Comment]*ast.FuncDecl
	typeOf map[*ast.Comment]*ast.TypeSpec
	byType map[*ast.TypeSpec]*modelSrc
	byFunc map[*ast.FuncDecl]*kernelSrc
}

// scanFile reads the directives of every comment group of f.
func (s *pkgScan) scanFile(f *ast.File) {
	fs := &fileScan{
		pkgScan: s,
		f:       f,
		docOf:   funcDocComments(f),
		typeOf:  typeDocComments(f),
		byType:  map[*ast.TypeSpec]*modelSrc{},
		byFunc:  map[*ast.FuncDecl]*kernelSrc{},
	}
	for _, cg := range f.Comments {
		fs.scanGroup(cg)
	}
}

// funcDocComments maps each comment of the doc comment of a function
// declaration of f to that declaration.
func funcDocComments(f *ast.File) map[*ast.Comment]*ast.FuncDecl {
	docOf := map[*ast.Comment]*ast.FuncDecl{}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Doc != nil {
			for _, c := range fd.Doc.List {
				docOf[c] = fd
			}
		}
	}
	return docOf
}

// typeDocComments maps each comment of the doc comment of a type spec of
// f to that spec (a lone spec of a type declaration also owns the
// declaration's doc comment).
func typeDocComments(f *ast.File) map[*ast.Comment]*ast.TypeSpec {
	typeOf := map[*ast.Comment]*ast.TypeSpec{}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, sp := range gd.Specs {
			ts := sp.(*ast.TypeSpec)
			doc := ts.Doc
			if doc == nil && len(gd.Specs) == 1 {
				doc = gd.Doc
			}
			if doc != nil {
				for _, c := range doc.List {
					typeOf[c] = ts
				}
			}
		}
	}
	return typeOf
}

// scanGroup reads the directives of comment group cg, attaching each to
// the package, model or kernel it belongs to. A misplaced comment group
// is reported once, at its first misplaced directive (or at its
// //ocannl:model line).
func (fs *fileScan) scanGroup(cg *ast.CommentGroup) {
	reported := false
	misplaced := func(d *directive) {
		if !reported {
			fs.errs = append(fs.errs, misplacedError(fs.p.Fset, fs.f, cg, d, fs.attempted, fs.misplacedModels))
			reported = true
		}
	}
	for _, c := range cg.List {
		d, err := parseComment(fs.p.Fset, c)
		if err != nil {
			fs.errs = append(fs.errs, err)
			if fd := fs.docOf[c]; fd != nil {
				// A function with a broken directive is still meant
				// to be generated: its call to ocannlX is not a
				// second error.
				fs.attempted[genName(fd.Name.Name)] = true
			}
			continue
		}
		switch {
		case d == nil:
		case d.Verb == verbCUDA:
			fs.cudaDirective(c, d)
		case fs.typeOf[c] != nil:
			fs.typeDirective(fs.typeOf[c], d, misplaced)
		default:
			fs.funcDirective(fs.docOf[c], d, misplaced)
		}
	}
}

// cudaDirective takes d, an //ocannl:cuda directive in comment c (with no
// argument, or the precision tf32 or bf16), as the package's, or reports
// why it cannot be.
func (fs *fileScan) cudaDirective(c *ast.Comment, d *directive) {
	switch {
	case d.Arg != "" && d.Arg != "tf32" && d.Arg != "bf16":
		fs.errs = append(fs.errs, d.errAt(d.ArgCol, "//ocannl:cuda takes no argument or a tensor-core precision, tf32 or bf16, not %s", spec.Quote(d.Arg)))
	case fs.docOf[c] != nil || fs.typeOf[c] != nil:
		fs.errs = append(fs.errs, d.errAt(d.VerbCol, "//ocannl:cuda is a package directive: write it in a comment of its own, not in a declaration's doc comment"))
	case fs.cudaDir != nil:
		fs.errs = append(fs.errs, citeAt(d.Pos, d.VerbCol, "a second //ocannl:cuda in the package (the first is", fs.cudaDir.at(0), "the first //ocannl:cuda", ")"))
	default:
		fs.cudaDir = d
	}
}

// typeDirective attaches d, a directive in the doc comment of type ts, to
// the model of ts (an //ocannl:model line starts it), or reports why it
// cannot be; misplaced reports d's comment group as misplaced.
func (fs *fileScan) typeDirective(ts *ast.TypeSpec, d *directive, misplaced func(*directive)) {
	ms := fs.byType[ts]
	switch {
	case d.Verb == verbModel && ms != nil:
		fs.errs = append(fs.errs, citeAt(d.Pos, d.VerbCol, "a second //ocannl:model on type "+ts.Name.Name+" (the first is", ms.head.at(0), "the first //ocannl:model", ")"))
	case d.Verb == verbModel:
		ms = &modelSrc{fset: fs.p.Fset, pkg: fs.p.Types, plat: fs.plat, spec: ts, head: d}
		fs.byType[ts] = ms
		fs.models = append(fs.models, ms)
	case ms == nil && !modelLineVerbs[d.Verb]:
		misplaced(d)
	case ms == nil:
		fs.errs = append(fs.errs, d.errAt(d.VerbCol, "//ocannl:%s on type %s must follow an //ocannl:model line", d.Verb, ts.Name.Name))
	case !modelLineVerbs[d.Verb]:
		fs.errs = append(fs.errs, d.errAt(d.VerbCol, "//ocannl:%s is a kernel directive (for functions); a model's lines are layer, entry, loss, input, let, dim, return, sgd, adam and adamw", d.Verb))
	default:
		ms.lines = append(ms.lines, d)
	}
}

// funcDirective attaches d, a directive in the doc comment of function fd
// (nil: of no declaration), to the kernel of fd, or reports why it cannot
// be; misplaced reports d's comment group as misplaced.
func (fs *fileScan) funcDirective(fd *ast.FuncDecl, d *directive, misplaced func(*directive)) {
	if fd != nil && (d.Verb == verbModel || modelLineVerbs[d.Verb]) {
		fs.errs = append(fs.errs, d.errAt(d.VerbCol, "//ocannl:%s belongs to a model: write //ocannl:model and its lines in the doc comment of a struct type", d.Verb))
		fs.attempted[genName(fd.Name.Name)] = true
		return
	}
	if fd == nil {
		misplaced(d)
		return
	}
	k := fs.byFunc[fd]
	if k == nil {
		k = &kernelSrc{fset: fs.p.Fset, pkg: fs.p.Types, plat: fs.plat, fn: fd}
		if obj, ok := fs.p.TypesInfo.Defs[fd.Name].(*types.Func); ok {
			k.obj = obj
		}
		fs.byFunc[fd] = k
		fs.srcs = append(fs.srcs, k)
	}
	k.dirs = append(k.dirs, d)
}

// sortBySource puts the kernels and models found in source order (by file
// name, then position), stably.
func (s *pkgScan) sortBySource() {
	slices.SortStableFunc(s.srcs, func(a, b *kernelSrc) int {
		pa, pb := a.fset.Position(a.fn.Pos()), b.fset.Position(b.fn.Pos())
		return cmp.Or(cmp.Compare(pa.Filename, pb.Filename), cmp.Compare(pa.Offset, pb.Offset))
	})
	slices.SortStableFunc(s.models, func(a, b *modelSrc) int {
		pa, pb := a.fset.Position(a.spec.Pos()), b.fset.Position(b.spec.Pos())
		return cmp.Or(cmp.Compare(pa.Filename, pb.Filename), cmp.Compare(pa.Offset, pb.Offset))
	})
}

// misplacedError is the error for the directives of comment group cg,
// the doc comment of no declaration, first found misplaced at d. A group
// with an //ocannl:model line is a misplaced model: it is reported at that
// line as belonging on a type declaration, naming the next type of the
// file (whose generated struct and methods are then not also reported
// undefined); any other group gets the function-declaration message at d.
func misplacedError(fset *token.FileSet, f *ast.File, cg *ast.CommentGroup, d *directive, attempted, misplacedModels map[string]bool) *Error {
	var model *directive
	for _, c := range cg.List {
		if md, err := parseComment(fset, c); err == nil && md != nil && md.Verb == verbModel {
			model = md
			break
		}
	}
	if model == nil {
		return d.errAt(d.VerbCol,
			"misplaced //ocannl:%s: directives belong in the doc comment of a function declaration (directly above func, with no blank line)", d.Verb)
	}
	where := "the struct type"
	for _, decl := range f.Decls {
		if gd, ok := decl.(*ast.GenDecl); ok && gd.Tok == token.TYPE && gd.Pos() > cg.End() && len(gd.Specs) > 0 {
			next := gd.Specs[0].(*ast.TypeSpec).Name.Name
			attempted[genTypeName(next)] = true
			misplacedModels[next] = true
			where = "type " + next
			break
		}
	}
	return model.errAt(model.VerbCol,
		"misplaced //ocannl:model block: a model's directives belong in the doc comment of a type declaration; move them directly above %s, with no blank line or other declaration between", where)
}

// packageErrors returns the loader's errors for p, without those the
// bootstrap causes (see bootstrapError). Type errors come from
// p.TypeErrors, with their token positions. Because export data is
// requested, the go command also compiles the package, and a failure
// comes back as one error holding the compiler's output ("# path"
// followed by one line per error); the compiler stops at type errors, so
// when the type check found any, that output only repeats them (the
// ignorable ones included) and is dropped; otherwise it is reported whole.
func packageErrors(p *packages.Package, names, modelTypes, models map[string]bool) []*Error {
	ignorable := bootstrapErrors(p, names, modelTypes, models)
	var errs []*Error
	for _, te := range p.TypeErrors {
		if !ignorable(te) {
			errs = append(errs, &Error{Pos: te.Fset.Position(te.Pos), Msg: te.Msg})
		}
	}
	for _, e := range p.Errors {
		switch {
		case e.Kind == packages.TypeError && len(p.TypeErrors) > 0:
			// Reported above.
		case strings.HasPrefix(e.Msg, "# ") && len(p.TypeErrors) > 0:
			// The compiler's copy of the type errors.
		default:
			errs = append(errs, &Error{Pos: parsePos(e.Pos), Msg: strings.TrimRight(e.Msg, "\n")})
		}
	}
	return errs
}

// bootstrapErrors returns the test for the type errors the bootstrap
// causes: a reference to a function or type about to be generated (an
// undefined identifier in names: ocannlX, or ocannlT embedded in model
// T), and a selector that finds no field or method yet on a model type
// (the methods the embedded generated struct provides): one of p's
// (modelTypes), one of another package generated in the same run
// (models, "path.Type": a package using m.MLP's Init is loaded with m,
// whose generated file is replaced while loading), or a struct embedding
// one. The test looks at the syntax and type information at the error's
// position, never at the message.
func bootstrapErrors(p *packages.Package, names, modelTypes, models map[string]bool) func(types.Error) bool {
	idents := map[token.Pos]*ast.Ident{}
	sels := map[token.Pos]*ast.SelectorExpr{}
	for _, f := range p.Syntax {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Ident:
				idents[n.Pos()] = n
			case *ast.SelectorExpr:
				sels[n.Sel.Pos()] = n
			}
			return true
		})
	}
	info := p.TypesInfo
	isModel := func(obj *types.TypeName) bool {
		if obj.Pkg() == p.Types {
			return modelTypes[obj.Name()]
		}
		return obj.Pkg() != nil && models[obj.Pkg().Path()+"."+obj.Name()]
	}
	return func(te types.Error) bool {
		if sel := sels[te.Pos]; sel != nil {
			if _, found := info.Selections[sel]; found || info.Uses[sel.Sel] != nil {
				return false
			}
			return hasModel(info.TypeOf(sel.X), isModel, 0)
		}
		id := idents[te.Pos]
		if id == nil || !names[id.Name] || info.Uses[id] != nil {
			return false
		}
		// Unresolved; Defs holds the field of an embedded type name.
		v, field := info.Defs[id].(*types.Var)
		return info.Defs[id] == nil || field && v.Embedded()
	}
}

// hasModel reports whether t (or what it points to) is a model type, or
// a struct that embeds one (within a few levels), so that a selector on
// it may name a method the generated code is about to declare.
func hasModel(t types.Type, isModel func(*types.TypeName) bool, depth int) bool {
	if ptr, ok := t.(*types.Pointer); ok {
		t = ptr.Elem()
	}
	if t == nil {
		return false
	}
	if named, ok := t.(*types.Named); ok && isModel(named.Obj()) {
		return true
	}
	st, ok := t.Underlying().(*types.Struct)
	if !ok || depth >= 4 {
		return false
	}
	for f := range st.Fields() {
		if f.Embedded() && hasModel(f.Type(), isModel, depth+1) {
			return true
		}
	}
	return false
}

// renderErrors attributes an emitter failure to the kernels that cause
// it, by rendering each kernel on its own, and reports each at its
// kernel's computation directive; a failure no single kernel explains is
// reported at the output file.
func renderErrors(f *desc.File, srcs []*kernelSrc, models []*modelSrc, out string, err error) []*Error {
	var errs []*Error
	for _, k := range f.Kernels {
		one := &desc.File{Package: f.Package, Sources: f.Sources, Kernels: []*desc.Kernel{k}, Guards: f.Guards}
		if _, kerr := gocode.Render(one, gocode.Options{}); kerr != nil {
			for _, ms := range models {
				if strings.HasPrefix(k.Name, genTypeName(ms.spec.Name.Name)) {
					errs = append(errs, ms.head.errAt(ms.head.VerbCol, "cannot generate %s: %v", k.Name, kerr))
				}
			}
			for _, s := range srcs {
				if genName(s.fn.Name.Name) == k.Name {
					d := s.primary()
					errs = append(errs, d.errAt(d.ArgCol, "cannot generate %s: %v", k.Name, kerr))
				}
			}
		}
	}
	if len(errs) == 0 {
		errs = append(errs, &Error{Pos: token.Position{Filename: out}, Msg: "emitting code: " + err.Error()})
	}
	return errs
}
