package browser

import (
	"fmt"
	"image"
	"image/color"
)

// ColorStats summarizes a screenshot's colours.
type ColorStats struct {
	// Pixels is the number of pixels.
	Pixels int
	// Distinct is the number of distinct colours.
	Distinct int
	// Background is the most frequent colour.
	Background color.RGBA64
	// Other is the number of pixels not of the background colour.
	Other int
}

// OtherFraction is the fraction of the pixels not of the background colour.
func (s ColorStats) OtherFraction() float64 {
	if s.Pixels == 0 {
		return 0
	}
	return float64(s.Other) / float64(s.Pixels)
}

// String formats s for a test's log.
func (s ColorStats) String() string {
	return fmt.Sprintf("%d pixels, %d distinct colours, background %v, %d pixels (%.4f%%) of other colours",
		s.Pixels, s.Distinct, s.Background, s.Other, 100*s.OtherFraction())
}

// Stats counts img's colours.
func Stats(img image.Image) ColorStats {
	counts := map[uint64]int{}
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, ca := img.At(x, y).RGBA()
			counts[uint64(cr)<<48|uint64(cg)<<32|uint64(cb)<<16|uint64(ca)]++
		}
	}
	s := ColorStats{Pixels: r.Dx() * r.Dy(), Distinct: len(counts)}
	var bg uint64
	most := -1
	for c, n := range counts {
		if n > most || n == most && c < bg {
			bg, most = c, n
		}
	}
	if most >= 0 {
		s.Background = color.RGBA64{R: uint16(bg >> 48), G: uint16(bg >> 32), B: uint16(bg >> 16), A: uint16(bg)}
		s.Other = s.Pixels - most
	}
	return s
}

// BlankFraction is the largest fraction of pixels not of the background
// colour that [Blank] still calls blank: about 79 pixels of a 1024 by 768
// screenshot, less than one short word of text.
const BlankFraction = 1e-4

// Blank reports whether img is (nearly) one colour: at most
// [BlankFraction] of its pixels differ from the most frequent colour.
func Blank(img image.Image) bool {
	return Stats(img).OtherFraction() <= BlankFraction
}
