"""`ticdc-conformance golden`: check or regenerate the golden corpus (docs/golden-format.md)."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from ticdc_conformance.command_line import console


@click.command()
@click.option("--check", "mode", flag_value="check", default=True, help="Compare the corpus with a fresh build (default).")
@click.option("--update", "mode", flag_value="update", help="Regenerate the corpus (atomically).")
@click.option("--dir", "golden_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("golden"),
              show_default=True)
def golden(mode: str, golden_dir: Path) -> None:
    """Check or regenerate the golden corpus."""
    from . import corpus as g
    from .swap import GoldenInterrupted

    try:
        if mode == "update":
            for line in g.render_changes(g.update(golden_dir)):
                click.echo(line)
            return
        diffs = g.check(golden_dir)
    except GoldenInterrupted as stop:
        click.echo(f"golden --{mode} {stop}: {golden_dir} holds a whole corpus and no scratch folder is left",
                   err=True)
        sys.exit(128 + stop.signum)  # the shell's status for a process ended by that signal
    if not diffs:
        console.print(f"golden corpus {golden_dir} matches the generators ({len(list(g.cases()))} cases)")
        return
    for d in diffs[: g.MAX_DIFFS_SHOWN]:
        click.echo(d.render())
    if len(diffs) > g.MAX_DIFFS_SHOWN:
        console.print(f"… and {len(diffs) - g.MAX_DIFFS_SHOWN} more differences")
    console.print("the generators' output changed; review it, then run `ticdc-conformance golden --update`")
    sys.exit(1)
