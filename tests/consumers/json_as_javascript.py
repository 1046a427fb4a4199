"""A broken consumer that reads a JSON column's document the way JavaScript's JSON.parse does,
every number a float64, and writes it back as JSON text, JSON.stringify's way (compact, a whole
number without a fraction). An integer beyond 2^53 in a document (9223372036854775807) comes back
as another integer (9223372036854775808): the check must find it.
"""
import json

from _outsider import run_rewriting


def as_javascript(number):
    return int(number) if isinstance(number, float) and number.is_integer() and abs(number) < 1e21 else number


def javascript(document):
    if isinstance(document, dict):
        return {k: javascript(v) for k, v in document.items()}
    if isinstance(document, list):
        return [javascript(v) for v in document]
    return as_javascript(document)


def stringified(value, column_type):
    document = json.loads(value, parse_int=float)
    return json.dumps(javascript(document), ensure_ascii=False, separators=(",", ":"))


if __name__ == "__main__":
    run_rewriting({"JSON"}, lambda manifest: stringified)
