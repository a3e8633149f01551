package program

import "testing"

// TestErrorCitations checks the exact text of syntax errors that cite
// the position of an opening bracket: Error renders it as LINE:COL.
func TestErrorCitations(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"let y = (x", "1:11: expected ',' or ')' to close '(' at 1:9, found end of input"},
		{"let y = f[1 2](x)", "1:13: expected ',' or ']' in the configuration of f opened at 1:10, found number 2"},
		{"let y = {w", "1:11: expected ';' or '}' in the inline parameter opened at 1:9, found end of input"},
		{"let y = [1; 2", "1:14: expected ';' or ']' in the literal opened at 1:9, found end of input (items of [...] are separated by ';')"},
	} {
		_, err := Parse(tc.src)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Parse(%q): err = %v, want %s", tc.src, err, tc.want)
		}
	}
}
