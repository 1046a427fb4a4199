"""A correct Python consumer run as a class (`python:`): the reference StreamingConsumer, but it
answers with every DECIMAL of scenario smoke (orders.amount, customers.balance) as a
`decimal.Decimal`, the type a Python consumer holds a DECIMAL in. The suite writes it as a JSON
number with all its digits (DECIMAL(20,6): up to 20), so the value stays upstream's."""
from __future__ import annotations

import json
from decimal import Decimal

import orjson

from ticdc_conformance.consumers.streaming import StreamingConsumer

DECIMAL_COLUMNS = ("amount", "balance")


def _images(line: dict) -> list[dict]:
    if line.get("type") == "row":
        return [line["row"]] if line.get("row") else []
    if line.get("type") == "txn":
        return [image for r in line["rows"] for image in (r["before"], r["after"]) if image]
    return []


class DecimalValues(StreamingConsumer):
    def handle(self, message: dict) -> list[dict]:
        answers = []
        for line in super().handle(message):
            line = json.loads(orjson.dumps(line))  # the reference consumer's lines hold JSON fragments
            for image in _images(line):
                for column in DECIMAL_COLUMNS:
                    if isinstance(image.get(column), str):
                        image[column] = Decimal(image[column])
            answers.append(line)
        return answers
