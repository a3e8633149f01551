//go:build mpi

package mpi

/*
#cgo pkg-config: mpi
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// Open MPI's handles are macros over addresses of globals: cgo reaches
// them through these functions.
static MPI_Datatype ocn_float(void) { return MPI_FLOAT; }
static MPI_Datatype ocn_double(void) { return MPI_DOUBLE; }

// The control messages the ranks exchange on their own communicator
// (a duplicate of MPI_COMM_WORLD) beside the collectives.
enum { OCN_TAG = 0x6f63, OCN_SLOTS = 4 };
enum { OCN_FAILED = 1, OCN_CLOSED = 2, OCN_TIMEOUT = 3, OCN_VERDICT = 4 };

typedef struct {
	int32_t kind, rank;
	int64_t seq;
	char text[240];
} ocn_msg;

// ocn_state is a communicator's MPI state, all of it in C memory: the
// nonblocking collective in flight and its staging buffer may outlive
// the Go call that started them (when a rank gives up waiting), and must
// then never touch Go memory.
typedef struct {
	MPI_Comm comm;
	int rank, size;
	ocn_msg in;            // the posted control receive's buffer
	MPI_Request in_req;
	ocn_msg *out;          // OCN_SLOTS outgoing messages per peer
	MPI_Request *out_req;
	void *stage;           // the collectives' buffer
	size_t cap;
	MPI_Request op;        // the collective in flight
} ocn_state;

// ocn_init initializes MPI unless it is; after MPI_Finalize it returns
// -1 (MPI cannot start again in the process).
static int ocn_init(void) {
	int inited = 0, finalized = 0, provided = 0, rc;
	rc = MPI_Finalized(&finalized);
	if (rc != MPI_SUCCESS) return rc;
	if (finalized) return -1;
	rc = MPI_Initialized(&inited);
	if (rc != MPI_SUCCESS || inited) return rc;
	rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
	if (rc != MPI_SUCCESS) return rc;
	// Errors come back as return codes (each call names itself in Go),
	// not as an abort of the job.
	return MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

static int ocn_post_recv(ocn_state *s) {
	return MPI_Irecv(&s->in, sizeof(ocn_msg), MPI_BYTE, MPI_ANY_SOURCE, OCN_TAG, s->comm, &s->in_req);
}

// ocn_open sets up *ps on a duplicate of MPI_COMM_WORLD; on failure
// *call names the MPI call that failed.
static int ocn_open(ocn_state **ps, const char **call) {
	int rc, i;
	ocn_state *s = calloc(1, sizeof *s);
	*call = "calloc";
	if (!s) return MPI_ERR_NO_MEM;
	*call = "MPI_Comm_dup";
	if ((rc = MPI_Comm_dup(MPI_COMM_WORLD, &s->comm)) != MPI_SUCCESS) { free(s); return rc; }
	*call = "MPI_Comm_set_errhandler";
	if ((rc = MPI_Comm_set_errhandler(s->comm, MPI_ERRORS_RETURN)) != MPI_SUCCESS) return rc;
	*call = "MPI_Comm_rank";
	if ((rc = MPI_Comm_rank(s->comm, &s->rank)) != MPI_SUCCESS) return rc;
	*call = "MPI_Comm_size";
	if ((rc = MPI_Comm_size(s->comm, &s->size)) != MPI_SUCCESS) return rc;
	*call = "calloc";
	s->out = calloc((size_t)s->size * OCN_SLOTS, sizeof(ocn_msg));
	s->out_req = calloc((size_t)s->size * OCN_SLOTS, sizeof(MPI_Request));
	if (!s->out || !s->out_req) return MPI_ERR_NO_MEM;
	for (i = 0; i < s->size * OCN_SLOTS; i++) s->out_req[i] = MPI_REQUEST_NULL;
	s->op = MPI_REQUEST_NULL;
	*call = "MPI_Irecv";
	if ((rc = ocn_post_recv(s)) != MPI_SUCCESS) return rc;
	*ps = s;
	return MPI_SUCCESS;
}

static int ocn_test_recv(ocn_state *s, int *got) {
	return MPI_Test(&s->in_req, got, MPI_STATUS_IGNORE);
}

// ocn_send starts sending a control message to peer in a free slot; *sent
// is 0 when every slot still holds a message in flight (then it is
// dropped).
static int ocn_send(ocn_state *s, int peer, int kind, int64_t seq, const char *text, int len, int *sent) {
	int i, done, rc;
	*sent = 0;
	for (i = peer * OCN_SLOTS; i < (peer + 1) * OCN_SLOTS; i++) {
		done = 1;
		if (s->out_req[i] != MPI_REQUEST_NULL && (rc = MPI_Test(&s->out_req[i], &done, MPI_STATUS_IGNORE)) != MPI_SUCCESS) return rc;
		if (!done) continue;
		memset(&s->out[i], 0, sizeof(ocn_msg));
		s->out[i].kind = kind;
		s->out[i].rank = s->rank;
		s->out[i].seq = seq;
		if (len > (int)sizeof(s->out[i].text) - 1) len = sizeof(s->out[i].text) - 1;
		if (len > 0) memcpy(s->out[i].text, text, len);
		*sent = 1;
		return MPI_Isend(&s->out[i], sizeof(ocn_msg), MPI_BYTE, peer, OCN_TAG, s->comm, &s->out_req[i]);
	}
	return MPI_SUCCESS;
}

static int ocn_test_sends(ocn_state *s, int *done) {
	return MPI_Testall(s->size * OCN_SLOTS, s->out_req, done, MPI_STATUSES_IGNORE);
}

static int ocn_stage(ocn_state *s, size_t bytes) {
	void *p;
	if (bytes <= s->cap) return MPI_SUCCESS;
	p = realloc(s->stage, bytes);
	if (!p) return MPI_ERR_NO_MEM;
	s->stage = p;
	s->cap = bytes;
	return MPI_SUCCESS;
}

// ocn_ireduce sums n values of the staging buffer into rank 0's, in
// MPI's fixed order.
static int ocn_ireduce(ocn_state *s, int n, MPI_Datatype t) {
	if (s->rank == 0) return MPI_Ireduce(MPI_IN_PLACE, s->stage, n, t, MPI_SUM, 0, s->comm, &s->op);
	return MPI_Ireduce(s->stage, NULL, n, t, MPI_SUM, 0, s->comm, &s->op);
}

static int ocn_ibcast(ocn_state *s, int n, MPI_Datatype t, int root) {
	return MPI_Ibcast(s->stage, n, t, root, s->comm, &s->op);
}

static int ocn_ibarrier(ocn_state *s) { return MPI_Ibarrier(s->comm, &s->op); }

static int ocn_test_op(ocn_state *s, int *done) {
	return MPI_Test(&s->op, done, MPI_STATUS_IGNORE);
}

static int ocn_cancel_recv(ocn_state *s) {
	int rc;
	if (s->in_req == MPI_REQUEST_NULL) return MPI_SUCCESS;
	if ((rc = MPI_Cancel(&s->in_req)) != MPI_SUCCESS) return rc;
	return MPI_Wait(&s->in_req, MPI_STATUS_IGNORE);
}

// ocn_free releases s, once MPI is finalized (no request in flight).
static void ocn_free(ocn_state *s) {
	free(s->out);
	free(s->out_req);
	free(s->stage);
	free(s);
}

static int ocn_error_string(int code, char *buf, int len) {
	int n = 0;
	if (MPI_Error_string(code, buf, &n) != MPI_SUCCESS || n >= len) return 0;
	return n;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/ocannlgen/ocannlgen/rt/dist"
)

// Available reports whether the package was built with MPI (the mpi
// build tag).
const Available = true

// chunk is the most values one MPI collective moves: longer buffers go
// in chunks (MPI counts are C ints, and the staging buffer stays at most
// 128 MiB).
const chunk = 1 << 24

// comm is a duplicate of MPI_COMM_WORLD.
type comm struct {
	s              *C.ocn_state
	rank, size     int
	timeout, grace time.Duration
	// seq counts the collectives completed (posted to MPI: a collective
	// of an empty buffer, or on one rank, is not one).
	seq int
	// stops[r] is rank r's end, once it said it failed or closed.
	stops []stop
	// failed is the first failure; every later collective returns it.
	failed error
	// stalled: ranks did not answer, so MPI_Finalize, which waits for
	// every rank, must not be called.
	stalled bool
	closed  bool
}

// Open initializes MPI (once per process; the calling goroutine is locked
// to its thread, MPI_THREAD_FUNNELED) and returns a duplicate of
// MPI_COMM_WORLD as a dist.Comm, whose collectives wait at most the
// deadline of OCANNL_DIST_TIMEOUT or DefaultTimeout (see OpenWith).
func Open() (dist.Comm, error) { return OpenWith(Options{}) }

// OpenWith is Open with options: the deadline of every collective
// (Options.Timeout). A collective that another rank does not reach in
// time, or that a rank which failed (Fail) or closed will never reach,
// returns a *dist.RankError naming that rank. Every collective is
// nonblocking MPI (MPI_Ireduce, MPI_Ibcast, MPI_Ibarrier) polled with
// MPI_Test against the deadline, on a staging buffer in C memory (the
// data are copied in and out, so that a collective abandoned at its
// deadline never writes Go memory); the ranks' control messages travel
// beside them.
func OpenWith(o Options) (dist.Comm, error) {
	timeout, err := o.timeout()
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	if rc := C.ocn_init(); rc == -1 {
		return nil, fmt.Errorf("mpi: Open after Close: MPI was finalized, and cannot start again in this process")
	} else if rc != C.MPI_SUCCESS {
		return nil, mpiErr("MPI_Init_thread", rc)
	}
	var s *C.ocn_state
	var call *C.char
	if rc := C.ocn_open(&s, &call); rc != C.MPI_SUCCESS {
		return nil, mpiErr(C.GoString(call), rc)
	}
	c := &comm{s: s, rank: int(s.rank), size: int(s.size), timeout: timeout, grace: grace(timeout), stops: make([]stop, int(s.size))}
	for r := range c.stops {
		c.stops[r].after = -1
	}
	return c, nil
}

func mpiErr(call string, rc C.int) error {
	var buf [C.MPI_MAX_ERROR_STRING]C.char
	n := C.ocn_error_string(rc, &buf[0], C.int(len(buf)))
	msg := C.GoStringN(&buf[0], n)
	if msg == "" {
		msg = fmt.Sprintf("error code %d", int(rc))
	}
	return fmt.Errorf("mpi: %s failed: %s", call, msg)
}

func (c *comm) Rank() int { return c.rank }
func (c *comm) Size() int { return c.size }

// ready returns the error that stops call before it starts: a closed
// communicator, an earlier failure, a rank that closed before this
// collective.
func (c *comm) ready(call string) error {
	switch {
	case c.closed:
		return fmt.Errorf("mpi: %s on a closed communicator", call)
	case c.failed != nil:
		return c.failed
	}
	// The ranks that ended before this collective, the first one's
	// reason (a failure before a departure), and the others with it.
	var gone []int
	reason := ""
	for r, st := range c.stops {
		if st.after < 0 || st.after > c.seq {
			continue
		}
		if reason == "" || strings.HasPrefix(st.reason, "failed") && !strings.HasPrefix(reason, "failed") {
			gone, reason = nil, st.reason
		}
		if st.reason == reason {
			gone = append(gone, r)
		}
	}
	if len(gone) > 0 {
		return c.fail(&dist.RankError{Call: call, Seq: c.seq + 1, Ranks: gone, Reason: reason})
	}
	return nil
}

// fail records err as the communicator's failure and returns it.
func (c *comm) fail(err error) error {
	if c.failed == nil {
		c.failed = err
	}
	return c.failed
}

// stop is a rank's end: after its first after collectives (-1: it has
// not ended) it failed or closed, which reason says.
type stop struct {
	after  int
	reason string
}

// The collectives run one at a time on the staging buffer.
type opKind int

const (
	opReduce opKind = iota
	opBcast
	opBarrier
)

// run starts one nonblocking collective on the staging buffer (n values
// of type t) and waits for it: until it completes, a control message
// says it never will, or its deadline (from start) passes.
func (c *comm) run(call string, op opKind, n int, t C.MPI_Datatype, root int, start time.Time) error {
	if err := c.ready(call); err != nil {
		return err
	}
	var rc C.int
	var name string
	switch op {
	case opReduce:
		rc, name = C.ocn_ireduce(c.s, C.int(n), t), "MPI_Ireduce"
	case opBcast:
		rc, name = C.ocn_ibcast(c.s, C.int(n), t, C.int(root)), "MPI_Ibcast"
	default:
		rc, name = C.ocn_ibarrier(c.s), "MPI_Ibarrier"
	}
	if rc != C.MPI_SUCCESS {
		return c.fail(fmt.Errorf("%s: %w", call, mpiErr(name, rc)))
	}
	deadline, wait := start.Add(c.timeout), time.Now()
	for {
		var done C.int
		if rc := C.ocn_test_op(c.s, &done); rc != C.MPI_SUCCESS {
			return c.diagnose(call, nil, fmt.Errorf("%s: %w", name, mpiErr("MPI_Test", rc)))
		}
		if done != 0 {
			c.seq++
			return nil
		}
		if err := c.poll(call); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return c.diagnose(call, nil, nil)
		}
		pause(wait)
	}
}

// spin is how long a collective in flight is tested without pause: as
// long as ranks that arrive about together need to meet (on a loaded
// machine a peer may be off its CPU for a few milliseconds), and short
// beside a step's compute, which is what one rank waits for another
// when the ranks are unbalanced.
const spin = 5 * time.Millisecond

// pause backs off between two tests of a collective in flight that
// started waiting at start: none for spin (Open MPI's progress yields
// the CPU when the ranks oversubscribe it, mpi_yield_when_idle), then
// sleeps growing by 10µs to 500µs, so that a rank waiting for a slower
// one leaves it the CPU.
func pause(start time.Time) {
	if since := time.Since(start); since >= spin {
		time.Sleep(min(since/spin*10*time.Microsecond, 500*time.Microsecond))
	}
}

// message is a control message received.
type message struct {
	kind, rank, seq int
	text            string
}

// receive returns the next control message, if one has arrived.
func (c *comm) receive() (message, bool, error) {
	var got C.int
	if rc := C.ocn_test_recv(c.s, &got); rc != C.MPI_SUCCESS {
		return message{}, false, mpiErr("MPI_Test", rc)
	}
	if got == 0 {
		return message{}, false, nil
	}
	in := &c.s.in
	m := message{kind: int(in.kind), rank: int(in.rank), seq: int(in.seq), text: C.GoString(&in.text[0])}
	if rc := C.ocn_post_recv(c.s); rc != C.MPI_SUCCESS {
		return m, true, mpiErr("MPI_Irecv", rc)
	}
	if m.rank < 0 || m.rank >= c.size || m.rank == c.rank {
		return m, true, fmt.Errorf("mpi: a control message from rank %d of %d", m.rank, c.size)
	}
	return m, true, nil
}

// poll handles the control messages that have arrived while call waits.
// A rank that gave up waiting (TIMEOUT) starts a diagnosis, unless a
// finding (VERDICT) is among the messages already there: then this rank
// came after the others gave up, and takes their finding.
func (c *comm) poll(call string) error {
	var timeout *message
	for {
		m, ok, err := c.receive()
		if err != nil {
			return c.fail(fmt.Errorf("%s: %w", call, err))
		}
		if !ok {
			break
		}
		switch m.kind {
		case C.OCN_FAILED, C.OCN_CLOSED:
			// A rank that ended after completing this collective lets it
			// complete; the next one fails.
			if c.ended(m) {
				return c.ready(call)
			}
		case C.OCN_TIMEOUT:
			if timeout == nil {
				timeout = &m
			}
		case C.OCN_VERDICT:
			return c.verdict(call, m)
		}
	}
	if timeout != nil {
		return c.diagnose(call, timeout, nil)
	}
	return nil
}

// ended records the end of rank m.rank (a FAILED or CLOSED message), and
// reports whether it came before this collective.
func (c *comm) ended(m message) bool {
	reason := "failed: " + m.text
	if m.kind == C.OCN_CLOSED {
		reason = fmt.Sprintf("closed its communicator after %d collectives", m.seq)
	}
	c.stops[m.rank] = stop{m.seq, reason}
	return m.seq <= c.seq
}

// verdict is the failure another rank found when it gave up waiting for
// this collective: the ranks that did not reach it (this one, perhaps,
// arriving too late).
func (c *comm) verdict(call string, m message) error {
	var ranks []int
	for _, f := range strings.Split(m.text, ",") {
		if r, err := strconv.Atoi(f); err == nil {
			ranks = append(ranks, r)
		}
	}
	reason := fmt.Sprintf("did not reach collective %d within %v (rank %d's finding; dead, stopped, or slower than the deadline: mpi.Options.Timeout, %s)", m.seq, c.timeout, m.rank, TimeoutEnv)
	if len(ranks) == 0 {
		ranks, reason = []int{m.rank}, fmt.Sprintf("gave up waiting for collective %d after %v", m.seq, c.timeout)
	}
	c.stalled = true
	return c.fail(&dist.RankError{Call: call, Seq: c.seq + 1, Ranks: ranks, Reason: reason})
}

// diagnose finds the ranks that did not reach the collective, once this
// rank's deadline has passed (trigger nil) or another rank said its own
// had (trigger): it tells every rank that it has stopped waiting, and
// for the grace period collects the same word from the others; the
// ranks that did not answer are named (and told, in a verdict), and the
// communicator fails.
func (c *comm) diagnose(call string, trigger *message, cause error) error {
	seq := c.seq + 1
	heard := make([]bool, c.size)
	heard[c.rank] = true
	if trigger != nil {
		heard[trigger.rank] = true
	}
	for r, st := range c.stops {
		heard[r] = heard[r] || st.after >= seq // ended after completing this collective
	}
	c.sendAll(C.OCN_TIMEOUT, seq, "")
	end := time.Now().Add(c.grace)
	for !allTrue(heard) && time.Now().Before(end) {
		m, ok, err := c.receive()
		if err != nil {
			cause = err
			break
		}
		if !ok {
			time.Sleep(time.Millisecond)
			continue
		}
		switch m.kind {
		case C.OCN_FAILED, C.OCN_CLOSED:
			if c.ended(m) {
				return c.ready(call) // the cause
			}
			heard[m.rank] = true
		default:
			heard[m.rank] = true
		}
	}
	var missing []int
	var list []string
	for r, h := range heard {
		if !h {
			missing = append(missing, r)
			list = append(list, strconv.Itoa(r))
		}
	}
	c.sendAll(C.OCN_VERDICT, seq, strings.Join(list, ","))
	e := &dist.RankError{Call: call, Seq: seq, Ranks: missing, Err: cause}
	switch {
	case len(missing) > 0:
		e.Reason = fmt.Sprintf("did not reach it within %v (dead, stopped, or slower than the deadline: mpi.Options.Timeout, %s)", c.timeout, TimeoutEnv)
		c.stalled = true
	case trigger != nil:
		e.Ranks = []int{trigger.rank}
		e.Reason = fmt.Sprintf("gave up waiting for it after %v; every rank has reached it since (one was slower than the deadline: mpi.Options.Timeout, %s)", c.timeout, TimeoutEnv)
	default:
		e.Reason = fmt.Sprintf("did not complete within %v though every rank reached it (raise mpi.Options.Timeout, %s)", c.timeout, TimeoutEnv)
	}
	return c.fail(e)
}

func allTrue(b []bool) bool { return !slices.Contains(b, false) }

// sendAll starts sending a control message to every other rank, and
// waits for the sends to complete, at most the grace period; it returns
// the first error.
func (c *comm) sendAll(kind C.int, seq int, text string) error {
	b := []byte(text)
	b = append(b, 0)
	var first error
	for r := range c.size {
		if r == c.rank {
			continue
		}
		var sent C.int
		if rc := C.ocn_send(c.s, C.int(r), kind, C.int64_t(seq), (*C.char)(unsafe.Pointer(&b[0])), C.int(len(b)-1), &sent); rc != C.MPI_SUCCESS && first == nil {
			first = fmt.Errorf("to rank %d: %w", r, mpiErr("MPI_Isend", rc))
		} else if sent == 0 && first == nil {
			first = fmt.Errorf("mpi: a control message to rank %d dropped: the earlier ones are still in flight", r)
		}
	}
	now := time.Now()
	end := now.Add(c.grace)
	for time.Now().Before(end) {
		var done C.int
		if rc := C.ocn_test_sends(c.s, &done); rc != C.MPI_SUCCESS {
			if first == nil {
				first = mpiErr("MPI_Testall", rc)
			}
			break
		}
		if done != 0 {
			break
		}
		pause(now)
	}
	return first
}

// stage makes room for n values of size bytes each in the staging
// buffer and returns it.
func (c *comm) stage(call string, n, size int) (unsafe.Pointer, error) {
	if rc := C.ocn_stage(c.s, C.size_t(n*size)); rc != C.MPI_SUCCESS {
		return nil, c.fail(fmt.Errorf("%s: staging %d bytes: %w", call, n*size, mpiErr("realloc", rc)))
	}
	return c.s.stage, nil
}

// allReduce sums buf across the ranks in chunks: MPI_Ireduce to rank 0 in
// MPI's fixed order, then MPI_Ibcast, so that every rank gets the same
// bits (MPI_Allreduce does not promise that).
func allReduce[T float32 | float64](c *comm, call string, buf []T, t C.MPI_Datatype) error {
	if err := c.ready(call); err != nil || len(buf) == 0 || c.size == 1 {
		return err
	}
	for lo := 0; lo < len(buf); lo += chunk {
		start := time.Now()
		part := buf[lo:min(lo+chunk, len(buf))]
		p, err := c.stage(call, len(part), int(unsafe.Sizeof(part[0])))
		if err != nil {
			return err
		}
		stage := unsafe.Slice((*T)(p), len(part))
		copy(stage, part)
		if err := c.run(call, opReduce, len(part), t, 0, start); err != nil {
			return err
		}
		if err := c.run(call, opBcast, len(part), t, 0, start); err != nil {
			return err
		}
		copy(part, stage)
	}
	return nil
}

// broadcast copies root's buf into every rank's, in chunks.
func broadcast[T float32 | float64](c *comm, call string, buf []T, t C.MPI_Datatype, root int) error {
	if err := c.ready(call); err != nil {
		return err
	}
	if root < 0 || root >= c.size {
		return fmt.Errorf("mpi: %s from rank %d of %d", call, root, c.size)
	}
	if len(buf) == 0 || c.size == 1 {
		return nil
	}
	for lo := 0; lo < len(buf); lo += chunk {
		start := time.Now()
		part := buf[lo:min(lo+chunk, len(buf))]
		p, err := c.stage(call, len(part), int(unsafe.Sizeof(part[0])))
		if err != nil {
			return err
		}
		stage := unsafe.Slice((*T)(p), len(part))
		if c.rank == root {
			copy(stage, part)
		}
		if err := c.run(call, opBcast, len(part), t, root, start); err != nil {
			return err
		}
		if c.rank != root {
			copy(part, stage)
		}
	}
	return nil
}

func (c *comm) AllReduceSum32(buf []float32) error {
	return allReduce(c, "AllReduceSum32", buf, C.ocn_float())
}

func (c *comm) AllReduceSum64(buf []float64) error {
	return allReduce(c, "AllReduceSum64", buf, C.ocn_double())
}

func (c *comm) Broadcast32(buf []float32, root int) error {
	return broadcast(c, "Broadcast32", buf, C.ocn_float(), root)
}

func (c *comm) Broadcast64(buf []float64, root int) error {
	return broadcast(c, "Broadcast64", buf, C.ocn_double(), root)
}

func (c *comm) Barrier() error {
	if err := c.ready("Barrier"); err != nil || c.size == 1 {
		return err
	}
	return c.run("Barrier", opBarrier, 0, C.ocn_double(), 0, time.Now())
}

// Fail tells the other ranks that this one failed with err (its text, up
// to 239 bytes): their collectives return a *dist.RankError naming this
// rank. It waits for the messages to leave at most the grace period.
// After a failure of the communicator itself the others already know
// (or will learn from the rank that failed first), and Fail sends
// nothing.
func (c *comm) Fail(err error) error {
	if c.closed {
		return fmt.Errorf("mpi: Fail on a closed communicator")
	}
	if err == nil {
		err = errors.New("Fail(nil)")
	}
	already := c.failed != nil
	c.fail(fmt.Errorf("mpi: this rank failed: %w", err))
	if already || c.size == 1 {
		return nil
	}
	if e := c.sendAll(C.OCN_FAILED, c.seq, err.Error()); e != nil {
		return fmt.Errorf("mpi: Fail: %w", e)
	}
	return nil
}

// Close finalizes MPI (the process cannot open it again), after telling
// the other ranks how many collectives this one completed: a collective
// of theirs beyond that fails naming this rank instead of waiting for
// it. MPI_Finalize waits for every rank to finalize, so after ranks
// stopped answering (a *dist.RankError for a deadline) Close does not
// call it and returns an error: the process should then exit, and
// mpirun ends the job.
func (c *comm) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	if c.stalled {
		return fmt.Errorf("mpi: Close: MPI_Finalize not called, as it would wait for the ranks that stopped answering (%v): exit the process, and mpirun ends the others", c.failed)
	}
	var first error
	if c.failed == nil && c.size > 1 {
		first = c.sendAll(C.OCN_CLOSED, c.seq, "")
	}
	if rc := C.ocn_cancel_recv(c.s); rc != C.MPI_SUCCESS && first == nil {
		first = mpiErr("MPI_Cancel", rc)
	}
	if rc := C.MPI_Finalize(); rc != C.MPI_SUCCESS {
		return mpiErr("MPI_Finalize", rc)
	}
	C.ocn_free(c.s)
	c.s = nil
	if first != nil {
		return fmt.Errorf("mpi: Close: %w", first)
	}
	return nil
}
