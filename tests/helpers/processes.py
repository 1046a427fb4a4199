"""The processes a test started: tests/conftest.py's `no_process_left` fails a test that leaves one."""
import psutil


def live_children() -> set[int]:
    """The pids of this process's live descendants (a zombie, or one that ends while looked at, is not)."""
    alive = set()
    for p in psutil.Process().children(recursive=True):
        try:
            if p.status() != psutil.STATUS_ZOMBIE:
                alive.add(p.pid)
        except psutil.NoSuchProcess:
            pass
    return alive


def killed_mid_stream(stream, error: type[Exception]) -> str:
    """The error `stream` (a ticdc_contract.child_stream.ChildStream) raises when its child is
    killed after sending its first event; `error`: the type it must be."""
    import os
    import signal

    import pytest

    with stream:
        events = iter(stream)
        next(events)
        os.kill(stream.pid, signal.SIGKILL)
        with pytest.raises(error) as e:
            for _ in events:
                pass
    message = str(e.value)
    assert f"exit status {-signal.SIGKILL}" in message
    return message
