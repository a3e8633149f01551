package demo

import (
	"bytes"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMoonsDeterministic(t *testing.T) {
	p1, l1 := Moons(200, 7, 0.1)
	p2, l2 := Moons(200, 7, 0.1)
	if !reflect.DeepEqual(p1, p2) || !reflect.DeepEqual(l1, l2) {
		t.Fatal("same seed gave different data")
	}
	p3, _ := Moons(200, 8, 0.1)
	if reflect.DeepEqual(p1, p3) {
		t.Fatal("different seeds gave the same points")
	}
}

func TestMoonsLabelsAndBounds(t *testing.T) {
	for _, n := range []int{0, 1, 101, 1000} {
		pts, lbl := Moons(n, 1, 0.1)
		if len(pts) != n || len(lbl) != n {
			t.Fatalf("n=%d: got %d points, %d labels", n, len(pts), len(lbl))
		}
		pos := 0
		for _, l := range lbl {
			switch l {
			case 1:
				pos++
			case -1:
			default:
				t.Fatalf("label %v not ±1", l)
			}
		}
		if pos != (n+1)/2 {
			t.Errorf("n=%d: %d positive labels, want %d", n, pos, (n+1)/2)
		}
		// 0.1 noise: 6 standard deviations beyond the noiseless bounds.
		for _, p := range pts {
			if p[0] < -1.6 || p[0] > 2.6 || p[1] < -1.1 || p[1] > 1.6 {
				t.Errorf("point %v out of bounds", p)
			}
		}
	}
	// Without noise every point lies exactly on its moon.
	pts, lbl := Moons(500, 3, 0)
	for i, p := range pts {
		x, y := float64(p[0]), float64(p[1])
		if lbl[i] < 0 {
			x, y = 1-x, 0.5-y
		}
		// Both moons map to the upper unit half circle (cos t, sin t).
		if math.Abs(math.Hypot(x, y)-1) > 1e-5 || y < -1e-6 {
			t.Errorf("point %v (label %v) is not on its moon", p, lbl[i])
		}
	}
	// The order is shuffled: the labels are not sorted.
	if lbl[0] == lbl[1] && lbl[1] == lbl[2] && lbl[2] == lbl[3] && lbl[3] == lbl[4] && lbl[4] == lbl[5] {
		t.Errorf("labels look unshuffled: %v", lbl[:6])
	}
}

func TestGlyphs(t *testing.T) {
	const n = 400
	imgs, cls := Glyphs(n, 11)
	imgs2, cls2 := Glyphs(n, 11)
	if !reflect.DeepEqual(imgs, imgs2) || !reflect.DeepEqual(cls, cls2) {
		t.Fatal("same seed gave different glyphs")
	}
	imgs3, _ := Glyphs(n, 12)
	if reflect.DeepEqual(imgs, imgs3) {
		t.Fatal("different seeds gave the same glyphs")
	}
	var count [4]int
	var mean [4][GlyphSize * GlyphSize]float64
	for i, img := range imgs {
		c := cls[i]
		if c < 0 || c >= 4 {
			t.Fatalf("class %d", c)
		}
		count[c]++
		bright := 0
		for y := range GlyphSize {
			for x := range GlyphSize {
				v := img[y][x]
				if v < 0 || v > 1 || v != v {
					t.Fatalf("pixel %v outside [0,1]", v)
				}
				if v > 0.5 {
					bright++
				}
				mean[c][y*GlyphSize+x] += float64(v)
			}
		}
		if bright < 9 { // the smallest glyph has 9 stroke pixels
			t.Errorf("glyph %d (class %d) has only %d bright pixels", i, c, bright)
		}
	}
	for c := range count {
		if count[c] != n/4 {
			t.Errorf("class %d has %d samples, want %d", c, count[c], n/4)
		}
		for k := range mean[c] {
			mean[c][k] /= float64(count[c])
		}
	}
	if GlyphNames[0] == "" || GlyphNames[3] == "" {
		t.Error("GlyphNames incomplete")
	}
	// Different classes look different: their mean images are apart.
	for a := range 4 {
		for b := a + 1; b < 4; b++ {
			d := 0.0
			for k := range mean[a] {
				d += (mean[a][k] - mean[b][k]) * (mean[a][k] - mean[b][k])
			}
			if d < 0.05 {
				t.Errorf("classes %d and %d have near-equal means (dist² %.3f)", a, b, d)
			}
		}
	}
	// A nearest-class-mean classifier on raw pixels (trained on the
	// first set, tested on the second) beats chance but is not perfect:
	// the task needs more than a template.
	test, tcls := Glyphs(n, 13)
	correct := 0
	for i, img := range test {
		best, bestD := -1, math.Inf(1)
		for c := range 4 {
			d := 0.0
			for y := range GlyphSize {
				for x := range GlyphSize {
					e := float64(img[y][x]) - mean[c][y*GlyphSize+x]
					d += e * e
				}
			}
			if d < bestD {
				best, bestD = c, d
			}
		}
		if best == tcls[i] {
			correct++
		}
	}
	acc := float64(correct) / n
	t.Logf("nearest-class-mean accuracy: %.3f", acc)
	if acc <= 0.3 || acc >= 1 {
		t.Errorf("nearest-class-mean accuracy %.3f, want in (0.3, 1)", acc)
	}
}

func TestReverseTask(t *testing.T) {
	in, out := ReverseTask(50, 7, 5, 3)
	in2, _ := ReverseTask(50, 7, 5, 3)
	if !reflect.DeepEqual(in, in2) {
		t.Fatal("not deterministic")
	}
	if len(in) != 50 || len(out) != 50 {
		t.Fatalf("got %d inputs, %d targets", len(in), len(out))
	}
	seen := map[int]bool{}
	for i := range in {
		if len(in[i]) != 7 || len(out[i]) != 7 {
			t.Fatalf("sequence %d has lengths %d, %d", i, len(in[i]), len(out[i]))
		}
		for k := range in[i] {
			if tok := in[i][k]; tok < 0 || tok >= 5 {
				t.Fatalf("token %d out of range", tok)
			}
			seen[in[i][k]] = true
			if out[i][k] != in[i][6-k] {
				t.Fatalf("target %v is not the reversal of %v", out[i], in[i])
			}
		}
	}
	if len(seen) != 5 {
		t.Errorf("only tokens %v used", seen)
	}
}

func TestOneHot(t *testing.T) {
	dst := []float32{9, 9, 9, 9, 9, 9, 9, 9, 9, 9}
	OneHot(dst, []int{2, 0, 1}, 3)
	want := []float32{0, 0, 1, 1, 0, 0, 0, 1, 0, 9}
	if !reflect.DeepEqual(dst, want) {
		t.Errorf("got %v, want %v", dst, want)
	}
	for _, bad := range []func(){
		func() { OneHot(make([]float32, 5), []int{0, 1}, 3) },
		func() { OneHot(make([]float32, 6), []int{0, 3}, 3) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic on bad input")
				}
			}()
			bad()
		}()
	}
}

func TestAccuracyArgMax(t *testing.T) {
	if a := Accuracy([]float32{0.5, -2, 0, 3}, []float32{1, -1, 1, -1}); a != 0.5 {
		t.Errorf("Accuracy = %v, want 0.5", a)
	}
	if a := Accuracy(nil, nil); a != 0 {
		t.Errorf("Accuracy(empty) = %v", a)
	}
	nan := float32(math.NaN())
	for _, c := range []struct {
		row  []float32
		want int
	}{
		{nil, -1},
		{[]float32{1}, 0},
		{[]float32{1, 3, 2, 3}, 1},
		{[]float32{-5, -1, -3}, 1},
		{[]float32{nan, -1, 2}, 2},
		{[]float32{nan}, 0},
	} {
		if got := ArgMax(c.row); got != c.want {
			t.Errorf("ArgMax(%v) = %d, want %d", c.row, got, c.want)
		}
	}
}

func TestGrid(t *testing.T) {
	g := Grid(-1, 2, -0.5, 1, 4, 3)
	if len(g) != 12 {
		t.Fatalf("len = %d", len(g))
	}
	if g[0] != [2]float32{-1, 1} || g[3] != [2]float32{2, 1} || g[11] != [2]float32{2, -0.5} || g[4] != [2]float32{-1, 0.25} {
		t.Errorf("grid corners wrong: %v", g)
	}
}

// boundaryCase is a small classifier picture: score = y - x (positive
// above the diagonal) with two data points.
func boundaryCase() (scores []float32, w, h int, pts [][2]float32, lbl []float32) {
	w, h = 30, 10
	for _, p := range Grid(-1, 1, -1, 1, w, h) {
		scores = append(scores, p[1]-p[0])
	}
	pts = [][2]float32{{-1, 1}, {1, -1}, {5, 5}}
	lbl = []float32{1, -1, 1}
	return scores, w, h, pts, lbl
}

func TestTerminal(t *testing.T) {
	scores, w, h, pts, lbl := boundaryCase()
	var buf bytes.Buffer
	if err := Terminal(&buf, scores, w, h, pts, lbl, -1, 1, -1, 1); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != h {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), h, buf.String())
	}
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n != w {
			t.Errorf("line %d has %d runes, want %d: %q", i, n, w, l)
		}
	}
	if !strings.HasPrefix(lines[0], "o░") || !strings.HasSuffix(lines[h-1], " x") {
		t.Errorf("unexpected picture:\n%s", buf.String())
	}
}

func TestPNG(t *testing.T) {
	scores, w, h, pts, lbl := boundaryCase()
	path := filepath.Join(t.TempDir(), "b.png")
	if err := PNG(path, scores, w, h, pts, lbl, -1, 1, -1, 1); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	if b.Dx() != w*PNGScale || b.Dy() != h*PNGScale {
		t.Fatalf("image is %dx%d, want %dx%d", b.Dx(), b.Dy(), w*PNGScale, h*PNGScale)
	}
	// Cell (0, 5) is in the positive region, cell (9, 24) in the
	// negative one, and the top-left data point is drawn in the +1 dot
	// colour, the bottom-right one in the -1 colour.
	same := func(x, y int, c interface{ RGBA() (r, g, b, a uint32) }) bool {
		r1, g1, b1, _ := img.At(x, y).RGBA()
		r2, g2, b2, _ := c.RGBA()
		return r1 == r2 && g1 == g2 && b1 == b2
	}
	if !same(5*PNGScale+1, 1, bgPos) || !same(24*PNGScale+1, 9*PNGScale+1, bgNeg) {
		t.Error("background colours wrong")
	}
	if !same(PNGScale/2, PNGScale/2, dotPos) || !same(b.Dx()-PNGScale/2, b.Dy()-PNGScale/2, dotNeg) {
		t.Error("data points not drawn")
	}
	contours := 0
	for y := range b.Dy() {
		for x := range b.Dx() {
			if same(x, y, contour) {
				contours++
			}
		}
	}
	if contours == 0 {
		t.Error("no contour drawn")
	}
}

func TestProgress(t *testing.T) {
	var buf bytes.Buffer
	p := NewProgress(&buf, 1000, "train")
	for step := 1; step <= 1000; step++ {
		p.Update(step, 1/float64(step))
	}
	p.Done()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 20 {
		t.Errorf("%d updates drawn, want 20:\n%s", len(lines), buf.String())
	}
	// Each line shows the mean loss of the 50 steps since the previous one.
	mean := func(from, to int) float64 {
		s := 0.0
		for k := from; k <= to; k++ {
			s += 1 / float64(k)
		}
		return s / float64(to-from+1)
	}
	if want := fmt.Sprintf("train [#########...........]  45%%  step 450/1000  loss %.4f (mean of 50 steps)", mean(401, 450)); lines[8] != want {
		t.Errorf("line 9 = %q, want %q", lines[8], want)
	}
	if want := "train [####################] 100%  step 1000/1000  loss 0.0010 (mean of 50 steps)"; lines[len(lines)-1] != want {
		t.Errorf("final line = %q, want %q", lines[len(lines)-1], want)
	}
	// A total that is not a multiple of 20 still ends on its last step.
	buf.Reset()
	p = NewProgress(&buf, 7, "x")
	for step := 1; step <= 7; step++ {
		p.Update(step, 0.5)
	}
	p.Done()
	if got := strings.Count(buf.String(), "\n"); got != 7 {
		t.Errorf("total 7: %d lines, want 7", got)
	}
	if !strings.HasSuffix(buf.String(), "x [####################] 100%  step 7/7  loss 0.5000 (mean of 1 step)\n") {
		t.Errorf("total 7: output %q", buf.String())
	}
}
