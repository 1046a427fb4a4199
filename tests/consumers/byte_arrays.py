"""A correct consumer whose rows are printed the way Rust's serde_json prints a struct holding a
Vec<u8>: every BINARY, VARBINARY and BLOB value is a JSON array of its byte numbers ([0, 255, 16]),
the key columns included. The bytes are upstream's, so the check must accept them.
"""
import base64

from _outsider import run_rewriting


def as_numbers(value, column_type):
    return list(base64.b64decode(value))


if __name__ == "__main__":
    run_rewriting({"BINARY", "VARBINARY", "TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB"}, lambda manifest: as_numbers)
