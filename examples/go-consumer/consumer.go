package main

// The consumer rules (docs/consumer-rules.md): per-partition watermarks that never move back, the
// global watermark as their minimum, row events and DDLs buffered until the global watermark
// reaches them and then applied in commit-ts order (a DDL as a barrier), re-sends dropped, and the
// whole state made durable in state_dir at each commit so that a restart resumes where it was.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
)

// state is everything the consumer knows; it is saved whole, as JSON, at each commit.
type state struct {
	Offsets        map[string]map[string]int64 `json:"offsets"`    // topic -> partition -> next offset
	Watermarks     map[string]uint64           `json:"watermarks"` // "topic/partition" -> highest watermark
	Epochs         map[string]int              `json:"epochs"`     // "topic/partition" -> re-sends seen
	TableTs        map[string]uint64           `json:"table_ts"`   // "topic/partition/schema.table" -> highest commit ts
	Applied        uint64                      `json:"applied"`    // the global watermark applied so far
	LastCheckpoint *uint64                     `json:"last_checkpoint"`
	Rows           []RowEvent                  `json:"rows"` // row events waiting for the watermark
	DDLs           []DDL                       `json:"ddls"` // DDLs waiting for the watermark, in arrival order
	Tables         map[string]*Table           `json:"tables"`
}

type consumer struct {
	st       state
	topics   map[string]int
	stateDir string
	emit     func(any)
}

const stateFile = "state.json"

// openConsumer starts from the state saved at the last commit, or empty at a first start.
func openConsumer(h header, emit func(any)) (*consumer, error) {
	c := &consumer{topics: h.Topics, stateDir: h.StateDir, emit: emit}
	raw, err := os.ReadFile(filepath.Join(h.StateDir, stateFile))
	switch {
	case os.IsNotExist(err): // nothing committed yet: the suite delivers from start.offsets
		c.st = state{Offsets: h.Start.Offsets, Watermarks: map[string]uint64{}, Epochs: map[string]int{},
			TableTs: map[string]uint64{}, Tables: map[string]*Table{}}
	case err != nil:
		return nil, fmt.Errorf("reading the saved state: %w", err)
	default:
		if err := unmarshalNumbers(raw, &c.st); err != nil {
			return nil, fmt.Errorf("%s is not a saved state: %w", filepath.Join(h.StateDir, stateFile), err)
		}
		// The suite restarts from the offsets last committed, which are the saved state's.
		c.st.Offsets = h.Start.Offsets
	}
	if c.st.Offsets == nil {
		c.st.Offsets = map[string]map[string]int64{}
	}
	return c, nil
}

// save writes the state to a temporary file and renames it over the last one: a crash leaves
// either the old state or the new one, never half of one.
func (c *consumer) save() error {
	raw, err := json.Marshal(&c.st)
	if err != nil {
		return err
	}
	tmp := filepath.Join(c.stateDir, stateFile+".tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err = f.Write(raw); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(c.stateDir, stateFile)); err != nil {
		return err
	}
	if dir, err := os.Open(c.stateDir); err == nil { // make the rename itself durable
		dir.Sync()
		dir.Close()
	}
	return nil
}

// record takes one Kafka record: decode it, buffer what it holds, apply what the watermark allows.
func (c *consumer) record(l line) error {
	part := strconv.Itoa(l.Partition)
	if c.st.Offsets[l.Topic] == nil {
		c.st.Offsets[l.Topic] = map[string]int64{}
	}
	c.st.Offsets[l.Topic][part] = l.Offset + 1 // committed offsets: the next record needed
	if l.Value == nil {
		return nil // a tombstone carries nothing
	}
	value, err := base64.StdEncoding.DecodeString(*l.Value)
	if err != nil {
		return fmt.Errorf("value is not base64: %w", err)
	}
	d, err := decodeCanal(value)
	if err != nil {
		return err
	}
	where := l.Topic + "/" + part
	switch {
	case d.watermark > 0:
		c.watermark(where, d.watermark)
	case d.ddl != nil:
		c.queueDDL(*d.ddl)
	default:
		for _, ev := range d.rows {
			c.queueRow(where, ev)
		}
	}
	return nil
}

// watermark raises a partition's watermark (a lower one is a re-send after a TiCDC restart and is
// ignored: spec 003 "At Least Once") and applies everything up to the new global watermark.
func (c *consumer) watermark(where string, ts uint64) {
	if ts < c.st.Watermarks[where] {
		c.st.Epochs[where]++ // the partition is re-sending: identical events from now on are copies
		return
	}
	c.st.Watermarks[where] = ts
	// The global watermark is the minimum over every partition of every topic: only then has each
	// partition sent everything up to it. A partition that has sent none yet holds it at 0.
	global := ^uint64(0)
	for topic, n := range c.topics {
		for p := 0; p < n; p++ {
			global = min(global, c.st.Watermarks[topic+"/"+strconv.Itoa(p)])
		}
	}
	if global > c.st.Applied {
		c.applyUpTo(global)
	}
}

// queueDDL keeps a DDL once: TiCDC may send it again after a restart (same commit ts and query).
func (c *consumer) queueDDL(d DDL) {
	if d.CommitTs <= c.st.Applied {
		return // applied already
	}
	for _, q := range c.st.DDLs {
		if q == d {
			return
		}
	}
	c.st.DDLs = append(c.st.DDLs, d)
}

// queueRow buffers a row event until the global watermark reaches its commit ts.
func (c *consumer) queueRow(where string, ev RowEvent) {
	if ev.CommitTs <= c.st.Applied {
		return // a re-send of what was applied (spec 003: "you can safely ignore this Event")
	}
	tableKey := where + "/" + ev.Schema + "." + ev.Table
	if ev.CommitTs < c.st.TableTs[tableKey] {
		c.st.Epochs[where]++ // a table's commit ts going back: the partition is re-sending
	}
	c.st.TableTs[tableKey] = max(c.st.TableTs[tableKey], ev.CommitTs)
	ev.Where, ev.Epoch = where, c.st.Epochs[where]
	// A copy of an event still waiting is dropped. For a table without a key two identical events
	// of one transaction are legitimate, so there a copy is one sent again after its partition
	// showed a re-send (a later epoch of the same partition).
	for _, w := range c.st.Rows {
		if w.CommitTs == ev.CommitTs && w.Schema == ev.Schema && w.Table == ev.Table && w.Op == ev.Op &&
			reflect.DeepEqual(w.Before, ev.Before) && reflect.DeepEqual(w.After, ev.After) &&
			(len(ev.Keys) > 0 || (w.Where == ev.Where && w.Epoch < ev.Epoch)) {
			return
		}
	}
	c.st.Rows = append(c.st.Rows, ev)
}

// applyUpTo applies every waiting row event and DDL with commit ts <= w in commit-ts order, one
// transaction per commit ts, each DDL after the rows below it and before those above it, then
// writes the checkpoint.
func (c *consumer) applyUpTo(w uint64) {
	due, waiting := split(c.st.Rows, func(ev RowEvent) bool { return ev.CommitTs <= w })
	ddls, laterDDLs := split(c.st.DDLs, func(d DDL) bool { return d.CommitTs <= w })
	// Stable sorts: the rows of a transaction and the DDLs of one job keep the order they came in.
	sort.SliceStable(due, func(i, j int) bool { return due[i].CommitTs < due[j].CommitTs })
	sort.SliceStable(ddls, func(i, j int) bool { return ddls[i].CommitTs < ddls[j].CommitTs })
	for len(due) > 0 || len(ddls) > 0 {
		if len(ddls) > 0 && (len(due) == 0 || ddls[0].CommitTs < due[0].CommitTs) {
			c.applyDDL(ddls[0])
			ddls = ddls[1:]
			continue
		}
		n := 1
		for n < len(due) && due[n].CommitTs == due[0].CommitTs {
			n++
		}
		c.applyTxn(due[:n])
		due = due[n:]
	}
	c.st.Rows, c.st.DDLs, c.st.Applied = waiting, laterDDLs, w
	c.st.LastCheckpoint = &w
	c.emit(map[string]any{"type": "checkpoint", "ts": w})
}

// applyTxn applies the row events of one commit ts together. The changes of a transaction
// commute: every old image goes first, then every new image arrives, so rows that trade keys
// inside it (a key-changing UPDATE split in a DELETE and an INSERT) end where upstream put them.
func (c *consumer) applyTxn(txn []RowEvent) {
	rows := make([]map[string]any, 0, len(txn))
	for _, ev := range txn {
		if ev.Before != nil {
			c.table(ev.Schema, ev.Table).remove(ev.Keys, ev.Before)
		}
		rows = append(rows, map[string]any{"schema": ev.Schema, "table": ev.Table, "op": ev.Op,
			"before": ev.Before, "after": ev.After}) // a nil Row is written as null
	}
	for _, ev := range txn {
		if ev.After != nil {
			c.table(ev.Schema, ev.Table).put(ev.Keys, ev.After)
		}
	}
	c.emit(map[string]any{"type": "txn", "commit_ts": txn[0].CommitTs, "rows": rows})
}

func (c *consumer) applyDDL(d DDL) {
	if err := applyDDL(c.st.Tables, d); err != nil {
		// A statement this consumer cannot read changes no row; say so where a person will look.
		fmt.Fprintf(os.Stderr, "go-consumer: DDL at commit ts %d (%s) has no row effect here: %v\n", d.CommitTs, d.Query, err)
	}
	c.emit(map[string]any{"type": "ddl", "commit_ts": d.CommitTs, "schema": d.Schema, "table": d.Table, "query": d.Query})
}

// table returns a table, creating it when rows arrive for one whose CREATE was never seen.
func (c *consumer) table(schema, name string) *Table {
	key := schema + "." + name
	if c.st.Tables[key] == nil {
		c.st.Tables[key] = newTable(schema, name)
	}
	return c.st.Tables[key]
}

// emitTables answers "tables": one line per row of every table, a table without rows as null.
func (c *consumer) emitTables() {
	names := make([]string, 0, len(c.st.Tables))
	for name := range c.st.Tables {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t := c.st.Tables[name]
		rows := t.all()
		if len(rows) == 0 {
			c.emit(map[string]any{"type": "row", "schema": t.Schema, "table": t.Name, "row": nil})
		}
		for _, r := range rows {
			c.emit(map[string]any{"type": "row", "schema": t.Schema, "table": t.Name, "row": r})
		}
	}
}

// split divides items into those that are due and the others, each in its order.
func split[T any](items []T, due func(T) bool) (yes, no []T) {
	for _, it := range items {
		if due(it) {
			yes = append(yes, it)
		} else {
			no = append(no, it)
		}
	}
	return yes, no
}

// unmarshalNumbers decodes JSON keeping numbers as json.Number, so integers stay exact.
func unmarshalNumbers(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}
