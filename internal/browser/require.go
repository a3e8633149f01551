package browser

import (
	"os"
	"testing"
)

// Require returns the chromium a browser test runs (see [Find]). The
// browser checks run when OCANNLGEN_BROWSER=1 (.ci/run sets it, having
// installed chromium; `go test ./...` skips them, so that it needs no
// browser and loads no pages twice in CI); with it set, a missing
// chromium fails the test, so that CI cannot pass with the browser
// checks silently skipped.
func Require(t testing.TB) string {
	t.Helper()
	if os.Getenv("OCANNLGEN_BROWSER") != "1" {
		t.Skip("browser check skipped: it runs with OCANNLGEN_BROWSER=1 (as .ci/run runs it, having installed chromium)")
	}
	path, err := Find()
	if err != nil {
		t.Fatalf("OCANNLGEN_BROWSER=1 but %v", err)
	}
	return path
}
