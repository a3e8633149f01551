package explain

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Render writes page as one self-contained HTML file: inline CSS, inline
// SVG graphs and one small script that only adds highlighting (the page
// reads the same without it); no network, fonts or images. Every string
// of the page is escaped. The output depends only on page: the same Page
// gives the same bytes.
//
// The page stays under 5 MB: the rest of the page first takes what it
// needs, then the entries' tensors get their provenance while it fits,
// the named tensors first; the others show their shapes without it, and
// their entry says how many.
func Render(w io.Writer, page *Page) error {
	r := newRenderer(page)
	r.page()
	r.cut(nil)
	fixed := 0
	for _, pt := range r.parts {
		fixed += len(pt.text)
	}
	// What the tables need without provenance is kept for them.
	r.budget = maxPageBytes - fixed
	plainSize := make([][]int, len(r.parts))
	for k, pt := range r.parts {
		if e := pt.table; e != nil {
			r.budget -= tableSlack
			plainSize[k] = make([]int, len(e.Tensors))
			for i := range e.Tensors {
				plainSize[k][i] = r.plainRow(e, &e.Tensors[i])
				r.plainLeft += plainSize[k][i]
			}
		}
	}
	// The rows in the order they get their provenance: the named
	// tensors', then the others', each in page order.
	type rowAt struct{ part, i int }
	var order []rowAt
	for _, named := range []bool{true, false} {
		for k, pt := range r.parts {
			if e := pt.table; e != nil {
				for i := range e.Tensors {
					if e.Tensors[i].Named == named {
						order = append(order, rowAt{k, i})
					}
				}
			}
		}
	}
	rows := make([][][]byte, len(r.parts))
	omitted := make([]int, len(r.parts))
	for k, pt := range r.parts {
		if pt.table != nil {
			rows[k] = make([][]byte, len(pt.table.Tensors))
		}
	}
	r.b = new(bytes.Buffer)
	for _, at := range order {
		pt := &r.parts[at.part]
		e, t := pt.table, &pt.table.Tensors[at.i]
		r.scope = r.scopes[pt.unit]
		r.plainLeft -= plainSize[at.part][at.i]
		r.b.Reset()
		if !r.plain {
			logMark := len(r.scope.log)
			r.tensorRow(e, t)
			if r.used+r.b.Len()+r.plainLeft > r.budget {
				r.b.Reset()
				r.scope.undo(logMark)
				r.plain = true
			}
		}
		if r.plain {
			omitted[at.part]++
			r.tensorRow(e, t)
		}
		r.used += r.b.Len()
		rows[at.part][at.i] = bytes.Clone(r.b.Bytes())
	}
	r.plain, r.scope = false, nil
	out := bytes.NewBuffer(make([]byte, 0, fixed+r.used+len(r.parts)*tableSlack))
	r.b = out
	for k, pt := range r.parts {
		out.Write(pt.text)
		if pt.table != nil {
			r.tensorTable(pt.table, rows[k], omitted[k])
		}
	}
	_, err := w.Write(out.Bytes())
	return err
}

// maxPageBytes bounds a page's size (the 5 MB, with a margin).
const maxPageBytes = 4_980_000

// tableSlack bounds a tensor table's size besides its rows (heading,
// note, header row).
const tableSlack = 1024

// part is a piece of the page: text, then the tensor table of an entry
// (written last, within the budget the rest leaves).
type part struct {
	text  []byte
	table *Entry
	unit  int
}

// cut ends the current part, to be followed by e's tensor table (nil:
// the last part).
func (r *renderer) cut(e *Entry) {
	r.parts = append(r.parts, part{text: r.b.Bytes(), table: e, unit: r.unitIdx})
	r.b = new(bytes.Buffer)
	r.b.Grow(64 << 10)
}

// renderer writes one page into a buffer.
type renderer struct {
	b *bytes.Buffer
	p *Page
	// marks are the source lines a failure or a message cites, by anchor.
	marks map[string]lineMark
	// failureIDs are the failure sections' ids, by unit index.
	failureIDs []string
	// open renders provenance <details> open (a failure's sides).
	open bool
	// scope shares the provenance chains of an entry's tensors (or a
	// unit's parameters); nil renders every chain whole.
	scope *provScope
	// subject names what the chains being written belong to ("tensor
	// h"), for the references to them.
	subject string
	// stages are the stages the steps name, with their rules, in page
	// order of first appearance.
	stages [][2]string
	// scopes are the units' provenance scopes (a unit's parameters and
	// entries share tails).
	scopes  []*provScope
	unitIdx int
	// parts, budget: see Render; plain leaves provenance out.
	parts []part
	// budget is what the tensor tables' rows may take, used what they
	// took so far, plainLeft what the rows still to write take without
	// provenance; plain: the rows are written without.
	budget, used, plainLeft int
	plain                   bool
	scratch                 bytes.Buffer
	// names indexes namesOf's tensors by name.
	namesOf *Entry
	names   map[string]int
	// ctx is the entry whose tensor row is being written (nil
	// elsewhere): its steps name their operations by a link to them
	// rather than by their description; descOp indexes ctx's operations
	// by description (-1: not unique).
	ctx    *Entry
	descOf *Entry
	descOp map[string]int
}

// provScope shares the tails of provenance chains. A chain of bindings
// ends in the chain of the axis (or row) it was bound to, so the chains
// of an entry's tensors share their tails: written whole, a deep
// model's page would repeat them quadratically. Each tail (interned by
// its steps) is written once, where it first appears; a later chain
// that reaches it ends in a reference to it with the value it ends in.
type provScope struct {
	prefix string
	intern map[tailKey]int
	// first is, per tail, the id of the item it starts at and what
	// chain that is ("" id: not written yet); log lists the tails
	// written, in order (undo takes a row back).
	first []tailLoc
	log   []int
}

// undo forgets the tails written since the log had n entries.
func (sc *provScope) undo(n int) {
	for _, t := range sc.log[n:] {
		sc.first[t] = tailLoc{}
	}
	sc.log = sc.log[:n]
}

type tailKey struct {
	step Step
	next int
}

type tailLoc struct {
	id, where string
}

func newScope(prefix string) *provScope {
	return &provScope{prefix: prefix, intern: map[tailKey]int{}}
}

// lineMark is how a source line is marked: the failing position (its
// column) or a related position.
type lineMark struct {
	failing bool
	col     int
	kind    string
	related bool
}

func newRenderer(p *Page) *renderer {
	r := &renderer{b: new(bytes.Buffer), p: p, marks: map[string]lineMark{}, stages: collectStages(p)}
	for i := range p.Units {
		r.scopes = append(r.scopes, newScope(p.Units[i].ID+"-b"))
	}
	r.b.Grow(64 << 10)
	first := true
	r.failureIDs = make([]string, len(p.Units))
	for i := range p.Units {
		f := p.Units[i].Failure
		if f == nil {
			continue
		}
		if first {
			r.failureIDs[i] = "failure"
			first = false
		} else {
			r.failureIDs[i] = p.Units[i].ID + "-failure"
		}
		for _, rel := range f.Related {
			if a := rel.At.Anchor(); a != "" {
				m := r.marks[a]
				m.related = true
				r.marks[a] = m
			}
		}
		if a := f.At.Anchor(); a != "" {
			m := r.marks[a]
			if !m.failing {
				m.failing, m.col, m.kind = true, f.At.Col, f.Kind
			}
			r.marks[a] = m
		}
	}
	return r
}

// raw writes trusted markup.
func (r *renderer) raw(s string) { r.b.WriteString(s) }

// text writes s escaped for text content ('<', '>', '&').
func (r *renderer) text(s string) { r.escape(s, false) }

// escape writes s escaped for text, and with quotes escaped too for a
// quoted attribute value.
func (r *renderer) escape(s string, attr bool) {
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '&':
			esc = "&amp;"
		case '"':
			if !attr {
				continue
			}
			esc = "&#34;"
		case '\'':
			if !attr {
				continue
			}
			esc = "&#39;"
		case 0:
			esc = "\uFFFD"
		default:
			continue
		}
		r.b.WriteString(s[last:i])
		r.b.WriteString(esc)
		last = i + 1
	}
	r.b.WriteString(s[last:])
}

// attrText writes s escaped for a quoted attribute value.
func (r *renderer) attrText(s string) { r.escape(s, true) }

func (r *renderer) int(n int64) { r.b.WriteString(strconv.FormatInt(n, 10)) }

// attr writes ` name="value"` with value escaped.
func (r *renderer) attr(name, value string) {
	r.b.WriteByte(' ')
	r.b.WriteString(name)
	r.b.WriteString(`="`)
	r.attrText(value)
	r.b.WriteByte('"')
}

// link writes <a href="#anchor">text</a>, or the text alone when anchor
// is "".
func (r *renderer) link(anchor, text string) {
	if anchor == "" {
		r.text(text)
		return
	}
	r.raw(`<a href="#`)
	r.attrText(anchor)
	r.raw(`">`)
	r.text(text)
	r.raw(`</a>`)
}

// code writes <code>s</code>.
func (r *renderer) code(s string) {
	r.raw("<code>")
	r.text(s)
	r.raw("</code>")
}

func (r *renderer) page() {
	p := r.p
	status := "ok"
	for i := range p.Units {
		if p.Units[i].Failure != nil {
			status = "error"
		}
	}
	r.raw("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" content=\"ocannlgen explain\">\n<title>")
	if p.Title != "" {
		r.text(p.Title)
		r.raw(" · ")
	}
	r.raw("ocannlgen explain</title>\n<style>\n")
	r.raw(pageCSS)
	r.raw("</style>\n</head>\n<body data-page=\"explain\" data-status=\"")
	r.raw(status)
	r.raw("\">\n")
	r.header()
	r.raw("<main>\n")
	for i := range p.Units {
		r.unit(i)
	}
	r.sources()
	r.stageList()
	r.raw("</main>\n<script>\n")
	r.raw(pageScript)
	r.raw("\n</script>\n</body>\n</html>\n")
}

func (r *renderer) header() {
	p := r.p
	r.raw("<header class=\"top\">\n<h1>")
	if p.Title != "" {
		r.text(p.Title)
	} else {
		r.raw("Explanation")
	}
	r.raw("</h1>\n")
	if p.Command != "" {
		r.raw("<p class=\"cmd\">Made by ")
		r.code(p.Command)
		r.raw("</p>\n")
	}
	r.raw("<div class=\"wrap\">\n<nav class=\"toc\" aria-labelledby=\"toc-h\">\n<h2 id=\"toc-h\">Contents</h2>\n<ol>\n")
	for i := range p.Units {
		u := &p.Units[i]
		r.raw("<li>")
		r.link(u.ID, unitTitle(u))
		if u.Failure != nil {
			r.raw(" <a class=\"tag\" href=\"#")
			r.attrText(r.failureIDs[i])
			r.raw("\">failed: ")
			r.text(orDefault(u.Failure.Kind, "error"))
			r.raw("</a>")
		}
		if len(u.Params) > 0 || len(u.Entries) > 0 {
			r.raw("\n<ol>")
			if len(u.Params) > 0 {
				r.raw("<li>")
				r.link(u.ID+"-params", "Parameters")
				r.raw("</li>")
			}
			for j := range u.Entries {
				e := &u.Entries[j]
				r.raw("<li>")
				r.link(e.ID, entryTitle(e))
				r.raw("</li>")
			}
			r.raw("</ol>")
		}
		r.raw("</li>\n")
	}
	if len(p.Sources) > 0 {
		r.raw("<li><a href=\"#sources\">Sources</a></li>\n")
	}
	if len(r.stages) > 0 {
		r.raw("<li><a href=\"#stages\">Stages of inference</a></li>\n")
	}
	r.raw("</ol>\n</nav>\n")
	r.raw(`<aside class="legend" aria-labelledby="legend-h">
<h2 id="legend-h">Reading shapes</h2>
<p>A shape is three rows, <span class="shape"><span class="row b">batch</span>|<span class="row i">input</span>→<span class="row o">output</span></span>; each axis is a chip with its kind's letter, its label and its size:
<span class="ax b"><i>b</i>32</span> batch,
<span class="ax i"><i>i</i><b>d</b>16</span> input,
<span class="ax o"><i>o</i>10</span> output;
<span class="ax o"><i>o</i>1<small>bcast</small></span> a broadcast unit;
<span class="ax o given"><i>o</i>4</span> (double border) a size the declaration gave; · an empty row.</p>
<p>Click an axis (or a row's <em>how</em>) for its provenance: each binding with its value, the operation, the source position and the stage; the last binding fixed the size.</p>
<p>Graphs: boxes are operations, blue pills inputs and parameters, orange pills results; edges are tensors, labelled with name and shape.</p>
</aside>
</div>
</header>
`)
}

func unitTitle(u *Unit) string {
	if u.Kind == "" {
		return u.Name
	}
	return u.Kind + " " + u.Name
}

func entryTitle(e *Entry) string {
	s := e.Name
	if s == "" {
		s = e.ID
	}
	if e.Kind != "" && e.Kind != "program" {
		s += " (" + e.Kind + ")"
	}
	return s
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func (r *renderer) unit(i int) {
	u := &r.p.Units[i]
	r.unitIdx = i
	r.raw("<section class=\"unit\"")
	r.attr("id", u.ID)
	r.raw(">\n<h2>")
	r.text(unitTitle(u))
	r.raw("</h2>\n<p class=\"meta\">")
	parts := 0
	if s := u.Pos.String(); s != "" {
		r.raw("Declared at ")
		r.pos(u.Pos)
		parts++
	}
	if u.Elem != "" {
		if parts > 0 {
			r.raw(" · ")
		}
		r.raw("element type ")
		r.code(u.Elem)
		parts++
	}
	if parts > 0 {
		r.raw(" · ")
	}
	r.int(int64(len(u.Entries)))
	r.raw(plural(len(u.Entries), " entry", " entries"))
	r.raw(", ")
	r.int(int64(len(u.Params)))
	r.raw(plural(len(u.Params), " parameter", " parameters"))
	r.raw("</p>\n")
	if u.Failure != nil {
		r.failure(u, r.failureIDs[i])
	}
	if len(u.Params) > 0 || u.MemoryBytes > 0 || len(u.Memory) > 0 {
		r.params(u)
	}
	for j := range u.Entries {
		r.entry(&u.Entries[j])
	}
	r.raw("</section>\n")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// pos writes a position as a link to its source line ("12:5 (spec column
// 3)"), or "unknown position".
func (r *renderer) pos(p Pos) {
	s := p.String()
	if s == "" {
		r.raw("<span class=\"note\">unknown position</span>")
		return
	}
	if !r.inSources(p) {
		r.text(s)
		return
	}
	r.link(p.Anchor(), s)
}

// inSources reports whether p's line is in the source views (a link to
// it has a target).
func (r *renderer) inSources(p Pos) bool {
	for i := range r.p.Sources {
		src := &r.p.Sources[i]
		if src.ID == p.Source {
			first := max(src.FirstLine, 1)
			return p.Line >= first && p.Line < first+len(src.Lines)
		}
	}
	return false
}

// bytesText is n bytes in a readable unit ("3.2 MiB (3,355,443 bytes)").
func bytesText(n int64) string {
	grouped := groupDigits(n)
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	if n < 1024 {
		return grouped + plural(int(n), " byte", " bytes")
	}
	v := float64(n)
	u := -1
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + units[u] + " (" + grouped + " bytes)"
}

// groupDigits writes n with thousands separators.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func (r *renderer) params(u *Unit) {
	r.raw("<section class=\"params\"")
	r.attr("id", u.ID+"-params")
	r.raw(">\n<h3>Parameters</h3>\n")
	if len(u.Params) > 0 {
		r.raw("<div class=\"scroll\"><table>\n<thead><tr><th scope=\"col\">Parameter</th><th scope=\"col\">Shape</th><th scope=\"col\" class=\"num\">Cells</th><th scope=\"col\" class=\"num\">Bytes</th><th scope=\"col\">Initialization</th><th scope=\"col\">Sized by</th></tr></thead>\n<tbody>\n")
		r.scope = r.scopes[r.unitIdx]
		for k := range u.Params {
			pr := &u.Params[k]
			r.raw("<tr class=\"param\"")
			r.attr("id", u.ID+"-p"+strconv.Itoa(k+1))
			r.attr("data-param", pr.Name)
			r.attr("data-shape", pr.Shape.Text)
			r.raw("><th scope=\"row\">")
			r.code(pr.Name)
			if pr.State {
				r.raw(" <span class=\"tag\">state</span>")
			}
			if pr.Pos.Line > 0 {
				r.raw("<br><small>")
				r.pos(pr.Pos)
				r.raw("</small>")
			}
			r.raw("</th><td>")
			r.subject = "parameter " + pr.Name
			r.shape(&pr.Shape)
			r.raw("</td><td class=\"num\">")
			r.text(groupDigits(pr.Cells))
			r.raw("</td><td class=\"num\">")
			r.text(groupDigits(pr.Bytes))
			r.raw("</td><td>")
			r.text(pr.Init)
			r.raw("</td><td>")
			if len(pr.SizedBy) > 0 {
				r.raw("<ul class=\"sized\">")
				for _, s := range pr.SizedBy {
					r.axisSource(s)
				}
				r.raw("</ul>")
			}
			r.raw("</td></tr>\n")
		}
		r.raw("</tbody>\n</table></div>\n")
		r.scope = nil
	}
	if u.MemoryBytes > 0 || len(u.Memory) > 0 {
		r.raw("<h4>Memory</h4>\n<p>Total: <strong>")
		r.text(bytesText(u.MemoryBytes))
		r.raw("</strong></p>\n")
		if len(u.Memory) > 0 {
			r.raw("<div class=\"scroll\"><table class=\"memory\">\n<thead><tr><th scope=\"col\">Part</th><th scope=\"col\" class=\"num\">Bytes</th></tr></thead>\n<tbody>\n")
			for _, m := range u.Memory {
				r.raw("<tr><th scope=\"row\">")
				r.text(m.What)
				r.raw("</th><td class=\"num\">")
				r.text(bytesText(m.Bytes))
				r.raw("</td></tr>\n")
			}
			r.raw("</tbody>\n<tfoot><tr><th scope=\"row\">Total</th><td class=\"num\"><strong>")
			r.text(bytesText(u.MemoryBytes))
			r.raw("</strong></td></tr></tfoot>\n</table></div>\n")
		}
	}
	r.raw("</section>\n")
}

// axisSource writes one "sized by" item of a parameter.
func (r *renderer) axisSource(s AxisSource) {
	r.raw("<li><span class=\"mono\">")
	r.text(s.Axis)
	if s.Size != "" {
		r.raw(" = ")
		r.text(s.Size)
	}
	r.raw("</span>:")
	if s.Given {
		r.raw(" given by the declaration")
	} else {
		r.stepTail(&s.Step, true)
		if s.Entry != "" {
			r.raw(" in ")
			r.text(s.Entry)
		}
	}
	r.raw("</li>")
}

// kindClass is the class letter of a row kind ("b", "i", "o").
func kindClass(kind string, idx int) string {
	switch kind {
	case "batch":
		return "b"
	case "input":
		return "i"
	case "output":
		return "o"
	}
	return [3]string{"b", "i", "o"}[idx%3]
}

var rowNames = [3]string{"batch", "input", "output"}

// shape writes a shape as its three rows of axis chips; each chip opens
// its provenance, each row's "how" the row's.
func (r *renderer) shape(s *Shape) {
	r.raw("<div class=\"shape\">")
	for k := 0; k < 3; k++ {
		row := &s.Rows[k]
		if k == 1 {
			r.raw("|")
		} else if k == 2 {
			r.raw("→")
		}
		r.row(row, k)
	}
	r.raw("</div>")
}

// row writes one row's chips (with their provenance) and the row's steps.
func (r *renderer) row(row *Row, k int) {
	c := kindClass(row.Kind, k)
	name := row.Kind
	if name == "" {
		name = rowNames[k]
	}
	r.raw("<span class=\"row ")
	r.raw(c)
	r.raw("\">")
	if len(row.Axes) == 0 {
		r.raw("·")
	}
	for a := range row.Axes {
		r.axis(&row.Axes[a], c, name, a)
	}
	if len(row.Steps) > 0 && !r.plain {
		r.raw("<details class=\"rowd\"")
		r.openAttr()
		r.raw("><summary>how</summary><ol>")
		steps := row.Steps
		if r.ctx != nil {
			// In a tensor table, what fixed the row's number of axes:
			// its last binding (a failure's sides show the chain).
			steps = steps[len(steps)-1:]
		}
		r.steps(steps, r.subject+", "+name+" row")
		r.raw("</ol></details>")
	}
	r.raw("</span>")
}

func (r *renderer) openAttr() {
	if r.open {
		r.raw(" open")
	}
}

// chipBody writes the inside of an axis chip: kind letter, label, size.
func (r *renderer) chipBody(ax *Axis, c string) {
	r.raw("<i>")
	r.raw(c)
	r.raw("</i>")
	if ax.Label != "" {
		r.raw("<b>")
		r.text(ax.Label)
		r.raw("</b>")
	}
	r.int(int64(ax.Size))
	if ax.Basis != "" {
		r.raw(":")
		r.text(ax.Basis)
	}
	if ax.Broadcast {
		r.raw("<small>bcast</small>")
	}
}

// axis writes one axis chip; with provenance, the chip is the summary of
// a <details> holding its steps.
func (r *renderer) axis(ax *Axis, c, rowName string, idx int) {
	cls := "ax " + c
	if ax.Given != "" {
		cls += " given"
	}
	if r.plain || len(ax.Steps) == 0 && ax.Given == "" {
		r.raw("<span class=\"")
		r.raw(cls)
		r.raw("\">")
		r.chipBody(ax, c)
		r.raw("</span>")
		return
	}
	r.raw("<details class=\"axd\"")
	r.openAttr()
	r.raw("><summary class=\"")
	r.raw(cls)
	r.raw("\">")
	r.chipBody(ax, c)
	r.raw("</summary>")
	if ax.Given != "" {
		r.raw("<span class=\"given-note\">given by its declaration: ")
		r.code(ax.Given)
		r.raw("</span>")
	}
	if len(ax.Steps) > 0 {
		r.raw("<ol>")
		r.steps(ax.Steps, r.subject+", "+rowName+" axis "+strconv.Itoa(idx+1))
		r.raw("</ol>")
	}
	r.raw("</details>")
}

// steps writes the <li class="prov"> items of a chain of bindings; the
// last, the one that fixed the size, is emphasised. In a scope, a tail
// of two or more steps already written is replaced by one item linking
// to it; where names the chain for such links.
func (r *renderer) steps(steps []Step, where string) {
	sc := r.scope
	var tails []int
	if sc != nil {
		tails = make([]int, len(steps)+1)
		tails[len(steps)] = -1
		for j := len(steps) - 1; j >= 0; j-- {
			k := tailKey{steps[j], tails[j+1]}
			id, ok := sc.intern[k]
			if !ok {
				id = len(sc.first)
				sc.intern[k] = id
				sc.first = append(sc.first, tailLoc{})
			}
			tails[j] = id
		}
	}
	for i := range steps {
		s := &steps[i]
		last := i == len(steps)-1
		id := ""
		if sc != nil && len(steps)-i >= 2 {
			loc := &sc.first[tails[i]]
			if loc.id != "" {
				r.tailRef(loc, steps[i:])
				return
			}
			loc.id = sc.prefix + strconv.Itoa(tails[i])
			loc.where = where
			sc.log = append(sc.log, tails[i])
			id = loc.id
		}
		if s.Elided > 0 {
			r.raw("<li class=\"prov elided\">… ")
			r.int(int64(s.Elided))
			r.raw(plural(s.Elided, " more binding", " more bindings"))
			r.raw(" …</li>")
			continue
		}
		r.raw("<li class=\"prov")
		if last {
			r.raw(" last")
		}
		r.raw("\"")
		if id != "" {
			r.raw(" id=\"")
			r.attrText(id)
			r.raw("\"")
		}
		r.raw(">= <b>")
		r.text(s.Value)
		r.raw("</b>")
		r.stepTail(s, last)
		if last {
			if s.Final {
				r.raw(" <em>fixed here</em>")
			} else {
				r.raw(" <em>last binding</em>")
			}
		}
		r.raw("</li>")
	}
}

// stepTail writes " by OP at POS [STAGE]" of a step, the stage's rule
// spelled out on a chain's last step (the stages section lists every
// rule).
func (r *renderer) stepTail(s *Step, rule bool) {
	if id, rest, ok := r.opOf(s.Op); ok {
		// In a tensor table, a link to the operation (its description
		// and position are in the operation list) keeps a deep model's
		// page small.
		r.raw(" by ")
		if rule {
			r.opLink(r.ctx, id)
		} else {
			// Between the first and the last step, the number alone.
			r.raw("<a href=\"#")
			r.attrText(opAnchor(r.ctx, id))
			r.raw("\">#")
			r.int(int64(id))
			r.raw("</a>")
		}
		r.text(rest)
		if s.At.SpecCol > 0 {
			r.raw(" (spec column ")
			r.int(int64(s.At.SpecCol))
			r.raw(")")
		}
		// The online stage goes without saying but on the step that
		// fixed the size (the table's note says so).
		if s.Stage != "" && (rule || s.Stage != "elaborate") {
			r.raw(" [")
			r.text(s.Stage)
			r.raw("]")
		}
		return
	}
	if s.Op != "" {
		r.raw(" by ")
		r.text(s.Op)
	}
	if s.At.Line > 0 {
		r.raw(" at ")
		r.pos(s.At)
	}
	if s.Stage != "" {
		r.raw(" [")
		r.text(s.Stage)
		if rule && s.StageRule != "" {
			r.raw(": ")
			r.text(s.StageRule)
		}
		r.raw("]")
	}
}

// tailRef writes the item that stands for a tail written before: how
// many bindings, a link to them, and the value the chain ends in.
func (r *renderer) tailRef(loc *tailLoc, rest []Step) {
	end := &rest[len(rest)-1]
	r.raw("<li class=\"prov last ref\">… <a href=\"#")
	r.attrText(loc.id)
	r.raw("\">")
	n := 0
	for _, st := range rest {
		n += max(1, st.Elided)
	}
	r.int(int64(n))
	r.raw(" more, as for ")
	r.text(loc.where)
	r.raw("</a>, ending = <b>")
	r.text(end.Value)
	r.raw("</b></li>")
}

func tensorAnchor(e *Entry, id int) string { return e.ID + "-t" + strconv.Itoa(id) }
func opAnchor(e *Entry, id int) string     { return e.ID + "-op" + strconv.Itoa(id) }

// tensorName is the name of tensor id of e, or "#id" when out of range.
func tensorName(e *Entry, id int) string {
	if id >= 0 && id < len(e.Tensors) {
		return e.Tensors[id].Name
	}
	return "#" + strconv.Itoa(id)
}

// tensorLink writes a link to tensor id's row.
func (r *renderer) tensorLink(e *Entry, id int) {
	if id < 0 || id >= len(e.Tensors) {
		r.text("#" + strconv.Itoa(id))
		return
	}
	t := &e.Tensors[id]
	r.raw("<a href=\"#")
	r.attrText(tensorAnchor(e, id))
	r.raw("\"")
	if !t.Named {
		r.raw(" class=\"anon\"")
	}
	r.raw(">")
	r.text(t.Name)
	r.raw("</a>")
}

// opOf finds the operation of the context entry a step's description
// names: the description itself, or it followed by the operand or result
// the constraint was on (", argument 2 (x)"), which rest holds.
func (r *renderer) opOf(desc string) (id int, rest string, ok bool) {
	if r.ctx == nil || desc == "" {
		return 0, "", false
	}
	if id, ok := r.descOp[desc]; ok {
		return id, "", id >= 0
	}
	for _, sep := range []string{", argument ", ", result "} {
		if i := strings.LastIndex(desc, sep); i > 0 {
			if id, ok := r.descOp[desc[:i]]; ok && id >= 0 {
				return id, desc[i:], true
			}
		}
	}
	return 0, "", false
}

// setCtx makes e the entry whose steps link their operations.
func (r *renderer) setCtx(e *Entry) {
	r.ctx = e
	if r.descOp != nil && r.descOf == e {
		return
	}
	r.descOf = e
	r.descOp = make(map[string]int, len(e.Ops))
	for i := range e.Ops {
		d := e.Ops[i].Desc
		if _, dup := r.descOp[d]; dup {
			r.descOp[d] = -1
		} else {
			r.descOp[d] = i
		}
	}
}

func (r *renderer) opLink(e *Entry, id int) {
	if id < 0 || id >= len(e.Ops) {
		r.raw("#")
		r.int(int64(id))
		return
	}
	r.raw("<a href=\"#")
	r.attrText(opAnchor(e, id))
	r.raw("\">#")
	r.int(int64(id))
	if e.Ops[id].Kind != "" {
		r.raw(" ")
		r.text(e.Ops[id].Kind)
	}
	r.raw("</a>")
}

func (r *renderer) entry(e *Entry) {
	r.raw("<section class=\"entry\"")
	r.attr("id", e.ID)
	r.raw(">\n<h3>")
	r.text(entryTitle(e))
	r.raw("</h3>\n<p class=\"meta\">")
	r.int(int64(len(e.Tensors)))
	r.raw(plural(len(e.Tensors), " tensor", " tensors"))
	r.raw(", ")
	r.int(int64(len(e.Ops)))
	r.raw(plural(len(e.Ops), " operation", " operations"))
	if e.Result != "" {
		r.raw("; result ")
		if t := r.findTensor(e, e.Result); t >= 0 {
			r.tensorLink(e, t)
		} else {
			r.code(e.Result)
		}
	}
	r.raw("</p>\n")
	if e.ScheduleHeader != "" {
		r.raw("<p class=\"meta\">Schedule: ")
		r.code(e.ScheduleHeader)
		r.raw("</p>\n")
	}
	if e.Note != "" {
		r.raw("<p class=\"note\">")
		r.text(e.Note)
		r.raw("</p>\n")
	}
	if len(e.Ops) > 0 || len(e.Tensors) > 0 {
		r.raw("<h4>Graph</h4>\n")
		r.graph(e)
	}
	if len(e.Tensors) > 0 {
		r.cut(e)
	}
	if len(e.Ops) > 0 {
		r.raw("<h4>Operations</h4>\n")
		for i := range e.Ops {
			r.op(e, &e.Ops[i])
		}
	}
	r.raw("</section>\n")
}

// findTensor is the index of the last tensor named name in e, or -1
// (an index of e's names, made on first use).
func (r *renderer) findTensor(e *Entry, name string) int {
	if r.namesOf != e {
		r.namesOf, r.names = e, make(map[string]int, len(e.Tensors))
		for i := range e.Tensors {
			r.names[e.Tensors[i].Name] = i
		}
	}
	if i, ok := r.names[name]; ok {
		return i
	}
	return -1
}

// tensorTable writes e's tensor table around its rows; omitted rows
// have no provenance.
func (r *renderer) tensorTable(e *Entry, rows [][]byte, omitted int) {
	r.raw("<h4>Tensors</h4>\n")
	if omitted > 0 {
		r.raw("<p class=\"note\">To keep the page under 5 MB, ")
		r.int(int64(omitted))
		r.raw(" of this entry's ")
		r.int(int64(len(e.Tensors)))
		r.raw(" tensors show their shapes without provenance (the named tensors get theirs first).</p>\n")
	}
	r.raw("<p class=\"note\">An axis's provenance lists the bindings from the tensor's axis to its size: the operation that tied it, and the one that fixed the size; a step without a stage was made by elaboration (the operations' constraints, solved as each is added).</p>\n")
	r.raw("<div class=\"scroll\"><table class=\"tensors\">\n<thead><tr><th scope=\"col\">Tensor</th><th scope=\"col\">Shape <small>(click an axis for its provenance)</small></th><th scope=\"col\">Made by</th><th scope=\"col\">Used by</th></tr></thead>\n<tbody>\n")
	for _, row := range rows {
		r.b.Write(row)
	}
	r.raw("</tbody>\n</table></div>\n")
}

// plainRow is the size of t's row without provenance.
func (r *renderer) plainRow(e *Entry, t *Tensor) int {
	b, plain := r.b, r.plain
	r.b, r.plain = &r.scratch, true
	r.scratch.Reset()
	r.tensorRow(e, t)
	n := r.scratch.Len()
	r.b, r.plain = b, plain
	return n
}

// tensorRow writes t's row of the tensor table.
func (r *renderer) tensorRow(e *Entry, t *Tensor) {
	r.raw("<tr class=\"tensor\"")
	r.attr("id", tensorAnchor(e, t.ID))
	r.attr("data-tensor", t.Name)
	if len(t.Aliases) > 0 {
		r.attr("data-aliases", strings.Join(t.Aliases, " "))
	}
	r.attr("data-shape", t.Shape.Text)
	r.raw("><th scope=\"row\"")
	if !t.Named {
		r.raw(" class=\"anon\"")
	}
	r.raw(">")
	r.text(t.Name)
	if t.Kind != "" {
		r.raw(" <small>")
		r.text(t.Kind)
		r.raw("</small>")
	}
	for _, a := range t.Aliases {
		r.raw(" <small>also ")
		r.text(a)
		r.raw("</small>")
	}
	if t.Index > 0 {
		r.raw(" <small>index &lt; ")
		r.int(int64(t.Index))
		r.raw("</small>")
	}
	if t.Pos.Line > 0 {
		r.raw(" ")
		r.pos(t.Pos)
	}
	r.raw("</th><td>")
	r.subject = t.Name
	r.setCtx(e)
	r.shape(&t.Shape)
	r.ctx = nil
	r.raw("</td><td>")
	if t.Op >= 0 {
		r.opLink(e, t.Op)
	} else {
		r.raw("<span class=\"note\">leaf</span>")
	}
	r.raw("</td><td>")
	for j, u := range t.Uses {
		if j > 0 {
			r.raw(", ")
		}
		r.opLink(e, u)
	}
	r.raw("</td></tr>\n")
}

func (r *renderer) op(e *Entry, o *Op) {
	r.raw("<section class=\"op\"")
	r.attr("id", opAnchor(e, o.ID))
	r.raw(">\n<h5>#")
	r.int(int64(o.ID))
	r.raw(" <code>")
	r.text(orDefault(o.Desc, o.Kind))
	r.raw("</code>")
	if o.Kind != "" && !strings.HasPrefix(o.Desc, o.Kind) {
		r.raw(" <small>")
		r.text(o.Kind)
		r.raw("</small>")
	}
	r.raw("</h5>\n<p class=\"io\">")
	for j, in := range o.RHS {
		if j > 0 {
			r.raw(", ")
		}
		r.tensorLink(e, in)
	}
	if len(o.RHS) == 0 {
		r.raw("(no operands)")
	}
	r.raw(" → ")
	r.tensorLink(e, o.LHS)
	if o.Spec != "" {
		r.raw(" · spec <code>")
		r.text(o.Spec)
		r.raw("</code>")
	}
	if o.At.Line > 0 {
		r.raw(" · at ")
		r.pos(o.At)
	}
	r.raw("</p>\n<dl class=\"kv\">")
	if pj := o.Proj; pj != nil {
		r.kv("product space", pj.Product, " × ")
		r.raw("<dt>indices</dt><dd>")
		r.text(pj.LHS)
		r.raw(" ← ")
		for j, s := range pj.RHS {
			if j > 0 {
				r.raw(", ")
			}
			r.text(s)
		}
		r.raw("</dd>")
		r.kv("reduced", pj.Reduced, ", ")
		r.kv("co-iterated", pj.CoIterated, ", ")
		r.kv("affine, concat", pj.Affine, "; ")
		if pj.ZeroInit || pj.Accumulate {
			r.raw("<dt>result</dt><dd>")
			switch {
			case pj.ZeroInit && pj.Accumulate:
				r.raw("reset, then accumulated")
			case pj.ZeroInit:
				r.raw("reset first")
			default:
				r.raw("accumulated")
			}
			r.raw("</dd>")
		}
	}
	switch {
	case o.FusedInto != "":
		r.raw("<dt>schedule</dt><dd>fused into the nest of ")
		if t := r.findTensor(e, o.FusedInto); t >= 0 && e.Tensors[t].Op >= 0 {
			r.tensorLink(e, t)
			r.raw(" (")
			r.opLink(e, e.Tensors[t].Op)
			r.raw(")")
		} else {
			r.text(o.FusedInto)
		}
		r.raw("</dd>")
	case len(o.Schedule) > 0:
		r.raw("<dt>schedule</dt>")
		r.nests(o.Schedule)
	}
	if len(o.Backward) > 0 {
		r.raw("<dt>backward (training step)</dt>")
		r.nests(o.Backward)
	}
	r.raw("</dl>\n</section>\n")
}

// nests writes one <dd> per loop nest: its kernel family and loops, the
// kernel line, the rest of its schedule.
func (r *renderer) nests(ns []Nest) {
	for _, n := range ns {
		r.raw("<dd><b>")
		r.text(orDefault(n.Family, "loop nest"))
		r.raw("</b>")
		if n.Loops != "" {
			r.raw(" over ")
			r.text(n.Loops)
		}
		if n.Kernel != "" {
			r.raw("<br>")
			r.text(n.Kernel)
		}
		for _, l := range n.Lines {
			r.raw("<br>")
			r.text(l)
		}
		r.raw("</dd>")
	}
}

// kv writes <dt>key</dt><dd>items</dd>, nothing when items is empty.
func (r *renderer) kv(key string, items []string, sep string) {
	if len(items) == 0 {
		return
	}
	r.raw("<dt>")
	r.raw(key)
	r.raw("</dt><dd>")
	for j, s := range items {
		if j > 0 {
			r.raw(sep)
		}
		r.text(s)
	}
	r.raw("</dd>")
}

func (r *renderer) failure(u *Unit, id string) {
	f := u.Failure
	r.raw("<section class=\"failure\"")
	r.attr("id", id)
	r.raw(" role=\"alert\">\n<h3>Inference failed")
	if f.Kind != "" {
		r.raw(": ")
		r.text(f.Kind)
	}
	r.raw("</h3>\n<pre class=\"message\">")
	r.text(f.Message)
	r.raw("</pre>\n<dl class=\"kv\">")
	if f.Op != "" {
		r.raw("<dt>operation</dt><dd>")
		r.code(f.Op)
		r.raw("</dd>")
	}
	if f.At.Line > 0 {
		r.raw("<dt>position</dt><dd>")
		r.pos(f.At)
		r.raw("</dd>")
	}
	if f.Entry != "" {
		r.raw("<dt>entry</dt><dd>")
		r.text(f.Entry)
		r.raw("</dd>")
	}
	if f.Constraint != "" {
		r.raw("<dt>constraint</dt><dd class=\"constraint\">")
		r.code(f.Constraint)
		r.raw("</dd>")
	}
	if f.Relation != "" {
		r.raw("<dt>relation</dt><dd>")
		r.code(f.Relation)
		r.raw("</dd>")
	}
	r.raw("</dl>\n")
	if len(f.Sides) > 0 {
		r.raw("<div class=\"sides\">\n")
		for i := range f.Sides {
			sd := &f.Sides[i]
			r.raw("<div class=\"side\">\n<h4>")
			r.raw(sideName(i, len(f.Sides)))
			r.raw("</h4>\n<p>")
			r.code(sd.Text)
			r.raw("</p>\n<div class=\"shape\">")
			// The provenance shown expanded: the row's steps and each axis's.
			r.open, r.scope, r.subject = true, nil, sideName(i, len(f.Sides))
			r.row(&sd.Row, rowIndex(sd.Row.Kind))
			r.open = false
			r.raw("</div>\n</div>\n")
		}
		r.raw("</div>\n")
	}
	if len(f.Related) > 0 {
		r.raw("<h4>Related positions</h4>\n<ul>")
		for _, rel := range f.Related {
			r.raw("<li>")
			r.pos(rel.At)
			if rel.Msg != "" {
				r.raw(": ")
				r.text(rel.Msg)
			}
			r.raw("</li>")
		}
		r.raw("</ul>\n")
	}
	r.raw("</section>\n")
}

func sideName(i, n int) string {
	if n == 2 {
		return [2]string{"Result side", "Operand side"}[i]
	}
	return "Side " + strconv.Itoa(i+1)
}

func rowIndex(kind string) int {
	switch kind {
	case "batch":
		return 0
	case "input":
		return 1
	}
	return 2
}

func (r *renderer) sources() {
	if len(r.p.Sources) == 0 {
		return
	}
	r.raw("<section id=\"sources\">\n<h2>Sources</h2>\n")
	for i := range r.p.Sources {
		s := &r.p.Sources[i]
		r.raw("<figure class=\"source\"")
		r.attr("id", s.ID)
		r.raw(">\n<figcaption>")
		r.code(s.Name)
		r.raw("</figcaption>\n<div class=\"src\" role=\"region\" tabindex=\"0\"")
		r.attr("aria-label", "source "+s.Name)
		r.raw(">\n")
		first := s.FirstLine
		if first <= 0 {
			first = 1
		}
		for k, line := range s.Lines {
			n := first + k
			anchor := Pos{Source: s.ID, Line: n}.Anchor()
			m, marked := r.marks[anchor]
			r.raw("<div class=\"l")
			if marked && m.related && !m.failing {
				r.raw(" related")
			}
			r.raw("\"")
			r.attr("id", anchor)
			r.raw("><a class=\"n\" href=\"#")
			r.attrText(anchor)
			r.raw("\">")
			r.int(int64(n))
			r.raw("</a><code>")
			if marked && m.failing {
				r.failingLine(line, m)
			} else {
				r.text(line)
			}
			r.raw("</code></div>\n")
		}
		r.raw("</div>\n</figure>\n")
	}
	r.raw("</section>\n")
}

// failingLine writes a source line wrapped in <mark class="failing">,
// with the token at the failing column underlined.
func (r *renderer) failingLine(line string, m lineMark) {
	r.raw("<mark class=\"failing\"")
	if m.kind != "" {
		r.attr("title", m.kind)
	}
	r.raw(">")
	c := m.col - 1
	if c < 0 || c >= len(line) || !utf8.RuneStart(line[c]) {
		r.text(line)
		r.raw("</mark>")
		return
	}
	end := tokenEnd(line, c)
	r.text(line[:c])
	r.raw("<span class=\"at\">")
	r.text(line[c:end])
	r.raw("</span>")
	r.text(line[end:])
	r.raw("</mark>")
}

// tokenEnd is the end of the token starting at byte c of line: a quoted
// string, a run of word characters, or one character.
func tokenEnd(line string, c int) int {
	ch := line[c]
	if ch == '"' || ch == '`' || ch == '\'' {
		if j := strings.IndexByte(line[c+1:], ch); j >= 0 {
			return c + 1 + j + 1
		}
		return len(line)
	}
	isWord := func(b byte) bool {
		return b == '_' || b == '.' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80
	}
	if !isWord(ch) {
		_, n := utf8.DecodeRuneInString(line[c:])
		return c + n
	}
	j := c
	for j < len(line) && isWord(line[j]) {
		j++
	}
	// Do not split a multi-byte rune.
	for j < len(line) && !utf8.RuneStart(line[j]) {
		j++
	}
	return j
}

// collectStages lists the stages the page's steps name, with their
// rules, in page order of first appearance.
func collectStages(p *Page) [][2]string {
	var out [][2]string
	seen := map[string]bool{}
	add := func(steps []Step) {
		for i := range steps {
			if st := steps[i].Stage; st != "" && !seen[st] {
				seen[st] = true
				out = append(out, [2]string{st, steps[i].StageRule})
			}
		}
	}
	row := func(row *Row) {
		add(row.Steps)
		for a := range row.Axes {
			add(row.Axes[a].Steps)
		}
	}
	shape := func(sh *Shape) {
		for k := range sh.Rows {
			row(&sh.Rows[k])
		}
	}
	for i := range p.Units {
		u := &p.Units[i]
		if f := u.Failure; f != nil {
			for k := range f.Sides {
				row(&f.Sides[k].Row)
			}
		}
		for j := range u.Params {
			shape(&u.Params[j].Shape)
			for _, s := range u.Params[j].SizedBy {
				add([]Step{s.Step})
			}
		}
		for j := range u.Entries {
			for k := range u.Entries[j].Tensors {
				shape(&u.Entries[j].Tensors[k].Shape)
			}
		}
	}
	return out
}

// stageList writes the stages the page's steps name, with their rules.
func (r *renderer) stageList() {
	if len(r.stages) == 0 {
		return
	}
	r.raw("<section id=\"stages\">\n<h2>Stages of inference</h2>\n<p>Each binding names the stage that made it: the operations' constraints solved as the program is elaborated, then the closing stages' commitments.</p>\n<dl class=\"kv prose\">")
	for _, st := range r.stages {
		r.raw("<dt>")
		r.text(st[0])
		r.raw("</dt><dd>")
		r.text(orDefault(st[1], "—"))
		r.raw("</dd>")
	}
	r.raw("</dl>\n</section>\n")
}
