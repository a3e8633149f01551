package program

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// casesDir locates the shared example cases (*.ocl), if present.
func casesDir() string {
	if d := os.Getenv("OCANNLGEN_CASES"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "..", "shared", "cases")
}

// caseFiles returns the case programs, skipping the test when there are none.
func caseFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(casesDir(), "*.ocl"))
	if err != nil || len(files) == 0 {
		t.Skipf("no case programs in %s", casesDir())
	}
	return files
}

// TestCases parses every shared case program and checks its round trip.
func TestCases(t *testing.T) {
	for _, f := range caseFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src := string(data)
		name := filepath.Base(f)
		p, err := Parse(src)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		// Every non-blank, non-comment line is one statement.
		n := 0
		for _, line := range strings.Split(src, "\n") {
			if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
				n++
			}
		}
		if len(p.Stmts) != n {
			t.Errorf("%s: %d statements, want %d", name, len(p.Stmts), n)
		}
		checkRoundTrip(t, name, p)
		// Printing is a fixed point after one round.
		q := mustParse(t, p.String())
		if q.String() != p.String() {
			t.Errorf("%s: printing is not stable", name)
		}
	}
}
