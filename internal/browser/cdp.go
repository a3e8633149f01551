package browser

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// writeTimeout bounds one write of a command to chromium's pipe.
const writeTimeout = 10 * time.Second

// conn is a minimal DevTools protocol client over chromium's
// --remote-debugging-pipe: chromium reads commands from its fd 3 and writes
// replies and events to its fd 4, each message one JSON object followed by a
// NUL byte. Commands addressed to a page carry the session id that
// Target.attachToTarget (flatten: true) returned.
type conn struct {
	w   io.Writer
	wmu sync.Mutex // serializes writes

	mu       sync.Mutex
	next     int64
	pending  map[int64]chan reply
	handlers map[string]func(method string, params json.RawMessage) // by session id
	readErr  error

	done chan struct{} // closed when the reader stops (chromium closed its end or died)
}

type reply struct {
	result json.RawMessage
	err    error
}

// message is any message chromium writes: a reply (ID set) or an event (Method set).
type message struct {
	ID        int64           `json:"id"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params"`
	Result    json.RawMessage `json:"result"`
	Error     *protoError     `json:"error"`
	SessionID string          `json:"sessionId"`
}

type protoError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data"`
}

func (e *protoError) Error() string {
	if e.Data != "" {
		return fmt.Sprintf("%s (%d): %s", e.Message, e.Code, e.Data)
	}
	return fmt.Sprintf("%s (%d)", e.Message, e.Code)
}

func newConn(w io.Writer, r io.Reader) *conn {
	c := &conn{
		w:        w,
		pending:  map[int64]chan reply{},
		handlers: map[string]func(string, json.RawMessage){},
		done:     make(chan struct{}),
	}
	go c.read(r)
	return c
}

// read dispatches chromium's messages until the pipe closes: a reply to the
// call waiting for it, an event to its session's handler (run on this
// goroutine, so a handler must not wait for a reply; it may send).
func (c *conn) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 1<<20)
	var err error
	for {
		var b []byte
		b, err = br.ReadBytes(0)
		if err != nil {
			break
		}
		var m message
		if json.Unmarshal(b[:len(b)-1], &m) != nil {
			continue // not ours to judge; the call waiting for it times out
		}
		c.mu.Lock()
		if m.ID != 0 {
			ch := c.pending[m.ID]
			delete(c.pending, m.ID)
			c.mu.Unlock()
			if ch != nil {
				if m.Error != nil {
					ch <- reply{err: m.Error}
				} else {
					ch <- reply{result: m.Result}
				}
			}
			continue
		}
		h := c.handlers[m.SessionID]
		c.mu.Unlock()
		if h != nil {
			h(m.Method, m.Params)
		}
	}
	if errors.Is(err, io.EOF) {
		err = errors.New("chromium closed the DevTools pipe")
	}
	c.mu.Lock()
	c.readErr = err
	for id, ch := range c.pending {
		ch <- reply{err: err}
		delete(c.pending, id)
	}
	c.mu.Unlock()
	close(c.done)
}

// send writes one command and returns the channel its reply will arrive on.
func (c *conn) send(session, method string, params any) (chan reply, error) {
	if params == nil {
		params = struct{}{}
	}
	ch := make(chan reply, 1)
	c.mu.Lock()
	if c.readErr != nil {
		err := c.readErr
		c.mu.Unlock()
		return nil, err
	}
	c.next++
	id := c.next
	c.pending[id] = ch
	c.mu.Unlock()
	cmd := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		cmd["sessionId"] = session
	}
	b, err := json.Marshal(cmd)
	if err != nil {
		return nil, err
	}
	c.wmu.Lock()
	if d, ok := c.w.(interface{ SetWriteDeadline(time.Time) error }); ok {
		// A chromium that stops reading cannot block a write for ever.
		_ = d.SetWriteDeadline(time.Now().Add(writeTimeout))
	}
	_, err = c.w.Write(append(b, 0))
	c.wmu.Unlock()
	if err != nil {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return nil, fmt.Errorf("writing %s to chromium: %w", method, err)
	}
	return ch, nil
}

// call sends a command and waits for its reply, decoding the result into
// result when it is not nil.
func (c *conn) call(ctx context.Context, session, method string, params, result any) error {
	ch, err := c.send(session, method, params)
	if err != nil {
		return err
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return fmt.Errorf("%s: %w", method, r.err)
		}
		if result != nil {
			if err := json.Unmarshal(r.result, result); err != nil {
				return fmt.Errorf("%s: decoding the reply: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// handle routes the events of one session to h (nil removes the route).
func (c *conn) handle(session string, h func(method string, params json.RawMessage)) {
	c.mu.Lock()
	if h == nil {
		delete(c.handlers, session)
	} else {
		c.handlers[session] = h
	}
	c.mu.Unlock()
}
