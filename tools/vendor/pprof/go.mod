module github.com/google/pprof

go 1.19

require (
	github.com/chzyer/readline v1.5.1
	github.com/ianlancetaylor/demangle v0.0.0-20240312041847-bd984b5ce465
)

require golang.org/x/sys v0.6.0 // indirect
