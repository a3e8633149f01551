package loopir

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/internal/testutil"
)

// TestEndToEnd runs programs through inference, projection inference,
// lowering and both interpreters, against values computed by hand.
func TestEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      map[string][]float64
	}{
		{"matmul", `
input a : 2,3 = range
input b : 3,4 = [[1; 0; 2; -1]; [0; 1; 1; 1]; [2; 2; 0; 1]]
let c = a +* "ij;jk=>ik" b`, map[string][]float64{
			// a = [[0,1,2],[3,4,5]]
			"c": {4, 5, 1, 3, 13, 14, 10, 6},
		}},
		{"compose and bias, pointwise broadcast", `
input x : 2 | 3 = range
input w : 3 -> 2 = [(1, 0, -1); (2, 1, 0)]
input b : 2 = [10; 20]
let y = w * x + b`, map[string][]float64{
			// x rows [0,1,2], [3,4,5]; w rows (1,0,-1), (2,1,0)
			"y": {10 - 2, 20 + 1, 10 - 2, 20 + 10},
		}},
		{"sum by ones", `
input m : 4 -> 3 = range
leaf ones = 1
let s = m * ones`, map[string][]float64{
			"s": {0 + 1 + 2 + 3, 4 + 5 + 6 + 7, 8 + 9 + 10 + 11},
		}},
		{"valid convolution", `
input x : 6 = range
input w : 3 = [1; -1; 2]
let y = x +* "o<+k; k => o" w`, map[string][]float64{
			// y[o] = x[o] - x[o+1] + 2 x[o+2] = 2o + 3
			"y": {3, 5, 7, 9},
		}},
		{"padded convolution and max pool share a padded input", `
input x : 6 = [-1; -2; -0.5; -3; -4; -1.5]
input u : 3 = [1; 2; 3]
leaf w : 3 = 0
let c = x +* "o=+k; k => o" u
let p = x @^+ "o=+k; k => o" w
let c2 = x +* "o=+k; k => o" u`, map[string][]float64{
			// c[o] = x[o-1] + 2x[o] + 3x[o+1], zero outside
			"c":  {-2 - 3*2, -1 - 4 - 1.5, -2 - 1 - 9, -0.5 - 6 - 12, -3 - 8 - 4.5, -4 - 3},
			"p":  {-1, -0.5, -0.5, -0.5, -1.5, -1.5},
			"c2": {-8, -6.5, -12, -18.5, -15.5, -7},
		}},
		{"interleave", `
input t1 : 4 = [1; 2; 3; 4]
input t2 : 4 = [10; 20; 30; 40]
{t} =:+ id t1 ~logic:"i => 2*i"
t =+ id t2 ~logic:"i => 2*i + 1"
let odd = t ++ "2*i+1 => i"`, map[string][]float64{
			"t":   {1, 10, 2, 20, 3, 30, 4, 40},
			"odd": {10, 20, 30, 40},
		}},
		{"concatenation and stacking", `
input x : 2 = [1; 2]
input y : 3 = [3; 4; 5]
let c = (x, y) ++^ "a; b => a^b"
let s = [x; x]`, map[string][]float64{
			"c": {1, 2, 3, 4, 5},
			"s": {1, 2, 1, 2},
		}},
		{"extractions and partial updates", `
input src : 9 = range
let m = src ++ "a^b^c => b" ["a"; "c"]
dim a = 2
dim c = 3
let drop = src ++ "3^a => a"
input t : 5 = 1
input v : 2 = [10; 20]
t =+ v ~logic:"b => a^b"
input t2 : 5 = 1
t2 =+ v ~logic:"a => a^b"`, map[string][]float64{
			"m":    {2, 3, 4, 5},
			"drop": {3, 4, 5, 6, 7, 8},
			"t":    {1, 1, 1, 11, 21},
			"t2":   {11, 21, 1, 1, 1},
		}},
		{"block matrix", `
input a : 1,2 = [[1; 2]]
input b : 1,1 = [[3]]
input c : 2,2 = [[4; 5]; [6; 7]]
input d : 2,1 = [[8]; [9]]
let m = (a, b, c, d) ++^ "r, s; r, t; u, s; u, t => r^u, s^t"`, map[string][]float64{
			"m": {1, 2, 3, 4, 5, 8, 6, 7, 9},
		}},
		{"batch slice", `
input x : 3 | 2 = range
let s = x @| 1`, map[string][]float64{
			"s": {2, 3},
		}},
		{"reductions with max and diagonal", `
input m : 2,3 = [[3; -1; 2]; [0.5; 4; -2]]
let rm = m @^^ "ij => i0"
input q : 3,3 = range
let dg = q ++ "ii => i"
input v : 2 = [5; 7]
let dm = v ++ "i => ii"`, map[string][]float64{
			"rm": {3, 4},
			"dg": {0, 4, 8},
			"dm": {5, 0, 0, 7},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, s := runBoth(t, testutil.Compile(t, tc.src))
			for name, want := range tc.want {
				expectValues(t, s, p, name, want)
			}
		})
	}
}

func TestEndToEndAmbiguous(t *testing.T) {
	// Both sources are active at every point of "a; b => a, b".
	g := testutil.Compile(t, `
input x : 2 = range
input y : 3 = range
let c = (x, y) ++^ "a; b => a, b"`)
	_, err := Lower(g)
	if err == nil || !strings.Contains(err.Error(), "ambiguous indices in concatenation: operands 0 (x) and 1 (y) both write c at c[i0, i1]") {
		t.Errorf("err = %v", err)
	}
}

// TestMLP runs the two-moons network of examples/programs/mlp.ocl and
// recomputes it directly from the initialized parameters.
func TestMLP(t *testing.T) {
	src, err := os.ReadFile("../examples/programs/mlp.ocl")
	if err != nil {
		t.Skip("example not found:", err)
	}
	p, s := runBoth(t, testutil.Compile(t, string(src)))
	val := func(name string) []float64 { return s.Values(p.Lookup(name)) }
	w1, b1, w2, b2, w3, b3 := val("w1"), val("b1"), val("w2"), val("b2"), val("w3"), val("b3")
	if len(w1) != 16*2 || len(w2) != 16*16 || len(w3) != 16 {
		t.Fatalf("weight sizes %d %d %d", len(w1), len(w2), len(w3))
	}
	labels := val("labels")
	relu := func(v float64) float64 { return math.Max(v, 0) }
	loss := 0.0
	for n := range 32 {
		x := []float64{float64(2 * n), float64(2*n + 1)} // range
		h1 := make([]float64, 16)
		for o := range 16 {
			v := b1[o]
			for i := range 2 {
				v += w1[o*2+i] * x[i]
			}
			h1[o] = relu(v)
		}
		h2 := make([]float64, 16)
		for o := range 16 {
			v := b2[o]
			for i := range 16 {
				v += w2[o*16+i] * h1[i]
			}
			h2[o] = relu(v)
		}
		score := b3[0]
		for i := range 16 {
			score += w3[i] * h2[i]
		}
		loss += relu(1 - labels[n]*score)
	}
	got := val("loss")
	if len(got) != 1 || !testutil.CloseRel(got[0], loss, 1e-12) {
		t.Errorf("loss = %v, want %v", got, loss)
	}
	// Every parameter is drawn from [-0.25, 0.25) and is not constant.
	if w1[0] == w1[1] || math.Abs(w1[0]) >= 0.25 {
		t.Errorf("w1 = %v", w1)
	}
}
