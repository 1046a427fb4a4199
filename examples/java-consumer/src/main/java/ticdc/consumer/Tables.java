package ticdc.consumer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The replicated tables and what transactions and DDL do to them (docs/consumer-rules.md, "Row
 * events" and "What a DDL does to rows"). TiCDC sends no row event for rows a DDL removes or moves,
 * so TRUNCATE, DROP, RENAME and the partition DDL are applied here from the message and its SQL.
 */
final class Tables {
    /** A backquoted identifier as TiDB prints it in DDL text (`` inside is one backquote). */
    private static final String ID = "`((?:[^`]|``)*)`";
    private static final int CI = Pattern.CASE_INSENSITIVE;
    private static final Pattern RANGE = Pattern.compile("PARTITION\\s+BY\\s+RANGE\\s*(?:COLUMNS\\s*)?\\(\\s*" + ID + "\\s*\\)", CI);
    private static final Pattern DEF = Pattern.compile("PARTITION\\s+" + ID
            + "\\s+VALUES\\s+LESS\\s+THAN\\s*\\(?\\s*(MAXVALUE|[-+]?\\d+)\\s*\\)?", CI);
    private static final Pattern NAME_LIST = Pattern.compile(ID + "(?:\\s*,\\s*" + ID + ")*");
    private static final Pattern ADD_PARTITION = Pattern.compile("\\bADD\\s+PARTITION\\b", CI);
    private static final Pattern DROP_PARTITION = Pattern.compile("\\bDROP\\s+PARTITION\\s+(" + NAME_LIST + ")", CI);
    private static final Pattern TRUNCATE_PARTITION = Pattern.compile("\\bTRUNCATE\\s+PARTITION\\s+(" + NAME_LIST + ")", CI);
    private static final Pattern EXCHANGE = Pattern.compile("\\bEXCHANGE\\s+PARTITION\\s+" + ID
            + "\\s+WITH\\s+TABLE\\s+(?:" + ID + "\\s*\\.\\s*)?" + ID, CI);
    private static final Pattern REORGANIZE = Pattern.compile("\\bREORGANIZE\\s+PARTITION\\s+(" + NAME_LIST + ")\\s+INTO", CI);
    private static final Pattern REMOVE_PARTITIONING = Pattern.compile("\\bREMOVE\\s+PARTITIONING\\b", CI);
    private static final Pattern RENAME_PAIR = Pattern.compile("(?:" + ID + "\\s*\\.\\s*)?" + ID + "\\s+TO\\s+(?:" + ID + "\\s*\\.\\s*)?" + ID, CI);
    private static final Pattern RENAME_COLUMN = Pattern.compile("\\b(?:RENAME\\s+COLUMN\\s+" + ID + "\\s+TO|CHANGE\\s+(?:COLUMN\\s+)?" + ID + ")\\s+" + ID, CI);
    private static final Pattern LIKE = Pattern.compile("\\bLIKE\\s+(?:" + ID + "\\s*\\.\\s*)?" + ID, CI);
    private static final Pattern DROP_DATABASE = Pattern.compile("^\\s*DROP\\s+(?:DATABASE|SCHEMA)\\s+(?:IF\\s+EXISTS\\s+)?" + ID, CI);

    private final Map<String, State.Table> tables;

    Tables(Map<String, State.Table> tables) {
        this.tables = tables;
    }

    static String name(String schema, String table) {
        return schema + "." + table;
    }

    private static String unquote(String id) {
        return id == null ? null : id.replace("``", "`");
    }

    /** Key columns of a tableSchema: the primary key, else a unique index without NULLs, else none. */
    static List<String> keyColumns(JsonNode tableSchema) {
        List<String> unique = null;
        for (JsonNode index : tableSchema.path("indexes")) {
            List<String> cols = new ArrayList<>();
            index.path("columns").forEach(c -> cols.add(c.asText()));
            if (index.path("primary").asBoolean()) {
                return cols;
            }
            if (unique == null && index.path("unique").asBoolean() && !index.path("nullable").asBoolean(true)) {
                unique = cols;
            }
        }
        return unique;
    }

    // ---- transactions

    /** One transaction: every old image goes, then every new image arrives, so rows that trade keys end right. */
    void applyTxn(List<State.RowEvent> events) {
        for (State.RowEvent e : events) {
            if (e.before != null) {
                State.Table t = tableOf(e);
                List<ObjectNode> rows = rows(t).get(key(t, e.before));
                if (rows != null) {
                    rows.remove(0);
                    if (rows.isEmpty()) {
                        rows(t).remove(key(t, e.before));
                    }
                }
            }
        }
        for (State.RowEvent e : events) {
            if (e.after != null) {
                add(tableOf(e), e.after.deepCopy());
            }
        }
    }

    /** The event's table; re-keyed when the event's schema names other key columns (ADD/DROP PRIMARY KEY). */
    private State.Table tableOf(State.RowEvent e) {
        State.Table t = tables.get(name(e.schema, e.table));
        if (t == null) {
            // a table whose CREATE this consumer never saw (it came before the stream): it exists now
            t = newTable(e.schema, e.table);
            (e.after != null ? e.after : e.before).fieldNames().forEachRemaining(t.columns::add);
            t.keyColumns = e.keyColumns;
            tables.put(name(e.schema, e.table), t);
        }
        if (!Objects.equals(t.keyColumns, e.keyColumns)) {
            rekey(t, e.keyColumns);
        }
        return t;
    }

    /** A keyed row is found by its key columns; a key-less one by its whole image (the table is a multiset). */
    private static String key(State.Table t, ObjectNode row) {
        StringBuilder b = new StringBuilder();
        if (t.keyColumns != null) {
            t.keyColumns.forEach(c -> b.append(row.path(c)).append('\u0000'));
        } else {
            TreeMap<String, JsonNode> sorted = new TreeMap<>();
            row.fields().forEachRemaining(c -> sorted.put(c.getKey(), c.getValue()));
            sorted.forEach((c, v) -> b.append(c).append('=').append(v).append('\u0000'));
        }
        return b.toString();
    }

    /** The table's row index, built from the rows read from state_dir the first time it is needed. */
    private static Map<String, List<ObjectNode>> rows(State.Table t) {
        if (t.index == null) {
            t.index = new LinkedHashMap<>();
            List<ObjectNode> loaded = t.loaded;
            t.loaded = new ArrayList<>();
            loaded.forEach(r -> add(t, r));
        }
        return t.index;
    }

    private static void add(State.Table t, ObjectNode row) {
        String k = key(t, row);
        if (t.keyColumns != null) {
            rows(t).put(k, new ArrayList<>(List.of(row)));
        } else {
            rows(t).computeIfAbsent(k, x -> new ArrayList<>()).add(row);
        }
    }

    private static List<ObjectNode> allRows(State.Table t) {
        List<ObjectNode> all = new ArrayList<>();
        rows(t).values().forEach(all::addAll);
        return all;
    }

    /** Rebuilds the row index, after the key columns or (for a key-less table) the images changed. */
    private static void rekey(State.Table t, List<String> keyColumns) {
        List<ObjectNode> all = allRows(t);
        t.keyColumns = keyColumns;
        t.index = new LinkedHashMap<>();
        all.forEach(r -> add(t, r));
    }

    // ---- DDL

    void applyDdl(State.DdlEvent d) {
        String sql = d.query == null ? "" : d.query;
        switch (d.type) {
            case "CREATE":
                create(d, sql);
                break;
            case "ERASE":
                tables.remove(name(d.schema, d.table));
                break;
            case "TRUNCATE":
                rows(existing(d)).clear();
                break;
            case "RENAME":
                rename(d, sql);
                break;
            case "QUERY":
                Matcher m = DROP_DATABASE.matcher(sql);
                if (m.find()) {
                    String schema = unquote(m.group(1));
                    tables.values().removeIf(t -> t.schema.equals(schema));
                } else if (d.tableSchema != null) {
                    alter(d, sql);
                }
                break;
            default: // ALTER, CINDEX, DINDEX
                alter(d, sql);
        }
    }

    private State.Table newTable(String schema, String table) {
        State.Table t = new State.Table();
        t.schema = schema;
        t.name = table;
        return t;
    }

    private State.Table fromSchema(State.DdlEvent d) {
        State.Table t = newTable(d.schema, d.table);
        d.tableSchema.path("columns").forEach(c -> t.columns.add(c.path("name").asText()));
        t.keyColumns = keyColumns(d.tableSchema);
        return t;
    }

    /** The DDL's table; one this consumer never saw starts empty, with the message's columns. */
    private State.Table existing(State.DdlEvent d) {
        return tables.computeIfAbsent(name(d.schema, d.table), k -> fromSchema(d));
    }

    /** CREATE TABLE: empty, columns from the tableSchema, RANGE partitions from the statement (or LIKE's table). */
    private void create(State.DdlEvent d, String sql) {
        State.Table t = fromSchema(d);
        Matcher range = RANGE.matcher(sql);
        Matcher like = LIKE.matcher(sql);
        if (range.find()) {
            t.partitionColumn = unquote(range.group(1));
            t.partitions = definitions(sql.substring(range.end()));
        } else if (like.find()) {
            State.Table source = tables.get(name(like.group(1) == null ? d.schema : unquote(like.group(1)),
                    unquote(like.group(2))));
            if (source != null && source.partitions != null) {
                t.partitionColumn = source.partitionColumn;
                t.partitions = new LinkedHashMap<>(source.partitions);
            }
        }
        tables.put(name(d.schema, d.table), t);
    }

    /** RENAME TABLE: the rows move to the new name. The old name: preTableSchema, else the statement. */
    private void rename(State.DdlEvent d, String sql) {
        String target = name(d.schema, d.table);
        String old = null;
        if (d.preTableSchema != null) {
            old = name(d.preTableSchema.path("schema").asText(), d.preTableSchema.path("table").asText());
        }
        Matcher m = RENAME_PAIR.matcher(sql);
        while ((old == null || old.equals(target)) && m.find()) {
            String from = name(m.group(1) == null ? d.schema : unquote(m.group(1)), unquote(m.group(2)));
            String to = name(m.group(3) == null ? d.schema : unquote(m.group(3)), unquote(m.group(4)));
            if (to.equals(target)) {
                old = from;
            }
        }
        State.Table t = old == null ? null : tables.remove(old);
        if (t == null) {
            Main.note("RENAME of a table this consumer does not hold (" + old + "): " + sql);
            t = fromSchema(d);
        }
        t.schema = d.schema;
        t.name = d.table;
        tables.put(target, t);
    }

    /** ALTER TABLE: partition DDL by its statement, then columns by the new tableSchema against the table's. */
    private void alter(State.DdlEvent d, String sql) {
        if (d.tableSchema == null) {
            Main.note("DDL without a tableSchema changes no row: " + sql);
            return;
        }
        State.Table t = existing(d);
        partitionDdl(t, d, sql);
        Matcher rn = RENAME_COLUMN.matcher(sql);
        while (rn.find()) {
            String from = unquote(rn.group(1) != null ? rn.group(1) : rn.group(2));
            String to = unquote(rn.group(3));
            for (ObjectNode row : allRows(t)) {
                JsonNode v = row.remove(from);
                if (v != null) {
                    row.set(to, v);
                }
            }
            t.columns.replaceAll(c -> c.equals(from) ? to : c);
        }
        List<String> columns = new ArrayList<>();
        for (JsonNode c : d.tableSchema.path("columns")) {
            String col = c.path("name").asText();
            columns.add(col);
            if (!t.columns.contains(col)) {
                JsonNode def = c.path("default");
                if (def.isTextual() && def.asText().toUpperCase().matches("CURRENT_TIMESTAMP.*|.*\\(.*\\).*")) {
                    Main.note("ADD COLUMN " + col + " DEFAULT " + def.asText() + ": the expression's value cannot be known");
                }
                JsonNode value = Values.addedColumnValue(c);
                allRows(t).forEach(row -> row.set(col, value));
            }
        }
        for (String gone : t.columns) {
            if (!columns.contains(gone)) {
                allRows(t).forEach(row -> row.remove(gone));
            }
        }
        t.columns = columns;
        rekey(t, keyColumns(d.tableSchema));
    }

    // ---- RANGE partitions

    private static LinkedHashMap<String, String> definitions(String text) {
        LinkedHashMap<String, String> defs = new LinkedHashMap<>();
        Matcher m = DEF.matcher(text);
        while (m.find()) {
            defs.put(unquote(m.group(1)), m.group(2).equalsIgnoreCase("MAXVALUE") ? null : m.group(2));
        }
        return defs;
    }

    private static List<String> names(String list) {
        List<String> names = new ArrayList<>();
        Matcher m = Pattern.compile(ID).matcher(list);
        while (m.find()) {
            names.add(unquote(m.group(1)));
        }
        return names;
    }

    /** The partition a row falls in: the first whose bound is above the row's value (NULL: the first). */
    private static String partitionOf(State.Table t, ObjectNode row) {
        JsonNode v = row.get(t.partitionColumn);
        for (Map.Entry<String, String> p : t.partitions.entrySet()) {
            if (v == null || v.isNull() || p.getValue() == null
                    || new BigInteger(v.asText()).compareTo(new BigInteger(p.getValue())) < 0) {
                return p.getKey();
            }
        }
        return null;
    }

    /** Removes and returns the rows that fall in the named partitions. */
    private static List<ObjectNode> takeRows(State.Table t, List<String> partitions) {
        List<ObjectNode> taken = new ArrayList<>();
        List<ObjectNode> kept = new ArrayList<>();
        for (ObjectNode row : allRows(t)) {
            (partitions.contains(partitionOf(t, row)) ? taken : kept).add(row);
        }
        t.index = new LinkedHashMap<>();
        kept.forEach(r -> add(t, r));
        return taken;
    }

    private void partitionDdl(State.Table t, State.DdlEvent d, String sql) {
        Matcher m;
        if (REMOVE_PARTITIONING.matcher(sql).find()) {
            t.partitions = null;
            t.partitionColumn = null;
        } else if ((m = RANGE.matcher(sql)).find()) {
            t.partitionColumn = unquote(m.group(1));
            t.partitions = definitions(sql.substring(m.end()));
        } else if (t.partitions == null) {
            if (sql.toUpperCase().matches("(?s).*\\b(ADD|DROP|TRUNCATE|EXCHANGE|REORGANIZE)\\s+PARTITION\\b.*")) {
                throw new ConsumerException("partition DDL on " + name(t.schema, t.name)
                        + ", whose partitions this consumer never saw: " + sql);
            }
        } else if ((m = ADD_PARTITION.matcher(sql)).find()) {
            t.partitions.putAll(definitions(sql.substring(m.end())));
        } else if ((m = DROP_PARTITION.matcher(sql)).find()) {
            List<String> dropped = names(m.group(1));
            takeRows(t, dropped);
            dropped.forEach(t.partitions::remove); // the next partition's range grows down to the previous bound
        } else if ((m = TRUNCATE_PARTITION.matcher(sql)).find()) {
            takeRows(t, names(m.group(1)));
        } else if ((m = REORGANIZE.matcher(sql)).find()) {
            List<String> old = names(m.group(1));
            LinkedHashMap<String, String> fresh = definitions(sql.substring(m.end()));
            LinkedHashMap<String, String> merged = new LinkedHashMap<>();
            t.partitions.forEach((n, bound) -> {
                if (!old.contains(n)) {
                    merged.put(n, bound);
                } else if (n.equals(old.get(0))) {
                    merged.putAll(fresh);
                }
            });
            t.partitions = merged;
        } else if ((m = EXCHANGE.matcher(sql)).find()) {
            // p's rows move to the normal table, the normal table's rows into the partitioned one
            String other = name(m.group(2) == null ? d.schema : unquote(m.group(2)), unquote(m.group(3)));
            State.Table normal = tables.get(other);
            List<ObjectNode> fromPartition = takeRows(t, List.of(unquote(m.group(1))));
            if (normal != null) {
                allRows(normal).forEach(r -> add(t, r));
                normal.index = new LinkedHashMap<>();
                fromPartition.forEach(r -> add(normal, r));
            } else {
                Main.note("EXCHANGE PARTITION with a table this consumer does not hold: " + sql);
            }
        }
    }

    // ---- the tables answer

    /** Every table in name order, with its rows (an empty table as an empty list). */
    Map<String, List<ObjectNode>> snapshot() {
        Map<String, List<ObjectNode>> out = new TreeMap<>();
        tables.forEach((k, t) -> out.put(k, allRows(t)));
        return out;
    }

    State.Table get(String key) {
        return tables.get(key);
    }
}
