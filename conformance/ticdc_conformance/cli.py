"""The `ticdc-conformance` command: the root that gathers the subcommands.

Every subcommand is defined next to what it runs: a package's in its `command.py` (bench,
consumers, fidelity, golden, lint, rules), those that drive the generator and the runner in
run_command.py beside runner.py, and `kafka` in kafka_command.py: it drives the transport and the
Spark consumer, so it sits with the entry points above both. Options several commands share are in
command_line.py.
"""
from __future__ import annotations

import click

from ticdc_conformance.errors import SPARK_EXTRA, SparkMissing
from ticdc_conformance.fuzz_command import fuzz
from ticdc_conformance.kafka_command import kafka

from .bench.command import bench
from .consumers.command import consume, py_files
from .fidelity.command import fidelity
from .golden.command import golden
from .lint.command import lint_cmd
from .rules.command import rules_cmd
from .run_command import check, differential_cmd, generate_cmd, run, scenarios


class _Main(click.Group):
    """The root group; a subcommand that reaches for Spark where PySpark is not installed ends in one
    line saying how to install it (exit 2, a bad invocation of this installation), not a traceback.
    The commands that need Spark check first (require_spark) and say what to do instead; an import of
    PySpark that fails anywhere else is caught here."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except SparkMissing as e:
            click.echo(f"error: {e}", err=True)
            ctx.exit(2)
        except ModuleNotFoundError as e:
            if (e.name or "").partition(".")[0] != "pyspark":
                raise
            click.echo(f"error: this command needs PySpark, which is not installed here: {SPARK_EXTRA} "
                       "(Spark also needs a Java 17 runtime)", err=True)
            ctx.exit(2)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Conformance and fuzz testing for consumers of TiCDC's Kafka protocols."""


for command in (scenarios, generate_cmd, consume, py_files, run, check, golden, differential_cmd, fidelity, bench,
                rules_cmd, lint_cmd, kafka):
    main.add_command(command)
main.add_command(fuzz)
