package loopir

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/internal/testutil"
	"github.com/ocannlgen/ocannlgen/ops"
	"github.com/ocannlgen/ocannlgen/rt"
)

// matmulGraph is c = a (3x4) times b (4x5), the einsum "ij;jk=>ik".
func matmulGraph(av, bv []float64) *gbuild {
	b := newG()
	a := b.input("a", av, 3, 4)
	bb := b.input("b", bv, 4, 5)
	c := b.result("c", 3, 5)
	b.op(&inference.Op{Kind: inference.OpEinsum, Prim: "mul", Accum: "add", InitNeutral: true, LHS: c, RHS: []int{a, bb},
		Desc: `einsum "+*" "ij;jk=>ik"`,
		Proj: proj(flags{surj: true, zero: true, acc: true},
			product(f1(0, 3), f1(1, 5), f1(2, 4)),
			ix(it(0), it(1)), ix(it(0), it(2)), ix(it(2), it(1)))})
	return b
}

func TestMatmul(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	av, bv := randValues(r, 12), randValues(r, 20)
	p, s := runBoth(t, matmulGraph(av, bv).g)
	want := make([]float64, 15)
	for i := range 3 {
		for k := range 5 {
			sum := 0.0
			for j := range 4 {
				sum += av[i*4+j] * bv[j*5+k]
			}
			want[i*5+k] = sum
		}
	}
	expectValues(t, s, p, "c", want)
}

func TestMatmulDump(t *testing.T) {
	b := newG()
	a := b.tensor("a", inference.Input, inference.TensorInit{Kind: inference.InitRange}, 3, 4)
	bb := b.tensor("b", inference.Param, inference.TensorInit{Kind: inference.InitConst, Value: 0.5}, 4, 5)
	c := b.result("c", 3, 5)
	b.op(&inference.Op{Kind: inference.OpEinsum, Prim: "mul", Accum: "add", InitNeutral: true, LHS: c, RHS: []int{a, bb},
		Desc: `einsum "+*" "ij;jk=>ik" of a, b`,
		Proj: proj(flags{surj: true, zero: true, acc: true},
			product(f1(0, 3), f1(1, 5), f1(2, 4)),
			ix(it(0), it(1)), ix(it(0), it(2)), ix(it(2), it(1)))})
	p, err := Lower(b.g)
	if err != nil {
		t.Fatal(err)
	}
	want := `# init a (input)
init a: range over offsets

# init b (param)
init b: constant 0.5

# c = einsum "+*" "ij;jk=>ik" of a, b
fill c with 0
for i0 in 0..2:
  for i1 in 0..4:
    for i2 in 0..3:  # reduction
      c[i0, i1] += a[i0, i2] * b[i2, i1]
`
	if got := p.String(); got != want {
		t.Errorf("dump:\n%s\nwant:\n%s", got, want)
	}
	pa, err := LowerUpTo(b.g, "assign")
	if err != nil {
		t.Fatal(err)
	}
	wantAssign := `# init a (input)
init a: range over offsets

# init b (param)
init b: constant 0.5

# c = einsum "+*" "ij;jk=>ik" of a, b
fill c with 0
c[i0, i1] += a[i0, i2] * b[i2, i1]
  over i0 in 0..2, i1 in 0..4, i2 in 0..3
`
	if got := pa.String(); got != wantAssign {
		t.Errorf("assign-stage dump:\n%s\nwant:\n%s", got, wantAssign)
	}
	// The values: a[i,j] = 4i+j, b = 0.5, so c[i,k] = 0.5*sum_j (4i+j).
	s, err := Run[float64](p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		want := 0.5 * float64(16*i+6)
		for k := range 5 {
			if got := s.Values(c)[i*5+k]; got != want {
				t.Fatalf("c[%d,%d] = %v, want %v", i, k, got, want)
			}
		}
	}
}

func TestLowerUpToUnknownPass(t *testing.T) {
	if _, err := LowerUpTo(newG().g, "nope"); err == nil || !strings.Contains(err.Error(), `unknown pass "nope"`) {
		t.Errorf("err = %v", err)
	}
	var names []string
	for _, ps := range Passes() {
		names = append(names, ps.Name)
	}
	if got := strings.Join(names, ","); got != "assign,loops,pad,check" {
		t.Errorf("passes = %s", got)
	}
}

func TestScalarTimesMatrix(t *testing.T) {
	b := newG()
	s := b.tensor("s", inference.Number, inference.TensorInit{Kind: inference.InitConst, Value: 2.5}, 1)
	mv := seq(1, 12)
	m := b.input("m", mv, 3, 4)
	r := b.result("r", 3, 4)
	b.op(&inference.Op{Kind: inference.OpPointwise, Prim: "mul", LHS: r, RHS: []int{s, m}, Desc: `pointwise "*."`,
		Proj: proj(flags{inj: true, surj: true}, product(f1(0, 3), f1(1, 4)),
			ix(it(0), it(1)), ix(fx(0)), ix(it(0), it(1)))})
	p, st := runBoth(t, b.g)
	want := make([]float64, 12)
	for k := range want {
		want[k] = 2.5 * mv[k]
	}
	expectValues(t, st, p, "r", want)
	d := p.String()
	expectContains(t, d, "    r[i0, i1] = s[0] * m[i0, i1]\n")
	if strings.Contains(d, "fill r") || strings.Contains(d, "reduction") {
		t.Errorf("a plain pointwise store needs no pre-fill and has no reduction:\n%s", d)
	}
}

func TestSumByOnes(t *testing.T) {
	b := newG()
	mv := seq(1, 12)
	m := b.input("m", mv, 3, 4)
	ones := b.tensor("ones", inference.Leaf, inference.TensorInit{Kind: inference.InitConst, Value: 1}, 4)
	r := b.result("r", 3)
	b.op(&inference.Op{Kind: inference.OpCompose, Prim: "mul", Accum: "add", InitNeutral: true, LHS: r, RHS: []int{m, ones}, Desc: `compose "*"`,
		Proj: proj(flags{surj: true, zero: true, acc: true}, product(f1(0, 3), f1(1, 4)),
			ix(it(0)), ix(it(0), it(1)), ix(it(1)))})
	p, st := runBoth(t, b.g)
	expectValues(t, st, p, "r", []float64{1 + 2 + 3 + 4, 5 + 6 + 7 + 8, 9 + 10 + 11 + 12})
	// The compose expression is `=:+`: neutral pre-fill and read-back.
	d := p.String()
	expectContains(t, d, "fill r with 0\nfor i0 in 0..2:\n  for i1 in 0..3:  # reduction\n    r[i0] += m[i0, i1] * ones[i1]\n")
}

func TestValidConv(t *testing.T) {
	b := newG()
	xv, wv := []float64{1, 2, -1, 3, 0.5, 4, -2}, []float64{1, -1, 2}
	x := b.input("x", xv, 7)
	w := b.input("w", wv, 3)
	out := b.result("out", 5)
	b.op(&inference.Op{Kind: inference.OpEinsum, Prim: "mul", Accum: "add", InitNeutral: true, LHS: out, RHS: []int{x, w},
		Proj: proj(flags{surj: true, zero: true, acc: true}, product(f1(0, 5), f1(1, 3)),
			ix(it(0)), ix(af(0, 1, 0, 1, 1)), ix(it(1)))})
	p, st := runBoth(t, b.g)
	want := make([]float64, 5)
	for o := range 5 {
		for k := range 3 {
			want[o] += xv[o+k] * wv[k]
		}
	}
	expectValues(t, st, p, "out", want)
	expectContains(t, p.String(), "out[i0] += x[i0 + i1] * w[i1]")
}

// TestPaddedConv reads one padded tensor with a convolution (margins 0),
// a max-pool (margins -inf) and the convolution again: each reader must
// reset the margins to its own neutral element.
func TestPaddedConv(t *testing.T) {
	b := newG()
	xv, wv := []float64{-1, -2, -0.5, -3, -4, -1.5}, []float64{1, 2, 3}
	x := b.input("x", xv, 6)
	// Kernel 3: right = (3+1)/2 = 2, left = 3-2 = 1 (digest §4.6).
	b.g.Tensors[x].Padding = []inference.Padding{{Left: 1, Right: 2}}
	w := b.input("w", wv, 3)
	conv := func(name string) {
		o := b.result(name, 6)
		b.op(&inference.Op{Kind: inference.OpEinsum, Prim: "mul", Accum: "add", InitNeutral: true, LHS: o, RHS: []int{x, w},
			Desc: "conv " + name,
			Proj: proj(flags{surj: true, zero: true, acc: true}, product(f1(0, 6), f1(1, 3)),
				ix(it(0)), ix(af(-1, 1, 0, 1, 1)), ix(it(1)))})
	}
	conv("c1")
	pool := b.result("pool", 6)
	b.op(&inference.Op{Kind: inference.OpEinsum, Prim: "id", Accum: "max", InitNeutral: true, LHS: pool, RHS: []int{x},
		Desc: "max pool",
		Proj: proj(flags{surj: true, zero: true, acc: true}, product(f1(0, 6), f1(1, 3)),
			ix(it(0)), ix(af(-1, 1, 0, 1, 1)))})
	conv("c2")
	p, st := runBoth(t, b.g)
	xz := func(i int) (float64, bool) {
		if i < 0 || i >= len(xv) {
			return 0, false
		}
		return xv[i], true
	}
	wantConv := make([]float64, 6)
	wantPool := make([]float64, 6)
	for o := range 6 {
		wantPool[o] = math.Inf(-1)
		for k := range 3 {
			v, in := xz(o + k - 1)
			wantConv[o] += v * wv[k]
			if in {
				wantPool[o] = math.Max(wantPool[o], v)
			}
		}
	}
	expectValues(t, st, p, "c1", wantConv)
	expectValues(t, st, p, "pool", wantPool)
	expectValues(t, st, p, "c2", wantConv)
	if got := p.Tensors[x].BufDims; len(got) != 1 || got[0] != 9 {
		t.Errorf("x buffer dims = %v, want [9]", got)
	}
	d := p.String()
	expectContains(t, d, "# padded x: dims 6, margins (left+right) 1+2, buffer 9\n")
	expectContains(t, d, "# c1 = conv c1\nreset padding of x to 0\nfill c1 with 0\n")
	expectContains(t, d, "# pool = max pool\nreset padding of x to -inf\nfill pool with -inf\n")
	expectContains(t, d, "reset padding of x to -inf\nfill pool with -inf\n")
	// The semantic index o+k-1 plus the left margin 1.
	expectContains(t, d, "c1[i0] += x[i0 + i1] * w[i1]")
	expectContains(t, d, "pool[i0] max= x[i0 + i1]")
	// Before the pad pass, the semantic index and no margin resets.
	pl, err := LowerUpTo(b.g, "loops")
	if err != nil {
		t.Fatal(err)
	}
	dl := pl.String()
	expectContains(t, dl, "# padded x: dims 6, margins (left+right) 1+2, not yet applied\n")
	expectContains(t, dl, "# c1 = conv c1\nfill c1 with 0\n")
	expectContains(t, dl, "c1[i0] += x[i0 + i1 - 1] * w[i1]")
}

func TestStridedInterleave(t *testing.T) {
	b := newG()
	t1 := b.input("t1", []float64{1, 2, 3, 4}, 4)
	t2 := b.input("t2", []float64{10, 20, 30, 40}, 4)
	tt := b.tensor("t", inference.Target, inference.TensorInit{}, 8)
	// t =:+ id t1 ~logic:"i => 2*i"; t =+ id t2 ~logic:"i => 2*i+1"
	b.op(&inference.Op{Kind: inference.OpEinsum, Prim: "id", Accum: "add", InitNeutral: true, Assign: true, LHS: tt, RHS: []int{t1},
		Desc: "even", Proj: proj(flags{inj: true, zero: true}, product(f1(0, 4)), ix(af(0, 2, 0)), ix(it(0)))})
	b.op(&inference.Op{Kind: inference.OpEinsum, Prim: "id", Accum: "add", Assign: true, LHS: tt, RHS: []int{t2},
		Desc: "odd", Proj: proj(flags{inj: true, acc: true}, product(f1(0, 4)), ix(af(1, 2, 0)), ix(it(0)))})
	p, st := runBoth(t, b.g)
	expectValues(t, st, p, "t", []float64{1, 10, 2, 20, 3, 30, 4, 40})
	d := p.String()
	expectContains(t, d, "fill t with 0\nfor i0 in 0..3:\n  t[2*i0] = t1[i0]\n")
	expectContains(t, d, "  t[2*i0 + 1] += t2[i0]\n")
}

func TestConcatenation(t *testing.T) {
	b := newG()
	av, bv := seq(1, 6), seq(100, 8)
	a := b.input("a", av, 2, 3)
	bb := b.input("b", bv, 2, 4)
	c := b.result("c", 2, 7)
	// a; b => a^b along the second axis: one coupled factor {i1, i2}.
	b.op(&inference.Op{Kind: inference.OpBlock, Prim: "id", Accum: "add", InitNeutral: true, LHS: c, RHS: []int{a, bb},
		Desc: "concat", Proj: proj(flags{inj: true, surj: true}, product(f1(0, 2), coupled(1, 3, 2, 4)),
			ix(it(0), cat(1, 3, 2, 4)), ix(it(0), it(1)), ix(it(0), it(2)))})
	p, st := runBoth(t, b.g)
	var want []float64
	for r := range 2 {
		want = append(want, av[r*3:r*3+3]...)
		want = append(want, bv[r*4:r*4+4]...)
	}
	expectValues(t, st, p, "c", want)
	expectContains(t, p.String(), `# c = concat
for i0 in 0..1:
  for i1 in 0..2:
    c[i0, i1] = a[i0, i1]
  for i1 in 0..3:
    c[i0, i1 + 3] = b[i0, i1]
`)
	pa, err := LowerUpTo(b.g, "assign")
	if err != nil {
		t.Fatal(err)
	}
	expectContains(t, pa.String(), "# c = concat\nc[i0, concat(i1,i2)] = block(a[i0, i1], b[i0, i2])\n  over i0 in 0..1, (i1 in 0..2 then i2 in 0..3)\n")
}

func TestStack(t *testing.T) {
	b := newG()
	x := b.input("x", []float64{1, 2, 3}, 3)
	y := b.input("y", []float64{4, 5, 6}, 3)
	z := b.input("z", []float64{7, 8, 9}, 3)
	s := b.result("s", 3, 3)
	// The regular coupled factor: one size-1 component per source; the
	// sources do not mention it, so the LHS concat selects them.
	b.op(&inference.Op{Kind: inference.OpStack, Prim: "id", LHS: s, RHS: []int{x, y, z}, Desc: "stack",
		Proj: proj(flags{inj: true, surj: true}, product(coupled(0, 1, 1, 1, 2, 1), f1(3, 3)),
			ix(cat(0, 1, 1, 1, 2, 1), it(3)), ix(it(3)), ix(it(3)), ix(it(3)))})
	p, st := runBoth(t, b.g)
	expectValues(t, st, p, "s", seq(1, 9))
}

func TestPrefixSuffixExtraction(t *testing.T) {
	b := newG()
	src := b.input("src", []float64{1, 2, 3, 4, 5}, 5)
	pre := b.result("pre", 2)
	suf := b.result("suf", 3)
	// pre =:+ src ~logic:"a^b => a"; suf =:+ src ~logic:"a^b => b"
	b.op(&inference.Op{Kind: inference.OpEinsum, Prim: "id", Accum: "add", InitNeutral: true, LHS: pre, RHS: []int{src},
		Desc: "prefix", Proj: proj(flags{inj: true, surj: true}, product(coupled(0, 2, 1, 3)), ix(it(0)), ix(cat(0, 2, 1, 3)))})
	b.op(&inference.Op{Kind: inference.OpEinsum, Prim: "id", Accum: "add", InitNeutral: true, LHS: suf, RHS: []int{src},
		Desc: "suffix", Proj: proj(flags{inj: true, surj: true}, product(coupled(0, 2, 1, 3)), ix(it(1)), ix(cat(0, 2, 1, 3)))})
	p, st := runBoth(t, b.g)
	expectValues(t, st, p, "pre", []float64{1, 2})
	expectValues(t, st, p, "suf", []float64{3, 4, 5})
	d := p.String()
	expectContains(t, d, "# pre = prefix\nfor i0 in 0..1:\n  pre[i0] = src[i0]\n\n")
	expectContains(t, d, "# suf = suffix\nfor i0 in 0..2:\n  suf[i0] = src[i0 + 2]\n")
}

func TestPartialUpdate(t *testing.T) {
	b := newG()
	tgt := b.input("tgt", []float64{1, 1, 1, 1, 1}, 5)
	tgt2 := b.input("tgt2", []float64{1, 1, 1, 1, 1}, 5)
	src := b.input("src", []float64{10, 20}, 2)
	src3 := b.input("src3", []float64{7, 8, 9}, 3)
	// tgt =+ src ~logic:"a => a^b" (accumulate, no pre-fill).
	b.op(&inference.Op{Kind: inference.OpEinsum, Prim: "id", Accum: "add", Assign: true, LHS: tgt, RHS: []int{src},
		Desc: "prefix update", Proj: proj(flags{inj: true, acc: true}, product(coupled(0, 2, 1, 3)), ix(cat(0, 2, 1, 3)), ix(it(0)))})
	// tgt2 =: src3 ~logic:"b => a^b" with a plain store and no pre-fill.
	b.op(&inference.Op{Kind: inference.OpEinsum, Prim: "id", Accum: "", Assign: true, LHS: tgt2, RHS: []int{src3},
		Desc: "suffix write", Proj: proj(flags{inj: true}, product(coupled(0, 2, 1, 3)), ix(cat(0, 2, 1, 3)), ix(it(1)))})
	p, st := runBoth(t, b.g)
	expectValues(t, st, p, "tgt", []float64{11, 21, 1, 1, 1})
	expectValues(t, st, p, "tgt2", []float64{1, 1, 7, 8, 9})
	expectContains(t, p.String(), "# tgt2 = suffix write\nfor i0 in 0..2:\n  tgt2[i0 + 2] = src3[i0]\n")
}

func TestMiddleExtraction(t *testing.T) {
	b := newG()
	src := b.input("src", seq(0, 9), 9)
	mid := b.result("mid", 3)
	skip := b.result("skip", 4)
	b.op(&inference.Op{Kind: inference.OpEinsum, Prim: "id", Accum: "add", InitNeutral: true, LHS: mid, RHS: []int{src},
		Desc: "a^b^c => b", Proj: proj(flags{inj: true, surj: true}, product(coupled(0, 2, 1, 3, 2, 4)), ix(it(1)), ix(cat(0, 2, 1, 3, 2, 4)))})
	// "3^a => a" on a 7-vector: a constant block of 3 skipped, never active.
	src7 := b.input("src7", seq(0, 7), 7)
	b.op(&inference.Op{Kind: inference.OpEinsum, Prim: "id", Accum: "add", InitNeutral: true, LHS: skip, RHS: []int{src7},
		Desc: "3^a => a", Proj: proj(flags{inj: true, surj: true}, product(f1(0, 4)), ix(it(0)), ix(cat(-1, 3, 0, 4)))})
	p, st := runBoth(t, b.g)
	expectValues(t, st, p, "mid", []float64{2, 3, 4})
	expectValues(t, st, p, "skip", []float64{3, 4, 5, 6})
}

func TestBlockMatrix(t *testing.T) {
	b := newG()
	A := b.input("A", seq(1, 6), 2, 3)
	B := b.input("B", seq(11, 4), 2, 2)
	C := b.input("C", seq(21, 3), 1, 3)
	D := b.input("D", seq(31, 2), 1, 2)
	M := b.result("M", 3, 5)
	// Rows r^s (r=i0:2, s=i1:1), columns c^t (c=i2:3, t=i3:2).
	b.op(&inference.Op{Kind: inference.OpBlock, Prim: "id", Accum: "add", InitNeutral: true, LHS: M, RHS: []int{A, B, C, D},
		Desc: "block matrix", Proj: proj(flags{inj: true, surj: true}, product(coupled(0, 2, 1, 1), coupled(2, 3, 3, 2)),
			ix(cat(0, 2, 1, 1), cat(2, 3, 3, 2)), ix(it(0), it(2)), ix(it(0), it(3)), ix(it(1), it(2)), ix(it(1), it(3)))})
	p, st := runBoth(t, b.g)
	expectValues(t, st, p, "M", []float64{
		1, 2, 3, 11, 12,
		4, 5, 6, 13, 14,
		21, 22, 23, 31, 32,
	})
}

// TestDiagonal: both LHS axes concatenate the same coupled iterators, so
// only the diagonal blocks are ever active.
func TestDiagonal(t *testing.T) {
	b := newG()
	a := b.input("a", []float64{1, 2}, 2)
	bb := b.input("b", []float64{3, 4, 5}, 3)
	out := b.result("out", 5, 5)
	b.op(&inference.Op{Kind: inference.OpBlock, Prim: "id", Accum: "add", InitNeutral: true, LHS: out, RHS: []int{a, bb},
		Desc: "diag", Proj: proj(flags{inj: true, zero: true}, product(coupled(0, 2, 1, 3)),
			ix(cat(0, 2, 1, 3), cat(0, 2, 1, 3)), ix(it(0)), ix(it(1)))})
	p, st := runBoth(t, b.g)
	want := make([]float64, 25)
	for i, v := range []float64{1, 2, 3, 4, 5} {
		want[i*5+i] = v
	}
	expectValues(t, st, p, "out", want)
	expectContains(t, p.String(), "fill out with 0\nfor i0 in 0..1:\n  out[i0, i0] = a[i0]\nfor i0 in 0..2:\n  out[i0 + 2, i0 + 2] = b[i0]\n")
}

func TestAmbiguousConcatenation(t *testing.T) {
	// Two rectangles that overlap at (r, c): A covers rows r (all of the
	// columns' components), B covers columns c (all rows).
	b := newG()
	A := b.input("A", seq(1, 2), 2)
	B := b.input("B", seq(1, 3), 3)
	M := b.result("M", 3, 5)
	b.op(&inference.Op{Kind: inference.OpBlock, Prim: "id", Accum: "add", InitNeutral: true, LHS: M, RHS: []int{A, B},
		Desc: "overlap", Proj: proj(flags{zero: true}, product(coupled(0, 2, 1, 1), coupled(2, 3, 3, 2)),
			ix(cat(0, 2, 1, 1), cat(2, 3, 3, 2)), ix(it(0)), ix(it(2)))})
	_, err := Lower(b.g)
	want := "ambiguous indices in concatenation: operands 0 (A) and 1 (B) both write M at M[i0, i1]"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want it to contain %q", err, want)
	}
	if _, ok := err.(*Error); !ok {
		t.Errorf("err is %T, want *loopir.Error", err)
	}

	// A stack whose LHS concat has a third (constant) part: the selector
	// rule does not apply and both sources are active together.
	b = newG()
	x := b.input("x", seq(1, 2), 2)
	y := b.input("y", seq(1, 2), 2)
	s := b.result("s", 3, 2)
	b.op(&inference.Op{Kind: inference.OpStack, Prim: "id", LHS: s, RHS: []int{x, y}, Desc: "stack",
		Proj: proj(flags{}, product(coupled(0, 1, 1, 1), f1(2, 2)),
			ix(cat(0, 1, -1, 1, 1, 1), it(2)), ix(it(2)), ix(it(2)))})
	if _, err := Lower(b.g); err == nil || !strings.Contains(err.Error(), "ambiguous indices in concatenation: operands 0 (x) and 1 (y) both write s at s[i0, i1]") {
		t.Errorf("err = %v", err)
	}
}

func TestPrimitives(t *testing.T) {
	xv := []float64{-1.5, 0, 0.25, 2}
	yv := []float64{2, 0, 0.25, -1}
	zv := []float64{3, 4, 5, 6}
	unary := map[ops.PrimName][]float64{
		"id":         {-1.5, 0, 0.25, 2},
		"relu":       {0, 0, 0.25, 2},
		"sat01":      {0, 0, 0.25, 1},
		"neg":        {1.5, 0, -0.25, -2},
		"not":        {0, 1, 0, 0},
		"exp":        {math.Exp(-1.5), 1, math.Exp(0.25), math.Exp(2)},
		"exp2":       {math.Pow(2, -1.5), 1, math.Pow(2, 0.25), 4},
		"sin":        {math.Sin(-1.5), 0, math.Sin(0.25), math.Sin(2)},
		"cos":        {math.Cos(-1.5), 1, math.Cos(0.25), math.Cos(2)},
		"tanh":       {math.Tanh(-1.5), 0, math.Tanh(0.25), math.Tanh(2)},
		"recip":      {-1 / 1.5, math.Inf(1), 4, 0.5},
		"sqrt":       {math.NaN(), 0, 0.5, math.Sqrt(2)},
		"recip_sqrt": {math.NaN(), math.Inf(1), 2, 1 / math.Sqrt(2)},
		"log":        {math.NaN(), math.Inf(-1), math.Log(0.25), math.Log(2)},
		"log2":       {math.NaN(), math.Inf(-1), -2, 1},
	}
	binary := map[ops.PrimName][]float64{
		"add": {0.5, 0, 0.5, 1},
		"sub": {-3.5, 0, 0, 3},
		"mul": {-3, 0, 0.0625, -2},
		"div": {-0.75, math.NaN(), 1, -2},
		"pow": {2.25, 1, math.Pow(0.25, 0.25), 0.5},
		"lt":  {1, 0, 0, 0},
		"eq":  {0, 1, 1, 0},
		"ne":  {1, 0, 0, 1},
	}
	ternary := map[ops.PrimName][]float64{
		"where": {2, 4, 0.25, -1},
		"fma":   {0, 4, 5.0625, 4},
	}
	b := newG()
	x := b.input("x", xv, 4)
	y := b.input("y", yv, 4)
	z := b.input("z", zv, 4)
	expect := map[string][]float64{}
	add := func(prim ops.PrimName, want []float64, args ...int) {
		r := b.result("r_"+string(prim), 4)
		var rhs [][]inference.Index
		for range args {
			rhs = append(rhs, ix(it(0)))
		}
		b.op(&inference.Op{Kind: inference.OpPointwise, Prim: prim, LHS: r, RHS: args, Desc: string(prim),
			Proj: proj(flags{inj: true, surj: true}, product(f1(0, 4)), ix(it(0)), rhs...)})
		expect["r_"+string(prim)] = want
	}
	for prim, want := range unary {
		add(prim, want, x)
	}
	for prim, want := range binary {
		add(prim, want, x, y)
	}
	for prim, want := range ternary {
		add(prim, want, x, y, z)
	}
	p, err := Lower(b.g)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Run[float64](p)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range expect {
		got := s.Values(p.Lookup(name))
		for k := range want {
			if !testutil.CloseRel(got[k], want[k], 1e-12) {
				t.Errorf("%s = %v, want %v", name, got, want)
				break
			}
		}
	}
}

func TestAccumulators(t *testing.T) {
	mv := []float64{3, -1, 2, 0.5, 4, -2}
	cases := []struct {
		accum ops.AccumName
		fill  string
		want  []float64
	}{
		{"add", "0", []float64{4, 2.5}},
		{"sub", "0", []float64{-4, -2.5}},
		{"mul", "1", []float64{-6, -4}},
		{"div", "1", []float64{1.0 / 3 / -1 / 2, 1 / 0.5 / 4 / -2}},
		{"max", "-inf", []float64{3, 4}},
		{"min", "inf", []float64{-1, -2}},
	}
	for _, c := range cases {
		b := newG()
		m := b.input("m", mv, 2, 3)
		r := b.result("r", 2)
		b.op(&inference.Op{Kind: inference.OpEinsum, Prim: "id", Accum: c.accum, InitNeutral: true, LHS: r, RHS: []int{m},
			Desc: "reduce " + string(c.accum), Proj: proj(flags{surj: true, zero: true, acc: true}, product(f1(0, 2), f1(1, 3)), ix(it(0)), ix(it(0), it(1)))})
		p, s := runBoth(t, b.g)
		expectValues(t, s, p, "r", c.want)
		expectContains(t, p.String(), "fill r with "+c.fill+"\n")
		expectContains(t, p.String(), "r[i0] "+accumSymbol[c.accum]+" m[i0, i1]")
	}
}

func TestFetches(t *testing.T) {
	b := newG()
	rg := b.tensor("rg", inference.Input, inference.TensorInit{Kind: inference.InitRange}, 2, 3)
	vs := b.tensor("vs", inference.Literal, inference.TensorInit{Kind: inference.InitValues, Values: []float64{1, 2}}, 5)
	w := b.tensor("w", inference.Param, inference.TensorInit{Kind: inference.InitRandom}, 2, 3)
	dim := b.tensor("dim_n", inference.DimScalar, inference.TensorInit{}, 1)
	b.g.Tensors[dim].DimValue = 7
	z := b.tensor("z", inference.Leaf, inference.TensorInit{}, 2)
	res := b.result("res", 2)
	_ = res
	p, s := runBoth(t, b.g)
	expectValues(t, s, p, "rg", []float64{0, 1, 2, 3, 4, 5})
	expectValues(t, s, p, "vs", []float64{1, 2, 1, 2, 1})
	expectValues(t, s, p, "dim_n", []float64{7})
	expectValues(t, s, p, "z", []float64{0, 0})
	// The random init is rt's default init keyed by rt.ParamKey("w") and
	// the default seed (TestRandomInitMatchesRT checks it bit for bit).
	want := make([]float64, 6)
	rt.DefaultInit(want, rt.InnerKey(rt.ParamKey("w"), rt.DefaultSeed, false))
	expectValues(t, s, p, "w", want)
	for _, v := range s.Values(w) {
		if v < -0.25 || v >= 0.25 {
			t.Errorf("random init value %v outside [-0.25, 0.25)", v)
		}
	}
	// Results have no fetch; every leaf kind has one.
	var fetched []string
	for _, o := range p.Ops {
		if f, ok := o.Assignment.(*Fetch); ok {
			fetched = append(fetched, p.Tensors[f.Tensor].Name)
		}
	}
	if got := strings.Join(fetched, ","); got != "rg,vs,w,dim_n,z" {
		t.Errorf("fetched %s", got)
	}
	_, _, _ = rg, vs, z
}

func TestOutOfRangeIsAnError(t *testing.T) {
	b := newG()
	x := b.input("x", seq(0, 3), 3)
	r := b.result("r", 3)
	b.op(&inference.Op{Kind: inference.OpPointwise, Prim: "id", LHS: r, RHS: []int{x}, Desc: "shift",
		Proj: proj(flags{inj: true, surj: true}, product(f1(0, 3)), ix(it(0)), ix(af(1, 1, 0)))})
	_, err := Lower(b.g)
	if err == nil || !strings.Contains(err.Error(), "access x[i0 + 1]") || !strings.Contains(err.Error(), "outside the buffer's 0..2") {
		t.Errorf("err = %v", err)
	}
	// A lowered program corrupted afterwards is still rejected by Run.
	b = newG()
	x = b.input("x", seq(0, 3), 3)
	r = b.result("r", 3)
	b.op(&inference.Op{Kind: inference.OpPointwise, Prim: "id", LHS: r, RHS: []int{x}, Desc: "copy",
		Proj: proj(flags{inj: true, surj: true}, product(f1(0, 3)), ix(it(0)), ix(it(0)))})
	p, err := Lower(b.g)
	if err != nil {
		t.Fatal(err)
	}
	st := p.Ops[len(p.Ops)-1].Body[0].(*For).Body[0].(*Store)
	st.Index[0].Offset = 5
	if _, err := Run[float64](p); err == nil || !strings.Contains(err.Error(), "r[i0 + 5]") {
		t.Errorf("err = %v", err)
	}
	// A partially lowered program does not run.
	p, err = LowerUpTo(b.g, "loops")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run[float32](p); err == nil || !strings.Contains(err.Error(), "not fully lowered") {
		t.Errorf("err = %v", err)
	}
}

func TestContractErrors(t *testing.T) {
	cases := []struct {
		name string
		mod  func(op *inference.Op)
		want string
	}{
		{"no proj", func(op *inference.Op) { op.Proj = nil }, "no projections"},
		{"rank", func(op *inference.Op) { op.Proj.LHS = ix(it(0), it(1)) }, "r has 1 axes but its projection has 2 indices"},
		{"prim", func(op *inference.Op) { op.Prim = "frob" }, `unknown primitive "frob"`},
		{"arity", func(op *inference.Op) { op.Prim = "add" }, `primitive "add" takes 2 operand(s), got 1`},
		{"iter", func(op *inference.Op) { op.Proj.RHS[0] = ix(it(4)) }, "iterator i4 is not in the product space"},
		{"dims", func(op *inference.Op) { op.Proj.LHSDims = []int{4} }, "r has dims [3] but its projection says [4]"},
	}
	for _, c := range cases {
		b := newG()
		x := b.input("x", seq(0, 3), 3)
		r := b.result("r", 3)
		op := &inference.Op{Kind: inference.OpPointwise, Prim: "id", LHS: r, RHS: []int{x}, Desc: "copy",
			Proj: proj(flags{inj: true, surj: true}, product(f1(0, 3)), ix(it(0)), ix(it(0)))}
		c.mod(op)
		b.op(op)
		if _, err := Lower(b.g); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}

// TestRecoverNamesTheAccess bypasses the static check to exercise the
// interpreter's last line of defence: the panic becomes an error naming
// the tensor and the offending index.
func TestRecoverNamesTheAccess(t *testing.T) {
	b := newG()
	x := b.input("x", seq(0, 3), 3)
	r := b.result("r", 3)
	b.op(&inference.Op{Kind: inference.OpPointwise, Prim: "neg", LHS: r, RHS: []int{x}, Desc: "negate",
		Proj: proj(flags{inj: true, surj: true}, product(f1(0, 3)), ix(it(0)), ix(it(0)))})
	p, err := Lower(b.g)
	if err != nil {
		t.Fatal(err)
	}
	st := p.Ops[len(p.Ops)-1].Body[0].(*For).Body[0].(*Store)
	st.Value.(*Apply).Args[0].(*Load).Index[0].Offset = 1
	s := newState[float32](p)
	err = s.execute()
	want := "loopir: run: op 0 (r = negate): index [3] out of range for x (buffer dims [3])"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}
