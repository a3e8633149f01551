package explain

import (
	"math"
	"sort"
	"strconv"
	"unicode/utf8"
)

// maxGraphOps is the most operations an entry's graph draws; a larger
// entry's graph draws the first maxGraphOps in program order and says
// so (the tables list every tensor and operation).
const maxGraphOps = 250

// Graph geometry, in SVG user units (pixels).
const (
	nodeH     = 36
	layerStep = 84
	nodeGap   = 22
	margin    = 16
	minNodeW  = 56
	maxNodeW  = 260
	labelCW   = 7.0 // width of a label character (12px sans)
	subCW     = 6.4 // width of a sub-label character (10.5px mono)
	edgeCW    = 6.4
)

// Node kinds of the drawn graph.
const (
	nodeOp   = iota // an operation
	nodeLeaf        // a tensor no drawn operation makes (input, parameter)
	nodeSink        // a tensor no drawn operation reads (a result)
)

// gnode is one node of the drawn graph.
type gnode struct {
	kind   int
	op     int // nodeOp: the operation
	tensor int // nodeLeaf, nodeSink: the tensor
	label  string
	sub    string
	title  string
	layer  int
	order  float64
	x, w   float64
	preds  []int
	succs  []int
}

// gedge is one drawn edge: a tensor from the node making it to one
// reading it; label marks the edge that carries the tensor's label.
type gedge struct {
	from, to, tensor int
	label            bool
}

// graphLayout is an entry's drawn graph: nodes with their layer and x,
// edges, and how many operations it draws.
type graphLayout struct {
	nodes  []gnode
	edges  []gedge
	layers [][]int
	shown  int
	width  float64
	height float64
}

// layoutGraph lays out e's graph: operations as nodes, tensors as edges,
// leaves as source nodes and unread results as sink nodes; longest-path
// layering from the leaves (leaves then moved down next to their first
// reader), nodes ordered within layers by barycenter sweeps, then placed
// near their predecessors without overlap. Deterministic: no maps.
func layoutGraph(e *Entry) *graphLayout {
	g := &graphLayout{shown: len(e.Ops)}
	if g.shown > maxGraphOps {
		g.shown = maxGraphOps
	}
	opNode := make([]int, g.shown)
	for i := 0; i < g.shown; i++ {
		o := &e.Ops[i]
		label := o.Kind
		if label == "" {
			label = "op"
		}
		sub := o.Spec
		if sub == "" {
			sub = o.Desc
		}
		opNode[i] = len(g.nodes)
		g.nodes = append(g.nodes, gnode{kind: nodeOp, op: i, tensor: -1,
			label: "#" + strconv.Itoa(o.ID) + " " + label, sub: sub,
			title: "#" + strconv.Itoa(o.ID) + " " + orDefault(o.Desc, label)})
	}
	leafNode := make([]int, len(e.Tensors))
	for i := range leafNode {
		leafNode[i] = -1
	}
	labelled := make([]bool, len(e.Tensors))
	addEdge := func(from, to, t int) {
		ed := gedge{from: from, to: to, tensor: t}
		if g.nodes[from].kind == nodeOp && g.nodes[to].kind == nodeOp && !labelled[t] {
			ed.label = true
			labelled[t] = true
		}
		g.edges = append(g.edges, ed)
		g.nodes[from].succs = append(g.nodes[from].succs, to)
		g.nodes[to].preds = append(g.nodes[to].preds, from)
	}
	for i := 0; i < g.shown; i++ {
		for _, t := range e.Ops[i].RHS {
			if t < 0 || t >= len(e.Tensors) {
				continue
			}
			p := e.Tensors[t].Op
			if p >= 0 && p < g.shown && p != i {
				addEdge(opNode[p], opNode[i], t)
				continue
			}
			if leafNode[t] < 0 {
				tt := &e.Tensors[t]
				leafNode[t] = len(g.nodes)
				g.nodes = append(g.nodes, gnode{kind: nodeLeaf, op: -1, tensor: t,
					label: tt.Name, sub: tt.Shape.Text,
					title: orDefault(tt.Kind, "leaf") + " " + tt.Name + ": " + tt.Shape.Text})
			}
			addEdge(leafNode[t], opNode[i], t)
		}
	}
	// Results no drawn operation reads end in sink nodes.
	for i := 0; i < g.shown; i++ {
		t := e.Ops[i].LHS
		if t < 0 || t >= len(e.Tensors) || labelled[t] {
			continue
		}
		read := false
		for _, u := range e.Tensors[t].Uses {
			if u >= 0 && u < g.shown && u != i {
				read = true
			}
		}
		if read {
			continue
		}
		tt := &e.Tensors[t]
		what := "result"
		if len(tt.Uses) > 0 {
			what = "read by operations not drawn"
		}
		n := len(g.nodes)
		g.nodes = append(g.nodes, gnode{kind: nodeSink, op: -1, tensor: t,
			label: tt.Name, sub: tt.Shape.Text, title: what + " " + tt.Name + ": " + tt.Shape.Text})
		labelled[t] = true
		addEdge(opNode[i], n, t)
	}
	g.layer()
	g.order()
	g.place()
	return g
}

// layer assigns longest-path layers: operations one below their deepest
// operand, leaves just above their shallowest reader, sinks below their
// maker.
func (g *graphLayout) layer() {
	// Operations: in program order their operands come first; repeat a
	// few passes for out-of-order input (a cycle cannot loop forever).
	for pass := 0; pass < 4; pass++ {
		changed := false
		for i := range g.nodes {
			n := &g.nodes[i]
			if n.kind != nodeOp {
				continue
			}
			l := 1
			for _, p := range n.preds {
				if g.nodes[p].kind == nodeOp && g.nodes[p].layer+1 > l {
					l = g.nodes[p].layer + 1
				}
			}
			if l != n.layer {
				n.layer, changed = l, true
			}
		}
		if !changed {
			break
		}
	}
	for i := range g.nodes {
		n := &g.nodes[i]
		switch n.kind {
		case nodeLeaf:
			l := math.MaxInt
			for _, s := range n.succs {
				if g.nodes[s].layer < l {
					l = g.nodes[s].layer
				}
			}
			if l == math.MaxInt {
				l = 1
			}
			n.layer = l - 1
		case nodeSink:
			n.layer = 1
			for _, p := range n.preds {
				if g.nodes[p].layer+1 > n.layer {
					n.layer = g.nodes[p].layer + 1
				}
			}
		}
	}
	maxL := 0
	for i := range g.nodes {
		if g.nodes[i].layer > maxL {
			maxL = g.nodes[i].layer
		}
	}
	g.layers = make([][]int, maxL+1)
	for i := range g.nodes {
		l := g.nodes[i].layer
		g.layers[l] = append(g.layers[l], i)
	}
	// Drop an empty first layer (no leaves above the first operations).
	for len(g.layers) > 0 && len(g.layers[0]) == 0 {
		g.layers = g.layers[1:]
		for i := range g.nodes {
			g.nodes[i].layer--
		}
	}
}

// order orders each layer by barycenter sweeps (down, up, down, up).
func (g *graphLayout) order() {
	g.setOrder()
	for sweep := 0; sweep < 4; sweep++ {
		down := sweep%2 == 0
		for k := range g.layers {
			l := k
			if !down {
				l = len(g.layers) - 1 - k
			}
			layer := g.layers[l]
			key := make([]float64, len(layer))
			for j, id := range layer {
				n := &g.nodes[id]
				nb := n.preds
				if !down {
					nb = n.succs
				}
				key[j] = g.mean(nb, n.order, func(m *gnode) float64 { return m.order })
			}
			idx := make([]int, len(layer))
			for j := range idx {
				idx[j] = j
			}
			sort.SliceStable(idx, func(a, b int) bool { return key[idx[a]] < key[idx[b]] })
			sorted := make([]int, len(layer))
			for j, k := range idx {
				sorted[j] = layer[k]
			}
			g.layers[l] = sorted
			g.setLayerOrder(l)
		}
	}
}

func (g *graphLayout) setOrder() {
	for l := range g.layers {
		g.setLayerOrder(l)
	}
}

// setLayerOrder sets each node's order to its centered index in its
// layer.
func (g *graphLayout) setLayerOrder(l int) {
	layer := g.layers[l]
	c := float64(len(layer)-1) / 2
	for j, id := range layer {
		g.nodes[id].order = float64(j) - c
	}
}

// nodeWidth is the width of a node's box for its (truncated) labels.
func nodeWidth(label, sub string) float64 {
	w := math.Max(float64(utf8.RuneCountInString(label))*labelCW, float64(utf8.RuneCountInString(sub))*subCW) + 20
	return math.Min(math.Max(w, minNodeW), maxNodeW)
}

// truncate shortens s to at most n runes, ending in "…".
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := range s {
		if i == n-1 {
			return s[:k] + "…"
		}
		i++
	}
	return s
}

// place sets x: each layer packed in order, then each node pulled toward
// its neighbours' mean (predecessors, else successors) with overlaps
// pushed apart and the layer shifted back to balance.
func (g *graphLayout) place() {
	maxLabel := int(math.Floor((maxNodeW - 20) / labelCW))
	maxSub := int(math.Floor((maxNodeW - 20) / subCW))
	for i := range g.nodes {
		n := &g.nodes[i]
		n.label = truncate(n.label, maxLabel)
		n.sub = truncate(n.sub, maxSub)
		n.w = nodeWidth(n.label, n.sub)
	}
	for _, layer := range g.layers {
		x := 0.0
		for _, id := range layer {
			n := &g.nodes[id]
			n.x = x + n.w/2
			x += n.w + nodeGap
		}
		for _, id := range layer {
			g.nodes[id].x -= x / 2
		}
	}
	for pass := 0; pass < 2; pass++ {
		for _, layer := range g.layers {
			desired := make([]float64, len(layer))
			for j, id := range layer {
				n := &g.nodes[id]
				nb := n.preds
				if len(nb) == 0 {
					nb = n.succs
				}
				desired[j] = g.mean(nb, n.x, func(m *gnode) float64 { return m.x })
			}
			right := math.Inf(-1)
			shift := 0.0
			for j, id := range layer {
				n := &g.nodes[id]
				x := math.Max(desired[j], right+nodeGap+n.w/2)
				n.x = x
				right = x + n.w/2
				shift += desired[j] - x
			}
			shift /= float64(len(layer))
			for _, id := range layer {
				g.nodes[id].x += shift
			}
		}
	}
	minX, maxX := math.Inf(1), math.Inf(-1)
	for i := range g.nodes {
		n := &g.nodes[i]
		minX = math.Min(minX, n.x-n.w/2)
		maxX = math.Max(maxX, n.x+n.w/2)
	}
	if len(g.nodes) == 0 {
		minX, maxX = 0, 0
	}
	for i := range g.nodes {
		g.nodes[i].x = math.Round(g.nodes[i].x - minX + margin)
	}
	// Room on the right for edge labels.
	g.width = math.Round(maxX-minX+2*margin) + 120
	g.height = float64(len(g.layers)*layerStep-(layerStep-nodeH)) + 2*margin + 14
}

func nodeY(l int) float64 { return float64(margin + l*layerStep) }

// graph writes e's graph as inline SVG in a scrolling box.
func (r *renderer) graph(e *Entry) {
	g := layoutGraph(e)
	if g.shown < len(e.Ops) {
		r.raw("<p class=\"note\">The graph draws the first ")
		r.int(int64(g.shown))
		r.raw(" of ")
		r.int(int64(len(e.Ops)))
		r.raw(" operations (program order); the tables below list every tensor and operation.</p>\n")
	}
	if len(g.nodes) == 0 {
		r.raw("<p class=\"note\">No operations to draw.</p>\n")
		return
	}
	label := "Tensor graph of " + entryTitle(e) + ": " + strconv.Itoa(g.shown) + plural(g.shown, " operation", " operations") + " as boxes, tensors as edges"
	tid := e.ID + "-gt"
	w, h := int(g.width), int(g.height)
	r.raw("<div class=\"graphbox\"><svg class=\"graph\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\"")
	r.attr("aria-labelledby", tid)
	r.attr("aria-label", label)
	r.raw(" width=\"")
	r.int(int64(w))
	r.raw("\" height=\"")
	r.int(int64(h))
	r.raw("\" viewBox=\"0 0 ")
	r.int(int64(w))
	r.raw(" ")
	r.int(int64(h))
	r.raw("\"><title")
	r.attr("id", tid)
	r.raw(">")
	r.text(label)
	r.raw("</title>\n<g>")
	for _, ed := range g.edges {
		a, b := &g.nodes[ed.from], &g.nodes[ed.to]
		x1, y1 := int(a.x), int(nodeY(a.layer))+nodeH
		x2, y2 := int(b.x), int(nodeY(b.layer))
		dy := (y2 - y1) / 2
		if dy > 70 {
			dy = 70
		}
		r.raw("<path class=\"edge\"")
		r.attr("data-tensor", tensorName(e, ed.tensor))
		r.raw(" d=\"M")
		r.pt(x1, y1)
		r.raw("C")
		r.pt(x1, y1+dy)
		r.raw(" ")
		r.pt(x2, y2-dy)
		r.raw(" ")
		r.pt(x2, y2)
		r.raw("\"/>")
	}
	r.raw("</g>\n<g>")
	for _, ed := range g.edges {
		if !ed.label {
			continue
		}
		a := &g.nodes[ed.from]
		t := &e.Tensors[ed.tensor]
		r.raw("<text class=\"elab\" x=\"")
		r.int(int64(a.x) + 5)
		r.raw("\" y=\"")
		r.int(int64(nodeY(a.layer)) + nodeH + 13)
		r.raw("\">")
		r.text(truncate(t.Name+"  "+t.Shape.Text, 48))
		r.raw("</text>")
	}
	r.raw("</g>\n<g>")
	for i := range g.nodes {
		n := &g.nodes[i]
		x := int(n.x - n.w/2)
		y := int(nodeY(n.layer))
		var href string
		cls := "node"
		rx := 6
		switch n.kind {
		case nodeOp:
			href = opAnchor(e, e.Ops[n.op].ID)
		case nodeLeaf:
			href, cls, rx = tensorAnchor(e, n.tensor), "node leaf", nodeH/2
		case nodeSink:
			href, cls, rx = tensorAnchor(e, n.tensor), "node sink", nodeH/2
		}
		r.raw("<a href=\"#")
		r.attrText(href)
		r.raw("\"><g class=\"")
		r.raw(cls)
		r.raw("\"")
		if n.kind != nodeOp {
			r.attr("data-tensor", tensorName(e, n.tensor))
		}
		r.raw("><title>")
		r.text(n.title)
		r.raw("</title><rect x=\"")
		r.int(int64(x))
		r.raw("\" y=\"")
		r.int(int64(y))
		r.raw("\" width=\"")
		r.int(int64(n.w))
		r.raw("\" height=\"")
		r.int(nodeH)
		r.raw("\" rx=\"")
		r.int(int64(rx))
		r.raw("\"/><text x=\"")
		r.int(int64(n.x))
		r.raw("\" y=\"")
		r.int(int64(y + 15))
		r.raw("\" text-anchor=\"middle\">")
		r.text(n.label)
		r.raw("</text>")
		if n.sub != "" {
			r.raw("<text class=\"sub\" x=\"")
			r.int(int64(n.x))
			r.raw("\" y=\"")
			r.int(int64(y + 29))
			r.raw("\" text-anchor=\"middle\">")
			r.text(n.sub)
			r.raw("</text>")
		}
		r.raw("</g></a>")
	}
	r.raw("</g>\n</svg></div>\n")
}

// pt writes "x,y".
func (r *renderer) pt(x, y int) {
	r.int(int64(x))
	r.raw(",")
	r.int(int64(y))
}

// mean is the mean of f over the nodes ids (a barycenter), or def when
// there are none.
func (g *graphLayout) mean(ids []int, def float64, f func(*gnode) float64) float64 {
	if len(ids) == 0 {
		return def
	}
	s := 0.0
	for _, m := range ids {
		s += f(&g.nodes[m])
	}
	return s / float64(len(ids))
}
