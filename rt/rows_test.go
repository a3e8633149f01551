package rt

import (
	"errors"
	"testing"
)

func TestCheckRows(t *testing.T) {
	for _, c := range []struct {
		n  int
		ok bool
	}{{0, true}, {1, true}, {8, true}, {9, false}, {-1, false}} {
		err := CheckRows("Predict", c.n, 8)
		if (err == nil) != c.ok {
			t.Errorf("n=%d: error %v, want ok=%v", c.n, err, c.ok)
		}
		var re *RowsError
		if !c.ok && (!errors.As(err, &re) || re.N != c.n || re.Max != 8 || re.Method != "Predict") {
			t.Errorf("n=%d: error %#v, want a *RowsError", c.n, err)
		}
	}
	if got, want := CheckRows("Predict", 9, 8).Error(), "Predict: 9 rows asked for, but the entry takes 0 to 8"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}
