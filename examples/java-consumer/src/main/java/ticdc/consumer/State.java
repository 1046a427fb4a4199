package ticdc.consumer;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Everything the consumer knows, in one object, so that a restart can pick up exactly where the
 * last {@code commit} left off: the whole state is written to state_dir at commit and the offsets
 * answered are the next record of each partition, so nothing needs to be delivered twice.
 * Public fields and no-arg constructors: Jackson (de)serializes it as it is.
 */
public final class State {
    /** "topic/partition" -> offset of the next record expected (what {@code committed} answers). */
    public Map<String, Long> nextOffset = new TreeMap<>();
    /** "topic/partition" -> highest watermark the partition delivered; it never moves back. */
    public Map<String, Long> watermark = new TreeMap<>();
    /** "topic/partition" -> the watermark it had when its oldest held DML arrived (absent: none held). */
    public Map<String, Long> frozenWatermark = new TreeMap<>();
    /** "topic/partition" -> how many re-sends the partition showed (a watermark or a table's commit ts going back). */
    public Map<String, Integer> epoch = new TreeMap<>();
    /** "topic/partition|schema.table" -> commit ts of the table's last row event on the partition. */
    public Map<String, Long> lastTableTs = new TreeMap<>();
    /** The global watermark applied last (the last checkpoint written); null before the first. */
    public Long applied;

    /** Simple's schema cache: "length(schema):schema.table@version" -> tableSchema as the message carried it. */
    public Map<String, ObjectNode> schemas = new TreeMap<>();
    /** "topic/partition" -> DML messages whose schema has not arrived yet, in arrival order. */
    public Map<String, List<ObjectNode>> held = new TreeMap<>();

    /** Row events decoded but not yet applied (commit ts above the applied watermark). */
    public List<RowEvent> pendingRows = new ArrayList<>();
    /** DDL decoded but not yet applied, each once, in the order first received. */
    public List<DdlEvent> pendingDdl = new ArrayList<>();
    /** Arrivals of identical key-less row events: "commitTs|partition|epoch|digest of the event" -> count. */
    public Map<String, Integer> keylessArrivals = new TreeMap<>();

    /** The replicated tables, by "schema.table". */
    public Map<String, Table> tables = new TreeMap<>();

    /** One decoded row event of Simple's INSERT / UPDATE / DELETE, values in canonical form. */
    public static final class RowEvent {
        public long commitTs;
        public String schema;
        public String table;
        public String op;
        public ObjectNode before;
        public ObjectNode after;
        /** Key columns of the schema version the event was decoded with; null: the table has no key. */
        public List<String> keyColumns;
        public String partition;
        public int epoch;
    }

    /** One DDL message, with what applying it needs. */
    public static final class DdlEvent {
        public long commitTs;
        public String type;
        public String schema;
        public String table;
        public String query;
        public ObjectNode tableSchema;
        public ObjectNode preTableSchema;
    }

    /** One table: its columns, key, rows, and RANGE partitions (from the DDL text, spec 004 schemas have none). */
    public static final class Table {
        public String schema;
        public String name;
        public List<String> columns = new ArrayList<>();
        public List<String> keyColumns;
        /** row key -> the rows under it: one for a keyed table, every copy for a key-less one (built by Tables). */
        @JsonIgnore
        Map<String, List<ObjectNode>> index;
        /** The rows as read from state_dir, until Tables indexes them. */
        @JsonIgnore
        List<ObjectNode> loaded = new ArrayList<>();
        public String partitionColumn;
        /** RANGE partitions in order: name -> upper bound (null: MAXVALUE). */
        public LinkedHashMap<String, String> partitions;

        /** The rows are kept as a list on disk: the index's keys are rebuilt from the key columns on load. */
        @JsonProperty("rows")
        List<ObjectNode> rowList() {
            List<ObjectNode> all = new ArrayList<>(loaded);
            if (index != null) {
                index.values().forEach(all::addAll);
            }
            return all;
        }

        @JsonProperty("rows")
        void rowList(List<ObjectNode> rows) {
            index = null;
            loaded = rows;
        }
    }

    static State load(ObjectMapper mapper, Path file) throws IOException {
        return mapper.readValue(file.toFile(), State.class);
    }

    /** Writes the state to a temporary file, forces it to disk and renames it over the old one. */
    void save(ObjectMapper mapper, Path file) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        byte[] bytes = mapper.writeValueAsBytes(this);
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ch.write(java.nio.ByteBuffer.wrap(bytes));
            ch.force(true);
        }
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
