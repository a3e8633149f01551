package layercheck

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

// torchBN is testdata/torchbn/torchbn.json (see make.py there).
type torchBN struct {
	Gamma0 []float64 `json:"gamma0"`
	Beta0  []float64 `json:"beta0"`
	Steps  []struct {
		X, R      []float64
		Loss      float64
		GammaGrad []float64 `json:"gamma_grad"`
		BetaGrad  []float64 `json:"beta_grad"`
	} `json:"steps"`
	Gamma, Beta       []float64
	RunningMean       []float64 `json:"running_mean"`
	RunningVar        []float64 `json:"running_var"`
	NumBatchesTracked int       `json:"num_batches_tracked"`
	EvalX             []float64 `json:"eval_x"`
	EvalY             []float64 `json:"eval_y"`
}

// TestTorchBatchNorm checks batch_norm against PyTorch 1.13's
// nn.BatchNorm2d in float64: the training loss and the gradients of
// gamma and beta at each of 3 SGD steps (batch statistics), the running
// mean, variance and step count after them, and the output in
// evaluation mode (running statistics), all to 1e-12 relative.
func TestTorchBatchNorm(t *testing.T) {
	b, err := os.ReadFile("testdata/torchbn/torchbn.json")
	if err != nil {
		t.Fatal(err)
	}
	var f torchBN
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	m := new(BN)
	m.Init(1)
	copy(m.Params.BnGamma[:], f.Gamma0)
	copy(m.Params.BnBeta[:], f.Beta0)
	near := func(what string, got, want []float64) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
		}
		for i := range want {
			if relErr(got[i], want[i]) > 1e-12 {
				t.Fatalf("%s[%d] = %v, PyTorch %v", what, i, got[i], want[i])
			}
		}
	}
	var x, r [4][5][2][3]float64
	for _, st := range f.Steps {
		set4(&x, st.X)
		set4(&r, st.R)
		l := m.TrainStep(&x, &r)
		near("loss", []float64{l}, []float64{st.Loss})
		near("gamma grad", m.Grads.BnGamma[:], st.GammaGrad)
		near("beta grad", m.Grads.BnBeta[:], st.BetaGrad)
	}
	near("gamma", m.Params.BnGamma[:], f.Gamma)
	near("beta", m.Params.BnBeta[:], f.Beta)
	near("running_mean", m.Params.BnRunningMean[:], f.RunningMean)
	near("running_var", m.Params.BnRunningVar[:], f.RunningVar)
	near("num_batches_tracked", m.Params.BnNumBatchesTracked[:], []float64{float64(f.NumBatchesTracked)})
	set4(&x, f.EvalX)
	y := m.Predict(&x)
	near("eval output", flat4(y), f.EvalY)
}

func flat4(a *[4][5][2][3]float64) []float64 {
	out := make([]float64, 0, 120)
	for i := range a {
		for j := range a[i] {
			for k := range a[i][j] {
				out = append(out, a[i][j][k][:]...)
			}
		}
	}
	return out
}

func set4(a *[4][5][2][3]float64, v []float64) {
	n := 0
	for i := range a {
		for j := range a[i] {
			for k := range a[i][j] {
				n += copy(a[i][j][k][:], v[n:])
			}
		}
	}
}

// TestTorchBatchNormSafetensors loads PyTorch's state_dict after the 3
// steps (testdata/torchbn/torchbn.safetensors: weight, bias,
// running_mean, running_var and num_batches_tracked, an I64 scalar) by
// mapping the names, and checks every tensor against the fixture; a
// model trained here and saved the same way matches it too.
func TestTorchBatchNormSafetensors(t *testing.T) {
	b, err := os.ReadFile("testdata/torchbn/torchbn.json")
	if err != nil {
		t.Fatal(err)
	}
	var f torchBN
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{"bn.gamma": "bn1.weight", "bn.beta": "bn1.bias", "bn.running_mean": "bn1.running_mean",
		"bn.running_var": "bn1.running_var", "bn.num_batches_tracked": "bn1.num_batches_tracked"}
	fh, err := os.Open("testdata/torchbn/torchbn.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	m := new(BN)
	if err := m.LoadSafetensors(fh, &rt.SafetensorsOptions{Names: names, Layout: rt.LayoutPyTorch}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want []float64
	}{{"gamma", m.Params.BnGamma[:], f.Gamma}, {"beta", m.Params.BnBeta[:], f.Beta},
		{"running_mean", m.Params.BnRunningMean[:], f.RunningMean}, {"running_var", m.Params.BnRunningVar[:], f.RunningVar},
		{"num_batches_tracked", m.Params.BnNumBatchesTracked[:], []float64{float64(f.NumBatchesTracked)}}} {
		for i := range c.want {
			if c.got[i] != c.want[i] {
				t.Fatalf("%s[%d] = %v, PyTorch %v", c.name, i, c.got[i], c.want[i])
			}
		}
	}
}
