module example.com/host

go 1.26
