"""The sink options that change what a Canal-JSON record contains, under TiCDC's names.

Missing keys take TiCDC's defaults (TiCDC pkg/sink/codec/common/config.go: NewConfig); keys that do not
concern Canal-JSON (a manifest carries every sink option) are ignored.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ticdc_conformance.protocols.common.compression import codec_option
from ticdc_conformance.protocols.common.wire import bool_option, remembers_last

LARGE_MESSAGE_HANDLE_OPTIONS = ("none", "handle-key-only", "claim-check")


@dataclass(frozen=True)
class CanalJSONOptions:
    enable_tidb_extension: bool = False
    content_compatible: bool = False
    only_output_updated_columns: bool = False
    delete_only_output_handle_key_columns: bool = False
    large_message_handle_option: str = "none"
    large_message_handle_compression: str = "none"
    # Not a TiCDC option: false decodes every message by the reference path alone (decoder.py).
    fast_path: bool = True


def _choice(options: Mapping[str, Any], name: str, allowed: tuple[str, ...]) -> str:
    value = options.get(name) or "none"
    if value not in allowed:
        raise ValueError(f"option {name!r} must be one of {', '.join(allowed)}, got {value!r}")
    return value


@remembers_last
def parse_options(options: Mapping[str, Any] | None) -> CanalJSONOptions:
    options = options or {}
    content_compatible = bool_option(options, "content-compatible", False)
    return CanalJSONOptions(
        enable_tidb_extension=bool_option(options, "enable-tidb-extension", False),
        content_compatible=content_compatible,
        # TiCDC pkg/sink/codec/common/config.go turns only-output-updated-columns on whenever
        # content-compatible is set, as official Canal's "old" carries changed columns only (spec 003).
        only_output_updated_columns=content_compatible or bool_option(options, "only-output-updated-columns", False),
        delete_only_output_handle_key_columns=bool_option(options, "delete-only-output-handle-key-columns", False),
        large_message_handle_option=_choice(options, "large-message-handle-option", LARGE_MESSAGE_HANDLE_OPTIONS),
        large_message_handle_compression=codec_option(options),
        fast_path=bool_option(options, "fast-path", True),
    )
