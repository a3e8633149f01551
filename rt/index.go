package rt

import (
	"fmt"
	"strconv"
	"strings"
)

// IndexError is the error of an entry point called with an index input
// (declared `BATCH | index N` in the model) holding a value outside
// [0, N). The generated method checks every cell it would read before it
// runs anything, so nothing was written when it returns one.
type IndexError struct {
	// Input is the index input's name.
	Input string
	// Pos is the cell's position (one index per axis of the input).
	Pos []int
	// Value is the cell's value and Bound the input's N.
	Value int32
	Bound int
}

// Error describes the bad position.
func (e *IndexError) Error() string {
	p := make([]string, len(e.Pos))
	for i, x := range e.Pos {
		p[i] = strconv.Itoa(x)
	}
	return fmt.Sprintf("index input %s[%s] = %d is out of range: an index input holds positions 0 to %d", e.Input, strings.Join(p, "]["), e.Value, e.Bound-1)
}

// NewIndexError returns an *IndexError for cell pos of input (value v,
// bound n). Generated entry points call it on their error path only.
func NewIndexError(input string, v int32, n int, pos ...int) error {
	return &IndexError{Input: input, Pos: pos, Value: v, Bound: n}
}
