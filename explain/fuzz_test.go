package explain

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzBuildFile builds and renders the page of arbitrary programs: a
// program that parses, infers or fails anywhere gives a page, without a
// panic, and the same page twice.
func FuzzBuildFile(f *testing.F) {
	files, _ := filepath.Glob("../examples/programs/*.ocl")
	for _, p := range append(files, "testdata/mismatch.ocl") {
		if strings.HasSuffix(p, "decoder.ocl") {
			continue // large: a second per run
		}
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b))
		}
	}
	f.Add("input x : 3\ninput y : 4\nlet z = x + y\n")
	f.Add("input ids : 2, 3 | index 5\nlet e = {t; o=[4]} @@ \"k, o; ..b.. | => ..b.. | o\" ids\n")
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 4096 {
			return
		}
		render := func() string {
			p := BuildFile(File{Name: "fuzz.ocl", Text: src}, Options{})
			var b strings.Builder
			if err := Render(&b, p); err != nil {
				t.Fatalf("render: %v", err)
			}
			return b.String()
		}
		if a, b := render(), render(); a != b {
			t.Fatal("two pages of the same program differ")
		}
	})
}
