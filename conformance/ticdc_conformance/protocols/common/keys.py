"""Which key identifies a decoded row: the first candidate key whose columns the message carries.

A message names its table's keys (Canal-JSON `pkNames`, Debezium's Kafka key, Open Protocol's
column flags, Simple's table schema), but under `sink.column-selectors` it may carry only some of
those columns: TiCDC lets a selection drop the primary key as long as a whole unique key stays
(TiCDC downstreamadapter/sink/columnselector/column_selector.go verifyIndices; the reference
changefeed tests/integration_tests/debezium_basic/conf/changefeed.toml keeps only `account_id`
of `test.t1 (id int primary key, account_id int not null unique)`).

TiCDC's decoders make a key only of columns the row carries: Canal-JSON marks the pkNames found
in mysqlType (canal_json_decoder.go newTiColumns), Debezium the key fields found among the value's
fields (debezium/decoder.go queryTableInfoFromPayload), Open Protocol the flagged columns the row
holds (open/decoder.go newTiColumns, newTiIndices), Simple the indexes of the table schema
(simple/decoder.go newTableInfo). A key part of which is missing identifies nothing, so here a
candidate counts only when every one of its columns is carried; the row falls back to the next
candidate (the unique key the selection kept, where the message describes one), and to no key at
all (the consumer then identifies the row by its whole image, which holds the kept unique key) when
the message describes none, as a Canal-JSON or Debezium message never does.
"""
from __future__ import annotations

from typing import Collection, Iterable, Optional, Sequence


def carried_key(candidates: Iterable[Sequence[str]], *images: Optional[Collection[str]]) -> tuple[str, ...]:
    """The first non-empty candidate all of whose columns are in every image present (an image is
    the collection of column names a row image carries; None stands for an absent image), else ()."""
    present = [image for image in images if image is not None]
    for columns in candidates:
        if columns and all(c in image for image in present for c in columns):
            return tuple(columns)
    return ()
