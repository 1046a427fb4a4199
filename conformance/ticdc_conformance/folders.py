"""Fresh output folders: what a run reads was written by that run.

A verdict is only as good as the files it reads. A consumer that writes nothing must not be judged
on what an earlier run, another encoding or another scenario left behind, so every case folder of
`run` is emptied before generation and the consumer's output folder is created new; `generate
--out` writes into an empty folder only and empties one on request (`--replace`) only when it
holds nothing but what `generate` and `run` write there.
"""
from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterable, Optional

# What `generate` writes into a case folder, and what `run` and `check` add beside it.
CASE_ENTRIES = frozenset({"records", "truth", "manifest.json", "claim-check",
                          "consumer", "work", "consumer.log", "result.json"})
DIGEST_CHARS = 8


class FolderRefused(ValueError):
    """A folder the suite will not write into or empty; the message says why and what to do."""


def options_digest(parts: Iterable[Any]) -> str:
    """A short digest that stays the same for the same options (dataclasses by their fields)."""
    text = json.dumps([asdict(p) if hasattr(p, "__dataclass_fields__") else p for p in parts],
                      sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:DIGEST_CHARS]


def case_folder(work: Path, scenario: str, seed: int, encoding: str, digest: Optional[str]) -> Path:
    """`WORK/<scenario>-seed<N>[-<options digest>]/<encoding>`: runs that differ in scenario, seed,
    options or encoding never share a folder; the encodings of one run sit side by side."""
    return Path(work) / (f"{scenario}-seed{seed}" + (f"-{digest}" if digest else "")) / encoding


def recreate(path: Path) -> Path:
    """Removes `path` with everything in it and creates it empty. Only for folders whose name the
    suite made (a case folder under --work, the consumer's output inside it)."""
    path = Path(path)
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def _is_case(folder: Path) -> bool:
    entries = {p.name for p in folder.iterdir()}
    return "manifest.json" in entries and entries <= CASE_ENTRIES


def _looks_generated(folder: Path) -> bool:
    """A case folder, or (`generate --protocol all`) a folder of case folders."""
    if _is_case(folder):
        return True
    return all(p.is_dir() and not p.is_symlink() and _is_case(p) for p in folder.iterdir())


def prepare_generate_output(out: Path, replace: bool) -> None:
    """`generate --out DIR`: DIR is new or empty; with `replace`, a DIR that holds a generate output
    (and what `run`/`check` add to one) is emptied first. Raises FolderRefused otherwise."""
    out = Path(out)
    if not out.exists():
        return
    if not out.is_dir():
        raise FolderRefused(f"--out {out}: not a folder")
    entries = sorted(p.name for p in out.iterdir())
    if not entries:
        return
    shown = ", ".join(entries[:5]) + (", …" if len(entries) > 5 else "")
    if not replace:
        raise FolderRefused(f"--out {out} is not empty ({shown}); generate writes into a new or empty folder "
                            "so that nothing of an earlier run is read as this one's. Choose another folder, "
                            "or pass --replace to empty this one first")
    resolved = out.resolve()
    if resolved == Path(resolved.anchor) or resolved == Path.home().resolve() \
            or resolved in (Path.cwd().resolve(), *Path.cwd().resolve().parents) or (resolved / ".git").exists():
        raise FolderRefused(f"--replace refuses to empty {out}: it is the root, the home folder, the current "
                            "folder or one of its parents, or a repository; choose a folder of its own")
    if not _looks_generated(out):
        raise FolderRefused(f"--replace refuses to empty {out}: it holds {shown}, which is not what generate "
                            f"writes (a case folder holds only {', '.join(sorted(CASE_ENTRIES))}; with "
                            "--protocol all, one such folder per encoding). Empty it yourself or choose another")
    for p in out.iterdir():
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()
