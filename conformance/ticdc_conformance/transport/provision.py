"""Where the suite's Kafka broker comes from: testcontainers' Kafka where a Docker engine answers,
else the local KRaft broker run from the jars (broker.py). Either is used the same way:

    with provision_broker() as broker:
        publish(records_dir, broker.bootstrap)

Both keep records the same way (broker.TEST_BROKER_SETTINGS: no topic made by a client's request,
nothing deleted by age, no timestamp refused) and, by default, the same Kafka release. Setting
TICDC_CONFORMANCE_BROKER=local keeps the local broker even where Docker answers.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Optional, Protocol

from .broker import START_TIMEOUT_S, TEST_BROKER_SETTINGS, KafkaBroker
from .errors import BrokerError

if TYPE_CHECKING:
    from testcontainers.community.kafka import KafkaContainer

BROKER_ENV = "TICDC_CONFORMANCE_BROKER"
IMAGE_ENV = "TICDC_CONFORMANCE_KAFKA_IMAGE"
# Confluent Platform 8.1 is Apache Kafka 4.1, the release the local broker runs (broker.py); its
# image is the one testcontainers' KafkaContainer knows how to start (in KRaft mode).
DEFAULT_IMAGE = "confluentinc/cp-kafka:8.1.0"
# Where the Docker SDK looks when nothing names an engine.
DEFAULT_DOCKER_HOST = "unix:///var/run/docker.sock"
# A Docker engine answers its ping in milliseconds; a missing socket fails at once. The bound keeps
# a host that accepts connections but never answers from holding up a test session.
PROBE_TIMEOUT_S = 3


class Broker(Protocol):
    """A started broker's address, and how long it took to start ("start_s")."""

    @property
    def bootstrap(self) -> str: ...

    timings: dict[str, float]

    def start(self) -> "Broker": ...

    def stop(self) -> None: ...

    def __enter__(self) -> "Broker": ...

    def __exit__(self, *exc: object) -> None: ...


@dataclass(frozen=True)
class DockerEngine:
    """The answer of the Docker engine testcontainers would use."""

    host: str
    answers: bool
    reason: str = ""


def docker_host() -> str:
    """The engine testcontainers would talk to: its own setting, DOCKER_HOST, the current Docker
    context, else the default socket."""
    try:
        from testcontainers.core.docker_client import get_docker_host
    except ImportError:
        return os.environ.get("DOCKER_HOST") or DEFAULT_DOCKER_HOST
    return get_docker_host() or DEFAULT_DOCKER_HOST


def docker_engine(host: Optional[str] = None, timeout_s: float = PROBE_TIMEOUT_S) -> DockerEngine:
    """Pings the Docker engine at `host` (default: docker_host()), waiting at most about `timeout_s`."""
    host = host or docker_host()
    try:
        import docker
    except ImportError:
        return DockerEngine(host, False, "the Docker SDK is not installed (pip install '.[kafka]')")
    try:
        client = docker.DockerClient(base_url=host, timeout=timeout_s)
        try:
            client.ping()
        finally:
            client.close()
    except Exception as e:  # the SDK raises its own, requests' and the socket's errors alike
        return DockerEngine(host, False, f"no Docker engine answers at {host} ({_first_line(e)})")
    return DockerEngine(host, True)


def _first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0][:200]


class ContainerBroker:
    """testcontainers' Kafka (KRaft, one node) with the local broker's settings; `bootstrap` is its
    address on this machine once started. The container is made at start(): making one already
    talks to the Docker engine."""

    def __init__(self, image: Optional[str] = None, start_timeout_s: float = START_TIMEOUT_S,
                 echo: Optional[Callable[[str], None]] = None) -> None:
        self.image = image or os.environ.get(IMAGE_ENV) or DEFAULT_IMAGE
        self.start_timeout_s = start_timeout_s
        self.echo = echo
        self.container: Optional[KafkaContainer] = None
        self._bootstrap: Optional[str] = None
        self.timings: dict[str, float] = {}

    @property
    def bootstrap(self) -> str:
        if self._bootstrap is None:
            raise BrokerError("the broker is not started")
        return self._bootstrap

    def start(self) -> "ContainerBroker":
        if self.container is not None:
            return self
        from testcontainers.community.kafka import KafkaContainer

        started = time.monotonic()
        container = KafkaContainer(self.image).with_kraft()
        for key, value in container_environment(TEST_BROKER_SETTINGS).items():
            container.with_env(key, value)
        if self.echo:
            self.echo(f"starting Kafka in a container ({self.image})")
        self.container = container
        try:
            container.start(timeout=int(self.start_timeout_s))
            self._bootstrap = container.get_bootstrap_server()
        except Exception as e:
            self.stop()
            raise BrokerError(f"the Kafka container ({self.image}) did not start: {_first_line(e)}") from e
        self.timings["start_s"] = time.monotonic() - started
        return self

    def stop(self) -> None:
        """Stops and removes the container (if any); safe to call twice."""
        container, self.container, self._bootstrap = self.container, None, None
        if container is not None:
            container.stop()

    def __enter__(self) -> "ContainerBroker":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def container_environment(settings: dict[str, str]) -> dict[str, str]:
    """Broker settings as the Confluent image takes them: KAFKA_ and the name in capitals, dots
    as underscores (an underscore in a name is doubled)."""
    return {"KAFKA_" + name.replace("_", "__").replace(".", "_").upper(): value for name, value in settings.items()}


def provision_broker(engine: Optional[DockerEngine] = None,
                     echo: Optional[Callable[[str], None]] = None,
                     **local: Any) -> Broker:
    """The broker for this machine, not yet started: a container where a Docker engine answers
    (probed unless `engine` is given), else the local broker (`local` are KafkaBroker's arguments)."""
    if os.environ.get(BROKER_ENV, "").strip().lower() != "local":
        engine = engine or docker_engine()
        if engine.answers:
            return ContainerBroker(echo=echo)
    return KafkaBroker(echo=echo, **local)
