package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ocannlgen/ocannlgen/gen"
)

// isPattern reports whether arg can be a package pattern: a directory
// (".", "./x", "../x", "/abs"), a pattern with "..." or an import path.
// Bare words are not (module-mode import paths of user code always
// contain a dot or a slash), so a mistyped subcommand is reported as such.
func isPattern(arg string) bool {
	return strings.ContainsAny(arg, "./")
}

// runGenerate runs the go:generate driver: `ocannlgen [-check] [-v]
// [-tags=...] [-winograd=off] [-masks=off] [packages]`.
func runGenerate(args []string, stdout, stderr io.Writer) int {
	var opts gen.Options
	verbose := false
	var patterns []string
	for _, a := range args {
		switch {
		case a == "-check" || a == "--check":
			opts.Check = true
		case a == "-v" || a == "--v":
			verbose = true
		case a == "-winograd=off" || a == "--winograd=off":
			opts.NoWinograd = true
		case a == "-winograd=on" || a == "--winograd=on":
			opts.NoWinograd = false
		case a == "-masks=off" || a == "--masks=off":
			opts.NoMaskBlocks = true
		case a == "-masks=on" || a == "--masks=on":
			opts.NoMaskBlocks = false
		case strings.HasPrefix(a, "-tags=") || strings.HasPrefix(a, "--tags="):
			opts.BuildFlags = append(opts.BuildFlags, "-tags="+a[strings.IndexByte(a, '=')+1:])
		case strings.HasPrefix(a, "-"):
			fmt.Fprintf(stderr, "ocannlgen: unknown flag %q\n%s", a, usage)
			return 2
		case !isPattern(a):
			fmt.Fprintf(stderr, "ocannlgen: %q is neither a command nor a package pattern (write ./%s for a directory)\n%s", a, a, usage)
			return 2
		default:
			patterns = append(patterns, a)
		}
	}
	wd, _ := os.Getwd()
	base := gen.ErrorBase(wd, os.Getenv) // see docs/language.md, "Error positions"
	results, err := gen.Generate(patterns, opts)
	status := 0
	if err != nil {
		status = 1
		var el gen.ErrorList
		if errors.As(err, &el) {
			for _, e := range el {
				fmt.Fprintln(stderr, e.Rel(base))
			}
		} else {
			fmt.Fprintf(stderr, "ocannlgen: %v\n", err)
		}
	}
	for _, r := range results {
		for _, w := range r.Warnings {
			fmt.Fprintln(stderr, w.Rel(wd))
		}
		files := []struct {
			path string
			st   gen.Status
		}{{r.File, r.Status}}
		if r.CUDAFile != "" {
			files = append(files, struct {
				path string
				st   gen.Status
			}{r.CUDAFile, r.CUDAStatus})
		}
		for _, f := range files {
			name := f.path
			if rel, err := filepath.Rel(base, name); base != "" && err == nil && !strings.HasPrefix(rel, "..") {
				name = rel
			}
			switch {
			case f.st.OutOfDate():
				fmt.Fprintf(stderr, "%s: %s; run go generate\n", name, f.st)
				status = 1
			case verbose && f.st != gen.Unchanged:
				fmt.Fprintf(stdout, "%s: %s (%d kernels)\n", name, f.st, len(r.Kernels))
			case verbose:
				fmt.Fprintf(stdout, "%s: %s\n", name, f.st)
			}
		}
	}
	return status
}
