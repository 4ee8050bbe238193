"""Wording shared by messages: counts with the right plural (``1 mini-batch``, ``2 mini-batches``),
durations, and an error on one line."""

from __future__ import annotations


def plural(count: float, word: str, many: str | None = None) -> str:
    """``count`` and ``word``, made plural unless ``count`` is 1 (``many`` when irregular)."""
    number = f"{count:g}" if isinstance(count, float) else str(count)
    if count == 1:
        return f"{number} {word}"
    if many is None:
        many = word + ("es" if word.endswith(("ch", "sh", "s", "x", "z")) else "s")
    return f"{number} {many}"


def duration(seconds: float) -> str:
    """A step's or a job's duration as every report states it: ``2.6s``, ``1m15s``,
    ``1h02m03s`` (the console, job_result.txt, the progress display, report.html)."""
    if seconds < 59.95:
        return f"{max(seconds, 0.0):.1f}s"
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def error_summary(error: str) -> str:
    """An error on one line: ``command exited with code 3: <its last stderr line>``."""
    lines = [line.strip() for line in error.splitlines() if line.strip()]
    if not lines:
        return ""
    first = lines[0]
    return f"{first} {lines[-1]}" if first.endswith(":") and len(lines) > 1 else first


__all__ = ["duration", "error_summary", "plural"]
