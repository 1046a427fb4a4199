"""The fidelity matrix: TiDB type x encoding -> exact / lossy (how) / absent.

Generated from each protocol package's `describe_fidelity`, the same knowledge its
`project_value` applies in the differential check, so the published matrix and the checks agree.
"""
from __future__ import annotations

from ticdc_generators.pipeline import config_for, encoding_names
from ticdc_generators.types import TiDBType, representative_types

from ..protocols import protocol_package


def matrix(scenario: str = "smoke") -> list[dict]:
    rows = []
    configs = {enc: config_for(scenario, enc) for enc in encoding_names()}
    for t in representative_types():
        row = {"type": t.sql(), "cells": {}}
        for enc, cfg in configs.items():
            level, why = protocol_package(cfg.protocol).describe_fidelity(t, cfg.ticdc_options())
            row["cells"][enc] = {"level": level, "why": why}
        rows.append(row)
    return rows


def to_markdown(rows: list[dict]) -> str:
    encs = list(rows[0]["cells"]) if rows else []
    out = ["| TiDB type | " + " | ".join(encs) + " |", "|---|" + "---|" * len(encs)]
    notes: dict[str, int] = {}
    for r in rows:
        cells = []
        for enc in encs:
            c = r["cells"][enc]
            if c["level"] == "exact":
                cells.append("exact")
            else:
                n = notes.setdefault(c["why"], len(notes) + 1)
                cells.append(f"{c['level']} [{n}]")
        out.append(f"| {r['type']} | " + " | ".join(cells) + " |")
    out.append("")
    out += [f"{n}. {why}" for why, n in notes.items()]
    return "\n".join(out) + "\n"


def describe(t: TiDBType, encoding: str, scenario: str = "smoke") -> tuple[str, str]:
    cfg = config_for(scenario, encoding)
    return protocol_package(cfg.protocol).describe_fidelity(t, cfg.ticdc_options())
