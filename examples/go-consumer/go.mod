module ticdc-conformance/examples/go-consumer

go 1.21
