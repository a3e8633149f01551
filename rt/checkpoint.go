package rt

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"unicode/utf8"
)

// CheckpointVersion is the version of the checkpoint format that
// SaveCheckpoint writes and LoadCheckpoint reads.
const CheckpointVersion = 1

// checkpointMagic opens every checkpoint.
const checkpointMagic = "OCGNCKPT"

// maxOptimizerName bounds the optimizer name of a checkpoint.
const maxOptimizerName = 256

// ErrOptimizer: a checkpoint holds the state of another optimizer than
// the one expected (LoadCheckpoint).
const ErrOptimizer = Error("checkpoint written for another optimizer")

// SaveCheckpoint writes a training checkpoint to w: the step counter, the
// name of the optimizer whose state it holds, and the tensors ts (the
// parameters and the optimizer's state, e.g. momentum or Adam's moments),
// all integers little-endian:
//
//	magic    8 bytes  "OCGNCKPT"
//	version  uint32   CheckpointVersion (1)
//	step     uint64
//	nameLen  uint32, optimizer name (nameLen bytes of UTF-8, at most 256)
//	crc      uint32   CRC-32 (IEEE) of version, step, nameLen and name
//	tensors  a parameter file as Save writes it (its own version and CRC)
//
// It fails with an error wrapping ErrInvalid when step is negative or
// above MaxStep (LoadCheckpoint would refuse it), the name is not short
// UTF-8, or Save would reject ts.
func SaveCheckpoint(w io.Writer, step int, optimizer string, ts []Tensor) error {
	if step < 0 || step > maxStep || len(optimizer) > maxOptimizerName || !utf8.ValidString(optimizer) {
		return fmt.Errorf("rt: save checkpoint: step %d (at most %d), optimizer name %s: %w", step, maxStep, quote(optimizer), ErrInvalid)
	}
	if err := checkSet("save checkpoint", ts); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	h := checkpointHeader(step, optimizer)
	if _, err := bw.Write(h); err != nil {
		return fmt.Errorf("rt: save checkpoint: %w", err)
	}
	if err := Save(bw, ts); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("rt: save checkpoint: %w", err)
	}
	return nil
}

// checkpointHeader encodes the header up to and including its CRC.
func checkpointHeader(step int, optimizer string) []byte {
	h := []byte(checkpointMagic)
	h = binary.LittleEndian.AppendUint32(h, CheckpointVersion)
	h = binary.LittleEndian.AppendUint64(h, uint64(step))
	h = binary.LittleEndian.AppendUint32(h, uint32(len(optimizer)))
	h = append(h, optimizer...)
	return binary.LittleEndian.AppendUint32(h, crc32.ChecksumIEEE(h[8:]))
}

// LoadCheckpoint reads a checkpoint written by SaveCheckpoint from r,
// fills the tensors ts in place as Load does and returns the step. The
// checkpoint must hold the state of the named optimizer (ErrOptimizer
// otherwise) and exactly the tensors of ts, and only state the optimizer
// can run: a step of at most MaxStep (ErrOutOfRange otherwise), and, for
// the optimizers "adam" and "adamw", second moments (the tensors named
// adam.v/..., as generated models name them) that are not negative: such
// a tensor whose Domain is DomainFinite is loaded as DomainNonNegative
// (ErrOutOfRange for a negative value). On any error nothing in ts is
// modified. Errors wrap ErrBadMagic (also for a parameter file written by
// Save or a safetensors file, saying which function reads it),
// ErrVersion, ErrTruncated, ErrChecksum or ErrCorrupt for a damaged
// header, and are Load's for the tensors (a damaged file, one error per
// mismatching tensor, or a value outside the tensor's Domain).
func LoadCheckpoint(r io.Reader, optimizer string, ts []Tensor) (int, error) {
	if err := checkSet("load checkpoint", ts); err != nil {
		return 0, err
	}
	var hdr [24]byte
	if n, err := io.ReadFull(r, hdr[:8]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			if string(hdr[:n]) != checkpointMagic[:n] {
				return 0, fmt.Errorf("rt: load checkpoint: %w", ErrBadMagic)
			}
			return 0, fmt.Errorf("rt: load checkpoint: input ends in the magic header (%d bytes): %w", n, ErrTruncated)
		}
		return 0, fmt.Errorf("rt: load checkpoint: %w", err)
	}
	if string(hdr[:8]) != checkpointMagic {
		if what := otherFormat(hdr[:8], r, checkpointMagic); what != "" {
			return 0, fmt.Errorf("rt: load checkpoint: not a checkpoint: %s: %w", what, ErrBadMagic)
		}
		return 0, fmt.Errorf("rt: load checkpoint: header %q: %w", hdr[:8], ErrBadMagic)
	}
	if _, err := io.ReadFull(r, hdr[8:24]); err != nil {
		return 0, ckptReadErr("header", err)
	}
	if v := binary.LittleEndian.Uint32(hdr[8:12]); v != CheckpointVersion {
		return 0, fmt.Errorf("rt: load checkpoint: format version %d, this package reads %d: %w", v, CheckpointVersion, ErrVersion)
	}
	step := binary.LittleEndian.Uint64(hdr[12:20])
	nameLen := binary.LittleEndian.Uint32(hdr[20:24])
	if nameLen > maxOptimizerName {
		return 0, fmt.Errorf("rt: load checkpoint: optimizer name of %d bytes: %w", nameLen, ErrCorrupt)
	}
	rest := make([]byte, nameLen+4)
	if _, err := io.ReadFull(r, rest); err != nil {
		return 0, ckptReadErr("header", err)
	}
	name := string(rest[:nameLen])
	crc := crc32.Update(crc32.ChecksumIEEE(hdr[8:24]), crc32.IEEETable, rest[:nameLen])
	if stored := binary.LittleEndian.Uint32(rest[nameLen:]); stored != crc {
		return 0, fmt.Errorf("rt: load checkpoint: header CRC-32 %#08x, computed %#08x: %w", stored, crc, ErrChecksum)
	}
	if step > uint64(maxStep) {
		return 0, fmt.Errorf("rt: load checkpoint: step %d is above rt.MaxStep (%d): no run takes that many steps, and the optimizer cannot count on from it: %w", step, maxStep, ErrOutOfRange)
	}
	if name != optimizer {
		return 0, fmt.Errorf("rt: load checkpoint: the checkpoint holds the state of optimizer %s, expected %q: %w", quote(name), optimizer, ErrOptimizer)
	}
	if err := load(r, ts, stateDomains(optimizer, ts)); err != nil {
		return 0, fmt.Errorf("rt: load checkpoint: tensors: %w", err)
	}
	return int(step), nil
}

// adamSecondMoments prefixes the names of Adam's second moments in the
// checkpoints of generated models.
const adamSecondMoments = "adam.v/"

// stateDomains returns the domain of each tensor of ts in a checkpoint
// of optimizer: Adam's second moments (sqrt of a negative one is NaN) are
// DomainNonNegative unless the caller chose another domain than
// DomainFinite.
func stateDomains(optimizer string, ts []Tensor) []Domain {
	if optimizer != "adam" && optimizer != "adamw" {
		return nil
	}
	ds := make([]Domain, len(ts))
	for i := range ts {
		ds[i] = ts[i].Domain
		if ds[i] == DomainFinite && strings.HasPrefix(ts[i].Name, adamSecondMoments) {
			ds[i] = DomainNonNegative
		}
	}
	return ds
}

// ckptReadErr turns a short read of part of a checkpoint into
// ErrTruncated.
func ckptReadErr(part string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("rt: load checkpoint: input ends in the %s: %w", part, ErrTruncated)
	}
	return fmt.Errorf("rt: load checkpoint: %w", err)
}
