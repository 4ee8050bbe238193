"""Models imported and built the first time a document uses them.

The step and component types that only Azure runs (AutoML, data transfer, import, Spark)
and sweep steps hold about half of the schema's models; building them on every start
would cost each ``mlpipe`` command and each driver about half a second. A union member
``Annotated[Any, LazyModel("module:Name"), Tag(...)]`` validates through that model,
imported on first use; its errors keep their key paths (pydantic prefixes them with the
member's place) and its JSON Schema is the model's own.
"""

from __future__ import annotations

import importlib
from typing import Annotated, Any, get_args, get_origin

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler, TypeAdapter
from pydantic_core import core_schema


class LazyModel:
    """Annotation metadata: validate with the type at ``target`` (``"package.module:Name"``),
    imported and built when first needed."""

    def __init__(self, target: str) -> None:
        self.target = target
        self._adapter: TypeAdapter[Any] | None = None

    def resolve(self) -> Any:
        """The type at ``target`` (imports its module)."""
        module, _, name = self.target.partition(":")
        return getattr(importlib.import_module(module), name)

    @property
    def adapter(self) -> TypeAdapter[Any]:
        if self._adapter is None:
            self._adapter = TypeAdapter(self.resolve())
        return self._adapter

    def validate(self, value: Any) -> Any:
        return self.adapter.validate_python(value)

    def __get_pydantic_core_schema__(self, source: Any,
                                     handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(self.validate)

    def __get_pydantic_json_schema__(self, core: core_schema.CoreSchema,
                                     handler: GetJsonSchemaHandler) -> Any:
        return handler(self.adapter.core_schema)

    def __repr__(self) -> str:
        return f"LazyModel({self.target!r})"


def lazy_member(tp: Any) -> Any:
    """The type a ``LazyModel`` in ``Annotated`` metadata stands for, else ``None``."""
    if get_origin(tp) is not Annotated:
        return None
    lazy = next((m for m in get_args(tp)[1:] if isinstance(m, LazyModel)), None)
    return lazy.resolve() if lazy is not None else None


__all__ = ["LazyModel", "lazy_member"]
