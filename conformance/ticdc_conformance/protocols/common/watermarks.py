"""Whether a stream carries watermarks, from the sink options a consumer is given (the manifest).

- Open Protocol: always; "Resolved Events are periodically broadcasted to each MQ Partition"
  (spec 002); the decoder reads a Resolved event (`"t": 3`) as a watermark (open_protocol/decoder.py).
- Simple (JSON and Avro): always; WATERMARK events are sent periodically, once a second, to every
  partition of the topic, to mark the changefeed's progress (spec 004, "WATERMARK").
- Canal-JSON: only with `enable-tidb-extension`; "TiCDC sends a WATERMARK Event only when you set
  enable-tidb-extension to true" (spec 003, "WATERMARK Event"); the decoder refuses a
  TIDB_WATERMARK otherwise (canal_json/decoder.py).
- Debezium: only with `enable-tidb-extension`; "The WATERMARK event applies only to the TiDB
  extension field and takes effect when you set enable-tidb-extension to true" (spec 000).

A consumer of a stream with watermarks can show the order it applied things in (the checkpoints of
its applied log); one of a stream without them cannot, and is judged on its final state.
"""
from __future__ import annotations

from typing import Any, Mapping

from ticdc_conformance.protocols.common.wire import bool_option

_ALWAYS = frozenset({"open-protocol", "simple"})
_WITH_TIDB_EXTENSION = frozenset({"canal-json", "debezium"})


def carries_watermarks(protocol: str, options: Mapping[str, Any]) -> bool:
    if protocol in _ALWAYS:
        return True
    if protocol in _WITH_TIDB_EXTENSION:
        return bool_option(options, "enable-tidb-extension", False)
    raise ValueError(f"unknown protocol {protocol!r}; expected one of "
                     f"{', '.join(sorted(_ALWAYS | _WITH_TIDB_EXTENSION))}")
