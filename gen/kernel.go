package gen

import (
	"errors"
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ocannlgen/ocannlgen/emit/desc"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/pipeline"
	"github.com/ocannlgen/ocannlgen/spec"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// kernelSrc is an annotated function declaration and its directives.
type kernelSrc struct {
	fset *token.FileSet
	pkg  *types.Package
	plat *platform // finds sizes declared in files with build constraints
	fn   *ast.FuncDecl
	obj  *types.Func // nil when the loader could not type the declaration
	dirs []*directive
}

// genName is the name of the generated function: "ocannl" followed by
// the annotated function's name with its first letter upper-cased.
func genName(name string) string {
	r, n := utf8.DecodeRuneInString(name)
	return "ocannl" + string(unicode.ToUpper(r)) + name[n:]
}

// primary returns the directive that says what the kernel computes: its
// einsum, einmax or expr directive or its first do line (the first
// directive if there is none).
func (k *kernelSrc) primary() *directive {
	for _, d := range k.dirs {
		switch d.Verb {
		case verbEinsum, verbEinmax, verbExpr, verbDo:
			return d
		}
	}
	return k.dirs[0]
}

// param is one parameter of an annotated function.
type param struct {
	name   string
	pos    token.Position
	typ    string // the Go type as written for messages
	slice  bool
	dims   []int // array dims, outermost first
	elem   string
	output bool
	shape  *shapeDir // from //ocannl:shape, or nil
}

// shapeDir is a parsed `//ocannl:shape PARAM SHAPE`.
type shapeDir struct {
	dir   *directive
	param string
	text  string // SHAPE, without a trailing comment
	col   int    // column of text's first byte
	decl  *program.ShapeDecl
	// named are the sizes text writes as Go constant names, in order.
	named []*program.DimDecl
}

// copyTo appends the shape to a synthesized program line, with each size
// written as a constant name replaced by its value (mapped to the name).
func (s *shapeDir) copyTo(l *progLine) {
	k := 0
	for _, d := range s.named {
		off := d.Pos.Col - 1 - len(shapePrefix)
		l.copyAt(s.text[k:off], s.col+k)
		l.mapAll(strconv.Itoa(d.Size), s.col+off)
		k = off + len(d.Name)
	}
	l.copyAt(s.text[k:], s.col+k)
}

// rows returns the shape's sizes per kind (batch, input, output).
func (s *shapeDir) rows() (b, i, o []int) {
	get := func(r *program.RowDecl) []int {
		if r == nil {
			return nil
		}
		out := make([]int, len(r.Dims))
		for k, d := range r.Dims {
			out[k] = d.Size
		}
		return out
	}
	return get(s.decl.Batch), get(s.decl.Input), get(s.decl.Output)
}

// memDims returns the shape's sizes in memory order: batch, output, input.
func (s *shapeDir) memDims() []int {
	b, i, o := s.rows()
	return slices.Concat(b, o, i)
}

// dimEntry is one NAME=VALUE of a `//ocannl:dims` directive.
type dimEntry struct {
	dir     *directive
	name    string
	nameCol int
	value   int
	valText string
	valCol  int
	konst   string // the Go constant's name, or "" for a literal
}

// kernelJob holds what compiling one kernel collects.
type kernelJob struct {
	padIn map[string]bool // inputs copied into padded locals (declName)
	*kernelSrc
	errs   []*Error
	comp   *directive // einsum, einmax or expr
	dos    []*directive
	dims   []*dimEntry
	shapes map[string]*shapeDir
	// sizeConsts are the Go constants //ocannl:shape sizes name.
	sizeConsts []desc.Guard
	params     []*param
	// einsum/einmax
	spec     *spec.Einsum
	specCols []int
	// expr
	expr program.Expr
}

func (j *kernelJob) fail(e *Error) { j.errs = append(j.errs, e) }

// primary is the directive errors about the kernel as a whole are
// reported at.
func (j *kernelJob) primary() *directive { return j.kernelSrc.primary() }

// compileKernel checks an annotated function, synthesizes its program,
// infers shapes, lowers the loop nests and returns the kernel for the
// emitter with the constant guards it depends on.
func compileKernel(src *kernelSrc) (*desc.Kernel, []desc.Guard, []*Error) {
	k, guards, _, errs := compileKernelProg(src)
	return k, guards, errs
}

// compileKernelProg is compileKernel also returning the synthesized
// program the kernel was compiled from (nil when it failed before one),
// whose positions it maps to the Go source.
func compileKernelProg(src *kernelSrc) (*desc.Kernel, []desc.Guard, *synthProgram, []*Error) {
	j := &kernelJob{kernelSrc: src, shapes: map[string]*shapeDir{}}
	j.classify()
	if len(j.errs) > 0 {
		return nil, nil, nil, j.errs
	}
	j.signature()
	if len(j.errs) > 0 {
		return nil, nil, nil, j.errs
	}
	j.parseArgs()
	if len(j.errs) > 0 {
		return nil, nil, nil, j.errs
	}
	prog := j.synthesize()
	if len(j.errs) > 0 {
		return nil, nil, nil, j.errs
	}
	k := j.infer(prog)
	if len(j.errs) > 0 {
		return nil, nil, prog, j.errs
	}
	// Inputs read by padded convolutions need margins the caller's arrays
	// do not have: compile again with a copy into a padded local.
	for _, kp := range k.Params {
		if t := k.Prog.Graph.Tensors[kp.Tensor]; t.Padding != nil && !kp.Output {
			if j.padIn == nil {
				j.padIn = map[string]bool{}
			}
			j.padIn[kp.Name] = true
		}
	}
	if len(j.padIn) > 0 {
		prog = j.synthesize()
		if len(j.errs) > 0 {
			return nil, nil, nil, j.errs
		}
		if k = j.infer(prog); len(j.errs) > 0 {
			return nil, nil, prog, j.errs
		}
	}
	var guards []desc.Guard
	for _, d := range j.dims {
		if d.konst != "" && !slices.ContainsFunc(guards, func(g desc.Guard) bool { return g.Name == d.konst }) {
			guards = append(guards, desc.Guard{Name: d.konst, Value: int64(d.value)})
		}
	}
	for _, g := range j.sizeConsts {
		if !slices.Contains(guards, g) {
			guards = append(guards, g)
		}
	}
	return k, guards, prog, nil
}

// classify sorts the directives by verb and checks that the kernel has
// exactly one computation: an einsum, einmax or expr, or do lines.
func (j *kernelJob) classify() {
	var first *directive
	for _, d := range j.dirs {
		switch d.Verb {
		case verbEinsum, verbEinmax, verbExpr, verbDo:
			if first != nil && (d.Verb != verbDo || first.Verb != verbDo) {
				j.fail(citeAt(d.Pos, d.VerbCol, fmt.Sprintf("%s already has a //ocannl:%s directive", j.fn.Name.Name, first.Verb),
					first.at(0), "the first computation directive", "; a kernel has exactly one einsum, einmax or expr directive, or one or more do directives"))
				continue
			}
			if first == nil {
				first = d
			}
			if d.Verb == verbDo {
				j.dos = append(j.dos, d)
			} else {
				j.comp = d
			}
		}
	}
	if first == nil {
		d := j.dirs[0]
		j.fail(d.errAt(d.VerbCol, "%s has a //ocannl:%s directive but no einsum, einmax, expr or do directive saying what to compute",
			j.fn.Name.Name, d.Verb))
	}
}

// isProgName reports whether s is a name of the program language (ASCII
// letters, digits and '_', not starting with a digit).
func isProgName(s string) bool {
	if s == "" {
		return false
	}
	for k := 0; k < len(s); k++ {
		c := s[k]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || k > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// signature checks the function's declaration and parameter types.
func (j *kernelJob) signature() {
	fn := j.fn
	name := fn.Name.Name
	at := func(p token.Pos) token.Position { return j.fset.Position(p) }
	if fn.Recv != nil {
		d := j.dirs[0]
		j.fail(d.errAt(d.VerbCol, "//ocannl: directives annotate top-level functions, not methods: %s has a receiver", name))
		return
	}
	if fn.Type.TypeParams != nil {
		j.fail(errAt(at(fn.Name.Pos()), 0, "%s: an ocannl kernel cannot be generic", name))
		return
	}
	if j.obj == nil {
		j.fail(errAt(at(fn.Name.Pos()), 0, "%s: the declaration could not be type-checked", name))
		return
	}
	sig := j.obj.Signature()
	if sig.Results().Len() > 0 {
		j.fail(errAt(at(fn.Type.Results.Pos()), 0, "%s: an ocannl kernel returns nothing; it writes its last parameter", name))
	}
	if sig.Variadic() {
		j.fail(errAt(at(fn.Type.Params.Pos()), 0, "%s: an ocannl kernel cannot be variadic", name))
	}
	n := sig.Params().Len()
	if n == 0 {
		j.fail(errAt(at(fn.Name.Pos()), 0, "%s: an ocannl kernel needs at least one parameter, the output (the last parameter)", name))
		return
	}
	// Types of other packages by their package's name (rt.BF16).
	qual := func(p *types.Package) string {
		if p == j.pkg {
			return ""
		}
		return p.Name()
	}
	elem := ""
	// The type expression of each parameter, in order.
	var typeExprs []ast.Expr
	for _, f := range fn.Type.Params.List {
		for range max(len(f.Names), 1) {
			typeExprs = append(typeExprs, f.Type)
		}
	}
	for i := range n {
		v := sig.Params().At(i)
		p := &param{name: v.Name(), pos: at(v.Pos()), typ: types.TypeString(v.Type(), qual), output: i == n-1}
		var culprit types.Object
		if i < len(typeExprs) {
			culprit = j.plat.exprCulprit(typeExprs[i])
		}
		switch {
		case culprit != nil && p.name != "" && p.name != "_":
			// Its sizes would be the generating platform's.
			j.fail(errAt(p.pos, 0, "parameter %s: %s", p.name, platformProblem("its type", culprit)))
			continue
		case p.name == "" || p.name == "_":
			j.fail(errAt(p.pos, 0, "%s: every parameter of an ocannl kernel must be named", name))
			continue
		case !isProgName(p.name):
			j.fail(errAt(p.pos, 0, "parameter %s: kernel parameter names must be ASCII letters, digits and '_' (they name tensors of the program language)", p.name))
			continue
		case program.IsKeyword(p.name):
			j.fail(errAt(p.pos, 0, "parameter %s: %s is a reserved word of the program language; rename the parameter", p.name, spec.Quote(p.name)))
			continue
		}
		if !analyzeType(v.Type(), p) {
			j.fail(errAt(p.pos, 0, "parameter %s has type %s; ocannl kernel parameters are *[d0][d1]...T (a pointer to nested arrays) or []T, with T float32 or float64",
				p.name, p.typ))
			continue
		}
		switch {
		case p.elem == "bf16" || elem == "bf16":
			// Checked below: rt.BF16 inputs, a float32 output.
			if elem == "" {
				elem = p.elem
			}
		case elem == "":
			elem = p.elem
		case p.elem != elem:
			j.fail(errAt(p.pos, 0, "parameter %s has element type %s but the earlier parameters have %s; all parameters of a kernel share one element type",
				p.name, p.elem, elem))
			continue
		}
		j.params = append(j.params, p)
	}
	if len(j.errs) == 0 && len(j.params) == n {
		j.checkBF16()
	}
}

// bf16Operands reports whether the kernel's inputs are rt.BF16 arrays.
func (j *kernelJob) bf16Operands() bool {
	return slices.ContainsFunc(j.inputs(), func(p *param) bool { return p.elem == "bf16" })
}

// checkBF16 checks a kernel with rt.BF16 parameters: an //ocannl:einsum
// whose inputs are all rt.BF16 and whose output is float32.
func (j *kernelJob) checkBF16() {
	out := j.output()
	var first *param
	for _, p := range j.inputs() {
		if p.elem == "bf16" {
			first = p
			break
		}
	}
	if first == nil {
		if out.elem == "bf16" {
			j.fail(errAt(out.pos, 0, "output %s has type %s, but only the inputs of a kernel may be rt.BF16 arrays (the output is float32, accumulated in float32 from rt.BF16 inputs)", out.name, out.typ))
		}
		return
	}
	for _, p := range j.inputs() {
		if p.elem != "bf16" {
			j.fail(errAt(p.pos, 0, "parameter %s has element type %s but %s is rt.BF16: the inputs of a kernel over rt.BF16 operands are all rt.BF16 (convert with rt.BF16sFromFloat32s, or use //ocannl:model bf16, which rounds float32 operands inside its contractions)",
				p.name, p.elem, first.name))
			return
		}
	}
	if out.elem != "float32" {
		j.fail(errAt(out.pos, 0, "output %s has type %s: a kernel over rt.BF16 operands writes a float32 output (float32 accumulation; round it with rt.BF16sFromFloat32s where bf16 is wanted)", out.name, out.typ))
		return
	}
	for _, d := range j.dirs {
		switch d.Verb {
		case verbEinmax, verbExpr, verbDo:
			j.fail(d.errAt(d.VerbCol, "//ocannl:%s over rt.BF16 operands: only //ocannl:einsum runs on rt.BF16 arrays (its contractions on the rt/bf16 kernels, its other nests on the values widened to float32); use float32 arrays here", d.Verb))
			return
		}
	}
}

// analyzeType fills p's kind, dims and element type from a Go type and
// reports whether the type is supported.
func analyzeType(t types.Type, p *param) bool {
	basic := func(t types.Type) bool {
		b, ok := types.Unalias(t).(*types.Basic)
		if !ok {
			return false
		}
		switch b.Kind() {
		case types.Float32:
			p.elem = "float32"
		case types.Float64:
			p.elem = "float64"
		default:
			return false
		}
		return true
	}
	basicOrBF16 := func(t types.Type) bool {
		if isRtBF16(t) {
			p.elem = "bf16"
			return true
		}
		return basic(t)
	}
	switch t := types.Unalias(t).(type) {
	case *types.Slice:
		p.slice = true
		return basicOrBF16(t.Elem())
	case *types.Pointer:
		e := types.Unalias(t.Elem())
		for {
			a, ok := e.(*types.Array)
			if !ok {
				break
			}
			if a.Len() < 1 || a.Len() > maxDim {
				return false
			}
			p.dims = append(p.dims, int(a.Len()))
			e = types.Unalias(a.Elem())
		}
		return len(p.dims) > 0 && basicOrBF16(e)
	}
	return false
}

// rtPath is the import path of the runtime package (rt.BF16).
const rtPath = "github.com/ocannlgen/ocannlgen/rt"

// isRtBF16 reports whether t is rt.BF16 (or an alias of it).
func isRtBF16(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Name() == "BF16" && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == rtPath
}

func (j *kernelJob) inputs() []*param { return j.params[:len(j.params)-1] }
func (j *kernelJob) output() *param   { return j.params[len(j.params)-1] }

func (j *kernelJob) paramNamed(name string) *param {
	for _, p := range j.params {
		if p.name == name {
			return p
		}
	}
	return nil
}

// parseArgs parses every directive's arguments.
func (j *kernelJob) parseArgs() {
	for _, d := range j.dirs {
		switch d.Verb {
		case verbShape:
			j.parseShape(d)
		}
	}
	for _, d := range j.dirs {
		switch d.Verb {
		case verbEinsum, verbEinmax:
			j.parseEinsum(d)
		case verbExpr:
			j.parseExpr(d)
		case verbDo:
			j.parseDo(d)
		case verbDims:
			j.parseDims(d)
		}
	}
	if len(j.errs) == 0 && j.spec != nil {
		j.checkDimsLabels()
	}
}

// parseGoString parses a Go double-quoted string literal at the start of
// s (which starts at column col) and returns its value, the source column
// of every byte of the value and the literal's length in s.
func parseGoString(d *directive, s string, col int, what string) (string, []int, int, *Error) {
	if s == "" {
		return "", nil, 0, d.errAt(col, "//ocannl:%s needs %s, a Go double-quoted string", d.Verb, what)
	}
	if s[0] == '`' {
		return "", nil, 0, d.errAt(col, "//ocannl:%s takes %s as a Go double-quoted string, not a raw string", d.Verb, what)
	}
	if s[0] != '"' {
		return "", nil, 0, d.errAt(col, "//ocannl:%s needs %s, a Go double-quoted string; found %s", d.Verb, what, spec.Quote(s))
	}
	lit, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", nil, 0, d.errAt(col, "//ocannl:%s: unterminated or malformed string literal", d.Verb)
	}
	var val []byte
	var cols []int
	body := lit[1 : len(lit)-1]
	off := 1
	for body != "" {
		r, multibyte, tail, err := strconv.UnquoteChar(body, '"')
		if err != nil {
			return "", nil, 0, d.errAt(col+off, "//ocannl:%s: malformed escape in string literal", d.Verb)
		}
		b := []byte{byte(r)}
		if multibyte {
			b = utf8.AppendRune(nil, r)
		}
		for range b {
			cols = append(cols, col+off)
		}
		val = append(val, b...)
		off += len(body) - len(tail)
		body = tail
	}
	return string(val), cols, len(lit), nil
}

// parseEinsum parses `//ocannl:einsum "SPEC"` (or einmax).
func (j *kernelJob) parseEinsum(d *directive) {
	s, cols, n, err := parseGoString(d, d.Arg, d.ArgCol, "a spec")
	if err != nil {
		j.fail(err)
		return
	}
	if rest := d.Arg[n:]; strings.TrimSpace(rest) != "" {
		k := n + len(rest) - len(strings.TrimLeft(rest, " \t"))
		j.fail(d.errAt(d.ArgCol+k, "unexpected text after the spec string of //ocannl:%s: %s", d.Verb, spec.Quote(d.Arg[k:])))
		return
	}
	j.specCols = cols
	sp, perr := spec.ParseEinsum(s)
	if perr != nil {
		var se *spec.Error
		if errors.As(perr, &se) {
			j.fail(d.errAt(j.specCol(se.Col), "in spec %s: %s", spec.Quote(s), se.Msg))
		} else {
			j.fail(d.errAt(d.ArgCol, "in spec %s: %v", spec.Quote(s), perr))
		}
		return
	}
	j.spec = sp
	nin := len(j.inputs())
	if nin < 1 || nin > 2 {
		j.fail(d.errAt(d.VerbCol, "//ocannl:%s needs 1 or 2 input parameters before the output parameter; %s has %d",
			d.Verb, j.fn.Name.Name, nin))
		return
	}
	if len(sp.RHS) != nin {
		j.fail(d.errAt(j.specCol(1), "spec %s has %d operand slot(s) but %s has %d input parameter(s) (the last parameter is the output)",
			spec.Quote(s), len(sp.RHS), j.fn.Name.Name, nin))
	}
}

// specCol maps a 1-based column of the unquoted spec to a source column.
func (j *kernelJob) specCol(c int) int {
	switch {
	case c >= 1 && c <= len(j.specCols):
		return j.specCols[c-1]
	case len(j.specCols) > 0:
		return j.specCols[len(j.specCols)-1] + 1 // just past the last byte
	}
	return j.comp.ArgCol + 1
}

// parseErr maps a parse error of a directive's argument text (parsed as
// a one-line program or expression, possibly after a prefix of length
// skip, the argument starting at source column argCol) to an Error at
// the directive whose message is prefix followed by the parser's.
func parseErr(d *directive, err error, argCol, skip int, prefix string) *Error {
	var pe *program.Error
	if !errors.As(err, &pe) {
		return d.errAt(argCol, "%s%v", prefix, err)
	}
	at := func(p spec.Pos) int { return argCol + p.Col - 1 - skip }
	e := d.errAt(at(pe.Pos), "%s%s", prefix, pe.Msg)
	e.Related = relocate(pe.Related, len(prefix), func(p spec.Pos) token.Position { return d.at(at(p)) })
	return e
}

// parseExpr parses `//ocannl:expr EXPR`.
func (j *kernelJob) parseExpr(d *directive) {
	if d.Arg == "" {
		j.fail(d.errAt(d.ArgCol, "//ocannl:expr needs an expression over the input parameters"))
		return
	}
	e, err := program.ParseExpr(d.Arg)
	if err != nil {
		j.fail(parseErr(d, err, d.ArgCol, 0, ""))
		return
	}
	if ip := findInlineParam(e); ip != nil {
		j.fail(d.errAt(d.ArgCol+ip.Pos.Col-1, "learnable parameters ({%s}) cannot appear in a kernel; pass the tensor as a function parameter", ip.Name))
		return
	}
	j.expr = e
}

// parseDo parses `//ocannl:do STMT`.
func (j *kernelJob) parseDo(d *directive) {
	if d.Arg == "" {
		j.fail(d.errAt(d.ArgCol, "//ocannl:do needs an assignment statement writing %s", j.output().name))
		return
	}
	p, err := program.Parse(d.Arg)
	if err != nil {
		j.fail(parseErr(d, err, d.ArgCol, 0, ""))
		return
	}
	if len(p.Stmts) != 1 {
		j.fail(d.errAt(d.ArgCol, "//ocannl:do takes exactly one assignment statement"))
		return
	}
	st, ok := p.Stmts[0].(*program.AssignStmt)
	if !ok {
		j.fail(d.errAt(d.ArgCol, "//ocannl:do takes an assignment statement (OUT =: ..., OUT =+ ..., ...), not a declaration"))
		return
	}
	out := j.output().name
	if st.Inline || st.Target != out {
		j.fail(d.errAt(d.ArgCol+st.TargetPos.Col-1, "//ocannl:do must write the output parameter %s, not %s", out, st.Target))
		return
	}
	for _, a := range st.Args {
		if ip := findInlineParam(a); ip != nil {
			j.fail(d.errAt(d.ArgCol+ip.Pos.Col-1, "learnable parameters ({%s}) cannot appear in a kernel; pass the tensor as a function parameter", ip.Name))
			return
		}
	}
}

// findInlineParam returns the first inline parameter `{ w }` of e.
func findInlineParam(e program.Expr) *program.InlineParam {
	var found *program.InlineParam
	program.Inspect(e, func(x program.Expr) bool {
		if ip, ok := x.(*program.InlineParam); ok && found == nil {
			found = ip
		}
		return found == nil
	})
	return found
}

func isGoIdent(s string) bool {
	for k, r := range s {
		if !(r == '_' || unicode.IsLetter(r) || k > 0 && unicode.IsDigit(r)) {
			return false
		}
	}
	return s != ""
}

// maxDim bounds sizes given by //ocannl:dims, as spec integers are bounded.
const maxDim = min(1<<31, math.MaxInt)

// parseDims parses `//ocannl:dims NAME=VALUE ...`.
func (j *kernelJob) parseDims(d *directive) {
	if d.Arg == "" {
		j.fail(d.errAt(d.ArgCol, "//ocannl:dims needs NAME=VALUE pairs"))
		return
	}
	s := d.Arg
	k := 0
	for k < len(s) {
		if isSpace(s[k]) {
			k++
			continue
		}
		start := k
		for k < len(s) && !isSpace(s[k]) {
			k++
		}
		tok := s[start:k]
		col := d.ArgCol + start
		eq := strings.IndexByte(tok, '=')
		if eq < 0 {
			j.fail(d.errAt(col, "//ocannl:dims: expected NAME=VALUE (no spaces around '='), found %s", spec.Quote(tok)))
			return
		}
		name, val := tok[:eq], tok[eq+1:]
		if !isProgName(name) {
			j.fail(d.errAt(col, "//ocannl:dims: %s is not a label name", spec.Quote(name)))
			return
		}
		e := &dimEntry{dir: d, name: name, nameCol: col, valText: val, valCol: col + eq + 1}
		switch {
		case val == "":
			j.fail(d.errAt(e.valCol, "//ocannl:dims: missing value after %s=", name))
			return
		case val[0] >= '0' && val[0] <= '9':
			v, err := strconv.ParseUint(val, 10, 64)
			if err != nil || v > maxDim {
				j.fail(d.errAt(e.valCol, "//ocannl:dims: %s=%s: the value must be a decimal integer literal between 0 and %d or the name of a package-level integer constant",
					name, val, maxDim))
				return
			}
			e.value = int(v)
		case isGoIdent(val):
			v, problem, kind := intConst(j.pkg, j.plat, val)
			if problem != "" {
				if kind == constUndeclared {
					problem += "; the value must be an integer literal or a package-level integer constant"
				}
				j.fail(d.errAt(e.valCol, "//ocannl:dims: %s=%s: %s", name, val, problem))
				return
			}
			e.value, e.konst = v, val
		default:
			j.fail(d.errAt(e.valCol, "//ocannl:dims: %s=%s: the value must be an integer literal or the name of a package-level integer constant", name, val))
			return
		}
		for _, o := range j.dims {
			if o.name == name {
				j.fail(citeAt(d.Pos, col, "//ocannl:dims: "+name+" is already set", o.dir.at(o.nameCol), "the first setting", ""))
				return
			}
		}
		j.dims = append(j.dims, e)
	}
}

// intConst looks up the package-level integer constant name of pkg (the
// sizes a //ocannl:dims directive or a model's shape may name). problem
// describes why name cannot be used ("" when it can); kind says what the
// problem is: name is no constant (constUndeclared), its value is no
// size (constBadValue), or it depends on a declaration of a file with
// build constraints (constPlatform: its value may differ between
// platforms; plat finds it).
func intConst(pkg *types.Package, plat *platform, name string) (v int, problem string, kind constProblem) {
	obj := pkg.Scope().Lookup(name)
	c, ok := obj.(*types.Const)
	if !ok {
		if obj != nil {
			return 0, name + " is not a constant", constUndeclared
		}
		return 0, name + " is not declared in package " + pkg.Name(), constUndeclared
	}
	if culprit := plat.culprit(c); culprit != nil {
		return 0, platformProblem(name, culprit), constPlatform
	}
	n, exact := constant.Int64Val(constant.ToInt(c.Val()))
	if c.Val().Kind() != constant.Int || !exact || n < 0 || n > maxDim {
		return 0, fmt.Sprintf("the constant %s = %s is not an integer between 0 and %d", name, c.Val(), maxDim), constBadValue
	}
	return int(n), "", constOK
}

// constProblem classifies intConst's problems.
type constProblem int

// The problems of intConst.
const (
	constOK constProblem = iota
	constUndeclared
	constBadValue
	constPlatform
)

// sizeHint is what follows the problem of a size's constant (not for a
// constant that depends on the platform: its own message says what to do).
func sizeHint(kind constProblem) string {
	if kind == constPlatform {
		return ""
	}
	return "; a size is an integer literal or a package-level integer constant"
}

// shapePrefix is the text a //ocannl:shape argument is parsed behind.
const shapePrefix = "input x : "

// parseShape parses `//ocannl:shape PARAM SHAPE`.
func (j *kernelJob) parseShape(d *directive) {
	s := d.Arg
	k := 0
	for k < len(s) && !isSpace(s[k]) {
		k++
	}
	name := s[:k]
	if name == "" {
		j.fail(d.errAt(d.ArgCol, "//ocannl:shape needs a parameter name and a shape, e.g. //ocannl:shape x 32 | 784"))
		return
	}
	p := j.paramNamed(name)
	if p == nil {
		j.fail(d.errAt(d.ArgCol, "//ocannl:shape: %s has no parameter named %s", j.fn.Name.Name, name))
		return
	}
	for k < len(s) && isSpace(s[k]) {
		k++
	}
	text := s[k:]
	if h := strings.IndexByte(text, '#'); h >= 0 {
		text = text[:h]
	}
	text = strings.TrimRight(text, " \t")
	col := d.ArgCol + k
	if text == "" {
		j.fail(d.errAt(col, "//ocannl:shape %s: missing the shape (e.g. 32 | 784 or 3 -> 2)", name))
		return
	}
	prog, err := program.Parse(shapePrefix + text)
	if err != nil {
		j.fail(parseErr(d, err, col, len(shapePrefix), "//ocannl:shape "+name+": "))
		return
	}
	in, ok := prog.Stmts[0].(*program.InputStmt)
	if len(prog.Stmts) != 1 || !ok || in.Init != nil {
		j.fail(d.errAt(col, "//ocannl:shape %s: expected only a shape such as 32 | 784 or 3 -> 2", name))
		return
	}
	var named []*program.DimDecl
	for _, r := range []*program.RowDecl{in.Shape.Batch, in.Shape.Input, in.Shape.Output} {
		if r == nil {
			continue
		}
		if r.Unknown {
			j.fail(d.errAt(col+r.Pos.Col-1-len(shapePrefix), "//ocannl:shape %s: every row must be given ('?' is not allowed)", name))
			return
		}
		for i := range r.Dims {
			if dd := &r.Dims[i]; dd.Name != "" {
				v, problem, kind := intConst(j.pkg, j.plat, dd.Name)
				if problem != "" {
					j.fail(d.errAt(col+dd.Pos.Col-1-len(shapePrefix), "//ocannl:shape %s: %s%s", name, problem, sizeHint(kind)))
					return
				}
				dd.Size = v
				named = append(named, dd)
				j.sizeConsts = append(j.sizeConsts, desc.Guard{Name: dd.Name, Value: int64(v)})
			}
		}
	}
	sd := &shapeDir{dir: d, param: name, text: text, col: col, decl: in.Shape, named: named}
	if o := j.shapes[name]; o != nil {
		j.fail(citeAt(d.Pos, d.ArgCol, "//ocannl:shape: the shape of "+name+" is already given", o.dir.at(0), "the first //ocannl:shape "+name, ""))
		return
	}
	if !p.slice && !slices.Equal(sd.memDims(), p.dims) {
		j.fail(d.errAt(col, "//ocannl:shape %s %s does not match the parameter's type %s: in memory order (batch, output, input) the shape's dims are %v, the array's %v",
			name, text, p.typ, sd.memDims(), p.dims))
		return
	}
	j.shapes[name] = sd
	p.shape = sd
}

// specNames returns the labels and row-variable names of a spec.
func specNames(sp *spec.Einsum) (labels, rowVars map[string]bool) {
	labels, rowVars = map[string]bool{}, map[string]bool{}
	for _, sl := range slotsOf(sp) {
		for k := range 3 {
			r := &sl.Rows[k]
			if r.HasVar {
				rowVars[r.Var] = true
			}
			for _, l := range slotAxisLabels(r.Axes()) {
				labels[l] = true
			}
		}
	}
	return labels, rowVars
}

func slotsOf(sp *spec.Einsum) []*spec.Slot {
	out := make([]*spec.Slot, 0, len(sp.RHS)+1)
	for i := range sp.RHS {
		out = append(out, &sp.RHS[i])
	}
	return append(out, &sp.LHS)
}

// slotAxes lists the axes of all rows of a slot.
func slotAxes(sl *spec.Slot) []spec.Axis {
	var out []spec.Axis
	for k := range 3 {
		out = append(out, sl.Rows[k].Axes()...)
	}
	return out
}

// slotAxisLabels lists the labels the axes mention.
func slotAxisLabels(axes []spec.Axis) []string {
	var out []string
	for _, ax := range axes {
		switch ax.Kind {
		case spec.AxisLabel:
			out = append(out, ax.Label)
		case spec.AxisAffine:
			out = append(out, ax.Affine.Over)
			if ax.Affine.Conv != nil {
				out = append(out, ax.Affine.Conv.Kernel)
			}
		case spec.AxisConcat:
			for _, p := range ax.Concat {
				if p.Label != "" {
					out = append(out, p.Label)
				}
			}
		}
	}
	return out
}

// checkDimsLabels checks that every //ocannl:dims name of an einsum or
// einmax kernel is a label or row variable of its spec.
func (j *kernelJob) checkDimsLabels() {
	labels, rowVars := specNames(j.spec)
	for _, e := range j.dims {
		if !labels[e.name] && !rowVars[e.name] {
			j.fail(e.dir.errAt(e.nameCol, "//ocannl:dims: spec %s has no label or row variable named %s", spec.Quote(j.spec.Src), spec.Clip(e.name)))
		}
	}
}

// rowCounts splits n array dims into batch, output and input counts
// following a spec slot. ok is false when the slot has row variables in
// more than one row.
func rowCounts(n int, sl *spec.Slot) (counts [3]int, fixed int, ok bool) {
	vars := 0
	varKind := spec.Kind(0)
	for k := range 3 {
		r := &sl.Rows[k]
		counts[k] = len(r.Beg) + len(r.End)
		fixed += counts[k]
		if r.HasVar {
			vars++
			varKind = spec.Kind(k)
		}
	}
	switch vars {
	case 0:
		return counts, fixed, fixed == n
	case 1:
		counts[varKind] += n - fixed
		return counts, fixed, n >= fixed
	}
	return counts, fixed, false
}

func joinInts(xs []int) string {
	p := make([]string, len(xs))
	for i, x := range xs {
		p[i] = strconv.Itoa(x)
	}
	return strings.Join(p, ",")
}

// declShape renders batch, input and output sizes in declaration syntax.
func declShape(b, i, o []int) string {
	s := joinInts(o)
	if len(i) > 0 {
		s = joinInts(i) + " -> " + s
	}
	if len(b) > 0 {
		s = joinInts(b) + " | " + s
	}
	return s
}

// splitArray splits array dims (memory order batch, output, input) by
// counts per kind.
func splitArray(dims []int, c [3]int) (b, i, o []int) {
	nb, no := c[spec.Batch], c[spec.Output]
	return dims[:nb], dims[nb+no:], dims[nb : nb+no]
}

// declare writes the declaration of an input parameter (or of the output
// of a do kernel) into the program.
func (j *kernelJob) declare(prog *synthProgram, p *param, slot *spec.Slot, determined map[string]bool) {
	pd := j.primary()
	if p.shape != nil {
		l := prog.line(p.shape.dir.at(p.shape.col))
		l.syn("input " + j.declName(p) + " : ")
		p.shape.copyTo(l)
		l.syn(" = 0")
		return
	}
	if slot == nil {
		// expr and do kernels: array dims are output axes.
		if p.slice {
			what := "read by"
			if p.output {
				what = "written by"
			}
			j.fail(pd.errAt(pd.ArgCol, "parameter %s is a slice (%s) %s //ocannl:%s: give its shape with //ocannl:shape %s SHAPE",
				p.name, p.typ, what, pd.Verb, p.name))
			return
		}
		l := prog.line(pd.at(pd.ArgCol))
		l.syn("input " + j.declName(p) + " : " + joinInts(p.dims) + " = 0")
		return
	}
	slotCol := j.specCol(slot.Col)
	if p.slice {
		// The spec determines the slice's shape: no row variables, and
		// every label fixed by an array (or shaped) parameter or by dims.
		for k := range 3 {
			if r := &slot.Rows[k]; r.HasVar {
				j.fail(pd.errAt(j.specCol(r.VarCol), "parameter %s is a slice (%s) and its spec slot %s has a row variable, so its shape is not determined; give it with //ocannl:shape %s SHAPE",
					p.name, p.typ, spec.Quote(slot.String()), p.name))
				return
			}
		}
		for _, ax := range slotAxes(slot) {
			for _, lab := range slotAxisLabels([]spec.Axis{ax}) {
				if !determined[lab] {
					j.fail(pd.errAt(j.specCol(ax.Col), "parameter %s is a slice (%s): nothing fixes the size of label %s of its spec slot %s; set it with //ocannl:dims %s=N or give the shape with //ocannl:shape %s SHAPE",
						p.name, p.typ, spec.Clip(lab), spec.Quote(slot.String()), spec.Clip(lab), p.name))
					return
				}
			}
		}
		l := prog.line(pd.at(slotCol))
		l.syn("leaf " + j.declName(p))
		return
	}
	counts, fixed, ok := rowCounts(len(p.dims), slot)
	if !ok {
		nv := 0
		for k := range 3 {
			if slot.Rows[k].HasVar {
				nv++
			}
		}
		if nv > 1 {
			j.fail(pd.errAt(slotCol, "parameter %s (%s): its spec slot %s has row variables in more than one row, so splitting the %d array dims into batch, output and input axes is ambiguous; give the shape with //ocannl:shape %s SHAPE",
				p.name, p.typ, spec.Quote(slot.String()), len(p.dims), p.name))
		} else {
			want := fmt.Sprintf("%d axis", fixed)
			if fixed != 1 {
				want = fmt.Sprintf("%d axes", fixed)
			}
			if nv == 1 {
				want = "at least " + want
			}
			j.fail(pd.errAt(slotCol, "parameter %s has type %s with %d dims but its spec slot %s has %s",
				p.name, p.typ, len(p.dims), spec.Quote(slot.String()), want))
		}
		return
	}
	b, i, o := splitArray(p.dims, counts)
	l := prog.line(pd.at(slotCol))
	l.syn("input " + j.declName(p) + " : " + declShape(b, i, o) + " = 0")
}

// declName is the program name of a parameter's tensor: the parameter's
// own name, or NAME' for an input that a padded convolution reads (the
// kernel then copies it into a padded local NAME, since the caller's array
// has no margins).
func (j *kernelJob) declName(p *param) string {
	if j.padIn[p.name] {
		return p.name + "'"
	}
	return p.name
}

// synthesize builds the kernel's program: input declarations, the
// computation, then the dims.
func (j *kernelJob) synthesize() *synthProgram {
	pd := j.primary()
	prog := &synthProgram{fallback: pd.at(pd.ArgCol)}
	out := j.output()
	ins := j.inputs()
	// Labels fixed by something other than slices without a shape.
	determined := map[string]bool{}
	for _, d := range j.dims {
		determined[d.name] = true
	}
	if j.spec != nil {
		slots := slotsOf(j.spec)
		for i, p := range j.params {
			if !p.slice || p.shape != nil {
				for _, l := range slotAxisLabels(slotAxes(slots[i])) {
					determined[l] = true
				}
			}
		}
		// An output slice without a shape gets what the operands give it
		// (every operand is determined once the checks in declare pass).
		if out.slice && out.shape == nil {
			fromOperands := map[string]bool{}
			for _, sl := range slots[:len(ins)] {
				for _, l := range slotAxisLabels(slotAxes(sl)) {
					fromOperands[l] = true
				}
			}
			for _, l := range slotAxisLabels(slotAxes(&j.spec.LHS)) {
				if !determined[l] && !fromOperands[l] {
					j.fail(pd.errAt(j.specCol(j.spec.LHS.Col), "output %s is a slice (%s): nothing fixes the size of label %s of the result slot %s; set it with //ocannl:dims %s=N or give the shape with //ocannl:shape %s SHAPE",
						out.name, out.typ, spec.Clip(l), spec.Quote(j.spec.LHS.String()), spec.Clip(l), out.name))
					return prog
				}
			}
		}
		for i, p := range ins {
			j.declare(prog, p, &j.spec.RHS[i], determined)
		}
	} else {
		for _, p := range ins {
			j.declare(prog, p, nil, determined)
		}
	}
	if len(j.errs) > 0 {
		return prog
	}
	for _, p := range ins {
		if j.padIn[p.name] {
			l := prog.line(pd.at(pd.ArgCol))
			l.syn("let " + p.name + " = id " + j.declName(p))
		}
	}
	switch {
	case j.spec != nil:
		l := prog.line(pd.at(pd.ArgCol))
		op := map[bool]string{true: "+*", false: "++"}
		if pd.Verb == verbEinmax {
			op = map[bool]string{true: "@^+", false: "@^^"}
		}
		binary := len(ins) == 2
		l.syn("let " + out.name + " = " + ins[0].name + " " + op[binary] + " ")
		l.spec(j.spec.Src, j.specCols)
		if len(j.dims) > 0 {
			caps := make([]string, len(j.dims))
			for i, d := range j.dims {
				caps[i] = strconv.Quote(d.name)
			}
			l.syn(" [" + strings.Join(caps, "; ") + "]")
		}
		if binary {
			l.syn(" " + ins[1].name)
		}
	case j.expr != nil:
		l := prog.line(pd.at(pd.ArgCol))
		l.syn("let " + out.name + " = ")
		switch j.expr.(type) {
		case *program.Ident, *program.Number, *program.Literal, *program.DimRef:
			// Not an operation: copy it into a fresh tensor.
			l.syn("id (")
			l.copyAt(pd.Arg, pd.ArgCol)
			l.syn(")")
		default:
			l.copyAt(pd.Arg, pd.ArgCol)
		}
	default:
		j.declare(prog, out, nil, determined)
		if len(j.errs) > 0 {
			return prog
		}
		for _, d := range j.dos {
			l := prog.line(d.at(d.ArgCol))
			l.copyAt(d.Arg, d.ArgCol)
		}
	}
	for _, d := range j.dims {
		l := prog.line(d.dir.at(d.nameCol))
		l.syn("dim ")
		l.copyAt(d.name, d.nameCol)
		l.syn(" = ")
		l.mapAll(strconv.Itoa(d.value), d.valCol)
	}
	return prog
}

func asLoopirError(err error) (*loopir.Error, bool) {
	var le *loopir.Error
	ok := errors.As(err, &le)
	return le, ok
}

func shortName(path string) string { return filepath.Base(path) }

// infer runs shape inference, projections and lowering on the program,
// checks the output parameter against the result and builds the kernel.
func (j *kernelJob) infer(prog *synthProgram) *desc.Kernel {
	src := prog.String()
	res, err := pipeline.Compile(src, pipeline.Options{})
	g, lp := res.Graph, res.Loops
	if err != nil {
		j.fail(prog.mapInferenceError(err, g))
		return nil
	}
	pd := j.primary()
	find := func(name string, last bool) int {
		id := -1
		for _, n := range g.Named {
			if n.Name == name {
				id = n.Tensor
				if !last {
					break
				}
			}
		}
		return id
	}
	out := j.output()
	// Locals Go would move to the heap (more than 128 KiB) go to a
	// scratch the function takes from a pool: calls do not allocate.
	k := &desc.Kernel{Name: genName(j.fn.Name.Name), Elem: out.elem, Prog: lp,
		Scratch: genName(j.fn.Name.Name) + "Scratch", ScratchOver: KernelScratchOver, PoolScratch: true}
	if j.bf16Operands() {
		k.BF16, k.BF16Operands = true, true
	}
	for _, p := range j.params {
		id := find(j.declName(p), p.output)
		if id < 0 {
			j.fail(pd.errAt(pd.ArgCol, "internal error: the program has no tensor named %s:\n%s", p.name, src))
			return nil
		}
		kp := desc.Param{Name: p.name, Kind: desc.PtrArray, Tensor: id, ArrayDims: p.dims, Output: p.output}
		if p.slice {
			kp.Kind, kp.ArrayDims = desc.Slice, nil
		}
		k.Params = append(k.Params, kp)
	}
	ot := g.Tensors[k.Params[len(k.Params)-1].Tensor]
	for _, kp := range k.Params[:len(k.Params)-1] {
		if kp.Tensor == ot.ID {
			j.fail(pd.errAt(pd.ArgCol, "the output %s would be the same tensor as the input %s", out.name, kp.Name))
			return nil
		}
	}
	if j.dos == nil && ot.Op < 0 {
		j.fail(pd.errAt(pd.ArgCol, "//ocannl:%s does not compute a new tensor for %s (it is a %s)", pd.Verb, out.name, ot.Kind))
		return nil
	}
	got := sizes(ot.Shape.Dims())
	switch {
	case out.shape != nil:
		b, i, o := out.shape.rows()
		if !slices.Equal(sizes(ot.Shape.Batch), orEmpty(b)) || !slices.Equal(sizes(ot.Shape.Input), orEmpty(i)) ||
			!slices.Equal(sizes(ot.Shape.Output), orEmpty(o)) {
			j.fail(pd.errAt(pd.ArgCol, "output %s (%s) is declared with shape %s but the inferred shape is %s",
				out.name, out.typ, out.shape.text, ot.Shape))
			return nil
		}
	case !out.slice:
		if !slices.Equal(got, out.dims) {
			j.fail(pd.errAt(pd.ArgCol, "output %s has type %s but the inferred shape is %s (memory order %v)",
				out.name, out.typ, ot.Shape, orEmpty(got)))
			return nil
		}
	}
	for _, d := range j.dirs {
		k.Doc = append(k.Doc, d.Text)
	}
	fp := j.fset.Position(j.fn.Pos())
	k.Doc = append(k.Doc, fmt.Sprintf("from %s:%d", shortName(fp.Filename), fp.Line))
	return k
}

func orEmpty(xs []int) []int {
	if xs == nil {
		return []int{}
	}
	return xs
}

// KernelScratchOver is the size in bytes above which a function kernel's
// local array goes to the scratch the function takes from a pool (Go
// moves a local array of more than 128 KiB to the heap: the calls would
// allocate).
const KernelScratchOver = 128 << 10
