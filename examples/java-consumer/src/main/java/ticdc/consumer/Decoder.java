package ticdc.consumer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Simple protocol, JSON encoding (spec 004): one event per Kafka message. DDL and BOOTSTRAP fill the
 * schema cache, keyed by (schema, table, schemaVersion); a DML is decoded with the tableSchema of its
 * own schemaVersion, and waits here while that schema has not arrived ("Message consumption
 * scenarios": a DML's tableSchema is found by its table name and schemaVersion).
 */
final class Decoder {
    private final State state;
    private final Ordering ordering;

    Decoder(State state, Ordering ordering) {
        this.state = state;
        this.ordering = ordering;
    }

    void record(String partition, long offset, ObjectNode msg) {
        String type = msg.path("type").asText();
        switch (type) {
            case "WATERMARK":
                ordering.watermark(partition, offset, msg.path("commitTs").asLong());
                break;
            case "BOOTSTRAP":
                cache(msg.get("tableSchema"));
                releaseHeld();
                break;
            case "INSERT": case "UPDATE": case "DELETE":
                dml(partition, msg);
                break;
            case "CREATE": case "RENAME": case "CINDEX": case "DINDEX": case "ERASE": case "TRUNCATE":
            case "ALTER": case "QUERY":
                ddl(msg);
                break;
            default:
                throw new ConsumerException("record " + partition + "@" + offset + ": unknown Simple message type \""
                        + type + "\"");
        }
    }

    private static String schemaKey(String schema, String table, long version) {
        // no control characters in state_dir's JSON keys; the length keeps dotted names apart
        return schema.length() + ":" + schema + "." + table + "@" + version;
    }

    private static String tableOf(JsonNode dml) {
        return Tables.name(dml.path("database").asText(), dml.path("table").asText());
    }

    private void cache(JsonNode tableSchema) {
        if (tableSchema != null && tableSchema.isObject()) {
            state.schemas.put(schemaKey(tableSchema.path("schema").asText(), tableSchema.path("table").asText(),
                    tableSchema.path("version").asLong()), (ObjectNode) tableSchema);
        }
    }

    private ObjectNode schemaOf(JsonNode dml) {
        return state.schemas.get(schemaKey(dml.path("database").asText(), dml.path("table").asText(),
                dml.path("schemaVersion").asLong()));
    }

    /**
     * A DML waits while its schema is unknown, or while an earlier DML of its table on the partition
     * waits (so a table's events stay in order). The partition's watermark waits with them: it counts
     * with the value it had when the first of them arrived, so they are never taken for re-sends.
     */
    private void dml(String partition, ObjectNode msg) {
        List<ObjectNode> held = state.held.get(partition);
        boolean tableWaits = held != null && held.stream().anyMatch(h -> tableOf(h).equals(tableOf(msg)));
        ObjectNode schema = schemaOf(msg);
        if (schema == null || tableWaits) {
            if (held == null) {
                held = new java.util.ArrayList<>();
                state.held.put(partition, held);
                state.frozenWatermark.put(partition, state.watermark.getOrDefault(partition, -1L));
            }
            held.add(msg);
            return;
        }
        ordering.row(partition, decode(msg, schema));
    }

    /** A schema arrived: every waiting DML whose schema is now known goes on, table by table in order. */
    private void releaseHeld() {
        for (Iterator<Map.Entry<String, List<ObjectNode>>> it = state.held.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, List<ObjectNode>> entry = it.next();
            Set<String> blocked = new HashSet<>();
            for (Iterator<ObjectNode> h = entry.getValue().iterator(); h.hasNext(); ) {
                ObjectNode msg = h.next();
                ObjectNode schema = blocked.contains(tableOf(msg)) ? null : schemaOf(msg);
                if (schema == null) {
                    blocked.add(tableOf(msg));
                    continue;
                }
                h.remove();
                ordering.row(entry.getKey(), decode(msg, schema));
            }
            if (entry.getValue().isEmpty()) {
                it.remove();
                state.frozenWatermark.remove(entry.getKey());
            }
        }
    }

    private State.RowEvent decode(ObjectNode msg, ObjectNode schema) {
        Map<String, JsonNode> types = new HashMap<>();
        schema.path("columns").forEach(c -> types.put(c.path("name").asText(), c.path("dataType")));
        State.RowEvent e = new State.RowEvent();
        e.commitTs = msg.path("commitTs").asLong();
        e.schema = msg.path("database").asText();
        e.table = msg.path("table").asText();
        e.op = msg.path("type").asText().toLowerCase(java.util.Locale.ROOT);
        e.before = e.op.equals("insert") ? null : image(msg.get("old"), schema, types, msg);
        e.after = e.op.equals("delete") ? null : image(msg.get("data"), schema, types, msg);
        e.keyColumns = Tables.keyColumns(schema);
        return e;
    }

    /** A row image in canonical values, columns in the table's order (a column the image lacks stays out). */
    private static ObjectNode image(JsonNode data, ObjectNode schema, Map<String, JsonNode> types, JsonNode msg) {
        if (data == null || !data.isObject()) {
            throw new ConsumerException(msg.path("type").asText() + " of " + tableOf(msg) + " at commitTs "
                    + msg.path("commitTs").asLong() + " carries no " + (msg.path("type").asText().equals("INSERT")
                    ? "data" : "old") + " image");
        }
        ObjectNode row = Main.MAPPER.createObjectNode();
        for (JsonNode c : schema.path("columns")) {
            String name = c.path("name").asText();
            if (data.has(name)) {
                row.set(name, Values.canonical(types.get(name), data.get(name), tableOf(msg) + "." + name));
            }
        }
        data.fieldNames().forEachRemaining(name -> {
            if (!types.containsKey(name)) {
                throw new ConsumerException(tableOf(msg) + " schemaVersion " + msg.path("schemaVersion").asLong()
                        + " has no column " + name + " that its DML at commitTs " + msg.path("commitTs").asLong() + " carries");
            }
        });
        return row;
    }

    /** A DDL: its schemas go into the cache at once (later DML of this partition may need them). */
    private void ddl(ObjectNode msg) {
        cache(msg.get("tableSchema"));
        cache(msg.get("preTableSchema"));
        State.DdlEvent d = new State.DdlEvent();
        d.commitTs = msg.path("commitTs").asLong();
        d.type = msg.path("type").asText();
        d.query = msg.path("sql").asText();
        JsonNode ts = msg.get("tableSchema");
        // a schema-level DDL (CREATE/DROP DATABASE) names neither schema nor table
        d.tableSchema = ts != null && ts.isObject() ? (ObjectNode) ts : null;
        d.preTableSchema = msg.get("preTableSchema") instanceof ObjectNode ? (ObjectNode) msg.get("preTableSchema") : null;
        d.schema = d.tableSchema == null ? "" : d.tableSchema.path("schema").asText();
        d.table = d.tableSchema == null ? "" : d.tableSchema.path("table").asText();
        ordering.ddl(d);
        releaseHeld();
    }
}
