"""``azure.core.exceptions`` names that scripts catch around ``ml_client`` calls.

``ml_client.data.get("missing", "1")`` raises :class:`ResourceNotFoundError` as
azure-ai-ml does, so ``except ResourceNotFoundError:`` fallbacks (create the asset,
the compute, ...) run unchanged. When azure-core is installed each class here also
derives from azure-core's class of the same name, so either import catches it;
``mlpipe run-script`` mirrors ``azure.core.exceptions`` only when azure-core is absent.
"""

from __future__ import annotations

import importlib
from typing import Any, TypeVar, cast

E = TypeVar("E", bound=type)


def _with_real(cls: E) -> E:
    """``cls``, also deriving from azure-core's class of the same name when it is installed."""
    try:
        real: Any = getattr(importlib.import_module("azure.core.exceptions"), cls.__name__)
    except (ImportError, AttributeError):
        return cls
    if not isinstance(real, type) or issubclass(cls, real):
        return cls
    combined = type(cls.__name__, (cls, real), {"__module__": __name__,
                                                "__qualname__": cls.__qualname__,
                                                "__doc__": cls.__doc__})
    return cast(E, combined)  # a subclass of cls


@_with_real
class AzureError(Exception):
    """Base of the errors azure-core raises."""

    def __init__(self, message: object = None, *args: object, **kwargs: object) -> None:
        self.message = "" if message is None else str(message)
        self.status_code: int | None = None
        self.response = None
        self.reason: str | None = None
        Exception.__init__(self, self.message, *args)


@_with_real
class HttpResponseError(AzureError):
    """An error the service answered with."""


@_with_real
class ResourceNotFoundError(HttpResponseError, LookupError):
    """The named asset, job or resource does not exist (here: locally)."""


@_with_real
class ResourceExistsError(HttpResponseError):
    """The resource already exists."""


@_with_real
class ClientAuthenticationError(HttpResponseError):
    """Authentication failed (a local run needs none)."""


__all__ = ["AzureError", "ClientAuthenticationError", "HttpResponseError",
           "ResourceExistsError", "ResourceNotFoundError"]
