//go:build !mpi

package mpi

import (
	"errors"

	"github.com/ocannlgen/ocannlgen/rt/dist"
)

// Available reports whether the package was built with MPI (the mpi
// build tag).
const Available = false

// ErrNoMPI is Open's error in a build without the mpi tag.
var ErrNoMPI = errors.New("mpi: built without mpi: rebuild with -tags mpi (needs Open MPI's headers and library, Debian's libopenmpi-dev)")

// Open returns ErrNoMPI: this build has no MPI.
func Open() (dist.Comm, error) { return nil, ErrNoMPI }

// OpenWith checks o, then returns ErrNoMPI: this build has no MPI.
func OpenWith(o Options) (dist.Comm, error) {
	if _, err := o.timeout(); err != nil {
		return nil, err
	}
	return nil, ErrNoMPI
}
