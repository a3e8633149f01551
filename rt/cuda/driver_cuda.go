//go:build cuda

package cuda

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

// The few CUDA driver API and NVRTC declarations the shim uses, written
// out so that building needs no CUDA headers; the libraries are opened
// with dlopen at run time.
typedef int CUresult;
typedef int CUdevice;
typedef void* CUcontext;
typedef void* CUmodule;
typedef void* CUfunction;
typedef void* CUstream;
typedef unsigned long long CUdeviceptr;
typedef int nvrtcResult;
typedef void* nvrtcProgram;

typedef struct {
	void *cuda, *nvrtc;
	// ctx is made current at the start of every call through the table:
	// a goroutine may run each cgo call on a different OS thread.
	CUcontext ctx;
	CUresult (*cuInit)(unsigned);
	CUresult (*cuDeviceGet)(CUdevice*, int);
	CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
	CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
	CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
	CUresult (*cuCtxSetCurrent)(CUcontext);
	CUresult (*cuStreamCreate)(CUstream*, unsigned);
	CUresult (*cuStreamDestroy)(CUstream);
	CUresult (*cuStreamSynchronize)(CUstream);
	CUresult (*cuModuleLoadData)(CUmodule*, const void*);
	CUresult (*cuModuleUnload)(CUmodule);
	CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
	CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
	CUresult (*cuMemFree)(CUdeviceptr);
	CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
	CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream);
	CUresult (*cuMemcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream);
	CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void**, void**);
	CUresult (*cuGetErrorName)(CUresult, const char**);
	nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*);
	nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char* const*);
	nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram, size_t*);
	nvrtcResult (*nvrtcGetPTX)(nvrtcProgram, char*);
	nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t*);
	nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char*);
	nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram*);
	const char* (*nvrtcGetErrorString)(nvrtcResult);
} ocannl_api;

// ocannl_sym loads symbol name from lib into *dst; 0 when missing.
static int ocannl_sym(void* lib, const char* name, void* dst) {
	void* p = dlsym(lib, name);
	memcpy(dst, &p, sizeof p);
	return p != NULL;
}

static void* ocannl_dlopen(const char* name) { return dlopen(name, RTLD_NOW | RTLD_LOCAL); }
static const char* ocannl_dlerror(void) { const char* e = dlerror(); return e ? e : "unknown dlopen error"; }
static void ocannl_dlclose(void* lib) { if (lib) dlclose(lib); }

// The calls through the table (cgo cannot call C function pointers).
static CUresult ocannl_cuInit(ocannl_api* a) { return a->cuInit(0); }
static CUresult ocannl_cuDeviceGet(ocannl_api* a, CUdevice* d, int i) { return a->cuDeviceGet(d, i); }
static CUresult ocannl_cuDeviceGetAttribute(ocannl_api* a, int* v, int attr, CUdevice d) { return a->cuDeviceGetAttribute(v, attr, d); }
static CUresult ocannl_cuDevicePrimaryCtxRetain(ocannl_api* a, CUcontext* c, CUdevice d) { return a->cuDevicePrimaryCtxRetain(c, d); }
static CUresult ocannl_cuDevicePrimaryCtxRelease(ocannl_api* a, CUdevice d) { return a->cuDevicePrimaryCtxRelease(d); }
static CUresult ocannl_cuCtxSetCurrent(ocannl_api* a, CUcontext c) { return a->cuCtxSetCurrent(c); }
static CUresult ocannl_cuStreamCreate(ocannl_api* a, CUstream* s) { if (a->ctx) a->cuCtxSetCurrent(a->ctx); return a->cuStreamCreate(s, 1); }
static CUresult ocannl_cuStreamDestroy(ocannl_api* a, CUstream s) { if (a->ctx) a->cuCtxSetCurrent(a->ctx); return a->cuStreamDestroy(s); }
static CUresult ocannl_cuStreamSynchronize(ocannl_api* a, CUstream s) { if (a->ctx) a->cuCtxSetCurrent(a->ctx); return a->cuStreamSynchronize(s); }
static CUresult ocannl_cuModuleLoadData(ocannl_api* a, CUmodule* m, const void* img) { if (a->ctx) a->cuCtxSetCurrent(a->ctx); return a->cuModuleLoadData(m, img); }
static CUresult ocannl_cuModuleUnload(ocannl_api* a, CUmodule m) { if (a->ctx) a->cuCtxSetCurrent(a->ctx); return a->cuModuleUnload(m); }
static CUresult ocannl_cuModuleGetFunction(ocannl_api* a, CUfunction* f, CUmodule m, const char* n) { if (a->ctx) a->cuCtxSetCurrent(a->ctx); return a->cuModuleGetFunction(f, m, n); }
static CUresult ocannl_cuMemAlloc(ocannl_api* a, CUdeviceptr* p, size_t n) { if (a->ctx) a->cuCtxSetCurrent(a->ctx); return a->cuMemAlloc(p, n); }
static CUresult ocannl_cuMemFree(ocannl_api* a, CUdeviceptr p) { if (a->ctx) a->cuCtxSetCurrent(a->ctx); return a->cuMemFree(p); }
static CUresult ocannl_cuMemsetD8Async(ocannl_api* a, CUdeviceptr p, size_t n, CUstream s) { if (a->ctx) a->cuCtxSetCurrent(a->ctx); return a->cuMemsetD8Async(p, 0, n, s); }
// The copies wait for the stream inside the call: Go memory is only
// pinned for the duration of a cgo call.
static CUresult ocannl_upload(ocannl_api* a, CUdeviceptr dst, const void* src, size_t n, CUstream s) {
	a->cuCtxSetCurrent(a->ctx);
	CUresult r = a->cuMemcpyHtoDAsync(dst, src, n, s);
	return r ? r : a->cuStreamSynchronize(s);
}
static CUresult ocannl_download(ocannl_api* a, void* dst, CUdeviceptr src, size_t n, CUstream s) {
	a->cuCtxSetCurrent(a->ctx);
	CUresult r = a->cuMemcpyDtoHAsync(dst, src, n, s);
	return r ? r : a->cuStreamSynchronize(s);
}
static CUresult ocannl_cuLaunchKernel(ocannl_api* a, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, CUstream s, void** params) {
	a->cuCtxSetCurrent(a->ctx);
	return a->cuLaunchKernel(f, gx, gy, gz, bx, 1, 1, 0, s, params, NULL);
}
static const char* ocannl_cuErrorName(ocannl_api* a, CUresult r) {
	const char* s = NULL;
	if (a->cuGetErrorName == NULL || a->cuGetErrorName(r, &s) != 0 || s == NULL) return "unknown CUDA error";
	return s;
}
static nvrtcResult ocannl_nvrtcCreateProgram(ocannl_api* a, nvrtcProgram* p, const char* src) {
	return a->nvrtcCreateProgram(p, src, "ocannl_gen.cu", 0, NULL, NULL);
}
static nvrtcResult ocannl_nvrtcCompileProgram(ocannl_api* a, nvrtcProgram p, int n, const char* const* opts) { return a->nvrtcCompileProgram(p, n, opts); }
static nvrtcResult ocannl_nvrtcGetPTXSize(ocannl_api* a, nvrtcProgram p, size_t* n) { return a->nvrtcGetPTXSize(p, n); }
static nvrtcResult ocannl_nvrtcGetPTX(ocannl_api* a, nvrtcProgram p, char* ptx) { return a->nvrtcGetPTX(p, ptx); }
static nvrtcResult ocannl_nvrtcGetProgramLogSize(ocannl_api* a, nvrtcProgram p, size_t* n) { return a->nvrtcGetProgramLogSize(p, n); }
static nvrtcResult ocannl_nvrtcGetProgramLog(ocannl_api* a, nvrtcProgram p, char* log) { return a->nvrtcGetProgramLog(p, log); }
static nvrtcResult ocannl_nvrtcDestroyProgram(ocannl_api* a, nvrtcProgram* p) { return a->nvrtcDestroyProgram(p); }
static const char* ocannl_nvrtcErrorString(ocannl_api* a, nvrtcResult r) { return a->nvrtcGetErrorString ? a->nvrtcGetErrorString(r) : "unknown NVRTC error"; }
*/
import "C"

import (
	"fmt"
	"os"
	"unsafe"
)

// Available reports whether this binary was built with the cuda tag.
const Available = true

// cudaSyms and nvrtcSyms are the symbols the shim loads, with the field
// offsets of their pointers in ocannl_api.
var cudaSyms = []struct {
	name string
	dst  func(a *C.ocannl_api) unsafe.Pointer
}{
	{"cuInit", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.cuInit) }},
	{"cuDeviceGet", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.cuDeviceGet) }},
	{"cuDeviceGetAttribute", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.cuDeviceGetAttribute) }},
	{"cuDevicePrimaryCtxRetain", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.cuDevicePrimaryCtxRetain) }},
	{"cuDevicePrimaryCtxRelease_v2", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.cuDevicePrimaryCtxRelease) }},
	{"cuCtxSetCurrent", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.cuCtxSetCurrent) }},
	{"cuStreamCreate", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.cuStreamCreate) }},
	{"cuStreamDestroy_v2", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.cuStreamDestroy) }},
	{"cuStreamSynchronize", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.cuStreamSynchronize) }},
	{"cuModuleLoadData", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.cuModuleLoadData) }},
	{"cuModuleUnload", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.cuModuleUnload) }},
	{"cuModuleGetFunction", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.cuModuleGetFunction) }},
	{"cuMemAlloc_v2", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.cuMemAlloc) }},
	{"cuMemFree_v2", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.cuMemFree) }},
	{"cuMemsetD8Async", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.cuMemsetD8Async) }},
	{"cuMemcpyHtoDAsync_v2", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.cuMemcpyHtoDAsync) }},
	{"cuMemcpyDtoHAsync_v2", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.cuMemcpyDtoHAsync) }},
	{"cuLaunchKernel", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.cuLaunchKernel) }},
	{"cuGetErrorName", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.cuGetErrorName) }},
}

var nvrtcSyms = []struct {
	name string
	dst  func(a *C.ocannl_api) unsafe.Pointer
}{
	{"nvrtcCreateProgram", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.nvrtcCreateProgram) }},
	{"nvrtcCompileProgram", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.nvrtcCompileProgram) }},
	{"nvrtcGetPTXSize", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.nvrtcGetPTXSize) }},
	{"nvrtcGetPTX", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.nvrtcGetPTX) }},
	{"nvrtcGetProgramLogSize", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.nvrtcGetProgramLogSize) }},
	{"nvrtcGetProgramLog", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.nvrtcGetProgramLog) }},
	{"nvrtcDestroyProgram", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.nvrtcDestroyProgram) }},
	{"nvrtcGetErrorString", func(a *C.ocannl_api) unsafe.Pointer { return unsafe.Pointer(&a.nvrtcGetErrorString) }},
}

// nvrtcNames are the sonames tried for NVRTC (OCANNL_NVRTC first, when
// set).
var nvrtcNames = []string{"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"}

// Device is an opened GPU: the loaded libraries and the primary context
// of device 0.
type Device struct {
	api    *C.ocannl_api
	dev    C.CUdevice
	ctx    C.CUcontext
	major  int
	minor  int
	closed bool
}

// cuErr turns a CUDA result into an error naming the call.
func (d *Device) cuErr(call string, r C.CUresult) error {
	if r == 0 {
		return nil
	}
	return fmt.Errorf("cuda: %s: %s (%d)", call, C.GoString(C.ocannl_cuErrorName(d.api, r)), int(r))
}

func dlopen(name string) (unsafe.Pointer, error) {
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	h := C.ocannl_dlopen(cn)
	if h == nil {
		return nil, fmt.Errorf("%s", C.GoString(C.ocannl_dlerror()))
	}
	return h, nil
}

func loadSyms(lib unsafe.Pointer, a *C.ocannl_api, syms []struct {
	name string
	dst  func(a *C.ocannl_api) unsafe.Pointer
}) error {
	for _, s := range syms {
		cn := C.CString(s.name)
		ok := C.ocannl_sym(lib, cn, s.dst(a))
		C.free(unsafe.Pointer(cn))
		if ok == 0 {
			return fmt.Errorf("symbol %s not found", s.name)
		}
	}
	return nil
}

// Open loads the CUDA driver (libcuda.so.1, or the path in OCANNL_LIBCUDA)
// and NVRTC (see nvrtcNames, or the path in OCANNL_NVRTC), and opens GPU 0.
// Without them, or without a GPU, it returns an error naming what is
// missing; the caller keeps its CPU path.
func Open() (*Device, error) { return OpenDevice(0) }

// OpenDevice is Open for GPU ordinal (0 first): with several ranks of a
// data-parallel run on one machine (OpenNCCL), each opens its own.
func OpenDevice(ordinal int) (*Device, error) {
	d := &Device{api: (*C.ocannl_api)(C.calloc(1, C.size_t(unsafe.Sizeof(C.ocannl_api{}))))}
	fail := func(err error) (*Device, error) {
		d.release()
		return nil, err
	}
	driverLib := "libcuda.so.1"
	if env := os.Getenv("OCANNL_LIBCUDA"); env != "" {
		driverLib = env
	}
	lib, err := dlopen(driverLib)
	if err != nil {
		return fail(fmt.Errorf("cuda: loading the CUDA driver (%s; set OCANNL_LIBCUDA to its path): %v", driverLib, err))
	}
	d.api.cuda = lib
	if err := loadSyms(lib, d.api, cudaSyms); err != nil {
		return fail(fmt.Errorf("cuda: %s: %v", driverLib, err))
	}
	names := nvrtcNames
	if env := os.Getenv("OCANNL_NVRTC"); env != "" {
		names = append([]string{env}, names...)
	}
	var errs []string
	for _, n := range names {
		if lib, err := dlopen(n); err == nil {
			d.api.nvrtc = lib
			break
		} else {
			errs = append(errs, err.Error())
		}
	}
	if d.api.nvrtc == nil {
		return fail(fmt.Errorf("cuda: loading NVRTC (set OCANNL_NVRTC to its path): %v", errs))
	}
	if err := loadSyms(d.api.nvrtc, d.api, nvrtcSyms); err != nil {
		return fail(fmt.Errorf("cuda: NVRTC: %v", err))
	}
	if err := d.cuErr("cuInit", C.ocannl_cuInit(d.api)); err != nil {
		return fail(err)
	}
	if err := d.cuErr(fmt.Sprintf("cuDeviceGet(%d)", ordinal), C.ocannl_cuDeviceGet(d.api, &d.dev, C.int(ordinal))); err != nil {
		return fail(err)
	}
	var v C.int
	for i, dst := range []*int{&d.major, &d.minor} {
		// CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR (75) and _MINOR (76).
		if err := d.cuErr("cuDeviceGetAttribute", C.ocannl_cuDeviceGetAttribute(d.api, &v, C.int(75+i), d.dev)); err != nil {
			return fail(err)
		}
		*dst = int(v)
	}
	if err := d.cuErr("cuDevicePrimaryCtxRetain", C.ocannl_cuDevicePrimaryCtxRetain(d.api, &d.ctx, d.dev)); err != nil {
		return fail(err)
	}
	d.api.ctx = d.ctx
	return d, nil
}

func (d *Device) release() {
	if d.api == nil {
		return
	}
	if d.ctx != nil {
		C.ocannl_cuDevicePrimaryCtxRelease(d.api, d.dev)
		d.ctx = nil
	}
	C.ocannl_dlclose(d.api.nvrtc)
	C.ocannl_dlclose(d.api.cuda)
	C.free(unsafe.Pointer(d.api))
	d.api = nil
}

// Close releases the context and the libraries. Sessions must be closed
// first.
func (d *Device) Close() error {
	if !d.closed {
		d.closed = true
		d.release()
	}
	return nil
}

// NewSession compiles src (a generated ocannl_gen.cu) for this device and
// returns a session with its own stream.
func (d *Device) NewSession(src []byte) (*Session, error) {
	if d.closed {
		return nil, fmt.Errorf("cuda: the device is closed")
	}
	if err := d.cuErr("cuCtxSetCurrent", C.ocannl_cuCtxSetCurrent(d.api, d.ctx)); err != nil {
		return nil, err
	}
	dr := &driver{d: d, funcs: map[string]C.CUfunction{}}
	if err := d.cuErr("cuStreamCreate", C.ocannl_cuStreamCreate(d.api, &dr.stream)); err != nil {
		return nil, err
	}
	s, err := NewSession(dr, src)
	if err != nil {
		dr.Close()
		return nil, err
	}
	return s, nil
}

// driver is the Driver of a real device: one stream, one module.
type driver struct {
	d      *Device
	stream C.CUstream
	module C.CUmodule
	funcs  map[string]C.CUfunction
}

// Compile compiles src with NVRTC for the device's architecture and
// loads the PTX.
func (r *driver) Compile(src []byte) error {
	a := r.d.api
	csrc := C.CString(string(src))
	defer C.free(unsafe.Pointer(csrc))
	var prog C.nvrtcProgram
	if res := C.ocannl_nvrtcCreateProgram(a, &prog, csrc); res != 0 {
		return fmt.Errorf("cuda: nvrtcCreateProgram: %s", C.GoString(C.ocannl_nvrtcErrorString(a, res)))
	}
	defer C.ocannl_nvrtcDestroyProgram(a, &prog)
	opts, err := nvrtcOptions(src, int(r.d.major), int(r.d.minor), os.Getenv, osIsDir)
	if err != nil {
		return err
	}
	copts := make([]*C.char, len(opts))
	for i, o := range opts {
		copts[i] = C.CString(o)
		defer C.free(unsafe.Pointer(copts[i]))
	}
	carr := (**C.char)(C.malloc(C.size_t(len(opts)) * C.size_t(unsafe.Sizeof(copts[0]))))
	defer C.free(unsafe.Pointer(carr))
	copy(unsafe.Slice(carr, len(opts)), copts)
	if res := C.ocannl_nvrtcCompileProgram(a, prog, C.int(len(opts)), carr); res != 0 {
		var n C.size_t
		C.ocannl_nvrtcGetProgramLogSize(a, prog, &n)
		log := C.malloc(n + 1)
		defer C.free(log)
		C.ocannl_nvrtcGetProgramLog(a, prog, (*C.char)(log))
		text := C.GoString((*C.char)(log))
		return fmt.Errorf("cuda: nvrtcCompileProgram: %s:\n%s%s", C.GoString(C.ocannl_nvrtcErrorString(a, res)), text, includeHint(text))
	}
	var n C.size_t
	if res := C.ocannl_nvrtcGetPTXSize(a, prog, &n); res != 0 {
		return fmt.Errorf("cuda: nvrtcGetPTXSize: %s", C.GoString(C.ocannl_nvrtcErrorString(a, res)))
	}
	ptx := C.malloc(n)
	defer C.free(ptx)
	if res := C.ocannl_nvrtcGetPTX(a, prog, (*C.char)(ptx)); res != 0 {
		return fmt.Errorf("cuda: nvrtcGetPTX: %s", C.GoString(C.ocannl_nvrtcErrorString(a, res)))
	}
	return r.d.cuErr("cuModuleLoadData", C.ocannl_cuModuleLoadData(a, &r.module, ptx))
}

func (r *driver) Alloc(bytes int) (Ptr, error) {
	var p C.CUdeviceptr
	if err := r.d.cuErr("cuMemAlloc", C.ocannl_cuMemAlloc(r.d.api, &p, C.size_t(bytes))); err != nil {
		return 0, err
	}
	return Ptr(p), nil
}

func (r *driver) Free(p Ptr) error {
	return r.d.cuErr("cuMemFree", C.ocannl_cuMemFree(r.d.api, C.CUdeviceptr(p)))
}

func (r *driver) Zero(p Ptr, bytes int) error {
	return r.d.cuErr("cuMemsetD8Async", C.ocannl_cuMemsetD8Async(r.d.api, C.CUdeviceptr(p), C.size_t(bytes), r.stream))
}

func (r *driver) Upload(dst Ptr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	return r.d.cuErr("cuMemcpyHtoDAsync", C.ocannl_upload(r.d.api, C.CUdeviceptr(dst), unsafe.Pointer(&src[0]), C.size_t(len(src)), r.stream))
}

func (r *driver) Download(dst []byte, src Ptr) error {
	if len(dst) == 0 {
		return nil
	}
	return r.d.cuErr("cuMemcpyDtoHAsync", C.ocannl_download(r.d.api, unsafe.Pointer(&dst[0]), C.CUdeviceptr(src), C.size_t(len(dst)), r.stream))
}

func (r *driver) function(name string) (C.CUfunction, error) {
	if f, ok := r.funcs[name]; ok {
		return f, nil
	}
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	var f C.CUfunction
	if err := r.d.cuErr("cuModuleGetFunction("+name+")", C.ocannl_cuModuleGetFunction(r.d.api, &f, r.module, cn)); err != nil {
		return nil, err
	}
	r.funcs[name] = f
	return f, nil
}

func (r *driver) Launch(fn string, grid [3]int, block int, _ bool, args []any) error {
	f, err := r.function(fn)
	if err != nil {
		return err
	}
	// Argument values and the pointer array live in C memory.
	vals := C.calloc(C.size_t(max(len(args), 1)), 8)
	defer C.free(vals)
	ptrs := (*unsafe.Pointer)(C.calloc(C.size_t(max(len(args), 1)), C.size_t(unsafe.Sizeof(vals))))
	defer C.free(unsafe.Pointer(ptrs))
	vs, ps := unsafe.Slice((*[8]byte)(vals), len(args)), unsafe.Slice(ptrs, len(args))
	for i, a := range args {
		cell := unsafe.Pointer(&vs[i])
		switch a := a.(type) {
		case Ptr:
			*(*uint64)(cell) = uint64(a)
		case float32:
			*(*float32)(cell) = a
		case float64:
			*(*float64)(cell) = a
		case int32:
			*(*int32)(cell) = a
		default:
			return fmt.Errorf("cuda: launch %s: argument %d of type %T", fn, i, a)
		}
		ps[i] = cell
	}
	res := C.ocannl_cuLaunchKernel(r.d.api, f, C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]), C.uint(block), r.stream, ptrs)
	return r.d.cuErr("cuLaunchKernel("+fn+")", res)
}

func (r *driver) Sync() error {
	return r.d.cuErr("cuStreamSynchronize", C.ocannl_cuStreamSynchronize(r.d.api, r.stream))
}

func (r *driver) Close() error {
	var err error
	if r.module != nil {
		err = r.d.cuErr("cuModuleUnload", C.ocannl_cuModuleUnload(r.d.api, r.module))
		r.module = nil
	}
	if r.stream != nil {
		if e := r.d.cuErr("cuStreamDestroy", C.ocannl_cuStreamDestroy(r.d.api, r.stream)); err == nil {
			err = e
		}
		r.stream = nil
	}
	return err
}
