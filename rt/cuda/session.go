package cuda

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
)

// Ptr is a device address.
type Ptr uint64

// Driver is what a Session needs of a device: the CUDA driver (Open) or,
// in tests, an emulation. Every method may fail; Download may fill dst
// only when Sync returns (the emulation runs the commands then).
type Driver interface {
	// Compile compiles the CUDA source and makes its functions launchable.
	Compile(src []byte) error
	Alloc(bytes int) (Ptr, error)
	Free(p Ptr) error
	// Zero sets bytes bytes at p to zero.
	Zero(p Ptr, bytes int) error
	Upload(dst Ptr, src []byte) error
	Download(dst []byte, src Ptr) error
	// Launch runs function fn on a grid of blocks of block threads; each
	// argument is a Ptr, a float32, a float64 or an int32.
	Launch(fn string, grid [3]int, block int, sync bool, args []any) error
	// Sync waits for every command issued.
	Sync() error
	// Close releases the driver's own resources (stream, module).
	Close() error
}

// Session runs the kernels of one generated CUDA file on one device
// stream. It is not safe for concurrent use (one per model value).
type Session struct {
	d    Driver
	plan *Plan
	// bufs holds each kernel's buffers, allocated at its first run.
	bufs map[string][]Ptr
	// resident are the named buffers that persist across runs.
	resident map[string]*resident
	closed   bool
}

type resident struct {
	ptr  Ptr
	size int // cells
	elem string
}

// NewSession compiles src (a generated ocannl_gen.cu) on driver d.
func NewSession(d Driver, src []byte) (*Session, error) {
	plan, err := ParsePlan(src)
	if err != nil {
		return nil, err
	}
	if err := d.Compile(src); err != nil {
		return nil, err
	}
	return &Session{d: d, plan: plan, bufs: map[string][]Ptr{}, resident: map[string]*resident{}}, nil
}

// Plan returns the session's launch plan.
func (s *Session) Plan() *Plan { return s.plan }

func elemSize(elem string) int {
	if elem == "float64" {
		return 8
	}
	return 4
}

// encode converts vals (a []float32 or []float64) to elem's bytes.
func encode(vals any, elem string) ([]byte, int, error) {
	var f64 []float64
	switch v := vals.(type) {
	case []float64:
		f64 = v
	case []float32:
		f64 = make([]float64, len(v))
		for i, x := range v {
			f64[i] = float64(x)
		}
	case []int32:
		// An index input: its positions, held on the device as floats
		// (exact up to 2^24 in float32; the generator checks the bound).
		f64 = make([]float64, len(v))
		for i, x := range v {
			f64[i] = float64(x)
		}
	default:
		return nil, 0, fmt.Errorf("cuda: values of type %T (want []float32, []float64, or []int32 for an index input)", vals)
	}
	es := elemSize(elem)
	b := make([]byte, len(f64)*es)
	for i, x := range f64 {
		if es == 4 {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(x)))
		} else {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
		}
	}
	return b, len(f64), nil
}

// decode writes elem's bytes b into dst (a []float32 or []float64).
func decode(b []byte, elem string, dst any) error {
	es := elemSize(elem)
	at := func(i int) float64 {
		if es == 4 {
			return float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	switch v := dst.(type) {
	case []float64:
		for i := range v {
			v[i] = at(i)
		}
	case []float32:
		for i := range v {
			v[i] = float32(at(i))
		}
	default:
		return fmt.Errorf("cuda: destination of type %T (want []float32 or []float64)", dst)
	}
	return nil
}

func length(vals any) int {
	switch v := vals.(type) {
	case []float64:
		return len(v)
	case []float32:
		return len(v)
	case []int32:
		return len(v)
	}
	return -1
}

// Upload copies vals (a []float32 or []float64 of size cells) into the
// resident buffer name, creating it: a model's parameter ("p" + field, as
// the model kernels name it) before the first run, or after Load.
func (s *Session) Upload(name string, elem string, vals any) error {
	if s.closed {
		return errClosed
	}
	b, n, err := encode(vals, elem)
	if err != nil {
		return err
	}
	r, err := s.residentBuf(name, elem, n)
	if err != nil {
		return err
	}
	return s.d.Upload(r.ptr, b)
}

// Download copies the resident buffer name into dst (for Save, or to
// read a gradient).
func (s *Session) Download(name string, dst any) error {
	if s.closed {
		return errClosed
	}
	r := s.resident[name]
	if r == nil {
		return fmt.Errorf("cuda: no resident buffer %q", name)
	}
	if length(dst) != r.size {
		return fmt.Errorf("cuda: download %s: destination has %d cells, the buffer %d", name, length(dst), r.size)
	}
	b := make([]byte, r.size*elemSize(r.elem))
	if err := s.d.Download(b, r.ptr); err != nil {
		return err
	}
	if err := s.d.Sync(); err != nil {
		return err
	}
	return decode(b, r.elem, dst)
}

func (s *Session) residentBuf(name, elem string, n int) (*resident, error) {
	if r := s.resident[name]; r != nil {
		if r.size != n || r.elem != elem {
			return nil, fmt.Errorf("cuda: resident buffer %s holds %d %s cells, not %d %s", name, r.size, r.elem, n, elem)
		}
		return r, nil
	}
	p, err := s.d.Alloc(max(n, 1) * elemSize(elem))
	if err != nil {
		return nil, err
	}
	if err := s.d.Zero(p, max(n, 1)*elemSize(elem)); err != nil {
		return nil, err
	}
	r := &resident{ptr: p, size: n, elem: elem}
	s.resident[name] = r
	return r, nil
}

var errClosed = errors.New("cuda: the session is closed")

// ErrNotBuilt is Open's error in a binary built without the cuda tag.
var ErrNotBuilt = errors.New("cuda: this binary was built without the cuda build tag (go build -tags cuda); the GPU path is unavailable, use the CPU code")

// Run runs the kernel named kernel. io maps parameter names to host
// slices ([]float32 or []float64, the parameter's cells in memory order):
// an input's cells are copied in before the run, an output's copied out
// after it. A parameter not in io runs on the resident buffer of its
// name, in place: an input must have been uploaded; an output's buffer is
// created on first use (a model's gradients). Every other buffer starts
// zeroed, as the generated Go kernel's locals do (by a memset, unless the
// kernel's first statement on it fills it whole).
func (s *Session) Run(kernel string, io map[string]any) error {
	if s.closed {
		return errClosed
	}
	k := s.plan.Kernel(kernel)
	if k == nil {
		return fmt.Errorf("cuda: no kernel %s in the plan", kernel)
	}
	es := elemSize(k.Elem)
	bufs, err := s.kernelBufs(k)
	if err != nil {
		return err
	}
	ptrs := append([]Ptr(nil), bufs...)
	input := make([]bool, len(ptrs))
	for _, p := range k.Params {
		if _, ok := io[p.Name]; ok {
			input[p.Tensor] = !p.Out
			continue
		}
		r := s.resident[p.Name]
		if r == nil && p.Out {
			if r, err = s.residentBuf(p.Name, k.Elem, p.Size()); err != nil {
				return err
			}
		}
		switch {
		case r == nil:
			return fmt.Errorf("cuda: run %s: input %s is neither given nor resident (Upload it first)", kernel, p.Name)
		case p.Padded():
			return fmt.Errorf("cuda: run %s: parameter %s is padded in this kernel; pass it in io", kernel, p.Name)
		case r.size != p.Size() || r.elem != k.Elem:
			return fmt.Errorf("cuda: run %s: resident %s holds %d %s cells, the parameter %d %s", kernel, p.Name, r.size, r.elem, p.Size(), k.Elem)
		}
		ptrs[p.Tensor], input[p.Tensor] = r.ptr, !p.Out
	}
	for t, n := range k.Bufs {
		if !input[t] && !k.Filled[t] {
			if err := s.d.Zero(ptrs[t], max(n, 1)*es); err != nil {
				return err
			}
		}
	}
	for _, p := range k.Params {
		v, ok := io[p.Name]
		if !ok || p.Out {
			continue
		}
		if length(v) != p.Size() {
			return fmt.Errorf("cuda: run %s: %s has %d cells, want %d", kernel, p.Name, length(v), p.Size())
		}
		if err := checkIndex(kernel, &p, v); err != nil {
			return err
		}
		b, _, err := encode(scatter(&p, v), k.Elem)
		if err != nil {
			return err
		}
		if err := s.d.Upload(ptrs[p.Tensor], b); err != nil {
			return err
		}
	}
	for _, l := range k.Launches {
		args := make([]any, len(l.Args))
		for i, t := range l.Args {
			args[i] = ptrs[t]
		}
		if err := s.d.Launch(l.Func, l.Grid, l.Block, l.Sync, args); err != nil {
			return err
		}
	}
	return s.collect(k, ptrs, io)
}

// collect copies the outputs in io back to the host.
func (s *Session) collect(k *KernelPlan, ptrs []Ptr, io map[string]any) error {
	type pending struct {
		p   *ParamPlan
		b   []byte
		dst any
	}
	var outs []pending
	for i := range k.Params {
		p := &k.Params[i]
		v, ok := io[p.Name]
		if !ok || !p.Out {
			continue
		}
		if length(v) != p.Size() {
			return fmt.Errorf("cuda: run %s: output %s has %d cells, want %d", k.Name, p.Name, length(v), p.Size())
		}
		b := make([]byte, max(k.Bufs[p.Tensor], 1)*elemSize(k.Elem))
		if err := s.d.Download(b, ptrs[p.Tensor]); err != nil {
			return err
		}
		outs = append(outs, pending{p, b, v})
	}
	if err := s.d.Sync(); err != nil {
		return err
	}
	for _, o := range outs {
		buf := make([]float64, len(o.b)/elemSize(k.Elem))
		if err := decode(o.b, k.Elem, buf); err != nil {
			return err
		}
		if err := decode(encodeF64(gather(o.p, buf)), "float64", o.dst); err != nil {
			return err
		}
	}
	return nil
}

func encodeF64(vs []float64) []byte {
	b, _, _ := encode(vs, "float64")
	return b
}

func (s *Session) kernelBufs(k *KernelPlan) ([]Ptr, error) {
	if b, ok := s.bufs[k.Name]; ok {
		return b, nil
	}
	bufs := make([]Ptr, len(k.Bufs))
	for t, n := range k.Bufs {
		p, err := s.d.Alloc(max(n, 1) * elemSize(k.Elem))
		if err != nil {
			return nil, err
		}
		bufs[t] = p
	}
	s.bufs[k.Name] = bufs
	return bufs, nil
}

// offsets calls f with each unpadded cell's index k and buffer offset.
func offsets(p *ParamPlan, f func(k, off int)) {
	n := p.Size()
	idx := make([]int, len(p.Dims))
	for k := 0; k < n; k++ {
		off := 0
		for a := range idx {
			off = off*p.Buf[a] + idx[a] + p.Left[a]
		}
		f(k, off)
		for a := len(idx) - 1; a >= 0; a-- {
			idx[a]++
			if idx[a] < p.Dims[a] {
				break
			}
			idx[a] = 0
		}
	}
}

// scatter places vals in a zeroed buffer of p's buffer dims.
func scatter(p *ParamPlan, vals any) []float64 {
	n := 1
	for _, d := range p.Buf {
		n *= d
	}
	flat := make([]float64, p.Size())
	_ = decode(encodeF64Any(vals), "float64", flat)
	buf := make([]float64, max(n, 1))
	offsets(p, func(k, off int) { buf[off] = flat[k] })
	return buf
}

func encodeF64Any(vals any) []byte {
	b, _, _ := encode(vals, "float64")
	return b
}

// gather extracts p's unpadded cells from its buffer.
func gather(p *ParamPlan, buf []float64) []float64 {
	out := make([]float64, p.Size())
	offsets(p, func(k, off int) { out[k] = buf[off] })
	return out
}

// SGD applies the generated SGD update (rt.SGD) to the resident buffers
// param, grad and momentum (momentum only when momentum > 0; it is created
// zeroed on first use) of element type elem.
func (s *Session) SGD(elem, param, grad, momentumBuf string, lr, momentum, weightDecay float64, nesterov bool) error {
	if s.closed {
		return errClosed
	}
	fn := s.plan.SGD[elem]
	if fn == "" {
		return fmt.Errorf("cuda: the generated file has no %s SGD update (no model with an optimizer)", elem)
	}
	p, g := s.resident[param], s.resident[grad]
	if p == nil || g == nil || p.size != g.size {
		return fmt.Errorf("cuda: SGD: %s and %s must be resident buffers of one size", param, grad)
	}
	m := p
	if momentum > 0 {
		var err error
		if m, err = s.residentBuf(momentumBuf, elem, p.size); err != nil {
			return err
		}
	}
	nest := int32(0)
	if nesterov {
		nest = 1
	}
	scalar := func(v float64) any {
		if elem == "float64" {
			return v
		}
		return float32(v)
	}
	args := []any{p.ptr, g.ptr, m.ptr, scalar(lr), scalar(momentum), scalar(weightDecay), nest, int32(p.size)}
	return s.d.Launch(fn, [3]int{(p.size + 255) / 256, 1, 1}, 256, false, args)
}

// optimFunc launches the generated optimizer function of role role and
// element type elem (Plan.OptimFunc), checking args against its
// signature.
func (s *Session) optimFunc(role, elem string, grid [3]int, block int, sync bool, args []any) error {
	if s.closed {
		return errClosed
	}
	f := s.plan.OptimFunc(role, elem)
	if f == nil {
		return fmt.Errorf("cuda: the generated file has no %s %s function (regenerate it: go generate)", elem, role)
	}
	if len(args) != len(f.Sig) {
		return fmt.Errorf("cuda: %s: %d arguments for the signature %s", f.Func, len(args), f.Sig)
	}
	for i, a := range args {
		ok := false
		switch f.Sig[i] {
		case 'P', 'D':
			_, ok = a.(Ptr)
		case 's':
			if elem == "float64" {
				_, ok = a.(float64)
			} else {
				_, ok = a.(float32)
			}
		case 'd':
			_, ok = a.(float64)
		case 'i':
			_, ok = a.(int32)
		}
		if !ok {
			return fmt.Errorf("cuda: %s: argument %d is a %T, the signature %s says %c", f.Func, i, a, f.Sig, f.Sig[i])
		}
	}
	return s.d.Launch(f.Func, grid, block, sync, args)
}

// Sync waits for the commands issued so far and reports their errors.
func (s *Session) Sync() error {
	if s.closed {
		return errClosed
	}
	return s.d.Sync()
}

// Close frees every buffer and the driver's resources. A closed session
// returns an error from every method; Close itself may be called again.
func (s *Session) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(s.bufs)) {
		for _, p := range s.bufs[k] {
			errs = append(errs, s.d.Free(p))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.resident)) {
		errs = append(errs, s.d.Free(s.resident[name].ptr))
	}
	errs = append(errs, s.d.Close())
	return errors.Join(errs...)
}

// checkIndex checks an index input's positions (an []int32, each in
// [0, p.Index)); a float parameter must not be given an []int32.
func checkIndex(kernel string, p *ParamPlan, v any) error {
	ids, isIdx := v.([]int32)
	switch {
	case p.Index == 0 && isIdx:
		return fmt.Errorf("cuda: run %s: %s is a float input, given an []int32", kernel, p.Name)
	case p.Index > 0 && !isIdx:
		return fmt.Errorf("cuda: run %s: %s is an index input: give its positions as an []int32, not %T", kernel, p.Name, v)
	}
	for i, x := range ids {
		if x < 0 || int(x) >= p.Index {
			return fmt.Errorf("cuda: run %s: index input %s: cell %d is %d, out of range: an index input holds positions 0 to %d", kernel, p.Name, i, x, p.Index-1)
		}
	}
	return nil
}
