module github.com/ocannlgen/ocannlgen

go 1.26
