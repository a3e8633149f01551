package demo

import (
	"fmt"
	"math"
)

// Moons returns the classic two-moons data set of n points: the first
// half (rounded up) lie on the upper moon (cos t, sin t), t in [0, pi],
// with label +1; the rest on the lower moon (1 - cos t, 0.5 - sin t)
// with label -1. Each coordinate gets gaussian noise of standard
// deviation noise (0.1 is a good value). The order of the points is
// shuffled deterministically; the same seed gives the same data.
func Moons(n int, seed uint64, noise float64) (points [][2]float32, labels []float32) {
	r := newRand(seed)
	points = make([][2]float32, n)
	labels = make([]float32, n)
	upper := (n + 1) / 2
	for i := range n {
		t := math.Pi * r.Float64()
		var x, y float64
		if i < upper {
			x, y = math.Cos(t), math.Sin(t)
			labels[i] = 1
		} else {
			x, y = 1-math.Cos(t), 0.5-math.Sin(t)
			labels[i] = -1
		}
		x += noise * r.NormFloat64()
		y += noise * r.NormFloat64()
		points[i] = [2]float32{float32(x), float32(y)}
	}
	r.Shuffle(n, func(i, j int) {
		points[i], points[j] = points[j], points[i]
		labels[i], labels[j] = labels[j], labels[i]
	})
	return points, labels
}

// GlyphSize is the side length of a glyph image in pixels.
const GlyphSize = 12

// GlyphNames names the four glyph classes produced by Glyphs, indexed by
// class.
var GlyphNames = [4]string{"square", "plus", "bars", "cross"}

// Glyphs returns n procedurally drawn 12x12 grayscale images (values in
// [0, 1], indexed [row][column]) and their classes: 0 is a hollow square
// outline, 1 a plus, 2 a pair of horizontal bars and 3 a diagonal X (see
// GlyphNames). Each glyph has a random size of 5 to 9 pixels, a random
// position fully inside the image and a random stroke intensity in
// [0.7, 1]; every pixel then gets uniform noise in [-0.1, 0.1] and is
// clamped to [0, 1]. Sample i has class i%4 before a deterministic
// shuffle, so the classes are balanced.
func Glyphs(n int, seed uint64) (images [][GlyphSize][GlyphSize]float32, classes []int) {
	r := newRand(seed)
	images = make([][GlyphSize][GlyphSize]float32, n)
	classes = make([]int, n)
	for i := range n {
		c := i % 4
		classes[i] = c
		img := &images[i]
		s := 5 + r.IntN(5) // size 5..9
		r0 := r.IntN(GlyphSize - s + 1)
		c0 := r.IntN(GlyphSize - s + 1)
		v := float32(0.7 + 0.3*r.Float64())
		set := func(y, x int) { img[r0+y][c0+x] = v }
		switch c {
		case 0: // hollow square outline
			for k := range s {
				set(0, k)
				set(s-1, k)
				set(k, 0)
				set(k, s-1)
			}
		case 1: // plus
			m := s / 2
			for k := range s {
				set(m, k)
				set(k, m)
			}
		case 2: // two horizontal bars, inset by one row
			for k := range s {
				set(1, k)
				set(s-2, k)
			}
		case 3: // diagonal X
			for k := range s {
				set(k, k)
				set(k, s-1-k)
			}
		}
		for y := range GlyphSize {
			for x := range GlyphSize {
				p := img[y][x] + float32(0.2*r.Float64()-0.1)
				img[y][x] = min(max(p, 0), 1)
			}
		}
	}
	r.Shuffle(n, func(i, j int) {
		images[i], images[j] = images[j], images[i]
		classes[i], classes[j] = classes[j], classes[i]
	})
	return images, classes
}

// ReverseTask returns n random token sequences of the given length, with
// tokens uniform in [0, vocab), as inputs, and their reversals as
// targets.
func ReverseTask(n, length, vocab int, seed uint64) (inputs, targets [][]int) {
	r := newRand(seed)
	inputs = make([][]int, n)
	targets = make([][]int, n)
	for i := range n {
		in := make([]int, length)
		out := make([]int, length)
		for k := range in {
			in[k] = r.IntN(vocab)
		}
		for k := range in {
			out[k] = in[length-1-k]
		}
		inputs[i], targets[i] = in, out
	}
	return inputs, targets
}

// OneHot writes the one-hot encoding of tokens into the first
// len(tokens)*vocab elements of dst: row k (elements k*vocab to
// (k+1)*vocab) is all zero except a 1 at column tokens[k]. It panics if
// dst is too short or a token is outside [0, vocab).
func OneHot(dst []float32, tokens []int, vocab int) {
	if len(dst) < len(tokens)*vocab {
		panic(fmt.Sprintf("demo.OneHot: dst has %d elements, need %d", len(dst), len(tokens)*vocab))
	}
	block := dst[:len(tokens)*vocab]
	clear(block)
	for k, t := range tokens {
		if t < 0 || t >= vocab {
			panic(fmt.Sprintf("demo.OneHot: token %d at %d outside [0, %d)", t, k, vocab))
		}
		block[k*vocab+t] = 1
	}
}

// Accuracy returns the fraction of positions where pred and want have
// the same sign, for labels in {+1, -1}: a value > 0 counts as +1,
// anything else (including 0) as -1. It returns 0 for empty input and
// panics if the lengths differ.
func Accuracy(pred, want []float32) float64 {
	if len(pred) != len(want) {
		panic(fmt.Sprintf("demo.Accuracy: %d predictions for %d labels", len(pred), len(want)))
	}
	if len(pred) == 0 {
		return 0
	}
	ok := 0
	for i, p := range pred {
		if (p > 0) == (want[i] > 0) {
			ok++
		}
	}
	return float64(ok) / float64(len(pred))
}

// ArgMax returns the index of the largest element of row (the first one
// on ties), or -1 if row is empty. NaNs are never chosen unless row holds
// nothing else.
func ArgMax(row []float32) int {
	best := -1
	for i, v := range row {
		if v != v {
			if best < 0 {
				best = i
			}
			continue
		}
		if best < 0 || row[best] != row[best] || v > row[best] {
			best = i
		}
	}
	return best
}
