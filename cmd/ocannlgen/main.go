// Command ocannlgen infers tensor shapes and loop nests of OCANNL-style
// tensor programs and generates specialized Go code for them.
//
// Usage:
//
//	ocannlgen [-check] [-v] [packages]          generate ocannl_gen.go for every package with
//	                                            //ocannl: directives (what //go:generate ocannlgen runs)
//	ocannlgen infer [--json] [--loops] [--schedule] FILE|-
//	                                            print the inferred shape of every named tensor
//	                                            (with --loops every operation's loop nest, with
//	                                            --schedule how the generated code runs each nest)
//	ocannlgen infer --dump=STAGE FILE|-         print the program's state after a named stage of the
//	                                            pipeline (--dump=list lists the stages)
//	ocannlgen run [--json] [--f32] FILE|-      run the program with the reference interpreter
//	ocannlgen explain --html [-o FILE] TARGET   write the explanation page (shapes, provenance,
//	                                            projections, schedules) of a .ocl file or Go package
//	ocannlgen targets                           print every code target's description (tiles,
//	                                            thresholds, costs; package emit/target)
//
// See docs/language.md for the program language and docs/design.md for
// the directives.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ocannlgen/ocannlgen/emit/target"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `usage:
  ocannlgen [-check] [-v] [-winograd=off] [-masks=off] [packages]
                                              generate ocannl_gen.go in every package (default ".")
                                              with //ocannl: directives; -check writes nothing and
                                              exits 1 listing missing or out-of-date files; -v lists
                                              what was written; -winograd=off keeps float32 3x3
                                              convolutions on the direct kernels (not rt/wino);
                                              -masks=off runs contractions over a causal mask whole
                                              (not in diagonal blocks)
  ocannlgen infer [--json] [--loops [--kernels]] [--schedule] [--bf16] FILE|-
                                              infer and print the shape of every named tensor;
                                              --loops adds each operation's projections and loop nest;
                                              --kernels adds which kernel each nest becomes (assembly
                                              micro-kernel shape, blocking and tier, or Go loops);
                                              --schedule adds how the generated code runs each nest
                                              (kernel and tile, Go loop order and mode, parallel split);
                                              --bf16 describes them as //ocannl:model bf16 compiles
                                              them (the contractions on rt/bf16)
  ocannlgen infer --dump=STAGE FILE|-         print the state after one named stage of the pipeline
                                              (parsing, each stage of shape inference, projections,
                                              each lowering pass, a model loss's backward pass) and
                                              stop there; --dump=list lists the stages
  ocannlgen run [--json] [--f32] [--max-mib N] FILE|-
                                              run the program with the reference interpreter
                                              (float64, or float32 with --f32) and print every named tensor;
                                              a program needing more than N MiB (default 4096) is refused
  ocannlgen explain --html [-o FILE] TARGET   write one self-contained HTML page showing every entry's
                                              tensor graph, each shape with where each size came from
                                              (constraint, operation, position, solver stage), each
                                              operation's projections and schedule, the parameters and
                                              the memory total; TARGET is a .ocl file (- for standard
                                              input) or a Go package pattern (its models and annotated
                                              functions), PATTERN#Name for one; -o defaults to
                                              NAME.html (- for standard output). A failing target's
                                              page shows the failure (exit 1)
  ocannlgen targets                           print the description of every code target (its tiles,
                                              thresholds and costs: package emit/target)
`

// run executes the command line and returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return runGenerate(args, stdout, stderr)
	}
	switch args[0] {
	case "infer":
		return runInfer(args[1:], stdin, stdout, stderr)
	case "run":
		return runRun(args[1:], stdin, stdout, stderr)
	case "explain":
		return runExplain(args[1:], stdin, stdout, stderr)
	case "targets":
		if len(args) > 1 {
			fmt.Fprintf(stderr, "ocannlgen targets: takes no arguments\n")
			return 2
		}
		printTargets(stdout)
		return 0
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	if strings.HasPrefix(args[0], "-") || isPattern(args[0]) {
		return runGenerate(args, stdout, stderr)
	}
	fmt.Fprintf(stderr, "ocannlgen: unknown command %q\n%s", args[0], usage)
	return 2
}

// printTargets prints every code target's description, one block each.
func printTargets(w io.Writer) {
	for _, c := range []target.CPU{target.Generic(), target.AVX2(), target.AVX512()} {
		fmt.Fprintf(w, "# %s\n%s\n", c.Name, c)
	}
	g := target.GPU()
	fmt.Fprintf(w, "# %s\n%s", g.Name, g)
}
