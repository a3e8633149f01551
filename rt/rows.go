package rt

import "fmt"

// RowsError is the error of an entry point with run-time rows (declared
// `<=Max` in the model) called with a number of rows outside Min..Max (Min
// is 0 for a predictor, 1 for a loss, whose mean over no rows is
// undefined).
type RowsError struct {
	// Method is the entry point's method.
	Method string
	// N is the number of rows asked for; Min and Max the entry's range.
	N, Min, Max int
}

// Error describes the bad row count.
func (e *RowsError) Error() string {
	return fmt.Sprintf("%s: %d rows asked for, but the entry takes %d to %d", e.Method, e.N, e.Min, e.Max)
}

// CheckRows returns nil when lo <= n <= hi, and a *RowsError otherwise.
// Generated entry points with run-time rows call it before reading or
// writing anything.
func CheckRows(method string, n, lo, hi int) error {
	if n < lo || n > hi {
		return &RowsError{Method: method, N: n, Min: lo, Max: hi}
	}
	return nil
}

// AddTo adds src to dst cell by cell (the gradients of a loss with
// run-time rows accumulate row by row). The lengths must agree.
func AddTo[T Float](dst, src []T) {
	if len(dst) != len(src) {
		panic("rt: AddTo: lengths differ")
	}
	for i, v := range src {
		dst[i] += v
	}
}

// AddScaled adds s times src to dst cell by cell (in T arithmetic: the
// gradients of a block of rows of a mean loss, weighted by its share of
// the rows). The lengths must agree.
func AddScaled[T Float](dst, src []T, s T) {
	if len(dst) != len(src) {
		panic("rt: AddScaled: lengths differ")
	}
	for i, v := range src {
		dst[i] += s * v
	}
}
