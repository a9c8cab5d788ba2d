module starter-go

go 1.19
