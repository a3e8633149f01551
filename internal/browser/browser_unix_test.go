//go:build unix

package browser

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// A chromium that stops answering (here: stopped with SIGSTOP) is killed
// by Close after the grace period, its whole process group with it.
func TestBrowserUnresponsiveChromiumKilled(t *testing.T) {
	path := Require(t)
	defer func(g time.Duration) { closeGrace = g }(closeGrace)
	closeGrace = 1 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := Start(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	marker := b.dataDir
	if err := syscall.Kill(b.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	lctx, lcancel := context.WithTimeout(ctx, 2*time.Second)
	defer lcancel()
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := b.Load(lctx, "testdata/blank.html", Options{})
		done <- err
	}()
	select {
	case err = <-done:
	case <-time.After(15 * time.Second):
		killGroup(b.cmd) // what Close should have done
		t.Fatal("Load (and the Close it calls on error) did not return 15 s after chromium stopped")
	}
	if err == nil {
		t.Fatal("a load from a stopped chromium succeeded")
	}
	if took := time.Since(start); took > 2*time.Second+closeGrace+2*time.Second {
		t.Errorf("the load returned after %v", took)
	}
	checkNoLeftovers(t, marker)
}
