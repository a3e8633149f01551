package model

// The generated code imports the runtime; importing it here as well lets
// `go mod tidy` record the requirement before the first generation.
import _ "github.com/ocannlgen/ocannlgen/rt"
