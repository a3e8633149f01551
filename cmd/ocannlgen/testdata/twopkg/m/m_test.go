package m

import "testing"

func TestTrainStep(t *testing.T) {
	var x MLP
	x.Init(1)
	var in [8][4]float32
	var y [8][3]float32
	if l := x.TrainStep(&in, &y); l != l {
		t.Fatal("NaN loss")
	}
}
