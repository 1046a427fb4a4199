"""`ticdc-conformance fidelity`: the fidelity matrix, printed or written (docs/fidelity.md)."""
from __future__ import annotations

import json
from pathlib import Path

import click

from ticdc_conformance.command_line import console

_FIDELITY_TARGETS = {"md": Path("docs/fidelity.md"), "json": Path("reports/fidelity.json")}


@click.command()
@click.option("--format", "fmt", type=click.Choice(["md", "json"]), default="md", show_default=True)
@click.option("--write", "write_to", is_flag=False, flag_value="", default=None,
              help="Write the page instead of printing it (default docs/fidelity.md, with --format json "
                   "reports/fidelity.json).")
def fidelity(fmt: str, write_to: str | None) -> None:
    """Print the fidelity matrix: what each encoding keeps of each TiDB type (docs/fidelity.md)."""
    from .doc import render
    from .matrix import matrix

    text = render() if fmt == "md" else json.dumps(matrix(), indent=2, ensure_ascii=False) + "\n"
    if write_to is None:
        click.echo(text, nl=False)
        return
    target = Path(write_to) if write_to else _FIDELITY_TARGETS[fmt]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    console.print(f"wrote {target}")
