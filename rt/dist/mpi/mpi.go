//go:build mpi

package mpi

/*
#cgo pkg-config: mpi
#include <mpi.h>

// Open MPI's handles are macros over addresses of globals: cgo reaches
// them through these functions.
static MPI_Comm ocn_world(void) { return MPI_COMM_WORLD; }
static MPI_Datatype ocn_float(void) { return MPI_FLOAT; }
static MPI_Datatype ocn_double(void) { return MPI_DOUBLE; }
static MPI_Op ocn_sum(void) { return MPI_SUM; }
static void *ocn_in_place(void) { return MPI_IN_PLACE; }

static int ocn_init(void) {
	int inited = 0, provided = 0, rc;
	rc = MPI_Initialized(&inited);
	if (rc != MPI_SUCCESS || inited) return rc;
	rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
	if (rc != MPI_SUCCESS) return rc;
	// Errors come back as return codes (each call names itself in Go),
	// not as an abort of the job.
	return MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

static int ocn_error_string(int code, char *buf, int len) {
	int n = 0;
	if (MPI_Error_string(code, buf, &n) != MPI_SUCCESS || n >= len) return 0;
	return n;
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/ocannlgen/ocannlgen/rt/dist"
)

// Available reports whether the package was built with MPI (the mpi
// build tag).
const Available = true

// comm is MPI_COMM_WORLD.
type comm struct {
	rank, size int
	closed     bool
}

// Open initializes MPI (once per process; the calling goroutine is locked
// to its thread, MPI_THREAD_FUNNELED) and returns MPI_COMM_WORLD as a
// dist.Comm.
func Open() (dist.Comm, error) {
	runtime.LockOSThread()
	if rc := C.ocn_init(); rc != C.MPI_SUCCESS {
		return nil, mpiErr("MPI_Init_thread", rc)
	}
	var rank, size C.int
	if rc := C.MPI_Comm_rank(C.ocn_world(), &rank); rc != C.MPI_SUCCESS {
		return nil, mpiErr("MPI_Comm_rank", rc)
	}
	if rc := C.MPI_Comm_size(C.ocn_world(), &size); rc != C.MPI_SUCCESS {
		return nil, mpiErr("MPI_Comm_size", rc)
	}
	return &comm{rank: int(rank), size: int(size)}, nil
}

func mpiErr(call string, rc C.int) error {
	var buf [C.MPI_MAX_ERROR_STRING]C.char
	n := C.ocn_error_string(rc, &buf[0], C.int(len(buf)))
	msg := C.GoStringN(&buf[0], n)
	if msg == "" {
		msg = fmt.Sprintf("error code %d", int(rc))
	}
	return fmt.Errorf("mpi: %s failed: %s", call, msg)
}

func (c *comm) Rank() int { return c.rank }
func (c *comm) Size() int { return c.size }

func (c *comm) check(call string) error {
	if c.closed {
		return fmt.Errorf("mpi: %s on a closed communicator", call)
	}
	return nil
}

// allReduce sums n values of type t at p across the ranks: MPI_Reduce to
// rank 0 in MPI's fixed order, then MPI_Bcast, so that every rank gets
// the same bits (MPI_Allreduce does not promise that).
func (c *comm) allReduce(p unsafe.Pointer, n int, t C.MPI_Datatype) error {
	if err := c.check("AllReduceSum"); err != nil || n == 0 || c.size == 1 {
		return err
	}
	var send unsafe.Pointer = p
	if c.rank == 0 {
		send = C.ocn_in_place()
	}
	if rc := C.MPI_Reduce(send, p, C.int(n), t, C.ocn_sum(), 0, C.ocn_world()); rc != C.MPI_SUCCESS {
		return mpiErr("MPI_Reduce", rc)
	}
	if rc := C.MPI_Bcast(p, C.int(n), t, 0, C.ocn_world()); rc != C.MPI_SUCCESS {
		return mpiErr("MPI_Bcast", rc)
	}
	return nil
}

func (c *comm) AllReduceSum32(buf []float32) error {
	if len(buf) == 0 {
		return c.check("AllReduceSum32")
	}
	return c.allReduce(unsafe.Pointer(&buf[0]), len(buf), C.ocn_float())
}

func (c *comm) AllReduceSum64(buf []float64) error {
	if len(buf) == 0 {
		return c.check("AllReduceSum64")
	}
	return c.allReduce(unsafe.Pointer(&buf[0]), len(buf), C.ocn_double())
}

func (c *comm) bcast(p unsafe.Pointer, n int, t C.MPI_Datatype, root int) error {
	if err := c.check("Broadcast"); err != nil {
		return err
	}
	if root < 0 || root >= c.size {
		return fmt.Errorf("mpi: Broadcast from rank %d of %d", root, c.size)
	}
	if n == 0 || c.size == 1 {
		return nil
	}
	if rc := C.MPI_Bcast(p, C.int(n), t, C.int(root), C.ocn_world()); rc != C.MPI_SUCCESS {
		return mpiErr("MPI_Bcast", rc)
	}
	return nil
}

func (c *comm) Broadcast32(buf []float32, root int) error {
	if len(buf) == 0 {
		return c.bcast(nil, 0, C.ocn_float(), root)
	}
	return c.bcast(unsafe.Pointer(&buf[0]), len(buf), C.ocn_float(), root)
}

func (c *comm) Broadcast64(buf []float64, root int) error {
	if len(buf) == 0 {
		return c.bcast(nil, 0, C.ocn_double(), root)
	}
	return c.bcast(unsafe.Pointer(&buf[0]), len(buf), C.ocn_double(), root)
}

func (c *comm) Barrier() error {
	if err := c.check("Barrier"); err != nil {
		return err
	}
	if rc := C.MPI_Barrier(C.ocn_world()); rc != C.MPI_SUCCESS {
		return mpiErr("MPI_Barrier", rc)
	}
	return nil
}

// Close finalizes MPI: the process cannot open it again.
func (c *comm) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	if rc := C.MPI_Finalize(); rc != C.MPI_SUCCESS {
		return mpiErr("MPI_Finalize", rc)
	}
	return nil
}
