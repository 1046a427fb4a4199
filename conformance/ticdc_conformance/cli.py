"""The `ticdc-conformance` command: the root that gathers the subcommands.

Every subcommand is defined next to what it runs: a package's in its `command.py` (bench,
consumers, fidelity, golden, lint, rules), those that drive the generator and the runner in
run_command.py beside runner.py, and `kafka` in kafka_command.py: it drives the transport and the
Spark consumer, so it sits with the entry points above both. Options several commands share are in
command_line.py.
"""
from __future__ import annotations

import click

from ticdc_conformance.fuzz_command import fuzz
from ticdc_conformance.kafka_command import kafka

from .bench.command import bench
from .consumers.command import consume, py_files
from .fidelity.command import fidelity
from .golden.command import golden
from .lint.command import lint_cmd
from .rules.command import rules_cmd
from .run_command import check, differential_cmd, generate_cmd, run, scenarios


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Conformance and fuzz testing for consumers of TiCDC's Kafka protocols."""


for command in (scenarios, generate_cmd, consume, py_files, run, check, golden, differential_cmd, fidelity, bench,
                rules_cmd, lint_cmd, kafka):
    main.add_command(command)
main.add_command(fuzz)
