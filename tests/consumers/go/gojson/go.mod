module gojson

go 1.21
