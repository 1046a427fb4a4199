package ticdc.consumer;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * A consumer of TiCDC's Simple protocol (JSON encoding) speaking the streaming testee protocol v1
 * (docs/testee-protocol.md): Kafka records in on stdin, the applied log and the answers out on stdout,
 * one JSON object per line. Its whole state is kept in state_dir at each commit, so it can be
 * stopped or killed and started again from the offsets it committed.
 */
public final class Main {
    /**
     * Large values (MEDIUMBLOB as base64) are legitimate: no length limit on strings. A number with a
     * fraction is read as a BigDecimal, so a DECIMAL kept in state_dir as a number keeps its digits.
     */
    static final ObjectMapper MAPPER = new ObjectMapper(JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder().maxStringLength(Integer.MAX_VALUE).build())
            .build()).configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false)
            .configure(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS, true);
    private static final BufferedWriter OUT = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8));
    private static final String STATE_FILE = "java-consumer-state.json";

    private Main() {
    }

    static void emit(JsonNode line) {
        try {
            OUT.write(MAPPER.writeValueAsString(line));
            OUT.write('\n');
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void note(String text) {
        System.err.println("java-consumer: " + text);
    }

    public static void main(String[] args) throws IOException {
        try {
            run(new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)));
            OUT.flush();
        } catch (ConsumerException | IOException | UncheckedIOException e) {
            // a line that is no JSON, a record this consumer cannot decode: one clear message, exit 1
            OUT.flush();
            note("error: " + e.getMessage());
            System.exit(1);
        }
    }

    /** Why this consumer does not read the stream the header describes, or null when it does. */
    private static String unsupported(JsonNode header) {
        JsonNode sink = header.path("sink");
        if (!header.path("protocol").asText().equals("simple")) {
            return "only the Simple protocol is implemented (got " + header.path("protocol").asText() + ")";
        }
        String format = sink.path("encoding-format").asText("json");
        if (!format.equals("json")) {
            return "only Simple's JSON encoding is implemented (encoding-format " + format + ")";
        }
        String large = sink.path("large-message-handle-option").asText("none");
        if (!large.equals("none")) {
            return "large-message-handle-option " + large + " (claim-check / handle-key-only) is not implemented";
        }
        return null;
    }

    private static void run(BufferedReader in) throws IOException {
        String first = in.readLine();
        if (first == null) {
            throw new ConsumerException("stdin closed before the header line");
        }
        JsonNode header = MAPPER.readTree(first);
        if (!header.path("type").asText().equals("header")) {
            throw new ConsumerException("the first line is no header: " + first);
        }
        String why = unsupported(header);
        if (why != null) {
            emit(MAPPER.createObjectNode().put("type", "unsupported").put("reason", why));
            return;
        }
        Path stateFile = Path.of(header.path("state_dir").asText(".")).resolve(STATE_FILE);
        Files.createDirectories(stateFile.getParent());
        State state = Files.exists(stateFile) ? State.load(MAPPER, stateFile) : new State();
        List<String> partitions = new ArrayList<>();
        header.path("topics").fields().forEachRemaining(t -> {
            for (int p = 0; p < t.getValue().asInt(); p++) {
                partitions.add(t.getKey() + "/" + p);
            }
        });
        Tables tables = new Tables(state.tables);
        Ordering ordering = new Ordering(state, tables, partitions);
        Decoder decoder = new Decoder(state, ordering);
        ObjectNode ready = MAPPER.createObjectNode().put("type", "ready").put("protocol_version", 1);
        ready.putArray("supports").add("restarts");
        emit(ready);
        OUT.flush();

        int number = 1;
        for (String line; (line = in.readLine()) != null; ) {
            number++;
            if (line.isBlank()) {
                continue;
            }
            JsonNode msg;
            try {
                msg = MAPPER.readTree(line);
            } catch (JsonProcessingException e) {
                throw new ConsumerException("stdin line " + number + " is no JSON: " + e.getOriginalMessage());
            }
            long id = msg.path("id").asLong();
            switch (msg.path("type").asText()) {
                case "record":
                    record(decoder, state, msg);
                    ordering.advance();
                    break;
                case "sync":
                    answer("synced", id);
                    break;
                case "tables":
                    for (Map.Entry<String, List<ObjectNode>> t : tables.snapshot().entrySet()) {
                        State.Table table = tables.get(t.getKey());
                        if (t.getValue().isEmpty()) {
                            emit(row(table, null));
                        }
                        t.getValue().forEach(r -> emit(row(table, r)));
                    }
                    ObjectNode answer = MAPPER.createObjectNode().put("type", "tables").put("id", id);
                    answer.put("checkpoint", state.applied);
                    emit(answer);
                    OUT.flush();
                    break;
                case "commit":
                    state.save(MAPPER, stateFile);
                    ObjectNode committed = MAPPER.createObjectNode().put("type", "committed").put("id", id);
                    ObjectNode offsets = committed.putObject("offsets");
                    state.nextOffset.forEach((p, next) -> {
                        int slash = p.lastIndexOf('/');
                        ObjectNode topic = offsets.has(p.substring(0, slash)) ? (ObjectNode) offsets.get(p.substring(0, slash))
                                : offsets.putObject(p.substring(0, slash));
                        topic.put(p.substring(slash + 1), next);
                    });
                    emit(committed);
                    OUT.flush();
                    break;
                case "end":
                    // Simple always carries watermarks: what no watermark covers stays unapplied
                    answer("ended", id);
                    break;
                default:
                    // later protocol versions add line types; late join is not declared, so load/loaded never come
                    break;
            }
        }
    }

    private static void answer(String type, long id) throws IOException {
        emit(MAPPER.createObjectNode().put("type", type).put("id", id));
        OUT.flush();
    }

    private static ObjectNode row(State.Table table, ObjectNode r) {
        ObjectNode line = MAPPER.createObjectNode().put("type", "row").put("schema", table.schema).put("table", table.name);
        line.set("row", r);
        return line;
    }

    private static void record(Decoder decoder, State state, JsonNode rec) throws IOException {
        String partition = rec.path("topic").asText() + "/" + rec.path("partition").asInt();
        long offset = rec.path("offset").asLong();
        if (offset < state.nextOffset.getOrDefault(partition, 0L)) {
            return; // delivered again below what the state already holds: Kafka's at-least-once, not a new event
        }
        state.nextOffset.put(partition, offset + 1);
        JsonNode value = rec.get("value");
        if (value == null || value.isNull()) {
            return; // a tombstone carries no event
        }
        JsonNode msg;
        try {
            msg = MAPPER.readTree(Base64.getDecoder().decode(value.asText()));
        } catch (IOException | IllegalArgumentException e) {
            throw new ConsumerException("record " + partition + "@" + offset + ": value is no Simple JSON message: "
                    + e.getMessage());
        }
        if (!(msg instanceof ObjectNode)) {
            throw new ConsumerException("record " + partition + "@" + offset + ": value is no JSON object");
        }
        try {
            decoder.record(partition, offset, (ObjectNode) msg);
        } catch (ConsumerException e) {
            throw e.getMessage().startsWith("record ") ? e
                    : new ConsumerException("record " + partition + "@" + offset + ": " + e.getMessage());
        }
    }
}
