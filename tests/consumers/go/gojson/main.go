// gojson rewrites NDJSON files in place the way a Go consumer prints them: every line is decoded
// with UseNumber, every number that is not an integer literal becomes a float64, and the line is
// encoded again with encoding/json. Go prints a float64 with the fewest digits that identify it and
// without an exponent below 1e21, so 9.223372036854776e+18 becomes 9223372036854776000 and 16777215.0
// becomes 16777215; integer literals stay exactly as they were.
//
// Usage: gojson FILE...
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

func main() {
	for _, path := range os.Args[1:] {
		if err := rewrite(path); err != nil {
			fmt.Fprintf(os.Stderr, "gojson: %s: %v\n", path, err)
			os.Exit(1)
		}
	}
}

func rewrite(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	scanner := bufio.NewScanner(bytes.NewReader(data))
	scanner.Buffer(make([]byte, 1<<20), 1<<30)
	for line := 1; scanner.Scan(); line++ {
		text := scanner.Bytes()
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		decoder := json.NewDecoder(bytes.NewReader(text))
		decoder.UseNumber()
		var value any
		if err := decoder.Decode(&value); err != nil {
			return fmt.Errorf("line %d: %v", line, err)
		}
		converted, err := asGo(value)
		if err != nil {
			return fmt.Errorf("line %d: %v", line, err)
		}
		encoded, err := json.Marshal(converted)
		if err != nil {
			return fmt.Errorf("line %d: %v", line, err)
		}
		out.Write(encoded)
		out.WriteByte('\n')
	}
	if err := scanner.Err(); err != nil {
		return err
	}
	return os.WriteFile(path, out.Bytes(), 0o644)
}

// asGo replaces every non-integer json.Number by the float64 a Go struct field would hold.
func asGo(value any) (any, error) {
	switch v := value.(type) {
	case json.Number:
		if !strings.ContainsAny(string(v), ".eE") {
			return v, nil
		}
		return v.Float64()
	case map[string]any:
		for key, item := range v {
			converted, err := asGo(item)
			if err != nil {
				return nil, err
			}
			v[key] = converted
		}
		return v, nil
	case []any:
		for i, item := range v {
			converted, err := asGo(item)
			if err != nil {
				return nil, err
			}
			v[i] = converted
		}
		return v, nil
	default:
		return v, nil
	}
}
