package explain

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/small.html from Render's output")

// smallPage is a hand-made page: a model with two parameters and one
// entry (x * w1 + b1, summed), with provenance.
func smallPage() *Page {
	at := func(line, col, spec int) Pos { return Pos{Source: "src1", Line: line, Col: col, SpecCol: spec} }
	elab := func(v, op string, p Pos) Step {
		return Step{Stage: "elaborate", StageRule: "the operation's constraints", Op: op, At: p, Value: v}
	}
	compose := `compose "*" of w1, x`
	axIn := Axis{Label: "d", Size: 3, Steps: []Step{
		elab("?4", compose, at(4, 12, 3)),
		{Stage: "elaborate", StageRule: "the operation's constraints", Op: "input x", At: at(2, 3, 0), Value: "3", Final: true},
	}}
	axOut := Axis{Size: 4, Given: "4", Steps: nil}
	axBatch := Axis{Size: 2, Steps: []Step{{Stage: "stage2", StageRule: "close batch rows with the input's", Op: "input x", At: at(2, 3, 0), Value: "2", Final: true}}}
	bcast := Axis{Size: 1, Broadcast: true, Steps: []Step{{Stage: "stage4", StageRule: "default the remaining dims to 1", Op: "closing", Value: "1", Final: true}}}
	rowSteps := []Step{{Stage: "elaborate", StageRule: "the operation's constraints", Op: compose, At: at(4, 12, 0), Value: "[?4]", Final: true}}
	shape := func(text string, b, i, o []Axis) Shape {
		return Shape{Text: text, Rows: [3]Row{{Kind: "batch", Axes: b}, {Kind: "input", Axes: i}, {Kind: "output", Axes: o, Steps: rowSteps}}}
	}
	x := shape("2 | 3", []Axis{axBatch}, nil, []Axis{axIn})
	w1 := shape("3 -> 4", nil, []Axis{axIn}, []Axis{axOut})
	h := shape("2 | 4", []Axis{axBatch}, nil, []Axis{axOut})
	b1 := shape("1,4", nil, nil, []Axis{bcast, axOut})
	loss := shape("[]", nil, nil, nil)
	return &Page{
		Title:   "mlp.ocl",
		Command: "ocannlgen explain --html mlp.ocl",
		Sources: []Source{{ID: "src1", Name: "mlp.ocl", FirstLine: 1, Lines: []string{
			"model mlp {",
			"  x = input 2 | 3",
			"  w1 = param 3 -> 4  // <weights> & \"bias\"",
			"  h = w1 * x + b1",
			"  loss = sum h",
			"}",
		}}},
		Units: []Unit{{
			ID: "u1", Name: "mlp", Kind: "model", Pos: at(1, 1, 0), Elem: "float32",
			Params: []Param{
				{Name: "w1", Shape: w1, Cells: 12, Bytes: 48, Init: "normal, std 1/sqrt(fan-in 3)", Pos: at(3, 3, 0),
					SizedBy: []AxisSource{
						{Axis: "input 1", Size: "3", Entry: "loss", Step: axIn.Steps[0]},
						{Axis: "output 1", Size: "4", Given: true},
					}},
				{Name: "b1", Shape: b1, Cells: 4, Bytes: 16, Init: "constant 0", Pos: at(4, 16, 0),
					SizedBy: []AxisSource{{Axis: "output 2", Size: "4", Entry: "loss", Step: elab("4", `pointwise "+" of _h1.1, b1`, at(4, 14, 0))}}},
			},
			MemoryBytes: 192,
			Memory:      []MemoryPart{{What: "parameters", Bytes: 64}, {What: "gradients", Bytes: 64}, {What: "Adam moments", Bytes: 64}},
			Entries: []Entry{{
				ID: "u1-e1", Name: "loss", Kind: "loss", Result: "loss",
				ScheduleHeader: "float32, 1 thread, amd64 (avx2)",
				Tensors: []Tensor{
					{ID: 0, Name: "x", Named: true, Kind: "input", Shape: x, Op: -1, Uses: []int{0}, Pos: at(2, 3, 0)},
					{ID: 1, Name: "w1", Named: true, Kind: "param", Shape: w1, Op: -1, Uses: []int{0}, Pos: at(3, 3, 0)},
					{ID: 2, Name: "_h1.1", Kind: "let", Shape: h, Op: 0, Uses: []int{1}, Pos: at(4, 7, 0)},
					{ID: 3, Name: "b1", Named: true, Kind: "param", Shape: b1, Op: -1, Uses: []int{1}, Pos: at(4, 16, 0)},
					{ID: 4, Name: "h", Named: true, Kind: "let", Shape: h, Op: 1, Uses: []int{2}, Pos: at(4, 3, 0)},
					{ID: 5, Name: "loss", Named: true, Kind: "let", Shape: loss, Op: 2, Pos: at(5, 3, 0)},
				},
				Ops: []Op{
					{ID: 0, Desc: compose, Kind: "compose", LHS: 2, RHS: []int{1, 0}, At: at(4, 10, 0),
						Proj: &Projection{Product: []string{"i0<2", "i1<4", "i2<3"}, LHS: "_h1.1[i0, i1]", RHS: []string{"w1[i2, i1]", "x[i0, i2]"},
							Reduced: []string{"i2"}, CoIterated: []string{"i0", "i1", "i2"}, ZeroInit: true, Accumulate: true},
						Schedule: []Nest{{Loops: "i0<2, i1<4, i2<3", Family: "contraction", Kernel: "tile 4x8, tiers avx2/purego", Lines: []string{"parallel split: none"}}}},
					{ID: 1, Desc: `pointwise "+" of _h1.1, b1`, Kind: "pointwise", LHS: 4, RHS: []int{2, 3}, At: at(4, 14, 0),
						Proj:      &Projection{Product: []string{"i0<2", "i1<4"}, LHS: "h[i0, i1]", RHS: []string{"_h1.1[i0, i1]", "b1[0, i1]"}, CoIterated: []string{"i1"}},
						FusedInto: "loss"},
					{ID: 2, Desc: "sum h", Kind: "einsum", Spec: "b|i->o => 0", LHS: 5, RHS: []int{4}, At: at(5, 10, 0),
						Proj:     &Projection{Product: []string{"i0<2", "i1<4"}, LHS: "loss[]", RHS: []string{"h[i0, i1]"}, Reduced: []string{"i0", "i1"}, ZeroInit: true, Accumulate: true},
						Schedule: []Nest{{Loops: "i0<2, i1<4", Family: "reduction", Kernel: "sum, tiers avx2/purego"}}},
				},
			}},
		}},
	}
}

// failurePage is a program whose compose fails; its source holds markup
// that must stay text.
func failurePage() *Page {
	at := func(line, col int) Pos { return Pos{Source: "s", Line: line, Col: col} }
	return &Page{
		Title:   "bad.ocl",
		Command: "ocannlgen explain --html bad.ocl",
		Sources: []Source{{ID: "s", Name: "bad.ocl", FirstLine: 10, Lines: []string{
			"a = input 3",
			"b = input 4 // </script><b>bold</b>",
			`c = a * b`,
		}}},
		Units: []Unit{{
			ID: "u1", Name: "bad.ocl", Kind: "program",
			Failure: &Failure{
				Kind: "dim-mismatch", Message: "bad.ocl:12:7: dim-mismatch: 3 vs 4 in compose \"*\" of a, b",
				At: at(12, 7), Op: `compose "*" of a, b`, Constraint: "?1 = ?2", Relation: "=",
				Sides: []Side{
					{Text: "3", Row: Row{Kind: "output", Axes: []Axis{{Size: 3, Steps: []Step{{Stage: "elaborate", StageRule: "the operation's constraints", Op: "input a", At: at(10, 5), Value: "3", Final: true}}}}}},
					{Text: "4", Row: Row{Kind: "output", Axes: []Axis{{Size: 4, Steps: []Step{{Stage: "elaborate", StageRule: "the operation's constraints", Op: "input b", At: at(11, 5), Value: "4", Final: true}}}}}},
				},
				Related: []Related{{At: at(10, 1), Msg: "a declared here"}, {At: at(11, 1), Msg: "b <declared> here"}},
			},
		}},
	}
}

func render(t testing.TB, p *Page) string {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, p); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestRenderDeterministic(t *testing.T) {
	for _, p := range []*Page{smallPage(), failurePage(), bigPage(2, 300)} {
		a, b := render(t, p), render(t, p)
		if a != b {
			t.Fatalf("%s: two renders differ", p.Title)
		}
	}
}

func TestRenderContract(t *testing.T) {
	out := render(t, smallPage())
	for _, want := range []string{
		"<!DOCTYPE html>",
		`<html lang="en">`,
		`<body data-page="explain" data-status="ok">`,
		`<tr class="tensor" id="u1-e1-t0" data-tensor="x" data-shape="2 | 3">`,
		`<tr class="tensor" id="u1-e1-t2" data-tensor="_h1.1" data-shape="2 | 4">`,
		// w1's input axis: the chain written whole, the last step emphasised.
		`<details class="axd"><summary class="ax i"><i>i</i><b>d</b>3</summary><ol><li class="prov" id="u1-b1">= <b>?4</b> by compose "*" of w1, x at <a href="#src1-L4">4:12 (spec column 3)</a> [elaborate]</li><li class="prov last">= <b>3</b> by input x at <a href="#src1-L2">2:3</a> [elaborate: the operation's constraints] <em>fixed here</em></li></ol></details>`,
		// x's output axis has the same chain: a link to it.
		`<li class="prov last ref">… <a href="#u1-b1">2 more, as for parameter w1, input axis 1</a>, ending = <b>3</b></li>`,
		`<summary class="ax o given"><i>o</i>4</summary><span class="given-note">given by its declaration: <code>4</code></span>`,
		`<details class="rowd"><summary>how</summary><ol><li class="prov last">= <b>[?4]</b> by compose "*" of w1, x at <a href="#src1-L4">4:12</a> [elaborate: the operation's constraints] <em>fixed here</em></li></ol></details>`,
		`<li class="prov last">= <b>2</b> by input x at <a href="#src1-L2">2:3</a> [stage2: close batch rows with the input's] <em>fixed here</em></li>`,
		`<section class="op" id="u1-e1-op0">`,
		`<section class="op" id="u1-e1-op2">`,
		`<dt>product space</dt><dd>i0&lt;2 × i1&lt;4 × i2&lt;3</dd><dt>indices</dt><dd>_h1.1[i0, i1] ← w1[i2, i1], x[i0, i2]</dd><dt>reduced</dt><dd>i2</dd><dt>co-iterated</dt><dd>i0, i1, i2</dd><dt>result</dt><dd>reset, then accumulated</dd>`,
		`<dt>schedule</dt><dd><b>contraction</b> over i0&lt;2, i1&lt;4, i2&lt;3<br>tile 4x8, tiers avx2/purego<br>parallel split: none</dd>`,
		`<dt>schedule</dt><dd>fused into the nest of <a href="#u1-e1-t5">loss</a> (<a href="#u1-e1-op2">#2 einsum</a>)</dd>`,
		`<div class="l" id="src1-L4"><a class="n" href="#src1-L4">4</a><code>  h = w1 * x + b1</code></div>`,
		`// &lt;weights&gt; &amp; "bias"`,
		`<svg class="graph"`,
		`role="img"`,
		`<title id="u1-e1-gt">`,
		`class="edge" data-tensor="_h1.1"`,
		`<th scope="col">Parameter</th>`,
		`<span class="mono">input 1 = 3</span>: by compose "*" of w1, x at <a href="#src1-L4">4:12 (spec column 3)</a> [elaborate: the operation's constraints] in loss</li>`,
		`<span class="mono">output 1 = 4</span>: given by the declaration</li>`,
		`Total: <strong>192 bytes</strong>`,
		`dataset.script="ran"`,
		`<i>o</i>1<small>bcast</small>`,
		`<i>b</i>2`,
		`<section id="stages">`,
		`<dt>stage4</dt><dd>default the remaining dims to 1</dd>`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s", want)
		}
	}
	if strings.Contains(out, `id="failure"`) || strings.Contains(out, "<mark") {
		t.Error("an ok page shows a failure")
	}
	if strings.Contains(out, "without provenance") || strings.Contains(out, "The graph draws the first") {
		t.Error("a small page left something out")
	}
	checkStructure(t, out)
}

func TestRenderFailure(t *testing.T) {
	out := render(t, failurePage())
	for _, want := range []string{
		`<body data-page="explain" data-status="error">`,
		`<section class="failure" id="failure" role="alert">`,
		`<pre class="message">bad.ocl:12:7: dim-mismatch: 3 vs 4 in compose "*" of a, b</pre>`,
		`<dt>constraint</dt><dd class="constraint"><code>?1 = ?2</code></dd>`,
		`<dt>relation</dt><dd><code>=</code></dd>`,
		`<h4>Result side</h4>`, `<h4>Operand side</h4>`,
		`<details class="axd" open><summary class="ax o"><i>o</i>3</summary><ol><li class="prov last">= <b>3</b> by input a at <a href="#s-L10">10:5</a> [elaborate: the operation's constraints] <em>fixed here</em></li></ol></details>`,
		`by input b at <a href="#s-L11">11:5</a>`,
		`<div class="l" id="s-L12"><a class="n" href="#s-L12">12</a><code><mark class="failing" title="dim-mismatch">c = a <span class="at">*</span> b</mark></code></div>`,
		`<div class="l related" id="s-L10">`,
		`b &lt;declared&gt; here`,
		// The source line's markup is text.
		`b = input 4 // &lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s", want)
		}
	}
	if strings.Contains(out, "<b>bold") || strings.Count(out, "</script>") != 1 {
		t.Error("source markup leaked into the page")
	}
	checkStructure(t, out)
}

func TestRenderEscapesEveryString(t *testing.T) {
	// Every string field of the page set to markup: none may appear raw.
	const evil = `</script><b x='1' y="2">&amp;`
	p := smallPage()
	p.Title, p.Command = evil, evil
	p.Sources[0].Name = evil
	u := &p.Units[0]
	u.Name, u.Elem = evil, evil
	u.Params[0].Name, u.Params[0].Init = evil, evil
	u.Memory[0].What = evil
	e := &u.Entries[0]
	e.Name, e.Note, e.ScheduleHeader = evil, evil, evil
	e.Tensors[2].Name, e.Tensors[2].Kind, e.Tensors[2].Shape.Text = evil, evil, evil
	e.Tensors[2].Shape.Rows[0].Axes = []Axis{{Label: evil, Basis: evil, Size: 2, Given: evil, Steps: []Step{{Stage: evil, StageRule: evil, Op: evil, Value: evil}}}}
	e.Ops[0].Desc, e.Ops[0].Kind, e.Ops[0].Spec = evil, evil, evil
	e.Ops[0].Proj.LHS, e.Ops[0].Proj.Product = evil, []string{evil}
	e.Ops[0].Schedule[0].Lines = []string{evil}
	e.Ops[1].FusedInto = evil
	u.Failure = &Failure{Kind: evil, Message: evil, Op: evil, Constraint: evil, Related: []Related{{Msg: evil}}}
	out := render(t, p)
	if strings.Contains(out, "<b x=") || strings.Count(out, "</script>") != 1 {
		t.Fatal("a page string was written unescaped")
	}
	checkStructure(t, out)
}

func TestRenderPositionsOutsideSources(t *testing.T) {
	p := smallPage()
	e := &p.Units[0].Entries[0]
	e.Ops[0].At = Pos{Source: "src1", Line: 99, Col: 1}
	e.Ops[1].At = Pos{Source: "other", Line: 2, Col: 1}
	e.Tensors[0].Uses = []int{0, 7}
	out := render(t, p)
	for _, want := range []string{" · at 99:1</p>", " · at 2:1</p>", `<a href="#u1-e1-op0">#0 compose</a>, #7</td>`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s", want)
		}
	}
	checkStructure(t, out)
}

func TestRenderGolden(t *testing.T) {
	out := render(t, smallPage())
	path := filepath.Join("testdata", "small.html")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./explain -run Golden -update)", err)
	}
	if string(want) != out {
		t.Errorf("Render(smallPage) differs from %s (go test ./explain -run Golden -update, then review the diff)", path)
	}
}

func TestRenderBigPageSize(t *testing.T) {
	p := bigPage(2, 1500)
	out := render(t, p)
	n := strings.Count(out, `<tr class="tensor"`)
	if n != 2*1650 {
		t.Errorf("%d tensor rows, want %d", n, 2*1650)
	}
	if len(out) >= 5_000_000 {
		t.Errorf("page of %d tensors is %d bytes, want under 5 MB", n, len(out))
	}
	if !strings.Contains(out, "The graph draws the first "+strconv.Itoa(maxGraphOps)+" of 1500 operations") {
		t.Error("no note that the graph is capped")
	}
	// The page keeps what fits: named tensors' provenance first (tails
	// shared), then the note for the rest.
	if !strings.Contains(out, `<tr class="tensor" id="u1-e1-t1" data-tensor="_h0.0" data-shape="32,128 | 128 -&gt; 768"><th scope="row">_h0.0 <small>let</small> <a href="#src1-L1">1:7</a></th><td><div class="shape"><span class="row b"><details class="axd">`) {
		t.Error("the first tensor has no provenance")
	}
	if !strings.Contains(out, `<li class="prov last ref">`) {
		t.Error("no shared tail")
	}
	if !strings.Contains(out, "tensors show their shapes without provenance (the named tensors get theirs first).</p>") {
		t.Error("no note that provenance was left out")
	}
	for _, want := range []string{`id="u1-e2-t1649"`, `id="u1-e2-op1499"`} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s: every tensor and operation must be listed", want)
		}
	}
	t.Logf("big page: %d bytes", len(out))
	checkStructure(t, out)
}

func BenchmarkRenderBigPage(b *testing.B) {
	p := bigPage(2, 1500)
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := Render(&buf, p); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "bytes/page")
}

// bigPage is a synthetic decoder-sized page: entries entries of n
// operations each (a chain of matmuls, one in ten reading a parameter),
// n/10 parameters and n results per entry, shapes "32,128 | 768" (one in
// five with an input axis too). Like the solver's record, each axis's
// chain of bindings is the operation's own step followed by the chain of
// the previous result's axis, back to the block's first operation (12 a
// block): up to 13 steps, their tails shared.
func bigPage(entries, n int) *Page {
	src := Source{ID: "src1", Name: "decoder.ocl", FirstLine: 1}
	for i := 0; i < 600; i++ {
		src.Lines = append(src.Lines, fmt.Sprintf("  let h%d = layer_norm (attention h%d) + h%d  # block %d", i+1, i, i, i/50))
	}
	opDesc := func(i int) string { return fmt.Sprintf(`compose "*" of net.blocks.%d.w%d, _h%d.%d`, i/12, i, i/4, i%4) }
	step := func(op int, v string, final bool) Step {
		st := Step{Stage: "elaborate", StageRule: "the operation's constraints", Op: opDesc(op),
			At: Pos{Source: "src1", Line: 1 + op%600, Col: 12, SpecCol: 3}, Value: v, Final: final}
		if final && op%7 == 0 {
			st.Stage, st.StageRule = "stage4", "default the remaining dims to 1"
		}
		return st
	}
	// chain is result i's chain for axis (or row) key a.
	chain := func(i, a int, final string) []Step {
		var out []Step
		for j := i; ; j-- {
			if j%12 == 0 {
				return append(out, step(j, final, true))
			}
			out = append(out, step(j, fmt.Sprintf("?%d", (j-1)*8+a), false))
		}
	}
	axis := func(i, a int, label string, size int) Axis {
		return Axis{Label: label, Size: size, Steps: chain(i, a, fmt.Sprint(size))}
	}
	resultShape := func(i int) Shape {
		sh := Shape{Text: "32,128 | 768", Rows: [3]Row{
			{Kind: "batch", Axes: []Axis{axis(i, 0, "b", 32), axis(i, 1, "t", 128)}, Steps: chain(i, 4, "[?1, ?2]")},
			{Kind: "input", Steps: chain(i, 5, "[]")},
			{Kind: "output", Axes: []Axis{axis(i, 3, "d", 768)}, Steps: chain(i, 6, "[?3]")},
		}}
		if i%5 == 0 {
			sh.Text = "32,128 | 128 -> 768"
			sh.Rows[1].Axes = []Axis{axis(i, 2, "", 128)}
		}
		return sh
	}
	paramShape := func(i int) Shape {
		return Shape{Text: "768 -> 768", Rows: [3]Row{
			{Kind: "batch"},
			{Kind: "input", Axes: []Axis{{Size: 768, Steps: []Step{step(i, "?9", false), step(i, "768", true)}}}, Steps: []Step{step(i, "[?9]", true)}},
			{Kind: "output", Axes: []Axis{{Size: 768, Given: "768"}}},
		}}
	}
	p := &Page{Title: "decoder", Command: "ocannlgen explain --html decoder.ocl", Sources: []Source{src}}
	u := Unit{ID: "u1", Name: "decoder", Kind: "model", Elem: "float32", MemoryBytes: 1 << 30}
	for i := 0; i < n; i += 10 {
		u.Params = append(u.Params, Param{Name: fmt.Sprintf("net.blocks.%d.w%d", i/12, i), Shape: paramShape(i), Cells: 768 * 768, Bytes: 4 * 768 * 768,
			Init: "normal, std 1/sqrt(fan-in 768)", SizedBy: []AxisSource{{Axis: "input 1", Size: "768", Entry: "loss", Step: step(i, "768", true)}, {Axis: "output 1", Size: "768", Given: true}}})
	}
	for k := 0; k < entries; k++ {
		e := Entry{ID: fmt.Sprintf("u1-e%d", k+1), Name: fmt.Sprintf("entry%d", k), Kind: "entry", ScheduleHeader: "float32, 8 threads"}
		res := make([]int, n)
		for i := 0; i < n; i++ {
			var rhs []int
			if i%10 == 0 {
				id := len(e.Tensors)
				e.Tensors = append(e.Tensors, Tensor{ID: id, Name: fmt.Sprintf("net.blocks.%d.w%d", i/12, i), Named: true, Kind: "param", Shape: paramShape(i), Op: -1, Uses: []int{i}, Pos: Pos{Source: "src1", Line: 1 + i%600, Col: 3}})
				rhs = append(rhs, id)
			}
			if i > 0 {
				rhs = append(rhs, res[i-1])
				e.Tensors[res[i-1]].Uses = append(e.Tensors[res[i-1]].Uses, i)
			}
			res[i] = len(e.Tensors)
			e.Tensors = append(e.Tensors, Tensor{ID: res[i], Name: fmt.Sprintf("_h%d.%d", i/4, i%4), Named: i%4 == 0, Kind: "let", Shape: resultShape(i), Op: i, Pos: Pos{Source: "src1", Line: 1 + i%600, Col: 7}})
			op := Op{ID: i, Desc: opDesc(i), Kind: "compose", LHS: res[i], RHS: rhs,
				At: Pos{Source: "src1", Line: 1 + i%600, Col: 10},
				Proj: &Projection{Product: []string{"i0<32", "i1<128", "i2<768", "i3<768"}, LHS: "_h[i0, i1, i3]", RHS: []string{"w[i2, i3]", "h[i0, i1, i2]"},
					Reduced: []string{"i2"}, CoIterated: []string{"i0", "i1", "i2", "i3"}, ZeroInit: true, Accumulate: true}}
			if i%3 == 0 && i+1 < n {
				op.FusedInto = fmt.Sprintf("_h%d.%d", (i+1)/4, (i+1)%4)
			} else {
				op.Schedule = []Nest{{Loops: "i0<32, i1<128, i3<768, i2<768", Family: "contraction", Kernel: "tile 6x16, blocking 256/512, avx2", Lines: []string{"parallel: split i0 over 8 threads"}}}
			}
			e.Ops = append(e.Ops, op)
		}
		u.Entries = append(u.Entries, e)
	}
	p.Units = []Unit{u}
	return p
}

var voidElements = map[string]bool{"meta": true, "br": true, "hr": true, "img": true, "input": true, "link": true, "wbr": true}

var (
	tagRE  = regexp.MustCompile(`<(/?)([a-zA-Z][a-zA-Z0-9]*)((?:[^>"']|"[^"]*"|'[^']*')*?)(/?)>`)
	idRE   = regexp.MustCompile(`\sid="([^"]*)"`)
	hrefRE = regexp.MustCompile(`\shref="#([^"]*)"`)
)

// checkStructure checks the page is well formed: every element closed
// in order (void elements aside, SVG's self-closed ones), no raw '<' in
// text, the contents of <style> and <script> free of page data, ids
// unique and every fragment link's target present.
func checkStructure(t *testing.T, out string) {
	t.Helper()
	if !strings.HasPrefix(out, "<!DOCTYPE html>\n") {
		t.Fatal("no doctype")
	}
	s := out[len("<!DOCTYPE html>\n"):]
	var stack []string
	pos := 0
	for pos < len(s) {
		i := strings.IndexByte(s[pos:], '<')
		if i < 0 {
			break
		}
		pos += i
		m := tagRE.FindStringSubmatchIndex(s[pos:])
		if m == nil || m[0] != 0 {
			t.Fatalf("raw '<' in text at %q", s[pos:min(len(s), pos+60)])
		}
		closing := s[pos+m[2]:pos+m[3]] == "/"
		name := strings.ToLower(s[pos+m[4] : pos+m[5]])
		self := s[pos+m[8]:pos+m[9]] == "/"
		pos += m[1]
		switch {
		case closing:
			if len(stack) == 0 || stack[len(stack)-1] != name {
				t.Fatalf("</%s> closes %v", name, stack[max(0, len(stack)-3):])
			}
			stack = stack[:len(stack)-1]
		case self || voidElements[name]:
		case name == "style" || name == "script":
			end := strings.Index(s[pos:], "</"+name+">")
			if end < 0 {
				t.Fatalf("<%s> not closed", name)
			}
			pos += end + len("</"+name+">")
		default:
			stack = append(stack, name)
		}
	}
	if len(stack) != 0 {
		t.Fatalf("unclosed elements %v", stack)
	}
	ids := map[string]bool{}
	for _, m := range idRE.FindAllStringSubmatch(out, -1) {
		if ids[m[1]] {
			t.Errorf("duplicate id %q", m[1])
		}
		ids[m[1]] = true
	}
	for _, m := range hrefRE.FindAllStringSubmatch(out, -1) {
		if !ids[m[1]] {
			t.Errorf("link to missing #%s", m[1])
		}
	}
}
