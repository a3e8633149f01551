package rt

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The loading policy every loader (Load, Unmarshal, LoadCheckpoint,
// LoadSafetensors) applies; docs/language.md, "The loading policy":
//
//   - a value is loaded only if the tensor's Domain admits it (by default
//     finite values only: ErrNonFinite) and the destination's element type
//     holds it (a float64 beyond float32's range is refused, ErrOutOfRange,
//     never rounded to an infinity);
//   - a loaded checkpoint's step and optimizer state are ones the
//     optimizer can run (step at most MaxStep, Adam's second moments not
//     negative: ErrOutOfRange);
//   - what a loader allocates grows with the bytes the input actually
//     holds and is bounded by the tensors it loads: a length the file
//     claims is never allocated up front, and data no tensor takes is
//     skipped, not buffered;
//   - an error quotes at most quoteLimit bytes of each string from the
//     file and lists at most maxListed problems;
//   - all or nothing: on any error no tensor is modified.

// Domain is the set of values the loaders (Load, Unmarshal,
// LoadCheckpoint, LoadSafetensors) accept in a tensor (Tensor.Domain).
// The savers write any value.
type Domain uint8

// The domains of a tensor's values.
const (
	// DomainFinite, the zero value: finite values only; a NaN or an
	// infinity is refused (ErrNonFinite), so a diverged or damaged file
	// never silently poisons a model.
	DomainFinite Domain = iota
	// DomainNonNegative: finite values that are not negative (-0 is
	// allowed); a negative one is refused (ErrOutOfRange). Adam's second
	// moments are such values (LoadCheckpoint applies this domain to them
	// by itself, see LoadCheckpoint).
	DomainNonNegative
	// DomainAny: every value, NaN and infinities included: set it on the
	// tensors of a diverged model loaded for inspection, or a tensor that
	// holds infinities by design (a -Inf mask). A float64 value beyond a
	// float32 tensor's range is refused even then.
	DomainAny
)

// String names the domain for messages.
func (d Domain) String() string {
	switch d {
	case DomainFinite:
		return "finite"
	case DomainNonNegative:
		return "non-negative"
	case DomainAny:
		return "any"
	}
	return fmt.Sprintf("Domain(%d)", uint8(d))
}

// ErrOutOfRange: a stored value is outside what its destination can hold
// or its optimizer can run: a float64 beyond a float32 tensor's range
// (LoadSafetensors), a negative value in a DomainNonNegative tensor (such
// as Adam's second moments), or a checkpoint's step above MaxStep.
const ErrOutOfRange = Error("value out of range")

// MaxStep is the largest optimizer step count a checkpoint may hold
// (2^53, beyond which float64 no longer counts every integer: the
// learning-rate schedules and Adam's bias correction compute with the
// step in float64). Where int is 32 bits, the bound is math.MaxInt32.
// SaveCheckpoint refuses a larger step, LoadCheckpoint refuses one
// (ErrOutOfRange), and NextStep saturates at it.
const MaxStep int64 = 1 << 53

// maxStep is MaxStep as an int.
const maxStep = int(min(MaxStep, math.MaxInt))

// NextStep is the step counter after one more optimizer step: step+1,
// saturating at MaxStep (the counter then stays at MaxStep, and the
// schedules and Adam's bias correction at their limits); a negative step,
// which no loader produces, counts from 0 and gives 1. Generated Update
// methods advance Step with it, so Adam always gets a step of at least 1.
func NextStep(step int) int {
	switch {
	case step < 0:
		return 1
	case step >= maxStep:
		return maxStep
	}
	return step + 1
}

// quoteLimit is the most bytes of a string from a file an error quotes.
const quoteLimit = 80

// quote quotes s for a message: at most quoteLimit bytes (cut at a rune
// boundary), followed by "..." and the total length when s is longer.
func quote(s string) string {
	if len(s) <= quoteLimit {
		return strconv.Quote(s)
	}
	return quotePrefix([]byte(s[:min(len(s), quoteLimit+utf8.UTFMax)]), uint64(len(s)))
}

// quotePrefix quotes a string of total bytes of which prefix holds the
// first ones (at least quoteLimit of them when total is longer), as quote
// does.
func quotePrefix(prefix []byte, total uint64) string {
	if total <= quoteLimit && uint64(len(prefix)) == total {
		return strconv.Quote(string(prefix))
	}
	cut := min(quoteLimit, len(prefix))
	for cut > 0 && cut < len(prefix) && !utf8.RuneStart(prefix[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(string(prefix[:cut])), total)
}

// maxDimsShown is the most dims a message lists.
const maxDimsShown = 16

// dimsText renders dims for a message, e.g. [2 3], listing at most
// maxDimsShown of them: [2 1 1 ... (rank 1000)].
func dimsText(dims []int) string {
	if len(dims) <= maxDimsShown {
		return fmt.Sprint(dims)
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, d := range dims[:maxDimsShown] {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(d))
	}
	fmt.Fprintf(&b, " ... (rank %d)]", len(dims))
	return b.String()
}

// maxListed is the most problems an error lists (ErrMissing, ErrExtra, a
// *ShapeError, ...); the rest are counted.
const maxListed = 16

// problems collects the errors of a load that does not match its
// tensors, listing at most maxListed.
type problems struct {
	op   string
	errs []error
	more int
}

// room reports whether another problem would be listed; when it would
// not, count it with skip instead of building its error.
func (p *problems) room() bool { return len(p.errs) < maxListed }

func (p *problems) add(err error) {
	if p.room() {
		p.errs = append(p.errs, err)
		return
	}
	p.more++
}

func (p *problems) skip() { p.more++ }

func (p *problems) any() bool { return len(p.errs) > 0 || p.more > 0 }

// err joins the problems, nil when there are none.
func (p *problems) err() error {
	if !p.any() {
		return nil
	}
	errs := p.errs
	if p.more > 0 {
		errs = append(errs, fmt.Errorf("rt: %s: and %d more problem(s), not listed", p.op, p.more))
	}
	return errors.Join(errs...)
}

// valueCheck accumulates the values of one stored tensor that its
// destination refuses under the loading policy.
type valueCheck struct {
	domain    Domain
	to32      bool // the destination is a float32 tensor
	nonFinite int
	negative  int
	overflow  int
	// the first offending value of each kind and its element offset
	firstNF, firstNeg, firstOver int
	negVal, overVal              float64
}

// check records element k, of value v.
func (c *valueCheck) check(k int, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		if c.domain != DomainAny {
			if c.nonFinite == 0 {
				c.firstNF = k
			}
			c.nonFinite++
		}
		return
	}
	if c.to32 && math.IsInf(float64(float32(v)), 0) {
		if c.overflow == 0 {
			c.firstOver, c.overVal = k, v
		}
		c.overflow++
		return
	}
	if c.domain == DomainNonNegative && v < 0 {
		if c.negative == 0 {
			c.firstNeg, c.negVal = k, v
		}
		c.negative++
	}
}

// errs returns the errors for the recorded values of the tensor named
// name (already quoted), in messages prefixed "rt: op: ".
func (c *valueCheck) errs(op, name string) []error {
	var errs []error
	if c.nonFinite > 0 {
		errs = append(errs, fmt.Errorf("rt: %s: tensor %s: %d NaN or infinite value(s), the first at offset %d "+
			"(set the tensor's Domain to rt.DomainAny to load them): %w", op, name, c.nonFinite, c.firstNF, ErrNonFinite))
	}
	if c.overflow > 0 {
		errs = append(errs, fmt.Errorf("rt: %s: tensor %s: %d value(s) beyond float32's range, the first %g at offset %d "+
			"(not rounded to an infinity): %w", op, name, c.overflow, c.overVal, c.firstOver, ErrOutOfRange))
	}
	if c.negative > 0 {
		errs = append(errs, fmt.Errorf("rt: %s: tensor %s: %d negative value(s), the first %g at offset %d, in a tensor whose values "+
			"cannot be negative (Domain %s, e.g. Adam's second moments): %w", op, name, c.negative, c.negVal, c.firstNeg, c.domain, ErrOutOfRange))
	}
	return errs
}

// growChunk is the first allocation of readGrowing.
const growChunk = 4 << 10

// readGrowing reads exactly n bytes from r into a new slice that grows
// (doubling from growChunk) with what r delivers, so a length a file
// claims but does not hold costs no memory. A short input gives
// io.ErrUnexpectedEOF (or io.EOF when nothing was read).
func readGrowing(r io.Reader, n uint64) ([]byte, error) {
	if n > math.MaxInt {
		return nil, fmt.Errorf("%d bytes do not fit in memory: %w", n, ErrInvalid)
	}
	if n <= growChunk {
		b := make([]byte, n)
		_, err := io.ReadFull(r, b)
		return b, err
	}
	b := make([]byte, 0, growChunk)
	for uint64(len(b)) < n {
		if len(b) == cap(b) {
			nb := make([]byte, len(b), int(min(2*uint64(cap(b)), n)))
			copy(nb, b)
			b = nb
		}
		k, err := io.ReadFull(r, b[len(b):cap(b)])
		b = b[:len(b)+k]
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return b, err
		}
	}
	return b, nil
}

// skipBytes reads and drops n bytes of r through buf, also writing them
// to h when it is not nil; it returns what io.ReadFull returns.
func skipBytes(r io.Reader, n uint64, buf []byte, h io.Writer) error {
	for n > 0 {
		k := int(min(uint64(len(buf)), n))
		got, err := io.ReadFull(r, buf[:k])
		if h != nil {
			h.Write(buf[:got])
		}
		n -= uint64(got)
		if err != nil {
			return err
		}
	}
	return nil
}
