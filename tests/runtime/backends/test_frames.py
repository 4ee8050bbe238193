"""The driver's end of a local worker's socket reads what a worker's Connection sends, in
batches, whole frames only, and says when the worker closed its end."""

from __future__ import annotations

import pickle
import select
import socket
import threading
from multiprocessing.connection import Connection

from mlpipe.runtime.backends.frames import CHUNK_BYTES, FrameReader, send_message


def read_all(reader: FrameReader, sock: socket.socket, expected: int) -> list[object]:
    got: list[object] = []
    while len(got) < expected:
        select.select([sock], [], [], 10)
        messages = reader.read(sock)
        assert messages is not None, got
        got.extend(messages)
    return got


def test_frames_of_every_size_arrive_whole_and_in_order() -> None:
    driver, worker = socket.socketpair()
    conn = Connection(worker.detach())
    messages = [(n, "x" * size) for n, size in
                enumerate([0, 10, 16_385, CHUNK_BYTES + 7, 3, 5 * CHUNK_BYTES, 1])]
    def send_all() -> None:
        for message in messages:
            conn.send(message)

    sender = threading.Thread(target=send_all)
    sender.start()
    reader = FrameReader()
    assert read_all(reader, driver, len(messages)) == messages
    sender.join()
    assert reader.read(driver) == []  # nothing more yet, and no waiting
    conn.send(("last",))
    conn.close()
    assert read_all(reader, driver, 1) == [("last",)]
    select.select([driver], [], [], 10)
    assert reader.read(driver) is None  # closed by the worker


def test_many_small_results_are_taken_in_one_read() -> None:
    driver, worker = socket.socketpair()
    conn = Connection(worker.detach())
    for n in range(128):  # a worker's longest queue, its results unread
        conn.send_bytes(pickle.dumps((n, "Succeeded", 1, 1, 0)))
    batch = FrameReader().read(driver)
    assert batch is not None and [m[0] for m in batch] == list(range(128))
    send_message(driver, ("tasks", [(1, 1)]))
    assert conn.recv() == ("tasks", [(1, 1)])  # and the other way, a Connection reads ours
