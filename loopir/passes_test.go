package loopir

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/internal/testutil"
)

// TestPassStages runs the standard passes one prefix at a time and checks
// the stages each prefix reaches, the pass names recorded, and that the
// observer sees every pass in order.
func TestPassStages(t *testing.T) {
	g := testutil.Compile(t, `
input x : 11
input w : 3
let y = x +* "o=+k; k => o" w`)
	want := []Stage{Assigned, Assigned | Looped, Assigned | Looped | Padded, Assigned | Looped | Padded | Checked}
	all := []Stage{Assigned, Looped, Padded, Checked}
	for n := 1; n <= len(Passes()); n++ {
		var seen []string
		p, err := LowerWith(g, Passes()[:n], func(ps Pass, p *Program) error {
			seen = append(seen, ps.Name)
			if !p.Reached(ps.Reaches) {
				t.Errorf("after %s: stage %b not reached", ps.Name, ps.Reaches)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%d passes: %v", n, err)
		}
		if names := Names(Passes()[:n]); !slices.Equal(seen, names) || !slices.Equal(p.Done, names) {
			t.Errorf("%d passes: observed %v, done %v, want %v", n, seen, p.Done, names)
		}
		for _, s := range all {
			if got, exp := p.Reached(s), want[n-1]&s != 0; got != exp {
				t.Errorf("%d passes: Reached(%b) = %v, want %v", n, s, got, exp)
			}
		}
	}
	// The padded program's dump says the margins are applied only once
	// the pad pass has run.
	pl, err := LowerUpTo(g, "loops")
	if err != nil {
		t.Fatal(err)
	}
	if d := pl.String(); !strings.Contains(d, "not yet applied") {
		t.Errorf("dump after loops:\n%s", d)
	}
	pp, err := LowerUpTo(g, "pad")
	if err != nil {
		t.Fatal(err)
	}
	if d := pp.String(); !strings.Contains(d, "margins (left+right) 1+2, buffer 14") {
		t.Errorf("dump after pad:\n%s", d)
	}
}

// TestPassOrderGuards: running "pad" before "loops" or "check" before
// "pad" fails, whatever the list says.
func TestPassOrderGuards(t *testing.T) {
	g := testutil.Compile(t, `
input a : 2
let b = a + a`)
	if _, err := LowerWith(g, []Pass{AssignPass(), PadPass()}, nil); err == nil || !strings.Contains(err.Error(), `the "loops" pass has not run`) {
		t.Errorf("pad before loops: err = %v", err)
	}
	if _, err := LowerWith(g, []Pass{AssignPass(), LoopsPass(), CheckPass()}, nil); err == nil || !strings.Contains(err.Error(), `the "pad" pass has not run`) {
		t.Errorf("check before pad: err = %v", err)
	}
}

// TestConcatExtendObserveStop: an extension pass composed with Concat
// runs between the standard passes, and an observer's error stops the
// list after the pass it observed, returning the program so far.
func TestConcatExtendObserveStop(t *testing.T) {
	g := testutil.Compile(t, `
input a : 2
let b = a + a`)
	ran := false
	ext := ExtendPass("mine", func(p *Program) error {
		if !p.Reached(Assigned) || p.Reached(Looped) {
			t.Errorf("extension ran at the wrong point (done %v)", p.Done)
		}
		ran = true
		return nil
	})
	ps := Concat(Passes()[:1], []Pass{ext}, Passes()[1:])
	if got := strings.Join(Names(ps), ","); got != "assign,mine,loops,pad,check" {
		t.Fatalf("names = %s", got)
	}
	if got := strings.Join(Names(ExtendedPasses("mine", ext.Run)), ","); got != "assign,mine,loops,pad,check" {
		t.Errorf("ExtendedPasses names = %s", got)
	}
	stop := errors.New("stop")
	p, err := LowerWith(g, ps, func(ps Pass, p *Program) error {
		if ps.Name == "loops" {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || p == nil || !ran || p.Reached(Padded) || !p.Reached(Looped) {
		t.Errorf("stop after loops: err %v, done %v, extension ran %v", err, p.Done, ran)
	}
	if _, err := UpTo(ps, "nope"); err == nil || !strings.Contains(err.Error(), `unknown pass "nope" (passes: assign, mine, loops, pad, check)`) {
		t.Errorf("UpTo: err = %v", err)
	}
}
