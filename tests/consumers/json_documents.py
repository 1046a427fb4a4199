"""A correct consumer that holds a JSON column's document as a JSON value in its rows, the way a
consumer writing into a JSON-typed sink does: each document is parsed (Python's json: integers
exact, other numbers float64) and written into the row as an object, array, string, number or
boolean, printed by Python's json (ASCII escapes, its own separators, keys in the order it read).
The document null stays the text "null": as a JSON value it would be the row's null, which is
SQL NULL. The documents are upstream's, so the check must accept them.
"""
import json

from _outsider import run_rewriting


def embedded(value, column_type):
    document = json.loads(value)
    return value if document is None else document


if __name__ == "__main__":
    run_rewriting({"JSON"}, lambda manifest: embedded, json.dumps)
