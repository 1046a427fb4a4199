package main

// What the suite's scenarios do not reach: DDL statements they never send, and value forms checked
// one by one. Run with `go test ./...`.

import (
	"encoding/json"
	"reflect"
	"sort"
	"testing"
)

// tablesAfter applies the DDLs (schema "s") to a table s.t holding rows, and returns the tables.
func tablesAfter(t *testing.T, keys []string, rows []Row, queries ...string) map[string]*Table {
	t.Helper()
	tables := map[string]*Table{}
	if err := applyDDL(tables, DDL{Schema: "s", Table: "t", Query: "CREATE TABLE `s`.`t` (`id` INT, PRIMARY KEY (`id`)) " +
		"PARTITION BY RANGE (`id`) (PARTITION `p0` VALUES LESS THAN (10), PARTITION `p1` VALUES LESS THAN (20), " +
		"PARTITION `p2` VALUES LESS THAN (MAXVALUE))"}); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		tables["s.t"].put(keys, r)
	}
	for _, q := range queries {
		if err := applyDDL(tables, DDL{Schema: "s", Table: "t", Query: q}); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return tables
}

func ids(tb *Table) []string {
	var out []string
	for _, r := range tb.all() {
		out = append(out, toString(r["id"]))
	}
	sort.Strings(out)
	return out
}

func rowsWithIDs(ids ...string) []Row {
	var out []Row
	for _, id := range ids {
		out = append(out, Row{"id": json.Number(id)})
	}
	return out
}

func TestColumnDDL(t *testing.T) {
	tables := tablesAfter(t, []string{"id"}, rowsWithIDs("1"),
		"ALTER TABLE `t` ADD COLUMN `a` INT DEFAULT -5, ADD `b` DECIMAL(10,2) NOT NULL DEFAULT '1.5'",
		"ALTER TABLE `t` ADD COLUMN (`c` VARCHAR(8) NOT NULL, `d` DATETIME(3) NOT NULL, `e` ENUM('x','y') NOT NULL)",
		"ALTER TABLE `t` ADD `s` SET('a','b','c') DEFAULT 'a,c', ADD `z` SET('a') NOT NULL, ADD `j` JSON NOT NULL",
		"ALTER TABLE `t` ADD COLUMN `f` TIMESTAMP DEFAULT CURRENT_TIMESTAMP, ADD COLUMN `g` BINARY(2) DEFAULT 'a'",
		"ALTER TABLE `t` ADD COLUMN `h` INT DEFAULT NULL COMMENT 'x, y', ADD COLUMN `i` INT AS (`id` + 1) VIRTUAL",
		"ALTER TABLE `t` CHANGE COLUMN `a` `a2` BIGINT, RENAME COLUMN `c` TO `c2`, DROP COLUMN `h`",
		"ALTER TABLE `t` ADD INDEX `ix` (`a2`), DROP INDEX `ix2`, MODIFY COLUMN `b` DECIMAL(12,2)")
	want := Row{"id": json.Number("1"), "a2": json.Number("-5"), "b": "1.50", "c2": "", "d": "0000-00-00 00:00:00.000",
		"e": json.Number("1"), "f": nil, "g": "YQA=", "s": json.Number("5"), "z": json.Number("0"), "j": "null"}
	if got := tables["s.t"].all(); !reflect.DeepEqual(got, []Row{want}) {
		t.Errorf("rows after the column DDLs:\n got %v\nwant %v", got, want)
	}
}

func TestPartitionDDL(t *testing.T) {
	rows := rowsWithIDs("1", "5", "12", "25", "30")
	check := func(name string, tables map[string]*Table, table string, want ...string) {
		t.Helper()
		if got := ids(tables[table]); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %s holds %v, want %v", name, table, got, want)
		}
	}
	check("TRUNCATE PARTITION", tablesAfter(t, []string{"id"}, rows, "ALTER TABLE `s`.`t` TRUNCATE PARTITION `p1`"), "s.t", "1", "25", "30", "5")
	// After DROP PARTITION p0, p1 reaches down to the bottom: truncating it removes 1 and 5 too.
	check("DROP PARTITION", tablesAfter(t, []string{"id"}, rows, "ALTER TABLE `t` DROP PARTITION `p0`",
		"ALTER TABLE `t` TRUNCATE PARTITION `p1`"), "s.t", "25", "30")
	check("REORGANIZE", tablesAfter(t, []string{"id"}, rows,
		"ALTER TABLE `t` REORGANIZE PARTITION `p2` INTO (PARTITION `p2` VALUES LESS THAN (28), PARTITION `p3` VALUES LESS THAN (MAXVALUE))",
		"ALTER TABLE `t` TRUNCATE PARTITION `p3`"), "s.t", "1", "12", "25", "5")
	exchanged := tablesAfter(t, []string{"id"}, rows, "CREATE TABLE `s`.`n` (`id` INT)",
		"ALTER TABLE `t` EXCHANGE PARTITION `p0` WITH TABLE `s`.`n`")
	check("EXCHANGE", exchanged, "s.t", "12", "25", "30")
	check("EXCHANGE", exchanged, "s.n", "1", "5")
	liked := tablesAfter(t, []string{"id"}, rows, "CREATE TABLE `s`.`l` LIKE `s`.`t`")
	if liked["s.l"].Partitions == nil || len(liked["s.l"].Rows) != 0 {
		t.Errorf("CREATE TABLE ... LIKE: want the partitions and no rows, got %+v", liked["s.l"])
	}
}

func TestTableDDL(t *testing.T) {
	// One DDL per table of a RENAME TABLES job, named by its new name: only that pair moves.
	tables := tablesAfter(t, nil, rowsWithIDs("1", "1"), "CREATE TABLE `s`.`u` (`id` INT)")
	if err := applyDDL(tables, DDL{Schema: "o", Table: "t", Query: "RENAME TABLE `s`.`t` TO `o`.`t`, `s`.`u` TO `o`.`u`"}); err != nil {
		t.Fatal(err)
	}
	if tables["o.t"] == nil || len(tables["o.t"].all()) != 2 || tables["s.u"] == nil || tables["s.t"] != nil {
		t.Errorf("RENAME TABLES moved %v", tables)
	}
	tables = tablesAfter(t, nil, rowsWithIDs("1"), "ALTER TABLE `t` RENAME TO `s`.`v`", "TRUNCATE TABLE `s`.`v`")
	if tables["s.v"] == nil || len(tables["s.v"].Rows) != 0 || tables["s.t"] != nil {
		t.Errorf("ALTER TABLE RENAME then TRUNCATE: %v", tables)
	}
	if tables = tablesAfter(t, nil, nil, "DROP DATABASE IF EXISTS `s`"); len(tables) != 0 {
		t.Errorf("DROP DATABASE leaves %v", tables)
	}
}

func TestValues(t *testing.T) {
	for _, c := range []struct {
		mysqlType, text string
		want            any
	}{
		{"bigint unsigned", "18446744073709551615", json.Number("18446744073709551615")},
		{"float", "0.1", json.Number("0.1")},
		{"double", "1000000000000000000000", json.Number("1e+21")},
		{"decimal", "-0.500", "-0.500"},
		{"varbinary", "\u0000\u00ff\u0080a", "AP+AYQ=="},
		{"enum", "2", json.Number("2")},
		{"enum('a','it''s')", "2", "it's"},
		{"set('a','b','c')", "5", "a,c"},
		{"set('a','b')", "0", ""},
		{"timestamp(3)", "2000-01-01 00:00:00.500", "2000-01-01 00:00:00.500"},
	} {
		text := c.text
		if got, err := canonical(c.mysqlType, &text); err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %q: got %#v (%v), want %#v", c.mysqlType, c.text, got, err, c.want)
		}
	}
	if v, _ := canonical("int", nil); v != nil {
		t.Errorf("NULL read as %v", v)
	}
}

// TestReSends: a row event at or below the applied watermark is dropped, a copy of one still waiting
// too, and in a table without key an identical event of the same epoch is kept (two equal rows).
func TestReSends(t *testing.T) {
	var lines []map[string]any
	c := &consumer{topics: map[string]int{"t": 1}, emit: func(v any) { lines = append(lines, v.(map[string]any)) }}
	c.st = state{Watermarks: map[string]uint64{}, Epochs: map[string]int{}, TableTs: map[string]uint64{},
		Tables: map[string]*Table{}}
	row := func(table string, ts uint64, keys ...string) RowEvent {
		return RowEvent{Schema: "s", Table: table, Op: "insert", CommitTs: ts, After: Row{"id": json.Number("1")}, Keys: keys}
	}
	c.queueRow("t/0", row("t", 5))
	c.queueRow("t/0", row("t", 5)) // same epoch, no key: a second equal row
	c.queueRow("t/0", row("k", 6, "id"))
	c.queueRow("t/0", row("k", 6, "id")) // a copy of a waiting event of a keyed table
	c.queueRow("t/0", row("t", 7))
	c.watermark("t/0", 5)
	c.watermark("t/0", 3)          // falls back: ignored, but the partition is re-sending from here
	c.queueRow("t/0", row("t", 5)) // applied already
	c.queueRow("t/0", row("t", 7)) // a later epoch: the copy of a waiting event
	c.watermark("t/0", 7)
	if n, k := len(c.st.Tables["s.t"].all()), len(c.st.Tables["s.k"].all()); n != 3 || k != 1 || len(c.st.Rows) != 0 {
		t.Errorf("want 3 rows in s.t, 1 in s.k and none waiting, got %d, %d and %d waiting", n, k, len(c.st.Rows))
	}
	var kinds []any
	for _, l := range lines {
		kinds = append(kinds, l["type"])
	}
	if want := []any{"txn", "checkpoint", "txn", "txn", "checkpoint"}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("applied log %v, want %v", kinds, want)
	}
}
