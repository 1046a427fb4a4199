"""A local PostgreSQL server for consumers that write their tables into a database (the `kafka:`
mode's `output=jdbc`, docs/consumer-modes.md), and the tables read back in the canonical form.

`PostgresServer` runs Debian's PostgreSQL (`initdb` and `postgres` from PATH or
/usr/lib/postgresql/<version>/bin) as a child process on 127.0.0.1 with a fresh data folder,
trust authentication and no fsync: a scratch database that lives as long as the suite. Run as
root, the server runs as the `postgres` user (PostgreSQL refuses root). It is always stopped: by
`stop()` or leaving the `with` block, at interpreter exit, and by the kernel if this process is
killed outright (the child asks for SIGTERM when its parent dies). `create_database()` gives
each consumer run an empty database and its JDBC URL.

`database_tables(url)` reads every table of every schema but PostgreSQL's own, each column cast
to text and mapped to the canonical JSON value (docs/fidelity.md "Accepted forms" lists what the
checks accept besides the canonical form): integers as numbers, NUMERIC as a number when integral
and else as its decimal text (scale kept), REAL/DOUBLE as numbers (REAL in float32's
shortest print), BOOLEAN as JSON booleans, BYTEA as base64, DATE/TIMESTAMP/TIME as TiDB prints
them (fraction digits padded to the column's declared precision; TIMESTAMPTZ in the session time
zone, UTC unless given, without its offset), JSON/JSONB as their text, anything else as its text.

Client: psycopg 3 (the project's `kafka` extra).
"""
from __future__ import annotations

import atexit
import base64
import ctypes
import os
import pwd
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Optional
from urllib.parse import parse_qs, urlsplit

from .broker import free_port
from .errors import TransportError

START_TIMEOUT_S = 60.0
SERVER_USER = "postgres"  # the OS user the server runs as when the suite runs as root
SUPERUSER = "postgres"  # the database superuser initdb makes
BIN_ENV = "TICDC_CONFORMANCE_POSTGRES_BIN"  # a folder holding initdb and postgres
SYSTEM_SCHEMAS = ("pg_catalog", "information_schema", "pg_toast")
_DEBIAN_BIN = Path("/usr/lib/postgresql")


class PostgresUnavailable(TransportError):
    """No PostgreSQL server could be started here (no binaries, no client library, start failed)."""


def postgres_bin() -> Optional[Path]:
    """The folder holding `initdb` and `postgres`: $TICDC_CONFORMANCE_POSTGRES_BIN, the one of
    `initdb` on PATH, else Debian's newest /usr/lib/postgresql/<version>/bin; None when none has both."""
    candidates = [Path(os.environ[BIN_ENV])] if os.environ.get(BIN_ENV) else []
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    if _DEBIAN_BIN.is_dir():
        versions = sorted((p for p in _DEBIAN_BIN.iterdir() if p.name.isdigit()), key=lambda p: int(p.name))
        candidates += [v / "bin" for v in reversed(versions)]
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "postgres").is_file():
            return folder
    return None


def _client():
    try:
        import psycopg
    except ImportError:
        raise PostgresUnavailable("reading a consumer's database needs psycopg: "
                                  "pip install 'ticdc-conformance[kafka]'") from None
    return psycopg


def _as_server_user() -> Optional[tuple[int, int]]:
    """(uid, gid) to run the server as: the `postgres` user when this process is root, else None."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam(SERVER_USER)
    except KeyError:
        raise PostgresUnavailable(f"PostgreSQL refuses to run as root and there is no {SERVER_USER!r} user "
                                  "to run it as") from None
    return entry.pw_uid, entry.pw_gid


def _child_setup(ids: Optional[tuple[int, int]]) -> Callable[[], None]:
    def setup() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the suite's to handle
        if ids is not None:
            os.setgid(ids[1])
            os.setuid(ids[0])
        try:  # after setuid: changing credentials clears the parent-death signal
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    return setup


class PostgresServer:
    """A scratch PostgreSQL server on 127.0.0.1; `port` once started."""

    def __init__(self, bin_dir: Optional[Path] = None, start_timeout_s: float = START_TIMEOUT_S) -> None:
        self.bin_dir = bin_dir
        self.start_timeout_s = start_timeout_s
        self.port: Optional[int] = None
        self.folder: Optional[Path] = None
        self.proc: Optional[subprocess.Popen] = None
        self.timings: dict[str, float] = {}
        self._databases = 0

    @property
    def log_file(self) -> Path:
        assert self.folder is not None
        return self.folder / "postgres.log"

    def _run(self, argv: list[str], ids, what: str) -> None:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              preexec_fn=_child_setup(ids))
        if done.returncode != 0:
            raise PostgresUnavailable(f"{what} failed ({' '.join(argv[:1])} exited with {done.returncode}): "
                                      f"{(done.stderr or done.stdout).strip()[-800:]}")

    def start(self) -> "PostgresServer":
        if self.proc is not None:
            return self
        _client()
        bin_dir = self.bin_dir or postgres_bin()
        if bin_dir is None:
            raise PostgresUnavailable(f"no PostgreSQL server binaries (initdb, postgres) on PATH, in ${BIN_ENV} or "
                                      f"under {_DEBIAN_BIN}/<version>/bin; install them (apt-get install postgresql)")
        started = time.monotonic()
        ids = _as_server_user()
        self.folder = Path(tempfile.mkdtemp(prefix="ticdc-conformance-pg-"))
        if ids is not None:
            os.chown(self.folder, *ids)
        data = self.folder / "data"
        atexit.register(self.stop)
        try:
            self._run([str(bin_dir / "initdb"), "-D", str(data), "-U", SUPERUSER, "-A", "trust", "-E", "UTF8",
                       "--locale=C", "--no-sync"], ids, "initdb")
            self.port = free_port()
            argv = [str(bin_dir / "postgres"), "-D", str(data), "-p", str(self.port),
                    "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={self.folder}",
                    "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
            log = os.open(self.log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            if ids is not None:
                os.chown(self.log_file, *ids)
            try:
                self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                             preexec_fn=_child_setup(ids))
            finally:
                os.close(log)
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        self.timings["start_s"] = time.monotonic() - started
        return self

    def _wait_ready(self) -> None:
        psycopg = _client()
        deadline = time.monotonic() + self.start_timeout_s
        while True:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise PostgresUnavailable(f"the PostgreSQL server exited with {self.proc.returncode} while "
                                          f"starting: {self._log_tail()}")
            try:
                psycopg.connect(self.url("postgres"), connect_timeout=2).close()
                return
            except psycopg.OperationalError as e:
                if time.monotonic() > deadline:
                    raise PostgresUnavailable(f"the PostgreSQL server did not accept connections within "
                                              f"{self.start_timeout_s:g}s ({e}); log: {self.log_file}") from None
                time.sleep(0.2)

    def _log_tail(self) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").strip().splitlines()[-10:])
        except OSError:
            return "(no log)"

    def url(self, database: str) -> str:
        """The libpq URL of a database on this server."""
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, prefix: str = "consumer") -> str:
        """A new, empty database; its JDBC URL (jdbc:postgresql://127.0.0.1:PORT/NAME?user=postgres)."""
        if self.proc is None:
            raise PostgresUnavailable("the PostgreSQL server is not started")
        self._databases += 1
        name = f"{re.sub(r'[^a-z0-9_]', '_', prefix.lower())}_{self._databases}"
        with _client().connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        return f"jdbc:postgresql://127.0.0.1:{self.port}/{name}?user={SUPERUSER}"

    def stop(self) -> None:
        """Stops the server (fast shutdown, SIGKILL after 30 s) and removes its folder; safe to call twice."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # PostgreSQL's "fast" shutdown
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        folder, self.folder = self.folder, None
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        atexit.unregister(self.stop)

    def __enter__(self) -> "PostgresServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def libpq_url(jdbc_url: str) -> str:
    """A JDBC URL (jdbc:postgresql://HOST:PORT/DB?user=U&password=P) as libpq's URL; a libpq URL as it is."""
    url = jdbc_url[len("jdbc:"):] if jdbc_url.startswith("jdbc:") else jdbc_url
    parts = urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres") or not parts.path.strip("/"):
        raise ValueError(f"{jdbc_url!r} is no PostgreSQL URL (jdbc:postgresql://HOST:PORT/DATABASE?user=USER)")
    query = parse_qs(parts.query)
    user = (query.get("user") or [parts.username or ""])[0]
    password = (query.get("password") or [parts.password or ""])[0]
    auth = (user + (f":{password}" if password else "") + "@") if user else ""
    host = parts.hostname or "127.0.0.1"
    return f"postgresql://{auth}{host}{f':{parts.port}' if parts.port else ''}{parts.path}"


def connect(url: str, **kwargs: Any):
    """A psycopg connection to a JDBC or libpq URL; PostgresUnavailable naming it when none can be made."""
    psycopg = _client()
    try:
        return psycopg.connect(libpq_url(url), connect_timeout=10, **kwargs)
    except psycopg.OperationalError as e:
        raise PostgresUnavailable(f"cannot connect to {url}: {str(e).strip()}") from None


# --- the tables read back -------------------------------------------------------------------

_TABLES = """
SELECT n.nspname, c.relname, c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg\\_%%' ORDER BY 1, 2"""
_COLUMNS = """
SELECT a.attname, format_type(a.atttypid, a.atttypmod), t.typname FROM pg_attribute a
JOIN pg_type t ON t.oid = a.atttypid WHERE a.attrelid = %s AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum"""
_PRECISION = re.compile(r"\((\d+)\)")
_OFFSET = re.compile(r"[+-]\d{2}(:\d{2}){0,2}$")
_INTEGERS = {"int2", "int4", "int8", "oid"}


def _padded(text: str, declared: str) -> str:
    """A temporal print with its fraction padded to the declared precision (PostgreSQL drops trailing zeros)."""
    m = _PRECISION.search(declared)
    if not m or int(m.group(1)) == 0:
        return text
    digits = int(m.group(1))
    whole, dot, fraction = text.partition(".")
    return f"{whole}.{fraction.ljust(digits, '0')}"


def canonical_value(text: Optional[str], typname: str, declared: str) -> Any:
    """A column value PostgreSQL printed as text, in the canonical JSON form (module docstring)."""
    if text is None:
        return None
    if typname in _INTEGERS:
        return int(text)
    if typname == "numeric":
        if re.fullmatch(r"-?\d+", text):
            value = int(text)  # as a number where JSON writers hold it exactly (64 bits), else as text
            return value if -(1 << 63) <= value < (1 << 64) else text
        return text
    if typname in ("float4", "float8"):
        # PostgreSQL prints the shortest text that reads back as the same float4/float8 (its
        # extra_float_digits = 1), so a REAL holding float32's 0.1 reads back as 0.1, not widened.
        return float(text)
    if typname == "bool":
        return text in ("t", "true")
    if typname == "bytea":
        return base64.b64encode(bytes.fromhex(text[2:] if text.startswith("\\x") else text)).decode()
    if typname in ("timestamp", "time"):
        return _padded(text, declared)
    if typname in ("timestamptz", "timetz"):
        return _padded(_OFFSET.sub("", text), declared)
    return text


def database_tables(url: str, time_zone: str = "UTC") -> Iterator[tuple[str, str, list[str], Iterator[dict]]]:
    """(schema, table, columns, rows) of every table of the database at `url` (JDBC or libpq URL)
    outside PostgreSQL's own schemas, in name order; rows are dicts of canonical values, streamed."""
    with connect(url) as conn:
        conn.execute("SELECT set_config('TimeZone', %s, false), set_config('DateStyle', 'ISO, YMD', false), "
                     "set_config('bytea_output', 'hex', false), set_config('extra_float_digits', '1', false)",
                     (time_zone,))
        tables = conn.execute(_TABLES).fetchall()
        for schema, table, oid in tables:
            columns = conn.execute(_COLUMNS, (oid,)).fetchall()
            names = [c[0] for c in columns]
            select = ", ".join(f'"{n.replace(chr(34), chr(34) * 2)}"::text' for n in names) or "1"
            quoted = '"{}"."{}"'.format(schema.replace('"', '""'), table.replace('"', '""'))

            def rows(select=select, quoted=quoted, columns=columns) -> Iterator[dict]:
                with conn.cursor(name=None) as cur:
                    cur.execute(f"SELECT {select} FROM {quoted}")
                    for record in cur:
                        yield {name: canonical_value(record[i], typ, declared)
                               for i, (name, declared, typ) in enumerate(columns)}
            yield schema, table, names, rows()
