package explain

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocannlgen/ocannlgen/gen"
	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/internal/browser"
	"github.com/ocannlgen/ocannlgen/model"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// browserPage is one page the browser test renders and what it checks
// in the loaded DOM.
type browserPage struct {
	name string
	page *Page
	// shapes are the tensors (class "tensor") or parameters (class
	// "param") the page must show, by name, with the shape inference
	// gave them, found independently of the page's builder.
	shapes map[string]string
	class  string
	// failure is the message the CLI prints for a failing target ("":
	// none); the page must show it and mark the failing line.
	failure string
}

// TestBrowserPages renders the pages of the shared example programs,
// examples/programs (among them the 12-block decoder), the zoo's models
// and a failing program into a temporary directory and loads each in
// headless chromium: no console error and no request outside the file,
// a screenshot that is not blank, the script ran, and the DOM shows the
// shapes inference gives (checked against inference run here), provenance
// entries, and for a failure the CLI's message and the failing line
// marked.
func TestBrowserPages(t *testing.T) {
	chromium := browser.Require(t)
	var pages []browserPage
	files, _ := filepath.Glob("../examples/programs/*.ocl")
	cases, _ := filepath.Glob("../../shared/cases/*.ocl")
	files = append(files, cases...)
	files = append(files, "testdata/mismatch.ocl")
	if len(files) < 8 {
		t.Fatalf("found %d programs", len(files))
	}
	failures := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		bp := browserPage{name: f, page: BuildFile(File{Name: f, Text: string(src)}, Options{Command: "test"}), class: "tensor", shapes: map[string]string{}}
		prog, perr := program.Parse(string(src))
		switch {
		case perr == nil && model.IsModel(prog):
			cm, err := model.Compile(prog)
			if err != nil {
				bp.failure = "?" // a model that fails: its page must show a failure
				break
			}
			bp.class = "param"
			for id, s := range cm.Inferred.Shapes {
				bp.shapes[id] = s.String()
			}
		default:
			g, err := inference.InferSource(string(src))
			if err != nil {
				e, _ := inference.AsError(err)
				if e.Pos.Line > 0 {
					bp.failure = fmt.Sprintf("%s:%d:%d: %s: %s", f, e.Pos.Line, e.Pos.Col, e.Kind, e.Detail())
				} else {
					bp.failure = fmt.Sprintf("%s: %s: %s", f, e.Kind, e.Detail())
				}
				failures++
				break
			}
			for _, n := range g.Named {
				bp.shapes[n.Name] = g.Tensors[n.Tensor].Shape.String()
			}
		}
		pages = append(pages, bp)
	}
	if failures < 2 {
		t.Fatalf("only %d failing programs among the pages", failures)
	}
	srcs, err := gen.Explainables([]string{"../examples/zoo"}, nil, gen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	zoo := browserPage{name: "zoo", page: BuildPackages("examples/zoo", "..", srcs, Options{}), class: "param", shapes: map[string]string{}}
	for _, m := range srcs.Models {
		cm, err := model.Compile(m.Program)
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		for id, s := range cm.Inferred.Shapes {
			zoo.shapes[id] = s.String() // ids repeat across models: the check below takes any
		}
	}
	pages = append(pages, zoo)

	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b, err := browser.Start(ctx, chromium)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	paths := make([]string, len(pages))
	for i, bp := range pages {
		paths[i] = filepath.Join(dir, fmt.Sprintf("page%d.html", i))
		var sb strings.Builder
		if err := Render(&sb, bp.page); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(paths[i], []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Two tabs at a time (the browser renders while the other page's
	// screenshot is encoded).
	results := make([]*browser.Result, len(pages))
	errs := make([]error, len(pages))
	next := make(chan int)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for i := range next {
				results[i], errs[i] = b.Load(ctx, paths[i], browser.Options{Width: 1024, Height: 768})
			}
		})
	}
	for i := range pages {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, bp := range pages {
		if errs[i] != nil {
			t.Fatalf("%s: %v", bp.name, errs[i])
		}
		checkPage(t, bp, results[i])
	}
}

func checkPage(t *testing.T, bp browserPage, res *browser.Result) {
	t.Helper()
	for _, m := range res.Errors() {
		t.Errorf("%s: console: %s", bp.name, m)
	}
	if len(res.Requests) > 0 {
		t.Errorf("%s: the page fetched %v", bp.name, res.Requests)
	}
	if browser.Blank(res.Screenshot) {
		t.Errorf("%s: the screenshot is blank", bp.name)
	}
	dom := res.DOM
	if v, _ := browser.BodyAttr(dom, "data-script"); v != "ran" {
		t.Errorf("%s: the page's script did not run", bp.name)
	}
	status, _ := browser.BodyAttr(dom, "data-status")
	root := browser.Parse(dom)
	if bp.failure != "" {
		if status != "error" {
			t.Errorf("%s: status %q for a failing program", bp.name, status)
		}
		f := root.ByID("failure")
		if f == nil {
			t.Errorf("%s: no failure section", bp.name)
			return
		}
		if bp.failure != "?" {
			msgs := f.ByClass("message")
			if len(msgs) == 0 || strings.TrimSpace(msgs[0].Text()) != bp.failure {
				t.Errorf("%s: the failure shows %q, the CLI prints %q", bp.name, textOf(msgs), bp.failure)
			}
		}
		if len(root.ByClass("failing")) == 0 {
			t.Errorf("%s: no failing line marked", bp.name)
		}
		return
	}
	if status != "ok" {
		t.Errorf("%s: status %q", bp.name, status)
	}
	shown := map[string]string{}
	for _, n := range root.ByClass(bp.class) {
		name, _ := n.Attr("data-" + bp.class)
		shape, _ := n.Attr("data-shape")
		shown[name] = shape
		if a, ok := n.Attr("data-aliases"); ok {
			for _, alias := range strings.Fields(a) {
				shown[alias] = shape
			}
		}
	}
	for name, want := range bp.shapes {
		got, ok := shown[name]
		if !ok {
			t.Errorf("%s: no %s row for %s", bp.name, bp.class, name)
		} else if got != want && bp.name != "zoo" {
			t.Errorf("%s: %s shows %q, inference gives %q", bp.name, name, got, want)
		}
	}
	if browser.CountClass(dom, "prov") == 0 && len(bp.shapes) > 0 {
		t.Errorf("%s: no provenance entries", bp.name)
	}
}

func textOf(ns []*browser.Node) string {
	if len(ns) == 0 {
		return ""
	}
	return ns[0].Text()
}
