package explain

import (
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/gen"
)

// TestMaskBlocksSchedule: the page of internal/maskcheck's models says
// that the forward entries' attention products (the scores and the
// context) run in diagonal blocks when the mask is causal, in float32
// and in bf16, as the generated code does, and that the networks whose
// mask is one per sequence (no mask to the generator) do not.
func TestMaskBlocksSchedule(t *testing.T) {
	srcs, err := gen.Explainables([]string{"../internal/maskcheck"}, nil, gen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := BuildPackages("maskcheck", "..", srcs, Options{})
	blocks := map[string]int{}
	for _, u := range p.Units {
		for _, e := range u.Entries {
			for _, o := range e.Ops {
				for _, n := range o.Schedule {
					if strings.Contains(n.Kernel, "when the mask is causal, in blocks of 32") {
						blocks[u.Name]++
					}
				}
			}
		}
	}
	for name, want := range map[string]int{"Net": 2, "NetBF16": 2, "NetWhole": 0, "NetBF16Whole": 0} {
		if blocks[name] != want {
			t.Errorf("%s: %d nests in diagonal blocks on the page, want %d (all: %v)", name, blocks[name], want, blocks)
		}
	}
}
