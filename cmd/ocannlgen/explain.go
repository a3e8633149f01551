package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ocannlgen/ocannlgen/explain"
	"github.com/ocannlgen/ocannlgen/gen"
)

// runExplain is `ocannlgen explain --html [-o FILE] TARGET`: it writes
// the explanation page of a .ocl file (a program or a model), or of the
// models of Go packages (PATTERN, or PATTERN#Model for one model). A
// target whose inference fails still gets its page (showing the
// failure); the command then prints the failure as `infer` does and
// exits 1.
func runExplain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var html bool
	out, target := "", ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--html" || a == "-html":
			html = true
		case a == "-o" || a == "--o":
			if i+1 == len(args) {
				fmt.Fprintf(stderr, "ocannlgen explain: -o needs a file name (- for standard output)\n%s", usage)
				return 2
			}
			i++
			out = args[i]
		case strings.HasPrefix(a, "-o="), strings.HasPrefix(a, "--o="):
			out = a[strings.Index(a, "=")+1:]
		case a != "-" && strings.HasPrefix(a, "-"):
			fmt.Fprintf(stderr, "ocannlgen explain: unknown flag %q\n%s", a, usage)
			return 2
		default:
			if target != "" {
				fmt.Fprintf(stderr, "ocannlgen explain: more than one target: %q and %q\n", target, a)
				return 2
			}
			target = a
		}
	}
	if !html {
		fmt.Fprintf(stderr, "ocannlgen explain: the page is HTML: add --html\n%s", usage)
		return 2
	}
	if target == "" {
		fmt.Fprintf(stderr, "ocannlgen explain: missing target (a .ocl file, - for standard input, or a Go package pattern[#Model])\n%s", usage)
		return 2
	}
	cmd := "ocannlgen explain --html " + target
	var page *explain.Page
	var name string
	if target == "-" || strings.HasSuffix(target, ".ocl") {
		src, err := readInput(target, stdin)
		if err != nil {
			fmt.Fprintf(stderr, "ocannlgen explain: %v\n", err)
			return 2
		}
		page = explain.BuildFile(explain.File{Name: displayName(target), Text: src}, explain.Options{Command: cmd})
		name = strings.TrimSuffix(filepath.Base(target), ".ocl")
		if target == "-" {
			name = "stdin"
		}
	} else {
		pattern, model, _ := strings.Cut(target, "#")
		var only []string
		if model != "" {
			only = []string{model}
		}
		srcs, err := gen.Explainables([]string{pattern}, only, gen.Options{})
		if err != nil {
			fmt.Fprintf(stderr, "ocannlgen explain: %v\n", err)
			return 1
		}
		if len(srcs.Models)+len(srcs.Functions) == 0 {
			fmt.Fprintf(stderr, "ocannlgen explain: no //ocannl:model and no annotated function in %s\n", pattern)
			return 1
		}
		wd, _ := os.Getwd()
		page = explain.BuildPackages(target, wd, srcs, explain.Options{Command: cmd})
		name = model
		if name == "" {
			name = filepath.Base(strings.TrimSuffix(strings.TrimSuffix(pattern, "/..."), "/"))
			if name == "." || name == "" || name == "/" {
				name = "explain"
			}
		}
	}
	var buf bytes.Buffer
	if err := explain.Render(&buf, page); err != nil {
		fmt.Fprintf(stderr, "ocannlgen explain: %v\n", err)
		return 1
	}
	if out == "" {
		out = name + ".html"
	}
	if out == "-" {
		if _, err := stdout.Write(buf.Bytes()); err != nil {
			return 1
		}
	} else {
		if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
			fmt.Fprintf(stderr, "ocannlgen explain: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "wrote %s (%d KiB)\n", out, (buf.Len()+1023)/1024)
	}
	code := 0
	for _, u := range page.Units {
		if f := u.Failure; f != nil {
			fmt.Fprintln(stderr, f.Message)
			code = 1
		}
	}
	return code
}
