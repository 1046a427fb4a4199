"""What many test modules need, written once: a Kafka record builder, the decode-error assertion,
the assertion that a decoder's fast path and its reference path agree, and the checkpoint check
run with upstream replayed in one process and in two."""

from tests.helpers.checkpoints import checked_both_ways
from tests.helpers.decode_errors import assert_decode_error, decodes_or_decode_error
from tests.helpers.fast_paths import assert_fast_matches_reference, decode_outcome, exact_events
from tests.helpers.records import kafka_record, message_record

__all__ = ["assert_decode_error", "assert_fast_matches_reference", "checked_both_ways", "decode_outcome", "decodes_or_decode_error",
           "exact_events", "kafka_record", "message_record"]
