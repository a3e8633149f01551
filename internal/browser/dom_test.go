package browser

import (
	"fmt"
	"image"
	"image/color"
	"reflect"
	"testing"
)

// A page of the explain contract as chromium serializes one, with the
// traps a string search falls into: markup inside a script and a comment,
// '>' inside an attribute value, entities, void and SVG elements.
const contractDOM = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>explain</title>
<style>tr.tensor > td { color: red; } /* <tr class="tensor" data-tensor="css"> */</style></head>
<body data-page="explain" data-status="error" data-script="ran">
<!-- <tr class="tensor" data-tensor="commented"> -->
<table><tbody>
<tr class="tensor odd" data-tensor="x" data-shape="batch|8 -> 16"><td>x</td><td>batch|8 -&gt; 16</td></tr>
<tr class="tensor" data-tensor="w&amp;b" data-shape="8->16"><td>w&amp;b<br>(a parameter)</td></tr>
<tr class="tensors" data-tensor="not-a-tensor-row"><td></td></tr>
</tbody></table>
<svg viewBox="0 0 10 10"><linearGradient id="g"></linearGradient><circle cx="5" cy="5" r="4" fill="url(#g)"></circle></svg>
<ul><li class="prov">x: given</li><li class="prov">w&amp;b: <img src="data:image/png;base64,AAAA" alt="">from line 3</li></ul>
<section id="failure"><h2>Shape error</h2><p>Cannot unify <mark class="failing">8</mark> with <code>16</code>  at
  line 4</p></section>
<script>document.body.dataset.script = "ran"; var s = '<tr class="tensor" data-tensor="script">'; if (1 < 2 && s) {}</script>
</body></html>`

func TestDOMHelpersOnContractPage(t *testing.T) {
	if got := AttrsOfClass(contractDOM, "tensor", "data-tensor"); !reflect.DeepEqual(got, []string{"x", "w&b"}) {
		t.Errorf("data-tensor of .tensor: %q", got)
	}
	if got := AttrsOfClass(contractDOM, "tensor", "data-shape"); !reflect.DeepEqual(got, []string{"batch|8 -> 16", "8->16"}) {
		t.Errorf("data-shape of .tensor: %q", got)
	}
	if n := CountClass(contractDOM, "prov"); n != 2 {
		t.Errorf("%d .prov, want 2", n)
	}
	if n := CountClass(contractDOM, "failing"); n != 1 {
		t.Errorf("%d .failing, want 1", n)
	}
	// textContent's concatenation: no space between </h2> and <p>.
	if got, ok := TextOf(contractDOM, "failure"); !ok || got != "Shape errorCannot unify 8 with 16 at line 4" {
		t.Errorf("#failure text %q (present %v)", got, ok)
	}
	if _, ok := TextOf(contractDOM, "nosuch"); ok {
		t.Errorf("TextOf found a missing id")
	}
	for attr, want := range map[string]string{"data-page": "explain", "data-status": "error", "data-script": "ran"} {
		if v, ok := BodyAttr(contractDOM, attr); !ok || v != want {
			t.Errorf("body %s = %q (present %v), want %q", attr, v, ok, want)
		}
	}
	for _, c := range []struct {
		tag, attr, value string
		want             bool
	}{
		{"mark", "class", "failing", true},
		{"section", "id", "failure", true},
		{"", "id", "failure", true},
		{"li", "class", "prov", true},
		{"lineargradient", "id", "g", true},
		{"circle", "fill", "url(#g)", true},
		{"svg", "", "", true},
		{"tr", "data-tensor", "script", false},    // inside a script
		{"tr", "data-tensor", "commented", false}, // inside a comment
		{"tr", "data-tensor", "css", false},       // inside a style
		{"tr", "class", "tense", false},
		{"mark", "class", "fail", false},
	} {
		if got := HasElement(contractDOM, c.tag, c.attr, c.value); got != c.want {
			t.Errorf("HasElement(%q, %q, %q) = %v", c.tag, c.attr, c.value, got)
		}
	}
	root := Parse(contractDOM)
	// The void <br> and <img> do not swallow what follows them.
	rows := root.ByClass("tensor")
	if len(rows) != 2 || len(rows[1].ByTag("td")) != 1 || rows[1].ByTag("td")[0].Text() != "w&b(a parameter)" {
		t.Errorf("the second tensor row parsed wrong")
	}
	provs := root.ByClass("prov")
	if len(provs) != 2 || provs[1].Text() != "w&b: from line 3" {
		t.Errorf("the .prov entries parsed wrong")
	}
	if s := root.ByTag("script"); len(s) != 1 || s[0].Text() != `document.body.dataset.script = "ran"; var s = '<tr class="tensor" data-tensor="script">'; if (1 < 2 && s) {}` {
		t.Errorf("the script's text: %v", s)
	}
}

func TestDOMTolerant(t *testing.T) {
	// Stray end tags, unclosed elements, unquoted and valueless
	// attributes, a lone '<', and a cut-off document.
	dom := `<div id=a class=x hidden>one < two</span><p id="b">three<p id='c'>four</div><div id="d">five <b`
	for id, want := range map[string]string{"a": "one < twothreefour", "b": "threefour", "c": "four", "d": "five"} {
		if got, ok := TextOf(dom, id); !ok || got != want {
			t.Errorf("TextOf(%q) = %q (present %v), want %q", id, got, ok, want)
		}
	}
	if !HasElement(dom, "div", "hidden", "") || !HasElement(dom, "div", "class", "x") {
		t.Errorf("valueless or unquoted attributes lost")
	}
}

func TestStatsAndBlank(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 200, 100))
	white := color.NRGBA{255, 255, 255, 255}
	for y := 0; y < 100; y++ {
		for x := 0; x < 200; x++ {
			img.SetNRGBA(x, y, white)
		}
	}
	st := Stats(img)
	if !Blank(img) || st.Distinct != 1 || st.Other != 0 || st.Pixels != 20000 {
		t.Errorf("white: %v", st)
	}
	img.SetNRGBA(3, 3, color.NRGBA{0, 0, 0, 255}) // 1 of 20000 pixels: still blank (1/20000 < 1e-4)
	if st := Stats(img); !Blank(img) || st.Distinct != 2 || st.Other != 1 {
		t.Errorf("one dark pixel: %v, blank %v", st, Blank(img))
	}
	for y := 10; y < 20; y++ { // a 10x10 square: 0.5% of the pixels
		for x := 10; x < 20; x++ {
			img.SetNRGBA(x, y, color.NRGBA{200, 0, 0, 255})
		}
	}
	st = Stats(img)
	if Blank(img) || st.Distinct != 3 || st.Other != 101 || st.Background != (color.RGBA64{0xffff, 0xffff, 0xffff, 0xffff}) {
		t.Errorf("with a square: %v, blank %v", st, Blank(img))
	}
}

// Checking a page of the explain contract (docs: `ocannlgen explain
// --html`) in a test.
func ExampleAttrsOfClass() {
	dom := `<body data-page="explain" data-status="ok" data-script="ran"><table>
<tr class="tensor" data-tensor="x" data-shape="batch|8"><td>x</td></tr>
<tr class="tensor" data-tensor="y" data-shape="batch|16"><td>y</td></tr></table>
<ul><li class="prov">x: given</li></ul></body>`
	status, _ := BodyAttr(dom, "data-status")
	fmt.Println(status, AttrsOfClass(dom, "tensor", "data-tensor"), AttrsOfClass(dom, "tensor", "data-shape"), CountClass(dom, "prov"))
	// Output: ok [x y] [batch|8 batch|16] 1
}
