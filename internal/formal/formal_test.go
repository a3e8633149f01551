package formal

import (
	"testing"
)

// The tests: each property over a fixed set of generated programs (a
// short run: go test), and the same over the fuzzer's choices (a long
// run: go test -fuzz, docs/formal.md). A choice string's first byte
// picks the generator's mode where a property runs on several.

// property is one statement checked on generated programs.
type property struct {
	name  string
	modes []mode
	check func(*subject, *stats) error
}

var (
	canonicity = property{"canonicity", []mode{modeCore, modeFull}, checkCanonicity}
	bounds     = property{"bounds", []mode{modeCore, modeFull}, checkBounds}
	sound      = property{"sound", []mode{modeCore, modeFull}, func(s *subject, st *stats) error { return checkSound(s, st, 2) }}
	padding    = property{"padding", []mode{modeStratified, modeFull}, checkPadding}
	// Conj. 8.2: the stratified projection solver stays canonical with
	// affine and concatenation terms (asserted: the conjecture's claim,
	// with padding canonicity and bounded addressing); the shape solver's
	// verdicts and shapes under processing orders are recorded.
	stratified = property{"stratified", []mode{modeStratified}, func(s *subject, st *stats) error {
		if err := checkCanonicity(s, st); err != nil {
			return err
		}
		if err := checkPadding(s, st); err != nil {
			return err
		}
		if err := checkBounds(s, st); err != nil {
			return err
		}
		orderOutcome(s, st, 2)
		return nil
	}}
	// Conj. 8.3: two-unit closing (discardable components to 0, other
	// guesses to 1_∅) is sound in program order and in random orders
	// (asserted, by the independent checker); whether the closed shapes
	// depend on the order is recorded.
	twoUnit = property{"two-unit", []mode{modeTwoUnit}, func(s *subject, st *stats) error {
		if err := checkSound(s, st, perms); err != nil {
			return err
		}
		if s.err == nil {
			st.add("two-unit", s.g)
		}
		orderOutcome(s, st, 2)
		return nil
	}}
)

// one generates the program of choices and checks p on it.
func (p property) one(t *testing.T, choices []byte, st *stats) {
	t.Helper()
	m := p.modes[0]
	if len(choices) > 0 {
		m = p.modes[int(choices[0])%len(p.modes)]
		choices = choices[1:]
	}
	src := generate(choices, m)
	s := newSubject(src)
	st.addN("programs", 1)
	if s.err == nil {
		st.addN("programs-inferred", 1)
		st.addN("programs-inferred-ops", len(s.g.Ops))
	}
	if err := p.check(s, st); err != nil {
		t.Fatalf("%s: %v\nprogram (%s mode):\n%s", p.name, err, m, src)
	}
}

// testCount is the number of programs a property checks in go test.
func testCount() int {
	if testing.Short() {
		return 60
	}
	return 600
}

// test runs p on testCount programs from fixed choices.
func (p property) test(t *testing.T, seed uint64) {
	st := newStats(p.name)
	for i := range testCount() {
		p.one(t, randomChoices(seed, i, 300), st)
	}
	t.Logf("%s", st)
	st.logExamples(t)
}

// fuzz runs p on the fuzzer's choices, seeded with a few fixed ones
// (the committed corpus in testdata/fuzz adds more).
func (p property) fuzz(f *testing.F, seed uint64) {
	for i := range 4 {
		f.Add(randomChoices(seed, i, 300))
	}
	st := newStats(p.name)
	f.Fuzz(func(t *testing.T, choices []byte) {
		if len(choices) > 4096 {
			return
		}
		p.one(t, choices, st)
		st.flush(false)
	})
	st.flush(true)
}

// TestCanonicity: Thm. 7.4 (core programs) and Conj. 8.2 (programs
// with affine or concatenation terms): projections are independent of
// the order of operations and of each operation's equations.
func TestCanonicity(t *testing.T) { canonicity.test(t, 74) }

// TestBoundedAddressing: Thm. 7.8, and the interpreter's bounds checks
// on the lowered program.
func TestBoundedAddressing(t *testing.T) { bounds.test(t, 78) }

// TestClosingSound: Prop. 6.2, by the independent checker.
func TestClosingSound(t *testing.T) { sound.test(t, 62) }

// TestPaddingCanonical: Prop. 8.1.
func TestPaddingCanonical(t *testing.T) { padding.test(t, 81) }

// TestStratifiedDeterminacy: the experiment of Conj. 8.2.
func TestStratifiedDeterminacy(t *testing.T) { stratified.test(t, 82) }

// TestTwoUnitClosing: the experiment of Conj. 8.3.
func TestTwoUnitClosing(t *testing.T) { twoUnit.test(t, 83) }

func FuzzCanonicity(f *testing.F)            { canonicity.fuzz(f, 74) }
func FuzzBoundedAddressing(f *testing.F)     { bounds.fuzz(f, 78) }
func FuzzClosingSound(f *testing.F)          { sound.fuzz(f, 62) }
func FuzzPaddingCanonical(f *testing.F)      { padding.fuzz(f, 81) }
func FuzzStratifiedDeterminacy(f *testing.F) { stratified.fuzz(f, 82) }
func FuzzTwoUnitClosing(f *testing.F)        { twoUnit.fuzz(f, 83) }
