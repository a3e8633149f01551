package rt

import "testing"

func TestUpperZero(t *testing.T) {
	for _, n := range []int{1, 2, 5, 128} {
		m := make([]float32, n*n)
		for i := range n {
			for j := 0; j <= i; j++ {
				m[i*n+j] = 1
			}
		}
		if !UpperZero(&m[0], n) {
			t.Fatalf("n=%d: a lower-triangular mask is not UpperZero", n)
		}
		if n > 1 {
			m[(n-2)*n+n-1] = -0.5 // one cell above the diagonal
			if UpperZero(&m[0], n) {
				t.Fatalf("n=%d: a cell above the diagonal went unnoticed", n)
			}
			m[(n-2)*n+n-1] = 0
			m[0] = 0 // on or below the diagonal: any value
			if !UpperZero(&m[0], n) {
				t.Fatalf("n=%d: a zero on the diagonal made it fail", n)
			}
		}
	}
}
