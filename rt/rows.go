package rt

import "fmt"

// RowsError is the error of an entry point with run-time rows (declared
// `<=Max` in the model) called with a number of rows outside 0..Max.
type RowsError struct {
	// Method is the entry point's method.
	Method string
	// N is the number of rows asked for; Max the entry's bound.
	N, Max int
}

// Error describes the bad row count.
func (e *RowsError) Error() string {
	return fmt.Sprintf("%s: %d rows asked for, but the entry takes 0 to %d", e.Method, e.N, e.Max)
}

// CheckRows returns nil when 0 <= n <= max, and a *RowsError otherwise.
// Generated entry points with run-time rows call it before reading or
// writing anything.
func CheckRows(method string, n, max int) error {
	if n < 0 || n > max {
		return &RowsError{Method: method, N: n, Max: max}
	}
	return nil
}
