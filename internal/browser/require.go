package browser

import (
	"os"
	"testing"
)

// Require returns the chromium a browser test runs (see [Find]). Without
// one it skips the test, or fails it when OCANNLGEN_BROWSER=1 (CI sets it,
// having installed chromium), so that CI cannot pass with the browser
// checks silently skipped.
func Require(t testing.TB) string {
	t.Helper()
	path, err := Find()
	if err != nil {
		if os.Getenv("OCANNLGEN_BROWSER") == "1" {
			t.Fatalf("OCANNLGEN_BROWSER=1 but %v", err)
		}
		t.Skipf("browser check skipped: %v", err)
	}
	return path
}
