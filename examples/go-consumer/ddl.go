package main

// What a DDL does to the rebuilt tables (docs/consumer-rules.md, "What a DDL does to rows"). TiCDC
// sends no row events for rows a DDL removes or moves, so the effect is read from the statement
// (Canal-JSON "sql"): a small tokenizer and a parser for the statements that touch rows. Anything
// else (indexes, comments, charsets, MODIFY COLUMN, SET DEFAULT, ...) changes no row.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"strconv"
	"strings"
)

// contentCompatible is set from the header: then ENUM/SET travel as member names (spec 003).
var contentCompatible bool

type token struct {
	text   string
	quoted bool // a `quoted` identifier or a 'string': never a keyword
}

// tokenize splits a statement into words, `identifiers`, 'strings', numbers and punctuation.
func tokenize(sql string) []token {
	var toks []token
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '`' || c == '\'' || c == '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(sql); j++ {
				if sql[j] == '\\' && c != '`' && j+1 < len(sql) {
					j++
				} else if sql[j] == c {
					if j+1 < len(sql) && sql[j+1] == c { // a doubled quote is the quote itself
						j++
					} else {
						break
					}
				}
				b.WriteByte(sql[j])
			}
			toks = append(toks, token{text: b.String(), quoted: true})
			i = j + 1
		case isWordByte(c):
			j := i
			for j < len(sql) && (isWordByte(sql[j]) || sql[j] == '.' && j > i && isDigit(sql[i])) {
				j++
			}
			toks = append(toks, token{text: sql[i:j]})
			i = j
		default:
			toks = append(toks, token{text: string(c)})
			i++
		}
	}
	return toks
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isWordByte(c byte) bool {
	return c == '_' || c == '$' || isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'z' || c >= 0x80
}

type parser struct {
	toks   []token
	pos    int
	schema string // the message's database: the schema of an unqualified table name
}

func (p *parser) peek() token {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return token{}
}

// accept consumes the keywords if the statement continues with all of them.
func (p *parser) accept(words ...string) bool {
	for i, w := range words {
		if p.pos+i >= len(p.toks) || p.toks[p.pos+i].quoted || !strings.EqualFold(p.toks[p.pos+i].text, w) {
			return false
		}
	}
	p.pos += len(words)
	return true
}

func (p *parser) next() string {
	t := p.peek()
	p.pos++
	return t.text
}

// tableName reads `schema`.`table` or `table`, and returns the key of Table maps.
func (p *parser) tableName() string {
	name := p.next()
	if p.accept(".") {
		return name + "." + p.next()
	}
	return p.schema + "." + name
}

// names reads `a`, `b`, ... (partition names).
func (p *parser) names() []string {
	out := []string{p.next()}
	for p.accept(",") {
		out = append(out, p.next())
	}
	return out
}

// skip moves past the rest of one clause: up to a comma or a closing parenthesis at depth 0.
func (p *parser) skip() {
	for depth := 0; p.pos < len(p.toks); p.pos++ {
		t := p.peek()
		if !t.quoted && (t.text == "," || t.text == ")") && depth == 0 {
			return
		}
		if !t.quoted && t.text == "(" {
			depth++
		} else if !t.quoted && t.text == ")" {
			depth--
		}
	}
}

// applyDDL changes the tables as the DDL changed upstream's.
func applyDDL(tables map[string]*Table, d DDL) error {
	p := &parser{toks: tokenize(d.Query), schema: d.Schema}
	switch {
	case p.accept("CREATE", "DATABASE") || p.accept("CREATE", "SCHEMA"):
		return nil
	case p.accept("DROP", "DATABASE") || p.accept("DROP", "SCHEMA"):
		p.accept("IF", "EXISTS")
		schema := p.next()
		for key, t := range tables {
			if t.Schema == schema {
				delete(tables, key)
			}
		}
	case p.accept("CREATE", "TABLE"):
		ifNotExists := p.accept("IF", "NOT", "EXISTS")
		key := p.tableName()
		if ifNotExists && tables[key] != nil {
			return nil
		}
		t := newTable(splitKey(key))
		if p.accept("LIKE") || p.accept("(", "LIKE") { // the other table's partitions, no rows
			if other := tables[p.tableName()]; other != nil && other.Partitions != nil {
				copied := *other.Partitions
				t.Partitions = &copied
			}
		} else {
			t.Partitions = p.findPartitionBy()
		}
		tables[key] = t
	case p.accept("DROP", "TABLE"):
		p.accept("IF", "EXISTS")
		delete(tables, p.tableName())
		for p.accept(",") {
			delete(tables, p.tableName())
		}
	case p.accept("TRUNCATE"):
		p.accept("TABLE")
		if t := tables[p.tableName()]; t != nil {
			t.Rows = map[string][]Row{}
		}
	case p.accept("RENAME", "TABLE"):
		// One DDL per table of a RENAME TABLES job; if its statement names several, take the pair
		// that ends at the table the message names.
		type pair struct{ from, to string }
		var pairs []pair
		for {
			from := p.tableName()
			p.accept("TO")
			pairs = append(pairs, pair{from, p.tableName()})
			if !p.accept(",") {
				break
			}
		}
		for _, pr := range pairs {
			if len(pairs) == 1 || pr.to == d.Schema+"."+d.Table {
				rename(tables, pr.from, pr.to)
			}
		}
	case p.accept("ALTER", "TABLE"):
		key := p.tableName()
		for p.pos < len(p.toks) {
			if err := p.alterSpec(tables, key); err != nil {
				return err
			}
			p.skip()
			if !p.accept(",") {
				p.pos++ // a stray ')': step over it, so that the loop always moves on
			}
		}
	default:
		return fmt.Errorf("not a statement that changes rows")
	}
	return nil
}

func splitKey(key string) (string, string) {
	schema, name, _ := strings.Cut(key, ".")
	return schema, name
}

func rename(tables map[string]*Table, from, to string) {
	if t := tables[from]; t != nil {
		delete(tables, from)
		t.Schema, t.Name = splitKey(to)
		tables[to] = t
	}
}

// alterSpec applies one clause of ALTER TABLE.
func (p *parser) alterSpec(tables map[string]*Table, key string) error {
	t := tables[key]
	if t == nil {
		t = newTable(splitKey(key))
		tables[key] = t
	}
	switch {
	case p.accept("ADD", "PARTITION"):
		if t.Partitions == nil {
			return fmt.Errorf("ADD PARTITION on %s, whose partitioning was never seen", key)
		}
		p.accept("(")
		p.partitionDefs(t.Partitions)
	case p.accept("ADD", "COLUMN") || p.implicitColumn("ADD"):
		if p.accept("(") { // ADD COLUMN (a INT, b INT)
			for {
				p.addColumn(t)
				p.skip()
				if !p.accept(",") {
					break
				}
			}
			p.accept(")")
		} else {
			p.addColumn(t)
		}
	case p.accept("DROP", "PARTITION") || p.accept("TRUNCATE", "PARTITION"):
		drop := strings.EqualFold(p.toks[p.pos-2].text, "DROP")
		if t.Partitions == nil {
			return fmt.Errorf("partition DDL on %s, whose partitioning was never seen", key)
		}
		for _, name := range p.names() {
			i := t.Partitions.index(name)
			if i < 0 {
				return fmt.Errorf("%s has no partition %s", key, name)
			}
			t.takeRows(i)
			if drop { // the next partition's range grows down to the one before
				t.Partitions.Names = append(t.Partitions.Names[:i:i], t.Partitions.Names[i+1:]...)
				t.Partitions.Bounds = append(t.Partitions.Bounds[:i:i], t.Partitions.Bounds[i+1:]...)
			}
		}
	case p.accept("EXCHANGE", "PARTITION"):
		name := p.next()
		p.accept("WITH", "TABLE")
		other := tables[p.tableName()]
		i := -1
		if t.Partitions != nil {
			i = t.Partitions.index(name)
		}
		if other == nil || i < 0 {
			return fmt.Errorf("EXCHANGE PARTITION %s of %s: partition or table unknown", name, key)
		}
		moved, incoming := t.takeRows(i), other.all()
		other.Rows = map[string][]Row{}
		for _, r := range moved {
			other.insert(r)
		}
		for _, r := range incoming {
			t.insert(r)
		}
	case p.accept("DROP", "COLUMN") || p.implicitColumn("DROP"):
		col := p.next()
		t.eachRow(func(r Row) { delete(r, col) })
	case p.accept("CHANGE"), p.accept("RENAME", "COLUMN"):
		p.accept("COLUMN")
		from := p.next()
		p.accept("TO")
		to := p.next()
		t.eachRow(func(r Row) { r[to] = r[from]; delete(r, from) })
	case p.accept("RENAME", "INDEX") || p.accept("RENAME", "KEY"): // no row changes
	case p.accept("RENAME", "TO") || p.accept("RENAME", "AS") || p.accept("RENAME"):
		rename(tables, key, p.tableName())
	case p.accept("REMOVE", "PARTITIONING"):
		t.Partitions = nil
	case p.accept("PARTITION", "BY"):
		p.pos -= 2
		t.Partitions = p.findPartitionBy()
	case p.accept("REORGANIZE", "PARTITION"):
		if t.Partitions == nil {
			return fmt.Errorf("REORGANIZE PARTITION on %s, whose partitioning was never seen", key)
		}
		// The new definitions cover the same range as the old ones: replace them, rows stay.
		old := p.names()
		first := t.Partitions.index(old[0])
		last := t.Partitions.index(old[len(old)-1])
		p.accept("INTO")
		p.accept("(")
		repl := &Partitioning{Column: t.Partitions.Column}
		p.partitionDefs(repl)
		if first < 0 || last < first {
			return fmt.Errorf("REORGANIZE PARTITION of %s names unknown partitions", key)
		}
		pt := t.Partitions
		pt.Names = append(append(append([]string{}, pt.Names[:first]...), repl.Names...), pt.Names[last+1:]...)
		pt.Bounds = append(append(append([]string{}, pt.Bounds[:first]...), repl.Bounds...), pt.Bounds[last+1:]...)
	}
	return nil
}

// implicitColumn accepts "ADD `c` INT" or "DROP `c`" (COLUMN left out), but not a clause on an
// index, key or constraint.
func (p *parser) implicitColumn(verb string) bool {
	next := p.pos + 1
	if next >= len(p.toks) || !p.accept(verb) {
		return false
	}
	word := strings.ToUpper(p.toks[next].text)
	if !p.toks[next].quoted && strings.Contains(" INDEX KEY PRIMARY UNIQUE CONSTRAINT FULLTEXT SPATIAL FOREIGN CHECK ", " "+word+" ") {
		p.pos--
		return false
	}
	return true
}

func (t *Table) eachRow(f func(Row)) {
	for _, rows := range t.Rows {
		for _, r := range rows {
			f(r)
		}
	}
	t.reindex(nil) // images changed: index them whole until the next event names the key columns
}

// findPartitionBy reads "PARTITION BY RANGE (`col`) (PARTITION p VALUES LESS THAN (n), ...)"
// wherever it is in the statement; other partitionings are not modelled (nil).
func (p *parser) findPartitionBy() *Partitioning {
	for ; p.pos < len(p.toks); p.pos++ {
		if p.accept("PARTITION", "BY", "RANGE", "(") {
			part := &Partitioning{Column: p.next()}
			if !p.accept(")") || !p.accept("(") {
				return nil // an expression, not a bare column
			}
			p.partitionDefs(part)
			return part
		}
	}
	return nil
}

// partitionDefs reads "PARTITION p VALUES LESS THAN (n|MAXVALUE), ...)" into part.
func (p *parser) partitionDefs(part *Partitioning) {
	for p.accept("PARTITION") {
		name := p.next()
		p.accept("VALUES", "LESS", "THAN")
		p.accept("(")
		bound := p.next()
		if bound == "-" {
			bound += p.next()
		}
		part.Names, part.Bounds = append(part.Names, name), append(part.Bounds, strings.ToUpper(bound))
		p.skip()
		p.accept(")")
		p.skip()
		if !p.accept(",") {
			break
		}
	}
}

// addColumn reads one column definition and gives every existing row the column's value: its
// DEFAULT, NULL without one, the type's zero value for NOT NULL without one.
func (p *parser) addColumn(t *Table) {
	name := p.next()
	typ := strings.ToLower(p.next())
	var args []string
	if p.accept("(") {
		for p.pos < len(p.toks) && !p.accept(")") {
			if tok := p.next(); tok != "," {
				args = append(args, tok)
			}
		}
	}
	var value any
	notNull, known := false, true
	for p.pos < len(p.toks) && (p.peek().quoted || p.peek().text != "," && p.peek().text != ")") {
		switch {
		case p.accept("NOT", "NULL"):
			notNull = true
		case p.accept("AS") || p.accept("GENERATED"):
			return // a generated column: its value is computed, and a virtual one never reaches a consumer
		case p.accept("DEFAULT"):
			neg := p.accept("-")
			tok := p.peek()
			p.pos++
			switch {
			case !tok.quoted && strings.EqualFold(tok.text, "NULL"):
				value = nil
			case !tok.quoted && (tok.text == "" || !isDigit(tok.text[0])): // NOW(), CURRENT_TIMESTAMP, (expr)
				known = false
				p.skip()
			case neg:
				value = defaultValue(typ, args, "-"+tok.text)
			default:
				value = defaultValue(typ, args, tok.text)
			}
			continue
		default:
			p.pos++
		}
	}
	if !known {
		fmt.Fprintf(os.Stderr, "go-consumer: %s.%s.%s: a DEFAULT expression cannot be known; existing rows get NULL\n", t.Schema, t.Name, name)
	} else if value == nil && notNull {
		value = zeroValue(typ, args)
	}
	t.eachRow(func(r Row) { r[name] = value })
}

// defaultValue is a DEFAULT literal in the canonical form of the column's type.
func defaultValue(typ string, args []string, lit string) any {
	switch typ {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint", "year", "bit", "bool", "boolean":
		if v, err := exactInteger(lit); err == nil {
			return v
		}
	case "float", "double", "real":
		if v, err := canonical(typ, &lit); err == nil {
			return v
		}
	case "decimal", "numeric": // exactly the column's scale
		if r, ok := new(big.Rat).SetString(lit); ok {
			return r.FloatString(scale(args))
		}
	case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
		if typ == "binary" && len(args) > 0 { // BINARY(n) pads with zero bytes
			n, _ := strconv.Atoi(args[0])
			lit += strings.Repeat("\x00", max(0, n-len(lit)))
		}
		return base64.StdEncoding.EncodeToString([]byte(lit))
	case "enum", "set":
		if contentCompatible { // the member names travel
			return lit
		}
		var n uint64 // else an ENUM's 1-based member index, a SET's bitmask
		for _, name := range strings.Split(lit, ",") {
			for i, m := range args {
				if m == name && typ == "enum" {
					n = uint64(i + 1)
				} else if m == name {
					n |= 1 << i
				}
			}
		}
		return json.Number(strconv.FormatUint(n, 10))
	}
	return lit
}

// zeroValue is what MySQL gives existing rows for a NOT NULL column without DEFAULT.
func zeroValue(typ string, args []string) any {
	lit := "0"
	switch typ {
	case "date":
		lit = "0000-00-00"
	case "datetime", "timestamp":
		lit = "0000-00-00 00:00:00" + fraction(args)
	case "time":
		lit = "00:00:00" + fraction(args)
	case "enum": // the first member
		lit = strings.Join(args[:min(1, len(args))], "")
	case "set":
		if contentCompatible {
			lit = ""
		}
	case "json":
		lit = "null"
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
		lit = ""
	}
	return defaultValue(typ, args, lit)
}

func scale(args []string) int {
	if len(args) < 2 {
		return 0
	}
	s, _ := strconv.Atoi(args[1])
	return s
}

// fraction is the zero fraction TiDB prints for a temporal column of fsp args[0].
func fraction(args []string) string {
	if len(args) == 0 || args[0] == "0" {
		return ""
	}
	n, _ := strconv.Atoi(args[0])
	return "." + strings.Repeat("0", n)
}
