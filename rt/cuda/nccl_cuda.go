//go:build cuda

package cuda

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

// The NCCL declarations the shim uses (nccl.h's ABI, stable since NCCL
// 2.0; ncclAvg since 2.10), written out so that building needs no NCCL
// headers; libnccl.so.2 is opened with dlopen at run time.
typedef int ncclResult_t;
typedef void* ncclComm_t;
typedef void* CUcontext;
typedef void* CUstream;
typedef int CUresult;
typedef struct { char internal[128]; } ncclUniqueId;
enum { ocn_ncclFloat32 = 7, ocn_ncclFloat64 = 8, ocn_ncclAvg = 4 };

typedef struct {
	void *lib;
	CUcontext ctx;
	CUresult (*cuCtxSetCurrent)(CUcontext);
	CUresult (*cuStreamQuery)(CUstream);
	ncclResult_t (*ncclGetVersion)(int*);
	ncclResult_t (*ncclGetUniqueId)(ncclUniqueId*);
	ncclResult_t (*ncclCommInitRank)(ncclComm_t*, int, ncclUniqueId, int);
	ncclResult_t (*ncclCommDestroy)(ncclComm_t);
	ncclResult_t (*ncclCommAbort)(ncclComm_t);
	ncclResult_t (*ncclCommGetAsyncError)(ncclComm_t, ncclResult_t*);
	const char* (*ncclGetErrorString)(ncclResult_t);
	ncclResult_t (*ncclReduce)(const void*, void*, size_t, int, int, int, ncclComm_t, CUstream);
	ncclResult_t (*ncclBroadcast)(const void*, void*, size_t, int, int, ncclComm_t, CUstream);
} ocn_nccl;

static int ocn_nccl_sym(void* lib, const char* name, void* dst) {
	void* p = dlsym(lib, name);
	memcpy(dst, &p, sizeof p);
	return p != NULL;
}
static void* ocn_nccl_dlopen(const char* name) { return dlopen(name, RTLD_NOW | RTLD_LOCAL); }
static const char* ocn_nccl_dlerror(void) { const char* e = dlerror(); return e ? e : "unknown dlopen error"; }
static void ocn_nccl_dlclose(void* lib) { if (lib) dlclose(lib); }

static ncclResult_t ocn_ncclGetVersion(ocn_nccl* a, int* v) { return a->ncclGetVersion(v); }
static ncclResult_t ocn_ncclGetUniqueId(ocn_nccl* a, ncclUniqueId* id) { return a->ncclGetUniqueId(id); }
static ncclResult_t ocn_ncclCommInitRank(ocn_nccl* a, ncclComm_t* c, int n, ncclUniqueId* id, int rank) {
	a->cuCtxSetCurrent(a->ctx);
	return a->ncclCommInitRank(c, n, *id, rank);
}
static ncclResult_t ocn_ncclCommDestroy(ocn_nccl* a, ncclComm_t c) { a->cuCtxSetCurrent(a->ctx); return a->ncclCommDestroy(c); }
static ncclResult_t ocn_ncclCommAbort(ocn_nccl* a, ncclComm_t c) { a->cuCtxSetCurrent(a->ctx); return a->ncclCommAbort(c); }
static ncclResult_t ocn_ncclCommGetAsyncError(ocn_nccl* a, ncclComm_t c, ncclResult_t* r) { return a->ncclCommGetAsyncError(c, r); }
static const char* ocn_ncclErrorString(ocn_nccl* a, ncclResult_t r) { return a->ncclGetErrorString ? a->ncclGetErrorString(r) : "unknown NCCL error"; }
static CUresult ocn_cuStreamQuery(ocn_nccl* a, CUstream s) { a->cuCtxSetCurrent(a->ctx); return a->cuStreamQuery(s); }

// ocn_mean averages n values of type t at p across the ranks, in place,
// on stream s: ncclReduce with ncclAvg to rank 0, then ncclBroadcast from
// it, so that every rank holds the same bits. *call names a failing call.
static ncclResult_t ocn_mean(ocn_nccl* a, ncclComm_t c, unsigned long long dp, size_t n, int t, CUstream s, const char** call) {
	ncclResult_t r;
	void* p = (void*)dp;
	a->cuCtxSetCurrent(a->ctx);
	*call = "ncclReduce";
	if ((r = a->ncclReduce(p, p, n, t, ocn_ncclAvg, 0, c, s)) != 0) return r;
	*call = "ncclBroadcast";
	return a->ncclBroadcast(p, p, n, t, 0, c, s);
}
*/
import "C"

import (
	"fmt"
	"os"
	"time"
	"unsafe"

	"github.com/ocannlgen/ocannlgen/rt/dist"
)

// NCCL is a communicator of NVIDIA's NCCL over the ranks of a dist.Comm,
// one GPU each: a session's resident buffers (a model's gradients) are
// averaged across the ranks on the devices (Session.MeanAcross,
// Model.SyncGrads), without a copy to the host.
type NCCL struct {
	api        *C.ocn_nccl
	comm       C.ncclComm_t
	rank, size int
	timeout    time.Duration
	failed     error
}

// ncclSyms are the NCCL symbols the shim loads.
var ncclSyms = []struct {
	name string
	dst  func(a *C.ocn_nccl) unsafe.Pointer
}{
	{"ncclGetVersion", func(a *C.ocn_nccl) unsafe.Pointer { return unsafe.Pointer(&a.ncclGetVersion) }},
	{"ncclGetUniqueId", func(a *C.ocn_nccl) unsafe.Pointer { return unsafe.Pointer(&a.ncclGetUniqueId) }},
	{"ncclCommInitRank", func(a *C.ocn_nccl) unsafe.Pointer { return unsafe.Pointer(&a.ncclCommInitRank) }},
	{"ncclCommDestroy", func(a *C.ocn_nccl) unsafe.Pointer { return unsafe.Pointer(&a.ncclCommDestroy) }},
	{"ncclCommAbort", func(a *C.ocn_nccl) unsafe.Pointer { return unsafe.Pointer(&a.ncclCommAbort) }},
	{"ncclCommGetAsyncError", func(a *C.ocn_nccl) unsafe.Pointer { return unsafe.Pointer(&a.ncclCommGetAsyncError) }},
	{"ncclGetErrorString", func(a *C.ocn_nccl) unsafe.Pointer { return unsafe.Pointer(&a.ncclGetErrorString) }},
	{"ncclReduce", func(a *C.ocn_nccl) unsafe.Pointer { return unsafe.Pointer(&a.ncclReduce) }},
	{"ncclBroadcast", func(a *C.ocn_nccl) unsafe.Pointer { return unsafe.Pointer(&a.ncclBroadcast) }},
}

func (nc *NCCL) ncclErr(call string, r C.ncclResult_t) error {
	if r == 0 {
		return nil
	}
	return fmt.Errorf("cuda: %s: %s (NCCL error %d)", call, C.GoString(C.ocn_ncclErrorString(nc.api, r)), int(r))
}

// OpenNCCL loads NCCL (libnccl.so.2, or the path in OCANNL_NCCL; version
// 2.10 or later) and joins the ranks of c on device d: rank 0 draws the
// communicator's id, c broadcasts it, and every rank initializes its
// part (ncclCommInitRank, which waits for all ranks). Every rank of c
// must call it, each on its own GPU (OpenDevice with the rank's GPU on
// its machine). timeout bounds the initialization and each MeanAcross
// (0: OCANNL_DIST_TIMEOUT, else 2 minutes).
func OpenNCCL(d *Device, c dist.Comm, timeout time.Duration) (*NCCL, error) {
	if d == nil || d.closed {
		return nil, fmt.Errorf("cuda: OpenNCCL on a closed device")
	}
	timeout, err := ncclTimeout(timeout)
	if err != nil {
		return nil, err
	}
	nc := &NCCL{api: (*C.ocn_nccl)(C.calloc(1, C.size_t(unsafe.Sizeof(C.ocn_nccl{})))), rank: c.Rank(), size: c.Size(), timeout: timeout}
	fail := func(err error) (*NCCL, error) {
		nc.release()
		return nil, err
	}
	name := "libnccl.so.2"
	if env := os.Getenv("OCANNL_NCCL"); env != "" {
		name = env
	}
	cn := C.CString(name)
	nc.api.lib = C.ocn_nccl_dlopen(cn)
	C.free(unsafe.Pointer(cn))
	if nc.api.lib == nil {
		return fail(fmt.Errorf("cuda: loading NCCL (%s; set OCANNL_NCCL to its path): %s", name, C.GoString(C.ocn_nccl_dlerror())))
	}
	for _, s := range ncclSyms {
		cs := C.CString(s.name)
		ok := C.ocn_nccl_sym(nc.api.lib, cs, s.dst(nc.api))
		C.free(unsafe.Pointer(cs))
		if ok == 0 {
			return fail(fmt.Errorf("cuda: %s: symbol %s not found", name, s.name))
		}
	}
	for _, s := range []struct {
		name string
		dst  unsafe.Pointer
	}{{"cuCtxSetCurrent", unsafe.Pointer(&nc.api.cuCtxSetCurrent)}, {"cuStreamQuery", unsafe.Pointer(&nc.api.cuStreamQuery)}} {
		cs := C.CString(s.name)
		ok := C.ocn_nccl_sym(d.api.cuda, cs, s.dst)
		C.free(unsafe.Pointer(cs))
		if ok == 0 {
			return fail(fmt.Errorf("cuda: the CUDA driver: symbol %s not found", s.name))
		}
	}
	nc.api.ctx = C.CUcontext(d.ctx)
	var v C.int
	if err := nc.ncclErr("ncclGetVersion", C.ocn_ncclGetVersion(nc.api, &v)); err != nil {
		return fail(err)
	}
	if v < 21000 {
		return fail(fmt.Errorf("cuda: %s is NCCL version code %d: 2.10 or later (ncclAvg) is needed", name, int(v)))
	}
	// Rank 0's id, one byte a value, through c.
	var id C.ncclUniqueId
	if nc.rank == 0 {
		if err := nc.ncclErr("ncclGetUniqueId", C.ocn_ncclGetUniqueId(nc.api, &id)); err != nil {
			c.Fail(err)
			return fail(err)
		}
	}
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&id.internal[0])), len(id.internal))
	vals := make([]float64, len(raw))
	for i, b := range raw {
		vals[i] = float64(b)
	}
	if err := c.Broadcast64(vals, 0); err != nil {
		return fail(fmt.Errorf("cuda: OpenNCCL: broadcasting the NCCL id: %w", err))
	}
	for i, x := range vals {
		raw[i] = byte(x)
	}
	// ncclCommInitRank waits for every rank, and cannot be interrupted:
	// it runs on a goroutine of its own, abandoned (with the loaded
	// library) when the deadline passes first.
	type initResult struct {
		comm C.ncclComm_t
		res  C.ncclResult_t
	}
	done := make(chan initResult, 1)
	api, size, rank := nc.api, nc.size, nc.rank
	go func() {
		var r initResult
		r.res = C.ocn_ncclCommInitRank(api, &r.comm, C.int(size), &id, C.int(rank))
		done <- r
	}()
	select {
	case r := <-done:
		if err := nc.ncclErr("ncclCommInitRank", r.res); err != nil {
			return fail(err)
		}
		nc.comm = r.comm
	case <-time.After(nc.timeout):
		return nil, fmt.Errorf("cuda: ncclCommInitRank did not complete within %v: a rank failed, died or hangs (set the deadline with OpenNCCL's timeout or %s); end the process", nc.timeout, ncclTimeoutEnv)
	}
	return nc, nil
}

// Rank and Size are the communicator's, those of the dist.Comm it was
// opened on.
func (nc *NCCL) Rank() int { return nc.rank }
func (nc *NCCL) Size() int { return nc.size }

func (nc *NCCL) release() {
	if nc.api == nil {
		return
	}
	C.ocn_nccl_dlclose(nc.api.lib)
	C.free(unsafe.Pointer(nc.api))
	nc.api = nil
}

// Close ends this rank's part (ncclCommDestroy, or ncclCommAbort after a
// failure) and unloads NCCL.
func (nc *NCCL) Close() error {
	if nc.api == nil {
		return nil
	}
	var err error
	if nc.comm != nil {
		if nc.failed != nil {
			err = nc.ncclErr("ncclCommAbort", C.ocn_ncclCommAbort(nc.api, nc.comm))
		} else {
			err = nc.ncclErr("ncclCommDestroy", C.ocn_ncclCommDestroy(nc.api, nc.comm))
		}
		nc.comm = nil
	}
	nc.release()
	return err
}

// mean averages the resident buffers bufs of session s across the
// ranks, in place, on the session's stream, and waits for it at most the
// deadline: polling the stream and NCCL's asynchronous error, aborting
// the communicator on either (a rank that failed, died or hangs).
func (nc *NCCL) mean(s *Session, bufs []*resident) error {
	if nc.api == nil {
		return fmt.Errorf("cuda: MeanAcross on a closed NCCL communicator")
	}
	if nc.failed != nil {
		return nc.failed
	}
	dr, ok := s.d.(*driver)
	if !ok {
		return fmt.Errorf("cuda: MeanAcross needs a session of a device (Device.NewSession), not a %T", s.d)
	}
	for _, r := range bufs {
		t := C.int(C.ocn_ncclFloat32)
		if r.elem == "float64" {
			t = C.ocn_ncclFloat64
		}
		var call *C.char
		if res := C.ocn_mean(nc.api, nc.comm, C.ulonglong(r.ptr), C.size_t(r.size), t, C.CUstream(dr.stream), &call); res != 0 {
			return nc.abort(nc.ncclErr(C.GoString(call), res))
		}
	}
	start := time.Now()
	for {
		q := C.ocn_cuStreamQuery(nc.api, C.CUstream(dr.stream))
		var async C.ncclResult_t
		if res := C.ocn_ncclCommGetAsyncError(nc.api, nc.comm, &async); res != 0 {
			return nc.abort(nc.ncclErr("ncclCommGetAsyncError", res))
		}
		switch {
		case async != 0:
			return nc.abort(fmt.Errorf("%w (a rank failed or left)", nc.ncclErr("NCCL (asynchronous error)", async)))
		case q == 0:
			return nil
		case q != 600: // CUDA_ERROR_NOT_READY
			return nc.abort(dr.d.cuErr("cuStreamQuery", C.CUresult(q)))
		case time.Since(start) > nc.timeout:
			return nc.abort(fmt.Errorf("cuda: MeanAcross: the NCCL collectives did not complete within %v: a rank failed, died or hangs (set the deadline with OpenNCCL's timeout or %s)", nc.timeout, ncclTimeoutEnv))
		}
		time.Sleep(20 * time.Microsecond)
	}
}

// abort records err as the communicator's failure: Close aborts it.
func (nc *NCCL) abort(err error) error {
	if nc.failed == nil {
		nc.failed = err
	}
	return nc.failed
}
