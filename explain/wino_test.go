package explain

import (
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/gen"
)

// TestWinogradSchedule: the page of internal/winocheck's model says that
// the Winograd tiers run its two convolutions in rt/wino, as the
// generated code does (the page shows the loss's forward entry; the
// gradients' nests are not on it).
func TestWinogradSchedule(t *testing.T) {
	srcs, err := gen.Explainables([]string{"../internal/winocheck"}, nil, gen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := BuildPackages("winocheck", "..", srcs, Options{})
	var kernels []string
	for _, u := range p.Units {
		for _, e := range u.Entries {
			for _, o := range e.Ops {
				for _, n := range o.Schedule {
					kernels = append(kernels, n.Kernel)
				}
			}
		}
	}
	all := strings.Join(kernels, "\n")
	for _, want := range []string{
		"10x10 convolution, 16 -> 16 channels: AVX512 and AVX2 in rt/wino",
		"10x10 convolution, 16 -> 32 channels: AVX512 and AVX2 in rt/wino",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no nest's kernel says %q; the kernels:\n%s", want, all)
		}
	}
}
