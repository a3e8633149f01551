package inference

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// projSummary renders an op's projections compactly:
// "product | lhs | rhs1 ; rhs2 | zero acc".
func projSummary(p *Projections) string {
	var prod []string
	for _, f := range p.Product {
		prod = append(prod, fmt.Sprint(f.Extents))
	}
	idx := func(xs []Index) string {
		s := make([]string, len(xs))
		for i, x := range xs {
			s[i] = x.String()
		}
		return "[" + strings.Join(s, ",") + "]"
	}
	var rhs []string
	for _, r := range p.RHS {
		rhs = append(rhs, idx(r))
	}
	flags := "store"
	if p.Accumulate {
		flags = "acc"
	}
	if p.ZeroInit {
		flags = "zero " + flags
	}
	return fmt.Sprintf("%s | %s | %s | %s", strings.Join(prod, ""), idx(p.LHS), strings.Join(rhs, " ; "), flags)
}

func derive(t *testing.T, src string) *Graph {
	t.Helper()
	g, err := InferSource(strings.TrimSpace(src) + "\n")
	if err != nil {
		t.Fatalf("inference: %v", err)
	}
	if err := DeriveProjections(g); err != nil {
		t.Fatalf("projections: %v", err)
	}
	return g
}

// lastOpOf returns the last op whose LHS is named name.
func lastOpOf(t *testing.T, g *Graph, name string) *Op {
	t.Helper()
	var found *Op
	for _, op := range g.Ops {
		if g.Tensors[op.LHS].Name == name {
			found = op
		}
	}
	if found == nil {
		t.Fatalf("no op writes %s", name)
	}
	return found
}

// TestProjectionWorkedExamples pins the seeds' worked examples (documents
// 2, 3 and 4) to their exact projection records.
func TestProjectionWorkedExamples(t *testing.T) {
	for _, tc := range []struct {
		name, src, lhs, want string
	}{
		{"matmul: j reduced, pre-fill, accumulate", `
input a : 4 -> 3 = range
input v : 4 = range
let c = a * v`, "c", "[3][4] | [i0] | [i0,i1] ; [i1] | zero acc"},
		{"matmul einsum", `
input a : 2,3 = range
input b : 3,4 = range
let c = a +* "ij;jk=>ik" b`, "c", "[2][4][3] | [i0,i1] | [i0,i2] ; [i2,i1] | zero acc"},
		{"scalar times matrix: scalar pinned to 0, plain store", `
input m : 3,4 = range
let r = 2 *. m`, "r", "[3][4] | [i0,i1] | [0] ; [i0,i1] | store"},
		{"summing by a ones vector", `
input m : 4 -> 3 = range
leaf ones
let s = m * ones`, "s", "[3][4] | [i0] | [i0,i1] ; [i1] | zero acc"},
		{"1-D valid convolution x[o+k]", `
input x : 6 = range
input w : 3 = range
let y = x +* "o<+k; k => o" w`, "y", "[4][3] | [i0] | [i0+i1] ; [i1] | zero acc"},
		{"1-D padded convolution", `
input x : 6 = range
input w : 3 = range
let y = x +* "o=+k; k => o" w`, "y", "[6][3] | [i0] | [i0+i1-1] ; [i1] | zero acc"},
		{"strided convolution with dilation", `
input x : 13 = range
input w : 3 = range
let y = x +* "2*o<+3*k; k => o" w`, "y", "[4][3] | [i0] | [2*i0+3*i1] ; [i1] | zero acc"},
		{"interleave, even positions", `
input t1 : 4 = range
input t2 : 4 = range
{t} =:+ id t1 ~logic:"i => 2*i"
t =+ id t2 ~logic:"i => 2*i + 1"`, "t", "[4] | [2*i0+1] | [i0] | acc"},
		{"deinterleave (the inverse)", `
input t : 8 = range
let ev = t ++ "2*i+1 => i"`, "ev", "[4] | [i0] | [2*i0+1] | store"},
		{"gradient of deinterleave: scatter back", `
input g : 4 = 1
input t : 8 = 0
t =+ id g ~logic:"i => 2*i+1"`, "t", "[4] | [2*i0+1] | [i0] | acc"},
		{"concatenate a;b=>a^b", `
input x : 2 = range
input y : 3 = range
let c = (x, y) ++^ "a; b => a^b"`, "c", "[2 3] | [concat(i0,i1)] | [i0] ; [i1] | store"},
		{"prefix extraction a^b=>a", `
input src : 5 = range
input x2 : 2 = 1
{p} =:+ id src ~logic:"a^b => a"
let q = p + x2`, "p", "[2 3] | [i0] | [concat(i0,i1)] | store"},
		{"suffix extraction a^b=>b", `
input src : 5 = range
input x3 : 3 = 1
{p} =:+ id src ~logic:"a^b => b"
let q = p + x3`, "p", "[2 3] | [i1] | [concat(i0,i1)] | store"},
		{"partial update a=>a^b leaves the rest", `
input dst : 5 = 0
input x2 : 2 = 1
dst =+ id x2 ~logic:"a => a^b"`, "dst", "[2 3] | [concat(i0,i1)] | [i0] | acc"},
		{"middle extraction a^b^c=>b with a and c set", `
input src : 7 = range
let m = src ++ "a^b^c => b" ["a"; "c"]
dim a = 2
dim c = 1`, "m", "[2 4 1] | [i1] | [concat(i0,i1,i2)] | store"},
		{"three-way concatenation", `
input x : 2 = range
input y : 3 = range
input z : 2 = range
let c = (x, y, z) ++^ "a; b; c => a^b^c"`, "c", "[2 3 2] | [concat(i0,i1,i2)] | [i0] ; [i1] ; [i2] | store"},
		{"2x2 block matrix: two coupled factors", `
input a : 2,2 = 1
input b : 2,3 = 2
input c : 1,2 = 3
input d : 1,3 = 4
let m = (a, b, c, d) ++^ "r, s; r, t; u, s; u, t => r^u, s^t"`, "m",
			"[2 1][2 3] | [concat(i0,i1),concat(i2,i3)] | [i0,i2] ; [i0,i3] ; [i1,i2] ; [i1,i3] | zero store"},
		{"banded: couplings sharing iterators give the diagonal blocks", `
input x : 2,2 = 1
input y : 3,3 = 2
let m = (x, y) ++^ "a, a; b, b => a^b, a^b"`, "m", "[2 3] | [concat(i0,i1),concat(i0,i1)] | [i0,i0] ; [i1,i1] | zero store"},
		{"integer components skip a block", `
input src : 5 = range
let tail = src ++ "3^a => a"`, "tail", "[2] | [i0] | [i0+3] | store"},
		{"global sizes, local identities: equal sizes are not fused", `
input u : 3 = range
input v : 3 = range
let s = u + v
let o = u +* "i; j => i, j" v`, "o", "[3][3] | [i0,i1] | [i0] ; [i1] | store"},
		{"fixed index on the LHS is not surjective", `
input x : 4 = range
let c = x ++ "i=>i0"`, "c", "[4] | [i0,0] | [i0] | store"},
		{"diagonal LHS is not surjective", `
input x : 4 = range
let d = x ++ "i=>ii"`, "d", "[4] | [i0,i0] | [i0] | zero store"},
		{"batch slice reads a fixed position", `
input d : 5,2 | 3 = range
let s = d @| 4`, "s", "[2][3] | [i0,i1] | [4,i0,i1] | store"},
		{"stacking tensors along a new axis", `
input a : 3 = range
input b : 3 = range
let s = [a; b]`, "s", "[1 1][3] | [concat(i0,i1),i2] | [i2] ; [i2] | store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := derive(t, tc.src)
			if got := projSummary(lastOpOf(t, g, tc.lhs).Proj); got != tc.want {
				t.Errorf("\ngot  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestDilatedPaddingMargins(t *testing.T) {
	// "2*o=+3*k" over 8 with a 3-wide kernel: span 7, margins (3, 4); the
	// reads 2*o + 3*k - 3 stay within -3..9, inside 8 + margins.
	g := derive(t, `
input x : 8 = range
input w : 3 = range
let y = x +* "2*o=+3*k; k => o" w`)
	for _, tn := range g.Tensors {
		if tn.Name == "x" && !reflect.DeepEqual(tn.Padding, []Padding{{Left: 3, Right: 4}}) {
			t.Fatalf("x padding %v, want [{3 4}]", tn.Padding)
		}
	}
	if got := projSummary(lastOpOf(t, g, "y").Proj); got != "[4][3] | [i0] | [2*i0+3*i1-3] ; [i1] | zero acc" {
		t.Fatalf("got %s", got)
	}
}

func TestPaddingMargins(t *testing.T) {
	// Margins are a max-fold over the padded convolutions reading an axis:
	// kernel k gives left k - (k+1)/2, right (k+1)/2.
	g := derive(t, `
input x : 8 = range
input w3 : 3 = range
input w5 : 5 = range
let y3 = x +* "o=+k; k => o" w3
let y5 = x +* "o=+k; k => o" w5`)
	for _, tn := range g.Tensors {
		if tn.Name == "x" {
			if !reflect.DeepEqual(tn.Padding, []Padding{{Left: 2, Right: 3}}) {
				t.Fatalf("x padding %v, want [{2 3}]", tn.Padding)
			}
			return
		}
	}
	t.Fatal("x not found")
}

// TestProjectionCanonicity is the canonicity property (seed 5, Thm. 7.4):
// shuffling an operation's projection equations gives the same record.
func TestProjectionCanonicity(t *testing.T) {
	srcs := []string{
		"input a : 2,3 = range\ninput b : 3,4 = range\nlet c = a +* \"ij;jk=>ik\" b\n",
		"input x : 2 | 3 -> 4 = range\nlet y = x ++ \"...|i->o => ...|o->i\"\nlet z = 2 *. y + y\n",
		"input a : 2,2 = 1\ninput b : 2,3 = 2\ninput c : 1,2 = 3\ninput d : 1,3 = 4\nlet m = (a, b, c, d) ++^ \"r, s; r, t; u, s; u, t => r^u, s^t\"\n",
		"input img : 9,9,2 = range\nlet o = (img +* \"... | 2*oh<+kh, 2*ow<+kw, ..ic..; kh, kw, ..ic.. -> ..oc.. => ... | oh, ow, ..oc..\" [\"kh\"; \"kw\"; \"oc\"] {k}) + {bias = 0}\ndim kh = 3\ndim kw = 3\ndim oc = 4\n",
		"input base : 4,4 = range\nlet img = base - 16\nlet conv_out = img +* \"oh=+kh, ow=+kw; kh, kw => oh, ow\" [\"kh\"; \"kw\"] (1.0 + 0.0)\ndim kh = 3\ndim kw = 3\n",
		"input x : 32 | 2 = range\nlet h = relu ({w} * x + {b = 0.; o=[16]})\n",
		"input x : 2 | 6,4,3 = range\nlet y = x @^^ \"... | 2*oh=+wh, 2*ow<+ww, ..c.. => ... | oh, ow, ..c..\" [\"wh\"; \"ww\"]\ndim wh = 2\ndim ww = 2\n",
	}
	rng := rand.New(rand.NewPCG(7, 9))
	for _, src := range srcs {
		g, err := InferSource(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range g.Ops {
			prob, err := elaborate(g, op)
			if err != nil {
				t.Fatal(err)
			}
			want, _, err := prob.solve()
			if err != nil {
				t.Fatal(err)
			}
			for range 20 {
				rng.Shuffle(len(prob.eqs), func(i, j int) { prob.eqs[i], prob.eqs[j] = prob.eqs[j], prob.eqs[i] })
				got, _, err := prob.solve()
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: shuffled equations changed the projections:\n%s\nvs\n%s", op.Desc, projSummary(got), projSummary(want))
				}
			}
		}
	}
}

// TestAffineOnlyLabelsIterated: a label that occurs only inside affine
// indices, with no axis of its own in any operand (a pooling window
// written without a window tensor, `x ++ "2*o<+w => o" ["w"]`), is a
// product-space iterator sized by its solved dim, exactly like a label on
// an RHS axis that the LHS omits. It used to be labeled Fix 0, dropping
// the kernel term (reading x[2*o] instead of summing the window).
func TestAffineOnlyLabelsIterated(t *testing.T) {
	for _, tc := range []struct {
		name, src, lhs, want string
		pad                  map[string][]Padding // tensor padding (nil: none)
	}{
		{"strided valid window, unary", `
input x : 6 = range
let y = x ++ "2*o<+w => o" ["w"]
dim w = 2`, "y", "[3][2] | [i0] | [2*i0+i1] | zero acc", nil},
		{"unit-stride valid window", `
input x : 6 = range
let y = x ++ "o<+w => o" ["w"]
dim w = 2`, "y", "[5][2] | [i0] | [i0+i1] | zero acc", nil},
		{"padded window contributes the margin", `
input x : 6 = range
let y = x ++ "o=+w => o" ["w"]
dim w = 3`, "y", "[6][3] | [i0] | [i0+i1-1] | zero acc", map[string][]Padding{"x": {{Left: 1, Right: 2}}}},
		{"padded strided window", `
input x : 6 = range
let y = x ++ "2*o=+w => o" ["w"]
dim w = 2`, "y", "[3][2] | [i0] | [2*i0+i1-1] | zero acc", map[string][]Padding{"x": {{Left: 1, Right: 1}}}},
		{"dilated window", `
input x : 7 = range
let y = x ++ "o<+3*w => o" ["w"]
dim w = 2`, "y", "[4][2] | [i0] | [i0+3*i1] | zero acc", nil},
		{"binary: the window label is in the affine index only", `
input x : 6 = range
input z : 3 = range
let y = x +* "2*o<+w; o => o" ["w"] z
dim w = 2`, "y", "[3][2] | [i0] | [2*i0+i1] ; [i0] | zero acc", nil},
		{"max pool over two affine-only window labels", `
input x : 2 | 6,4,3 = range
let y = x @^^ "... | 2*oh<+wh, 2*ow<+ww, ..c.. => ... | oh, ow, ..c.." ["wh"; "ww"]
dim wh = 2
dim ww = 2`, "y", "[2][3][2][3][2][2] | [i0,i1,i2,i3] | [i0,2*i1+i4,2*i2+i5,i3] | zero acc", nil},
		{"the stride label only in the affine index", `
input x : 6 = range
let y = x ++ "2*o<+w => w" ["o"]
dim o = 3`, "y", "[2][3] | [i0] | [2*i1+i0] | zero acc", nil},
		{"LHS affine only: shifted copies accumulate", `
input x : 3 = range
let y = x ++ "a => a<+b" ["b"]
dim b = 2`, "y", "[3][2] | [i0+i1] | [i0] | zero acc", nil},
		{"a size-1 window earns no factor", `
input x : 6 = range
let y = x ++ "o<+w => o" ["w"]
dim w = 1`, "y", "[6] | [i0] | [i0] | store", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := derive(t, tc.src)
			op := lastOpOf(t, g, tc.lhs)
			if got := projSummary(op.Proj); got != tc.want {
				t.Errorf("\ngot  %s\nwant %s", got, tc.want)
			}
			for _, tn := range g.Tensors {
				if want := tc.pad[tn.Name]; !reflect.DeepEqual(tn.Padding, want) {
					t.Errorf("%s padding %v, want %v", tn.Name, tn.Padding, want)
				}
			}
			checkProjBounds(t, g)
		})
	}
}

// checkProjBounds enumerates the product space of every op (uncoupled
// factors only) and checks that each index stays inside its axis extended
// by the tensor's padding margins: valid windows read in bounds, padded
// ones within the margins they contributed.
func checkProjBounds(t *testing.T, g *Graph) {
	t.Helper()
	for _, op := range g.Ops {
		p := op.Proj
		if p == nil {
			continue
		}
		for _, f := range p.Product {
			if len(f.Iters) != 1 {
				t.Fatalf("%s: coupled factor not supported by the bounds check", op.Desc)
			}
		}
		check := func(tid int, idx []Index, dims []int, env []int) {
			tn := g.Tensors[tid]
			for ax, x := range idx {
				v := x.Offset
				switch x.Kind {
				case IdxIter:
					v = env[x.Iter]
				case IdxAffine:
					for _, tm := range x.Terms {
						v += tm.Coeff * env[tm.Iter]
					}
				}
				lo, hi := 0, dims[ax]
				if tn.Padding != nil {
					lo, hi = -tn.Padding[ax].Left, hi+tn.Padding[ax].Right
				}
				if v < lo || v >= hi {
					t.Fatalf("%s: %s axis %d index %s = %d at %v, outside [%d,%d)", op.Desc, tn.Name, ax, x, v, env, lo, hi)
				}
			}
		}
		env := make([]int, p.NumIters)
		for {
			check(op.LHS, p.LHS, p.LHSDims, env)
			for i, r := range p.RHS {
				check(op.RHS[i], r, p.RHSDims[i], env)
			}
			i := 0
			for ; i < len(env); i++ {
				env[i]++
				if env[i] < p.Extent[i] {
					break
				}
				env[i] = 0
			}
			if i == len(env) {
				break
			}
		}
	}
}
