// Package mpi implements dist.Comm on Open MPI (a duplicate of
// MPI_COMM_WORLD), through cgo, behind the mpi build tag (`go build -tags
// mpi`; Debian's libopenmpi-dev and openmpi-bin). Without the tag the
// package builds everywhere and Open returns ErrNoMPI, so that nothing
// needs MPI to build. Ranks are started by mpirun (locally, over a
// hostfile, or by a cluster scheduler): `mpirun -np 4 ./train`.
//
// Every MPI call's return code is checked (MPI_ERRORS_RETURN is set on
// the communicator) and a failure names the call. AllReduceSum is
// MPI_Ireduce to rank 0 followed by MPI_Ibcast, so that every rank holds
// the same bits, which MPI_Allreduce does not promise: the ranks' models
// stay bit-identical step after step.
//
// Failures: no collective waits forever. Each one is nonblocking MPI
// polled with MPI_Test against a deadline (Options.Timeout,
// OCANNL_DIST_TIMEOUT, DefaultTimeout), while control messages travel
// beside the collectives. A rank that calls Fail, or Close before the
// others are done, makes each of their collectives that it did not
// complete return at once a *dist.RankError naming it (with Fail's error
// text). A rank that
// does not reach a collective in time (dead, stopped, or slower than the
// deadline) is named by the others once the deadline and a grace period
// pass. With mpirun's defaults a process that exits without finalizing
// MPI ends the whole job first: mpirun kills the other ranks and names
// the one that exited (its rank and exit code or signal); the deadline
// is what ends a job whose ranks hang without exiting, or one run with
// orte_abort_on_non_zero_status=0.
package mpi
