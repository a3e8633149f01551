package rt

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
)

// The safetensors format (Hugging Face): a little-endian uint64 N, then N
// bytes of UTF-8 JSON mapping each tensor name to {"dtype", "shape",
// "data_offsets": [begin, end]} (plus an optional "__metadata__" object of
// strings), then the data buffer; offsets are relative to the start of
// the buffer, data is row-major and little-endian.

// maxSafetensorsHeader bounds the JSON header (the reference
// implementation's limit), so a damaged length cannot make LoadSafetensors
// allocate without bound.
const maxSafetensorsHeader = 100 << 20

// Sentinel errors of the safetensors functions (wrapped with details).
const (
	// ErrSafetensors: the input is not a well-formed safetensors file.
	ErrSafetensors = Error("malformed safetensors file")
	// ErrDType: a stored tensor has a dtype this package cannot convert.
	ErrDType = Error("unsupported safetensors dtype")
)

// TorchConv2d returns the axis permutation (for
// SafetensorsOptions.Permute) that maps a PyTorch nn.Conv2d weight,
// stored [out_channels][in_channels][kh][kw], to ocannlgen's memory order
// for a `kh, kw, ic -> oc` kernel, [oc][kh][kw][ic]: axis k of the
// parameter is axis TorchConv2d()[k] of the file's tensor.
func TorchConv2d() []int { return []int{0, 2, 3, 1} }

// SafetensorsOptions adjust how tensors of a safetensors file map to a
// model's parameters. The zero value (or nil) maps names one to one and
// converts no layout.
type SafetensorsOptions struct {
	// Names maps a parameter name (Tensor.Name, e.g. "net.w1") to the
	// tensor's name in the file (e.g. "fc1.weight"). Parameters not in
	// the map use their own name.
	Names map[string]string
	// Permute maps a parameter name to an axis permutation: axis k of the
	// parameter's dims is axis Permute[name][k] of the file's tensor (see
	// TorchConv2d). LoadSafetensors transposes the data accordingly, and
	// SaveSafetensors writes the inverse layout, so a round trip is the
	// identity. A PyTorch nn.Linear weight ([out][in]) already matches the
	// memory order of an `in -> out` parameter and needs none.
	Permute map[string][]int
	// IgnoreExtra lets LoadSafetensors skip tensors of the file that no
	// parameter maps to (an error otherwise).
	IgnoreExtra bool
	// Metadata is written as the file's "__metadata__" by
	// SaveSafetensors.
	Metadata map[string]string
}

func (o *SafetensorsOptions) fileName(name string) string {
	if o != nil {
		if n, ok := o.Names[name]; ok {
			return n
		}
	}
	return name
}

func (o *SafetensorsOptions) perm(name string) []int {
	if o != nil {
		return o.Permute[name]
	}
	return nil
}

// stHeaderEntry is one tensor of a safetensors header.
type stHeaderEntry struct {
	DType       string   `json:"dtype"`
	Shape       []int    `json:"shape"`
	DataOffsets [2]int64 `json:"data_offsets"`
}

// dtypeSize is the byte size of the dtypes LoadSafetensors converts.
var dtypeSize = map[string]int{"F64": 8, "F32": 4, "F16": 2, "BF16": 2}

// checkPerm validates a permutation of rank axes.
func checkPerm(name string, perm []int, rank int) error {
	if perm == nil {
		return nil
	}
	if len(perm) != rank {
		return fmt.Errorf("rt: safetensors: tensor %q: permutation %v for %d axes: %w", name, perm, rank, ErrInvalid)
	}
	seen := make([]bool, rank)
	for _, p := range perm {
		if p < 0 || p >= rank || seen[p] {
			return fmt.Errorf("rt: safetensors: tensor %q: %v is not a permutation: %w", name, perm, ErrInvalid)
		}
		seen[p] = true
	}
	return nil
}

// permuted returns the dims of the file's tensor for parameter dims under
// perm (file axis perm[k] has the parameter's axis k).
func permuted(dims, perm []int) []int {
	if perm == nil {
		return slices.Clone(dims)
	}
	out := make([]int, len(dims))
	for k, p := range perm {
		out[p] = dims[k]
	}
	return out
}

// forEachPermuted calls f(dst, src) for every cell: dst is the row-major
// offset in the parameter's dims, src the row-major offset of the same
// cell in the file's layout (file axis perm[k] is parameter axis k).
func forEachPermuted(dims, perm []int, f func(dst, src int)) {
	n := 1
	for _, d := range dims {
		n *= d
	}
	if perm == nil {
		for i := range n {
			f(i, i)
		}
		return
	}
	fdims := permuted(dims, perm)
	fstride := make([]int, len(fdims))
	s := 1
	for k := len(fdims) - 1; k >= 0; k-- {
		fstride[k] = s
		s *= fdims[k]
	}
	idx := make([]int, len(dims))
	for dst := range n {
		src := 0
		for k, i := range idx {
			src += i * fstride[perm[k]]
		}
		f(dst, src)
		for k := len(idx) - 1; k >= 0; k-- {
			idx[k]++
			if idx[k] < dims[k] {
				break
			}
			idx[k] = 0
		}
	}
}

// decodeElem reads element i of a little-endian buffer of dtype dt.
func decodeElem(dt string, b []byte, i int) float64 {
	switch dt {
	case "F64":
		return math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	case "F32":
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	case "BF16":
		return float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16))
	case "F16":
		return halfToFloat(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return math.NaN()
}

// halfToFloat converts an IEEE 754 binary16 value.
func halfToFloat(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	frac := float64(h & 0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(frac, -24)
	case 0x1f:
		if frac != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	}
	return sign * math.Ldexp(1024+frac, exp-25)
}

// readSafetensorsHeader reads the length-prefixed JSON header and
// returns the entries, sorted by name, and the data buffer.
func readSafetensorsHeader(r io.Reader) (map[string]stHeaderEntry, []byte, error) {
	var lenb [8]byte
	if _, err := io.ReadFull(r, lenb[:]); err != nil {
		return nil, nil, fmt.Errorf("rt: safetensors: header length: %w: %w", ErrSafetensors, err)
	}
	n := binary.LittleEndian.Uint64(lenb[:])
	if n < 2 || n > maxSafetensorsHeader {
		return nil, nil, fmt.Errorf("rt: safetensors: header length %d out of range: %w", n, ErrSafetensors)
	}
	hdr := make([]byte, n)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, nil, fmt.Errorf("rt: safetensors: header: %w: %w", ErrSafetensors, err)
	}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(hdr))
	if err := dec.Decode(&raw); err != nil {
		return nil, nil, fmt.Errorf("rt: safetensors: header JSON: %w: %w", ErrSafetensors, err)
	}
	if rest := strings.TrimRight(string(hdr[dec.InputOffset():]), " \x00"); rest != "" {
		return nil, nil, fmt.Errorf("rt: safetensors: trailing bytes after the header JSON: %w", ErrSafetensors)
	}
	entries := make(map[string]stHeaderEntry, len(raw))
	for name, msg := range raw {
		if name == "__metadata__" {
			var md map[string]string
			if err := json.Unmarshal(msg, &md); err != nil {
				return nil, nil, fmt.Errorf("rt: safetensors: __metadata__ must map strings to strings: %w", ErrSafetensors)
			}
			continue
		}
		var e stHeaderEntry
		d := json.NewDecoder(bytes.NewReader(msg))
		d.DisallowUnknownFields()
		if err := d.Decode(&e); err != nil {
			return nil, nil, fmt.Errorf("rt: safetensors: tensor %q: %w: %w", name, ErrSafetensors, err)
		}
		entries[name] = e
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, fmt.Errorf("rt: safetensors: data: %w", err)
	}
	// Offsets must tile the buffer exactly, in some order, each of its
	// tensor's byte size.
	type span struct {
		name       string
		begin, end int64
	}
	spans := make([]span, 0, len(entries))
	for name, e := range entries {
		b, en := e.DataOffsets[0], e.DataOffsets[1]
		if b < 0 || en < b || en > int64(len(data)) {
			return nil, nil, fmt.Errorf("rt: safetensors: tensor %q: data offsets [%d, %d] outside the %d-byte buffer: %w", name, b, en, len(data), ErrSafetensors)
		}
		if size, ok := dtypeSize[e.DType]; ok {
			cells := int64(1)
			for _, d := range e.Shape {
				if d < 0 || (d != 0 && cells > math.MaxInt64/8/int64(d)) {
					return nil, nil, fmt.Errorf("rt: safetensors: tensor %q: bad shape %v: %w", name, e.Shape, ErrSafetensors)
				}
				cells *= int64(d)
			}
			if cells*int64(size) != en-b {
				return nil, nil, fmt.Errorf("rt: safetensors: tensor %q: %s %v needs %d bytes, offsets give %d: %w", name, e.DType, e.Shape, cells*int64(size), en-b, ErrSafetensors)
			}
		}
		spans = append(spans, span{name, b, en})
	}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].begin != spans[j].begin {
			return spans[i].begin < spans[j].begin
		}
		return spans[i].name < spans[j].name
	})
	at := int64(0)
	for _, s := range spans {
		if s.begin != at {
			return nil, nil, fmt.Errorf("rt: safetensors: tensor %q starts at byte %d, expected %d (overlap or hole): %w", s.name, s.begin, at, ErrSafetensors)
		}
		at = s.end
	}
	if at != int64(len(data)) {
		return nil, nil, fmt.Errorf("rt: safetensors: %d bytes after the last tensor: %w", int64(len(data))-at, ErrSafetensors)
	}
	return entries, data, nil
}

// LoadSafetensors reads a safetensors file from r into ts: every tensor
// of ts must be in the file (under its name, or under opt.Names[name])
// with the dims of ts (after opt.Permute); F32, F64, BF16 and F16 data
// are converted to the tensor's element type. Every problem is reported
// (the error joins one error per mismatching tensor: ErrMissing, ErrExtra
// unless opt.IgnoreExtra, ErrDType, or a *ShapeError naming the tensor and
// both shapes), and on any error nothing in ts is modified. A damaged file
// gives an error wrapping ErrSafetensors.
func LoadSafetensors(r io.Reader, ts []Tensor, opt *SafetensorsOptions) error {
	if err := checkSet("safetensors", ts); err != nil {
		return err
	}
	entries, data, err := readSafetensorsHeader(r)
	if err != nil {
		return err
	}
	var errs []error
	used := make(map[string]bool, len(ts))
	for i := range ts {
		t := &ts[i]
		fn := opt.fileName(t.Name)
		used[fn] = true
		perm := opt.perm(t.Name)
		if err := checkPerm(t.Name, perm, len(t.Dims)); err != nil {
			return err
		}
		e, ok := entries[fn]
		if !ok {
			errs = append(errs, fmt.Errorf("rt: safetensors: tensor %q (file name %q, dims %v) is not in the file: %w", t.Name, fn, t.Dims, ErrMissing))
			continue
		}
		if _, ok := dtypeSize[e.DType]; !ok {
			errs = append(errs, fmt.Errorf("rt: safetensors: tensor %q: dtype %s: %w", fn, e.DType, ErrDType))
			continue
		}
		if want := permuted(t.Dims, perm); !slices.Equal(e.Shape, want) && !(len(want) == 0 && slices.Equal(e.Shape, []int{1})) {
			errs = append(errs, &ShapeError{Name: t.Name, File: slices.Clone(e.Shape), Want: want})
		}
	}
	if !opt.ignoreExtra() {
		var extra []string
		for name := range entries {
			if !used[name] {
				extra = append(extra, name)
			}
		}
		sort.Strings(extra)
		for _, name := range extra {
			e := entries[name]
			errs = append(errs, fmt.Errorf("rt: safetensors: tensor %q (%s %v) is in the file but no parameter maps to it: %w", name, e.DType, e.Shape, ErrExtra))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for i := range ts {
		t := &ts[i]
		e := entries[opt.fileName(t.Name)]
		buf := data[e.DataOffsets[0]:e.DataOffsets[1]]
		forEachPermuted(t.Dims, opt.perm(t.Name), func(dst, src int) {
			v := decodeElem(e.DType, buf, src)
			if t.Data64 != nil {
				t.Data64[dst] = v
			} else {
				t.Data32[dst] = float32(v)
			}
		})
	}
	return nil
}

func (o *SafetensorsOptions) ignoreExtra() bool { return o != nil && o.IgnoreExtra }

// SaveSafetensors writes ts to w as a safetensors file: each tensor under
// opt.Names[name] (or its own name), as F32 or F64 after its element
// type, laid out by the inverse of opt.Permute[name], in the order of ts.
// The header is padded with spaces to a multiple of 8 bytes, as the
// reference implementation does.
func SaveSafetensors(w io.Writer, ts []Tensor, opt *SafetensorsOptions) error {
	if err := checkSet("safetensors", ts); err != nil {
		return err
	}
	type named struct {
		file string
		t    *Tensor
	}
	order := make([]named, len(ts))
	seen := map[string]string{}
	for i := range ts {
		t := &ts[i]
		fn := opt.fileName(t.Name)
		if prev, ok := seen[fn]; ok {
			return fmt.Errorf("rt: safetensors: tensors %q and %q both map to %q: %w", prev, t.Name, fn, ErrInvalid)
		}
		if fn == "" || fn == "__metadata__" {
			return fmt.Errorf("rt: safetensors: tensor %q: file name %q is not allowed: %w", t.Name, fn, ErrInvalid)
		}
		seen[fn] = t.Name
		if err := checkPerm(t.Name, opt.perm(t.Name), len(t.Dims)); err != nil {
			return err
		}
		order[i] = named{fn, t}
	}
	// The header is a JSON object written field by field so that its key
	// order is the order of ts (encoding/json sorts map keys).
	var hdr bytes.Buffer
	hdr.WriteByte('{')
	if opt != nil && len(opt.Metadata) > 0 {
		md, err := json.Marshal(opt.Metadata)
		if err != nil {
			return fmt.Errorf("rt: safetensors: metadata: %w", err)
		}
		hdr.WriteString(`"__metadata__":`)
		hdr.Write(md)
	}
	off := int64(0)
	for i, nt := range order {
		size := int64(4)
		dt := "F32"
		if nt.t.Data64 != nil {
			size, dt = 8, "F64"
		}
		shape := permuted(nt.t.Dims, opt.perm(nt.t.Name))
		if shape == nil {
			shape = []int{}
		}
		n := int64(len(nt.t.Data32) + len(nt.t.Data64))
		e, err := json.Marshal(stHeaderEntry{DType: dt, Shape: shape, DataOffsets: [2]int64{off, off + n*size}})
		if err != nil {
			return fmt.Errorf("rt: safetensors: %w", err)
		}
		key, _ := json.Marshal(nt.file)
		if i > 0 || hdr.Len() > 1 {
			hdr.WriteByte(',')
		}
		hdr.Write(key)
		hdr.WriteByte(':')
		hdr.Write(e)
		off += n * size
	}
	hdr.WriteByte('}')
	for hdr.Len()%8 != 0 {
		hdr.WriteByte(' ')
	}
	out := make([]byte, 8, 8+hdr.Len()+int(off))
	binary.LittleEndian.PutUint64(out, uint64(hdr.Len()))
	out = append(out, hdr.Bytes()...)
	for _, nt := range order {
		t := nt.t
		start := len(out)
		if t.Data64 != nil {
			out = append(out, make([]byte, 8*len(t.Data64))...)
			forEachPermuted(t.Dims, opt.perm(t.Name), func(dst, src int) {
				binary.LittleEndian.PutUint64(out[start+8*src:], math.Float64bits(t.Data64[dst]))
			})
			continue
		}
		out = append(out, make([]byte, 4*len(t.Data32))...)
		forEachPermuted(t.Dims, opt.perm(t.Name), func(dst, src int) {
			binary.LittleEndian.PutUint32(out[start+4*src:], math.Float32bits(t.Data32[dst]))
		})
	}
	if _, err := w.Write(out); err != nil {
		return fmt.Errorf("rt: safetensors: %w", err)
	}
	return nil
}
