"""The sink options that change how an Open Protocol message reads, under TiCDC's names.

Missing keys take TiCDC's defaults; keys that do not concern Open Protocol (a manifest carries every
sink option) are ignored.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ticdc_conformance.protocols.common.compression import codec_option
from ticdc_conformance.protocols.common.wire import bool_option


@dataclass(frozen=True)
class OpenProtocolOptions:
    """The sink options that change how a message reads, with TiCDC's defaults."""

    # TiCDC pkg/sink/codec/common/config.go: OpenOutputOldValue defaults to true.
    output_old_value: bool = True
    large_message_handle_compression: str = "none"
    # TiCDC pkg/sink/codec/open/codec.go: a delete carries the handle-key columns only (spec 002, Log 9).
    delete_only_output_handle_key_columns: bool = False
    # Not a TiCDC option: false decodes every message by the reference path alone.
    fast_path: bool = True

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> "OpenProtocolOptions":
        return cls(
            output_old_value=bool_option(options, "output-old-value", True),
            large_message_handle_compression=codec_option(options),
            delete_only_output_handle_key_columns=bool_option(options, "delete-only-output-handle-key-columns", False),
            fast_path=bool_option(options, "fast-path", True),
        )
