//go:build !mpi

package mpi

import (
	"errors"
	"testing"
	"time"
)

// TestOpenWithoutMPI: a build without the mpi tag says so.
func TestOpenWithoutMPI(t *testing.T) {
	if c, err := Open(); c != nil || !errors.Is(err, ErrNoMPI) || Available {
		t.Errorf("Open() = %v, %v", c, err)
	}
}

// TestOpenWithBadTimeout: without MPI, OpenWith still reports a bad
// deadline first.
func TestOpenWithBadTimeout(t *testing.T) {
	t.Setenv(TimeoutEnv, "soon")
	if _, err := OpenWith(Options{}); err == nil || errors.Is(err, ErrNoMPI) {
		t.Errorf("OpenWith with %s=soon: %v", TimeoutEnv, err)
	}
	t.Setenv(TimeoutEnv, "")
	if _, err := OpenWith(Options{Timeout: -time.Second}); err == nil || errors.Is(err, ErrNoMPI) {
		t.Errorf("OpenWith(Timeout -1s): %v", err)
	}
	if _, err := OpenWith(Options{Timeout: time.Second}); !errors.Is(err, ErrNoMPI) {
		t.Errorf("OpenWith(Timeout 1s): %v", err)
	}
}
