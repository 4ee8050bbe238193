"""``mlpipe.mldesigner``: mirror of the ``mldesigner`` package (``command_component``,
``Input``, ``Output``), for components written as Python functions.

Mirror module: it only re-exports (the code lives in ``mlpipe.sdk.mldesigner``; a step's
``mldesigner execute`` is ``mlpipe.sdk.mldesigner_exec``). docs/architecture.md lists every
mirror.
"""

from __future__ import annotations

from mlpipe.sdk.mldesigner import Input, Output, command_component

__all__ = ["Input", "Output", "command_component"]
