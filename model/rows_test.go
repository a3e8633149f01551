package model

import (
	"slices"
	"testing"
)

func TestRowBlocks(t *testing.T) {
	for _, c := range []struct {
		n    int
		want []int
	}{
		{1, nil}, {2, []int{2}}, {3, []int{3}}, {4, []int{4, 2}}, {8, []int{8, 4, 2}},
		{6, []int{6, 3}}, {100, []int{100, 50, 25, 12, 6, 3}},
		{256, []int{256, 128, 64, 32, 16, 8}}, // MaxRowBlocks of them
	} {
		if got := RowBlocks(c.n); !slices.Equal(got, c.want) {
			t.Errorf("RowBlocks(%d) = %v, want %v", c.n, got, c.want)
		}
	}
}
