"""Replacing the golden corpus folder without ever leaving a reader half of one (docs/golden-format.md).

An update builds the new corpus in a staging folder beside the corpus (same parent, hence the same
filesystem, so a rename moves it without copying), named `.<corpus>.staging-<pid>-<random>` so that a
later update can tell whose it is. The swap is one atomic exchange of the two folders where the
kernel offers it (Linux renameat2 with RENAME_EXCHANGE): `golden/` is at every instant either the
old corpus or the new one. Elsewhere it is two renames (corpus -> `<corpus>.old`, staging ->
corpus) with SIGINT and SIGTERM held back between them; a crash there (SIGKILL, power loss) leaves
`<corpus>.old` and no corpus, which the next update or check renames back (`recover`).

SIGTERM during an update or a check is turned into an exception (`GoldenInterrupted`, a
KeyboardInterrupt), so the `finally` blocks that restore the corpus and remove scratch folders run
as they do for Ctrl-C; whatever a SIGKILL leaves behind is removed by the next update (`sweep`).
"""
from __future__ import annotations

import ctypes
import errno
import os
import shutil
import signal
import sys
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

BACKUP_SUFFIX = ".old"
# The staging prefix of earlier versions (mkdtemp's random suffix only): left by an update that
# was killed, never by one still running (no version of that code runs beside this one).
LEGACY_STAGING = ".golden-new-"
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2  # linux/fs.h
_HELD = {signal.SIGINT, signal.SIGTERM}


class GoldenInterrupted(KeyboardInterrupt):
    """A signal stopped an update or a check; the corpus was left (or put back) as it was."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum


def _raise_interrupted(signum: int, frame) -> None:
    raise GoldenInterrupted(signum)


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM raises GoldenInterrupted in the main thread while the block runs (signal handlers
    can only be set from the main thread; elsewhere the default stays)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM are delivered only after the block: a step that must not stop halfway."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def backup_of(root: Path) -> Path:
    return root.with_name(root.name + BACKUP_SUFFIX)


def _staging_prefix(root: Path) -> str:
    return f".{root.name}.staging-"


def new_staging(root: Path) -> Path:
    staging = Path(tempfile.mkdtemp(prefix=f"{_staging_prefix(root)}{os.getpid()}-", dir=root.parent))
    staging.chmod(0o755)  # mkdtemp's folder is private; the corpus is not
    return staging


def recover(root: Path) -> bool:
    """Puts back a corpus that a crash between the two renames of a swap left as `<corpus>.old`."""
    backup = backup_of(root)
    if root.exists() or not backup.is_dir():
        return False
    backup.rename(root)
    print(f"golden: {root} was missing after an interrupted update; restored it from {backup}", file=sys.stderr)
    return True


def _owner_pid(folder: Path, prefix: str) -> Optional[int]:
    head = folder.name[len(prefix):].split("-", 1)[0]
    return int(head) if head.isdigit() else None


def _in_use(folder: Path, prefix: str) -> bool:
    """Whether the process named in a staging folder's name still runs (a reused pid keeps the
    folder until that process ends; the sweep after it removes the folder)."""
    pid = _owner_pid(folder, prefix)
    if pid is None or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's live process
    return True


def sweep(root: Path) -> list[Path]:
    """Removes what earlier updates left beside the corpus: staging folders of processes no longer
    running (an update in progress keeps its own), and `<corpus>.old` when the corpus is there (a
    crash after the swap, before the old corpus was deleted). Call after `recover`."""
    prefix = _staging_prefix(root)
    stale = [p for p in sorted(root.parent.glob(prefix + "*")) if p.is_dir() and not _in_use(p, prefix)]
    stale += [p for p in sorted(root.parent.glob(LEGACY_STAGING + "*")) if p.is_dir()]
    if root.exists() and backup_of(root).is_dir():
        stale.append(backup_of(root))
    for folder in stale:
        shutil.rmtree(folder, ignore_errors=True)
        print(f"golden: removed {folder}, left by an interrupted update", file=sys.stderr)
    return stale


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swaps two paths (Linux renameat2 RENAME_EXCHANGE); False where unsupported."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError, TypeError):
        return False  # no such call in this C library (not Linux, or glibc < 2.28)
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False  # the kernel or the filesystem does not exchange
    raise OSError(err, os.strerror(err), str(a), None, str(b))


def swap_in(staging: Path, root: Path) -> None:
    """Makes `staging` the corpus at `root`. With an exchange, `staging` then holds the old corpus
    (the caller removes it); otherwise the old corpus goes through `<corpus>.old`, put back if the
    second rename fails."""
    with signals_held():
        if not root.exists():
            staging.rename(root)
            return
        if _exchange(staging, root):
            return
        backup = backup_of(root)
        root.rename(backup)
        try:
            staging.rename(root)
        except BaseException:
            backup.rename(root)
            raise
    shutil.rmtree(backup, ignore_errors=True)
