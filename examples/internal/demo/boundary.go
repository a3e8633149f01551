package demo

// Decision-boundary pictures for a 2-D binary classifier: Grid gives the
// points at which to evaluate the classifier, Terminal and PNG draw the
// resulting scores with the data points on top.

import (
	"bufio"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
)

// Grid returns the w*h sample points of a regular grid over
// [xmin, xmax] x [ymin, ymax], row by row from the top (y = ymax) to the
// bottom (y = ymin), each row from left (x = xmin) to right (x = xmax).
// Point (row r, column c) is at index r*w+c. A dimension of size 1 is
// sampled at its centre.
func Grid(xmin, xmax, ymin, ymax float64, w, h int) [][2]float32 {
	pts := make([][2]float32, 0, w*h)
	for r := range h {
		y := ymax - frac(r, h)*(ymax-ymin)
		for c := range w {
			x := xmin + frac(c, w)*(xmax-xmin)
			pts = append(pts, [2]float32{float32(x), float32(y)})
		}
	}
	return pts
}

// frac is the relative position of sample i of n along an axis.
func frac(i, n int) float64 {
	if n <= 1 {
		return 0.5
	}
	return float64(i) / float64(n-1)
}

// cellOf maps a data point to the grid cell (row, column) whose sample
// point is nearest, reporting false if it lies outside the grid.
func cellOf(p [2]float32, w, h int, xmin, xmax, ymin, ymax float64) (r, c int, ok bool) {
	fx := (float64(p[0]) - xmin) / (xmax - xmin)
	fy := (ymax - float64(p[1])) / (ymax - ymin)
	c = int(math.Round(fx * float64(w-1)))
	r = int(math.Round(fy * float64(h-1)))
	if math.IsNaN(fx) || math.IsNaN(fy) || c < 0 || c >= w || r < 0 || r >= h {
		return 0, 0, false
	}
	return r, c, true
}

// checkGrid panics unless scores holds one score per grid cell.
func checkGrid(fn string, scores []float32, w, h int) {
	if w <= 0 || h <= 0 || len(scores) != w*h {
		panic(fmt.Sprintf("demo.%s: %d scores for a %dx%d grid", fn, len(scores), w, h))
	}
}

// Terminal draws a decision boundary as h lines of w characters: each
// cell shows the classifier's score at the matching Grid point, '░'
// where the score is positive (class +1) and ' ' elsewhere; data points
// inside the bounds are drawn over it as 'o' (label +1) and 'x'
// (label -1). scores must be in Grid order; points and labels are
// parallel slices.
func Terminal(out io.Writer, scores []float32, w, h int, points [][2]float32, labels []float32, xmin, xmax, ymin, ymax float64) error {
	checkGrid("Terminal", scores, w, h)
	cells := make([]rune, w*h)
	for i, s := range scores {
		cells[i] = ' '
		if s > 0 {
			cells[i] = '░'
		}
	}
	for i, p := range points {
		if r, c, ok := cellOf(p, w, h, xmin, xmax, ymin, ymax); ok {
			cells[r*w+c] = 'x'
			if labels[i] > 0 {
				cells[r*w+c] = 'o'
			}
		}
	}
	bw := bufio.NewWriter(out)
	for r := range h {
		bw.WriteString(string(cells[r*w : (r+1)*w]))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// Colours of the PNG picture.
var (
	bgPos      = color.NRGBA{0xc6, 0xdb, 0xef, 0xff} // soft blue: score > 0
	bgNeg      = color.NRGBA{0xfd, 0xd0, 0xa2, 0xff} // soft orange: score <= 0
	contour    = color.NRGBA{0x40, 0x40, 0x40, 0xff}
	dotPos     = color.NRGBA{0x08, 0x30, 0x8c, 0xff} // dark blue: label +1
	dotNeg     = color.NRGBA{0xa6, 0x36, 0x03, 0xff} // dark orange: label -1
	dotOutline = color.NRGBA{0xff, 0xff, 0xff, 0xff}
)

// PNGScale is the side length, in pixels, of one grid cell in the
// pictures written by PNG.
const PNGScale = 4

// PNG writes a decision-boundary picture to the file path as a PNG of
// w*PNGScale by h*PNGScale pixels: every grid cell is a PNGScale-pixel
// square in soft blue (score > 0) or soft orange, with a dark contour
// where the sign of the score changes between neighbouring cells, and
// each data point inside the bounds is a small dot (dark blue for label
// +1, dark orange for -1, outlined in white). The arguments mean the
// same as for Terminal.
func PNG(path string, scores []float32, w, h int, points [][2]float32, labels []float32, xmin, xmax, ymin, ymax float64) error {
	checkGrid("PNG", scores, w, h)
	img := image.NewNRGBA(image.Rect(0, 0, w*PNGScale, h*PNGScale))
	pos := func(r, c int) bool { return scores[r*w+c] > 0 }
	for r := range h {
		for c := range w {
			p := pos(r, c)
			bg := bgNeg
			if p {
				bg = bgPos
			}
			// Which sides of the cell border a cell of the other sign.
			left := c > 0 && pos(r, c-1) != p
			right := c < w-1 && pos(r, c+1) != p
			up := r > 0 && pos(r-1, c) != p
			down := r < h-1 && pos(r+1, c) != p
			for dy := range PNGScale {
				for dx := range PNGScale {
					col := bg
					if (left && dx == 0) || (right && dx == PNGScale-1) ||
						(up && dy == 0) || (down && dy == PNGScale-1) {
						col = contour
					}
					img.SetNRGBA(c*PNGScale+dx, r*PNGScale+dy, col)
				}
			}
		}
	}
	// Data points: a disc of radius 2 in the label colour with a white
	// ring out to radius 3, centred where the point falls between cell
	// centres. All rings are drawn before all discs so that no ring
	// hides a neighbouring dot.
	for pass := range 2 {
		for i, p := range points {
			fx := (float64(p[0]) - xmin) / (xmax - xmin)
			fy := (ymax - float64(p[1])) / (ymax - ymin)
			if !(fx >= 0 && fx <= 1 && fy >= 0 && fy <= 1) {
				continue
			}
			cx := fx*float64(w-1)*PNGScale + PNGScale/2
			cy := fy*float64(h-1)*PNGScale + PNGScale/2
			col, radius := dotOutline, 3.0
			if pass == 1 {
				col, radius = dotNeg, 2.0
				if labels[i] > 0 {
					col = dotPos
				}
			}
			for y := int(cy) - 3; y <= int(cy)+3; y++ {
				for x := int(cx) - 3; x <= int(cx)+3; x++ {
					if math.Hypot(float64(x)+0.5-cx, float64(y)+0.5-cy) <= radius {
						img.SetNRGBA(x, y, col)
					}
				}
			}
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
