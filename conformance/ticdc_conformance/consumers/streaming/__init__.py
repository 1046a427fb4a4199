"""The reference sequential consumer speaking the testee protocol (docs/testee-protocol.md): the
rules of consumers/sequential/consumer.py (`LocalConsumer`), fed by the suite line by line instead of
reading record files, its applied log written as lines, its tables answered on request, its input
kept durable at each commit so it survives a stop or a crash, and a late join from a snapshot.

    python -m ticdc_conformance.consumers.streaming          (run --consumer "cmd:…")
    python:ticdc_conformance.consumers.streaming:StreamingConsumer
"""
from .consumer import StreamingConsumer

__all__ = ["StreamingConsumer"]
