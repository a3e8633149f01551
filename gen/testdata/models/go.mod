module example.com/models

go 1.26

require github.com/ocannlgen/ocannlgen v0.0.0
