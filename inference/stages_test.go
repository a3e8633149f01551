package inference_test

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// TestStagesFailWhereTheTableSays: InferObserved runs the named stages in
// order and an error stops them at the stage the closing table of
// docs/design.md assigns it to.
func TestStagesFailWhereTheTableSays(t *testing.T) {
	all := inference.Stages()
	if all[0] != "elaborate" || all[len(all)-1] != "shapes" || len(all) != 13 {
		t.Fatalf("stages %v", all)
	}
	for _, tc := range []struct {
		name, src string
		failsAt   string // "" for success
		kind      inference.ErrorKind
	}{
		{"ok", "input x : 4\nlet y = x *. {w}\n", "", ""},
		{"elaboration", "input x : 2\ninput y : 3\nlet z = x + y\n", "elaborate", inference.KindDimMismatch},
		{"unused dim", "input x : 2\nlet y = x ++ \"i => i\"\ndim q = 3\n", "settle", inference.KindName},
		// A parameter's contracted row that nothing determines: stage 4.
		{"hidden row", "input x : 3\nlet y = {w} * x\n", "stage4", inference.KindHiddenDim},
		// Two unknown components of a concatenation are never guessed.
		{"concat split", "input src : 7 = range\ninput x4 : 4 = 1\nlet m = src ++ \"a^b^c => b\"\nlet u = m + x4\n", "leftovers", inference.KindConcat},
	} {
		p, err := program.Parse(tc.src)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var seen []string
		g, err := inference.InferObserved(p, func(stage string, dump func(io.Writer)) error {
			var b bytes.Buffer
			dump(&b)
			if !strings.Contains(b.String(), "# open: ") {
				t.Errorf("%s: %s dump:\n%s", tc.name, stage, b.String())
			}
			seen = append(seen, stage)
			return nil
		})
		if tc.failsAt == "" {
			if err != nil || g == nil || !slices.Equal(seen, all) {
				t.Errorf("%s: err %v, stages %v", tc.name, err, seen)
			}
			continue
		}
		e, ok := inference.AsError(err)
		if !ok || e.Kind != tc.kind || g != nil {
			t.Errorf("%s: err %v, want kind %s", tc.name, err, tc.kind)
			continue
		}
		at := slices.Index(all, tc.failsAt)
		if !slices.Equal(seen, all[:at]) {
			t.Errorf("%s: observed %v, want the stages before %s", tc.name, seen, tc.failsAt)
		}
	}
}
