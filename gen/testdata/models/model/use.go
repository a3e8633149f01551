package model

import "bytes"

// Fit trains m on a fixed toy problem and returns the first and the last
// loss; it uses methods and fields that exist only after generation.
func Fit(m *Small, steps int) (first, last float32) {
	var x [4][3]float32
	var y [4][2]float32
	for i := range x {
		for j := range x[i] {
			x[i][j] = float32(i+j) / 4
		}
		y[i] = [2]float32{float32(i) / 4, 1 - float32(i)/4}
	}
	m.Init(1)
	for s := 0; s < steps; s++ {
		l := m.TrainStep(&x, &y)
		if s == 0 {
			first = l
		}
		last = l
	}
	return first, last
}

// RoundTrip saves m and loads the result into a fresh model.
func RoundTrip(m *Small) (*Small, error) {
	var b bytes.Buffer
	if err := m.Save(&b); err != nil {
		return nil, err
	}
	n := new(Small)
	err := n.Load(&b)
	return n, err
}
