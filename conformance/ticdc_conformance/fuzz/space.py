"""What `fuzz` draws: an upstream history, a sink configuration from the protocol's option space,
and a delivery schedule the consumer supports.

Every strategy shrinks toward the plainest case: a short history (the history strategy's own
order), the encoding's default configuration, the timestamp merge with no restart. So a shrunk
failure keeps only the options and schedule parts the bug needs.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from ticdc_conformance.consumers.adapters import Capabilities
from ticdc_conformance.delivery import MERGES, Schedule
from ticdc_contract.model import DDL, DDLType, HistoryEvent, Transaction
from ticdc_generators.pipeline import DEFAULT_MATRIX
from ticdc_generators.sink.config import DispatchRule, SinkConfig
from ticdc_generators.strategies import DDL_KINDS, Driver, Upstream, histories
from ticdc_generators.strategies.ops import DEFAULT_START_MS

TOPIC = "ticdc-fuzz"
RESTART_KINDS = ("mixed", "stop", "crash")  # mixed (the default) first
# Row dispatchers (TiCDC [[sink.dispatchers]] partition): the scenarios' default first.
DISPATCHERS = ("index-value", "table", "ts", "default")


def first_is_default(*choices):
    """A choice that shrinks toward its first value (the option's default)."""
    return st.sampled_from(choices)


# Per encoding, the TiCDC options the simulator implements and a consumer must handle, each with
# its default first. Large-message handling and column selectors are left out: they need files
# beside the records (claim-check) or are judged by the fidelity tests.
def _open_protocol(draw) -> dict:
    return {"output_old_value": draw(first_is_default(True, False)),
            "max_batch_size": draw(first_is_default(16, 1, 4))}


def _canal_json(draw) -> dict:
    return {"enable_tidb_extension": draw(first_is_default(True, False)),
            "content_compatible": draw(first_is_default(False, True))}


def _debezium(draw) -> dict:
    return {"enable_tidb_extension": draw(first_is_default(True, False)),
            "debezium_disable_schema": draw(first_is_default(False, True))}


def _simple(draw) -> dict:
    return {"send_bootstrap_to_all_partition": draw(first_is_default(True, False)),
            "send_all_bootstrap_at_start": draw(first_is_default(False, True)),
            "send_bootstrap_in_msg_count": draw(first_is_default(10000, 1, 5))}


PROTOCOL_OPTIONS = {"open-protocol": _open_protocol, "canal-json": _canal_json, "debezium": _debezium,
                    "simple-json": _simple, "simple-avro": _simple}


def encodings() -> list[str]:
    return list(DEFAULT_MATRIX)


def base_config(encoding: str) -> SinkConfig:
    """The encoding's default configuration (the default matrix's), on the fuzz topic."""
    if encoding not in DEFAULT_MATRIX:
        raise ValueError(f"unknown encoding {encoding!r}; expected one of {', '.join(DEFAULT_MATRIX)}")
    return SinkConfig(topic=TOPIC, dispatchers=(DispatchRule(matcher=("*.*",), partition=DISPATCHERS[0]),),
                      **DEFAULT_MATRIX[encoding])


# Parts of the space where the suite's own reference consumer or checks fail (docs/fuzz.md, "Known
# gaps"): left out of what is drawn unless `known_gaps` asks for them, so a fuzz run's failure is
# the consumer's. Each names what it leaves out.
KNOWN_GAPS = {
    "arrival-undecidable-key": "Canal-JSON and Debezium without the TiDB extension: one partition (a row the "
                               "checks list as undecidable is still reported missing when its table's primary "
                               "key lists its columns in another order than the table does)",
    "keyless-resend": "no changefeed failover once a table without a primary key exists: a failover's re-send of a "
                      "key-less row, without a watermark going back, is the same message as a second identical row "
                      "of the transaction; the checks do not yet list that count as undecidable",
    "keyless-no-old-value": "Open Protocol: output-old-value stays on once a table without a primary key exists (an UPDATE "
                            "without its old image cannot say which of the key-less rows it changed)",
    "late-join-partitions": "no late join once a partitioned table exists (the snapshot's load lines carry no "
                            "partition definitions, so the reference consumer cannot apply a later partition DDL)",
}


@st.composite
def sink_configs(draw, encoding: str, known_gaps: bool = False, keyless: bool = False,
                 tables_with_rows: int = 2, exchanges: bool = False) -> SinkConfig:
    """A configuration of `encoding`: partitions, dispatcher, the protocol's options, and the
    simulator's delivery settings (watermark cadence, table interleaving, changefeed failovers).
    `keyless`: the history has a table without a primary key (KNOWN_GAPS' keyless-*);
    `tables_with_rows`: how many tables the history writes rows to; `exchanges`: it has an
    EXCHANGE PARTITION."""
    base = base_config(encoding)
    partition = draw(first_is_default(*DISPATCHERS))
    options = PROTOCOL_OPTIONS[encoding](draw)
    if exchanges and "send_bootstrap_to_all_partition" in options:
        # The stream's limit, not a gap: the normal table of an EXCHANGE PARTITION takes the
        # partition's ID, and only the BOOTSTRAP its next row sends names that version (no DDL
        # message carries it). Sent to the first partition only, it leaves that table's rows on
        # the other partitions unreadable to a consumer that keeps a schema cache per partition,
        # as TiCDC's own kafka-consumer does (docs/fuzz.md).
        options["send_bootstrap_to_all_partition"] = True
    if keyless and not known_gaps and "output_old_value" in options:  # keyless-no-old-value
        options["output_old_value"] = True
    # Without commit ts (Canal-JSON, Debezium without the TiDB extension) a consumer cannot tell a
    # re-sent event from a new one, so no consumer could apply a failover's re-sends correctly.
    arrival_only = encoding in ("canal-json", "debezium") and not options["enable_tidb_extension"]
    # Interleaving shows only with rows of two tables; then it is drawn three times in four, as the
    # bugs of order across tables (a row below another table's commit ts) need it, and so is a long
    # watermark interval: rows interleave only between two watermarks (1 ms closes one per event).
    interleave = draw(st.integers(0, 3)) > 0 if tables_with_rows > 1 else draw(first_is_default(False, True))
    fields = {
        "partition_num": 1 if arrival_only and not known_gaps else draw(st.integers(1, 4)),  # arrival-undecidable-key
        "dispatchers": (DispatchRule(matcher=("*.*",), partition=partition),),
        "watermark_interval_ms": draw(first_is_default(*((1000, 1000, 100, 1) if interleave else (1000, 1, 100)))),
        "interleave_tables": interleave,
        **options,
    }
    keyless_gap = keyless and not known_gaps  # keyless-resend
    failovers = 0 if arrival_only or keyless_gap else draw(st.integers(0, 2))
    if failovers:
        fields.update(failovers=failovers, failover_spacing=draw(st.integers(1, 12)),
                      checkpoint_lag=draw(st.integers(0, 2)))
    return replace(base, **fields)


@st.composite
def schedules(draw, capabilities: Capabilities, late_join: bool = True) -> Schedule:
    """A delivery schedule of docs/delivery-schedules.md for a consumer the suite feeds (any other
    reads the stream as it likes: the default schedule). A fed consumer declares restarts and late
    join only in its `ready` line, so both are drawn for every fed consumer; the session leaves out
    what it does not declare and says so in the run's notes. `late_join=False` draws none."""
    if not capabilities.schedules:
        return Schedule()
    merge = draw(first_is_default(*MERGES))
    low = draw(st.integers(1, 8))
    fields: dict = {
        "merge": merge,
        "seed": draw(st.integers(0, 1000)),
        "batch": (low, low + draw(st.integers(0, 63))),
        "skew_ms": draw(first_is_default(0, 5, 1000)),
    }
    if merge == "lagging":
        fields["lag"] = draw(st.integers(0, 40))
    if draw(st.integers(0, 1)):
        fields.update(restarts=draw(st.integers(1, 3)), restart=draw(first_is_default(*RESTART_KINDS)),
                      commit_every=draw(st.integers(1, 8)))
    if late_join:
        fields["late_join"] = draw(first_is_default(False, True))
    return Schedule(**fields)


def upstream_histories(max_steps: int = 10) -> SearchStrategy[list[HistoryEvent]]:
    """Histories of the stateful upstream model, small enough that an example takes a fraction of
    a second: two databases, up to three tables, every DDL kind, CREATE TABLE the likeliest."""
    # CREATE TABLE three times as likely as another DDL: bugs of ordering across tables (rows of
    # tables interleaved, re-sent below another table's commit ts) need two tables with rows.
    kinds = ("create_table",) * 2 + DDL_KINDS
    return histories(max_steps=max_steps, max_tables=3, max_statements=3, max_columns=4, ddl_kinds=kinds)


@st.composite
def many_table_histories(draw, max_steps: int = 10) -> list[HistoryEvent]:
    """Histories of the same upstream model that start with two or three tables and go on mostly
    with transactions (a DDL one step in four): rows of several tables between two DDL barriers,
    which the bugs of order across tables need (a row delivered below another table's commit ts
    in its partition, pingcap/ticdc#4051) and the plain mix draws rarely."""
    driver = Driver(Upstream(DEFAULT_START_MS), schemas=("d0", "d1")[:draw(st.integers(1, 2))], max_tables=3,
                    max_statements=3, max_columns=4)
    driver.create_schemas()
    for _ in range(draw(st.integers(2, 3))):
        driver.create_table(draw)
    for _ in range(max_steps):
        if draw(st.integers(0, 7)) == 0:  # stop: the simplest choice, so histories shrink short
            break
        if draw(st.integers(0, 3)) == 3:
            driver.step(draw, draw(st.sampled_from(DDL_KINDS)))
        else:
            driver.transaction(draw)
    return driver.events


@dataclass(frozen=True)
class FuzzCase:
    """One drawn example: what upstream did, how TiCDC was configured, how the suite delivers."""

    history: tuple[HistoryEvent, ...]
    config: SinkConfig
    schedule: Schedule
    seed: int  # the simulator's seed (table interleaving, where failovers fall)

    @property
    def size(self) -> dict:
        """How big the case is: history events, transactions, row changes, DDL."""
        txns = [e for e in self.history if isinstance(e, Transaction)]
        return {"events": len(self.history), "transactions": len(txns),
                "row_changes": sum(len(t.changes) for t in txns),
                "ddl": sum(1 for e in self.history if isinstance(e, DDL))}


@st.composite
def fuzz_cases(draw, encoding: str, capabilities: Capabilities, max_steps: int = 10,
               config: Optional[SinkConfig] = None, known_gaps: bool = False) -> FuzzCase:
    """A FuzzCase for `encoding`; `config` fixes the configuration instead of drawing one;
    `known_gaps` draws the parts of the space KNOWN_GAPS leaves out too."""
    # One history in three starts with several tables (shrinking goes toward the plain mix).
    shape = many_table_histories if draw(st.integers(0, 2)) == 2 else upstream_histories
    history = tuple(draw(shape(max_steps)))
    # Without a primary key a message may name no key columns (Canal-JSON pkNames): rows are told apart by image.
    keyless = any(isinstance(e, DDL) and e.table_after is not None and e.table_after.primary_key is None
                  for e in history)
    tables = {(c.table.schema, c.table.table) for e in history if isinstance(e, Transaction) for c in e.changes}
    exchanges = any(isinstance(e, DDL) and e.ddl_type is DDLType.EXCHANGE_TABLE_PARTITION for e in history)
    drawn = config if config is not None else draw(sink_configs(encoding, known_gaps, keyless, len(tables), exchanges))
    partitioned = any(isinstance(e, DDL) and e.table_after is not None and e.table_after.partitioning is not None
                      for e in history)
    schedule = draw(schedules(capabilities, late_join=known_gaps or not partitioned))  # late-join-partitions
    return FuzzCase(history, drawn, schedule, draw(st.integers(0, 255)))
