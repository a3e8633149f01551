package model

import (
	"bytes"
	"io"
	"reflect"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

// The generated API, checked by the compiler: each method expression
// must have exactly this type (docs/language.md, "The generated model
// API").
var (
	_ func(*API, uint64)                                    = (*API).Init
	_ func(*API, *[4][3]float32, *[4][2]float32) float32    = (*API).TrainLoss
	_ func(*API, *[1][3]float32) *[1][2]float32             = (*API).PredictOne
	_ func(*API, *[4][3]float32, *[4][2]float32) float32    = (*API).Backward
	_ func(*API) float64                                    = (*API).LearningRate
	_ func(*API)                                            = (*API).Update
	_ func(*API, *[4][3]float32, *[4][2]float32) float32    = (*API).TrainStep
	_ func(*API) []rt.Tensor                                = (*API).ParamTensors
	_ func(*API, io.Writer) error                           = (*API).Save
	_ func(*API, io.Reader) error                           = (*API).Load
	_ func(*API) ([]byte, error)                            = (*API).MarshalBinary
	_ func(*API, []byte) error                              = (*API).UnmarshalBinary
	_ func(*API, io.Writer) error                           = (*API).SaveCheckpoint
	_ func(*API, io.Reader) error                           = (*API).LoadCheckpoint
	_ func(*API, io.Writer, *rt.SafetensorsOptions) error   = (*API).SaveSafetensors
	_ func(*API, io.Reader, *rt.SafetensorsOptions) error   = (*API).LoadSafetensors
	_ func(*API) *ocannlAPIRunner                           = (*API).NewRunner
	_ func(*ocannlAPIRunner, *[1][3]float32) *[1][2]float32 = (*ocannlAPIRunner).PredictOne
)

// TestGeneratedAPI checks the names the generator must not use any more
// (the entry names as written, Go-capitalized), the parameter fields, and
// that TrainLoss only evaluates the loss while TrainStep trains.
func TestGeneratedAPI(t *testing.T) {
	typ := reflect.TypeFor[*API]()
	for _, old := range []string{"Predict_one", "Train"} {
		if _, ok := typ.MethodByName(old); ok {
			t.Errorf("*API has a method %s", old)
		}
	}
	ps := reflect.TypeFor[ocannlAPIParams]()
	var fields []string
	for i := range ps.NumField() {
		fields = append(fields, ps.Field(i).Name)
	}
	if !reflect.DeepEqual(fields, []string{"NetW", "NetB"}) {
		t.Errorf("parameter fields %v, want [NetW NetB] (net.w, net.b)", fields)
	}
	if len(new(API).Params.NetW) != 6 || len(new(API).Params.NetB) != 2 {
		t.Errorf("NetW has %d cells, NetB %d; want 6 (3 -> 2) and 2", len(new(API).Params.NetW), len(new(API).Params.NetB))
	}

	var m API
	m.Init(1)
	x := &[4][3]float32{{1, 2, 3}, {0, 1, 0}, {-1, 0, 2}, {0.5, 0.5, 0.5}}
	y := &[4][2]float32{{1, 0}, {0, 1}, {1, 1}, {0, 0}}
	before := m.Params
	l := m.TrainLoss(x, y)
	if m.Params != before || m.Step != 0 {
		t.Fatal("TrainLoss changed the parameters or the step")
	}
	// The loss by hand: the sum over the batch and outputs of (net(x) - y)².
	var want float64
	for b := range 4 {
		for o := range 2 {
			d := float64(m.Params.NetB[o]) - float64(y[b][o])
			for i := range 3 {
				d += float64(m.Params.NetW[o*3+i]) * float64(x[b][i])
			}
			want += d * d
		}
	}
	if d := float64(l) - want; d > 1e-4*want || d < -1e-4*want {
		t.Errorf("TrainLoss %v, by hand %v", l, want)
	}
	if got := m.TrainStep(x, y); got != l {
		t.Errorf("TrainStep returned %v, want the loss before the update %v", got, l)
	}
	if m.Params == before || m.Step != 1 {
		t.Fatal("TrainStep did not update the parameters and the step")
	}
	if after := m.TrainLoss(x, y); !(after < l) {
		t.Errorf("loss %v after one step, %v before", after, l)
	}
	one := m.PredictOne(&[1][3]float32{x[0]})
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		t.Fatal(err)
	}
	var m2 API
	if err := m2.Load(&buf); err != nil {
		t.Fatal(err)
	}
	if *m2.PredictOne(&[1][3]float32{x[0]}) != *one {
		t.Error("a loaded model predicts differently")
	}
}
