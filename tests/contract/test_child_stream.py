"""The record stream of ticdc_contract/child_stream.py: what a sender writes, with or without its
writer thread, reads back whole and in order; a reader that goes away is the sender's error."""
import os
import pickle
import struct
import threading
import time

import pytest

from ticdc_contract.child_stream import FRAME_BYTES, RecordSender

_LENGTH, _HEADER = struct.Struct(">Q"), struct.Struct(">cI")


def _read_records(fd: int, slow: bool) -> list[tuple[bytes, bytes]]:
    records = []
    with open(fd, "rb") as f:
        while head := f.read(_LENGTH.size):
            frame = f.read(_LENGTH.unpack(head)[0])
            at = 0
            while at < len(frame):
                kind, size = _HEADER.unpack_from(frame, at)
                at += _HEADER.size
                records.append((kind, frame[at:at + size]))
                at += size
            if slow:
                time.sleep(0.01)  # the parent busy elsewhere: the sender runs ahead, up to its bound
    return records


class _Ahead(RecordSender):
    AHEAD_BYTES = 3 * FRAME_BYTES


@pytest.mark.parametrize("sender_type", [RecordSender, _Ahead])
def test_records_read_back_whole_and_in_order(sender_type):
    read_fd, write_fd = os.pipe()
    got: list = []
    reader = threading.Thread(target=lambda: got.extend(_read_records(read_fd, slow=True)))
    reader.start()
    sent = [(b"t", pickle.dumps((n, b"x" * (n % 5000)))) for n in range(3000)]
    with open(write_fd, "wb", buffering=0) as out:
        sender = sender_type(out)
        for kind, payload in sent:
            sender.record(kind, payload)
        sender.finish(b"e", len(sent))
    reader.join()
    assert got[:-1] == sent and got[-1] == (b"e", pickle.dumps(len(sent), protocol=pickle.HIGHEST_PROTOCOL))


def test_a_reader_gone_is_the_senders_broken_pipe():
    read_fd, write_fd = os.pipe()
    os.close(read_fd)
    with open(write_fd, "wb", buffering=0) as out:
        sender = _Ahead(out)
        with pytest.raises(BrokenPipeError):
            for n in range(10_000):  # the writer thread's error comes back at a later frame, or at the end
                sender.record(b"t", b"y" * 1000)
            sender.finish(b"e", None)
