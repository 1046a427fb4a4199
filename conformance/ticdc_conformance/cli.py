"""The `ticdc-conformance` command: the root that gathers the subcommands.

Every subcommand is defined next to what it runs: a package's in its `command.py` (bench,
consumers, fidelity, golden, lint, rules), those that drive the generator and the runner in
run_command.py beside runner.py, and `kafka` in kafka_command.py: it drives the transport and the
Spark consumer, so it sits with the entry points above both. Options several commands share are in
command_line.py.
"""
from __future__ import annotations

import importlib

import click

from ticdc_conformance.errors import SPARK_EXTRA, SparkMissing

# Each subcommand's home, imported only when the command runs (or help lists them all): importing
# every command's module costs about 2.5 s (the fuzz engine pulls in Hypothesis, the runner DeepDiff
# and pandas), which every short command, `consume` included, paid before it started.
COMMANDS = {
    "scenarios": "ticdc_conformance.run_command:scenarios",
    "generate": "ticdc_conformance.run_command:generate_cmd",
    "consume": "ticdc_conformance.consumers.command:consume",
    "py-files": "ticdc_conformance.consumers.command:py_files",
    "run": "ticdc_conformance.run_command:run",
    "check": "ticdc_conformance.run_command:check",
    "golden": "ticdc_conformance.golden.command:golden",
    "differential": "ticdc_conformance.run_command:differential_cmd",
    "fidelity": "ticdc_conformance.fidelity.command:fidelity",
    "bench": "ticdc_conformance.bench.command:bench",
    "rules": "ticdc_conformance.rules.command:rules_cmd",
    "lint": "ticdc_conformance.lint.command:lint_cmd",
    "kafka": "ticdc_conformance.kafka_command:kafka",
    "fuzz": "ticdc_conformance.fuzz_command:fuzz",
}


class _Main(click.Group):
    """The root group; a subcommand that reaches for Spark where PySpark is not installed ends in one
    line saying how to install it (exit 2, a bad invocation of this installation), not a traceback.
    The commands that need Spark check first (require_spark) and say what to do instead; an import of
    PySpark that fails anywhere else is caught here."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        home = COMMANDS.get(cmd_name)
        if home is None:
            return None
        module, _, name = home.partition(":")
        command = getattr(importlib.import_module(module), name)
        if command.name != cmd_name:
            raise RuntimeError(f"{home} is the command {command.name!r}, not {cmd_name!r}")
        return command

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
