"""The driver's end of a local worker's socket: pickled messages in length-prefixed frames.

The frames are those of :class:`multiprocessing.connection.Connection` (a 4-byte
big-endian length, or -1 and an 8-byte length for a payload over 2 GiB, then the
pickle), so the worker keeps a plain ``Connection``. The driver reads whatever its
workers have sent in one ``recv`` per socket and wake-up, and decodes every whole
frame in it: results sent one by one, the moment each task ends (so a timeout is
measured from a task's real start), are taken in batches at the driver.
"""

from __future__ import annotations

import pickle
import socket
import struct
from typing import Any

CHUNK_BYTES = 1 << 18
_SHORT = struct.Struct("!i")
_LONG = struct.Struct("!Q")


def send_message(sock: socket.socket, message: Any) -> None:
    """Send ``message`` as one frame (blocking until the socket takes it all)."""
    payload = pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
    if len(payload) > 0x7FFFFFFF:
        sock.sendall(_SHORT.pack(-1) + _LONG.pack(len(payload)))
        sock.sendall(payload)
    else:
        sock.sendall(_SHORT.pack(len(payload)) + payload)


class FrameReader:
    """Decodes the frames of one socket from the bytes it has received so far."""

    def __init__(self) -> None:
        self._rest = b""  # the start of a frame not received whole yet

    def read(self, sock: socket.socket) -> list[Any] | None:
        """The messages whose frames are complete now (no waiting); ``None`` once the
        other end has closed the socket and every whole frame was returned."""
        messages: list[Any] = []
        while True:
            try:
                data = sock.recv(CHUNK_BYTES, socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                return messages
            except OSError:  # reset by a dying peer
                data = b""
            if not data:
                return messages or None
            self._decode(self._rest + data if self._rest else data, messages)
            if len(data) < CHUNK_BYTES:
                return messages

    def _decode(self, data: bytes, messages: list[Any]) -> None:
        view, end, at = memoryview(data), len(data), 0
        while end - at >= 4:
            (size,) = _SHORT.unpack_from(data, at)
            head = 4
            if size == -1:
                if end - at < 12:
                    break
                (size,) = _LONG.unpack_from(data, at + 4)
                head = 12
            if end - at < head + size:
                break
            messages.append(pickle.loads(view[at + head:at + head + size]))
            at += head + size
        self._rest = data[at:]


__all__ = ["CHUNK_BYTES", "FrameReader", "send_message"]
