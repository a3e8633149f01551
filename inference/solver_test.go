package inference

import (
	"math/rand/v2"
	"testing"
)

// Solver-level tests of the formal core's rules (seed document 5, §4).

func c3() dim { return dconst(3, BasisDefault) }
func c5() dim { return dconst(5, BasisDefault) }
func c4() dim { return dconst(4, BasisDefault) }

func ineq(a, b dim) constraint  { return constraint{k: cDimIneq, d1: a, d2: b} }
func rineq(a, b row) constraint { return constraint{k: cRowIneq, r1: a, r2: b} }
func req(a, b row) constraint   { return constraint{k: cRowEq, r1: a, r2: b} }
func solveAll(s *solver, cs ...constraint) error {
	for _, c := range cs {
		s.push(c)
	}
	return s.run()
}

func wantKind(t *testing.T, err error, kind ErrorKind) {
	t.Helper()
	e, ok := AsError(err)
	if !ok {
		t.Fatalf("got error %v, want an *Error of kind %s", err, kind)
	}
	if e.Kind != kind {
		t.Fatalf("got error kind %s (%v), want %s", e.Kind, e, kind)
	}
}

func TestDimPin(t *testing.T) {
	// DI-pin: α ⊑ 3 forces α = 3.
	s := newSolver()
	a := s.newDim("a", 0)
	if err := solveAll(s, ineq(a, c3())); err != nil {
		t.Fatal(err)
	}
	if got := s.resolve(a); !dimEqual(got, c3()) {
		t.Fatalf("α = %v, want 3", got)
	}
}

func TestDimPinTop(t *testing.T) {
	// DI-pin-top: 1_∅ ⊑ α forces α = 1_∅.
	s := newSolver()
	a := s.newDim("a", 0)
	if err := solveAll(s, ineq(bcastUnit, a)); err != nil {
		t.Fatal(err)
	}
	if got := s.resolve(a); !got.isBcast() {
		t.Fatalf("α = %v, want the broadcast unit", got)
	}
}

func TestDimCapAndCollapse(t *testing.T) {
	// DI-cap records a bound; a second, different atom collapses to 1_∅.
	s := newSolver()
	a := s.newDim("a", 0)
	if err := solveAll(s, ineq(c3(), a), ineq(c3(), a)); err != nil {
		t.Fatal(err)
	}
	if s.dims[a.v].solved || !s.dims[a.v].hasLB {
		t.Fatalf("after 3 ⊑ α twice: solved=%v hasLB=%v, want an unsolved α with a cap", s.dims[a.v].solved, s.dims[a.v].hasLB)
	}
	if err := solveAll(s, ineq(c5(), a)); err != nil {
		t.Fatal(err)
	}
	if got := s.resolve(a); !got.isBcast() {
		t.Fatalf("α = %v, want the broadcast unit after incompatible caps", got)
	}
}

func TestDimGround(t *testing.T) {
	for _, tc := range []struct {
		res, op dim
		kind    ErrorKind // "" = ok
	}{
		{c3(), c3(), ""},
		{c3(), bcastUnit, ""},
		{bcastUnit, c3(), ""}, // pin-top on a ground atom: 3 = 1_∅ fails
		{c3(), c5(), KindDimMismatch},
		{dconst(4, "batch"), c4(), KindBasis},
		{dconst(1, BasisDefault), c3(), KindDimMismatch}, // an explicit 1 is an atom, not the unit
	} {
		s := newSolver()
		err := solveAll(s, ineq(tc.res, tc.op))
		if tc.res.isBcast() && !tc.op.isBcast() {
			if err == nil {
				t.Errorf("%v ⊑ %v: want failure (1_∅ only refines itself)", tc.res, tc.op)
			}
			continue
		}
		if tc.kind == "" {
			if err != nil {
				t.Errorf("%v ⊑ %v: %v", tc.res, tc.op, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%v ⊑ %v: want %s", tc.res, tc.op, tc.kind)
			continue
		}
		wantKind(t, err, tc.kind)
	}
}

func TestExplicitUnitDoesNotBroadcast(t *testing.T) {
	// 1_default meets an unknown: the unknown is forced to 1 (the user's claim).
	s := newSolver()
	a := s.newDim("a", 0)
	one := dconst(1, BasisDefault)
	if err := solveAll(s, ineq(a, one)); err != nil {
		t.Fatal(err)
	}
	if got := s.resolve(a); !dimEqual(got, one) {
		t.Fatalf("α = %v, want 1 (default basis)", got)
	}
}

// TestClosingOrderRemark63 is the formal core's Remark 6.3 example
// {3 ⊑ α, α ⊑ β, 5 ⊑ β} with α, β leaves: in every emission order the
// solution is β = 1_∅, α = 3 (the cap store is transitively closed before
// any commitment, so closing cannot spuriously fail).
func TestClosingOrderRemark63(t *testing.T) {
	perms := [][]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
	for _, p := range perms {
		b := newBuilder()
		s := b.s
		a := s.newDim("a", 0)
		bb := s.newDim("b", 0)
		cs := []constraint{ineq(c3(), a), ineq(a, bb), ineq(c5(), bb)}
		for _, i := range p {
			s.push(cs[i])
		}
		if err := s.run(); err != nil {
			t.Fatalf("order %v: %v", p, err)
		}
		s.dims[a.v].leaf, s.dims[bb.v].leaf = true, true
		if err := b.close(); err != nil {
			t.Fatalf("order %v: closing: %v", p, err)
		}
		if ga, gb := s.resolve(a), s.resolve(bb); !dimEqual(ga, c3()) || !gb.isBcast() {
			t.Fatalf("order %v: α=%v β=%v, want α=3 β=1_∅", p, ga, gb)
		}
	}
}

func TestRowIneqFlanks(t *testing.T) {
	// [3]·◇·[4] ⊑ [3]·◇·[5,4] in the formal core's orientation: the result
	// has the larger rank, the operand broadcasts at its marker.
	s := newSolver()
	op := row{beg: []dim{c3()}, v: -1, end: []dim{c4()}}
	res := row{beg: []dim{c3()}, v: -1, end: []dim{c5(), c4()}}
	if err := solveAll(s, rineq(res, op)); err != nil {
		t.Fatalf("[3]◇[5,4] ⊑ [3]◇[4]: %v", err)
	}
	// The reverse direction is a rank mismatch (operand longer than result).
	s = newSolver()
	wantKind(t, solveAll(s, rineq(op, res)), KindRankMismatch)
	// A mismatching flank fails.
	s = newSolver()
	bad := row{beg: []dim{c5()}, v: -1, end: []dim{c4()}}
	wantKind(t, solveAll(s, rineq(res, bad)), KindDimMismatch)
}

func TestDeficitRule(t *testing.T) {
	// ⟨ρ⟩ ⊑ [3, 4]: the deficit rule grows ρ by two fresh axes, pinned to 3, 4.
	s := newSolver()
	rho := s.newRowVar(-1, -1, 0)
	if err := solveAll(s, rineq(openRow(rho), closedRow(c3(), c4()))); err != nil {
		t.Fatal(err)
	}
	r := s.resolveRow(openRow(rho))
	if !r.open() || len(r.end) != 2 || !dimEqual(s.resolve(r.end[0]), c3()) || !dimEqual(s.resolve(r.end[1]), c4()) {
		t.Fatalf("ρ = %v, want [..., 3, 4]", s.rowString(openRow(rho)))
	}
	if !s.rows[r.v].template {
		t.Fatalf("the residual variable should be a template variable")
	}
}

func TestRowCapIsResidue(t *testing.T) {
	// [2, 3, 4] ⊑ ⟨ρ⟩·[4]: ρ gets the cap [2, 3].
	s := newSolver()
	rho := s.newRowVar(-1, -1, 0)
	if err := solveAll(s, rineq(closedRow(dconst(2, BasisDefault), c3(), c4()), row{v: rho, end: []dim{c4()}})); err != nil {
		t.Fatal(err)
	}
	lbs := s.rows[rho].lbs
	if len(lbs) != 1 || lbs[0].r.open() || len(lbs[0].r.flat()) != 2 {
		t.Fatalf("caps of ρ = %v, want one closed cap [2, 3]", lbs)
	}
}

func TestRankCycles(t *testing.T) {
	// OCANNL's test_row_rank_cycle: each set forces a row variable to have
	// more axes than itself; the solver must fail, not diverge.
	cases := map[string]func(s *solver) []constraint{
		"two-variable": func(s *solver) []constraint {
			r1, r2 := s.newRowVar(-1, -1, 0), s.newRowVar(-1, -1, 0)
			return []constraint{
				rineq(openRow(r1), row{v: r2, end: []dim{dconst(2, BasisDefault)}}),
				rineq(openRow(r2), row{v: r1, end: []dim{c3()}}),
			}
		},
		"three-variable": func(s *solver) []constraint {
			r1, r2, r3 := s.newRowVar(-1, -1, 0), s.newRowVar(-1, -1, 0), s.newRowVar(-1, -1, 0)
			return []constraint{
				rineq(openRow(r1), row{v: r2, end: []dim{dconst(2, BasisDefault)}}),
				rineq(openRow(r2), row{v: r3, end: []dim{c3()}}),
				rineq(openRow(r3), row{v: r1, end: []dim{c4()}}),
			}
		},
		"two-variable leading flank": func(s *solver) []constraint {
			r1, r2 := s.newRowVar(-1, -1, 0), s.newRowVar(-1, -1, 0)
			return []constraint{
				rineq(openRow(r1), row{beg: []dim{dconst(2, BasisDefault)}, v: r2}),
				rineq(openRow(r2), row{beg: []dim{c3()}, v: r1}),
			}
		},
		"mixed-sign via cap discharge": func(s *solver) []constraint {
			r1, r2 := s.newRowVar(-1, -1, 0), s.newRowVar(-1, -1, 0)
			return []constraint{
				rineq(openRow(r1), row{v: r2, end: []dim{dconst(2, BasisDefault), c3()}}),
				rineq(row{v: r2, end: []dim{c4()}}, openRow(r1)),
			}
		},
		"self-reference by equality": func(s *solver) []constraint {
			r := s.newRowVar(-1, -1, 0)
			return []constraint{req(openRow(r), row{v: r, end: []dim{c3()}})}
		},
		"self-cyclic inequality": func(s *solver) []constraint {
			r := s.newRowVar(-1, -1, 0)
			return []constraint{rineq(openRow(r), row{beg: []dim{c3()}, v: r})}
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			s := newSolver()
			s.maxSteps = 100_000
			err := solveAll(s, mk(s)...)
			if err == nil {
				t.Fatalf("want a rank-cycle error, got success")
			}
			wantKind(t, err, KindRankCycle)
			if s.steps >= s.maxSteps {
				t.Fatalf("hit the step limit: the cycle check did not fire")
			}
		})
	}
}

func TestSelfReferenceEqualSplits(t *testing.T) {
	// [a]·⟨ρ⟩ ≈ [b]·⟨ρ⟩ unifies a = b; shifted splits defer to closing.
	s := newSolver()
	r := s.newRowVar(-1, -1, 0)
	a, b := s.newDim("a", 0), s.newDim("b", 0)
	if err := solveAll(s, req(row{beg: []dim{a}, v: r}, row{beg: []dim{b}, v: r})); err != nil {
		t.Fatal(err)
	}
	if !dimEqual(s.resolve(a), s.resolve(b)) {
		t.Fatalf("a and b not unified")
	}
	// [3]·⟨ρ⟩ ≈ ⟨ρ⟩·[5] is unsatisfiable: deferred, then rejected when ρ closes.
	bl := newBuilder()
	s = bl.s
	r = s.newRowVar(-1, -1, 0)
	if err := solveAll(s, req(row{beg: []dim{c3()}, v: r}, row{v: r, end: []dim{c5()}})); err != nil {
		t.Fatalf("stage 1 should defer, got %v", err)
	}
	if err := bl.close(); err == nil {
		t.Fatalf("closing accepted [3]·⟨ρ⟩ ≈ ⟨ρ⟩·[5]")
	}
}

// TestCanonicityUnderReordering is a property test: random systems of
// dimension constraints (caps, pins and adjacencies between leaf
// variables) close to the same solution, or fail alike, whatever the order
// in which their constraints are emitted.
func TestCanonicityUnderReordering(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	atoms := []dim{c3(), c4(), c5()}
	for trial := range 300 {
		nv := 2 + rng.IntN(4)
		type spec struct{ kind, a, b, atom int }
		var cs []spec
		for range 1 + rng.IntN(6) {
			switch rng.IntN(3) {
			case 0:
				cs = append(cs, spec{kind: 0, a: rng.IntN(nv), atom: rng.IntN(3)}) // atom ⊑ v
			case 1:
				cs = append(cs, spec{kind: 1, a: rng.IntN(nv), b: rng.IntN(nv)}) // v ⊑ w
			default:
				cs = append(cs, spec{kind: 2, a: rng.IntN(nv), atom: rng.IntN(3)}) // v ⊑ atom
			}
		}
		solveOrder := func(order []int) (string, bool) {
			b := newBuilder()
			s := b.s
			vars := make([]dim, nv)
			for i := range vars {
				vars[i] = s.newDim("", 0)
			}
			for _, i := range order {
				c := cs[i]
				switch c.kind {
				case 0:
					s.push(ineq(atoms[c.atom], vars[c.a]))
				case 1:
					s.push(ineq(vars[c.a], vars[c.b]))
				default:
					s.push(ineq(vars[c.a], atoms[c.atom]))
				}
			}
			if err := s.run(); err != nil {
				return "", false
			}
			for _, v := range vars {
				s.dims[v.v].leaf = true
			}
			if err := b.close(); err != nil {
				return "", false
			}
			out := ""
			for _, v := range vars {
				out += s.resolve(v).String() + " "
			}
			return out, true
		}
		base := make([]int, len(cs))
		for i := range base {
			base[i] = i
		}
		want, wantOK := solveOrder(base)
		for range 5 {
			perm := rng.Perm(len(cs))
			got, ok := solveOrder(perm)
			if ok != wantOK || got != want {
				t.Fatalf("trial %d: order %v gives (%q, %v), identity order gives (%q, %v); constraints %+v", trial, perm, got, ok, want, wantOK, cs)
			}
		}
	}
}
