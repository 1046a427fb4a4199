"""TiCDC's Simple protocol (spec 004), JSON and Avro encodings.

Broadcast rules, spec 004 "Message generation and sending rules": DDL and WATERMARK go to every
partition of the topic; BOOTSTRAP is needed before a table's rows (the simulator schedules it).
"""
from __future__ import annotations

from .. import EncoderModule
from .encoder import new_encoder

PROTOCOL = EncoderModule(
    name="simple",
    new_encoder=new_encoder,
    ddl_to_all_partitions=lambda config: True,
    sends_watermarks=lambda config: True,
    uses_bootstrap=True,
)
