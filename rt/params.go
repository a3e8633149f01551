package rt

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
)

// Tensor is one named tensor of a parameter file. Its element type is
// float64 when Data64 is non-nil and float32 otherwise (so an empty
// float64 tensor needs a non-nil, empty Data64); at most one of Data32
// and Data64 may be non-nil. The data length must be the product of Dims
// (1 for no dims), in row-major order.
type Tensor struct {
	// Name identifies the tensor in the file (usually its qualified
	// parameter name, as given to ParamKey). Names in a set are unique.
	Name string
	// Dims are the tensor's dimensions.
	Dims []int
	// Data32 holds a float32 tensor's elements.
	Data32 []float32
	// Data64 holds a float64 tensor's elements.
	Data64 []float64
	// Role is what the tensor is in its model (generated ParamTensors set
	// it, e.g. RoleConvKernel): it gives the tensor's layout in a PyTorch
	// state_dict (PyTorchPerm), which SafetensorsOptions.Layout converts.
	// The zero value, RoleUnknown, converts no layout. Save and Load
	// ignore it.
	Role Role
	// Spatial lists the window axes (increasing indices into Dims) of a
	// RoleConvKernel tensor, e.g. [1 2] for a `kh, kw, ic -> oc` kernel
	// stored [oc][kh][kw][ic]; nil for a rank-4 conv kernel means [1 2].
	// It must be nil for the other roles.
	Spatial []int
}

// FormatVersion is the version of the parameter file format that Save
// writes and Load reads.
const FormatVersion = 1

// fileMagic opens every parameter file.
const fileMagic = "OCGNPARM"

// Element type codes of the file format.
const (
	elemFloat32 = 1
	elemFloat64 = 2
)

// Error is the type of the sentinel errors of Save and Load; test for
// them with errors.Is.
type Error string

// Error returns the message.
func (e Error) Error() string { return string(e) }

// Sentinel errors of Load (wrapped with details).
const (
	// ErrBadMagic: the input does not start with the parameter file magic.
	ErrBadMagic = Error("not an ocannlgen parameter file (bad magic)")
	// ErrVersion: the file has a format version this package cannot read.
	ErrVersion = Error("unsupported parameter file version")
	// ErrTruncated: the input ends before the file does.
	ErrTruncated = Error("truncated parameter file")
	// ErrChecksum: the CRC-32 does not match the contents.
	ErrChecksum = Error("parameter file checksum mismatch (corrupted)")
	// ErrCorrupt: the contents are malformed although the checksum matches.
	ErrCorrupt = Error("malformed parameter file")
	// ErrMissing: an expected tensor is not in the file.
	ErrMissing = Error("tensor missing from parameter file")
	// ErrExtra: the file holds a tensor that was not expected.
	ErrExtra = Error("unexpected tensor in parameter file")
	// ErrElemType: a stored tensor's element type differs from the expected one.
	ErrElemType = Error("element type mismatch")
	// ErrInvalid: the caller's tensors are inconsistent (Save and Load).
	ErrInvalid = Error("invalid tensor")
	// ErrNonFinite: a stored value is NaN or infinite (Load). Save writes
	// such values (a diverged model can be saved for inspection), but
	// Load refuses them, so a broken checkpoint never silently poisons a
	// model.
	ErrNonFinite = Error("non-finite value in parameter file")
	// ErrTrailingData: bytes follow a complete parameter file (Unmarshal).
	ErrTrailingData = Error("trailing data after parameter file")
)

// ShapeError reports a stored tensor whose dims differ from the expected
// ones. The errors of Load, LoadCheckpoint and LoadSafetensors wrap it
// (errors.As).
type ShapeError struct {
	// Name is the tensor's name (the parameter's, Tensor.Name).
	Name string
	// FileName is the tensor's name in the file when it differs from
	// Name (SafetensorsOptions.Names), "" otherwise.
	FileName string
	// File are the dims stored in the file.
	File []int
	// Want are the dims of the caller's tensor (after the layout
	// conversion LoadSafetensors applies).
	Want []int
	// Hint, when not empty, says how to load the tensor: the file's
	// shape is a permutation of the expected one that a known layout
	// (PyTorch's) explains.
	Hint string
}

// Error names the tensor (and its name in the file), both shapes and the
// hint.
func (e *ShapeError) Error() string {
	name := fmt.Sprintf("%q", e.Name)
	if e.FileName != "" && e.FileName != e.Name {
		name += fmt.Sprintf(" (file %q)", e.FileName)
	}
	msg := fmt.Sprintf("rt: load: tensor %s: shape mismatch: file has %v, expected %v", name, e.File, e.Want)
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

// elemName names an element type code.
func elemName(c byte) string {
	if c == elemFloat64 {
		return "float64"
	}
	return "float32"
}

// info checks t's consistency and returns its element code and element
// count.
func (t *Tensor) info(op string) (byte, int, error) {
	if t.Data32 != nil && t.Data64 != nil {
		return 0, 0, fmt.Errorf("rt: %s: tensor %q: both Data32 and Data64 are set: %w", op, t.Name, ErrInvalid)
	}
	if err := t.checkRole(op); err != nil {
		return 0, 0, err
	}
	n := 1
	for _, d := range t.Dims {
		if d < 0 {
			return 0, 0, fmt.Errorf("rt: %s: tensor %q: negative dim in %v: %w", op, t.Name, t.Dims, ErrInvalid)
		}
		if d != 0 && n > math.MaxInt/d {
			return 0, 0, fmt.Errorf("rt: %s: tensor %q: dims %v overflow: %w", op, t.Name, t.Dims, ErrInvalid)
		}
		n *= d
	}
	c, l := byte(elemFloat32), len(t.Data32)
	if t.Data64 != nil {
		c, l = elemFloat64, len(t.Data64)
	}
	if l != n {
		return 0, 0, fmt.Errorf("rt: %s: tensor %q: %d %s elements for dims %v (want %d): %w", op, t.Name, l, elemName(c), t.Dims, n, ErrInvalid)
	}
	return c, n, nil
}

// checkSet validates a caller's tensor set: each tensor consistent, names
// non-empty and unique.
func checkSet(op string, ts []Tensor) error {
	seen := make(map[string]bool, len(ts))
	for i := range ts {
		t := &ts[i]
		if t.Name == "" {
			return fmt.Errorf("rt: %s: tensor %d has an empty name: %w", op, i, ErrInvalid)
		}
		if seen[t.Name] {
			return fmt.Errorf("rt: %s: duplicate tensor name %q: %w", op, t.Name, ErrInvalid)
		}
		seen[t.Name] = true
		if _, _, err := t.info(op); err != nil {
			return err
		}
	}
	return nil
}

// Save writes the tensors ts to w in the parameter file format (all
// integers little-endian):
//
//	magic    8 bytes  "OCGNPARM"
//	version  uint32   FormatVersion (1)
//	length   uint64   byte length of the payload
//	payload  length bytes:
//	    count uint32, then count entries in the order of ts:
//	        nameLen uint32, name (nameLen bytes of UTF-8)
//	        elem    uint8   1 = float32, 2 = float64
//	        rank    uint32, then rank dims, each uint64
//	        data    product(dims) IEEE-754 values of the element type
//	crc      uint32   CRC-32 (IEEE) of version, length and payload
//
// It fails with an error wrapping ErrInvalid when a name is empty or
// repeated or a tensor's data does not match its dims.
func Save(w io.Writer, ts []Tensor) error {
	if err := checkSet("save", ts); err != nil {
		return err
	}
	if uint64(len(ts)) > math.MaxUint32 {
		return fmt.Errorf("rt: save: too many tensors: %w", ErrInvalid)
	}
	length := uint64(4)
	for i := range ts {
		t := &ts[i]
		c, n, _ := t.info("save")
		size := uint64(4)
		if c == elemFloat64 {
			size = 8
		}
		if uint64(len(t.Name)) > math.MaxUint32 || uint64(len(t.Dims)) > math.MaxUint32 {
			return fmt.Errorf("rt: save: tensor %q: name or rank too long: %w", t.Name, ErrInvalid)
		}
		length += 4 + uint64(len(t.Name)) + 1 + 4 + 8*uint64(len(t.Dims)) + size*uint64(n)
	}
	bw := bufio.NewWriter(w)
	if _, err := bw.WriteString(fileMagic); err != nil {
		return fmt.Errorf("rt: save: %w", err)
	}
	crc := crc32.NewIEEE()
	out := io.MultiWriter(bw, crc)
	buf := make([]byte, 0, 4096)
	flush := func() error {
		_, err := out.Write(buf)
		buf = buf[:0]
		return err
	}
	buf = binary.LittleEndian.AppendUint32(buf, FormatVersion)
	buf = binary.LittleEndian.AppendUint64(buf, length)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(ts)))
	for i := range ts {
		t := &ts[i]
		c := byte(elemFloat32)
		if t.Data64 != nil {
			c = elemFloat64
		}
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(t.Name)))
		if err := flush(); err != nil {
			return fmt.Errorf("rt: save: %w", err)
		}
		if _, err := io.WriteString(out, t.Name); err != nil {
			return fmt.Errorf("rt: save: %w", err)
		}
		buf = append(buf, c)
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(t.Dims)))
		for _, d := range t.Dims {
			buf = binary.LittleEndian.AppendUint64(buf, uint64(d))
		}
		for _, v := range t.Data32 {
			if len(buf)+4 > cap(buf) {
				if err := flush(); err != nil {
					return fmt.Errorf("rt: save: %w", err)
				}
			}
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
		for _, v := range t.Data64 {
			if len(buf)+8 > cap(buf) {
				if err := flush(); err != nil {
					return fmt.Errorf("rt: save: %w", err)
				}
			}
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
		}
	}
	if err := flush(); err != nil {
		return fmt.Errorf("rt: save: %w", err)
	}
	if _, err := bw.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32())); err != nil {
		return fmt.Errorf("rt: save: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("rt: save: %w", err)
	}
	return nil
}

// entry is one stored tensor as parsed from a payload.
type entry struct {
	name string
	elem byte
	dims []int
	data []byte
}

// reader decodes a payload with bounds checks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = fmt.Errorf("rt: load: payload ends early: %w", ErrCorrupt)
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *reader) u8() byte {
	if p := r.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (r *reader) u32() uint32 {
	if p := r.take(4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if p := r.take(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

// parsePayload decodes and validates a checksummed payload.
func parsePayload(p []byte) ([]entry, error) {
	r := &reader{b: p}
	count := r.u32()
	// Each entry takes at least 9 bytes (nameLen, elem, rank).
	if r.err == nil && uint64(count) > uint64(len(r.b))/9 {
		return nil, fmt.Errorf("rt: load: %d tensors cannot fit in %d bytes: %w", count, len(r.b), ErrCorrupt)
	}
	es := make([]entry, 0, count)
	seen := make(map[string]bool, count)
	for i := uint32(0); i < count && r.err == nil; i++ {
		var e entry
		e.name = string(r.take(uint64(r.u32())))
		e.elem = r.u8()
		rank := r.u32()
		if r.err != nil {
			break
		}
		if e.elem != elemFloat32 && e.elem != elemFloat64 {
			return nil, fmt.Errorf("rt: load: tensor %q: unknown element type code %d: %w", e.name, e.elem, ErrCorrupt)
		}
		if uint64(rank) > uint64(len(r.b))/8 {
			return nil, fmt.Errorf("rt: load: tensor %q: rank %d cannot fit: %w", e.name, rank, ErrCorrupt)
		}
		if e.name == "" || seen[e.name] {
			return nil, fmt.Errorf("rt: load: empty or duplicate tensor name %q: %w", e.name, ErrCorrupt)
		}
		seen[e.name] = true
		size := uint64(4)
		if e.elem == elemFloat64 {
			size = 8
		}
		e.dims = make([]int, rank)
		zero := false
		for j := range e.dims {
			d := r.u64()
			if d > math.MaxInt {
				return nil, fmt.Errorf("rt: load: tensor %q: dim %d too large: %w", e.name, d, ErrCorrupt)
			}
			e.dims[j] = int(d)
			zero = zero || d == 0
		}
		if r.err != nil {
			break
		}
		// The element count cannot exceed what the rest of the payload
		// holds; checking before each product also rules out overflow.
		n, limit := uint64(0), uint64(len(r.b))/size
		if !zero {
			n = 1
			for _, d := range e.dims {
				if uint64(d) > limit/n {
					return nil, fmt.Errorf("rt: load: tensor %q: dims %v exceed the payload: %w", e.name, e.dims, ErrCorrupt)
				}
				n *= uint64(d)
			}
		}
		e.data = r.take(n * size)
		es = append(es, e)
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("rt: load: %d stray bytes after the last tensor: %w", len(r.b), ErrCorrupt)
	}
	return es, nil
}

// Load reads a parameter file (see Save) from r and fills the caller's
// tensors ts in place, matching them by name. Every tensor of ts must be
// in the file and every tensor of the file in ts, with equal dims and
// element type; each tensor's data slice must already have the length of
// its dims. On any error nothing in ts is modified. Errors wrap
// ErrBadMagic (saying which function reads the file when it is a
// checkpoint or a safetensors file), ErrVersion, ErrTruncated,
// ErrChecksum or ErrCorrupt for a damaged file; for a well-formed file
// that does not match ts, the error joins one error per problem:
// ErrMissing, ErrExtra, ErrElemType (each naming the tensor) or a
// *ShapeError naming the tensor and both shapes (with a hint when the
// file holds the tensor in PyTorch's layout); a tensor holding NaN or
// infinite values gives ErrNonFinite (Save writes such values, Load
// refuses them). Load reads exactly the file's bytes from r (or, for a
// file of another format, at most one byte more).
func Load(r io.Reader, ts []Tensor) error {
	if err := checkSet("load", ts); err != nil {
		return err
	}
	var hdr [20]byte
	if n, err := io.ReadFull(r, hdr[:8]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			if string(hdr[:n]) != fileMagic[:n] {
				return fmt.Errorf("rt: load: %w", ErrBadMagic)
			}
			return fmt.Errorf("rt: load: input ends in the magic header (%d bytes): %w", n, ErrTruncated)
		}
		return fmt.Errorf("rt: load: %w", err)
	}
	if string(hdr[:8]) != fileMagic {
		if what := otherFormat(hdr[:8], r, fileMagic); what != "" {
			return fmt.Errorf("rt: load: %s: %w", what, ErrBadMagic)
		}
		return fmt.Errorf("rt: load: header %q: %w", hdr[:8], ErrBadMagic)
	}
	if _, err := io.ReadFull(r, hdr[8:20]); err != nil {
		return readErr("header", err)
	}
	if v := binary.LittleEndian.Uint32(hdr[8:12]); v != FormatVersion {
		return fmt.Errorf("rt: load: format version %d, this package reads %d: %w", v, FormatVersion, ErrVersion)
	}
	length := binary.LittleEndian.Uint64(hdr[12:20])
	// ReadAll grows with the data actually read, so a corrupt length
	// cannot make it allocate more than the input holds.
	payload, err := io.ReadAll(io.LimitReader(r, int64(min(length, math.MaxInt64))))
	if err != nil {
		return fmt.Errorf("rt: load: %w", err)
	}
	if uint64(len(payload)) < length {
		return fmt.Errorf("rt: load: payload has %d of %d bytes: %w", len(payload), length, ErrTruncated)
	}
	var sum [4]byte
	if _, err := io.ReadFull(r, sum[:]); err != nil {
		return readErr("checksum", err)
	}
	crc := crc32.Update(crc32.ChecksumIEEE(hdr[8:20]), crc32.IEEETable, payload)
	if stored := binary.LittleEndian.Uint32(sum[:]); stored != crc {
		return fmt.Errorf("rt: load: stored CRC-32 %#08x, computed %#08x: %w", stored, crc, ErrChecksum)
	}
	es, err := parsePayload(payload)
	if err != nil {
		return err
	}

	want := make(map[string]int, len(ts))
	for i := range ts {
		want[ts[i].Name] = i
	}
	found := make([]int, len(ts)) // index into es plus one
	var errs []error
	for j := range es {
		e := &es[j]
		i, ok := want[e.name]
		if !ok {
			errs = append(errs, fmt.Errorf("rt: load: tensor %q (%s %v) is in the file but not expected: %w", e.name, elemName(e.elem), e.dims, ErrExtra))
			continue
		}
		found[i] = j + 1
		t := &ts[i]
		c, _, _ := t.info("load")
		if c != e.elem {
			errs = append(errs, fmt.Errorf("rt: load: tensor %q: file holds %s data, expected %s: %w", t.Name, elemName(e.elem), elemName(c), ErrElemType))
		}
		if !slices.Equal(e.dims, t.Dims) {
			errs = append(errs, &ShapeError{Name: t.Name, File: e.dims, Want: slices.Clone(t.Dims), Hint: loadHint(t, e.dims)})
		}
	}
	for i := range ts {
		if found[i] == 0 {
			errs = append(errs, fmt.Errorf("rt: load: tensor %q (dims %v) is not in the file: %w", ts[i].Name, ts[i].Dims, ErrMissing))
		}
	}
	if len(errs) == 0 {
		for i := range ts {
			if err := checkFinite(&es[found[i]-1]); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for i := range ts {
		e, t := &es[found[i]-1], &ts[i]
		for k := range t.Data32 {
			t.Data32[k] = math.Float32frombits(binary.LittleEndian.Uint32(e.data[4*k:]))
		}
		for k := range t.Data64 {
			t.Data64[k] = math.Float64frombits(binary.LittleEndian.Uint64(e.data[8*k:]))
		}
	}
	return nil
}

// Unmarshal is Load from a byte slice that must hold exactly one
// parameter file: bytes after the file's checksum are an error
// (ErrTrailingData, reported before anything is loaded, so ts is left
// unchanged); every other error is Load's.
func Unmarshal(data []byte, ts []Tensor) error {
	if len(data) >= 20 && string(data[:8]) == fileMagic {
		length := binary.LittleEndian.Uint64(data[12:20])
		if n := uint64(len(data)); length <= n && n-length > 24 {
			return fmt.Errorf("rt: unmarshal: %d byte(s) after the %d-byte parameter file: %w", n-length-24, length+24, ErrTrailingData)
		}
	}
	return Load(bytes.NewReader(data), ts)
}

// checkFinite reports the NaN and infinite values of a stored tensor
// (ErrNonFinite: the first one's offset and how many there are).
func checkFinite(e *entry) error {
	bad, first := 0, -1
	n := len(e.data) / 4
	if e.elem == elemFloat64 {
		n = len(e.data) / 8
	}
	for k := range n {
		var v float64
		if e.elem == elemFloat64 {
			v = math.Float64frombits(binary.LittleEndian.Uint64(e.data[8*k:]))
		} else {
			v = float64(math.Float32frombits(binary.LittleEndian.Uint32(e.data[4*k:])))
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			if first < 0 {
				first = k
			}
			bad++
		}
	}
	if bad == 0 {
		return nil
	}
	return fmt.Errorf("rt: load: tensor %q: %d NaN or infinite value(s), the first at offset %d: %w", e.name, bad, first, ErrNonFinite)
}

// otherFormat recognizes the start of the files of rt's other loaders
// (the 8 bytes head, not of the format whose magic is own; for a
// safetensors file it reads one more byte from r) and says which function
// reads it, or returns "".
func otherFormat(head []byte, r io.Reader, own string) string {
	if len(head) < 8 {
		return ""
	}
	switch string(head[:8]) {
	case own:
		return ""
	case fileMagic:
		return "this is a parameter file (written by Save); read it with Load (a model's Load method)"
	case checkpointMagic:
		return "this is a training checkpoint (written by SaveCheckpoint); read it with LoadCheckpoint (a model's LoadCheckpoint method)"
	}
	if own == "safetensors" {
		return ""
	}
	// A safetensors file starts with the length of its JSON header.
	if n := binary.LittleEndian.Uint64(head); n >= 2 && n <= maxSafetensorsHeader {
		var b [1]byte
		if _, err := io.ReadFull(r, b[:]); err == nil && b[0] == '{' {
			return "this is a safetensors file; read it with LoadSafetensors (a model's LoadSafetensors method)"
		}
	}
	return ""
}

// loadHint explains a shape mismatch of Load that PyTorch's layout of the
// tensor explains: the parameter file format converts no layout.
func loadHint(t *Tensor, file []int) string {
	perm := t.torchExplains(file)
	if perm == nil {
		return ""
	}
	names := t.axisNames()
	how := fmt.Sprintf("SafetensorsOptions{Layout: rt.LayoutPyTorch} (or Permute[%q] = %s)", t.Name, permGo(perm))
	what := fmt.Sprintf("PyTorch's layout %s of this %s (ocannlgen's is %s)", layoutText(names, perm), t.what(), layoutText(names, nil))
	if t.Role == RoleUnknown {
		how = fmt.Sprintf("SafetensorsOptions{Permute: {%q: %s}}", t.Name, permGo(perm))
		what = fmt.Sprintf("PyTorch's nn.Conv2d layout %s of this %s tensor", layoutText(names, perm), layoutText(names, nil))
	}
	return fmt.Sprintf("the file's shape is %s, and the parameter file format converts no layout: "+
		"write the tensor as a safetensors file and read that with LoadSafetensors and %s", what, how)
}

// readErr turns a short read of part of the file into ErrTruncated.
func readErr(part string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("rt: load: input ends in the %s: %w", part, ErrTruncated)
	}
	return fmt.Errorf("rt: load: %w", err)
}
