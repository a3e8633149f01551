// Package mpi implements dist.Comm on Open MPI's MPI_COMM_WORLD, through
// cgo, behind the mpi build tag (`go build -tags mpi`; Debian's
// libopenmpi-dev and openmpi-bin). Without the tag the package builds
// everywhere and Open returns ErrNoMPI, so that nothing needs MPI to
// build. Ranks are started by mpirun (locally, over a hostfile, or by a
// cluster scheduler): `mpirun -np 4 ./train`.
//
// Every MPI call's return code is checked (MPI_ERRORS_RETURN is set on
// the communicator) and a failure names the call. AllReduceSum is
// MPI_Reduce to rank 0 followed by MPI_Bcast, so that every rank holds
// the same bits, which MPI_Allreduce does not promise: the ranks' models
// stay bit-identical step after step.
package mpi
