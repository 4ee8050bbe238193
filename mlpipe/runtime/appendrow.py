"""Finished mini-batches on disk: append_row part files and the journal resume reads.

Each mini-batch whose last attempt ended gets its rows written to a part file
(written to a temporary name, then renamed: a part is complete or absent) and
then one line in ``finished.jsonl``; both live in the step's ``.mlpipe/`` state
folder. The append_row file is made at the end by concatenating the parts in
input order, so a retried mini-batch contributes its rows exactly once and a
killed run never leaves half a mini-batch behind. A resumed run reads the
journal and skips the mini-batches that succeeded.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from mlpipe.runtime.faults import naming
from mlpipe.runtime.textio import DATA_ERRORS, open_text

APPEND_ROW_FILE = "parallel_run_step.txt"
JOURNAL = "finished.jsonl"


@dataclass(frozen=True)
class Finished:
    """One line of the journal: the outcome of a mini-batch's last attempt."""

    id: str
    index: int
    status: str
    total: int
    succeeded: int
    failed: int
    part: str | None = None  # file name of its rows under parts/, None when it has none
    header: str | None = None


def append_row_target(output_path: str, is_file: bool) -> Path:
    """The append_row file: the uri_file output itself, or parallel_run_step.txt in a folder."""
    return Path(output_path) if is_file else Path(output_path) / APPEND_ROW_FILE


class PartStore:
    """The ``.mlpipe/mini_batches`` state of one step: part files plus the journal."""

    def __init__(self, state_dir: str | Path, *, resume: bool):
        self.root = Path(state_dir) / "mini_batches"
        self.parts = self.root / "parts"
        self.finished: dict[str, Finished] = {}
        if resume:
            self.finished = {entry.id: entry for entry in self._read_journal()
                             if entry.status == "Succeeded" and self._part_ok(entry)}
            self._rewrite_journal()
        else:
            shutil.rmtree(self.root, ignore_errors=True)
        self.parts.mkdir(parents=True, exist_ok=True)
        self._journal = os.open(self.root / JOURNAL, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def done(self, mini_batch_id: str) -> Finished | None:
        """The recorded successful outcome of ``mini_batch_id`` (resume), else ``None``."""
        return self.finished.get(mini_batch_id)

    def commit(self, entry: Finished, rows: str | None) -> Finished:
        """Record a mini-batch's final outcome; its rows first go to a part file atomically."""
        if rows:
            name = hashlib.sha1(entry.id.encode("utf-8")).hexdigest()[:24] + ".part"
            temporary = self.parts / (name + ".tmp")
            with naming(temporary), _removed_on_error(temporary), \
                    open_text(temporary, "w", newline="", errors=DATA_ERRORS) as handle:
                handle.write(rows)
            os.replace(temporary, self.parts / name)
            entry = Finished(entry.id, entry.index, entry.status, entry.total, entry.succeeded,
                             entry.failed, name, entry.header)
        with naming(self.root / JOURNAL):
            os.write(self._journal, (json.dumps(entry.__dict__) + "\n").encode("utf-8"))
        self.finished[entry.id] = entry
        return entry

    def write(self, target: Path, order: list[str]) -> int:
        """Concatenate the parts of the mini-batch ids ``order`` into ``target``; return the
        rows' bytes."""
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(target.name + ".mlpipe-tmp")
        size = 0
        with naming(target), _removed_on_error(temporary), open(temporary, "wb") as out:
            header = next((self.finished[i].header for i in order
                           if i in self.finished and self.finished[i].header), None)
            if header:
                out.write(header.encode("utf-8"))
            for mini_batch_id in order:
                entry = self.finished.get(mini_batch_id)
                if entry is None or entry.part is None:
                    continue
                with open(self.parts / entry.part, "rb") as part:
                    size += _copy(part, out)
        os.replace(temporary, target)
        return size

    def close(self) -> None:
        if self._journal >= 0:
            os.close(self._journal)
            self._journal = -1

    def _read_journal(self) -> Iterator[Finished]:
        path = self.root / JOURNAL
        if not path.is_file():
            return
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                try:
                    yield Finished(**json.loads(line))
                except (ValueError, TypeError):
                    continue  # a line torn by a crash: that mini-batch runs again

    def _part_ok(self, entry: Finished) -> bool:
        return entry.part is None or (self.parts / entry.part).is_file()

    def _rewrite_journal(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        temporary = self.root / (JOURNAL + ".tmp")
        with open(temporary, "w", encoding="utf-8") as handle:
            for entry in self.finished.values():
                handle.write(json.dumps(entry.__dict__) + "\n")
        os.replace(temporary, self.root / JOURNAL)


@contextmanager
def _removed_on_error(path: Path) -> Iterator[None]:
    """Delete the half-written ``path`` when the block fails (a full disk gets its space back)."""
    try:
        yield
    except BaseException:
        path.unlink(missing_ok=True)
        raise


def _copy(source: BinaryIO, target: BinaryIO) -> int:
    size = 0
    while chunk := source.read(1 << 20):
        target.write(chunk)
        size += len(chunk)
    return size


__all__ = ["APPEND_ROW_FILE", "Finished", "PartStore", "append_row_target"]
