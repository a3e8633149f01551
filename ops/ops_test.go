package ops

import (
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"testing"
)

var placeholder = regexp.MustCompile(`\$(\w)`)

// checkTemplate reports what is wrong with a Go template: a placeholder
// other than $0..$(arity-1) (and $r where allowed).
func checkTemplate(t *testing.T, what, tmpl string, arity int, temp bool) {
	t.Helper()
	for _, m := range placeholder.FindAllStringSubmatch(tmpl, -1) {
		if m[1] == "r" && temp {
			continue
		}
		if n, err := strconv.Atoi(m[1]); err != nil || n >= arity {
			t.Errorf("%s: placeholder $%s in %q (arity %d)", what, m[1], tmpl, arity)
		}
	}
}

// checkTerm checks that a derivative rule only applies primitives of the
// table with their arity and reads existing operands.
func checkTerm(t *testing.T, p *Prim, e Term) {
	t.Helper()
	switch e.Kind {
	case TermArg:
		if e.Arg < 0 || e.Arg >= p.Arity {
			t.Errorf("%s: derivative reads operand %d", p.Name, e.Arg)
		}
	case TermApply:
		if q := Lookup(e.Prim); q == nil || q.Arity != len(e.Args) {
			t.Errorf("%s: derivative applies %q to %d operand(s)", p.Name, e.Prim, len(e.Args))
		}
		for _, a := range e.Args {
			checkTerm(t, p, a)
		}
	case TermGrad, TermResult, TermConst:
	default:
		t.Errorf("%s: derivative term of kind %d", p.Name, e.Kind)
	}
}

// TestPrimEntriesComplete fails when a primitive lacks what a stage
// needs: the interpreter's Eval, autodiff's rule per operand, the Go
// emitter's recipe, the language's spelling.
func TestPrimEntriesComplete(t *testing.T) {
	seen := map[PrimName]bool{}
	infix := map[string]bool{}
	for _, p := range Prims() {
		if p.Name == "" || seen[p.Name] {
			t.Errorf("primitive name %q empty or repeated", p.Name)
		}
		seen[p.Name] = true
		if Lookup(p.Name) != p || Arity(p.Name) != p.Arity {
			t.Errorf("%s: Lookup or Arity disagrees with the table", p.Name)
		}
		if p.Arity < 1 || p.Arity > 3 {
			t.Errorf("%s: arity %d", p.Name, p.Arity)
		}
		if p.Eval == nil {
			t.Errorf("%s: no Eval (interpreter)", p.Name)
		}
		if len(p.Grad) != p.Arity {
			t.Errorf("%s: %d derivative rules for %d operands (autodiff)", p.Name, len(p.Grad), p.Arity)
		}
		for _, r := range p.Grad {
			if r != nil {
				checkTerm(t, p, r.Value)
			}
		}
		switch {
		case (p.Go.Expr == "") == (p.Go.Branch == nil):
			t.Errorf("%s: the Go recipe needs exactly one of Expr and Branch", p.Name)
		case p.Go.Branch != nil:
			b := p.Go.Branch
			for _, s := range []string{b.Init, b.Cond, b.Then} {
				checkTemplate(t, string(p.Name), s, p.Arity, true)
			}
			if b.Cond == "" || b.Then == "" {
				t.Errorf("%s: a branch recipe needs Cond and Then", p.Name)
			}
		default:
			checkTemplate(t, string(p.Name), p.Go.Expr, p.Arity, false)
		}
		if p.Go.Float32 != "" {
			checkTemplate(t, string(p.Name), p.Go.Float32, p.Arity, false)
		}
		switch p.Syntax {
		case Func:
			if p.Arity == 2 || len(p.Infix) > 0 {
				t.Errorf("%s: a function application is unary or ternary, without infix spellings", p.Name)
			}
		case Infix:
			if p.Arity != 2 || len(p.Infix) == 0 || p.Symbol == "" {
				t.Errorf("%s: an infix primitive is binary, with spellings and a symbol", p.Name)
			}
		}
		for _, s := range p.Infix {
			if infix[s] || ByInfix(s) != p {
				t.Errorf("%s: infix spelling %q repeated", p.Name, s)
			}
			infix[s] = true
		}
		if len(p.Domains) > p.Arity {
			t.Errorf("%s: %d domains for %d operands", p.Name, len(p.Domains), p.Arity)
		}
	}
	if Lookup("nosuch") != nil || Arity("nosuch") != 0 || IsFunc("add", 2) || !IsFunc("where", 3) || !IsFunc("relu", 1) {
		t.Errorf("lookups of missing or non-function primitives")
	}
}

func TestAccumEntriesComplete(t *testing.T) {
	seen := map[string]bool{}
	r := rand.New(rand.NewPCG(1, 2))
	for _, a := range Accums() {
		if a.Name == NoAccum || seen[string(a.Name)] || seen["sym "+a.Symbol] {
			t.Errorf("accumulator %q or its symbol %q empty or repeated", a.Name, a.Symbol)
		}
		seen[string(a.Name)], seen["sym "+a.Symbol] = true, true
		if LookupAccum(a.Name) != a || AccumBySymbol(a.Symbol) != a {
			t.Errorf("%s: lookups disagree with the table", a.Name)
		}
		if a.Combine == nil || a.Notation == "" || (a.Go.AssignOp == "") == (a.Go.Expr == "") {
			t.Errorf("%s: needs Combine, Notation and exactly one Go form", a.Name)
		}
		checkTemplate(t, string(a.Name), a.Go.Expr, 2, false)
		// The neutral element leaves a value unchanged on the right.
		for range 10 {
			v := 4*r.Float64() - 2
			if got := a.Combine(v, a.Neutral); got != v {
				t.Errorf("%s: Combine(%v, neutral %v) = %v", a.Name, v, a.Neutral, got)
			}
		}
	}
	if LookupAccum("") != nil {
		t.Errorf("the plain store is not an accumulator")
	}
}

// TestEvalValues checks evaluation against numbers computed by hand; a
// primitive without such a number fails.
func TestEvalValues(t *testing.T) {
	checked := map[PrimName]bool{}
	for _, c := range []struct {
		prim PrimName
		a    [3]float64
		want float64
	}{
		{"id", [3]float64{-3}, -3},
		{"relu", [3]float64{-2}, 0},
		{"relu", [3]float64{2.5}, 2.5},
		{"relu", [3]float64{math.NaN()}, 0},
		{"sat01", [3]float64{1.5}, 1},
		{"sat01", [3]float64{-0.5}, 0},
		{"sat01", [3]float64{0.25}, 0.25},
		{"exp", [3]float64{0}, 1},
		{"log", [3]float64{1}, 0},
		{"exp2", [3]float64{3}, 8},
		{"log2", [3]float64{8}, 3},
		{"sin", [3]float64{0}, 0},
		{"cos", [3]float64{0}, 1},
		{"sqrt", [3]float64{9}, 3},
		{"recip", [3]float64{4}, 0.25},
		{"recip_sqrt", [3]float64{4}, 0.5},
		{"neg", [3]float64{2}, -2},
		{"tanh", [3]float64{0}, 0},
		{"erf", [3]float64{0}, 0},
		{"erf", [3]float64{1}, 0.8427007929497149},
		{"gelu", [3]float64{0}, 0},
		{"gelu", [3]float64{1}, 0.841344746068543}, // Φ(1) = 0.84134474606854293, rounded twice
		{"gelu_tanh", [3]float64{1}, 0.8411919906082768},
		{"gelu_grad", [3]float64{0}, 0.5},
		{"gelu_grad", [3]float64{1}, 1.0833154705876864}, // Φ(1) + φ(1) = 1.08331547058768630
		{"not", [3]float64{0}, 1},
		{"not", [3]float64{-2}, 0},
		{"add", [3]float64{2, 3}, 5},
		{"sub", [3]float64{2, 3}, -1},
		{"mul", [3]float64{2, 3}, 6},
		{"div", [3]float64{3, 2}, 1.5},
		{"pow", [3]float64{2, 3}, 8},
		{"lt", [3]float64{2, 3}, 1},
		{"lt", [3]float64{3, 3}, 0},
		{"eq", [3]float64{3, 3}, 1},
		{"ne", [3]float64{3, 3}, 0},
		{"where", [3]float64{0, 1, 2}, 2},
		{"where", [3]float64{-1, 1, 2}, 1},
		{"fma", [3]float64{2, 3, 4}, 10},
	} {
		p := Lookup(c.prim)
		if p == nil {
			t.Errorf("%s: not in the table", c.prim)
			continue
		}
		if got := p.Eval(&c.a); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.prim, c.a[:p.Arity], got, c.want)
		}
		checked[c.prim] = true
	}
	for _, p := range Prims() {
		if !checked[p.Name] {
			t.Errorf("%s: no hand-computed value in TestEvalValues", p.Name)
		}
	}
}

// evalTerm evaluates a derivative rule at the point a with incoming
// gradient gv.
func evalTerm(p *Prim, e Term, a *[3]float64, gv float64) float64 {
	switch e.Kind {
	case TermGrad:
		return gv
	case TermArg:
		return a[e.Arg]
	case TermResult:
		return p.Eval(a)
	case TermConst:
		return e.Value
	}
	var args [3]float64
	for i, s := range e.Args {
		args[i] = evalTerm(p, s, a, gv)
	}
	return Lookup(e.Prim).Eval(&args)
}

// TestDerivativesFiniteDifferences checks every derivative rule against
// central finite differences of Eval at random points of the domains.
func TestDerivativesFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, p := range Prims() {
		for i, rule := range p.Grad {
			if rule == nil {
				continue
			}
			for range 20 {
				var a [3]float64
				for k := range p.Arity {
					a[k] = p.Domain(k).Draw(r)
				}
				gv := 0.5 + 1.5*r.Float64()
				got := evalTerm(p, rule.Value, &a, gv)
				if rule.Negate {
					got = -got
				}
				h := 1e-6 * max(1, math.Abs(a[i]))
				hi, lo := a, a
				hi[i] += h
				lo[i] -= h
				want := gv * (p.Eval(&hi) - p.Eval(&lo)) / (2 * h)
				if math.Abs(got-want) > 1e-6*max(1, math.Abs(got), math.Abs(want)) {
					t.Errorf("%s: d/d operand %d at %v (g = %v) = %v, finite differences %v", p.Name, i, a[:p.Arity], gv, got, want)
					break
				}
			}
		}
	}
}
