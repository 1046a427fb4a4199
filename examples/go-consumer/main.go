// Command go-consumer is a minimal consumer of TiCDC's Canal-JSON output (with the TiDB extension)
// that speaks the streaming testee protocol v1 (docs/testee-protocol.md): the suite writes Kafka
// records and requests to stdin as NDJSON, the consumer answers on stdout.
//
// Files: main.go (the session), canal.go (decoding a record), consumer.go (watermarks, buffering,
// applying, durable state), ddl.go (what a DDL does to the tables). Standard library only.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// header is the first line of every start.
type header struct {
	ProtocolVersion int            `json:"protocol_version"`
	Protocol        string         `json:"protocol"`
	Sink            map[string]any `json:"sink"`
	Topics          map[string]int `json:"topics"`
	StateDir        string         `json:"state_dir"`
	Start           struct {
		Restart int                         `json:"restart"`
		Offsets map[string]map[string]int64 `json:"offsets"`
	} `json:"start"`
}

// line is any line from the suite; only the fields of its type are set.
type line struct {
	Type      string  `json:"type"`
	ID        *int64  `json:"id"`
	Topic     string  `json:"topic"`
	Partition int     `json:"partition"`
	Offset    int64   `json:"offset"`
	Value     *string `json:"value"` // base64, or null (a tombstone)
}

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "go-consumer:", err)
		os.Exit(1)
	}
}

func run(stdin io.Reader, stdout io.Writer) error {
	in := bufio.NewReaderSize(stdin, 1<<20)
	out := bufio.NewWriterSize(stdout, 1<<16)
	defer out.Flush()
	emit := func(v any) {
		b, err := json.Marshal(v)
		if err != nil { // only maps of strings, json.Number and nil reach here
			panic(err)
		}
		out.Write(b)
		out.WriteByte('\n')
	}

	raw, err := readLine(in)
	if err != nil {
		return fmt.Errorf("reading the header: %w", err)
	}
	var h header
	if err := json.Unmarshal(raw, &h); err != nil {
		return fmt.Errorf("the header is not valid JSON: %w", err)
	}
	if reason := unsupported(h); reason != "" {
		emit(map[string]any{"type": "unsupported", "reason": reason})
		return nil
	}
	contentCompatible = fmt.Sprint(h.Sink["content-compatible"]) == "true"
	c, err := openConsumer(h, emit)
	if err != nil {
		return err
	}
	emit(map[string]any{"type": "ready", "protocol_version": 1, "supports": []string{"restarts"}})
	out.Flush()

	for {
		raw, err := readLine(in)
		if errors.Is(err, io.EOF) {
			return nil // the suite closes stdin after its last request
		}
		if err != nil {
			return err
		}
		var l line
		if err := json.Unmarshal(raw, &l); err != nil {
			return fmt.Errorf("a line from the suite is not valid JSON (%v): %.200s", err, raw)
		}
		switch l.Type {
		case "record":
			if err := c.record(l); err != nil {
				return fmt.Errorf("record %s/%d@%d: %w", l.Topic, l.Partition, l.Offset, err)
			}
			continue // records need no answer
		case "sync":
			emit(map[string]any{"type": "synced", "id": l.ID})
		case "tables":
			c.emitTables()
			emit(map[string]any{"type": "tables", "id": l.ID, "checkpoint": c.st.LastCheckpoint})
		case "commit":
			if err := c.save(); err != nil {
				return fmt.Errorf("commit %d: %w", *l.ID, err)
			}
			emit(map[string]any{"type": "committed", "id": l.ID, "offsets": c.st.Offsets})
		case "end":
			// Every event is applied when the global watermark reaches it, and this stream always
			// carries watermarks: what lies above the last one stays unapplied, as no checkpoint
			// could cover it.
			emit(map[string]any{"type": "ended", "id": l.ID})
		default:
			continue // a later protocol version may add line types; they need no answer here
		}
		out.Flush()
	}
}

// unsupported says why this consumer cannot consume the header's configuration, or "".
func unsupported(h header) string {
	opt := func(name string) string { return fmt.Sprint(h.Sink[name]) }
	switch {
	case h.ProtocolVersion != 1:
		return "only testee protocol version 1 is implemented, the header says " + strconv.Itoa(h.ProtocolVersion)
	case h.Protocol != "canal-json":
		return "only canal-json with enable-tidb-extension is implemented, not " + h.Protocol
	case opt("enable-tidb-extension") != "true":
		return "canal-json without enable-tidb-extension carries no commit ts and no watermark; only the TiDB extension is implemented"
	case h.Sink["encoding-format"] != nil && opt("encoding-format") != "json":
		return "only encoding-format json is implemented"
	case h.Sink["large-message-handle-option"] != nil && opt("large-message-handle-option") != "none":
		return "large-message-handle-option " + opt("large-message-handle-option") + " is not implemented"
	case opt("delete-only-output-handle-key-columns") == "true":
		return "delete-only-output-handle-key-columns is not implemented (a delete's image must be whole)"
	}
	return ""
}

// readLine reads one '\n'-ended line of any length.
func readLine(r *bufio.Reader) ([]byte, error) {
	b, err := r.ReadBytes('\n')
	if len(b) > 0 && errors.Is(err, io.EOF) {
		return b, nil // a last line without '\n'
	}
	return b, err
}
