"""Which Kafka broker the suite gets: testcontainers' Kafka where a Docker engine answers, the local
KRaft broker elsewhere; how the Docker engine is asked; the container's settings are the local broker's."""
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Optional

import pytest

from ticdc_conformance.transport.broker import TEST_BROKER_SETTINGS, KafkaBroker
from ticdc_conformance.transport.errors import BrokerError
from ticdc_conformance.transport.provision import (
    BROKER_ENV,
    ContainerBroker,
    DockerEngine,
    container_environment,
    docker_engine,
    provision_broker,
)
from ticdc_contract.record import KafkaRecord
from ticdc_contract.record_files import RecordFileWriter

pytest.importorskip("docker")


class _FakeEngine(BaseHTTPRequestHandler):
    """The two calls the Docker SDK makes to find an engine: its API version, then a ping."""

    def do_GET(self) -> None:
        if self.path.endswith("/version"):
            body = json.dumps({"ApiVersion": "1.44", "Version": "25.0.0"}).encode()
        elif self.path.endswith("/_ping"):
            body = b"OK"
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def answering_engine():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeEngine)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"tcp://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_an_engine_that_answers_gets_the_container_broker_unstarted(answering_engine, monkeypatch):
    monkeypatch.delenv(BROKER_ENV, raising=False)
    engine = docker_engine(answering_engine)
    assert engine == DockerEngine(answering_engine, True)
    broker = provision_broker(engine)
    assert isinstance(broker, ContainerBroker)
    assert broker.container is None  # nothing asked of Docker until start()
    with pytest.raises(BrokerError, match="the broker is not started"):
        broker.bootstrap


def test_the_local_broker_can_be_asked_for_where_docker_answers(answering_engine, monkeypatch):
    monkeypatch.setenv(BROKER_ENV, "local")
    broker = provision_broker(docker_engine(answering_engine), heap="256m")
    assert isinstance(broker, KafkaBroker) and broker.heap == "256m" and broker.process is None


def test_without_an_engine_the_local_broker_is_provisioned(tmp_path, monkeypatch):
    monkeypatch.delenv(BROKER_ENV, raising=False)
    host = f"unix://{tmp_path / 'docker.sock'}"
    started = time.monotonic()
    engine = docker_engine(host)
    assert time.monotonic() - started < 2  # a missing socket fails at once
    assert not engine.answers and engine.reason.startswith(f"no Docker engine answers at {host} (")
    broker = provision_broker(engine, heap="256m")
    assert isinstance(broker, KafkaBroker) and broker.heap == "256m" and broker.process is None


def test_an_engine_that_never_answers_does_not_hold_up_the_session():
    with socket.socket() as silent:  # accepts connections (the kernel's backlog), never replies
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        host = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        started = time.monotonic()
        engine = docker_engine(host, timeout_s=0.5)
        assert time.monotonic() - started < 5
    assert not engine.answers and engine.reason.startswith(f"no Docker engine answers at {host}")


def test_the_container_gets_the_local_brokers_settings_as_the_confluent_image_reads_them():
    env = container_environment(TEST_BROKER_SETTINGS)
    assert env["KAFKA_AUTO_CREATE_TOPICS_ENABLE"] == "false"
    assert env["KAFKA_LOG_RETENTION_MS"] == "-1"
    assert container_environment({"a_b.c": "1"}) == {"KAFKA_A__B_C": "1"}

    def confluent_name(variable: str) -> str:  # the image's rule: _ -> ., __ -> _
        return variable.removeprefix("KAFKA_").lower().replace("__", "\0").replace("_", ".").replace("\0", "_")

    assert {confluent_name(k): v for k, v in env.items()} == TEST_BROKER_SETTINGS


@pytest.mark.kafka
@pytest.mark.timeout(900)
def test_where_docker_answers_the_suite_broker_is_a_container_keeping_every_record(tmp_path, monkeypatch):
    monkeypatch.delenv(BROKER_ENV, raising=False)
    engine = docker_engine()
    if not engine.answers:
        pytest.skip(engine.reason)
    from ticdc_conformance.transport.kafka_io import kafka_records, publish

    # Timestamps a broker with default settings would refuse or delete by age.
    records = [KafkaRecord("far", 0, 0, b"k", b"1970", 1), KafkaRecord("far", 0, 1, None, b"2100", 4102444800000)]
    with RecordFileWriter(tmp_path / "records") as w:
        w.write_all(records)
    (tmp_path / "manifest.json").write_text(json.dumps({"topics": {"far": 1}, "sink": {"max-message-bytes": 1024}}))
    with provision_broker(engine) as broker:
        assert isinstance(broker, ContainerBroker)
        publish(Path(tmp_path / "records"), broker.bootstrap)
        assert list(kafka_records(broker.bootstrap, "far", timeout_s=30)) == records



class _FakeKafkaContainer:
    """Stands in for testcontainers' KafkaContainer: records what the broker asks of it."""

    made: list["_FakeKafkaContainer"] = []
    start_error: Optional[Exception] = None

    def __init__(self, image: str) -> None:
        self.image, self.env, self.kraft, self.calls = image, {}, False, []
        _FakeKafkaContainer.made.append(self)

    def with_kraft(self) -> "_FakeKafkaContainer":
        self.kraft = True
        return self

    def with_env(self, key: str, value: str) -> "_FakeKafkaContainer":
        self.env[key] = value
        return self

    def start(self, timeout: int) -> "_FakeKafkaContainer":
        self.calls.append(("start", timeout))
        if self.start_error is not None:
            raise self.start_error
        return self

    def get_bootstrap_server(self) -> str:
        return "localhost:32771"

    def stop(self) -> None:
        self.calls.append(("stop",))


@pytest.fixture
def fake_containers(monkeypatch) -> list[_FakeKafkaContainer]:
    import testcontainers.community.kafka as tc_kafka

    monkeypatch.setattr(_FakeKafkaContainer, "made", [])
    monkeypatch.setattr(tc_kafka, "KafkaContainer", _FakeKafkaContainer)
    return _FakeKafkaContainer.made


def test_the_container_broker_runs_kraft_kafka_with_the_settings_and_removes_it_after(fake_containers):
    with ContainerBroker(image="example/kafka:1", start_timeout_s=90) as broker:
        (container,) = fake_containers
        assert (container.image, container.kraft, container.calls) == ("example/kafka:1", True, [("start", 90)])
        assert container.env == container_environment(TEST_BROKER_SETTINGS)
        assert broker.bootstrap == "localhost:32771" and broker.timings["start_s"] >= 0
    assert container.calls[-1] == ("stop",) and broker.container is None
    with pytest.raises(BrokerError, match="the broker is not started"):
        broker.bootstrap


def test_a_container_that_cannot_start_is_a_broker_error_and_is_removed(fake_containers, monkeypatch):
    monkeypatch.setattr(_FakeKafkaContainer, "start_error", RuntimeError("image pull refused\nretry later"))
    broker = ContainerBroker(image="example/kafka:1", start_timeout_s=60)
    with pytest.raises(BrokerError, match=r"^the Kafka container \(example/kafka:1\) did not start: image pull refused$"):
        broker.start()
    assert broker.container is None and fake_containers[0].calls == [("start", 60), ("stop",)]
