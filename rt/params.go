package rt

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
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
	// EvenPadded lists the window axes of a RoleConvKernel tensor (among
	// its Spatial axes, increasing) that a padded convolution (`=+`)
	// reads with a window of an even span: ocannlgen pads the extra cell
	// of such a window on the left, PyTorch's padding='same' on the
	// right, so LoadSafetensors with LayoutPyTorch refuses the tensor
	// unless SafetensorsOptions.AllowEvenKernelPadding confirms it (see
	// ErrEvenKernelPadding). Generated ParamTensors set it; nil for the
	// other roles and for odd windows. Save and Load ignore it.
	EvenPadded []int
	// Flattened lists, for a RoleLinearWeight tensor whose input axis (its
	// last) a `flatten` fills, the sizes of the axes it flattened, at
	// least two (e.g. [4 5 3] for a linear layer applied to flatten x,
	// x : ... | 4, 5, 3); nil otherwise. PyTorch's twin of such a layer
	// may flatten the activations in another order (x.flatten(1) of
	// NCHW activations puts the channels first) and the file's shape
	// cannot tell, so LoadSafetensors refuses the tensor
	// (ErrAmbiguousLayout) unless a Views or Permute entry, the Layout
	// LayoutNative or the layout the file records says how to read it,
	// and SaveSafetensors with LayoutPyTorch refuses it unless a Views or
	// Permute entry says how to write it. Generated ParamTensors set it.
	// Save and Load ignore it.
	Flattened []int
	// Domain is the set of values the loaders accept in the tensor: the
	// zero value, DomainFinite, refuses NaN and infinities; DomainAny lets
	// them through (see Domain). Save ignores it.
	Domain Domain
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
	msg := fmt.Sprintf("rt: load: tensor %s: shape mismatch: file has %s, expected %s", name, dimsText(e.File), dimsText(e.Want))
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
	if t.Domain > DomainAny {
		return 0, 0, fmt.Errorf("rt: %s: tensor %q: unknown Domain %d: %w", op, t.Name, uint8(t.Domain), ErrInvalid)
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

// payloadReader reads a parameter file's payload from r: at most left
// more bytes, each added to the CRC-32 crc.
type payloadReader struct {
	r    io.Reader
	left uint64
	crc  uint32
}

func (p *payloadReader) Read(b []byte) (int, error) {
	if p.left == 0 {
		return 0, io.EOF
	}
	if uint64(len(b)) > p.left {
		b = b[:p.left]
	}
	n, err := p.r.Read(b)
	p.crc = crc32.Update(p.crc, crc32.IEEETable, b[:n])
	p.left -= uint64(n)
	return n, err
}

// errPayloadEnds: the payload's contents need more bytes than its length
// gives (a parse error, reported as ErrCorrupt).
var errPayloadEnds = errors.New("payload ends early")

// payloadLoader parses a payload as it streams in, keeping only the data
// of the tensors that match the caller's (name, element type and dims);
// everything else is skipped after it is added to the CRC.
type payloadLoader struct {
	p       *payloadReader
	ts      []Tensor
	want    map[string]int // name -> index into ts
	maxName int            // the longest name of ts
	found   []bool         // the file holds ts[i]
	data    [][]byte       // ts[i]'s stored data, when it matches
	seen    map[uint64]bool
	probs   problems
	buf     []byte // scratch for skipping
	ioErr   error  // a read error of the input (neither EOF nor a parse error)
	short   bool   // the input ended inside the payload
}

// fill reads exactly len(b) payload bytes: errPayloadEnds when the
// payload has fewer left, io.ErrUnexpectedEOF when the input ends first.
func (l *payloadLoader) fill(b []byte) error {
	if uint64(len(b)) > l.p.left {
		return errPayloadEnds
	}
	_, err := io.ReadFull(l.p, b)
	return l.readErr(err)
}

// readErr records a read error: the input ended (short) or failed.
func (l *payloadLoader) readErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		l.short = true
	} else if l.ioErr == nil {
		l.ioErr = err
	}
	return err
}

func (l *payloadLoader) u32() (uint32, error) {
	var b [4]byte
	err := l.fill(b[:])
	return binary.LittleEndian.Uint32(b[:]), err
}

func (l *payloadLoader) u64() (uint64, error) {
	var b [8]byte
	err := l.fill(b[:])
	return binary.LittleEndian.Uint64(b[:]), err
}

// skip reads n payload bytes, writing them to h when it is not nil.
func (l *payloadLoader) skip(n uint64, h io.Writer) error {
	if n > l.p.left {
		return errPayloadEnds
	}
	return l.readErr(skipBytes(l.p, n, l.buf, h))
}

// corrupt makes a parse error of the payload.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("rt: load: "+format+": %w", append(args, ErrCorrupt)...)
}

// entry parses one stored tensor. A tensor that matches ts[i] leaves its
// data in l.data[i]; any other is listed in l.probs.
func (l *payloadLoader) entry() error {
	e, err := l.entryName()
	if err != nil {
		return err
	}
	var head [5]byte
	if err := l.fill(head[:]); err != nil {
		return err
	}
	elem, rank := head[0], binary.LittleEndian.Uint32(head[1:])
	if elem != elemFloat32 && elem != elemFloat64 {
		return corrupt("tensor %s: unknown element type code %d", e.shown, elem)
	}
	if uint64(rank) > l.p.left/8 {
		return corrupt("tensor %s: rank %d cannot fit", e.shown, rank)
	}
	if e.expected {
		if l.found[e.i] {
			return corrupt("duplicate tensor name %s", e.shown)
		}
		l.found[e.i] = true
	} else {
		if l.seen[e.key] {
			return corrupt("duplicate tensor name %s", e.shown)
		}
		l.seen[e.key] = true
	}
	size := uint64(4)
	if elem == elemFloat64 {
		size = 8
	}
	dims, n, err := l.entryDims(e, rank, size)
	if err != nil {
		return err
	}
	if !e.expected {
		if l.probs.room() {
			ds := dimsText(dims)
			if len(dims) < int(rank) {
				ds = fmt.Sprintf("of rank %d", rank)
			}
			l.probs.add(fmt.Errorf("rt: load: tensor %s (%s %s) is in the file but not expected: %w", e.shown, elemName(elem), ds, ErrExtra))
		} else {
			l.probs.skip()
		}
		return l.skip(n*size, nil)
	}
	t := &l.ts[e.i]
	c, _, _ := t.info("load")
	match := true
	if c != elem {
		l.probs.add(fmt.Errorf("rt: load: tensor %q: file holds %s data, expected %s: %w", t.Name, elemName(elem), elemName(c), ErrElemType))
		match = false
	}
	if !slices.Equal(dims, t.Dims) {
		if dims == nil {
			dims = []int{}
		}
		l.probs.add(&ShapeError{Name: t.Name, File: dims, Want: slices.Clone(t.Dims), Hint: loadHint(t, dims)})
		match = false
	}
	if !match || l.probs.any() {
		return l.skip(n*size, nil)
	}
	// The data of a matching tensor is at most the tensor's size; it
	// grows with what the input holds.
	b, err := readGrowing(l.p, n*size)
	if err != nil {
		return l.readErr(err)
	}
	l.data[e.i] = b
	return nil
}

// storedName is what entryName read of a stored tensor's name: shown for
// messages; i and expected when it names ts[i]; key, its hash, to find
// duplicates among unexpected names.
type storedName struct {
	shown    string
	i        int
	expected bool
	key      uint64
}

// entryName reads a stored tensor's name. A name longer than every
// expected one cannot match: only its start is kept (for messages) and
// its hash.
func (l *payloadLoader) entryName() (storedName, error) {
	e := storedName{i: -1}
	nameLen, err := l.u32()
	if err != nil {
		return e, err
	}
	if nameLen == 0 {
		return e, corrupt("empty tensor name")
	}
	h := fnv.New64a()
	if int64(nameLen) <= int64(l.maxName) {
		b := make([]byte, nameLen)
		if err := l.fill(b); err != nil {
			return e, err
		}
		name := string(b)
		e.shown = quote(name)
		e.i, e.expected = l.want[name]
		h.Write(b)
	} else {
		b := make([]byte, min(nameLen, quoteLimit+utf8.UTFMax))
		if err := l.fill(b); err != nil {
			return e, err
		}
		h.Write(b)
		if err := l.skip(uint64(nameLen)-uint64(len(b)), h); err != nil {
			return e, err
		}
		e.shown = quotePrefix(b, uint64(nameLen))
	}
	e.key = h.Sum64()
	return e, nil
}

// entryDims reads a stored tensor's rank dims: all of them for an
// expected tensor (its ShapeError lists them), the first few for another;
// n, the cell count, is their product, saturating, and must fit in the
// payload at size bytes a cell.
func (l *payloadLoader) entryDims(e storedName, rank uint32, size uint64) (dims []int, n uint64, err error) {
	keep := int(rank)
	if !e.expected {
		keep = min(keep, maxDimsShown+1)
	}
	n, zero := uint64(1), false
	for range rank {
		d, err := l.u64()
		if err != nil {
			return nil, 0, err
		}
		if d > math.MaxInt {
			return nil, 0, corrupt("tensor %s: dim %d too large", e.shown, d)
		}
		if len(dims) < keep {
			dims = append(dims, int(d))
		}
		switch {
		case d == 0:
			zero = true
		case n > math.MaxUint64/d:
			n = math.MaxUint64
		default:
			n *= d
		}
	}
	if zero {
		n = 0
	}
	if n > l.p.left/size {
		return nil, 0, corrupt("tensor %s: dims %s exceed the payload", e.shown, dimsText(dims))
	}
	return dims, n, nil
}

// Load reads a parameter file (see Save) from r and fills the caller's
// tensors ts in place, matching them by name. Every tensor of ts must be
// in the file and every tensor of the file in ts, with equal dims and
// element type; each tensor's data slice must already have the length of
// its dims. On any error nothing in ts is modified. Errors wrap
// ErrBadMagic (saying which function reads the file when it is a
// checkpoint or a safetensors file), ErrVersion, ErrTruncated,
// ErrChecksum or ErrCorrupt for a damaged file; for a well-formed file
// that does not match ts, the error joins one error per problem (at most
// 16 listed): ErrMissing, ErrExtra, ErrElemType (each naming the tensor)
// or a *ShapeError naming the tensor and both shapes (with a hint when the
// file holds the tensor in PyTorch's layout). A value the tensor's Domain
// refuses gives ErrNonFinite (a NaN or an infinity, unless the Domain is
// DomainAny; Save writes such values) or ErrOutOfRange (a negative value
// in a DomainNonNegative tensor). Load reads exactly the file's bytes from
// r (or, for a file of another format, at most one byte more). It
// allocates no more than the input holds: it streams the payload,
// buffering only the data of tensors that match ts.
func Load(r io.Reader, ts []Tensor) error {
	return load(r, ts, nil)
}

// load is Load with the domain of each tensor of ts given by domains
// (nil: each tensor's Domain).
func load(r io.Reader, ts []Tensor, domains []Domain) error {
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
	l := &payloadLoader{
		p:     &payloadReader{r: r, left: length, crc: crc32.ChecksumIEEE(hdr[8:20])},
		ts:    ts,
		want:  make(map[string]int, len(ts)),
		found: make([]bool, len(ts)),
		data:  make([][]byte, len(ts)),
		seen:  map[uint64]bool{},
		probs: problems{op: "load"},
		buf:   make([]byte, 4096),
	}
	for i := range ts {
		l.want[ts[i].Name] = i
		l.maxName = max(l.maxName, len(ts[i].Name))
	}
	// Parse as the payload streams in. A parse error stops the parse; the
	// rest of the payload is still read, so that a damaged file is
	// reported as truncated or failing its checksum before its contents
	// are blamed.
	var parseErr error
	count, err := l.u32()
	if err == nil && uint64(count) > l.p.left/9 {
		// Each entry takes at least 9 bytes (nameLen, elem, rank).
		err = corrupt("%d tensors cannot fit in %d bytes", count, l.p.left)
	}
	for k := uint32(0); err == nil && k < count; k++ {
		err = l.entry()
	}
	if err == nil && l.p.left > 0 {
		err = corrupt("%d stray bytes after the last tensor", l.p.left)
	}
	switch {
	case errors.Is(err, errPayloadEnds):
		parseErr = corrupt("%s", errPayloadEnds)
	case err != nil && !l.short && l.ioErr == nil:
		parseErr = err
	}
	if !l.short && l.ioErr == nil && l.p.left > 0 {
		l.skip(l.p.left, nil)
	}
	if l.ioErr != nil {
		return fmt.Errorf("rt: load: %w", l.ioErr)
	}
	if l.short {
		return fmt.Errorf("rt: load: payload has %d of %d bytes: %w", length-l.p.left, length, ErrTruncated)
	}
	var sum [4]byte
	if _, err := io.ReadFull(r, sum[:]); err != nil {
		return readErr("checksum", err)
	}
	if stored := binary.LittleEndian.Uint32(sum[:]); stored != l.p.crc {
		return fmt.Errorf("rt: load: stored CRC-32 %#08x, computed %#08x: %w", stored, l.p.crc, ErrChecksum)
	}
	if parseErr != nil {
		return parseErr
	}
	for i := range ts {
		if !l.found[i] {
			l.probs.add(fmt.Errorf("rt: load: tensor %q (dims %s) is not in the file: %w", ts[i].Name, dimsText(ts[i].Dims), ErrMissing))
		}
	}
	if err := l.probs.err(); err != nil {
		return err
	}
	var errs []error
	for i := range ts {
		d := ts[i].Domain
		if domains != nil {
			d = domains[i]
		}
		errs = append(errs, checkStored(&ts[i], l.data[i], d)...)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for i := range ts {
		b, t := l.data[i], &ts[i]
		for k := range t.Data32 {
			t.Data32[k] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*k:]))
		}
		for k := range t.Data64 {
			t.Data64[k] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*k:]))
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

// checkStored checks the stored data b of t (in t's element type)
// against domain d.
func checkStored(t *Tensor, b []byte, d Domain) []error {
	c := valueCheck{domain: d}
	for k := range t.Data32 {
		c.check(k, float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*k:]))))
	}
	for k := range t.Data64 {
		c.check(k, math.Float64frombits(binary.LittleEndian.Uint64(b[8*k:])))
	}
	return c.errs("load", strconv.Quote(t.Name))
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
