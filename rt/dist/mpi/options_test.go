package mpi

import (
	"testing"
	"time"
)

// TestTimeout: Options.Timeout wins, then OCANNL_DIST_TIMEOUT, then
// DefaultTimeout; a negative or malformed deadline is an error.
func TestTimeout(t *testing.T) {
	for _, c := range []struct {
		opt  time.Duration
		env  string
		want time.Duration
		ok   bool
	}{
		{0, "", DefaultTimeout, true},
		{3 * time.Second, "", 3 * time.Second, true},
		{3 * time.Second, "1m", 3 * time.Second, true},
		{0, "1m30s", 90 * time.Second, true},
		{0, "250ms", 250 * time.Millisecond, true},
		{0, "10", 0, false},
		{0, "-1s", 0, false},
		{0, "0s", 0, false},
		{-time.Second, "", 0, false},
	} {
		t.Setenv(TimeoutEnv, c.env)
		got, err := Options{Timeout: c.opt}.timeout()
		if got != c.want || (err == nil) != c.ok {
			t.Errorf("Timeout %v, %s=%q: %v, %v; want %v (ok %v)", c.opt, TimeoutEnv, c.env, got, err, c.want, c.ok)
		}
	}
}

// TestGrace: a quarter of the deadline, within [50ms, 5s], never above
// the deadline.
func TestGrace(t *testing.T) {
	for d, want := range map[time.Duration]time.Duration{
		2 * time.Second:        500 * time.Millisecond,
		100 * time.Millisecond: 50 * time.Millisecond,
		20 * time.Millisecond:  20 * time.Millisecond,
		time.Hour:              5 * time.Second,
	} {
		if got := grace(d); got != want {
			t.Errorf("grace(%v) = %v, want %v", d, got, want)
		}
	}
}
