package inference

import (
	"fmt"

	"github.com/ocannlgen/ocannlgen/spec/program"
)

// MaxElems bounds the number of cells of any tensor: 2^47, so that a
// float64 array of every tensor fits the Go compiler's 2^50-byte limit
// on 64-bit targets. A larger (declared or inferred) tensor is a KindSize
// error instead of an element count that wraps around.
const MaxElems int64 = 1 << 47

// MaxAxes bounds the number of axes of a tensor (all rows together); it
// is also the solver's backstop against rows that grow without end.
const MaxAxes = maxAxes

// checkDeclSize rejects a declared shape with more than MaxAxes axes or
// more than MaxElems cells, at the first axis past the limit.
func checkDeclSize(name string, sd *program.ShapeDecl) error {
	axes, n := 0, int64(1)
	for _, rd := range []*program.RowDecl{sd.Batch, sd.Input, sd.Output} {
		if rd == nil {
			continue
		}
		for _, d := range rd.Dims {
			axes++
			if axes > MaxAxes {
				return errAt(KindSize, d.Pos, "the shape of %s has more than %d axes", name, MaxAxes)
			}
			if d.Size > 0 && n > MaxElems/int64(d.Size) {
				return errAt(KindSize, d.Pos, "the shape of %s has more than 2^47 cells (at most %d)", name, MaxElems)
			}
			n *= int64(max(d.Size, 1))
		}
	}
	return nil
}

// checkSize rejects an inferred shape with more than MaxElems cells.
func checkSize(t *Tensor) error {
	n := int64(1)
	for _, ds := range [][]Dim{t.Shape.Batch, t.Shape.Output, t.Shape.Input} {
		for _, d := range ds {
			if d.Size > 0 && n > MaxElems/int64(d.Size) {
				return errAt(KindSize, t.Pos, "%s has shape %s, more than 2^47 cells (at most %d)", t.Name, shapeText(t), MaxElems)
			}
			n *= int64(max(d.Size, 1))
		}
	}
	return nil
}

// shapeText prints a shape, eliding the dims of very long rows.
func shapeText(t *Tensor) string {
	if len(t.Shape.Batch)+len(t.Shape.Input)+len(t.Shape.Output) > 16 {
		return fmt.Sprintf("(%d axes)", len(t.Shape.Batch)+len(t.Shape.Input)+len(t.Shape.Output))
	}
	return t.Shape.String()
}
