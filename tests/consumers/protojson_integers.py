"""A correct consumer that writes its rows as protobuf messages printed by protobuf's JSON mapping:
an int64 or uint64 field (a BIGINT column, signed or UNSIGNED) is a JSON string of its decimal
digits ("9223372036854775807"), every narrower integer a JSON number. The digits are the integer,
exactly, so the check must accept them, the key columns included.
"""
from _outsider import run_rewriting


def as_digits(value, column_type):
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


if __name__ == "__main__":
    run_rewriting({"BIGINT"}, lambda manifest: as_digits)
