package ticdc.consumer;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * When things are applied (docs/consumer-rules.md, "Watermarks", "Row events", "DDL"): per-partition
 * watermarks that never move back, the global watermark as their minimum, row events and DDL
 * buffered until the global watermark reaches them, then applied in commit-ts order, one txn line
 * per commit ts, a DDL as a barrier, and a checkpoint line each time the global watermark advances.
 */
final class Ordering {
    private final State state;
    private final Tables tables;
    private final List<String> partitions;
    /** Identities of the waiting row events of keyed tables, to drop copies of them (rebuilt on load). */
    private final Set<String> waiting = new HashSet<>();

    Ordering(State state, Tables tables, List<String> partitions) {
        this.state = state;
        this.tables = tables;
        this.partitions = partitions;
        state.pendingRows.stream().filter(e -> e.keyColumns != null).forEach(e -> waiting.add(identity(e)));
    }

    /** A partition's watermark; a lower one than it had is a re-send after a TiCDC restart, ignored. */
    void watermark(String partition, long offset, long ts) {
        Long had = state.watermark.get(partition);
        if (had != null && ts < had) {
            state.epoch.merge(partition, 1, Integer::sum);
            Main.note("watermark regression at " + partition + "@" + offset + ": " + ts + " < " + had + ", ignored");
            return;
        }
        state.watermark.put(partition, ts);
    }

    private static String identity(State.RowEvent e) {
        return e.commitTs + "|" + Tables.name(e.schema, e.table) + "|" + e.op + "|" + e.before + "|" + e.after;
    }

    private static String digest(String identity) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(identity.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * A row event: dropped when at or below the applied watermark (a re-send of something applied) or
     * when it copies one still waiting; kept otherwise, even below a partition's own watermark.
     */
    void row(String partition, State.RowEvent e) {
        if (state.applied != null && e.commitTs <= state.applied) {
            return;
        }
        String tableKey = partition + "|" + Tables.name(e.schema, e.table);
        Long last = state.lastTableTs.put(tableKey, e.commitTs);
        if (last != null && e.commitTs < last) {
            state.epoch.merge(partition, 1, Integer::sum); // the partition shows a re-send
        }
        e.partition = partition;
        e.epoch = state.epoch.getOrDefault(partition, 0);
        String id = identity(e);
        if (e.keyColumns != null) {
            if (!waiting.add(id)) {
                return;
            }
        } else {
            // a key-less table may hold two identical rows from one transaction: the k-th identical event
            // of this epoch is a copy only if an earlier epoch of the partition already brought k of them
            String prefix = e.commitTs + "|" + partition + "|";
            String digest = digest(id);
            int k = state.keylessArrivals.merge(prefix + e.epoch + "|" + digest, 1, Integer::sum);
            for (int earlier = 0; earlier < e.epoch; earlier++) {
                if (state.keylessArrivals.getOrDefault(prefix + earlier + "|" + digest, 0) >= k) {
                    return;
                }
            }
        }
        state.pendingRows.add(e);
    }

    /** A DDL: queued once per (commit ts, schema, table, query); a copy after the watermark passed it is dropped. */
    void ddl(State.DdlEvent d) {
        if (state.applied != null && d.commitTs <= state.applied) {
            return;
        }
        for (State.DdlEvent q : state.pendingDdl) {
            if (q.commitTs == d.commitTs && q.schema.equals(d.schema) && q.table.equals(d.table)
                    && q.query.equals(d.query)) {
                return;
            }
        }
        state.pendingDdl.add(d);
    }

    /** The global watermark: the minimum over every partition of every topic; null until each has one. */
    private Long global() {
        Long min = null;
        for (String p : partitions) {
            Long w = state.frozenWatermark.containsKey(p) ? state.frozenWatermark.get(p) : state.watermark.get(p);
            if (w == null || w < 0) {
                return null;
            }
            min = min == null ? w : Math.min(min, w);
        }
        return min;
    }

    /** Applies what the global watermark covers, if it advanced, and writes the checkpoint. */
    void advance() {
        Long w = global();
        if (w == null || (state.applied != null && w <= state.applied)) {
            return;
        }
        TreeMap<Long, List<State.RowEvent>> txns = new TreeMap<>();
        for (Iterator<State.RowEvent> it = state.pendingRows.iterator(); it.hasNext(); ) {
            State.RowEvent e = it.next();
            if (e.commitTs <= w) {
                txns.computeIfAbsent(e.commitTs, k -> new ArrayList<>()).add(e);
                waiting.remove(identity(e));
                it.remove();
            }
        }
        List<State.DdlEvent> ddls = new ArrayList<>();
        state.pendingDdl.removeIf(d -> d.commitTs <= w && ddls.add(d));
        ddls.sort((a, b) -> Long.compare(a.commitTs, b.commitTs)); // stable: one job's DDL keep their order
        TreeSet<Long> times = new TreeSet<>(txns.keySet());
        ddls.forEach(d -> times.add(d.commitTs));
        for (long ts : times) {
            List<State.RowEvent> txn = txns.get(ts);
            if (txn != null) {
                tables.applyTxn(txn);
                Main.emit(txnLine(ts, txn));
            }
            for (State.DdlEvent d : ddls) {
                if (d.commitTs == ts) {
                    tables.applyDdl(d);
                    Main.emit(Main.MAPPER.createObjectNode().put("type", "ddl").put("commit_ts", ts)
                            .put("schema", d.schema).put("table", d.table).put("query", d.query));
                }
            }
        }
        state.applied = w;
        state.keylessArrivals.keySet().removeIf(k -> Long.parseLong(k.substring(0, k.indexOf('|'))) <= w);
        Main.emit(Main.MAPPER.createObjectNode().put("type", "checkpoint").put("ts", w));
    }

    private static ObjectNode txnLine(long ts, List<State.RowEvent> txn) {
        ObjectNode line = Main.MAPPER.createObjectNode().put("type", "txn").put("commit_ts", ts);
        ArrayNode rows = line.putArray("rows");
        for (State.RowEvent e : txn) {
            ObjectNode r = rows.addObject().put("schema", e.schema).put("table", e.table).put("op", e.op);
            r.set("before", e.before);
            r.set("after", e.after);
        }
        return line;
    }
}
