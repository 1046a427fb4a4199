"""The reference Spark consumer (job.py). Nothing here imports PySpark, so the names below are
readable without it."""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

# A file that takes the Spark JVM's stdout and stderr (start-up notes, log4j, its Python workers),
# read by job.spark_session when it starts the JVM; `run` points it into its work folder, `consume`
# into its scratch folder (OUT/work) unless it is set.
SPARK_LOG_ENV = "TICDC_CONFORMANCE_SPARK_LOG"


@contextmanager
def spark_log_in(path: Path) -> Iterator[None]:
    """SPARK_LOG_ENV names `path` inside the block, unless it names a file already."""
    before = os.environ.get(SPARK_LOG_ENV)
    if before is None:
        os.environ[SPARK_LOG_ENV] = str(path.resolve())
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(SPARK_LOG_ENV, None)


def spark_log_note() -> Optional[str]:
    """Where Spark's own log went, once a session started with SPARK_LOG_ENV set."""
    where = os.environ.get(SPARK_LOG_ENV)
    return f"Spark's log (its JVM's output): {where}" if where and Path(where).exists() else None
