package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/ocannlgen/ocannlgen/inference"
)

type inferFlags struct {
	json bool
	file string
}

func parseInferFlags(args []string) (inferFlags, error) {
	var f inferFlags
	for _, a := range args {
		switch {
		case a == "--json" || a == "-json":
			f.json = true
		case a == "-" || !strings.HasPrefix(a, "-"):
			if f.file != "" {
				return f, fmt.Errorf("more than one input file: %q and %q", f.file, a)
			}
			f.file = a
		default:
			return f, fmt.Errorf("unknown flag %q", a)
		}
	}
	if f.file == "" {
		return f, fmt.Errorf("missing input file (use - for standard input)")
	}
	return f, nil
}

func readInput(file string, stdin io.Reader) (string, error) {
	if file == "-" {
		b, err := io.ReadAll(stdin)
		return string(b), err
	}
	b, err := os.ReadFile(file)
	return string(b), err
}

// jsonDim is an int for default/broadcast bases and "N:basis" otherwise.
func jsonDims(ds []inference.Dim) []any {
	out := make([]any, len(ds))
	for i, d := range ds {
		if d.Basis == inference.BasisDefault || d.Basis == inference.BasisBcast {
			out[i] = d.Size
		} else {
			out[i] = fmt.Sprintf("%d:%s", d.Size, d.Basis)
		}
	}
	return out
}

type jsonTensor struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Batch  []any  `json:"batch"`
	Input  []any  `json:"input"`
	Output []any  `json:"output"`
}

type jsonError struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Line    int    `json:"line"`
	Col     int    `json:"col"`
	SpecCol int    `json:"spec_col,omitempty"`
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// reportError prints err as JSON or as `file:line:col: message` and returns 1.
func reportError(err error, file string, asJSON bool, stdout, stderr io.Writer) int {
	e, ok := inference.AsError(err)
	if !ok {
		e = &inference.Error{Kind: inference.KindParse, Msg: err.Error()}
	}
	if asJSON {
		writeJSON(stdout, map[string]any{"error": jsonError{
			Kind: string(e.Kind), Message: e.Detail(), Line: e.Pos.Line, Col: e.Pos.Col, SpecCol: e.SpecCol,
		}})
		return 1
	}
	name := file
	if name == "-" {
		name = "<stdin>"
	}
	msg := e.Detail()
	if e.Pos.Line > 0 {
		fmt.Fprintf(stderr, "%s:%d:%d: %s: %s\n", name, e.Pos.Line, e.Pos.Col, e.Kind, msg)
	} else {
		fmt.Fprintf(stderr, "%s: %s: %s\n", name, e.Kind, msg)
	}
	return 1
}

func runInfer(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f, err := parseInferFlags(args)
	if err != nil {
		fmt.Fprintf(stderr, "ocannlgen infer: %v\n%s", err, usage)
		return 2
	}
	src, err := readInput(f.file, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "ocannlgen infer: %v\n", err)
		return 2
	}
	g, err := inference.InferSource(src)
	if err != nil {
		return reportError(err, f.file, f.json, stdout, stderr)
	}
	if f.json {
		out := struct {
			Tensors []jsonTensor `json:"tensors"`
		}{Tensors: []jsonTensor{}}
		for _, n := range g.Named {
			t := g.Tensors[n.Tensor]
			out.Tensors = append(out.Tensors, jsonTensor{
				Name: n.Name, Kind: n.Kind.String(),
				Batch: jsonDims(t.Shape.Batch), Input: jsonDims(t.Shape.Input), Output: jsonDims(t.Shape.Output),
			})
		}
		writeJSON(stdout, out)
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, n := range g.Named {
		t := g.Tensors[n.Tensor]
		fmt.Fprintf(tw, "%s\t%s\t%s\n", n.Name, n.Kind, t.Shape)
	}
	_ = tw.Flush()
	return 0
}
