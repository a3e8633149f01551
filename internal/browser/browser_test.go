package browser

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The browser tests share one chromium (about 1 s to start; a page then
// loads in about 0.5 s). A test that needs a browser of its own (the
// timeout test kills it) starts one.
var shared struct {
	once sync.Once
	b    *Browser
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.b != nil {
		shared.b.Close()
	}
	os.Exit(code)
}

func sharedBrowser(t *testing.T) *Browser {
	t.Helper()
	path := Require(t)
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		shared.b, shared.err = Start(ctx, path)
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.b
}

func load(t *testing.T, page string, opts Options) *Result {
	t.Helper()
	b := sharedBrowser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := b.Load(ctx, filepath.Join("testdata", page), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s loaded in %v", page, r.Elapsed)
	return r
}

func TestBrowserGoodPage(t *testing.T) {
	r := load(t, "good.html", Options{Width: 800, Height: 600})
	if errs := r.Errors(); len(errs) != 0 {
		t.Errorf("errors on the good page: %v", errs)
	}
	if len(r.Requests) != 0 {
		t.Errorf("the good page fetched %v", r.Requests)
	}
	// The console.log is reported, as a message that is not an error.
	want := Message{Source: "console", Level: "log", Text: "good fixture: a log message is not an error"}
	if len(r.Messages) != 1 || r.Messages[0].Source != want.Source || r.Messages[0].Level != want.Level || r.Messages[0].Text != want.Text {
		t.Errorf("messages %v, want only %v", r.Messages, want)
	}

	// The script ran: the attribute it sets and the elements it adds.
	for attr, want := range map[string]string{"data-script": "ran", "data-page": "explain", "data-status": "ok"} {
		if v, ok := BodyAttr(r.DOM, attr); !ok || v != want {
			t.Errorf("body %s = %q (present %v), want %q", attr, v, ok, want)
		}
	}
	if got, ok := TextOf(r.DOM, "added"); got != "3 tensors, 3 provenance entries" {
		t.Errorf("#added: %q (present %v)", got, ok)
	}
	if n := CountClass(r.DOM, "prov"); n != 3 {
		t.Errorf("%d li.prov, want 3 (2 in the file, 1 from the script)", n)
	}
	if got, ok := TextOf(r.DOM, "title"); got != "Shapes of mlp.ocl & friends" {
		t.Errorf("#title: %q (present %v)", got, ok)
	}
	if got := AttrsOfClass(r.DOM, "tensor", "data-tensor"); !reflect.DeepEqual(got, []string{"x", "w1", "y"}) {
		t.Errorf("tensors %q", got)
	}
	if got := AttrsOfClass(r.DOM, "tensor", "data-shape"); !reflect.DeepEqual(got, []string{"batch|8", "8->16", "batch|16"}) {
		t.Errorf("shapes %q", got)
	}
	if !HasElement(r.DOM, "circle", "fill", "#d83b3b") || !HasElement(r.DOM, "svg", "id", "diagram") {
		t.Errorf("the inline SVG is missing from the DOM")
	}

	// The screenshot: the viewport's size, the page's background, and the
	// SVG's two fills drawn (rect 100x60 at (4,4), circle r=30; the page
	// has 16 px margins).
	if b := r.Screenshot.Bounds(); b.Dx() != 800 || b.Dy() != 600 {
		t.Errorf("screenshot %v, want 800x600", b)
	}
	st := Stats(r.Screenshot)
	t.Logf("screenshot: %v", st)
	if Blank(r.Screenshot) || st.Distinct < 50 {
		t.Errorf("the good page's screenshot looks blank: %v", st)
	}
	if want := (color.RGBA64{0xfafa, 0xfafa, 0xfafa, 0xffff}); st.Background != want {
		t.Errorf("background %v, want #fafafa", st.Background)
	}
	blue := countColor(r.Screenshot, 0x3b, 0x7d, 0xd8)
	red := countColor(r.Screenshot, 0xd8, 0x3b, 0x3b)
	if blue < 4000 || red < 2000 { // about 98*58 and pi*29^2 inside the edges
		t.Errorf("SVG fills: %d blue pixels (want ~5700), %d red (want ~2600)", blue, red)
	}
}

// countColor counts img's pixels of the colour #r8g8b8.
func countColor(img image.Image, r8, g8, b8 uint8) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			if c.R == r8 && c.G == g8 && c.B == b8 && c.A == 0xff {
				n++
			}
		}
	}
	return n
}

func TestBrowserThrowIsReported(t *testing.T) {
	r := load(t, "throws.html", Options{})
	errs := r.Errors()
	if len(errs) != 1 {
		t.Fatalf("errors %v, want the one uncaught exception", errs)
	}
	e := errs[0]
	if e.Source != "exception" || !strings.Contains(e.Text, "TypeError: fixture throw: no such tensor") || e.Line != 7 ||
		!strings.HasSuffix(e.URL, "/testdata/throws.html") {
		t.Errorf("exception reported as %v; want a TypeError at throws.html:7", e)
	}
	// The script ran up to the throw and not after.
	if v, _ := BodyAttr(r.DOM, "data-script"); v != "ran" {
		t.Errorf("data-script %q", v)
	}
	if _, ok := BodyAttr(r.DOM, "data-after"); ok {
		t.Errorf("the code after the throw ran")
	}
}

func TestBrowserConsoleErrorIsReported(t *testing.T) {
	r := load(t, "console-error.html", Options{})
	var got []string
	for _, m := range r.Messages {
		got = append(got, m.Source+" "+m.Level+" "+m.Text+" line "+strconv.Itoa(m.Line))
	}
	want := []string{
		"console log fixture log line 7",
		"console warning fixture warning line 8",
		"console error fixture console error: 42 line 9",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("messages\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if errs := r.Errors(); len(errs) != 1 || errs[0].Text != "fixture console error: 42" {
		t.Errorf("errors %v, want only the console.error", errs)
	}
}

func TestBrowserBlankPage(t *testing.T) {
	r := load(t, "blank.html", Options{Width: 640, Height: 480})
	st := Stats(r.Screenshot)
	t.Logf("screenshot: %v", st)
	if !Blank(r.Screenshot) || st.Distinct != 1 || st.Background != (color.RGBA64{0xffff, 0xffff, 0xffff, 0xffff}) {
		t.Errorf("the white page's screenshot is not reported blank and white: %v", st)
	}
	if b := r.Screenshot.Bounds(); b.Dx() != 640 || b.Dy() != 480 {
		t.Errorf("screenshot %v, want 640x480", b)
	}
	if len(r.Messages) != 0 {
		t.Errorf("messages on the blank page: %v", r.Messages)
	}
}

func TestBrowserExternalRequestsRefused(t *testing.T) {
	r := load(t, "external.html", Options{})
	want := []string{"https://cdn.example.com/style.css", "http://198.51.100.7/logo.png"}
	got := append([]string(nil), r.Requests...)
	if !sameSet(got, want) {
		t.Errorf("requests %q, want %q", got, want)
	}
	// Each refused load is also an error the page shows in its console.
	if errs := r.Errors(); len(errs) != 2 {
		t.Errorf("errors %v, want the two failed loads", errs)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		seen[s]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

// The one-shot Load starts and ends a chromium of its own, and its DOM is
// what chromium's own --dump-dom writes for the same page.
func TestBrowserOneShotLoadMatchesDumpDOM(t *testing.T) {
	path := Require(t)
	var marker string
	onStart = func(b *Browser) { marker = b.dataDir }
	defer func() { onStart = nil }()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	r, err := Load(ctx, path, "testdata/good.html", Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("one-shot load (start, load, close): %v", time.Since(start))
	if marker == "" {
		t.Fatal("Load started no Browser through Start")
	}
	checkNoLeftovers(t, marker)
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("the profile directory %s is left behind (%v)", marker, err)
	}

	abs, err := filepath.Abs("testdata/good.html")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, path, "--headless", "--no-sandbox", "--disable-gpu",
		"--user-data-dir="+t.TempDir(), "--dump-dom", "file://"+abs)
	newGroup(cmd)
	cmd.Cancel = func() error { killGroup(cmd); return nil }
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium --dump-dom: %v\n%s", err, tail(stderr.String(), 2000))
	}
	killGroup(cmd)
	if got, want := strings.TrimSpace(r.DOM), strings.TrimSpace(out.String()); got != want {
		t.Errorf("Load's DOM differs from --dump-dom's:\n%s\n---- --dump-dom:\n%s", got, want)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// A page that never finishes loading is an error within the context's
// time, and no chromium process is left behind.
func TestBrowserTimeoutKillsChromium(t *testing.T) {
	path := Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := Start(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	marker := b.dataDir
	if n := leftovers(t, marker); len(n) < 2 {
		t.Fatalf("found %d processes of the running chromium by its marker; the leftover check cannot work", len(n))
	}
	lctx, lcancel := context.WithTimeout(ctx, 2*time.Second)
	defer lcancel()
	start := time.Now()
	_, err = b.Load(lctx, "testdata/hang.html", Options{})
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Fatalf("loading a page that never finishes: err %v, want a deadline error", err)
	}
	if took > 2*time.Second+closeGrace+2*time.Second {
		t.Errorf("the timed-out load returned after %v", took)
	}
	t.Logf("timed out after %v", took)
	checkNoLeftovers(t, marker)
}

// leftovers returns the live processes whose environment holds the marker.
func leftovers(t *testing.T, marker string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, []byte(markerVar+"=")) {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, []byte(markerVar+"=")); ok && string(v) == marker {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// checkNoLeftovers fails when processes of the marker are still alive 3 s
// after their Browser closed (the crash handlers, outside the process
// group, exit on their own once chromium is gone).
func checkNoLeftovers(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		pids := leftovers(t, marker)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var desc []string
			for _, pid := range pids {
				cmd, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
				desc = append(desc, strconv.Itoa(pid)+" "+tail(string(bytes.ReplaceAll(cmd, []byte{0}, []byte(" "))), 120))
			}
			t.Fatalf("chromium processes left behind:\n%s", strings.Join(desc, "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Loads may run concurrently on one Browser, each in its own tab.
func TestBrowserConcurrentLoads(t *testing.T) {
	b := sharedBrowser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pages := []string{"good.html", "throws.html", "console-error.html", "blank.html"}
	results := make([]*Result, len(pages))
	errs := make([]error, len(pages))
	var wg sync.WaitGroup
	for i, p := range pages {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = b.Load(ctx, filepath.Join("testdata", p), Options{Width: 320 + 10*i, Height: 240})
		}()
	}
	wg.Wait()
	wantErrors := []int{0, 1, 1, 0}
	for i, p := range pages {
		if errs[i] != nil {
			t.Fatalf("%s: %v", p, errs[i])
		}
		r := results[i]
		if !strings.Contains(r.DOM, "<title>") || len(r.Errors()) != wantErrors[i] {
			t.Errorf("%s: %d errors (want %d): %v", p, len(r.Errors()), wantErrors[i], r.Errors())
		}
		if w := r.Screenshot.Bounds().Dx(); w != 320+10*i {
			t.Errorf("%s: screenshot %d wide, want %d", p, w, 320+10*i)
		}
		if Blank(r.Screenshot) != (p == "blank.html") {
			t.Errorf("%s: blank %v", p, Blank(r.Screenshot))
		}
	}
	// Each page's DOM is its own.
	if v, _ := TextOf(results[0].DOM, "added"); v != "3 tensors, 3 provenance entries" {
		t.Errorf("good.html's DOM: #added %q", v)
	}
	if _, ok := BodyAttr(results[3].DOM, "data-page"); ok {
		t.Errorf("blank.html's DOM has another page's body")
	}
}
