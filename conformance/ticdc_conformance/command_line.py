"""What the subcommands of `ticdc-conformance` share: the console they print to, the options that
mean the same in every command, and the encodings a `--protocol` names.

The subcommands live beside what they run (cli.py gathers them); an option two of them take is
defined here once, so it reads and behaves the same in both. Only click, rich and the contract are
imported here, so a package's command module may use it without reaching the generator.
"""
from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from ticdc_contract.protocols import ALL, ENCODINGS, SIMPLE, encodings_named

console = Console(highlight=False)


def encoding_names() -> list[str]:
    """Every encoding the suite runs, in report order."""
    return list(ENCODINGS)


def resolve_encodings(protocol: str, encoding: str | None) -> list[str]:
    """`--protocol all|open-protocol|canal-json|debezium|simple[-json|-avro]` (+ `--encoding`) -> encodings."""
    if encoding and protocol not in (ALL, SIMPLE):
        raise click.BadParameter(f"--encoding applies to the simple protocol only, not {protocol}")
    try:
        return encodings_named(protocol, encoding or "json")
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


protocol_option = click.option(
    "--protocol", "-p", default=ALL, show_default=True,
    help="open-protocol, canal-json, debezium, simple (with --encoding), simple-json, simple-avro, or all.")
encoding_option = click.option(
    "--encoding", "--encoding-format", "encoding", type=click.Choice(["json", "avro"]), default=None,
    help="Simple protocol encoding (TiCDC's encoding-format); default json.")
seed_option = click.option("--seed", default=1, show_default=True, type=int, help="Scenario seed.")
time_zone_option = click.option("--time-zone", "time_zone", default="UTC", show_default=True,
                                help="Upstream TiDB time zone (TIMESTAMP values; TiCDC's time-zone option).")
final_state_only_option = click.option(
    "--final-state-only", is_flag=True,
    help="Accept a consumer judged on its final state only (a stream with watermarks, but no applied.ndjson "
         "with a checkpoint): verdict `conformant (final state only)`, exit 0, instead of exit 4.")
report_option = click.option(
    "--report", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Write JUnit XML (a test case per case and rule), a JSON summary (every finding) and a static HTML "
         "report into this folder, named by scenario, seed, encoding(s) and an options digest (docs/reports.md).")
