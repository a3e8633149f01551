//go:build !mpi

package mpi

import (
	"errors"
	"testing"
)

// TestOpenWithoutMPI: a build without the mpi tag says so.
func TestOpenWithoutMPI(t *testing.T) {
	if c, err := Open(); c != nil || !errors.Is(err, ErrNoMPI) || Available {
		t.Errorf("Open() = %v, %v", c, err)
	}
}
