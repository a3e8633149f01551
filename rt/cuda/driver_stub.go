//go:build !cuda

package cuda

import (
	"time"

	"github.com/ocannlgen/ocannlgen/rt/dist"
)

// Available reports whether this binary was built with the cuda tag.
const Available = false

// Device is an opened GPU (see the cuda build).
type Device struct{}

// Open returns ErrNotBuilt: the binary was built without the cuda tag.
func Open() (*Device, error) { return nil, ErrNotBuilt }

// OpenDevice returns ErrNotBuilt.
func OpenDevice(ordinal int) (*Device, error) { return nil, ErrNotBuilt }

// NewSession returns ErrNotBuilt.
func (d *Device) NewSession(src []byte) (*Session, error) { return nil, ErrNotBuilt }

// Close does nothing.
func (d *Device) Close() error { return nil }

// NCCL is a communicator of NVIDIA's NCCL (see the cuda build).
type NCCL struct{}

// OpenNCCL returns ErrNotBuilt: the binary was built without the cuda
// tag.
func OpenNCCL(d *Device, c dist.Comm, timeout time.Duration) (*NCCL, error) {
	return nil, ErrNotBuilt
}

// Rank and Size are 0 and 1.
func (nc *NCCL) Rank() int { return 0 }
func (nc *NCCL) Size() int { return 1 }

// Close does nothing.
func (nc *NCCL) Close() error { return nil }

func (nc *NCCL) mean(s *Session, bufs []*resident) error { return ErrNotBuilt }
