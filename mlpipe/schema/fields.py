"""Field types shared by the models: scalar settings that may also be bindings.

Each type is one plain validator (no pydantic "smart" unions, so one bad value gives
one precise message) plus the JSON Schema editors see. Errors are raised as
``PydanticCustomError(code, "{message}", {"message": ..., "hint": ...})`` and turned
into diagnostics by :mod:`mlpipe.schema.errors`.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Callable

from pydantic import BaseModel, BeforeValidator, ConfigDict, PlainValidator, WithJsonSchema
from pydantic_core import PydanticCustomError

from mlpipe.schema import ranges
from mlpipe.schema.bindings import BINDING_JSON_PATTERN, is_binding
from mlpipe.schema.yamlio import describe_value

JOB_NAME_PATTERN = r"^[a-zA-Z0-9][a-zA-Z0-9_-]{0,254}$"
IDENTIFIER_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,254}$"
_JOB_NAME = re.compile(JOB_NAME_PATTERN)
_IDENTIFIER = re.compile(IDENTIFIER_PATTERN)
BINDING_SCHEMA: dict[str, Any] = {
    "type": "string", "pattern": BINDING_JSON_PATTERN,
    "description": "a binding such as ${{parent.inputs.x}}",
}
INT_TEXT_SCHEMA: dict[str, Any] = {"type": "string", "pattern": r"^\s*[-+]?\d+\s*$"}


class StrictModel(BaseModel):
    """Base of every model: unknown keys are errors; ``$schema``-style aliases allowed."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=False,
                              str_strip_whitespace=False)


def fail(code: str, message: str, hint: str | None = None) -> PydanticCustomError:
    """A pydantic error carrying mlpipe's message and hint."""
    return PydanticCustomError(code, "{message}", {"message": message, "hint": hint})


def _checked(check: Callable[[Any], Any]) -> PlainValidator:
    """A setting checked by ``check`` (from :mod:`ranges`) unless it is a binding."""

    def validate(value: Any) -> Any:
        if is_binding(value):
            return value
        try:
            return check(value)
        except ranges.SettingError as exc:
            raise fail(exc.code, exc.message, exc.hint) from None

    return PlainValidator(validate)


def _or_binding(schema: dict[str, Any]) -> WithJsonSchema:
    """The JSON Schema of a setting that may also be a ``${{...}}`` binding."""
    return WithJsonSchema({"anyOf": [*schema.get("anyOf", [schema]), BINDING_SCHEMA]})


def _int_range(name: str) -> PlainValidator:
    return _checked(ranges.INT_SETTINGS[name].check)


def _int_schema(name: str) -> WithJsonSchema:
    rng = ranges.INT_SETTINGS[name]
    number: dict[str, Any] = {"type": "integer"}
    number["exclusiveMinimum" if rng.low_open else "minimum"] = rng.low
    number["exclusiveMaximum" if rng.high_open else "maximum"] = rng.high
    return _or_binding({"anyOf": [number, INT_TEXT_SCHEMA]})


# An integer setting is an int once validated, or a binding string.
RetryTimeout = Annotated[int | str, _int_range("retry_settings.timeout"),
                         _int_schema("retry_settings.timeout")]
MaxRetries = Annotated[int | str, _int_range("retry_settings.max_retries"),
                       _int_schema("retry_settings.max_retries")]
ErrorThreshold = Annotated[int | str, _int_range("error_threshold"),
                           _int_schema("error_threshold")]
MiniBatchErrorThreshold = Annotated[int | str, _int_range("mini_batch_error_threshold"),
                                    _int_schema("mini_batch_error_threshold")]
InstanceCount = Annotated[int | str, _int_range("resources.instance_count"),
                          _int_schema("resources.instance_count")]
MaxConcurrency = Annotated[int | str, _int_range("max_concurrency_per_instance"),
                           _int_schema("max_concurrency_per_instance")]

MiniBatchSize = Annotated[str, _checked(ranges.check_mini_batch_size), _or_binding(
    {"type": "string", "pattern": ranges.MINI_BATCH_SIZE_PATTERN.pattern})]
LoggingLevel = Annotated[str, _checked(ranges.check_logging_level), _or_binding(
    {"type": "string", "enum": list(ranges.LOGGING_LEVELS)})]
PartitionKeys = Annotated[list[str] | str, _checked(ranges.check_partition_keys), _or_binding(
    {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1})]


def _plain(kinds: tuple[type, ...], expected: str) -> PlainValidator:
    """A scalar accepted only if it is one of ``kinds`` (bool is never an int)."""

    def validate(value: Any) -> Any:
        if isinstance(value, bool) and bool not in kinds:
            raise fail("type", f"must be {expected}, got {describe_value(value)}")
        if isinstance(value, kinds):
            return value
        hint = None
        if str in kinds and isinstance(value, (int, float)) and not isinstance(value, bool):
            hint = f"quote it: '{value}'"
        raise fail("type", f"must be {expected}, got {describe_value(value)}", hint)

    return PlainValidator(validate)


Text = Annotated[str, _plain((str,), "a string"), WithJsonSchema({"type": "string"})]
Scalar = Annotated[str | bool | int | float,
                   _plain((str, bool, int, float), "a string, number or boolean"),
                   WithJsonSchema({"type": ["string", "number", "boolean"]})]
ScalarOrNull = Annotated[str | bool | int | float | None,
                         _plain((str, bool, int, float, type(None)),
                                "a string, number, boolean or null"),
                         WithJsonSchema({"type": ["string", "number", "boolean", "null"]})]
Version = Annotated[str | int | float, _plain((str, int, float), "a version string or number"),
                    WithJsonSchema({"type": ["string", "number"]})]
Number = Annotated[int | float, _plain((int, float), "a number"),
                   WithJsonSchema({"type": "number"})]
PathOrMapping = Annotated[str | dict[str, Any], _plain((str, dict), "a file path or a mapping"),
                          WithJsonSchema({"type": ["string", "object"]})]


def _validate_bool(value: Any) -> Any:
    if isinstance(value, bool) or is_binding(value):
        return value
    raise fail("type", f"must be true or false, got {describe_value(value)}")


Flag = Annotated[bool | str, PlainValidator(_validate_bool), WithJsonSchema(
    {"anyOf": [{"type": "boolean"}, BINDING_SCHEMA]})]


def _pattern(regex: re.Pattern[str], what: str) -> PlainValidator:
    def validate(value: Any) -> str:
        if not isinstance(value, str):
            raise fail("type", f"must be a string, got {describe_value(value)}")
        if not regex.match(value):
            raise fail("pattern", f"must match {regex.pattern} ({what}), got {value!r}")
        return value

    return PlainValidator(validate)


JobName = Annotated[str, _pattern(_JOB_NAME, "letters, digits, '_' and '-', starting with a "
                                             "letter or digit"),
                    WithJsonSchema({"type": "string", "pattern": JOB_NAME_PATTERN})]
Identifier = Annotated[str, _pattern(_IDENTIFIER, "letters, digits and '_', not starting with "
                                                  "a digit"),
                       WithJsonSchema({"type": "string", "pattern": IDENTIFIER_PATTERN})]


def _lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


CaseInsensitive = BeforeValidator(_lower)
"""azure-ai-ml compares ``type``/``mode`` values case-insensitively; so does mlpipe."""
