package main

// Decoding one Canal-JSON message (spec 003, "TiCDC Canal-JSON Protocol") into row events, a DDL
// or a watermark, with every value in the suite's canonical form (docs/architecture.md, "Canonical
// values", as far as docs/fidelity.md says Canal-JSON carries it).

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// canalMessage holds the fields of spec 003 this consumer reads; the others (id, es, ts) are ignored.
type canalMessage struct {
	Database  string               `json:"database"`
	Table     string               `json:"table"`
	PkNames   []string             `json:"pkNames"`
	IsDdl     bool                 `json:"isDdl"`
	Type      string               `json:"type"`
	SQL       string               `json:"sql"`
	MySQLType map[string]string    `json:"mysqlType"`
	Data      []map[string]*string `json:"data"`
	Old       []map[string]*string `json:"old"`
	TiDB      *struct {
		CommitTs           uint64 `json:"commitTs"`
		WatermarkTs        uint64 `json:"watermarkTs"`
		OnlyHandleKey      bool   `json:"onlyHandleKey"`
		ClaimCheckLocation string `json:"claimCheckLocation"`
	} `json:"_tidb"`
}

// Row is one row image: column name -> canonical value (json.Number, string or nil).
type Row map[string]any

// RowEvent is one changed row of a transaction, as it waits for the watermark and is applied.
type RowEvent struct {
	Schema   string   `json:"schema"`
	Table    string   `json:"table"`
	Op       string   `json:"op"` // insert, update or delete
	Before   Row      `json:"before"`
	After    Row      `json:"after"`
	CommitTs uint64   `json:"commit_ts"`
	Keys     []string `json:"keys"`  // pkNames: the columns that identify the row; none = its whole image
	Where    string   `json:"where"` // topic/partition it came from, and that partition's epoch (copies)
	Epoch    int      `json:"epoch"`
}

// DDL is a DDL event: it waits for the watermark and is applied once.
type DDL struct {
	Schema   string `json:"schema"`
	Table    string `json:"table"`
	Query    string `json:"query"`
	CommitTs uint64 `json:"commit_ts"`
}

// decoded is what one message holds: row events, a DDL, or a watermark (watermark > 0).
type decoded struct {
	rows      []RowEvent
	ddl       *DDL
	watermark uint64
}

// decodeCanal reads one Kafka record value.
func decodeCanal(value []byte) (decoded, error) {
	var m canalMessage
	if err := json.Unmarshal(value, &m); err != nil {
		return decoded{}, fmt.Errorf("not a Canal-JSON message: %w", err)
	}
	if m.TiDB == nil {
		return decoded{}, fmt.Errorf("message of type %q has no _tidb field, though enable-tidb-extension is on", m.Type)
	}
	if m.TiDB.OnlyHandleKey || m.TiDB.ClaimCheckLocation != "" {
		return decoded{}, fmt.Errorf("a large-message reference (onlyHandleKey/claimCheckLocation) cannot be resolved by this consumer")
	}
	// Spec 003, "Data resolution on the consumer side": isDdl first, then TIDB_WATERMARK, else DML.
	switch {
	case m.IsDdl:
		return decoded{ddl: &DDL{Schema: m.Database, Table: m.Table, Query: m.SQL, CommitTs: m.TiDB.CommitTs}}, nil
	case m.Type == "TIDB_WATERMARK":
		return decoded{watermark: m.TiDB.WatermarkTs}, nil
	}
	op := map[string]string{"INSERT": "insert", "UPDATE": "update", "DELETE": "delete"}[m.Type]
	if op == "" {
		return decoded{}, fmt.Errorf("unknown DML type %q", m.Type)
	}
	if op == "update" && len(m.Old) != len(m.Data) {
		return decoded{}, fmt.Errorf("UPDATE with %d data rows but %d old rows", len(m.Data), len(m.Old))
	}
	var out decoded
	for i, data := range m.Data {
		image, err := m.image(data, nil)
		if err != nil {
			return decoded{}, err
		}
		ev := RowEvent{Schema: m.Database, Table: m.Table, Op: op, CommitTs: m.TiDB.CommitTs, Keys: m.PkNames}
		switch op {
		case "insert":
			ev.After = image
		case "delete": // since v5.4.0 "old" is null for a delete: the deleted row is in "data"
			ev.Before = image
		case "update":
			// TiCDC's "old" holds every column, but only the changed ones with content-compatible or
			// only-output-updated-columns (spec 003, "Event of Update Type"): the old image is "data"
			// overlaid with "old", which is right in both cases.
			ev.After = image
			if ev.Before, err = m.image(data, m.Old[i]); err != nil {
				return decoded{}, err
			}
		}
		out.rows = append(out.rows, ev)
	}
	return out, nil
}

// image converts one row of "data" (with the columns of "old" over it, if given) to canonical values.
func (m *canalMessage) image(data, old map[string]*string) (Row, error) {
	row := Row{}
	for _, src := range []map[string]*string{data, old} {
		for col, text := range src {
			v, err := canonical(m.MySQLType[col], text)
			if err != nil {
				return nil, fmt.Errorf("column %s.%s.%s (%s): %w", m.Database, m.Table, col, m.MySQLType[col], err)
			}
			row[col] = v
		}
	}
	return row, nil
}

// canonical turns a Canal-JSON value (always a string, or null) into the canonical form, by the
// column's mysqlType. Without content-compatible the type is bare ("int unsigned", "decimal");
// with it, it carries its parameters ("int(10) unsigned", "enum('a','b')").
func canonical(mysqlType string, text *string) (any, error) {
	if text == nil {
		return nil, nil
	}
	s := *text
	base, params, _ := strings.Cut(mysqlType, "(")
	base = strings.ToLower(strings.Fields(base + " x")[0]) // "int unsigned" -> "int"
	switch base {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint", "year", "bit":
		// Integers exactly: BIGINT UNSIGNED reaches 2^64-1, beyond float64 and int64.
		return exactInteger(s)
	case "enum", "set":
		// Spec 003: ENUM travels as its 1-based index (sqlType INTEGER), SET as its bitmask (BIT).
		// With content-compatible the mysqlType lists the members, so the names can be given.
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("not an ENUM index or SET bitmask: %q", s)
		}
		if params == "" {
			return json.Number(s), nil
		}
		return memberNames(base, members(params), n)
	case "float", "double", "real":
		// FLOAT is printed from float32 with the fewest digits that identify it; reading it as a
		// float64 and printing that with the fewest digits keeps exactly what was carried.
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("not a floating-point number: %q", s)
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
	case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
		// Spec 003, "Binary and Blob types": every byte is one character (ISO/IEC 8859-1), so each
		// rune of the decoded JSON string is one byte; the canonical form is base64.
		b := make([]byte, 0, len(s))
		for _, r := range s {
			if r > 0xFF {
				return nil, fmt.Errorf("binary value holds U+%04X, which is no ISO-8859-1 byte", r)
			}
			b = append(b, byte(r))
		}
		return base64.StdEncoding.EncodeToString(b), nil
	}
	// DECIMAL keeps TiDB's print (exactly its scale); text, JSON and temporal values are carried as
	// TiDB prints them (TIMESTAMP in the changefeed's time zone).
	return s, nil
}

// exactInteger checks that s is an integer and keeps its digits: json.Number writes them unchanged.
func exactInteger(s string) (any, error) {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return nil, fmt.Errorf("not an integer: %q", s)
	}
	return json.Number(n.String()), nil
}

// members reads the quoted member names of a mysqlType's parameters (the text after "enum("),
// where a doubled quote stands for the quote itself.
func members(params string) []string {
	var out []string
	for i := 0; i < len(params); i++ {
		if params[i] != '\'' {
			continue
		}
		var b strings.Builder
		for i++; i < len(params); i++ {
			if params[i] == '\'' {
				if i+1 < len(params) && params[i+1] == '\'' { // a doubled quote is the quote itself
					i++
				} else {
					break
				}
			}
			b.WriteByte(params[i])
		}
		out = append(out, b.String())
	}
	return out
}

// memberNames gives an ENUM index (0: the empty invalid value) or a SET bitmask as member names.
func memberNames(kind string, names []string, n uint64) (any, error) {
	if kind == "enum" {
		if n > uint64(len(names)) {
			return nil, fmt.Errorf("ENUM index %d beyond its %d members", n, len(names))
		}
		if n == 0 {
			return "", nil
		}
		return names[n-1], nil
	}
	var set []string
	for i, name := range names {
		if n&(1<<i) != 0 {
			set = append(set, name)
		}
	}
	return strings.Join(set, ","), nil
}
