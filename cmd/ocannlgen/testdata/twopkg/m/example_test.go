package m_test

import (
	"fmt"

	"gentest/m"
)

func ExampleMLP() {
	var x m.MLP
	x.Init(1)
	var in [8][4]float32
	out := x.Predict(&in)
	fmt.Println(len(out), len(out[0]))
	// Output: 8 3
}
