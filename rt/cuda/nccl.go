package cuda

import (
	"fmt"
	"os"
	"time"
)

// ncclTimeoutEnv sets the deadline of MeanAcross when OpenNCCL's timeout
// is zero (the same variable as rt/dist/mpi's deadline).
const ncclTimeoutEnv = "OCANNL_DIST_TIMEOUT"

// ncclTimeout resolves OpenNCCL's deadline: t when positive, else
// OCANNL_DIST_TIMEOUT, else 2 minutes.
func ncclTimeout(t time.Duration) (time.Duration, error) {
	switch {
	case t > 0:
		return t, nil
	case t < 0:
		return 0, fmt.Errorf("cuda: OpenNCCL: negative timeout %v", t)
	}
	env := os.Getenv(ncclTimeoutEnv)
	if env == "" {
		return 2 * time.Minute, nil
	}
	d, err := time.ParseDuration(env)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("cuda: %s=%q is not a positive duration (e.g. 30s, 5m)", ncclTimeoutEnv, env)
	}
	return d, nil
}

// MeanAcross replaces each of the named resident buffers by its mean
// across the ranks of nc, on the devices (NCCL's ncclReduce with ncclAvg
// to rank 0, then ncclBroadcast: every rank gets the same bits), and
// waits for it, at most nc's deadline. Every rank must call it with the
// same buffers. After an error nc is unusable: close it and end the run.
func (s *Session) MeanAcross(nc *NCCL, names ...string) error {
	if s.closed {
		return errClosed
	}
	if nc == nil {
		return fmt.Errorf("cuda: MeanAcross without an NCCL communicator")
	}
	bufs := make([]*resident, 0, len(names))
	for _, n := range names {
		r := s.resident[n]
		if r == nil {
			return fmt.Errorf("cuda: MeanAcross: no resident buffer %q", n)
		}
		bufs = append(bufs, r)
	}
	return nc.mean(s, bufs)
}
