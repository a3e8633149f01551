package cuda

import (
	"strings"
	"testing"
)

// TestIndexParams checks the plan's index inputs (`index=N` after an
// input's dims) and the session's check of their positions: an []int32
// in [0, N) passes; a position out of range, a float slice for an index
// input and an []int32 for a float input are errors naming the input.
func TestIndexParams(t *testing.T) {
	k := &KernelPlan{Name: "k", Bufs: []int{6, 6}}
	if err := parseParam(k, strings.Fields("param 0 ids in dims=2,3 buf=2,3 left=0,0 index=5")); err != nil {
		t.Fatal(err)
	}
	if err := parseParam(k, strings.Fields("param 1 x in dims=6 buf=6 left=0")); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"index=0", "index=x", "bound=3"} {
		if err := parseParam(&KernelPlan{Bufs: []int{6}}, strings.Fields("param 0 ids in dims=6 buf=6 left=0 "+bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	ids, x := &k.Params[0], &k.Params[1]
	if ids.Index != 5 || x.Index != 0 {
		t.Fatalf("index bounds %d and %d, want 5 and 0", ids.Index, x.Index)
	}
	if err := checkIndex("k", ids, []int32{0, 1, 2, 3, 4, 4}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		p    *ParamPlan
		v    any
		want string
	}{
		{ids, []int32{0, 1, 5, 0, 0, 0}, "cell 2 is 5, out of range"},
		{ids, []int32{0, -1, 0, 0, 0, 0}, "cell 1 is -1"},
		{ids, []float32{0, 1, 2, 3, 4, 4}, "give its positions as an []int32"},
		{x, []int32{0, 1, 2, 3, 4, 4}, "x is a float input"},
	} {
		if err := checkIndex("k", c.p, c.v); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one containing %q", c.v, err, c.want)
		}
	}
}
