package mpi

import (
	"fmt"
	"os"
	"time"
)

// TimeoutEnv is the environment variable that sets the deadline of
// every collective when Options.Timeout is zero: a Go duration ("30s",
// "5m").
const TimeoutEnv = "OCANNL_DIST_TIMEOUT"

// DefaultTimeout is the deadline of every collective when neither
// Options.Timeout nor OCANNL_DIST_TIMEOUT sets one.
const DefaultTimeout = 2 * time.Minute

// Options configures OpenWith.
type Options struct {
	// Timeout bounds each collective: from this rank's call, the others
	// must reach it within Timeout, or it returns a *dist.RankError
	// naming the ranks that did not (dead, stopped, or slower than the
	// deadline), after a grace of Timeout/4 (at least 50ms, at most 5s)
	// in which the ranks that did reach it answer each other. It must
	// exceed the longest time one rank may wait for another: a step's
	// compute time and its imbalance between ranks, the loading of the
	// data before the first collective, rank 0's checkpoint writes.
	// Zero means OCANNL_DIST_TIMEOUT, or DefaultTimeout.
	Timeout time.Duration
}

// timeout resolves o's deadline: Timeout when positive, else the
// environment's, else DefaultTimeout.
func (o Options) timeout() (time.Duration, error) {
	switch {
	case o.Timeout > 0:
		return o.Timeout, nil
	case o.Timeout < 0:
		return 0, fmt.Errorf("mpi: negative Options.Timeout %v", o.Timeout)
	}
	env := os.Getenv(TimeoutEnv)
	if env == "" {
		return DefaultTimeout, nil
	}
	d, err := time.ParseDuration(env)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("mpi: %s=%q is not a positive duration (e.g. 30s, 5m)", TimeoutEnv, env)
	}
	return d, nil
}

// grace is how long a rank whose deadline passed waits for the others'
// answers: timeout/4, at least 50ms (but not above timeout), at most 5s.
func grace(timeout time.Duration) time.Duration {
	return min(max(timeout/4, min(50*time.Millisecond, timeout)), 5*time.Second)
}
