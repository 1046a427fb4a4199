package main

// A table as the consumer rebuilds it: rows indexed by the key columns the messages name
// (docs/consumer-rules.md, "Rows are keyed by the key columns the messages name").

import (
	"encoding/json"
	"math/big"
	"slices"
	"sort"
)

type Table struct {
	Schema string `json:"schema"`
	Name   string `json:"name"`
	// Keys are the columns rows are indexed by: the last pkNames seen. Without any, a row is known
	// by its whole image and the table is a multiset (the same row may be there twice).
	Keys       []string         `json:"keys"`
	Rows       map[string][]Row `json:"rows"` // index key -> rows (one, unless the table has no key)
	Partitions *Partitioning    `json:"partitions"`
}

// Partitioning is a RANGE partitioning on one integer column, as the DDL statements declare it.
type Partitioning struct {
	Column string   `json:"column"`
	Names  []string `json:"names"`
	Bounds []string `json:"bounds"` // VALUES LESS THAN of each partition, in order; "MAXVALUE" for the last
}

func newTable(schema, name string) *Table {
	return &Table{Schema: schema, Name: name, Rows: map[string][]Row{}}
}

// indexKey is the JSON text of the key columns' values, or of the whole row without a key.
func indexKey(keys []string, row Row) string {
	var v any = row // json.Marshal sorts a map's keys, so equal images give equal text
	if len(keys) > 0 {
		vals := make([]any, len(keys))
		for i, k := range keys {
			vals[i] = row[k]
		}
		v = vals
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// rekey re-indexes the rows when the messages start naming other key columns (ADD/DROP PRIMARY KEY).
func (t *Table) rekey(keys []string) {
	if !slices.Equal(keys, t.Keys) {
		t.reindex(keys)
	}
}

// reindex indexes every row again under keys; no row is lost, whatever the keys.
func (t *Table) reindex(keys []string) {
	old := t.Rows
	t.Keys, t.Rows = slices.Clone(keys), map[string][]Row{}
	for _, rows := range old {
		for _, r := range rows {
			k := indexKey(t.Keys, r)
			t.Rows[k] = append(t.Rows[k], r)
		}
	}
}

func (t *Table) insert(r Row) {
	k := indexKey(t.Keys, r)
	if len(t.Keys) > 0 {
		t.Rows[k] = []Row{r} // a row with the same key is replaced
	} else {
		t.Rows[k] = append(t.Rows[k], r)
	}
}

// put adds a new image; remove takes an old one out (one copy of it, in a table without key).
func (t *Table) put(keys []string, r Row) {
	t.rekey(keys)
	t.insert(r)
}

func (t *Table) remove(keys []string, r Row) {
	t.rekey(keys)
	k := indexKey(t.Keys, r)
	if rows := t.Rows[k]; len(rows) <= 1 {
		delete(t.Rows, k)
	} else {
		t.Rows[k] = rows[1:] // identical images: any one of them
	}
}

// all returns the rows in index-key order, so that answers are deterministic.
func (t *Table) all() []Row {
	keys := make([]string, 0, len(t.Rows))
	for k := range t.Rows {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []Row
	for _, k := range keys {
		out = append(out, t.Rows[k]...)
	}
	return out
}

// takeRows removes and returns the rows whose partitioning value falls in partition i.
func (t *Table) takeRows(i int) []Row {
	p := t.Partitions
	var taken []Row
	for k, rows := range t.Rows {
		var kept []Row
		for _, r := range rows {
			if p.holds(i, r[p.Column]) {
				taken = append(taken, r)
			} else {
				kept = append(kept, r)
			}
		}
		if len(kept) == 0 {
			delete(t.Rows, k)
		} else {
			t.Rows[k] = kept
		}
	}
	return taken
}

// holds says whether value v falls in partition i: at or above the bound before it, below its own.
func (p *Partitioning) holds(i int, v any) bool {
	if v == nil {
		return i == 0 // MySQL puts NULL below every value
	}
	n, ok := new(big.Int).SetString(toString(v), 10)
	if !ok {
		return false // only integer partitioning values are modelled
	}
	below := func(bound string) bool {
		b, ok := new(big.Int).SetString(bound, 10)
		return !ok || n.Cmp(b) < 0 // !ok: MAXVALUE
	}
	return below(p.Bounds[i]) && (i == 0 || !below(p.Bounds[i-1]))
}

func (p *Partitioning) index(name string) int {
	for i, n := range p.Names {
		if n == name {
			return i
		}
	}
	return -1
}

func toString(v any) string {
	switch x := v.(type) {
	case json.Number:
		return string(x)
	case string:
		return x
	}
	return ""
}
