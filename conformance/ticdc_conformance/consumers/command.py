"""`ticdc-conformance consume` and `py-files`: a reference consumer over record files, and the
zip that ships the Spark consumer to spark-submit (docs/spark-submit.md)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ticdc_conformance.errors import require_spark

from .adapters import SequentialConsumer, SparkConsumer, Stream, adapter_for
from .spark import spark_log_in, spark_log_note


@click.command()
@click.option("--records", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--manifest", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The manifest.json written by `generate` (default: next to --records).")
@click.option("--out", "-o", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--engine", type=click.Choice([SparkConsumer.spec, SequentialConsumer.spec]), default=SparkConsumer.spec,
              show_default=True,
              help="The reference Spark consumer, or the sequential pure-Python one.")
@click.option("--master", default=None, help="Spark master (default local[2]; ignored under spark-submit).")
def consume(records: Path, manifest: Path | None, out: Path, engine: str, master: str | None) -> None:
    """Run a reference consumer over record files and write the final table states."""
    manifest = manifest or records.parent / "manifest.json"
    try:
        m = json.loads(manifest.read_text())
        missing = [k for k in ("protocol", "topics", "sink") if not isinstance(m, dict) or k not in m]
        if missing:
            raise ValueError(f"no {', '.join(missing)}")
    except (OSError, ValueError) as e:
        click.echo(f"error: {manifest}: not a manifest written by `generate`: {e}", err=True)
        sys.exit(2)
    stream = Stream(records, manifest, m, folder=records.parent, scratch=out / "work")
    if engine == SparkConsumer.spec:  # the root command turns SparkMissing into one line and exit 2
        require_spark("`consume --engine spark`", f"or use `--engine {SequentialConsumer.spec}`")
    # The JVM's start-up notes and log4j's lines go to a file in the scratch folder (as `run`
    # puts them in its work folder), not among this command's output.
    with spark_log_in(stream.scratch / "spark.log"):
        run = adapter_for(engine, master=master).run(stream, out)
        note = spark_log_note()
    if not run.finished:
        click.echo(f"error: {run.error}", err=True)
        if note:
            click.echo(note, err=True)
        sys.exit(2)
    click.echo(json.dumps(run.figures, indent=2))


@click.command("py-files")
@click.argument("target", type=click.Path(dir_okay=False, path_type=Path))
def py_files(target: Path) -> None:
    """Write the zip of this project's packages for `spark-submit --py-files` (docs/spark-submit.md)."""
    from .spark import job as spark_job

    n = spark_job.build_py_files(target)
    click.echo(f"wrote {target} ({n} files); run the consumer with:\n"
               f"  spark-submit --master MASTER --py-files {target} {Path(spark_job.__file__).resolve()} "
               "--records RECORDS --out OUT")
