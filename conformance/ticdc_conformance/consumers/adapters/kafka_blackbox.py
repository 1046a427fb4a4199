"""`kafka:[OPTION=VALUE …] CMD [ARGS…]`: a consumer that reads a real Kafka cluster, as it does in
production, judged as a black box (docs/consumer-modes.md).

Per run the suite publishes the case's records to the cluster (transport/kafka_io.py `publish`,
the topics replaced), then starts CMD -- split by POSIX shell rules, in a process group of its
own, bounded by --consumer-timeout, its output in CASE/consumer.log: program.py's
`run_consumer_program` -- with

    --bootstrap-servers S --topics T1,T2 --group-id G --end-offsets T1:0=N,… --manifest FILE

and either `--out OUT` (it writes docs/consumer-protocol.md's OUT folder; `final/*.parquet` is
taken too) or `--jdbc URL` (a fresh, empty PostgreSQL database the suite started; the suite reads
its tables back into OUT/final/, transport/postgres.py). The consumer is done when it exits: it
stops once it has consumed every partition to its end offset; exit 0 is success.

Options before the command (`NAME=VALUE` words, as a shell's variable assignments stand before a
command; any other `NAME=VALUE` word there is refused):

| option | meaning | default |
|---|---|---|
| output | out: the consumer writes OUT; jdbc: it writes a PostgreSQL database | out |
| bootstrap-servers | an existing cluster (its topics of the manifest are replaced) | a broker the suite starts (transport/provision.py), kept for every run of this adapter |
| group-id | the consumer group's name; each run appends `-<n>` | ticdc-conformance-<random> |
"""
from __future__ import annotations

import re
import shutil
import uuid
from pathlib import Path
from typing import Any, Optional

import pyarrow.parquet as pq

from ticdc_conformance.errors import ConsumerError
from ticdc_conformance.transport.errors import TransportError

from .arrow_rows import canonical_rows, schedule_note, split_table_name, write_table
from .interface import (
    FINAL_FOLDER,
    FINAL_STATE_ONLY,
    Capabilities,
    ConsumerAdapter,
    ConsumerRun,
    RunOptions,
    Stream,
    shown_by_output,
)
from .program import LOG_FILE, consumer_argv, run_consumer_program

OUTPUTS = ("out", "jdbc")
OPTIONS = ("output", "bootstrap-servers", "group-id")
PARQUET_ASIDE = "final-parquet"  # where final/*.parquet go once read: final/ then holds only NDJSON
_READS_ITSELF = "the consumer reads the topics from the cluster in the order it polls them"
_ASSIGNMENT = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*)=(.*)$", re.S)


def parse_kafka_spec(rest: str) -> tuple[dict[str, str], list[str]]:
    """(options, argv) of `kafka:REST`; ValueError naming an unknown option or value, or an empty command."""
    argv = consumer_argv(rest) if rest.strip() else []
    options: dict[str, str] = {}
    while argv and (assignment := _ASSIGNMENT.match(argv[0])):
        name, value = assignment.groups()
        argv.pop(0)
        if name not in OPTIONS:
            raise ValueError(f"kafka: option {name!r} is unknown; the options are {', '.join(OPTIONS)} "
                             "(NAME=VALUE words before the command)")
        options[name] = value
    if options.get("output", "out") not in OUTPUTS:
        raise ValueError(f"kafka: output={options['output']!r}: the outputs are {', '.join(OUTPUTS)}")
    if not argv:
        raise ValueError("kafka: names no command: the form is kafka:[OPTION=VALUE …] CMD [ARGS…]")
    return options, argv


def end_offsets(manifest: dict) -> dict[tuple[str, int], int]:
    """Every partition's end offset once the case is published: its record count (offsets 0, 1, …)."""
    counts = manifest.get("records_per_partition", {})
    return {(t, p): int(counts.get(f"{t}-{p}", 0)) for t, n in sorted(manifest["topics"].items()) for p in range(n)}


def tables_from_parquet(out: Path, time_zone: str) -> None:
    """final/<schema>.<table>.parquet as final/<schema>.<table>.ndjson; the Parquet files move to
    OUT/final-parquet/. ConsumerError for a table given both ways or a file that is no Parquet table."""
    final = out / FINAL_FOLDER
    files = sorted(final.glob("*.parquet")) if final.is_dir() else []
    for path in files:
        name = path.name[: -len(".parquet")]
        if (final / f"{name}.ndjson").exists():
            raise ConsumerError(f"{path}: table {name} is written twice, as NDJSON and as Parquet")
        try:
            schema, table = split_table_name(name)
            data = pq.read_table(path)
        except (ValueError, OSError) as e:
            raise ConsumerError(f"{path}: not a <schema>.<table>.parquet table: {e}") from None
        write_table(final, schema, table, canonical_rows(data, time_zone))
        (out / PARQUET_ASIDE).mkdir(exist_ok=True)
        shutil.move(str(path), str(out / PARQUET_ASIDE / path.name))


def tables_from_database(url: str, out: Path, time_zone: str) -> int:
    """The database's tables as OUT/final/; the number of tables."""
    from ticdc_conformance.transport.postgres import database_tables

    final = out / FINAL_FOLDER
    final.mkdir(parents=True, exist_ok=True)
    n = 0
    for schema, table, _, rows in database_tables(url, time_zone):
        write_table(final, schema, table, rows)
        n += 1
    return n


class KafkaBlackBox(ConsumerAdapter):
    """A program reading the suite's records from Kafka and writing OUT or a database."""

    def __init__(self, rest: str, spark: Any = None, master: Optional[str] = None) -> None:
        self.options, self.argv = parse_kafka_spec(rest)  # ValueError now, before any encoding runs
        self.spec = f"kafka:{rest}"
        self.output = self.options.get("output", "out")
        # A database shows the final tables only; an OUT folder whatever the program writes into it.
        self.capabilities = FINAL_STATE_ONLY if self.output == "jdbc" else Capabilities(applied_log=True, states=True)
        self.group_prefix = self.options.get("group-id") or f"ticdc-conformance-{uuid.uuid4().hex[:8]}"
        self._broker: Any = None
        self._postgres: Any = None
        self._runs = 0

    @property
    def command(self) -> str:
        import shlex

        return shlex.join(self.argv)

    def bootstrap(self) -> str:
        """The cluster: the one the spec names, else a broker started at the first run."""
        if "bootstrap-servers" in self.options:
            return self.options["bootstrap-servers"]
        if self._broker is None:
            from ticdc_conformance.transport.provision import provision_broker

            broker = provision_broker()
            broker.start()
            self._broker = broker
        return self._broker.bootstrap

    def database(self) -> str:
        """A fresh database on the suite's PostgreSQL server (started at the first run): its JDBC URL."""
        if self._postgres is None:
            from ticdc_conformance.transport.postgres import PostgresServer

            self._postgres = PostgresServer().start()
        return self._postgres.create_database("consumer")

    def run(self, stream: Stream, out: Path, options: RunOptions = RunOptions()) -> ConsumerRun:
        from ticdc_conformance.transport.kafka_io import publish

        log = stream.folder / LOG_FILE
        time_zone = stream.manifest.get("sink", {}).get("time-zone") or "UTC"
        self._runs += 1
        try:
            bootstrap = self.bootstrap()
            publish(stream.records, bootstrap, stream.manifest, replace=True)
            ends = end_offsets(stream.manifest)
            args = ["--bootstrap-servers", bootstrap, "--topics", ",".join(sorted(stream.manifest["topics"])),
                    "--group-id", f"{self.group_prefix}-{self._runs}",
                    "--end-offsets", ",".join(f"{t}:{p}={o}" for (t, p), o in sorted(ends.items())),
                    "--manifest", str(Path(stream.manifest_path).resolve())]
            url = self.database() if self.output == "jdbc" else None
            args += ["--jdbc", url] if url is not None else ["--out", str(Path(out).resolve())]
            run_consumer_program(self.command, args, log, options.timeout_s)
            if url is not None:
                tables_from_database(url, out, time_zone)
            else:
                tables_from_parquet(out, time_zone)
        except (ConsumerError, TransportError) as e:
            return ConsumerRun(self.spec, out, self._shows(out), log=log if log.exists() else None,
                               error=f"{self.spec}: {e}", notes=schedule_note(options, _READS_ITSELF))
        return ConsumerRun(self.spec, out, self._shows(out), log=log, notes=schedule_note(options, _READS_ITSELF))

    def _shows(self, out: Path) -> Capabilities:
        return FINAL_STATE_ONLY if self.output == "jdbc" else shown_by_output(out)

    def close(self) -> None:
        broker, self._broker = self._broker, None
        if broker is not None:
            broker.stop()
        postgres, self._postgres = self._postgres, None
        if postgres is not None:
            postgres.stop()
