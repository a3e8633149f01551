package rt

import (
	"errors"
	"slices"
	"testing"
)

func TestCheckRows(t *testing.T) {
	for _, c := range []struct {
		n, lo int
		ok    bool
	}{{0, 0, true}, {1, 0, true}, {8, 0, true}, {9, 0, false}, {-1, 0, false}, {0, 1, false}, {1, 1, true}} {
		err := CheckRows("Predict", c.n, c.lo, 8)
		if (err == nil) != c.ok {
			t.Errorf("n=%d lo=%d: error %v, want ok=%v", c.n, c.lo, err, c.ok)
		}
		var re *RowsError
		if !c.ok && (!errors.As(err, &re) || re.N != c.n || re.Min != c.lo || re.Max != 8 || re.Method != "Predict") {
			t.Errorf("n=%d: error %#v, want a *RowsError", c.n, err)
		}
	}
	if got, want := CheckRows("Predict", 9, 0, 8).Error(), "Predict: 9 rows asked for, but the entry takes 0 to 8"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

func TestAddToScale(t *testing.T) {
	d := []float32{1, 2, 3}
	AddTo(d, []float32{0.5, -2, 4})
	Scale(d, 2)
	if want := []float32{3, 0, 14}; !slices.Equal(d, want) {
		t.Errorf("got %v, want %v", d, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("AddTo with different lengths did not panic")
		}
	}()
	AddTo(d, []float32{1})
}

func TestAddScaled(t *testing.T) {
	d := []float64{1, 2, 3}
	AddScaled(d, []float64{0.5, -2, 4}, 0.25)
	if want := []float64{1.125, 1.5, 4}; !slices.Equal(d, want) {
		t.Errorf("got %v, want %v", d, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("AddScaled with different lengths did not panic")
		}
	}()
	AddScaled(d, []float64{1}, 1)
}
