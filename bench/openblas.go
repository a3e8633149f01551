package main

/*
#cgo CFLAGS: -I/usr/include/x86_64-linux-gnu/openblas-pthread
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
*/
import "C"

import "unsafe"

// blasInit pins OpenBLAS to one thread and returns the core type its
// kernels were chosen for.
func blasInit() string {
	C.openblas_set_num_threads(1)
	return C.GoString(C.openblas_get_corename())
}

// sgemm is C = A*B (row-major; transB: B is stored n x k).
func sgemm(m, n, k int, a []float32, lda int, b []float32, ldb int, transB bool, c []float32, ldc int) {
	tb := uint32(C.CblasNoTrans)
	if transB {
		tb = C.CblasTrans
	}
	C.cblas_sgemm(C.CblasRowMajor, C.CblasNoTrans, tb, C.blasint(m), C.blasint(n), C.blasint(k), 1,
		(*C.float)(unsafe.Pointer(&a[0])), C.blasint(lda), (*C.float)(unsafe.Pointer(&b[0])), C.blasint(ldb), 0,
		(*C.float)(unsafe.Pointer(&c[0])), C.blasint(ldc))
}

// sgemmT is C = op(A)*op(B), row-major, op transposing when asked
// (transA: A is stored k x m; transB: B is stored n x k).
func sgemmT(m, n, k int, a []float32, lda int, transA bool, b []float32, ldb int, transB bool, c []float32, ldc int) {
	ta, tb := uint32(C.CblasNoTrans), uint32(C.CblasNoTrans)
	if transA {
		ta = C.CblasTrans
	}
	if transB {
		tb = C.CblasTrans
	}
	C.cblas_sgemm(C.CblasRowMajor, ta, tb, C.blasint(m), C.blasint(n), C.blasint(k), 1,
		(*C.float)(unsafe.Pointer(&a[0])), C.blasint(lda), (*C.float)(unsafe.Pointer(&b[0])), C.blasint(ldb), 0,
		(*C.float)(unsafe.Pointer(&c[0])), C.blasint(ldc))
}

// blasThreads sets the number of threads OpenBLAS uses.
func blasThreads(n int) { C.openblas_set_num_threads(C.int(n)) }
