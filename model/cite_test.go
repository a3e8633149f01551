package model

import "testing"

// TestErrorCitations checks the exact text of errors that cite a second
// position of the model program: Error renders it as LINE:COL.
func TestErrorCitations(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"sgd lr=0.1\nsgd lr=0.2\nloss l:\n  input x : 1\n  return x\n", "2:1: the optimizer is set twice (first at 1:1)"},
		{"loss l:\n  input x : 2\n  return x * {w = 1.0} + x * {w = 2.0}\n", "3:30: parameter w is initialized as 2 here and as 1 at 3:14"},
	} {
		_, err := expand(t, tc.src)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: err = %v, want %s", tc.src, err, tc.want)
		}
	}
	// Two entries disagreeing on a parameter's shape.
	src := "let net = linear[4]\nloss train:\n  input x : 8 | 2\n  input y : 8 | 4\n  return hinge(net(x), y)\nentry predict:\n  input p : 1 | 3\n  return net(p)\n"
	m, err := expand(t, src)
	if err != nil {
		t.Fatal(err)
	}
	want := "8:10: parameter net.w has shape 3 -> 4 in entry predict (used at 8:10) but shape 2 -> 4 in entry train (used at 5:16)"
	if _, err := m.Infer(); err == nil || err.Error() != want {
		t.Errorf("Infer: err = %v, want %s", err, want)
	}
}
