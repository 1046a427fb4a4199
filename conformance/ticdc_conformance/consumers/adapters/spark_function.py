"""`spark:MODULE:FUNCTION`: a user's PySpark function as the consumer under test
(docs/consumer-modes.md).

The suite reads the case's record files into a DataFrame with exactly the columns of Spark's
Kafka source (transport/spark_source.py `record_files_dataframe`) and calls
`FUNCTION(df, header)`, `header` being the manifest (protocol, encoding, sink options under
TiCDC's names, topics) and `run_dir`, the folder its relative paths (claim-check files) resolve against. What it returns, the adapter writes into OUT:

- `{"schema.table": DataFrame, …}`: each DataFrame is a table's final rows, its columns the
  table's, values typed as Spark types (mapped as arrow_rows.py says);
- one DataFrame with the string columns `schema`, `table`, `row` (the row as a JSON object in
  the canonical form, taken as it is);
- a dict `{"tables": <either of the above>, "applied": DataFrame, "states": DataFrame}`, where
  `applied` holds the lines of OUT/applied.ndjson (columns `seq` long, `line` string: the JSON
  entry, written in `seq` order) and `states` (optional, with `applied`) the lines of
  OUT/states/ (`schema`, `table`, `line`). Without `applied` the run shows its final state only.

MODULE is imported by name (the working folder comes first on the path) or, when it ends in
`.py`, from that file. Whatever goes wrong on the user's side -- no such module or function, an
exception in it, a return value of another form -- is the run's error naming the spec, with the
traceback in the log file it names; never an exception out of the adapter.
"""
from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import traceback
from pathlib import Path
from typing import Any, Callable, Optional

from ticdc_conformance.consumers.output import final_file_name
from ticdc_conformance.errors import ConsumerError

from .arrow_rows import canonical_rows, schedule_note, split_table_name, write_table
from .interface import Capabilities, ConsumerRun, RunOptions, Stream, shown_by_output
from .reference import SparkConsumer

LOG_FILE = "consumer.log"
_MODULE = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")
_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")
_ROW_COLUMNS = {"schema", "table", "row"}


class FunctionFailed(ConsumerError):
    """The user's function could not be run, failed, or returned something the adapter cannot write."""


def parse_function_spec(rest: str) -> tuple[str, str]:
    """`MODULE:FUNCTION` (MODULE a dotted name or a .py file) -> (module, function); ValueError otherwise."""
    module, sep, function = rest.rpartition(":")
    if not sep or not module or not _IDENTIFIER.match(function):
        raise ValueError(f"spark:{rest} names no function: the form is spark:MODULE:FUNCTION "
                         "(MODULE a dotted module name or a .py file)")
    if not module.endswith(".py") and not _MODULE.match(module):
        raise ValueError(f"spark:{rest}: {module!r} is neither a module name nor a .py file")
    return module, function


def load_function(module: str, function: str) -> Callable:
    """The function; FunctionFailed naming what is missing (the import's own error included)."""
    try:
        if module.endswith(".py"):
            path = Path(module).resolve()
            if not path.is_file():
                raise FunctionFailed(f"no such file {path}")
            spec = importlib.util.spec_from_file_location(path.stem, path)
            assert spec is not None and spec.loader is not None
            loaded = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(loaded)
        else:
            cwd = str(Path.cwd())
            if cwd not in sys.path:  # as `python -m` would find a module of the working folder
                sys.path.insert(0, cwd)
            loaded = importlib.import_module(module)
    except FunctionFailed:
        raise
    except Exception as e:  # the user's module: any error in its body is theirs to see, named
        raise FunctionFailed(f"cannot import {module}: {type(e).__name__}: {e}") from e
    fn = getattr(loaded, function, None)
    if not callable(fn):
        raise FunctionFailed(f"module {module} has no function {function!r}")
    return fn


def _is_dataframe(value: Any) -> bool:
    from pyspark.sql import DataFrame

    return isinstance(value, DataFrame)


def write_function_result(result: Any, out: Path, time_zone: str) -> None:
    """Writes what the function returned into OUT (module docstring); FunctionFailed for any other form."""
    tables, applied, states = result, None, None
    if isinstance(result, dict) and "tables" in result:
        unknown = sorted(set(result) - {"tables", "applied", "states"})
        if unknown:
            raise FunctionFailed(f"returned a dict with unknown key(s) {unknown}: the keys are tables, applied, states")
        tables, applied, states = result["tables"], result.get("applied"), result.get("states")
        if states is not None and applied is None:
            raise FunctionFailed("returned states without an applied log: states are read only beside one")
    final = out / "final"
    final.mkdir(parents=True, exist_ok=True)
    if _is_dataframe(tables):
        _write_row_frame(tables, final)
    elif isinstance(tables, dict):
        for name, df in sorted(tables.items()):
            if not isinstance(name, str) or not _is_dataframe(df):
                raise FunctionFailed(f"returned {name!r}: {type(df).__name__}; a table's entry is "
                                     "\"schema.table\": DataFrame")
            try:
                schema, table = split_table_name(name)
            except ValueError as e:
                raise FunctionFailed(f"returned a table named {e}") from None
            write_table(final, schema, table, canonical_rows(df.toArrow(), time_zone))
    else:
        raise FunctionFailed(f"returned {type(tables).__name__}; expected a dict {{\"schema.table\": DataFrame}}, "
                             "a DataFrame with columns schema, table, row, or {\"tables\": …, \"applied\": …}")
    if applied is not None:
        _columns(applied, {"seq", "line"}, "its applied log")
        _write_lines(applied, ["seq"], lambda r: out / "applied.ndjson", "line")
    if states is not None:
        _columns(states, {"schema", "table", "line"}, "its states")
        (out / "states").mkdir(exist_ok=True)
        _write_lines(states, ["schema", "table"], lambda r: out / "states" / final_file_name(r["schema"], r["table"]),
                     "line")


def _columns(df, wanted: set[str], what: str) -> None:
    if not _is_dataframe(df) or not wanted <= set(df.columns):
        have = df.columns if _is_dataframe(df) else type(df).__name__
        raise FunctionFailed(f"returned {what} as {have}; it needs the columns {sorted(wanted)}")


def _write_row_frame(df, final: Path) -> None:
    _columns(df, _ROW_COLUMNS, "its tables")
    _write_lines(df.select("schema", "table", "row"), ["schema", "table"],
                 lambda r: final / final_file_name(r["schema"], r["table"]), "row")


def _write_lines(df, order: list[str], path_of: Callable[[Any], Path], text: str) -> None:
    """Each row's `text` column as one line of the file `path_of(row)` names, in `order`; one file open at a time."""
    current, f = None, None
    try:
        for r in df.orderBy(*order).toLocalIterator():
            path = path_of(r)
            if path != current:
                if f is not None:
                    f.close()
                current, f = path, open(path, "ab")
            # A newline can only stand between JSON tokens (never inside a string): a space is the same JSON.
            f.write((r[text] or "null").replace("\n", " ").encode() + b"\n")
    finally:
        if f is not None:
            f.close()


class SparkFunctionConsumer(SparkConsumer):
    """A user's PySpark function `FUNCTION(df, header) -> tables` on the suite's Spark session."""

    capabilities = Capabilities(applied_log=True, states=True)  # the most a returned applied log shows
    runs = "a PySpark function on the suite's Spark session"

    def __init__(self, rest: str, spark: Any = None, master: Optional[str] = None) -> None:
        self.module, self.function = parse_function_spec(rest)  # ValueError now, before any encoding runs
        self.spec = f"spark:{rest}"
        super().__init__(spark, master)

    def run(self, stream: Stream, out: Path, options: RunOptions = RunOptions()) -> ConsumerRun:
        from ticdc_conformance.transport.record_files import checked_record_files
        from ticdc_conformance.transport.spark_source import record_files_dataframe

        log = stream.folder / LOG_FILE
        log.write_text("")
        try:
            fn = load_function(self.module, self.function)
            checked_record_files(Path(stream.records))  # a bad record file is named before the JVM starts
            spark = self.session(stream)
            df = record_files_dataframe(spark, Path(stream.records).resolve())
            try:
                # The manifest's relative paths (claim-check files) resolve against the folder holding it.
                header = {**stream.manifest, "run_dir": str(Path(stream.manifest_path).resolve().parent)}
                result = fn(df, header)
            except Exception as e:  # the user's code: its error is the run's, its traceback in the log
                log.write_text(traceback.format_exc())
                raise FunctionFailed(f"{self.function} raised {type(e).__name__}: {_first_line(e)}") from e
            try:
                write_function_result(result, out, stream.manifest.get("sink", {}).get("time-zone") or "UTC")
            except FunctionFailed:
                raise
            except Exception as e:  # a query of the returned DataFrames failed when Spark ran it
                log.write_text(traceback.format_exc())
                raise FunctionFailed(f"its result could not be written: {type(e).__name__}: {_first_line(e)}") from e
        except ConsumerError as e:
            where = f" (traceback in {log})" if log.stat().st_size else ""
            return ConsumerRun(self.spec, out, shown_by_output(out), log=log, error=f"{self.spec}: {e}{where}",
                               notes=schedule_note(options, "the function is given all records as one DataFrame"))
        return ConsumerRun(self.spec, out, shown_by_output(out), log=log,
                           notes=schedule_note(options, "the function is given all records as one DataFrame"))


def _first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0][:500]
