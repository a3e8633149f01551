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
// model's parameters. The zero value (or nil) maps names one to one, and
// reads a file in the layout it records (one written by SaveSafetensors)
// or in ocannlgen's order, refusing tensors whose layout is ambiguous (see
// Layout).
type SafetensorsOptions struct {
	// Names maps a parameter name (Tensor.Name, e.g. "net.w1") to the
	// tensor's name in the file (e.g. "fc1.weight"). Parameters not in
	// the map use their own name.
	Names map[string]string
	// Layout is the axis order of the file's tensors. LayoutPyTorch
	// converts each tensor by its role's PyTorch permutation
	// (Tensor.PyTorchPerm: a conv kernel's [oc][ic][kh][kw] to
	// [oc][kh][kw][ic]), so the state_dict of the nn.Module equivalent to a
	// generated model loads with the Names map alone, and SaveSafetensors
	// writes that layout back. LayoutNative is ocannlgen's order (each
	// parameter's memory order). LayoutAuto (the zero value) reads the
	// layout a file written by SaveSafetensors records (its
	// LayoutMetadataKey), and otherwise ocannlgen's order; but a tensor
	// whose role has a PyTorch permutation and whose shape is the same in
	// both orders (a 3x3 conv kernel on 3 channels: [oc][3][3][3]) is
	// then refused (ErrAmbiguousLayout) instead of loaded by shape alone.
	// A Layout other than LayoutAuto that contradicts the layout the file
	// records for a tensor is an error (ErrLayoutConflict).
	Layout Layout
	// Permute maps a parameter name to an axis permutation: axis k of the
	// parameter's dims is axis Permute[name][k] of the file's tensor (see
	// TorchConv2d). LoadSafetensors transposes the data accordingly, and
	// SaveSafetensors writes the inverse layout, so a round trip is the
	// identity. An entry, even nil (ocannlgen's order), overrides Layout
	// and the file's recorded layout for that parameter. A PyTorch
	// nn.Linear weight ([out][in]) already matches the memory order of an
	// `in -> out` parameter and needs none.
	Permute map[string][]int
	// IgnoreExtra lets LoadSafetensors skip tensors of the file that no
	// parameter maps to (an error otherwise).
	IgnoreExtra bool
	// Metadata is written into the file's "__metadata__" by
	// SaveSafetensors, with the layout it wrote (LayoutMetadataKey and,
	// when needed, PermutedMetadataKey; Metadata may not give those keys
	// other values).
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

// explicitPerm returns the Permute entry for name, if there is one.
func (o *SafetensorsOptions) explicitPerm(name string) ([]int, bool) {
	if o == nil {
		return nil, false
	}
	p, ok := o.Permute[name]
	return p, ok
}

func (o *SafetensorsOptions) layout() Layout {
	if o == nil {
		return LayoutAuto
	}
	return o.Layout
}

// checkLayout validates opt.Layout.
func (o *SafetensorsOptions) checkLayout() error {
	if l := o.layout(); l > LayoutPyTorch {
		return fmt.Errorf("rt: safetensors: unknown Layout %d: %w", uint8(l), ErrInvalid)
	}
	return nil
}

// layoutPerm is the permutation of t in layout l (LayoutPyTorch: its
// role's PyTorch permutation; otherwise none).
func layoutPerm(t *Tensor, l Layout) []int {
	if l == LayoutPyTorch {
		return t.PyTorchPerm()
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
// returns the entries, the metadata and the data buffer.
func readSafetensorsHeader(r io.Reader) (map[string]stHeaderEntry, map[string]string, []byte, error) {
	var lenb [8]byte
	if _, err := io.ReadFull(r, lenb[:]); err != nil {
		return nil, nil, nil, fmt.Errorf("rt: safetensors: header length: %w: %w", ErrSafetensors, err)
	}
	if what := otherFormat(lenb[:], r, "safetensors"); what != "" {
		return nil, nil, nil, fmt.Errorf("rt: safetensors: not a safetensors file: %s: %w", what, ErrSafetensors)
	}
	n := binary.LittleEndian.Uint64(lenb[:])
	if n < 2 || n > maxSafetensorsHeader {
		return nil, nil, nil, fmt.Errorf("rt: safetensors: header length %d out of range: %w", n, ErrSafetensors)
	}
	hdr := make([]byte, n)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, nil, nil, fmt.Errorf("rt: safetensors: header: %w: %w", ErrSafetensors, err)
	}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(hdr))
	if err := dec.Decode(&raw); err != nil {
		return nil, nil, nil, fmt.Errorf("rt: safetensors: header JSON: %w: %w", ErrSafetensors, err)
	}
	if rest := strings.TrimRight(string(hdr[dec.InputOffset():]), " \x00"); rest != "" {
		return nil, nil, nil, fmt.Errorf("rt: safetensors: trailing bytes after the header JSON: %w", ErrSafetensors)
	}
	entries := make(map[string]stHeaderEntry, len(raw))
	var md map[string]string
	for name, msg := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &md); err != nil {
				return nil, nil, nil, fmt.Errorf("rt: safetensors: __metadata__ must map strings to strings: %w", ErrSafetensors)
			}
			continue
		}
		var e stHeaderEntry
		d := json.NewDecoder(bytes.NewReader(msg))
		d.DisallowUnknownFields()
		if err := d.Decode(&e); err != nil {
			return nil, nil, nil, fmt.Errorf("rt: safetensors: tensor %q: %w: %w", name, ErrSafetensors, err)
		}
		entries[name] = e
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("rt: safetensors: data: %w", err)
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
			return nil, nil, nil, fmt.Errorf("rt: safetensors: tensor %q: data offsets [%d, %d] outside the %d-byte buffer: %w", name, b, en, len(data), ErrSafetensors)
		}
		if size, ok := dtypeSize[e.DType]; ok {
			cells := int64(1)
			for _, d := range e.Shape {
				if d < 0 || (d != 0 && cells > math.MaxInt64/8/int64(d)) {
					return nil, nil, nil, fmt.Errorf("rt: safetensors: tensor %q: bad shape %v: %w", name, e.Shape, ErrSafetensors)
				}
				cells *= int64(d)
			}
			if cells*int64(size) != en-b {
				return nil, nil, nil, fmt.Errorf("rt: safetensors: tensor %q: %s %v needs %d bytes, offsets give %d: %w", name, e.DType, e.Shape, cells*int64(size), en-b, ErrSafetensors)
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
			return nil, nil, nil, fmt.Errorf("rt: safetensors: tensor %q starts at byte %d, expected %d (overlap or hole): %w", s.name, s.begin, at, ErrSafetensors)
		}
		at = s.end
	}
	if at != int64(len(data)) {
		return nil, nil, nil, fmt.Errorf("rt: safetensors: %d bytes after the last tensor: %w", int64(len(data))-at, ErrSafetensors)
	}
	return entries, md, data, nil
}

// recordedLayout reads the layout a file written by SaveSafetensors
// records in its metadata: the layout (LayoutAuto when the file records
// none) and the file tensor names it does not vouch for.
func recordedLayout(md map[string]string) (Layout, map[string]bool, error) {
	v, ok := md[LayoutMetadataKey]
	if !ok {
		return LayoutAuto, nil, nil
	}
	var l Layout
	switch v {
	case LayoutNative.String():
		l = LayoutNative
	case LayoutPyTorch.String():
		l = LayoutPyTorch
	default:
		return 0, nil, fmt.Errorf("rt: safetensors: __metadata__ %q is %q, not %q or %q: %w", LayoutMetadataKey, v, LayoutNative, LayoutPyTorch, ErrSafetensors)
	}
	var except map[string]bool
	if p, ok := md[PermutedMetadataKey]; ok {
		var names []string
		if err := json.Unmarshal([]byte(p), &names); err != nil {
			return 0, nil, fmt.Errorf("rt: safetensors: __metadata__ %q must be a JSON array of names: %w: %w", PermutedMetadataKey, ErrSafetensors, err)
		}
		except = make(map[string]bool, len(names))
		for _, n := range names {
			except[n] = true
		}
	}
	return l, except, nil
}

// LoadSafetensors reads a safetensors file from r into ts: every tensor
// of ts must be in the file (under its name, or under opt.Names[name])
// with the dims of ts in the file's layout (opt.Permute[name], else
// opt.Layout, else the layout the file records, else ocannlgen's order;
// see SafetensorsOptions.Layout); F32, F64, BF16 and F16 data are
// converted to the tensor's element type. A tensor whose layout its shape
// cannot tell and nothing gives (ErrAmbiguousLayout) is never loaded.
// Every problem is reported (the error joins one error per mismatching
// tensor: ErrMissing, ErrExtra unless opt.IgnoreExtra, ErrDType,
// ErrAmbiguousLayout, ErrLayoutConflict, or a *ShapeError naming the
// tensor, its file name and both shapes, with a hint when PyTorch's
// layout explains the file's shape), and on any error nothing in ts is
// modified. A damaged file gives an error wrapping ErrSafetensors (which
// says which function reads the file when it is one of rt's other
// formats).
func LoadSafetensors(r io.Reader, ts []Tensor, opt *SafetensorsOptions) error {
	if err := checkSet("safetensors", ts); err != nil {
		return err
	}
	if err := opt.checkLayout(); err != nil {
		return err
	}
	for i := range ts {
		if perm, ok := opt.explicitPerm(ts[i].Name); ok {
			if err := checkPerm(ts[i].Name, perm, len(ts[i].Dims)); err != nil {
				return err
			}
		}
	}
	entries, md, data, err := readSafetensorsHeader(r)
	if err != nil {
		return err
	}
	rec, except, err := recordedLayout(md)
	if err != nil {
		return err
	}
	var errs []error
	used := make(map[string]bool, len(ts))
	perms := make([][]int, len(ts))
	for i := range ts {
		t := &ts[i]
		fn := opt.fileName(t.Name)
		used[fn] = true
		e, ok := entries[fn]
		if !ok {
			errs = append(errs, fmt.Errorf("rt: safetensors: tensor %q (file name %q, dims %v) is not in the file: %w", t.Name, fn, t.Dims, ErrMissing))
			continue
		}
		if _, ok := dtypeSize[e.DType]; !ok {
			errs = append(errs, fmt.Errorf("rt: safetensors: tensor %q: dtype %s: %w", fn, e.DType, ErrDType))
			continue
		}
		perm, explicit := opt.explicitPerm(t.Name)
		if !explicit {
			recorded := rec != LayoutAuto && !except[fn]
			switch l := opt.layout(); {
			case l != LayoutAuto:
				perm = layoutPerm(t, l)
				if recorded && !samePerm(perm, layoutPerm(t, rec)) {
					errs = append(errs, layoutConflict(t, fn, l, rec))
					continue
				}
			case recorded:
				perm = layoutPerm(t, rec)
			default:
				if tp := t.PyTorchPerm(); tp != nil && slices.Equal(permuted(t.Dims, tp), t.Dims) && slices.Equal(e.Shape, t.Dims) {
					errs = append(errs, ambiguousLayout(t, fn, tp))
					continue
				}
			}
		}
		perms[i] = perm
		if want := permuted(t.Dims, perm); !slices.Equal(e.Shape, want) && !(len(want) == 0 && slices.Equal(e.Shape, []int{1})) {
			se := &ShapeError{Name: t.Name, File: slices.Clone(e.Shape), Want: want, Hint: safetensorsHint(t, e.Shape, perm, explicit, opt.layout())}
			if fn != t.Name {
				se.FileName = fn
			}
			errs = append(errs, se)
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
		forEachPermuted(t.Dims, perms[i], func(dst, src int) {
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

// ambiguousLayout is the error for a tensor whose shape is the same in
// ocannlgen's order and in PyTorch's (permutation tp).
func ambiguousLayout(t *Tensor, fn string, tp []int) error {
	names := t.axisNames()
	return fmt.Errorf("rt: safetensors: tensor %q (%s, file tensor %q, shape %v): the layout is ambiguous: ocannlgen's order %s and PyTorch's order %s "+
		"have the same shape, so the file's layout cannot be told from it, and the tensor is not loaded by shape alone; "+
		"set SafetensorsOptions.Layout to rt.LayoutPyTorch for a PyTorch state_dict, or to rt.LayoutNative for a file in ocannlgen's order "+
		"(or give Permute[%q]: %s for PyTorch's order, nil for ocannlgen's): %w",
		t.Name, t.Role, fn, t.Dims, layoutText(names, nil), layoutText(names, tp), t.Name, permGo(tp), ErrAmbiguousLayout)
}

// layoutConflict is the error for a tensor the file records in layout rec
// when opt.Layout is l, which permutes it otherwise.
func layoutConflict(t *Tensor, fn string, l, rec Layout) error {
	names := t.axisNames()
	return fmt.Errorf("rt: safetensors: tensor %q (%s, file tensor %q): the file records it in %s %s (__metadata__ %q is %q), "+
		"but SafetensorsOptions.Layout is %s (%s %s); leave Layout unset to read the recorded layout, or give Permute[%q]: %w",
		t.Name, t.Role, fn, rec.words(), layoutText(names, layoutPerm(t, rec)), LayoutMetadataKey, rec, l.goName(), l.words(), layoutText(names, layoutPerm(t, l)), t.Name, ErrLayoutConflict)
}

// safetensorsHint explains a shape mismatch of LoadSafetensors when the
// file's shape is a permutation of the parameter's dims; perm is the
// permutation that was applied (explicit: a Permute entry; l: the
// Layout option).
func safetensorsHint(t *Tensor, file, perm []int, explicit bool, l Layout) string {
	if len(t.Dims) < 2 || !sameMultiset(file, t.Dims) {
		return ""
	}
	names := t.axisNames()
	if tp := t.torchExplains(file); tp != nil && !samePerm(tp, perm) {
		if t.Role == RoleUnknown {
			return fmt.Sprintf("the file's shape is PyTorch's nn.Conv2d layout %s of this %s tensor: set SafetensorsOptions.Permute[%q] = rt.TorchConv2d()",
				layoutText(names, tp), layoutText(names, nil), t.Name)
		}
		return fmt.Sprintf("the file holds this %s in PyTorch's layout %s (ocannlgen's is %s): set SafetensorsOptions.Layout = rt.LayoutPyTorch (or Permute[%q] = %s)",
			t.Role, layoutText(names, tp), layoutText(names, nil), t.Name, permGo(tp))
	}
	if perm != nil && slices.Equal(file, t.Dims) {
		how := "set SafetensorsOptions.Layout = rt.LayoutNative"
		switch {
		case explicit:
			how = fmt.Sprintf("remove SafetensorsOptions.Permute[%q]", t.Name)
		case l == LayoutAuto:
			how = fmt.Sprintf("give SafetensorsOptions.Permute[%q] = nil", t.Name)
		}
		return fmt.Sprintf("the file's shape is ocannlgen's order of this %s, not the permuted layout %v: %s", t.what(), permuted(t.Dims, perm), how)
	}
	return fmt.Sprintf("the file's shape is a permutation of the expected one: if the file stores the tensor in another axis order, give SafetensorsOptions.Permute[%q] "+
		"(axis k of the parameter is axis Permute[%q][k] of the file's tensor)", t.Name, t.Name)
}

func (o *SafetensorsOptions) ignoreExtra() bool { return o != nil && o.IgnoreExtra }

// SaveSafetensors writes ts to w as a safetensors file: each tensor under
// opt.Names[name] (or its own name), as F32 or F64 after its element
// type, laid out by the inverse of opt.Permute[name], or else of its
// permutation in opt.Layout (LayoutPyTorch: PyTorch's layout of its role;
// otherwise ocannlgen's order), in the order of ts. The file's
// "__metadata__" holds opt.Metadata and the layout written
// (LayoutMetadataKey: "pytorch" for LayoutPyTorch, else "native"; and
// PermutedMetadataKey for tensors that a Permute entry wrote otherwise),
// so LoadSafetensors reads the file back without options. The header is
// padded with spaces to a multiple of 8 bytes, as the reference
// implementation does.
func SaveSafetensors(w io.Writer, ts []Tensor, opt *SafetensorsOptions) error {
	if err := checkSet("safetensors", ts); err != nil {
		return err
	}
	if err := opt.checkLayout(); err != nil {
		return err
	}
	written := LayoutNative
	if opt.layout() == LayoutPyTorch {
		written = LayoutPyTorch
	}
	type named struct {
		file string
		t    *Tensor
		perm []int
	}
	order := make([]named, len(ts))
	seen := map[string]string{}
	var except []string
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
		perm, explicit := opt.explicitPerm(t.Name)
		if explicit {
			if err := checkPerm(t.Name, perm, len(t.Dims)); err != nil {
				return err
			}
			if !samePerm(perm, layoutPerm(t, written)) {
				except = append(except, fn)
			}
		} else {
			perm = layoutPerm(t, written)
		}
		order[i] = named{fn, t, perm}
	}
	md := map[string]string{LayoutMetadataKey: written.String()}
	if len(except) > 0 {
		b, err := json.Marshal(except)
		if err != nil {
			return fmt.Errorf("rt: safetensors: metadata: %w", err)
		}
		md[PermutedMetadataKey] = string(b)
	}
	if opt != nil {
		for k, v := range opt.Metadata {
			if ours, ok := md[k]; ok && ours != v {
				return fmt.Errorf("rt: safetensors: Metadata[%q] is %q, but the file is written with %q (the key records the layout): %w", k, v, ours, ErrInvalid)
			}
			if k == PermutedMetadataKey {
				return fmt.Errorf("rt: safetensors: Metadata[%q] is reserved (it records the tensors a Permute entry writes): %w", k, ErrInvalid)
			}
			md[k] = v
		}
	}
	// The header is a JSON object written field by field so that its key
	// order is the order of ts (encoding/json sorts map keys).
	var hdr bytes.Buffer
	hdr.WriteByte('{')
	mdJSON, err := json.Marshal(md)
	if err != nil {
		return fmt.Errorf("rt: safetensors: metadata: %w", err)
	}
	hdr.WriteString(`"__metadata__":`)
	hdr.Write(mdJSON)
	off := int64(0)
	for _, nt := range order {
		size := int64(4)
		dt := "F32"
		if nt.t.Data64 != nil {
			size, dt = 8, "F64"
		}
		shape := permuted(nt.t.Dims, nt.perm)
		if shape == nil {
			shape = []int{}
		}
		n := int64(len(nt.t.Data32) + len(nt.t.Data64))
		e, err := json.Marshal(stHeaderEntry{DType: dt, Shape: shape, DataOffsets: [2]int64{off, off + n*size}})
		if err != nil {
			return fmt.Errorf("rt: safetensors: %w", err)
		}
		key, _ := json.Marshal(nt.file)
		hdr.WriteByte(',')
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
			forEachPermuted(t.Dims, nt.perm, func(dst, src int) {
				binary.LittleEndian.PutUint64(out[start+8*src:], math.Float64bits(t.Data64[dst]))
			})
			continue
		}
		out = append(out, make([]byte, 4*len(t.Data32))...)
		forEachPermuted(t.Dims, nt.perm, func(dst, src int) {
			binary.LittleEndian.PutUint32(out[start+4*src:], math.Float32bits(t.Data32[dst]))
		})
	}
	if _, err := w.Write(out); err != nil {
		return fmt.Errorf("rt: safetensors: %w", err)
	}
	return nil
}
