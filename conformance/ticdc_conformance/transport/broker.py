"""A local Apache Kafka broker (KRaft, one node acting as broker and controller) run from the jars.

The jars are Apache Kafka's own, `org.apache.kafka:kafka_2.13` with its runtime dependencies,
resolved from the Maven repository and cached (maven.py); the broker is a child Java process
listening on 127.0.0.1 only, with a bounded heap. It is always stopped: by `stop()`, by leaving
the `with` block, at interpreter exit (atexit), and, should this process die without running
either, by the kernel (the child asks for SIGTERM when its parent dies).

    with KafkaBroker() as broker:
        publish(records_dir, broker.bootstrap)
"""
from __future__ import annotations

import atexit
import base64
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Callable, Optional

from .errors import BrokerError, KafkaUnavailable
from .kafka_io import LONG_MAX, cluster_metadata
from .maven import Module, java_executable, resolve

KAFKA_VERSION_ENV = "TICDC_CONFORMANCE_KAFKA_VERSION"
HEAP_ENV = "TICDC_CONFORMANCE_KAFKA_HEAP"
# Kafka 4.x runs KRaft only and needs Java 17, which Spark 4 needs too.
DEFAULT_KAFKA_VERSION = "4.1.1"
SCALA_BINARY = "2.13"
# Kafka's server jars log through SLF4J but do not depend on a binding; Kafka's own distribution
# ships log4j's SLF4J 1.x binding, at the log4j version that Kafka 4.1 depends on.
LOG4J_SLF4J_BINDING = Module("org.apache.logging.log4j", "log4j-slf4j-impl", "2.24.3")
DEFAULT_HEAP = "512m"
START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 30.0
FORMAT_TIMEOUT_S = 120.0
PORT_ATTEMPTS = 3
LOG_TAIL_LINES = 30
# A test broker with a small heap on a small machine: the quick compiler alone and the serial
# collector halve the broker's start (8 s instead of 16 s on two busy cores) and cut the storage
# formatter's from 7 s to under 3 s; peak throughput is not what it is for.
QUICK_START_JVM = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")


def kafka_version() -> str:
    return os.environ.get(KAFKA_VERSION_ENV) or DEFAULT_KAFKA_VERSION


def kafka_server_jars(version: Optional[str] = None,
                      echo: Optional[Callable[[str], None]] = None) -> tuple[Path, ...]:
    """Apache Kafka's server jars for `version` with everything they need at run time (cached)."""
    version = version or kafka_version()
    server = Module("org.apache.kafka", f"kafka_{SCALA_BINARY}", version)
    return resolve(f"kafka-{version}", (server, LOG4J_SLF4J_BINDING), echo=echo)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cluster_id() -> str:
    """A KRaft cluster id: 16 random bytes in Kafka's Uuid text form (URL-safe base64, unpadded).
    Kafka's Uuid.randomUuid() never makes one that starts with '-', which its tools would take for
    an option; neither does this."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


# How the suite's broker keeps records, wherever it runs (here, or in a container: provision.py).
TEST_BROKER_SETTINGS = {
    # One node: every internal topic has one replica, and one partition where that is allowed.
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "group.initial.rebalance.delay.ms": "0",
    # Topics are made by publish() with the manifest's partition counts, never by a client's request.
    "auto.create.topics.enable": "false",
    # Generated records carry the scenario's commit times, which may lie far in the past or
    # future: nothing is deleted by age and no timestamp is refused.
    "log.retention.ms": "-1",
    "log.message.timestamp.before.max.ms": str(LONG_MAX),
    "log.message.timestamp.after.max.ms": str(LONG_MAX),
    # The machine is small; the defaults (8 I/O threads, 3 network threads) only cost memory.
    "num.network.threads": "2",
    "num.io.threads": "2",
    "num.recovery.threads.per.data.dir": "1",
}


def server_properties(port: int, controller_port: int, data_dir: Path) -> str:
    settings = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@127.0.0.1:{controller_port}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs": str(data_dir),
        **TEST_BROKER_SETTINGS,
    }
    return "".join(f"{k}={v}\n" for k, v in settings.items())


LOG4J2_PROPERTIES = """\
status = warn
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.out.ref = out
logger.state.name = state.change.logger
logger.state.level = warn
"""


def _die_with_parent() -> None:
    """Runs in the child before exec: SIGTERM when the parent dies; Ctrl-C is the parent's to handle."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG (Linux); elsewhere atexit alone stops it
    except (OSError, AttributeError):
        pass


class KafkaBroker:
    """A single-node KRaft broker on 127.0.0.1; `bootstrap` is its address once started."""

    def __init__(self, version: Optional[str] = None, port: Optional[int] = None, heap: Optional[str] = None,
                 work_dir: Optional[Path] = None, start_timeout_s: float = START_TIMEOUT_S,
                 echo: Optional[Callable[[str], None]] = None) -> None:
        self.version = version or kafka_version()
        self.requested_port = port
        self.heap = heap or os.environ.get(HEAP_ENV) or DEFAULT_HEAP
        self._own_dir = work_dir is None
        self.work_dir = Path(work_dir) if work_dir is not None else None
        self.start_timeout_s = start_timeout_s
        self.echo = echo
        self.port: Optional[int] = None
        self.process: Optional[subprocess.Popen] = None
        self.timings: dict[str, float] = {}

    @property
    def bootstrap(self) -> str:
        if self.port is None:
            raise BrokerError("the broker is not started")
        return f"127.0.0.1:{self.port}"

    @property
    def log_file(self) -> Path:
        return self._dir / "broker.log"

    @property
    def _dir(self) -> Path:
        if self.work_dir is None:
            raise BrokerError("the broker is not started")
        return self.work_dir

    def start(self) -> "KafkaBroker":
        if self.process is not None:
            return self
        started = time.monotonic()
        jars = kafka_server_jars(self.version, echo=self.echo)
        self.timings["jars_s"] = time.monotonic() - started
        if self.work_dir is None:
            self.work_dir = Path(tempfile.mkdtemp(prefix="ticdc-kafka-"))
        self.work_dir.mkdir(parents=True, exist_ok=True)
        (self._dir / "log4j2.properties").write_text(LOG4J2_PROPERTIES)
        classpath = os.pathsep.join(map(str, jars))
        atexit.register(self.stop)
        attempts = 1 if self.requested_port else PORT_ATTEMPTS
        for attempt in range(1, attempts + 1):
            try:
                self._launch(classpath)
                break
            except BrokerError as e:
                self._terminate()
                # A port picked free can be taken before the broker binds it: pick again.
                if attempt == attempts or "Address already in use" not in str(e):
                    self.stop()
                    raise
        self.timings["start_s"] = time.monotonic() - started
        return self

    def _launch(self, classpath: str) -> None:
        port = self.requested_port or free_port()
        controller_port = free_port()
        while controller_port == port:
            controller_port = free_port()
        data = self._dir / "data"
        if data.exists():
            shutil.rmtree(data)
        props = self._dir / "server.properties"
        props.write_text(server_properties(port, controller_port, data))
        java = [java_executable(), f"-Xmx{self.heap}", *QUICK_START_JVM, "-XX:+ExitOnOutOfMemoryError", "-Djava.awt.headless=true",
                f"-Dlog4j2.configurationFile={(self._dir / 'log4j2.properties').as_uri()}", "-cp", classpath]
        formatted = time.monotonic()
        with open(self.log_file, "w") as log:
            try:
                fmt = subprocess.run(java + ["kafka.tools.StorageTool", "format",
                                             "-t", cluster_id(), "-c", str(props)],
                                     stdout=log, stderr=subprocess.STDOUT, timeout=FORMAT_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                raise BrokerError(f"formatting the KRaft storage did not finish within {FORMAT_TIMEOUT_S}s; "
                                  f"log: {self.log_file}") from None
            if fmt.returncode != 0:
                raise BrokerError(f"formatting the KRaft storage failed (exit {fmt.returncode}):\n{self.log_tail()}")
            self.timings["format_s"] = time.monotonic() - formatted
            self.process = subprocess.Popen(java + ["kafka.Kafka", str(props)], stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent)
        self.port = port
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        process = self.process
        assert process is not None  # just launched
        while True:
            code = process.poll()
            if code is not None:
                raise BrokerError(f"the broker exited with {code} while starting:\n{self.log_tail()}")
            try:
                metadata = cluster_metadata(self.bootstrap, timeout_s=2.0)
                if metadata.brokers:
                    return
            except KafkaUnavailable:
                pass
            if time.monotonic() > deadline:
                raise BrokerError(f"the broker did not answer on {self.bootstrap} within {self.start_timeout_s:.0f}s:"
                                  f"\n{self.log_tail()}")
            time.sleep(0.2)

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        """The end of the broker's log, stack frames left out; where errors were logged, those lines."""
        try:
            text = self.log_file.read_text(errors="replace").splitlines()
        except (OSError, BrokerError):
            return "(no broker log)"
        text = [line for line in text if not line.lstrip().startswith(("at ", "... "))]
        errors = [line for line in text if any(word in line for word in (" ERROR ", " FATAL ", "Caused by:"))]
        return "\n".join((errors or text)[-lines:])

    def _terminate(self) -> None:
        proc, self.process = self.process, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.terminate()  # SIGTERM: Kafka's shutdown hook closes the logs cleanly
            try:
                proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def wait(self) -> int:
        """Blocks until the started broker exits; its exit code."""
        if self.process is None:
            raise BrokerError("the broker is not started")
        return self.process.wait()

    def stop(self) -> None:
        """Stops the broker (if running) and removes the folder it made; safe to call twice."""
        self._terminate()
        self.port = None
        atexit.unregister(self.stop)
        if self._own_dir and self.work_dir is not None:
            shutil.rmtree(self.work_dir, ignore_errors=True)
            self.work_dir = None

    def __enter__(self) -> "KafkaBroker":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

