"""A step's failures grouped by their signature, counted once, by the driver.

:class:`ErrorGroups` is the one tally of a parallel step's errors: the driver adds each
failed attempt (and each worker whose init() failed) under its
:func:`~mlpipe.runtime.error_keys.signature`, and the step's summary carries the groups to
every place that states them (job_result.txt, user/error.txt, runs.json and report.html,
``job.json`` and the console). A group is labelled by its signature (``ValueError: bad
record <n> in f<n>.txt``) and counts attempts and mini-batches as such: ``failed
attempts`` (retries included), the mini-batches it hit, and those whose last attempt
failed with it (together they are the step's failed mini-batches).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from mlpipe.runtime.error_keys import Signature, message_line, signature
from mlpipe.wording import plural


class FailedAttempt(Protocol):
    """What a group reads of a failed attempt (a :class:`~mlpipe.runtime.records.AttemptRecord`
    has it)."""

    @property
    def status(self) -> str: ...
    @property
    def error_category(self) -> str | None: ...
    @property
    def error_message(self) -> str | None: ...
    @property
    def traceback(self) -> str | None: ...
    @property
    def total(self) -> int: ...
    @property
    def succeeded(self) -> int: ...
    @property
    def failed(self) -> int: ...
    @property
    def final(self) -> bool: ...

FIRST_TEXT_LIMIT = 4000  # characters of the first traceback a group keeps (report.html shows it)
SUMMARY_GROUPS = 10  # groups a step's summary (job.json) keeps; the logs keep them all


@dataclass
class ErrorGroup:
    """Failures that share a :class:`~mlpipe.runtime.error_keys.Signature`."""

    signature: Signature
    example: str  # the first occurrence's message line
    where: str = ""  # error file of the first occurrence, relative to logs/ ("" when none)
    first: str = ""  # "mini-batch <id> attempt <n> on <node>/<process> at <time>"
    first_text: str = ""  # the first occurrence's message and traceback (shortened)
    attempts: int = 0  # failed attempts (a worker's failed start counts as one)
    mini_batches: int = 0  # mini-batches with at least one failed attempt of this kind
    failed: int = 0  # mini-batches whose last attempt failed with it
    files: set[str] = field(default_factory=set)  # error files holding its tracebacks

    @property
    def category(self) -> str:
        return self.signature.category

    @property
    def label(self) -> str:
        """What the error is, whatever its numbers, paths and names: the signature."""
        return self.signature.text or self.example

    def counts_text(self) -> str:
        """``5 mini-batches failed, 15 failed attempts`` (attempts and mini-batches named)."""
        return counts_text(self.attempts, self.mini_batches, self.failed)

    def files_text(self, limit: int = 3) -> str:
        names = sorted(self.files)
        more = f" and {len(names) - limit} more" if len(names) > limit else ""
        return ", ".join(names[:limit]) + more

    def as_json(self, *, brief: bool = False) -> dict[str, Any]:
        """The group as ``runs.json`` keeps it (report.html reads it back); ``brief``: as
        ``job.json`` does, without the first traceback and the files."""
        sig = self.signature
        data: dict[str, Any] = {
            "category": sig.category, "exception": sig.exception, "pattern": sig.pattern,
            "frame": sig.frame, "label": self.label, "message": self.example,
            "attempts": self.attempts, "mini_batches": self.mini_batches, "failed": self.failed,
            "where": self.where, "first": self.first}
        if not brief:
            data.update(first_text=self.first_text, files=sorted(self.files))
        return data


def counts_text(attempts: int, mini_batches: int, failed: int) -> str:
    """How often an error happened, attempts and mini-batches named as such."""
    tried = plural(attempts, "failed attempt")
    if not mini_batches:  # a worker's start, not a mini-batch
        return tried
    if failed == mini_batches:
        return f"{plural(failed, 'mini-batch')} failed, {tried}"
    return (f"{tried} in {plural(mini_batches, 'mini-batch')} ({failed} failed with it in "
            "the end)")


def group_line(group: Mapping[str, Any]) -> str:
    """One group of ``job.json`` or ``runs.json`` on one line: its label and counts."""
    label = str(group.get("label") or group.get("message") or "")
    category = str(group.get("category") or "")
    text = counts_text(int(group.get("attempts") or 0), int(group.get("mini_batches") or 0),
                       int(group.get("failed") or 0))
    return f"[{category}] {label}: {text}" if category else f"{label}: {text}"


class ErrorGroups:
    """The groups of one step run, keyed by signature, most frequent first on :meth:`top`."""

    def __init__(self) -> None:
        self.groups: dict[Signature, ErrorGroup] = {}

    def __len__(self) -> int:
        return len(self.groups)

    def add(self, category: str, message: str, traceback: str | None, *, where: str = "",
            first: str = "", seen: frozenset[Signature] | None = frozenset(),
            final: bool = False, count: int = 1) -> Signature:
        """Count ``count`` failed attempts of one kind. ``seen``: what the mini-batch's
        earlier failed attempts hit (``None``: the failure is no mini-batch's, a worker's
        start); ``final``: it was the mini-batch's last attempt. Returns the signature (a
        retried mini-batch remembers what it hit)."""
        key = signature(category, message, traceback)
        new_mini_batch = seen is not None and key not in seen
        group = self.groups.get(key)
        if group is None:
            text = message.rstrip() + ("\n" + traceback.rstrip() if traceback
                                       and traceback.strip() != message.strip() else "")
            group = self.groups[key] = ErrorGroup(key, message_line(message), where, first,
                                                  text[:FIRST_TEXT_LIMIT])
        group.attempts += count
        group.mini_batches += new_mini_batch
        group.failed += final and seen is not None
        if where:
            group.files.add(where)
        return key

    def add_attempt(self, record: FailedAttempt, *, where: str, first: str,
                    seen: frozenset[Signature] = frozenset()) -> Signature:
        """Count a failed attempt (``seen``: what the mini-batch's earlier failed attempts
        hit; its ``final`` says whether it was the mini-batch's last; ``where``, ``first``:
        its error file and the header of its block there)."""
        category, message = attempt_error(record)
        return self.add(category, message, record.traceback, where=where, first=first,
                        seen=seen, final=record.final)

    def fail(self, key: Signature) -> None:
        """A mini-batch whose last attempt failed with ``key`` will not be retried (the
        step stopped before its retry): it failed with that error."""
        group = self.groups.get(key)
        if group is not None:
            group.failed += 1

    def top(self, count: int | None = None) -> list[ErrorGroup]:
        """The groups, most failed attempts first (ties: first seen first)."""
        # list() first: one call, so a report thread reads while the driver adds
        ordered = sorted(list(self.groups.values()), key=lambda g: -g.attempts)
        return ordered if count is None else ordered[:count]

    def as_json(self, count: int | None = None, *,
                brief: bool = False) -> list[dict[str, Any]]:
        return [group.as_json(brief=brief) for group in self.top(count)]


def attempt_error(record: FailedAttempt) -> tuple[str, str]:
    """A failed attempt's category and message (a short return names its counts)."""
    message = record.error_message or (
        f"run() returned {record.succeeded} of {record.total} items" if record.failed
        else record.status)
    return record.error_category or record.status, message


def attempts_of(groups: Iterable[Mapping[str, Any]]) -> int:
    return sum(int(group.get("attempts") or 0) for group in groups)


__all__ = ["ErrorGroup", "ErrorGroups", "FailedAttempt", "SUMMARY_GROUPS", "attempt_error",
           "attempts_of", "counts_text", "group_line"]
