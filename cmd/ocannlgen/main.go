// Command ocannlgen infers tensor shapes and loop nests of OCANNL-style
// tensor programs and generates specialized Go code for them.
//
// Usage:
//
//	ocannlgen infer [--json] FILE|-   print the inferred shape of every named tensor
//
// See docs/language.md for the program language.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `usage:
  ocannlgen infer [--json] FILE|-   infer and print the shape of every named tensor
`

// run executes the command line and returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "infer":
		return runInfer(args[1:], stdin, stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "ocannlgen: unknown command %q\n%s", args[0], usage)
	return 2
}
