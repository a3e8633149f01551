package spec

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// casesDir is /work/shared/cases seen from the package directory.
const casesDir = "../../shared/cases"

// caseSpecRE matches a spec string after an einsum operator or ~logic:.
var caseSpecRE = regexp.MustCompile(`(\+\+\^|\+\+\+|\+\+|\+\*|@\^\^|@\^\+|~logic:)\s*"([^"]*)"`)

// TestCaseFileSpecs parses every spec string of the shared example cases.
func TestCaseFileSpecs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(casesDir, "*.ocl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skipf("no case files under %s", casesDir)
	}
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range caseSpecRE.FindAllStringSubmatch(string(data), -1) {
			src := m[2]
			n++
			if err := checkEinsumRoundTrip(t, src); err != nil {
				t.Errorf("%s: spec %q: %v", filepath.Base(f), src, err)
			}
		}
	}
	if n < 50 {
		t.Errorf("found only %d spec strings in %d case files; the extraction is broken", n, len(files))
	}
	t.Logf("parsed %d spec strings from %d case files", n, len(files))
}

// TestParseCaseAxisCounts pins the per-row axis counts that the parse-*
// cases rely on.
func TestParseCaseAxisCounts(t *testing.T) {
	cases := []struct {
		spec string
		want string
	}{
		{"abc => bca", "o[a b c] => o[b c a]"},
		{"ij;jk=>ik", "o[i j] ; o[j k] => o[i k]"},
		{"b|i->o => b|i->o", "b[b] i[i] o[o] => b[b] i[i] o[o]"},
		{"2*o=+k; k => o", "o[A(2*o+0 =+ 1*k)] ; o[k] => o[o]"},
		{"2*o<+3*k, c; k => o, c", "o[A(2*o+0 <+ 3*k) c] ; o[k] => o[o c]"},
		{"a, b, c => c, a, b", "o[a b c] => o[c a b]"},
		{"a, b, => b, a", "o[a b] => o[b a]"},
		{"ab, cd => cd, ab", "o[ab cd] => o[cd ab]"},
		{"ab; cd => ab^cd", "o[ab] ; o[cd] => o[C[ab cd]]"},
		{"2*ab => ab", "o[A(2*ab+0)] => o[ab]"},
		{"ab<+cd; cd => ab", "o[A(1*ab+0 <+ 1*cd)] ; o[cd] => o[ab]"},
		{"...|ij->k => ...|ji->k", "b[...(batch)] i[i j] o[k] => b[...(batch)] i[j i] o[k]"},
		{"i, j -> 2*i<+j => i, j", "i[i j] o[A(2*i+0 <+ 1*j)] => o[i j]"},
		{"input -> 2*output => input, output", "i[input] o[A(2*output+0)] => o[input output]"},
		{"batch|input->3*output<+1*kernel,; kernel => batch|input->output",
			"b[batch] i[input] o[A(3*output+0 <+ 1*kernel)] ; o[kernel] => b[batch] i[input] o[output]"},
	}
	for _, tc := range cases {
		e, err := ParseEinsum(tc.spec)
		if err != nil {
			t.Errorf("%q: %v", tc.spec, err)
			continue
		}
		if got := dumpEinsum(e); got != tc.want {
			t.Errorf("%q:\n got  %s\n want %s", tc.spec, got, tc.want)
		}
	}
}
