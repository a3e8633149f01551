//go:build !cuda

package cuda

// Available reports whether this binary was built with the cuda tag.
const Available = false

// Device is an opened GPU (see the cuda build).
type Device struct{}

// Open returns ErrNotBuilt: the binary was built without the cuda tag.
func Open() (*Device, error) { return nil, ErrNotBuilt }

// NewSession returns ErrNotBuilt.
func (d *Device) NewSession(src []byte) (*Session, error) { return nil, ErrNotBuilt }

// Close does nothing.
func (d *Device) Close() error { return nil }
