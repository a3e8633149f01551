package spec

import "testing"

// TestCite checks that citations go to their offsets in order, whatever
// the order of the related positions, and that uncited ones are skipped.
func TestCite(t *testing.T) {
	var m Message
	m.Printf("a").Cite(Pos{Line: 1, Col: 2}, "x").Printf(" b (").Cite(Pos{Line: 3, Col: 4}, "y").Printf(") c")
	msg, rel := m.Done()
	if msg != "a b () c" {
		t.Fatalf("msg = %q", msg)
	}
	rel = append([]Related{{Pos: Pos{Line: 9, Col: 9}, Off: -1}}, rel[1], rel[0])
	if got, want := Cite(msg, rel, Pos.String), "a at 1:2 b (at 3:4) c"; got != want {
		t.Errorf("Cite = %q, want %q", got, want)
	}
}
