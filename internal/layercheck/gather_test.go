package layercheck

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

// relErr is |got-want| / max(1, |want|).
func relErr(got, want float64) float64 {
	return math.Abs(got-want) / math.Max(1, math.Abs(want))
}

// randomEmbed fills an Embed model's table and returns random ids (with
// repeats: 12 draws from 10 positions) and weights r.
func randomEmbed(m *Embed, rng *rand.Rand) (ids [4][3]int32, r [4][3][5]float64) {
	for i := range m.Params.Table {
		m.Params.Table[i] = rng.NormFloat64()
	}
	for b := range ids {
		for t := range ids[b] {
			ids[b][t] = int32(rng.IntN(10))
			for o := range r[b][t] {
				r[b][t][o] = rng.NormFloat64()
			}
		}
	}
	return ids, r
}

// TestEmbedMatchesLoops checks the gather and its scatter-add gradient
// against plain loops: e[b][t][o] = table[o][ids[b][t]] (the table is
// 10 -> 5, stored [5][10]), loss = sum e*r, and d loss / d table[o][k] =
// the sum of r[b][t][o] over the positions holding k.
func TestEmbedMatchesLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 20 {
		m := new(Embed)
		ids, r := randomEmbed(m, rng)
		var want float64
		var grad [50]float64
		for b := range ids {
			for p := range ids[b] {
				k := int(ids[b][p])
				for o := range 5 {
					want += m.Params.Table[10*o+k] * r[b][p][o]
					grad[10*o+k] += r[b][p][o]
				}
			}
		}
		got, err := m.ObjectiveLoss(&ids, &r)
		if err != nil {
			t.Fatal(err)
		}
		if relErr(got, want) > 1e-12 {
			t.Fatalf("trial %d: loss %v, want %v", trial, got, want)
		}
		if _, err := m.Backward(&ids, &r); err != nil {
			t.Fatal(err)
		}
		for i := range grad {
			if relErr(m.Grads.Table[i], grad[i]) > 1e-12 {
				t.Fatalf("trial %d: grad[%d] = %v, want %v", trial, i, m.Grads.Table[i], grad[i])
			}
		}
	}
}

// TestIndexOutOfRange checks that an id outside [0, 10) is an
// *rt.IndexError naming the input, the cell and the value, and that
// nothing is written: not the loss, not the gradients.
func TestIndexOutOfRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, bad := range []int32{-1, 10, math.MaxInt32, math.MinInt32} {
		m := new(Embed)
		ids, r := randomEmbed(m, rng)
		l0, err := m.Backward(&ids, &r)
		if err != nil {
			t.Fatal(err)
		}
		grads := m.Grads
		ids[2][1] = bad
		l, err := m.Backward(&ids, &r)
		var ie *rt.IndexError
		if !errors.As(err, &ie) {
			t.Fatalf("id %d: Backward error %v, want an *rt.IndexError", bad, err)
		}
		if ie.Input != "ids" || len(ie.Pos) != 2 || ie.Pos[0] != 2 || ie.Pos[1] != 1 || ie.Value != bad || ie.Bound != 10 {
			t.Fatalf("id %d: error %+v", bad, ie)
		}
		if l != 0 || m.Grads != grads || m.loss[0] != l0 {
			t.Fatalf("id %d: a failed Backward wrote the gradients or the loss", bad)
		}
		if _, err := m.ObjectiveLoss(&ids, &r); !errors.As(err, &ie) {
			t.Fatalf("id %d: ObjectiveLoss error %v", bad, err)
		}
		want := "index input ids[2][1] = " + itoa(int(bad)) + " is out of range: an index input holds positions 0 to 9"
		if err.Error() != want {
			t.Fatalf("message %q, want %q", err.Error(), want)
		}
	}
}

func itoa(v int) string { return strconv.Itoa(v) }

// TestCEGradients checks the class-index cross-entropy's gradients
// against central differences, and its value against plain loops.
func TestCEGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	m := new(CE)
	m.Init(7)
	var x [6][4]float64
	var y [6]int32
	for i := range x {
		for j := range x[i] {
			x[i][j] = rng.NormFloat64()
		}
		y[i] = int32(rng.IntN(3))
	}
	// Plain loops: logits = W x + b, loss = mean -log softmax[y].
	var want float64
	for i := range x {
		var z [3]float64
		mx := math.Inf(-1)
		for c := range 3 {
			z[c] = m.Params.ObjectiveNetB[c]
			for j := range 4 {
				z[c] += m.Params.ObjectiveNetW[4*c+j] * x[i][j]
			}
			mx = max(mx, z[c])
		}
		var s float64
		for c := range 3 {
			s += math.Exp(z[c] - mx)
		}
		want -= z[y[i]] - mx - math.Log(s)
	}
	want /= 6
	l, err := m.Backward(&x, &y)
	if err != nil {
		t.Fatal(err)
	}
	if relErr(l, want) > 1e-12 {
		t.Fatalf("loss %v, want %v", l, want)
	}
	for _, pt := range m.ParamTensors() {
		grads := m.gradOf(pt.Name)
		for i := range pt.Data64 {
			v := pt.Data64[i]
			const h = 1e-5
			pt.Data64[i] = v + h
			lp, _ := m.ObjectiveLoss(&x, &y)
			pt.Data64[i] = v - h
			lm, _ := m.ObjectiveLoss(&x, &y)
			pt.Data64[i] = v
			fd := (lp - lm) / (2 * h)
			if math.Abs(fd-grads[i]) > 1e-8*math.Max(1, math.Abs(fd)) {
				t.Fatalf("%s[%d]: gradient %v, central difference %v", pt.Name, i, grads[i], fd)
			}
		}
	}
}

// gradOf is the gradient array of parameter name.
func (m *CE) gradOf(name string) []float64 {
	switch name {
	case "objective.net.w":
		return m.Grads.ObjectiveNetW[:]
	case "objective.net.b":
		return m.Grads.ObjectiveNetB[:]
	}
	panic(name)
}

// torchEmbed is testdata/torchembed/torchembed.json (see make.py there).
type torchEmbed struct {
	Emb     []float64 `json:"emb_weight"`
	HW      []float64 `json:"head_weight"`
	HB      []float64 `json:"head_bias"`
	IDs     []int32   `json:"ids"`
	Y       []int32   `json:"y"`
	Loss    float64   `json:"loss"`
	EmbGrad []float64 `json:"emb_grad"`
	HWGrad  []float64 `json:"head_weight_grad"`
	HBGrad  []float64 `json:"head_bias_grad"`
}

// TestTorchEmbedCE checks nn.Embedding, nn.Linear and F.cross_entropy
// with class indices against PyTorch 1.13 in float64: the loss and every
// parameter gradient to 1e-12 relative. The table (10, 5) is stored
// [10][5], as PyTorch's weight.
func TestTorchEmbedCE(t *testing.T) {
	b, err := os.ReadFile("testdata/torchembed/torchembed.json")
	if err != nil {
		t.Fatal(err)
	}
	var f torchEmbed
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	m := new(EmbedCE)
	copy(m.Params.EmbTable[:], f.Emb)
	copy(m.Params.HeadW[:], f.HW)
	copy(m.Params.HeadB[:], f.HB)
	var ids, y [4][3]int32
	for i := range 12 {
		ids[i/3][i%3], y[i/3][i%3] = f.IDs[i], f.Y[i]
	}
	l, err := m.Backward(&ids, &y)
	if err != nil {
		t.Fatal(err)
	}
	if relErr(l, f.Loss) > 1e-12 {
		t.Fatalf("loss %v, PyTorch %v", l, f.Loss)
	}
	for i, w := range f.EmbGrad {
		if relErr(m.Grads.EmbTable[i], w) > 1e-12 {
			t.Fatalf("emb grad [%d][%d] = %v, PyTorch %v", i/5, i%5, m.Grads.EmbTable[i], w)
		}
	}
	for i, w := range f.HWGrad {
		if relErr(m.Grads.HeadW[i], w) > 1e-12 {
			t.Fatalf("head.w grad [%d] = %v, PyTorch %v", i, m.Grads.HeadW[i], w)
		}
	}
	for i, w := range f.HBGrad {
		if relErr(m.Grads.HeadB[i], w) > 1e-12 {
			t.Fatalf("head.b grad [%d] = %v, PyTorch %v", i, m.Grads.HeadB[i], w)
		}
	}
	// The predictor gathers the same rows.
	p, err := m.Predict(&[2]int32{9, 2})
	if err != nil {
		t.Fatal(err)
	}
	for c := range 7 {
		want := f.HB[c]
		for d := range 5 {
			want += f.HW[5*c+d] * f.Emb[5*9+d]
		}
		if relErr(p[0][c], want) > 1e-12 {
			t.Fatalf("predict[0][%d] = %v, want %v", c, p[0][c], want)
		}
	}
}

// TestRowsMatchFixed checks a loss and a predictor with run-time rows and
// index inputs: on n = 4 rows they equal the fixed-batch model EmbedCE,
// on n = 2 rows EmbedCE2 (the fixed model of 2 rows); a bad id in a row
// past n is not read.
func TestRowsMatchFixed(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	rows, fixed, two := new(EmbedCERows), new(EmbedCE), new(EmbedCE2)
	rows.Init(3)
	fixed.Params = ocannlEmbedCEParams(rows.Params)
	two.Params = ocannlEmbedCE2Params(rows.Params)
	var ids, y [4][3]int32
	for i := range ids {
		for j := range ids[i] {
			ids[i][j], y[i][j] = int32(rng.IntN(10)), int32(rng.IntN(7))
		}
	}
	near := func(what string, got, want []float64) {
		t.Helper()
		for i := range want {
			if relErr(got[i], want[i]) > 1e-12 {
				t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
			}
		}
	}
	l, err := rows.Backward(&ids, &y, 4)
	if err != nil {
		t.Fatal(err)
	}
	lf, err := fixed.Backward(&ids, &y)
	if err != nil {
		t.Fatal(err)
	}
	near("loss, n=4", []float64{l}, []float64{lf})
	near("emb grad, n=4", rows.Grads.EmbTable[:], fixed.Grads.EmbTable[:])
	near("head grad, n=4", rows.Grads.HeadW[:], fixed.Grads.HeadW[:])
	ids[3][0] = 99 // past n: never read
	l, err = rows.Backward(&ids, &y, 2)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := two.Backward((*[2][3]int32)(ids[:2]), (*[2][3]int32)(y[:2]))
	if err != nil {
		t.Fatal(err)
	}
	near("loss, n=2", []float64{l}, []float64{l2})
	near("emb grad, n=2", rows.Grads.EmbTable[:], two.Grads.EmbTable[:])
	near("head bias grad, n=2", rows.Grads.HeadB[:], two.Grads.HeadB[:])
	if _, err := rows.Backward(&ids, &y, 4); err == nil {
		t.Fatal("a bad id in row 3 of 4 was accepted")
	}
	p, err := rows.Predict(&[4]int32{1, 2, 3, 4}, 2)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := fixed.Predict(&[2]int32{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	near("predict", p[0][:], pf[0][:])
	near("predict row 1", p[1][:], pf[1][:])
}
