package browser

import (
	"html"
	"strings"
)

// Node is an element of a parsed DOM, or a text node (Tag "").
//
// [Parse] is a small tolerant parser for what chromium's serializer writes
// (every non-void element closed, attribute values quoted), not a full
// HTML5 parser: an end tag closes the nearest open element of its name and
// is ignored when none is open; script, style and the other raw-text
// elements hold their text unparsed; comments and doctypes are dropped.
type Node struct {
	// Tag is the element's name in lower case; "" for a text node and
	// for the root Parse returns.
	Tag string
	// Attrs are the element's attributes, names in lower case, values
	// unescaped.
	Attrs map[string]string
	// Data is a text node's text, unescaped.
	Data     string
	Children []*Node
}

// rawText are the elements whose content the serializer writes unescaped.
var rawText = map[string]bool{
	"script": true, "style": true, "xmp": true, "iframe": true,
	"noembed": true, "noframes": true, "noscript": true, "plaintext": true,
}

// void are the elements without an end tag.
var void = map[string]bool{
	"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true,
	"img": true, "input": true, "link": true, "meta": true, "param": true,
	"source": true, "track": true, "wbr": true, "keygen": true, "basefont": true,
	"bgsound": true, "frame": true,
}

// Parse parses a serialized DOM (Result.DOM) into a tree under a root node.
func Parse(dom string) *Node {
	root := &Node{}
	stack := []*Node{root}
	top := func() *Node { return stack[len(stack)-1] }
	text := func(s string) {
		if s != "" {
			top().Children = append(top().Children, &Node{Data: html.UnescapeString(s)})
		}
	}
	for len(dom) > 0 {
		lt := strings.IndexByte(dom, '<')
		if lt < 0 {
			text(dom)
			break
		}
		text(dom[:lt])
		dom = dom[lt:]
		switch {
		case strings.HasPrefix(dom, "<!--"):
			end := strings.Index(dom, "-->")
			if end < 0 {
				return root
			}
			dom = dom[end+3:]
		case strings.HasPrefix(dom, "<!"), strings.HasPrefix(dom, "<?"):
			end := strings.IndexByte(dom, '>')
			if end < 0 {
				return root
			}
			dom = dom[end+1:]
		case strings.HasPrefix(dom, "</"):
			end := strings.IndexByte(dom, '>')
			if end < 0 {
				return root
			}
			name := strings.ToLower(strings.TrimSpace(dom[2:end]))
			dom = dom[end+1:]
			for i := len(stack) - 1; i > 0; i-- {
				if stack[i].Tag == name {
					stack = stack[:i]
					break
				}
			}
		default:
			n, rest, selfClosing, ok := startTag(dom)
			if !ok { // a lone '<': text
				text("<")
				dom = dom[1:]
				continue
			}
			dom = rest
			top().Children = append(top().Children, n)
			if selfClosing || void[n.Tag] {
				continue
			}
			if rawText[n.Tag] {
				end := indexFold(dom, "</"+n.Tag)
				if end < 0 {
					end = len(dom)
				}
				if end > 0 {
					n.Children = append(n.Children, &Node{Data: dom[:end]})
				}
				dom = dom[end:]
				continue
			}
			stack = append(stack, n)
		}
	}
	return root
}

// startTag reads the start tag at the beginning of s ("<name attrs...>").
func startTag(s string) (n *Node, rest string, selfClosing, ok bool) {
	i := 1
	for i < len(s) && !isSpace(s[i]) && s[i] != '>' && s[i] != '/' {
		i++
	}
	if i == 1 {
		return nil, s, false, false
	}
	n = &Node{Tag: strings.ToLower(s[1:i]), Attrs: map[string]string{}}
	for {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			return n, "", false, true
		}
		switch s[i] {
		case '>':
			return n, s[i+1:], false, true
		case '/':
			if i+1 < len(s) && s[i+1] == '>' {
				return n, s[i+2:], true, true
			}
			i++
			continue
		}
		j := i
		for j < len(s) && !isSpace(s[j]) && s[j] != '=' && s[j] != '>' && !(s[j] == '/' && j+1 < len(s) && s[j+1] == '>') {
			j++
		}
		name := strings.ToLower(s[i:j])
		i = j
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		val := ""
		if i < len(s) && s[i] == '=' {
			i++
			for i < len(s) && isSpace(s[i]) {
				i++
			}
			if i < len(s) && (s[i] == '"' || s[i] == '\'') {
				q := s[i]
				end := strings.IndexByte(s[i+1:], q)
				if end < 0 {
					val, i = s[i+1:], len(s)
				} else {
					val, i = s[i+1:i+1+end], i+2+end
				}
			} else {
				j := i
				for j < len(s) && !isSpace(s[j]) && s[j] != '>' {
					j++
				}
				val, i = s[i:j], j
			}
		}
		if _, dup := n.Attrs[name]; !dup && name != "" {
			n.Attrs[name] = html.UnescapeString(val)
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// indexFold is strings.Index ignoring ASCII case.
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

// Attr returns the value of the attribute name (lower case) and whether n
// has it.
func (n *Node) Attr(name string) (string, bool) {
	v, ok := n.Attrs[name]
	return v, ok
}

// HasClass reports whether class is one of n's classes.
func (n *Node) HasClass(class string) bool {
	for _, c := range strings.Fields(n.Attrs["class"]) {
		if c == class {
			return true
		}
	}
	return false
}

// Text returns the text under n, concatenated in document order (script
// and style content included, as textContent does).
func (n *Node) Text() string {
	var b strings.Builder
	n.walk(func(m *Node) bool {
		if m.Tag == "" {
			b.WriteString(m.Data)
		}
		return true
	})
	return b.String()
}

// walk visits n and its descendants in document order while f returns true.
func (n *Node) walk(f func(*Node) bool) bool {
	if !f(n) {
		return false
	}
	for _, c := range n.Children {
		if !c.walk(f) {
			return false
		}
	}
	return true
}

// All returns the elements under n (n included) for which match is true,
// in document order.
func (n *Node) All(match func(*Node) bool) []*Node {
	var out []*Node
	n.walk(func(m *Node) bool {
		if m.Tag != "" && match(m) {
			out = append(out, m)
		}
		return true
	})
	return out
}

// First returns the first element under n (n included) for which match is
// true, or nil.
func (n *Node) First(match func(*Node) bool) *Node {
	var found *Node
	n.walk(func(m *Node) bool {
		if m.Tag != "" && match(m) {
			found = m
			return false
		}
		return true
	})
	return found
}

// ByID returns the element with the id, or nil.
func (n *Node) ByID(id string) *Node {
	return n.First(func(m *Node) bool { v, ok := m.Attrs["id"]; return ok && v == id })
}

// ByClass returns the elements with the class.
func (n *Node) ByClass(class string) []*Node {
	return n.All(func(m *Node) bool { return m.HasClass(class) })
}

// ByTag returns the elements named tag (any case).
func (n *Node) ByTag(tag string) []*Node {
	tag = strings.ToLower(tag)
	return n.All(func(m *Node) bool { return m.Tag == tag })
}

// HasElement reports whether dom has an element named tag ("" for any)
// whose attribute attr equals value. An attr of "class" matches one of the
// element's classes; an attr of "" matches any element named tag.
func HasElement(dom, tag, attr, value string) bool {
	tag = strings.ToLower(tag)
	attr = strings.ToLower(attr)
	return Parse(dom).First(func(m *Node) bool {
		if tag != "" && m.Tag != tag {
			return false
		}
		switch attr {
		case "":
			return true
		case "class":
			return m.HasClass(value)
		}
		v, ok := m.Attrs[attr]
		return ok && v == value
	}) != nil
}

// TextOf returns the text of the element with the id (its textContent:
// the text nodes under it concatenated, so "<h2>A</h2><p>B</p>" gives
// "AB"), with runs of white space collapsed to one space and trimmed, and
// whether there is such an element.
func TextOf(dom, id string) (string, bool) {
	n := Parse(dom).ByID(id)
	if n == nil {
		return "", false
	}
	return strings.Join(strings.Fields(n.Text()), " "), true
}

// CountClass returns the number of elements with the class.
func CountClass(dom, class string) int {
	return len(Parse(dom).ByClass(class))
}

// AttrsOfClass returns, in document order, the value of attr of every
// element with the class ("" where one lacks it).
func AttrsOfClass(dom, class, attr string) []string {
	var vals []string
	for _, n := range Parse(dom).ByClass(class) {
		vals = append(vals, n.Attrs[strings.ToLower(attr)])
	}
	return vals
}

// BodyAttr returns the value of the body element's attribute attr (say
// "data-status") and whether it has it.
func BodyAttr(dom, attr string) (string, bool) {
	body := Parse(dom).First(func(m *Node) bool { return m.Tag == "body" })
	if body == nil {
		return "", false
	}
	return body.Attr(strings.ToLower(attr))
}
