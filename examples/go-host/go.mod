module example.com/go-host

go 1.19
