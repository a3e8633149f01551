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
	"strconv"
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
// Layout). LoadSafetensors and SaveSafetensors check the options against
// the tensors before reading or writing anything: a key of Names or
// Permute that names no tensor, two tensors mapped to one file name, an
// empty or "__metadata__" file name, or a Permute entry that does not
// permute its tensor's axes is an error wrapping ErrInvalid.
type SafetensorsOptions struct {
	// Names maps a parameter name (Tensor.Name, e.g. "net.w1") to the
	// tensor's name in the file (e.g. "fc1.weight"). Parameters not in
	// the map use their own name; every key must be a parameter's name,
	// and no two parameters may end up with one file name.
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
	// Permute maps a parameter name (every key must be one) to an axis
	// permutation: axis k of the parameter's dims is axis
	// Permute[name][k] of the file's tensor (see TorchConv2d). LoadSafetensors transposes the data accordingly, and
	// SaveSafetensors writes the inverse layout, so a round trip is the
	// identity. An entry, even nil (ocannlgen's order), overrides Layout
	// and the file's recorded layout for that parameter. A PyTorch
	// nn.Linear weight ([out][in]) already matches the memory order of an
	// `in -> out` parameter and needs none.
	Permute map[string][]int
	// Views maps a parameter name (every key must be one, and not also a
	// key of Permute) to a View: a conversion that regroups the axes as
	// well as permuting them, such as TorchFlattenLinear for the weight of
	// a PyTorch Linear fed by flatten(1) of NCHW activations.
	// LoadSafetensors reads the file tensor, of the View's File dims,
	// through it, and SaveSafetensors writes it so, recording the View
	// (ViewsMetadataKey), so a round trip is the identity and the file
	// reads back without options. An entry overrides Layout and the
	// file's recorded layout for that parameter.
	Views map[string]View
	// AllowEvenKernelPadding confirms, for LoadSafetensors with
	// LayoutPyTorch or a Permute entry of a kernel's PyTorch permutation
	// (TorchConv2d), the conv kernels whose padded convolution has an
	// even window (Tensor.EvenPadded), which are refused otherwise
	// (ErrEvenKernelPadding): ocannlgen pads the extra cell of an even
	// window on the left (seed 002), PyTorch's padding='same' on the
	// right, so such weights compute an output shifted by one cell unless
	// they were trained with the seed's padding. A file written by
	// SaveSafetensors (its layout recorded), another Layout, or a Permute
	// entry of another permutation needs no confirmation.
	// SaveSafetensors ignores it.
	AllowEvenKernelPadding bool
	// IgnoreExtra lets LoadSafetensors skip tensors of the file that no
	// parameter maps to (an error otherwise); their data is read through,
	// not kept. SaveSafetensors ignores it.
	IgnoreExtra bool
	// Metadata is written into the file's "__metadata__" by
	// SaveSafetensors, with the layout it wrote (LayoutMetadataKey and,
	// when needed, PermutedMetadataKey; Metadata may not give those keys
	// other values). LoadSafetensors ignores it, so one options value
	// serves both directions.
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
var dtypeSize = map[string]int{"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8}

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
	case "I64":
		// PyTorch's BatchNorm num_batches_tracked (a step counter).
		return float64(int64(binary.LittleEndian.Uint64(b[8*i:])))
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
		return 0, nil, stErr("__metadata__ %q is %s, not %q or %q", LayoutMetadataKey, quote(v), LayoutNative, LayoutPyTorch)
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

// checkOptions validates opt against ts for LoadSafetensors and
// SaveSafetensors alike, and returns each tensor's name in the file:
// Layout must be known; every key of Names and Permute must name a tensor
// of ts (a typo would silently skip a mapping or a transposition); no two
// tensors may map to one file name, which must be neither empty nor
// "__metadata__"; each Permute entry must permute its tensor's axes.
// Every mistake is listed (ErrInvalid).
func checkOptions(op string, ts []Tensor, opt *SafetensorsOptions) ([]string, error) {
	if err := opt.checkLayout(); err != nil {
		return nil, err
	}
	probs := problems{op: op}
	have := make(map[string]bool, len(ts))
	for i := range ts {
		have[ts[i].Name] = true
	}
	if opt != nil {
		for _, m := range []struct {
			field string
			keys  []string
		}{{"Names", mapKeys(opt.Names)}, {"Permute", mapKeys(opt.Permute)}, {"Views", mapKeys(opt.Views)}} {
			for _, k := range m.keys {
				if !have[k] {
					probs.add(fmt.Errorf("rt: %s: SafetensorsOptions.%s[%s] names no tensor (the names are the parameters' identities, Tensor.Name): %w", op, m.field, quote(k), ErrInvalid))
				}
			}
		}
	}
	files := make([]string, len(ts))
	owner := make(map[string]string, len(ts))
	for i := range ts {
		t := &ts[i]
		fn := opt.fileName(t.Name)
		files[i] = fn
		if fn == "" || fn == "__metadata__" {
			probs.add(fmt.Errorf("rt: %s: tensor %q: file name %q is not allowed: %w", op, t.Name, fn, ErrInvalid))
			continue
		}
		if prev, ok := owner[fn]; ok {
			probs.add(fmt.Errorf("rt: %s: tensors %q and %q both map to file tensor %s (SafetensorsOptions.Names): %w", op, prev, t.Name, quote(fn), ErrInvalid))
			continue
		}
		owner[fn] = t.Name
		perm, permOK := opt.explicitPerm(t.Name)
		if permOK {
			if err := checkPerm(t.Name, perm, len(t.Dims)); err != nil {
				probs.add(err)
			}
		}
		if v, ok := opt.explicitView(t.Name); ok {
			if permOK {
				probs.add(fmt.Errorf("rt: %s: tensor %q has both a Permute and a Views entry (a View permutes too): %w", op, t.Name, ErrInvalid))
			} else if _, err := v.resolve(t.Name, t.cells()); err != nil {
				probs.add(err)
			}
		}
	}
	return files, probs.err()
}

// dtypeText shows a dtype from a file in a message: bare when it is a
// short identifier such as BF16, else quoted (and capped, see quote).
func dtypeText(dt string) string {
	if len(dt) == 0 || len(dt) > 16 {
		return quote(dt)
	}
	for _, c := range dt {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return quote(dt)
		}
	}
	return dt
}

// mapKeys returns m's keys in order.
func mapKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// LoadSafetensors reads a safetensors file from r into ts: every tensor
// of ts must be in the file (under its name, or under opt.Names[name])
// with the dims of ts in the file's layout (opt.Permute[name], else
// opt.Layout, else the layout the file records, else ocannlgen's order;
// see SafetensorsOptions.Layout); F32, F64, BF16 and F16 data are
// converted to the tensor's element type. A tensor whose layout its shape
// cannot tell and nothing gives (ErrAmbiguousLayout) is never loaded.
//
// The options are checked first (checkOptions: a Names or Permute key
// that names no tensor, two tensors mapped to one file tensor: ErrInvalid).
// The header is checked strictly, as the format's reference reader does
// (duplicate tensor names or fields, fields not spelled "dtype", "shape",
// "data_offsets", offsets that are not two integers, a null or repeated
// "__metadata__": ErrSafetensors). Every problem of the file against ts
// is reported (the error joins one error per mismatching tensor, at most
// 16 listed: ErrMissing, ErrExtra unless opt.IgnoreExtra, ErrDType,
// ErrAmbiguousLayout, ErrLayoutConflict, ErrEvenKernelPadding (with
// LayoutPyTorch, a conv kernel whose padded convolution has an even
// window, unless opt.AllowEvenKernelPadding), or a *ShapeError naming the
// tensor, its file name and both shapes, with a hint when PyTorch's
// layout explains the file's shape). The values follow the policy of
// every loader: a NaN or an infinity is refused (ErrNonFinite) unless the
// tensor's Domain is DomainAny, and a float64 value beyond a float32
// tensor's range is refused (ErrOutOfRange), never rounded to an
// infinity. On any error nothing in ts is modified. A damaged file gives
// an error wrapping ErrSafetensors (which says which function reads the
// file when it is one of rt's other formats).
//
// LoadSafetensors reads the header as it arrives, then the data buffer
// the header declares and no more (one byte more, to refuse data after
// it), keeping only the data of the tensors of ts: the data of a tensor
// no parameter maps to is skipped, so memory stays bounded by the input
// read and by the size of ts.
func LoadSafetensors(r io.Reader, ts []Tensor, opt *SafetensorsOptions) error {
	if err := checkSet("safetensors", ts); err != nil {
		return err
	}
	files, err := checkOptions("safetensors", ts, opt)
	if err != nil {
		return err
	}
	h, err := readSafetensorsHeader(r)
	if err != nil {
		return err
	}
	rec, except, err := recordedLayout(h.md)
	if err != nil {
		return err
	}
	views, err := recordedViews(h.md)
	if err != nil {
		return err
	}
	used, perms, dims, probs := matchSafetensors(h, ts, files, opt, rec, except, views)
	if err := probs.err(); err != nil {
		return err
	}
	data, err := readSafetensorsData(r, h, used, len(ts))
	if err != nil {
		return err
	}
	var errs []error
	for i := range ts {
		t := &ts[i]
		dt := h.entries[files[i]].dtype
		c := valueCheck{domain: t.Domain, to32: t.Data64 == nil}
		for k := range len(t.Data32) + len(t.Data64) {
			c.check(k, decodeElem(dt, data[i], k))
		}
		errs = append(errs, c.errs("safetensors", strconv.Quote(t.Name)+" (file tensor "+quote(files[i])+")")...)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for i := range ts {
		t := &ts[i]
		dt, buf := h.entries[files[i]].dtype, data[i]
		forEachPermuted(dims[i], perms[i], func(dst, src int) {
			v := decodeElem(dt, buf, src)
			if t.Data64 != nil {
				t.Data64[dst] = v
			} else {
				t.Data32[dst] = float32(v)
			}
		})
	}
	return nil
}

// matchSafetensors matches the header's tensors with ts (files[i] is
// ts[i]'s name in the file) and lists every problem: missing, extra,
// mistyped, mis-shaped and ambiguous tensors, layout conflicts with the
// layout the file records (rec, except those in except), and
// even-window kernels from PyTorch unless confirmed. used maps a file
// name to its index in ts; perms[i] is ts[i]'s layout permutation of the
// dims dims[i] (its own, or its View's, from opt.Views or else from the
// views the file records, by file name).
func matchSafetensors(h *stHeader, ts []Tensor, files []string, opt *SafetensorsOptions, rec Layout, except map[string]bool, views map[string]View) (used map[string]int, perms, dims [][]int, probs problems) {
	probs = problems{op: "safetensors"}
	used = make(map[string]int, len(ts)) // file name -> index into ts
	perms = make([][]int, len(ts))
	dims = make([][]int, len(ts))
	for i := range ts {
		t := &ts[i]
		fn := files[i]
		dims[i] = t.Dims
		used[fn] = i
		e, ok := h.entries[fn]
		if !ok {
			probs.add(fmt.Errorf("rt: safetensors: tensor %q (file name %q, dims %s) is not in the file: %w", t.Name, fn, dimsText(t.Dims), ErrMissing))
			continue
		}
		if _, ok := dtypeSize[e.dtype]; !ok {
			probs.add(fmt.Errorf("rt: safetensors: tensor %q: dtype %s: %w", fn, dtypeText(e.dtype), ErrDType))
			continue
		}
		perm, explicit := opt.explicitPerm(t.Name)
		v, viewed := opt.explicitView(t.Name)
		recordedView := false
		if !viewed && !explicit {
			v, viewed = views[fn]
			recordedView = viewed
		}
		if viewed {
			rv, err := v.resolve(t.Name, t.cells())
			if err != nil {
				if recordedView {
					err = fmt.Errorf("rt: safetensors: the view __metadata__ %q records for file tensor %s does not fit the parameter: %w: %w", ViewsMetadataKey, quote(fn), ErrSafetensors, err)
				}
				probs.add(err)
				continue
			}
			perms[i], dims[i] = rv.Perm, rv.Dims
			if !slices.Equal(e.shape, rv.File) {
				se := &ShapeError{Name: t.Name, File: slices.Clone(e.shape), Want: rv.File,
					Hint: fmt.Sprintf("the tensor is read through a View (%v viewed as %v, permuted by %v, stored %v)", t.Dims, rv.Dims, rv.Perm, rv.File)}
				if fn != t.Name {
					se.FileName = fn
				}
				probs.add(se)
			}
			continue
		}
		// An explicit PyTorch permutation of a file that does not record
		// ocannlgen's layout is PyTorch's weights too: an even window
		// padded on the other side needs the same confirmation.
		if explicit && (rec == LayoutAuto || except[fn]) && len(t.EvenPadded) > 0 && !opt.AllowEvenKernelPadding && samePerm(perm, t.PyTorchPerm()) {
			probs.add(evenKernelPadding(t, fn))
		}
		if !explicit {
			recorded := rec != LayoutAuto && !except[fn]
			if l := opt.layout(); len(t.Flattened) > 0 && (l == LayoutPyTorch || l == LayoutAuto && !recorded) {
				probs.add(flattenAmbiguous(t, fn, false))
				continue
			}
			switch l := opt.layout(); {
			case l != LayoutAuto:
				perm = layoutPerm(t, l)
				if recorded && !samePerm(perm, layoutPerm(t, rec)) {
					probs.add(layoutConflict(t, fn, l, rec))
					continue
				}
				// PyTorch's weights of an even window padded on the
				// other side: not from a file of ours, unless confirmed.
				if l == LayoutPyTorch && rec == LayoutAuto && len(t.EvenPadded) > 0 && !opt.AllowEvenKernelPadding {
					probs.add(evenKernelPadding(t, fn))
				}
			case recorded:
				perm = layoutPerm(t, rec)
			default:
				if tp := t.PyTorchPerm(); tp != nil && slices.Equal(permuted(t.Dims, tp), t.Dims) && slices.Equal(e.shape, t.Dims) {
					probs.add(ambiguousLayout(t, fn, tp))
					continue
				}
			}
		}
		perms[i] = perm
		if want := permuted(t.Dims, perm); !slices.Equal(e.shape, want) && !(len(want) == 0 && slices.Equal(e.shape, []int{1})) {
			se := &ShapeError{Name: t.Name, File: slices.Clone(e.shape), Want: want, Hint: safetensorsHint(t, e.shape, perm, explicit, opt.layout())}
			if fn != t.Name {
				se.FileName = fn
			}
			probs.add(se)
		}
	}
	if !opt.ignoreExtra() {
		for _, e := range h.order {
			if _, ok := used[e.name]; ok {
				continue
			}
			if !probs.room() {
				probs.skip()
				continue
			}
			probs.add(fmt.Errorf("rt: safetensors: tensor %s (%s %s) is in the file but no parameter maps to it: %w", quote(e.name), dtypeText(e.dtype), dimsText(e.shape), ErrExtra))
		}
	}
	return used, perms, dims, probs
}

// readSafetensorsData reads the data buffer in file order: the tensors
// of ts (used maps their file names to their index) are kept, each at
// most its size, growing with what the input holds; the others are
// skipped. Data after the buffer the header declares is refused.
func readSafetensorsData(r io.Reader, h *stHeader, used map[string]int, n int) ([][]byte, error) {
	data := make([][]byte, n)
	var skip []byte
	var at int64
	for _, e := range h.order {
		size := e.end - e.begin
		var err error
		if i, ok := used[e.name]; ok {
			data[i], err = readGrowing(r, uint64(size))
		} else {
			if skip == nil && size > 0 {
				skip = make([]byte, 4096)
			}
			err = skipBytes(r, uint64(size), skip, nil)
		}
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, stErr("the input ends in tensor %s's data (bytes %d to %d of the %d-byte data buffer the header declares)", quote(e.name), e.begin, e.end, h.dataLen)
			}
			return nil, fmt.Errorf("rt: safetensors: data: %w", err)
		}
		at = e.end
	}
	var one [1]byte
	if n, err := io.ReadFull(r, one[:]); n > 0 {
		return nil, stErr("data continues after the %d bytes the header's offsets declare", at)
	} else if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("rt: safetensors: data: %w", err)
	}
	return data, nil
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
	written := LayoutNative
	if opt.layout() == LayoutPyTorch {
		written = LayoutPyTorch
	}
	type named struct {
		file  string
		t     *Tensor
		perm  []int
		dims  []int // the dims perm permutes (t.Dims, or its View's)
		shape []int // the file tensor's shape
	}
	files, err := checkOptions("safetensors", ts, opt)
	if err != nil {
		return err
	}
	order := make([]named, len(ts))
	var except []string
	views := map[string]View{}
	for i := range ts {
		t := &ts[i]
		fn := files[i]
		if v, ok := opt.explicitView(t.Name); ok {
			rv, err := v.resolve(t.Name, t.cells())
			if err != nil {
				return err // checkOptions resolved it already
			}
			views[fn] = rv
			order[i] = named{fn, t, rv.Perm, rv.Dims, rv.File}
			continue
		}
		perm, explicit := opt.explicitPerm(t.Name)
		if explicit {
			if !samePerm(perm, layoutPerm(t, written)) {
				except = append(except, fn)
			}
		} else {
			if written == LayoutPyTorch && len(t.Flattened) > 0 {
				return flattenAmbiguous(t, fn, true)
			}
			perm = layoutPerm(t, written)
		}
		order[i] = named{fn, t, perm, t.Dims, permuted(t.Dims, perm)}
	}
	md := map[string]string{LayoutMetadataKey: written.String()}
	if len(except) > 0 {
		b, err := json.Marshal(except)
		if err != nil {
			return fmt.Errorf("rt: safetensors: metadata: %w", err)
		}
		md[PermutedMetadataKey] = string(b)
	}
	if len(views) > 0 {
		b, err := json.Marshal(views)
		if err != nil {
			return fmt.Errorf("rt: safetensors: metadata: %w", err)
		}
		md[ViewsMetadataKey] = string(b)
	}
	if opt != nil {
		for k, v := range opt.Metadata {
			if ours, ok := md[k]; ok && ours != v {
				return fmt.Errorf("rt: safetensors: Metadata[%q] is %q, but the file is written with %q (the key records the layout): %w", k, v, ours, ErrInvalid)
			}
			if k == PermutedMetadataKey || k == ViewsMetadataKey {
				return fmt.Errorf("rt: safetensors: Metadata[%q] is reserved (it records the tensors a Permute or Views entry writes): %w", k, ErrInvalid)
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
		shape := nt.shape
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
			forEachPermuted(nt.dims, nt.perm, func(dst, src int) {
				binary.LittleEndian.PutUint64(out[start+8*src:], math.Float64bits(t.Data64[dst]))
			})
			continue
		}
		out = append(out, make([]byte, 4*len(t.Data32))...)
		forEachPermuted(nt.dims, nt.perm, func(dst, src int) {
			binary.LittleEndian.PutUint32(out[start+4*src:], math.Float32bits(t.Data32[dst]))
		})
	}
	if _, err := w.Write(out); err != nil {
		return fmt.Errorf("rt: safetensors: %w", err)
	}
	return nil
}
