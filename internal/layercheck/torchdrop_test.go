package layercheck

import (
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

var update = flag.Bool("update", false, "rewrite testdata/torchdrop/masks.json")

// TestTorchDropout checks dropout[0.25] against PyTorch 1.13 in float64
// (testdata/torchdrop, make.py): x times the documented mask of each
// step (rt.DropoutMask of the mask's identity, the model's seed 5 and the
// step), a linear layer and class-index cross-entropy, over 3 SGD steps:
// the loss and the gradients of every parameter at each step, then the
// logits in evaluation mode (no dropout), all to 1e-12 relative. With
// -update it writes the masks make.py reads.
func TestTorchDropout(t *testing.T) {
	const id = "objective.dropout#1/mask"
	masks := make([][]float64, 3)
	for s := range masks {
		masks[s] = make([]float64, 40)
		rt.DropoutMask(masks[s], 0.25, rt.ParamKey(id), 5, s)
	}
	if *update {
		b, _ := json.MarshalIndent(map[string]any{"identity": id, "seed": 5, "p": 0.25, "masks": masks}, "", " ")
		if err := os.WriteFile("testdata/torchdrop/masks.json", b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile("testdata/torchdrop/torchdrop.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Weight, Bias, X []float64
		Y               []int32
		Steps           []struct {
			Loss       float64
			WeightGrad []float64 `json:"weight_grad"`
			BiasGrad   []float64 `json:"bias_grad"`
		}
		EvalLogits []float64 `json:"eval_logits"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	m := new(Drop)
	m.Init(5)
	copy(m.Params.HeadW[:], f.Weight)
	copy(m.Params.HeadB[:], f.Bias)
	var x [5][8]float64
	var y [5]int32
	for i := range 40 {
		x[i/8][i%8] = f.X[i]
	}
	copy(y[:], f.Y)
	near := func(what string, got, want []float64) {
		t.Helper()
		for i := range want {
			if relErr(got[i], want[i]) > 1e-12 {
				t.Fatalf("%s[%d] = %v, PyTorch %v", what, i, got[i], want[i])
			}
		}
	}
	for _, st := range f.Steps {
		l, err := m.TrainStep(&x, &y)
		if err != nil {
			t.Fatal(err)
		}
		near("loss", []float64{l}, []float64{st.Loss})
		near("head.w grad", m.Grads.HeadW[:], st.WeightGrad)
		near("head.b grad", m.Grads.HeadB[:], st.BiasGrad)
	}
	p := m.Predict(&x)
	var got []float64
	for b := range p {
		got = append(got, p[b][:]...)
	}
	near("eval logits", got, f.EvalLogits)
}
