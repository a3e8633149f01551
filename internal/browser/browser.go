// Package browser checks self-contained HTML pages in a real headless
// chromium, for tests: it loads a file:// page, lets its scripts run, and
// returns the serialized DOM, the page's console errors and uncaught
// exceptions, the URLs it tried to fetch from outside the file system, and
// a screenshot of a given viewport size.
//
// It speaks the DevTools protocol to chromium over --remote-debugging-pipe
// (NUL-separated JSON on the child's fds 3 and 4), with the standard library
// only. The command-line alternative (--dump-dom with
// --enable-logging=stderr) logs console.log, console.warn and console.error
// alike as INFO:CONSOLE lines, so it cannot tell an error from a message,
// and needs a second run for a screenshot; the protocol gives each
// message's level and each uncaught exception, and the DOM and the
// screenshot of the same load.
//
// Every call is bounded in time: Start and Load by their context (Load adds
// [DefaultTimeout] when the context has none), Close by a few seconds, after
// which chromium's process group is killed. A Load that fails closes its
// Browser, so no chromium process outlives a failed check.
//
// Tests call [Require] for the chromium path: it skips the test unless
// OCANNLGEN_BROWSER=1 (CI sets it); with it set, a missing chromium
// fails it. The DOM helpers ([Parse], [Node], [HasElement], [TextOf],
// [CountClass], [AttrsOfClass], [BodyAttr]) query the dumped DOM; [Stats]
// and [Blank] judge the screenshot.
package browser

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// DefaultTimeout bounds a Load whose context has no deadline.
const DefaultTimeout = 60 * time.Second

// closeGrace is how long Close waits for chromium to exit after
// Browser.close before it kills the process group (a variable for tests).
var closeGrace = 5 * time.Second

// Names are the commands Find looks for on $PATH, in order.
func Names() []string {
	return []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}
}

// Find returns the chromium to run: $OCANNLGEN_CHROMIUM when set (a path,
// or a name looked up on $PATH), else the first of [Names] on $PATH.
func Find() (string, error) {
	if p := os.Getenv("OCANNLGEN_CHROMIUM"); p != "" {
		path, err := exec.LookPath(p)
		if err != nil {
			return "", fmt.Errorf("OCANNLGEN_CHROMIUM=%s: %w", p, err)
		}
		return path, nil
	}
	for _, name := range Names() {
		if path, err := exec.LookPath(name); err == nil {
			return path, nil
		}
	}
	return "", fmt.Errorf("no chromium on $PATH (looked for %s; set OCANNLGEN_CHROMIUM to a path)", strings.Join(Names(), ", "))
}

// Flags are the command-line flags Start gives chromium, besides
// --user-data-dir (a fresh temporary directory) and --remote-debugging-pipe.
func Flags() []string {
	return []string{
		"--headless=new",
		"--no-sandbox", // CI runs as root, where the sandbox refuses to start
		"--disable-gpu",
		"--disable-dev-shm-usage", // containers' /dev/shm is often 64 MB
		"--no-first-run",
		"--no-default-browser-check",
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-default-apps",
		"--disable-extensions",
		"--disable-sync",
		"--mute-audio",
		"--hide-scrollbars",
		"--force-color-profile=srgb",
		// No network: no host name resolves; Load also refuses every request
		// that is not file:, data:, blob: or about: and reports it.
		"--host-resolver-rules=MAP * ~NOTFOUND",
	}
}

// onStart, when set (by tests), is called with each Browser Start starts.
var onStart func(*Browser)

// markerVar is the environment variable that marks the processes of one
// Browser (its value is the Browser's profile directory, unique).
const markerVar = "OCANNLGEN_BROWSER_RUN"

// Options control one page load.
type Options struct {
	// Width and Height are the viewport (and screenshot) size in CSS
	// pixels at a device scale factor of 1; 0 means 1024 by 768.
	Width, Height int
	// Settle is how long to wait after the load event before the DOM and
	// the screenshot are taken, for pages that work on timers; the load
	// event and two animation frames are always waited for.
	Settle time.Duration
}

// Message is one console message, uncaught exception or browser log entry
// of a page.
type Message struct {
	// Source is "console" (console.log, console.error, ...), "exception"
	// (an uncaught exception or unhandled rejection) or "log" (the
	// browser's own report, such as a resource that failed to load).
	Source string
	// Level is the console call or log level: "log", "info", "warning",
	// "error", "assert", "debug", ...; "error" for an exception.
	Level string
	// Text is the message: the console call's arguments joined by spaces,
	// or the exception's description.
	Text string
	// URL and Line locate it when chromium knows (Line is 1-based; 0 when
	// unknown).
	URL  string
	Line int
}

// String formats m for a test's failure message.
func (m Message) String() string {
	loc := ""
	if m.URL != "" {
		loc = fmt.Sprintf(" (%s:%d)", m.URL, m.Line)
	}
	return fmt.Sprintf("%s %s: %s%s", m.Source, m.Level, m.Text, loc)
}

// IsError reports whether m is an error: an exception, console.error or
// a failed console.assert, or a browser log entry of level error.
func (m Message) IsError() bool {
	return m.Source == "exception" || m.Level == "error" || m.Level == "assert"
}

// Result is what one page load produced.
type Result struct {
	// DOM is the document serialized after its scripts ran, as
	// chromium's --dump-dom writes it: the doctype, a newline, and the
	// root element's outerHTML.
	DOM string
	// Messages are all the page's console messages, exceptions and
	// browser log entries, in the order they arrived.
	Messages []Message
	// Requests are the URLs the page tried to load other than file:,
	// data:, blob: and about: ones; each was refused.
	Requests []string
	// Screenshot is the viewport after the load, Options.Width by
	// Options.Height pixels.
	Screenshot image.Image
	// Elapsed is the time from navigation to the screenshot.
	Elapsed time.Duration
}

// Errors returns the messages that are errors ([Message.IsError]).
func (r *Result) Errors() []Message {
	var errs []Message
	for _, m := range r.Messages {
		if m.IsError() {
			errs = append(errs, m)
		}
	}
	return errs
}

// Browser is one running chromium; its Load calls may run one after the
// other or concurrently, each in a tab of its own.
type Browser struct {
	cmd     *exec.Cmd
	conn    *conn
	dataDir string
	stderr  *tailBuffer
	exited  chan struct{} // closed when cmd.Wait returned

	closeOnce sync.Once
	closeErr  error
}

// Start runs chromium (a path from [Find]) headless with [Flags]; ctx
// bounds the start. The caller must Close the Browser.
func Start(ctx context.Context, chromiumPath string) (*Browser, error) {
	dataDir, err := os.MkdirTemp("", "ocannlgen-chromium-")
	if err != nil {
		return nil, err
	}
	// Our write end is chromium's fd 3 (commands), our read end its fd 4.
	childIn, toChild, err := os.Pipe()
	if err != nil {
		os.RemoveAll(dataDir)
		return nil, err
	}
	fromChild, childOut, err := os.Pipe()
	if err != nil {
		childIn.Close()
		toChild.Close()
		os.RemoveAll(dataDir)
		return nil, err
	}
	args := append(Flags(),
		"--user-data-dir="+dataDir, "--remote-debugging-pipe", "about:blank")
	cmd := exec.Command(chromiumPath, args...)
	cmd.ExtraFiles = []*os.File{childIn, childOut}
	// Every process chromium starts inherits the marker, the crash
	// handlers too, which leave its process group: a test finds leftovers
	// by it (/proc/PID/environ).
	cmd.Env = append(os.Environ(), markerVar+"="+dataDir)
	stderr := &tailBuffer{max: 16 << 10}
	cmd.Stdout = stderr
	cmd.Stderr = stderr
	newGroup(cmd)
	err = cmd.Start()
	childIn.Close()
	childOut.Close()
	if err != nil {
		toChild.Close()
		fromChild.Close()
		os.RemoveAll(dataDir)
		return nil, fmt.Errorf("starting chromium: %w", err)
	}
	b := &Browser{cmd: cmd, dataDir: dataDir, stderr: stderr, exited: make(chan struct{})}
	b.conn = newConn(toChild, fromChild)
	go func() {
		cmd.Wait()
		toChild.Close()
		fromChild.Close()
		close(b.exited)
	}()
	if onStart != nil {
		onStart(b)
	}
	// The first reply shows the pipe works.
	var v struct {
		Product string `json:"product"`
	}
	if err := b.conn.call(ctx, "", "Browser.getVersion", nil, &v); err != nil {
		b.Close()
		return nil, b.wrap(fmt.Errorf("chromium did not answer on the DevTools pipe: %w", err))
	}
	return b, nil
}

// wrap adds the tail of chromium's output to err.
func (b *Browser) wrap(err error) error {
	if tail := strings.TrimSpace(b.stderr.String()); tail != "" {
		return fmt.Errorf("%w\nchromium's output ends with:\n%s", err, tail)
	}
	return err
}

// Close ends chromium: it asks it to close (Browser.close), waits up to 5 s
// for it to exit, kills its process group (chromium's crash handlers, which
// leave the group, exit once chromium is gone), and removes the profile
// directory. It is safe to call more than once.
func (b *Browser) Close() error {
	b.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
		defer cancel()
		if ch, err := b.conn.send("", "Browser.close", nil); err == nil {
			select {
			case <-ch:
			case <-ctx.Done():
			case <-b.exited:
			}
		}
		select {
		case <-b.exited:
		case <-ctx.Done():
		}
		// The group's other processes (renderers, the crash handler) go
		// too, whether chromium exited or not.
		killGroup(b.cmd)
		<-b.exited
		b.closeErr = os.RemoveAll(b.dataDir)
	})
	return b.closeErr
}

// Load starts chromium, loads one page and closes chromium. See
// [Browser.Load].
func Load(ctx context.Context, chromiumPath, htmlPath string, opts Options) (*Result, error) {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	b, err := Start(ctx, chromiumPath)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	return b.Load(ctx, htmlPath, opts)
}

func withDefaultTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, DefaultTimeout)
}

// Load opens the file htmlPath in a new tab of a viewport of opts' size,
// waits for its load event and two animation frames (and opts.Settle), and
// returns the serialized DOM, the messages and refused requests of the
// load, and a screenshot. ctx bounds it (DefaultTimeout when ctx has no
// deadline). A page that does not finish loading in time (a script that
// never returns, say) is an error; so is any failure of chromium, and after
// an error the Browser is closed.
func (b *Browser) Load(ctx context.Context, htmlPath string, opts Options) (res *Result, err error) {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	abs, err := filepath.Abs(htmlPath)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = b.wrap(fmt.Errorf("loading %s: %w", htmlPath, err))
			b.Close()
		}
	}()
	w, h := opts.Width, opts.Height
	if w <= 0 {
		w = 1024
	}
	if h <= 0 {
		h = 768
	}
	c := b.conn

	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := c.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return nil, err
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	if err := c.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached); err != nil {
		return nil, err
	}
	s := attached.SessionID
	p := &page{loaded: make(chan struct{})}
	c.handle(s, func(method string, params json.RawMessage) { p.event(c, s, method, params) })
	defer func() {
		c.handle(s, nil)
		if err == nil {
			err = c.call(ctx, "", "Target.closeTarget", map[string]any{"targetId": target.TargetID}, nil)
		}
	}()

	for _, cmd := range []struct {
		method string
		params any
	}{
		{"Runtime.enable", nil},
		{"Log.enable", nil},
		{"Page.enable", nil},
		{"Fetch.enable", map[string]any{"patterns": []map[string]string{{"urlPattern": "*"}}}},
		{"Emulation.setDeviceMetricsOverride", map[string]any{"width": w, "height": h, "deviceScaleFactor": 1, "mobile": false}},
	} {
		if err := c.call(ctx, s, cmd.method, cmd.params, nil); err != nil {
			return nil, err
		}
	}

	start := time.Now()
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	if err := c.call(ctx, s, "Page.navigate", map[string]any{"url": u.String()}, &nav); err != nil {
		return nil, err
	}
	if nav.ErrorText != "" {
		return nil, fmt.Errorf("navigation failed: %s", nav.ErrorText)
	}
	select {
	case <-p.loaded:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the load event: %w", ctx.Err())
	case <-c.done:
		return nil, errors.New("chromium exited during the load")
	}
	// Two animation frames: the page's first paint is done.
	frames := `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`
	if err := c.call(ctx, s, "Runtime.evaluate", map[string]any{"expression": frames, "awaitPromise": true}, nil); err != nil {
		return nil, err
	}
	if opts.Settle > 0 {
		select {
		case <-time.After(opts.Settle):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	var dom struct {
		Result struct {
			Value string `json:"value"`
		} `json:"result"`
		ExceptionDetails json.RawMessage `json:"exceptionDetails"`
	}
	const serialize = `(document.doctype ? new XMLSerializer().serializeToString(document.doctype) + "\n" : "") + document.documentElement.outerHTML`
	if err := c.call(ctx, s, "Runtime.evaluate", map[string]any{"expression": serialize, "returnByValue": true}, &dom); err != nil {
		return nil, err
	}
	if dom.ExceptionDetails != nil {
		return nil, fmt.Errorf("serializing the DOM: %s", dom.ExceptionDetails)
	}
	var shot struct {
		Data string `json:"data"`
	}
	if err := c.call(ctx, s, "Page.captureScreenshot", map[string]any{"format": "png"}, &shot); err != nil {
		return nil, err
	}
	raw, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		return nil, fmt.Errorf("screenshot: %w", err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("screenshot: %w", err)
	}
	elapsed := time.Since(start)

	p.mu.Lock()
	defer p.mu.Unlock()
	return &Result{
		DOM:        dom.Result.Value,
		Messages:   append([]Message(nil), p.messages...),
		Requests:   append([]string(nil), p.requests...),
		Screenshot: img,
		Elapsed:    elapsed,
	}, nil
}

// page collects one tab's events.
type page struct {
	mu         sync.Mutex
	messages   []Message
	requests   []string
	loaded     chan struct{}
	loadedOnce sync.Once
}

// remoteObject is the part of a DevTools RemoteObject a message needs.
type remoteObject struct {
	Type        string          `json:"type"`
	Value       json.RawMessage `json:"value"`
	Description string          `json:"description"`
}

func (o remoteObject) text() string {
	if o.Type == "string" {
		var s string
		if json.Unmarshal(o.Value, &s) == nil {
			return s
		}
	}
	if o.Description != "" {
		return o.Description
	}
	if len(o.Value) > 0 {
		return string(o.Value)
	}
	return o.Type
}

type callFrame struct {
	URL        string `json:"url"`
	LineNumber int    `json:"lineNumber"` // 0-based
}

func (p *page) add(m Message) {
	p.mu.Lock()
	p.messages = append(p.messages, m)
	p.mu.Unlock()
}

// event handles one event of the tab's session (on the reader goroutine).
func (p *page) event(c *conn, session, method string, params json.RawMessage) {
	switch method {
	case "Page.loadEventFired":
		p.loadedOnce.Do(func() { close(p.loaded) })
	case "Runtime.consoleAPICalled":
		var e struct {
			Type       string         `json:"type"`
			Args       []remoteObject `json:"args"`
			StackTrace *struct {
				CallFrames []callFrame `json:"callFrames"`
			} `json:"stackTrace"`
		}
		if json.Unmarshal(params, &e) != nil {
			return
		}
		parts := make([]string, len(e.Args))
		for i, a := range e.Args {
			parts[i] = a.text()
		}
		m := Message{Source: "console", Level: e.Type, Text: strings.Join(parts, " ")}
		if e.Type == "assert" && m.Text == "" {
			m.Text = "console.assert failed"
		}
		if e.StackTrace != nil && len(e.StackTrace.CallFrames) > 0 {
			m.URL = e.StackTrace.CallFrames[0].URL
			m.Line = e.StackTrace.CallFrames[0].LineNumber + 1
		}
		p.add(m)
	case "Runtime.exceptionThrown":
		var e struct {
			ExceptionDetails struct {
				Text       string        `json:"text"`
				URL        string        `json:"url"`
				LineNumber int           `json:"lineNumber"`
				Exception  *remoteObject `json:"exception"`
			} `json:"exceptionDetails"`
		}
		if json.Unmarshal(params, &e) != nil {
			return
		}
		d := e.ExceptionDetails
		text := d.Text
		if d.Exception != nil {
			text += " " + d.Exception.text()
		}
		p.add(Message{Source: "exception", Level: "error", Text: text, URL: d.URL, Line: d.LineNumber + 1})
	case "Log.entryAdded":
		var e struct {
			Entry struct {
				Level      string `json:"level"`
				Text       string `json:"text"`
				URL        string `json:"url"`
				LineNumber int    `json:"lineNumber"`
			} `json:"entry"`
		}
		if json.Unmarshal(params, &e) != nil {
			return
		}
		en := e.Entry
		p.add(Message{Source: "log", Level: en.Level, Text: en.Text, URL: en.URL, Line: en.LineNumber + 1})
	case "Fetch.requestPaused":
		var e struct {
			RequestID string `json:"requestId"`
			Request   struct {
				URL string `json:"url"`
			} `json:"request"`
		}
		if json.Unmarshal(params, &e) != nil {
			return
		}
		scheme, _, _ := strings.Cut(e.Request.URL, ":")
		switch strings.ToLower(scheme) {
		case "file", "data", "blob", "about":
			c.send(session, "Fetch.continueRequest", map[string]any{"requestId": e.RequestID})
		default:
			p.mu.Lock()
			p.requests = append(p.requests, e.Request.URL)
			p.mu.Unlock()
			c.send(session, "Fetch.failRequest", map[string]any{"requestId": e.RequestID, "errorReason": "BlockedByClient"})
		}
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	t.mu.Unlock()
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
