package rt

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// stEntry is one tensor of a safetensors header.
type stEntry struct {
	name       string
	dtype      string
	shape      []int
	begin, end int64
}

// stKnownSize is the byte size of every dtype of the format with a whole
// number of bytes per element (the header's offsets of a tensor of one of
// them must match its shape, even when it is not loaded).
var stKnownSize = map[string]int{
	"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "F8_E8M0": 1,
	"U16": 2, "I16": 2, "F16": 2, "BF16": 2,
	"U32": 4, "I32": 4, "F32": 4,
	"U64": 8, "I64": 8, "F64": 8, "C64": 8,
}

// stHeader is a parsed safetensors header.
type stHeader struct {
	entries map[string]*stEntry
	// order lists the entries by offset.
	order []*stEntry
	// md is the "__metadata__" object (nil when there is none).
	md map[string]string
	// dataLen is the length of the data buffer the offsets tile.
	dataLen int64
}

// stErr makes an error of a malformed safetensors file.
func stErr(format string, args ...any) error {
	return fmt.Errorf("rt: safetensors: "+format+": %w", append(args, ErrSafetensors)...)
}

// readSafetensorsHeader reads the length-prefixed JSON header of a
// safetensors file and checks it as the format's reference reader (the
// Rust safetensors crate) does, strictly: a JSON object of tensor entries,
// each an object with exactly the fields "dtype" (a string), "shape" (an
// array of non-negative integers) and "data_offsets" (an array of exactly
// two), spelled in lower case, each once; tensor names unique; at most one
// "__metadata__", an object of strings (never null); UTF-8 throughout; and
// offsets that tile the data buffer, each tensor's span its dtype's size
// times its element count. The header is read as it arrives: a length the
// file claims but does not hold allocates nothing.
func readSafetensorsHeader(r io.Reader) (*stHeader, error) {
	var lenb [8]byte
	if _, err := io.ReadFull(r, lenb[:]); err != nil {
		return nil, fmt.Errorf("rt: safetensors: header length: %w: %w", ErrSafetensors, err)
	}
	if what := otherFormat(lenb[:], r, "safetensors"); what != "" {
		return nil, stErr("not a safetensors file: %s", what)
	}
	n := binary.LittleEndian.Uint64(lenb[:])
	if n < 2 || n > maxSafetensorsHeader {
		return nil, stErr("header length %d out of range", n)
	}
	raw, err := readGrowing(r, n)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("rt: safetensors: the input ends after %d of the header's %d bytes: %w: %w", len(raw), n, ErrSafetensors, io.ErrUnexpectedEOF)
		}
		return nil, fmt.Errorf("rt: safetensors: header: %w", err)
	}
	h, err := parseSafetensorsHeader(raw)
	if err != nil {
		return nil, err
	}
	if err := h.tile(); err != nil {
		return nil, err
	}
	return h, nil
}

// hdrParser reads a header's JSON token by token (encoding/json's
// Unmarshal would keep the last of duplicate keys and match field names
// case-insensitively).
type hdrParser struct {
	dec *json.Decoder
}

// syntax wraps an error of the JSON decoder.
func (p *hdrParser) syntax(where string, err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("rt: safetensors: header JSON, %s: %w: %w", where, ErrSafetensors, err)
}

// token returns the next token.
func (p *hdrParser) token(where string) (json.Token, error) {
	tok, err := p.dec.Token()
	if err != nil {
		return nil, p.syntax(where, err)
	}
	return tok, nil
}

// tokenText describes a token for a message.
func tokenText(tok json.Token) string {
	switch v := tok.(type) {
	case nil:
		return "null"
	case json.Delim:
		switch v {
		case '{':
			return "an object"
		case '[':
			return "an array"
		}
		return strconv.QuoteRune(rune(v))
	case string:
		return "the string " + quote(v)
	case json.Number:
		return "the number " + quote(string(v))
	case bool:
		return strconv.FormatBool(v)
	}
	return fmt.Sprintf("%T", tok)
}

// open reads the opening delimiter d of what.
func (p *hdrParser) open(d json.Delim, what string) error {
	tok, err := p.token(what)
	if err != nil {
		return err
	}
	if tok != d {
		kind := "an object"
		if d == '[' {
			kind = "an array"
		}
		return stErr("%s is %s, not %s", what, tokenText(tok), kind)
	}
	return nil
}

// key reads an object key, or reports the end of the object (false).
func (p *hdrParser) key(what string) (string, bool, error) {
	if !p.dec.More() {
		if _, err := p.token(what); err != nil { // the closing '}'
			return "", false, err
		}
		return "", false, nil
	}
	tok, err := p.token(what)
	if err != nil {
		return "", false, err
	}
	k, ok := tok.(string)
	if !ok {
		return "", false, stErr("%s: expected a key, found %s", what, tokenText(tok))
	}
	return k, true, nil
}

// str reads a string value.
func (p *hdrParser) str(what string) (string, error) {
	tok, err := p.token(what)
	if err != nil {
		return "", err
	}
	s, ok := tok.(string)
	if !ok {
		return "", stErr("%s is %s, not a string", what, tokenText(tok))
	}
	return s, nil
}

// uints reads an array of non-negative integers, each at most limit.
func (p *hdrParser) uints(what string, limit uint64) ([]uint64, error) {
	if err := p.open('[', what); err != nil {
		return nil, err
	}
	out := []uint64{}
	for p.dec.More() {
		tok, err := p.token(what)
		if err != nil {
			return nil, err
		}
		num, ok := tok.(json.Number)
		if !ok {
			return nil, stErr("%s holds %s, not an integer", what, tokenText(tok))
		}
		v, err := strconv.ParseUint(string(num), 10, 64)
		if err != nil || v > limit {
			return nil, stErr("%s holds %s, not an integer from 0 to %d", what, quote(string(num)), limit)
		}
		out = append(out, v)
	}
	if _, err := p.token(what); err != nil { // the closing ']'
		return nil, err
	}
	return out, nil
}

// parseSafetensorsHeader parses the JSON header raw strictly (see
// readSafetensorsHeader).
func parseSafetensorsHeader(raw []byte) (*stHeader, error) {
	if !utf8.Valid(raw) {
		return nil, stErr("the header is not valid UTF-8")
	}
	p := &hdrParser{dec: json.NewDecoder(bytes.NewReader(raw))}
	p.dec.UseNumber()
	h := &stHeader{entries: map[string]*stEntry{}}
	if err := p.open('{', "the header"); err != nil {
		return nil, err
	}
	seenMD := false
	for {
		name, ok, err := p.key("the header")
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if name == "__metadata__" {
			if seenMD {
				return nil, stErr(`"__metadata__" appears twice`)
			}
			seenMD = true
			if h.md, err = p.metadata(); err != nil {
				return nil, err
			}
			continue
		}
		if _, dup := h.entries[name]; dup {
			return nil, stErr("tensor %s appears twice", quote(name))
		}
		e, err := p.entry(name)
		if err != nil {
			return nil, err
		}
		h.entries[name] = e
	}
	// Only padding may follow: JSON whitespace, or NULs.
	if rest := raw[p.dec.InputOffset():]; len(strings.Trim(string(rest), " \t\r\n\x00")) != 0 {
		return nil, stErr("%d bytes after the header's JSON object", len(rest))
	}
	return h, nil
}

// metadata reads the "__metadata__" object.
func (p *hdrParser) metadata() (map[string]string, error) {
	const what = `"__metadata__"`
	if err := p.open('{', what); err != nil {
		return nil, err
	}
	md := map[string]string{}
	for {
		k, ok, err := p.key(what)
		if err != nil {
			return nil, err
		}
		if !ok {
			return md, nil
		}
		if _, dup := md[k]; dup {
			return nil, stErr("%s: key %s appears twice", what, quote(k))
		}
		v, err := p.str(what + " value of " + quote(k))
		if err != nil {
			return nil, err
		}
		md[k] = v
	}
}

// entry reads the object of tensor name.
func (p *hdrParser) entry(name string) (*stEntry, error) {
	what := "tensor " + quote(name)
	if err := p.open('{', what); err != nil {
		return nil, err
	}
	e := &stEntry{name: name}
	var haveDType, haveShape, haveOffsets bool
	for {
		field, ok, err := p.key(what)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		dup := false
		switch field {
		case "dtype":
			dup, haveDType = haveDType, true
			if !dup {
				if e.dtype, err = p.str(what + ": dtype"); err != nil {
					return nil, err
				}
			}
		case "shape":
			dup, haveShape = haveShape, true
			if !dup {
				dims, err := p.uints(what+": shape", math.MaxInt)
				if err != nil {
					return nil, err
				}
				e.shape = make([]int, len(dims))
				for i, d := range dims {
					e.shape[i] = int(d)
				}
			}
		case "data_offsets":
			dup, haveOffsets = haveOffsets, true
			if !dup {
				offs, err := p.uints(what+": data_offsets", math.MaxInt64)
				if err != nil {
					return nil, err
				}
				if len(offs) != 2 {
					return nil, stErr("%s: data_offsets has %d elements, not 2 ([begin, end])", what, len(offs))
				}
				e.begin, e.end = int64(offs[0]), int64(offs[1])
			}
		default:
			return nil, stErr("%s: unknown field %s (the fields are \"dtype\", \"shape\" and \"data_offsets\", in lower case)", what, quote(field))
		}
		if dup {
			return nil, stErr("%s: field %q appears twice", what, field)
		}
	}
	switch {
	case !haveDType:
		return nil, stErr("%s has no dtype", what)
	case !haveShape:
		return nil, stErr("%s has no shape", what)
	case !haveOffsets:
		return nil, stErr("%s has no data_offsets", what)
	}
	return e, nil
}

// tile checks that the entries' offsets tile the data buffer exactly, in
// some order, each of its tensor's byte size, and sets order and dataLen.
func (h *stHeader) tile() error {
	h.order = make([]*stEntry, 0, len(h.entries))
	for _, e := range h.entries {
		if e.end < e.begin {
			return stErr("tensor %s: data offsets [%d, %d] are reversed", quote(e.name), e.begin, e.end)
		}
		if size, ok := stKnownSize[e.dtype]; ok {
			cells, zero := uint64(1), false
			for _, d := range e.shape {
				switch {
				case d == 0:
					zero = true
				case cells > math.MaxInt64/uint64(size)/uint64(d):
					return stErr("tensor %s: shape %s is too large", quote(e.name), dimsText(e.shape))
				default:
					cells *= uint64(d)
				}
			}
			if zero {
				cells = 0
			}
			if need := cells * uint64(size); need != uint64(e.end-e.begin) {
				return stErr("tensor %s: %s %s needs %d bytes, offsets give %d", quote(e.name), dtypeText(e.dtype), dimsText(e.shape), need, e.end-e.begin)
			}
		}
		h.order = append(h.order, e)
	}
	sort.Slice(h.order, func(i, j int) bool {
		a, b := h.order[i], h.order[j]
		if a.begin != b.begin {
			return a.begin < b.begin
		}
		if a.end != b.end {
			return a.end < b.end
		}
		return a.name < b.name
	})
	at := int64(0)
	for _, e := range h.order {
		if e.begin != at {
			return stErr("tensor %s starts at byte %d of the data, expected %d (overlap or hole)", quote(e.name), e.begin, at)
		}
		at = e.end
	}
	h.dataLen = at
	return nil
}
