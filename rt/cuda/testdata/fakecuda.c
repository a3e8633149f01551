// fakecuda.c: a stand-in for libcuda.so.1 and libnvrtc.so, for the cgo
// shim's test (shim_test.go, build tag cuda) on machines without CUDA.
// Device memory is host memory; NVRTC "compiles" to a fixed PTX text; a
// source containing "#error" fails to compile; every launch fails with
// CUDA_ERROR_ILLEGAL_ADDRESS (700), so the test sees an error name the
// shim must report with the call, unless OCANNL_EMU links in emulated
// kernels that the launches then run.
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
static const char ptx[] = "FAKE PTX";

// The handles (context, stream, module, function) are the addresses of
// these objects, never small integers: the shim keeps them in Go
// variables of C pointer types, and the Go runtime throws ("invalid
// pointer found on stack") when it copies a goroutine's stack holding a
// pointer below 4096.
static char fake_ctx, fake_stream, fake_module, fake_function;

CUresult cuInit(unsigned f) { return 0; }
CUresult cuDeviceGet(int* d, int i) { *d = i; return 0; }
CUresult cuDeviceGetAttribute(int* v, int attr, int d) { *v = attr == 75 ? 9 : 0; return 0; }
CUresult cuDevicePrimaryCtxRetain(void** c, int d) { *c = &fake_ctx; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) { return 0; }
CUresult cuCtxSetCurrent(void* c) { return c == &fake_ctx ? 0 : 201; }
CUresult cuStreamCreate(void** s, unsigned f) { *s = &fake_stream; return 0; }
CUresult cuStreamDestroy_v2(void* s) { return 0; }
CUresult cuStreamSynchronize(void* s) { return 0; }
// cuStreamQuery (loaded by the NCCL shim): CUDA_ERROR_NOT_READY (600)
// while OCANNL_FAKE_BUSY is set, a stream that never finishes.
CUresult cuStreamQuery(void* s) { const char* b = getenv("OCANNL_FAKE_BUSY"); return b && *b ? 600 : 0; }
CUresult cuModuleLoadData(void** m, const void* img) {
  if (strcmp((const char*)img, ptx) != 0) return 200;
  *m = &fake_module;
  return 0;
}
CUresult cuModuleUnload(void* m) { return 0; }
#ifdef OCANNL_EMU
// With OCANNL_EMU the launches run: the emulated kernels of a generated
// file are linked in (emit/cuda's shim test), found by name.
int ocannl_emu_launch(const char* fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, void** params);
CUresult cuModuleGetFunction(void** f, void* m, const char* name) { *f = strdup(name); return 0; }
#else
CUresult cuModuleGetFunction(void** f, void* m, const char* name) { *f = &fake_function; return 0; }
#endif
CUresult cuMemAlloc_v2(unsigned long long* p, size_t n) { *p = (unsigned long long)malloc(n); return 0; }
CUresult cuMemFree_v2(unsigned long long p) { free((void*)p); return 0; }
CUresult cuMemsetD8Async(unsigned long long p, unsigned char v, size_t n, void* s) { memset((void*)p, v, n); return 0; }
CUresult cuMemcpyHtoDAsync_v2(unsigned long long d, const void* s, size_t n, void* st) { memcpy((void*)d, s, n); return 0; }
CUresult cuMemcpyDtoHAsync_v2(void* d, unsigned long long s, size_t n, void* st) { memcpy(d, (void*)s, n); return 0; }
CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shm, void* s, void** params, void** extra) {
#ifdef OCANNL_EMU
  return ocannl_emu_launch((const char*)f, gx, gy, gz, bx, params);
#else
  return 700;
#endif
}
CUresult cuGetErrorName(CUresult r, const char** s) {
  *s = r == 700 ? "CUDA_ERROR_ILLEGAL_ADDRESS" : r == 200 ? "CUDA_ERROR_INVALID_IMAGE" : "CUDA_ERROR_UNKNOWN";
  return 0;
}

typedef struct { char* src; } prog;
int nvrtcCreateProgram(void** p, const char* src, const char* name, int n, const char* const* h, const char* const* i) {
  prog* q = malloc(sizeof *q);
  q->src = strdup(src);
  *p = q;
  return 0;
}
int nvrtcCompileProgram(void* p, int n, const char* const* opts) {
  int arch = 0;
  for (int i = 0; i < n; i++) arch |= strcmp(opts[i], "--gpu-architecture=compute_90") == 0;
  if (!arch) return 7;
  return strstr(((prog*)p)->src, "#error") ? 6 : 0;
}
int nvrtcGetPTXSize(void* p, size_t* n) { *n = sizeof ptx; return 0; }
int nvrtcGetPTX(void* p, char* out) { memcpy(out, ptx, sizeof ptx); return 0; }
static const char log_text[] = "fake.cu(1): error: #error directive";
int nvrtcGetProgramLogSize(void* p, size_t* n) { *n = sizeof log_text; return 0; }
int nvrtcGetProgramLog(void* p, char* out) { memcpy(out, log_text, sizeof log_text); return 0; }
int nvrtcDestroyProgram(void** p) { prog* q = *p; free(q->src); free(q); *p = 0; return 0; }
const char* nvrtcGetErrorString(int r) { return r == 6 ? "NVRTC_ERROR_COMPILATION" : "NVRTC_ERROR_INVALID_OPTION"; }
