package inference

import "testing"

// TestParseErrorCitation checks that a syntax error citing a second
// position keeps it through inference: in Error and in Detail (the
// message `ocannlgen infer --json` reports).
func TestParseErrorCitation(t *testing.T) {
	_, err := InferSource("input x : 2\nlet y = (x")
	e, ok := AsError(err)
	if !ok {
		t.Fatalf("err = %v", err)
	}
	if got, want := e.Error(), "2:11: expected ',' or ')' to close '(' at 2:9, found end of input"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := e.Detail(), "expected ',' or ')' to close '(' at 2:9, found end of input"; got != want {
		t.Errorf("Detail() = %q, want %q", got, want)
	}
}
