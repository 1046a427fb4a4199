"""What a benchmark child process that failed left on stderr, kept whole and pointed at.

A Spark job that dies prints its cause first and then pages of shutdown stack traces, so the tail
of stderr rarely says why. The whole output goes to a file; the error names it and quotes the
first lines that name an error, then the tail.
"""
from __future__ import annotations

import re
from pathlib import Path

_CAUSE = re.compile(r"\b(\w+(Error|Exception)|ERROR|Traceback|Caused by)\b")
_CAUSE_LINES = 8
_TAIL_CHARS = 1500


def child_failure(what: str, returncode: int, stderr: str, log: Path) -> RuntimeError:
    """The error to raise for a failed child: `what` failed, its first cause lines, its tail, and
    the file under `log` that now holds its whole stderr."""
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(stderr)
    causes: list[str] = []
    for line in stderr.splitlines():
        stripped = line.strip()
        if stripped.startswith("at ") or stripped in causes or not _CAUSE.search(stripped):
            continue
        causes.append(stripped)
        if len(causes) == _CAUSE_LINES:
            break
    first = "\n".join(f"  {c[:300]}" for c in causes) or "  (no line names an error)"
    return RuntimeError(f"{what} failed with exit code {returncode}; whole stderr in {log}\n"
                        f"first lines naming an error:\n{first}\nlast lines:\n{stderr[-_TAIL_CHARS:]}")


def one_line(error: Exception) -> str:
    """The error of a failed child as one line: what failed and where its log is, and the first
    line that names an error (a Python traceback's header skipped for the exception it leads to)."""
    lines = str(error).splitlines()
    head = lines[0] if lines else type(error).__name__
    marker = "first lines naming an error:"
    causes = []
    for line in lines[lines.index(marker) + 1:] if marker in lines else []:
        if not line.startswith("  "):
            break
        causes.append(line.strip())
    cause = next((c for c in causes if not c.startswith(("Traceback", "(no line"))), "")
    return f"{head}: {cause}" if cause else head
