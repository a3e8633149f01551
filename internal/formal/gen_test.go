package formal

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/spec"
)

// The random program generator of the property tests. Like gen's
// progGen (the generator behind FuzzGenerate) it reads one byte of its
// choices per decision (zero once they run out), so that a fuzz target
// over the choices explores programs by mutation; unlike it, it writes
// flat programs aimed at shape inference, and it writes them
// shape-directed: every statement is built from the shapes inference
// gave the program so far (each accepted prefix is inferred), so that
// most programs pass inference and exercise the solver, closing and
// projections rather than their error paths. A statement that fails
// inference is dropped, except that now and then the program ends with
// it (a failing program, which the order experiments compare too).

// mode selects the productions.
type mode int

const (
	// modeCore: the formal core's fragment (seed 001 covers no Affine
	// and no Concat): pointwise, compose, transpose, einsum with
	// labels, fixed indices and row variables, slices, stacks,
	// assignments.
	modeCore mode = iota
	// modeFull: every production.
	modeFull
	// modeStratified: mostly affine (strided, padded and valid
	// convolutions, affine results) and concatenation terms (Conj. 8.2).
	modeStratified
	// modeTwoUnit: mostly concatenations with discardable components,
	// result-only labels and leaves, whose closing guesses 0 for the
	// ones and 1 for the others (Conj. 8.3).
	modeTwoUnit
)

func (m mode) String() string {
	return [...]string{"core", "full", "stratified", "two-unit"}[m]
}

// Statement kinds.
const (
	sPointwise = iota
	sUnaryFn
	sCompose
	sTranspose
	sEinsum1
	sEinsum2
	sSlice
	sStack
	sAssign
	sConv
	sBlock
	sExtract
	sAffineResult
	sLeaf
)

var modeKinds = map[mode][]int{
	modeCore:       {sPointwise, sPointwise, sUnaryFn, sCompose, sTranspose, sEinsum1, sEinsum1, sEinsum2, sEinsum2, sSlice, sStack, sAssign, sLeaf},
	modeFull:       {sPointwise, sPointwise, sUnaryFn, sCompose, sTranspose, sEinsum1, sEinsum1, sEinsum2, sEinsum2, sSlice, sStack, sAssign, sLeaf, sConv, sConv, sBlock, sExtract, sAffineResult},
	modeStratified: {sConv, sConv, sConv, sConv, sBlock, sBlock, sExtract, sExtract, sAffineResult, sAffineResult, sPointwise, sEinsum1, sEinsum2, sCompose},
	modeTwoUnit:    {sExtract, sExtract, sExtract, sExtract, sBlock, sBlock, sEinsum1, sEinsum1, sPointwise, sPointwise, sLeaf, sAssign, sConv, sUnaryFn},
}

type progGen struct {
	c     []byte
	mode  mode
	lines []string
	g     *inference.Graph // the accepted prefix's graph
	id    int
}

// generate writes a program from the choices.
func generate(choices []byte, m mode) string {
	g := &progGen{c: choices, mode: m}
	for range 1 + g.n(3) {
		g.try(g.input())
	}
	steps := 2 + g.n(7)
	kinds := modeKinds[m]
	for range steps {
		st := g.statement(kinds[g.n(len(kinds))])
		if st == nil {
			continue
		}
		if !g.try(st) && g.n(12) == 0 {
			g.lines = append(g.lines, st...)
			break
		}
	}
	return strings.Join(g.lines, "\n") + "\n"
}

// randomChoices returns n pseudo-random choice bytes for program i of a
// test (deterministic).
func randomChoices(seed uint64, i int, n int) []byte {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	b := make([]byte, n)
	for k := range b {
		b[k] = byte(r.Uint32())
	}
	return b
}

// n returns a choice in [0, k).
func (g *progGen) n(k int) int {
	if len(g.c) == 0 || k <= 1 {
		return 0
	}
	v := int(g.c[0])
	g.c = g.c[1:]
	return v % k
}

func (g *progGen) fresh(base string) string {
	g.id++
	return fmt.Sprintf("%s%d", base, g.id)
}

// try infers the program with st appended; on success st is kept.
func (g *progGen) try(st []string) bool {
	src := strings.Join(append(slices.Clone(g.lines), st...), "\n") + "\n"
	gr, err := inference.InferSource(src)
	if err != nil {
		return false
	}
	g.lines = append(g.lines, st...)
	g.g = gr
	return true
}

// named lists the named tensors of the accepted prefix with their shapes.
func (g *progGen) named() []string {
	if g.g == nil {
		return nil
	}
	var out []string
	for _, n := range g.g.Named {
		out = append(out, n.Name)
	}
	return out
}

func (g *progGen) shape(name string) inference.Shape {
	for _, n := range g.g.Named {
		if n.Name == name {
			return g.g.Tensors[n.Tensor].Shape
		}
	}
	panic("no tensor " + name)
}

// pickName picks a named tensor, preferring recent ones.
func (g *progGen) pickName() string {
	ns := g.named()
	if len(ns) == 0 {
		return ""
	}
	if g.n(3) != 0 {
		return ns[len(ns)-1-g.n(min(3, len(ns)))]
	}
	return ns[g.n(len(ns))]
}

func (g *progGen) size() int { return []int{2, 3, 4, 2, 3, 6, 8, 5, 1}[g.n(9)] }

// declShape writes a shape declaration; ok is false when some axis
// cannot be declared (a 1_∅ or a run-time rows axis).
func declShape(s [3][]inference.Dim) (string, bool) {
	row := func(ds []inference.Dim) (string, bool) {
		var p []string
		for _, d := range ds {
			switch d.Basis {
			case inference.BasisDefault:
				p = append(p, fmt.Sprint(d.Size))
			case inference.BasisBcast, inference.BasisRows:
				return "", false
			default:
				p = append(p, fmt.Sprintf("%d:%s", d.Size, d.Basis))
			}
		}
		return strings.Join(p, ", "), true
	}
	b, ok1 := row(s[spec.Batch])
	i, ok2 := row(s[spec.Input])
	o, ok3 := row(s[spec.Output])
	out := o
	if len(s[spec.Input]) > 0 {
		out = i + " -> " + out
	}
	if len(s[spec.Batch]) > 0 {
		out = b + " | " + out
	}
	if out == "" {
		out = "1" // no axes at all cannot be declared; a lone 1 instead
	}
	return out, ok1 && ok2 && ok3
}

func rows(sh inference.Shape) [3][]inference.Dim {
	return [3][]inference.Dim{sh.Batch, sh.Input, sh.Output}
}

func defDim(n int) inference.Dim { return inference.Dim{Size: n, Basis: inference.BasisDefault} }

// input declares a new input of a random shape.
func (g *progGen) input() []string {
	var s [3][]inference.Dim
	for k, most := range []int{2, 1, 2} {
		cnt := g.n(most + 1)
		if k == int(spec.Output) && cnt == 0 && g.n(2) == 0 {
			cnt = 1
		}
		for range cnt {
			d := defDim(g.size())
			if g.n(16) == 0 {
				d.Basis = "c"
			}
			s[k] = append(s[k], d)
		}
	}
	decl, _ := declShape(s)
	return []string{fmt.Sprintf("input %s : %s = range", g.fresh("x"), decl)}
}

// inputLike declares a new input of shape s; ok false if s cannot be
// declared.
func (g *progGen) inputLike(s [3][]inference.Dim) (string, string, bool) {
	decl, ok := declShape(s)
	if !ok {
		return "", "", false
	}
	name := g.fresh("y")
	return name, fmt.Sprintf("input %s : %s = range", name, decl), true
}

func (g *progGen) statement(kind int) []string {
	a := g.pickName()
	if a == "" {
		return g.input()
	}
	sh := rows(g.shape(a))
	switch kind {
	case sPointwise:
		return g.pointwise(a, sh)
	case sUnaryFn:
		fn := []string{"relu", "exp", "neg", "tanh", "id", "sqrt"}[g.n(6)]
		if g.n(4) == 0 {
			b := g.pickName()
			return []string{fmt.Sprintf("let %s = %s %s %s %s", g.fresh("h"), []string{"where", "fma"}[g.n(2)], a, b, []string{"2", a, "0.5"}[g.n(3)])}
		}
		return []string{fmt.Sprintf("let %s = %s (%s)", g.fresh("h"), fn, a)}
	case sCompose:
		return g.compose(a, sh)
	case sTranspose:
		return []string{fmt.Sprintf("{%s} =: %s ~logic:\"T\"", g.fresh("t"), a)}
	case sEinsum1:
		l := newLabeler(g)
		op := l.operand(sh, true)
		res := l.result([]slotSpec{op})
		return append(l.pre, fmt.Sprintf("let %s = %s %s %q%s", g.fresh("h"), a, []string{"++", "++", "@^^"}[g.n(3)], specString([]slotSpec{op}, res), l.captures()))
	case sEinsum2:
		return g.einsum2(a, sh)
	case sSlice:
		if len(sh[spec.Batch]) == 0 {
			return nil
		}
		return []string{fmt.Sprintf("let %s = %s @| %d", g.fresh("h"), a, g.n(sh[spec.Batch][0].Size+g.n(2)))}
	case sStack:
		b := a
		for _, n := range g.named() {
			if n != a && g.n(2) == 0 && shapeEq(rows(g.shape(n)), sh) {
				b = n
			}
		}
		open, sep, close := []string{"[", "(", "[|"}[g.n(3)], "; ", ""
		switch open {
		case "[":
			close = "]"
		case "(":
			sep, close = ", ", ")"
		default:
			close = "|]"
		}
		return []string{fmt.Sprintf("let %s = %s%s%s%s%s", g.fresh("h"), open, a, sep, b, close)}
	case sAssign:
		t := g.fresh("t")
		var out []string
		if g.n(2) == 0 {
			l := newLabeler(g)
			op := l.operand(sh, true)
			res := l.result([]slotSpec{op})
			out = append(l.pre, fmt.Sprintf("{%s} =:%s %s ~logic:%q", t, []string{"+", "", "@^"}[g.n(3)], a, specString([]slotSpec{op}, res)))
		} else {
			out = []string{fmt.Sprintf("{%s} =: %s + %s", t, a, []string{"1", a, "{" + g.fresh("p") + "}"}[g.n(3)])}
		}
		if g.n(2) == 0 {
			out = append(out, fmt.Sprintf("%s =+ %s", t, []string{t, "2", a}[g.n(3)]))
		}
		return out
	case sConv:
		return g.conv(a, sh)
	case sBlock:
		return g.block(a, sh)
	case sExtract:
		return g.extract(a, sh)
	case sAffineResult:
		return g.affineResult(a, sh)
	case sLeaf:
		l := g.fresh("l")
		decl := []string{"", " : ? | ? -> ?", fmt.Sprintf(" : ? | ? -> %d", g.size())}[g.n(3)]
		return []string{fmt.Sprintf("leaf %s%s", l, decl), fmt.Sprintf("let %s = %s %s %s", g.fresh("h"), a, []string{"+", "*.", "-"}[g.n(3)], l)}
	}
	return nil
}

func shapeEq(a, b [3][]inference.Dim) bool {
	for k := range 3 {
		if !slices.Equal(a[k], b[k]) {
			return false
		}
	}
	return true
}

// pointwise combines a with a broadcast-compatible operand.
func (g *progGen) pointwise(a string, sh [3][]inference.Dim) []string {
	op := []string{"+", "-", "*.", "/.", "<", "+"}[g.n(6)]
	h := g.fresh("h")
	switch g.n(6) {
	case 0:
		return []string{fmt.Sprintf("let %s = %s %s %s", h, a, op, []string{"2", "0.5", "1"}[g.n(3)])}
	case 1:
		o := sh[spec.Output]
		n := 1
		if len(o) > 0 && o[len(o)-1].Basis == inference.BasisDefault {
			n = o[len(o)-1].Size
		}
		return []string{fmt.Sprintf("let %s = %s %s {%s = 0.; o=[%d]}", h, a, op, g.fresh("b"), n)}
	case 2:
		return []string{fmt.Sprintf("let %s = %s %s {%s}", h, a, op, g.fresh("p"))}
	case 3:
		// A suffix of each row: broadcasting on the left.
		var s [3][]inference.Dim
		for k := range 3 {
			r := sh[k]
			s[k] = r[g.n(len(r)+1):]
		}
		y, decl, ok := g.inputLike(s)
		if !ok {
			return []string{fmt.Sprintf("let %s = %s %s %s", h, a, op, a)}
		}
		if g.n(2) == 0 {
			return []string{decl, fmt.Sprintf("let %s = %s %s %s", h, y, op, a)}
		}
		return []string{decl, fmt.Sprintf("let %s = %s %s %s", h, a, op, y)}
	default:
		b := g.pickName()
		return []string{fmt.Sprintf("let %s = %s %s %s", h, a, op, b)}
	}
}

// compose writes {w; o=[n]} * a, or a * y with y's output row a's
// input row.
func (g *progGen) compose(a string, sh [3][]inference.Dim) []string {
	h := g.fresh("h")
	if g.n(2) == 0 || len(sh[spec.Input]) == 0 {
		return []string{fmt.Sprintf("let %s = {%s; o=[%d]} * %s", h, g.fresh("w"), g.size(), a)}
	}
	var s [3][]inference.Dim
	s[spec.Output] = sh[spec.Input]
	if g.n(2) == 0 {
		s[spec.Batch] = sh[spec.Batch]
	}
	for range g.n(2) {
		s[spec.Input] = append(s[spec.Input], defDim(g.size()))
	}
	y, decl, ok := g.inputLike(s)
	if !ok {
		return nil
	}
	return []string{decl, fmt.Sprintf("let %s = %s * %s", h, a, y)}
}

// einsum2 writes a binary einsum of a with a new input or parameter
// sharing some of a's labels.
func (g *progGen) einsum2(a string, sh [3][]inference.Dim) []string {
	l := newLabeler(g)
	opA := l.operand(sh, true)
	var opB slotSpec
	var s [3][]inference.Dim
	param := g.n(3) == 0
	for k := range 3 {
		var r rowSpec
		// The same row variable as a's row of this kind, sometimes.
		if v := opA[k].v; v != "" && g.n(2) == 0 {
			r.v = v
			s[k] = append(s[k], l.vars[varKey(k, v)]...)
		}
		for range g.n(3) {
			if g.n(2) == 0 && len(l.order) > 0 {
				lab := l.order[g.n(len(l.order))]
				if d := l.sizes[lab]; d.Basis != inference.BasisBcast {
					r.end = append(r.end, lab)
					s[k] = append(s[k], d)
					continue
				}
			}
			lab := l.label(defDim(g.size()))
			if param {
				l.capture(lab)
			}
			r.end = append(r.end, lab)
			s[k] = append(s[k], l.sizes[lab])
		}
		opB[k] = r
	}
	var pre []string
	var b string
	if param {
		b = "{" + g.fresh("k") + "}"
	} else {
		y, decl, ok := g.inputLike(s)
		if !ok {
			return nil
		}
		pre, b = []string{decl}, y
	}
	res := l.result([]slotSpec{opA, opB})
	sp := specString([]slotSpec{opA, opB}, res)
	return append(append(pre, l.pre...), fmt.Sprintf("let %s = %s %s %q%s %s", g.fresh("h"), a, []string{"+*", "+*", "+++", "@^+"}[g.n(4)], sp, l.captures(), b))
}

// axisAt picks a row kind and an axis of it with size >= minSize and a
// default basis; ok false if none.
func (g *progGen) axisAt(sh [3][]inference.Dim, minSize int) (k, i int, ok bool) {
	type cand struct{ k, i int }
	var cs []cand
	for k := range 3 {
		for i, d := range sh[k] {
			if d.Size >= minSize && d.Basis == inference.BasisDefault {
				cs = append(cs, cand{k, i})
			}
		}
	}
	if len(cs) == 0 {
		return 0, 0, false
	}
	c := cs[g.n(len(cs))]
	return c.k, c.i, true
}

// conv writes a strided index or a padded or valid convolution on one
// axis of a, the kernel given by a kernel input, a parameter or a
// captured label.
func (g *progGen) conv(a string, sh [3][]inference.Dim) []string {
	k, i, ok := g.axisAt(sh, 2)
	if !ok {
		return nil
	}
	n := sh[k][i].Size
	l := newLabeler(g)
	o := l.name()
	kern := l.name()
	divs := func() []int {
		var ds []int
		for _, s := range []int{1, 2, 3} {
			if n%s == 0 {
				ds = append(ds, s)
			}
		}
		return ds
	}
	var ax string
	hasKernel := true
	K := 1 + g.n(3)
	switch g.n(3) {
	case 0: // strided, no kernel
		ds := divs()
		s := ds[g.n(len(ds))]
		ax = fmt.Sprintf("%d*%s", s, o)
		if c := g.n(s); c > 0 {
			ax += fmt.Sprintf("+%d", c)
		}
		l.sizes[o] = defDim(n / s)
		hasKernel = false
	case 1: // padded
		ds := divs()
		s := ds[g.n(len(ds))]
		d := 1 + g.n(2)
		ax = fmt.Sprintf("%d*%s=+%d*%s", s, o, d, kern)
		if c := g.n(s); c > 0 && g.n(2) == 0 {
			ax += fmt.Sprintf("+%d", c)
		}
		l.sizes[o] = defDim(n / s)
	default: // valid
		s, d := 1+g.n(2), 1+g.n(2)
		span := 1 + (K-1)*d
		if span > n || (n-span)%s != 0 {
			s, d, K = 1, 1, 1+g.n(min(n, 3))
			span = K
		}
		ax = fmt.Sprintf("%d*%s<+%d*%s", s, o, d, kern)
		l.sizes[o] = defDim((n-span)/s + 1)
	}
	l.sizes[kern] = defDim(K)
	op := l.operandWith(sh, true, k, i, ax)
	// The result: the affine axis becomes o; the kernel is reduced.
	res := l.resultFixed([]slotSpec{op}, k, i, o)
	var pre []string
	rhs := []slotSpec{op}
	var b string
	if hasKernel {
		var kslot slotSpec
		kslot[spec.Output] = rowSpec{end: []string{kern}}
		ks := [3][]inference.Dim{nil, nil, {defDim(K)}}
		if g.n(3) == 0 { // an output channel
			c := l.label(defDim(g.size()))
			kslot[spec.Output].end = append(kslot[spec.Output].end, c)
			ks[spec.Output] = append(ks[spec.Output], l.sizes[c])
			res[spec.Output].end = append(res[spec.Output].end, c)
		}
		switch g.n(3) {
		case 0: // unary, the kernel label captured
			l.capture(kern)
		case 1:
			y, decl, _ := g.inputLike(ks)
			pre, b = []string{decl}, y
			rhs = append(rhs, kslot)
		default:
			b = "{" + g.fresh("k") + "}"
			l.capture(kern)
			for _, x := range kslot[spec.Output].end[1:] {
				l.capture(x)
			}
			rhs = append(rhs, kslot)
		}
	}
	sp := specString(rhs, res)
	opname := "++"
	if len(rhs) == 2 {
		opname = []string{"+*", "@^+"}[g.n(2)]
		return append(append(pre, l.pre...), fmt.Sprintf("let %s = %s %s %q%s %s", g.fresh("h"), a, opname, sp, l.captures(), b))
	}
	if g.n(3) == 0 {
		opname = "@^^"
	}
	return append(append(pre, l.pre...), fmt.Sprintf("let %s = %s %s %q%s", g.fresh("h"), a, opname, sp, l.captures()))
}

// affineResult writes an affine index in the result (a scatter): one
// axis of a (label o), possibly with another as the kernel.
func (g *progGen) affineResult(a string, sh [3][]inference.Dim) []string {
	k, i, ok := g.axisAt(sh, 1)
	if !ok {
		return nil
	}
	l := newLabeler(g)
	op := l.operand(sh, false)
	o := op[k].at(i)
	if !l.isLabel(o) {
		return nil
	}
	s := 1 + g.n(3)
	var ax string
	res := l.result([]slotSpec{op})
	// Remove o (and the kernel) from the result, then put the affine axis.
	res.remove(o)
	kern := ""
	if len(l.order) > 1 && g.n(2) == 0 {
		kern = l.order[g.n(len(l.order))]
		if kern == o || l.sizes[kern].Basis == inference.BasisBcast {
			kern = ""
		}
	}
	if kern != "" {
		res.remove(kern)
		ax = fmt.Sprintf("%d*%s%s%d*%s", s, o, []string{"<+", "=+"}[g.n(2)], 1+g.n(2), kern)
	} else {
		ax = fmt.Sprintf("%d*%s", s, o)
	}
	kk := g.n(3)
	res[kk].end = append(res[kk].end, ax)
	return append(l.pre, fmt.Sprintf("let %s = %s ++ %q%s", g.fresh("h"), a, specString([]slotSpec{op}, res), l.captures()))
}

// block concatenates a with itself or with inputs of a's shape except
// along one axis.
func (g *progGen) block(a string, sh [3][]inference.Dim) []string {
	k, i, ok := g.axisAt(sh, 1)
	if !ok {
		return nil
	}
	m := 2 + g.n(2)
	l := newLabeler(g)
	shared := l.operand(sh, false)
	var pre []string
	var operands []string
	var slots []slotSpec
	var parts []string
	for j := range m {
		sl := shared.clone()
		x := l.name()
		sl[k].set(i, x)
		name := a
		if j > 0 && g.n(2) == 0 {
			s := sh
			s[k] = slices.Clone(sh[k])
			s[k][i] = defDim(g.size())
			if y, decl, ok := g.inputLike(s); ok {
				name = y
				pre = append(pre, decl)
			}
		}
		operands = append(operands, name)
		slots = append(slots, sl)
		parts = append(parts, x)
		if g.n(6) == 0 {
			parts = append(parts, fmt.Sprint(1+g.n(3)))
		}
	}
	res := shared.clone()
	res[k].set(i, strings.Join(parts, "^"))
	return append(append(pre, l.pre...), fmt.Sprintf("let %s = (%s) ++^ %q%s", g.fresh("h"), strings.Join(operands, ", "), specString(slots, res), l.captures()))
}

// extract splits one axis of a into a concatenation and keeps a part of
// it, or extends it (discardable components close to 0).
func (g *progGen) extract(a string, sh [3][]inference.Dim) []string {
	k, i, ok := g.axisAt(sh, 1)
	if !ok {
		return nil
	}
	n := sh[k][i].Size
	l := newLabeler(g)
	op := l.operand(sh, g.n(2) == 0)
	if op[k].at(i) == "" {
		return nil
	}
	res := op.clone()
	p, q, r := l.name(), l.name(), l.name()
	var from, to string
	var post []string
	switch g.n(7) {
	case 0:
		from, to = p+"^"+q, p
	case 1:
		from, to = p+"^"+q, q
	case 2:
		from, to = p+"^"+q+"^"+r, q
	case 3:
		if n < 2 {
			return nil
		}
		c := 1 + g.n(n-1)
		if g.n(2) == 0 {
			from, to = fmt.Sprintf("%d^%s", c, p), p
		} else {
			from, to = fmt.Sprintf("%s^%d", p, c), p
		}
	case 4:
		from, to = p, p+"^"+q
		if g.n(2) == 0 {
			to = fmt.Sprintf("%d^%s^%d", 1+g.n(2), p, g.n(3)+1)
		}
	case 5: // a rotation, the split fixed by a captured dim
		if n < 2 {
			return nil
		}
		from, to = p+"^"+q, q+"^"+p
		l.capture(p)
		post = append(post, fmt.Sprintf("dim %s = %d", p, 1+g.n(n-1)))
	default: // the part's size fixed by a later use
		from, to = p+"^"+q, p
		if n < 2 {
			return nil
		}
		op2 := op
		op2[k] = op[k].clone()
		op2[k].set(i, from)
		res[k] = op[k].clone()
		res[k].set(i, to)
		s := sh
		s[k] = slices.Clone(sh[k])
		s[k][i] = defDim(1 + g.n(n-1))
		y, decl, ok := g.inputLike(s)
		if !ok || op2.hasVar() || res.hasVar() {
			return nil
		}
		return append([]string{decl}, fmt.Sprintf("let %s = (%s ++ %q) + %s", g.fresh("h"), a, specString([]slotSpec{op2}, res), y))
	}
	op[k] = op[k].clone()
	op[k].set(i, from)
	res[k] = res[k].clone()
	res[k].set(i, to)
	line := fmt.Sprintf("let %s = %s ++ %q%s", g.fresh("h"), a, specString([]slotSpec{op}, res), l.captures())
	return append(append(l.pre, line), post...)
}

// varKey names a row variable of row kind k: `...` is the kind's own.
func varKey(k int, v string) string {
	if v == "..." {
		return spec.Kind(k).String()
	}
	return v
}

// rowSpec is one row of a spec slot: leading axes, a row variable ("",
// "..." or "..name.."), trailing axes.
type rowSpec struct {
	beg  []string
	v    string
	end  []string
	pend bool // a trailing comma (switches the spec to multichar mode)
}

func (r rowSpec) items() []string {
	out := append([]string{}, r.beg...)
	if r.v != "" {
		out = append(out, r.v)
	}
	return append(out, r.end...)
}

func (r rowSpec) clone() rowSpec {
	return rowSpec{beg: slices.Clone(r.beg), v: r.v, end: slices.Clone(r.end), pend: r.pend}
}

// at returns the axis at flat position i of a row matched against a
// shape row of len(beg)+len(end) axes (no variable) or "" when i falls
// in the variable's part.
func (r rowSpec) at(i int) string {
	if i < len(r.beg) {
		return r.beg[i]
	}
	if r.v == "" {
		if j := i - len(r.beg); j < len(r.end) {
			return r.end[j]
		}
	}
	return ""
}

// set replaces the axis at position i (see at); no-op inside a variable.
func (r *rowSpec) set(i int, ax string) {
	if i < len(r.beg) {
		r.beg[i] = ax
		return
	}
	if r.v == "" {
		if j := i - len(r.beg); j < len(r.end) {
			r.end[j] = ax
		}
	}
}

func (r rowSpec) String() string {
	s := strings.Join(r.items(), ", ")
	if r.pend && s != "" {
		s += ","
	}
	return s
}

type slotSpec [3]rowSpec

func (s slotSpec) clone() slotSpec {
	var out slotSpec
	for k := range 3 {
		out[k] = s[k].clone()
	}
	return out
}

func (s slotSpec) hasVar() bool { return s[0].v != "" || s[1].v != "" || s[2].v != "" }

func (s *slotSpec) remove(x string) {
	for k := range 3 {
		s[k].beg = slices.DeleteFunc(s[k].beg, func(y string) bool { return y == x })
		s[k].end = slices.DeleteFunc(s[k].end, func(y string) bool { return y == x })
	}
}

func (s slotSpec) String() string {
	b, i, o := s[spec.Batch], s[spec.Input], s[spec.Output]
	out := o.String()
	if len(i.items()) > 0 {
		out = i.String() + " -> " + out
	}
	if len(b.items()) > 0 {
		out = b.String() + " | " + out
	}
	return out
}

// specString prints a spec, in multichar mode whenever it has an axis.
func specString(rhs []slotSpec, lhs slotSpec) string {
	all := append(append([]slotSpec{}, rhs...), lhs)
	done := false
	for j := len(all) - 1; j >= 0 && !done; j-- {
		for k := 2; k >= 0; k-- {
			if len(all[j][k].items()) > 0 {
				all[j][k].pend = true
				done = true
				break
			}
		}
	}
	var p []string
	for _, s := range all[:len(all)-1] {
		p = append(p, s.String())
	}
	return strings.Join(p, "; ") + " => " + all[len(all)-1].String()
}

// labeler assigns labels and row variables to one spec.
type labeler struct {
	g     *progGen
	sizes map[string]inference.Dim
	order []string // labels in creation order
	vars  map[string][]inference.Dim
	caps  []string
	pre   []string // statements to write before the operation (dims)
	post  []string
}

func newLabeler(g *progGen) *labeler {
	return &labeler{g: g, sizes: map[string]inference.Dim{}, vars: map[string][]inference.Dim{}}
}

// name is a fresh label, unique in the program (so that captures and
// dims name one operation).
func (l *labeler) name() string {
	return l.g.fresh(string(rune('a' + l.g.id%26)))
}

func (l *labeler) label(d inference.Dim) string {
	n := l.name()
	l.sizes[n] = d
	l.order = append(l.order, n)
	return n
}

func (l *labeler) isLabel(x string) bool { _, ok := l.sizes[x]; return ok }

// capture captures a label and fixes its size with a dim statement.
func (l *labeler) capture(x string) {
	l.caps = append(l.caps, x)
	if d, ok := l.sizes[x]; ok {
		l.pre = append(l.pre, fmt.Sprintf("dim %s = %d", x, d.Size))
	}
}

func (l *labeler) captures() string {
	if len(l.caps) == 0 {
		return ""
	}
	q := make([]string, len(l.caps))
	for i, c := range l.caps {
		q[i] = fmt.Sprintf("%q", c)
	}
	return " [" + strings.Join(q, "; ") + "]"
}

// operand labels a slot matching shape sh: per row, a row variable
// (sometimes) taking a middle part, labels (sometimes repeated on equal
// dimensions: diagonals) and fixed indices (slices).
func (l *labeler) operand(sh [3][]inference.Dim, vars bool) slotSpec {
	return l.operandWith(sh, vars, -1, -1, "")
}

// operandWith is operand with the axis i of row kind k written ax (a
// derived axis) and never inside a variable.
func (l *labeler) operandWith(sh [3][]inference.Dim, vars bool, fk, fi int, ax string) slotSpec {
	g := l.g
	var s slotSpec
	for k := range 3 {
		row := sh[k]
		var r rowSpec
		nb, ne := 0, len(row)
		if vars && g.n(2) == 0 {
			nb = g.n(len(row) + 1)
			ne = g.n(len(row) - nb + 1)
			if k == fk && (fi >= nb && fi < len(row)-ne) {
				nb, ne = fi+1, len(row)-fi-1
			}
			r.v = "..."
			if g.n(4) == 0 {
				r.v = ".." + l.g.fresh("v") + ".."
			}
			l.vars[varKey(k, r.v)] = row[nb : len(row)-ne]
		} else {
			nb, ne = 0, len(row)
		}
		axis := func(i int) string {
			d := row[i]
			if k == fk && i == fi {
				return ax
			}
			switch {
			case g.n(10) == 0 && d.Size > 1 && d.Basis != inference.BasisBcast:
				return fmt.Sprint(g.n(d.Size)) // a slice
			case g.n(8) == 0:
				for _, x := range l.order {
					if l.sizes[x] == d {
						return x // a diagonal
					}
				}
			}
			return l.label(d)
		}
		for i := range nb {
			r.beg = append(r.beg, axis(i))
		}
		for i := len(row) - ne; i < len(row); i++ {
			r.end = append(r.end, axis(i))
		}
		s[k] = r
	}
	return s
}

// result writes a result slot from the operands' labels and variables:
// labels kept in their kind, moved to another or reduced; variables
// carried (a `...` in its kind); now and then a fixed index or a
// result-only label.
func (l *labeler) result(ops []slotSpec) slotSpec {
	g := l.g
	var res slotSpec
	seen := map[string]bool{}
	for _, op := range ops {
		for k := range 3 {
			for _, x := range op[k].items() {
				if seen[x] || !l.isLabel(x) {
					continue
				}
				seen[x] = true
				switch c := g.n(8); {
				case c < 5:
					res[k].end = append(res[k].end, x)
				case c == 5:
					kk := g.n(3)
					res[kk].end = append(res[kk].end, x)
				}
			}
			if v := op[k].v; v != "" && !seen[varKey(k, v)] {
				seen[varKey(k, v)] = true
				if g.n(4) != 0 {
					kk := k
					if v != "..." && g.n(3) == 0 {
						kk = g.n(3)
					}
					if res[kk].v == "" && (v != "..." || kk == k) {
						res[kk].v = v
					}
				}
			}
		}
	}
	for k := range 3 {
		r := &res[k]
		if len(r.end) > 1 && g.n(2) == 0 {
			j := g.n(len(r.end))
			r.end[0], r.end[j] = r.end[j], r.end[0]
		}
		if g.n(8) == 0 {
			r.end = append(r.end, "0")
		}
		if g.n(12) == 0 {
			r.end = append(r.end, l.name()) // result-only: its size closes to 1
		}
		if r.v != "" && len(r.end) > 0 {
			c := g.n(len(r.end) + 1)
			r.beg, r.end = r.end[:c], r.end[c:]
		}
	}
	return res
}

// resultFixed is result keeping the operand's layout exactly, with the
// axis at (k, i) replaced by label o.
func (l *labeler) resultFixed(ops []slotSpec, k, i int, o string) slotSpec {
	res := ops[0].clone()
	res[k].set(i, o)
	for kk := range 3 {
		var keep []string
		for _, x := range res[kk].beg {
			if l.isLabel(x) || x == o {
				keep = append(keep, x)
			}
		}
		res[kk].beg = keep
		keep = nil
		for _, x := range res[kk].end {
			if l.isLabel(x) || x == o {
				keep = append(keep, x)
			}
		}
		res[kk].end = keep
	}
	return res
}
