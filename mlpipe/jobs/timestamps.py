"""Times in job records: aware UTC datetimes written as ISO 8601 with milliseconds."""

from __future__ import annotations

from datetime import datetime, timezone


def now() -> datetime:
    """This instant in UTC."""
    return datetime.now(timezone.utc)

def iso(at: datetime | None) -> str | None:
    """``at`` as written in a record (``None`` stays ``None``)."""
    return at.isoformat(timespec="milliseconds") if at else None

def parse_iso(text: str | None) -> datetime | None:
    """A record's time back as a datetime (``None`` when absent)."""
    return datetime.fromisoformat(text) if text else None
