"""The base of every error mlpipe raises on purpose.

Catch :class:`MlpipeError` to handle any of them; each class also keeps the
built-in base it always had, so code catching ``ValueError`` or ``LookupError``
keeps working.
"""

from __future__ import annotations


class MlpipeError(Exception):
    """Something mlpipe refused or could not do; the message says what and why."""


__all__ = ["MlpipeError"]
