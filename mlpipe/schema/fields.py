"""Field types shared by the models: scalar settings that may also be bindings.

Each type is one plain validator (no pydantic "smart" unions, so one bad value gives
one precise message) plus the JSON Schema editors see. Errors are raised as
``PydanticCustomError(code, "{message}", {"message": ..., "hint": ...})`` and turned
into diagnostics by :mod:`mlpipe.schema.errors`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    PlainValidator,
    WithJsonSchema,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

import mlpipe.schema.ranges as ranges
from mlpipe.diagnostics import did_you_mean
from mlpipe.runs import JOB_NAME_PATTERN
from mlpipe.schema.bindings import BINDING_JSON_PATTERN, is_binding
from mlpipe.schema.yamlio import describe_value

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


class Rule:
    """``Annotated`` metadata: validate with ``validate``, show ``schema`` to editors.

    One object instead of a ``PlainValidator`` plus a ``WithJsonSchema``, so every
    field type below is a one-line type alias such as ``Annotated[str, Rule(...)]``.
    """

    def __init__(self, validate: Callable[[Any], Any], schema: dict[str, Any]) -> None:
        self.validator = PlainValidator(validate)
        self.json_schema = WithJsonSchema(schema)

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler
                                     ) -> core_schema.CoreSchema:
        return self.validator.__get_pydantic_core_schema__(source, handler)

    def __get_pydantic_json_schema__(self, schema: core_schema.CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return self.json_schema.__get_pydantic_json_schema__(schema, handler)


def _checked(check: Callable[[Any], Any], schema: dict[str, Any]) -> Rule:
    """A setting checked by ``check`` (from :mod:`ranges`) unless it is a binding."""

    def validate(value: Any) -> Any:
        if is_binding(value):
            return value
        try:
            return check(value)
        except ranges.SettingError as exc:
            raise fail(exc.code, exc.message, exc.hint) from None

    return Rule(validate, {"anyOf": [*schema.get("anyOf", [schema]), BINDING_SCHEMA]})


def _int_setting(name: str) -> Rule:
    """The documented range of the integer setting ``name``, or a binding."""
    rng = ranges.INT_SETTINGS[name]
    number: dict[str, Any] = {"type": "integer"}
    number["exclusiveMinimum" if rng.low_open else "minimum"] = rng.low
    number["exclusiveMaximum" if rng.high_open else "maximum"] = rng.high
    return _checked(rng.check, {"anyOf": [number, INT_TEXT_SCHEMA]})


# An integer setting is an int once validated, or a binding string.
RetryTimeout = Annotated[int | str, _int_setting("retry_settings.timeout")]
MaxRetries = Annotated[int | str, _int_setting("retry_settings.max_retries")]
ErrorThreshold = Annotated[int | str, _int_setting("error_threshold")]
MiniBatchErrorThreshold = Annotated[int | str, _int_setting("mini_batch_error_threshold")]
InstanceCount = Annotated[int | str, _int_setting("resources.instance_count")]
MaxConcurrency = Annotated[int | str, _int_setting("max_concurrency_per_instance")]

MiniBatchSize = Annotated[str, _checked(ranges.check_mini_batch_size, {
    "type": "string", "pattern": ranges.MINI_BATCH_SIZE_PATTERN.pattern})]
LoggingLevel = Annotated[str, _checked(ranges.check_logging_level, {
    "type": "string", "enum": list(ranges.LOGGING_LEVELS)})]
PartitionKeys = Annotated[list[str] | str, _checked(ranges.check_partition_keys, {
    "type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1})]


def int_in(low: int, high: int = ranges.INT_MAX, *, low_open: bool = False) -> Rule:
    """An integer in ``[low, high]`` (``(low, high]`` with ``low_open``), read leniently, or a
    binding."""
    rng = ranges.IntRange(low, high, low_open=low_open)
    number: dict[str, Any] = {"type": "integer",
                              "exclusiveMinimum" if low_open else "minimum": low}
    if high != ranges.INT_MAX:
        number["maximum"] = high
    return _checked(rng.check, {"anyOf": [number, INT_TEXT_SCHEMA]})


def number_in(low: float | None = None, high: float | None = None) -> Rule:
    """A number in ``[low, high]`` (either bound may be open-ended), or a binding."""

    def check(value: Any) -> int | float:
        number = ranges.to_number(value)
        if (low is not None and number < low) or (high is not None and number > high):
            shown = f"[{'-inf' if low is None else low}, {'inf' if high is None else high}]"
            raise ranges.SettingError(f"must be in {shown}, got {number}", code="range")
        return number

    schema: dict[str, Any] = {"type": "number"}
    if low is not None:
        schema["minimum"] = low
    if high is not None:
        schema["maximum"] = high
    return _checked(check, schema)


def camel_to_snake(text: str) -> str:
    """``AUCWeighted`` -> ``auc_weighted``: how azure-ai-ml normalises some enum values."""
    text = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", text)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", text).lower()


def one_of(*values: str, snake: bool = False, bindable: bool = True) -> Rule:
    """One of ``values``, compared as azure-ai-ml's ``StringTransformedEnum`` does (lower-cased,
    or camel-case to snake-case with ``snake``); normalised; a binding too when ``bindable``."""
    transform: Callable[[str], str] = camel_to_snake if snake else str.lower
    allowed = [transform(v) for v in values]

    def check(value: Any) -> str:
        if isinstance(value, str) and transform(value) in allowed:
            return transform(value)
        shown = ", ".join(allowed)
        message = (f"must be '{allowed[0]}', got {describe_value(value)}" if len(allowed) == 1
                   else f"must be one of {shown}, got {describe_value(value)}")
        hint = did_you_mean(transform(value), allowed) if isinstance(value, str) else None
        raise ranges.SettingError(message, code="enum", hint=hint)

    schema = {"type": "string", "enum": allowed}
    return _checked(check, schema) if bindable else Rule(_unbound(check), schema)


def _unbound(check: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def validate(value: Any) -> Any:
        try:
            return check(value)
        except ranges.SettingError as exc:
            raise fail(exc.code, exc.message, exc.hint) from None

    return validate


# Custom error type of a union chosen by a key -> (the key, its values), for the messages.
TAGGED_UNIONS: dict[str, tuple[str, tuple[str, ...]]] = {}


def chosen_by(choices: tuple[str, ...], *, what: str, key: str = "type", snake: bool = False,
              aliases: dict[str, str] | None = None, text: str | None = None,
              shown: tuple[str, ...] | None = None) -> Discriminator:
    """A ``Discriminator`` choosing a union member (tagged with one of ``choices``) by the
    mapping's ``key``, normalised as azure-ai-ml does (lower-cased, or camel-case to
    snake-case with ``snake``); ``aliases`` map other spellings to a tag; a string value is
    the member tagged ``text`` when given. ``what`` names the mapping in messages
    (``distribution``: "unknown distribution type 'pytorh' ..."), which list ``shown`` (by
    default the tags and the aliases)."""
    transform: Callable[[str], str] = camel_to_snake if snake else str.lower

    def tag(value: Any) -> str | None:
        if text is not None and isinstance(value, str):
            return text
        kind = value.get(key) if isinstance(value, dict) else getattr(value, key, None)
        if not isinstance(kind, str):
            return None
        kind = (aliases or {}).get(transform(kind), transform(kind))
        return kind if kind in choices else None

    error = f"{what.replace(' ', '_')}_{key}"
    TAGGED_UNIONS[error] = (key, shown or tuple(dict.fromkeys((*choices, *(aliases or ())))))
    return Discriminator(tag, custom_error_type=error,
                         custom_error_message=f"{what} {key}")


# Scalars of step settings, read as azure-ai-ml's marshmallow fields read them, or a binding.
Int = Annotated[int | str, _checked(ranges.to_int, {"anyOf": [{"type": "integer"},
                                                              INT_TEXT_SCHEMA]})]
Float = Annotated[int | float | str, _checked(ranges.to_number, {"type": "number"})]
Bool = Annotated[bool | str, _checked(ranges.to_bool, {"type": "boolean"})]


def _plain(kinds: tuple[type, ...], expected: str, schema: dict[str, Any]) -> Rule:
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

    return Rule(validate, schema)


Text = Annotated[str, _plain((str,), "a string", {"type": "string"})]


def _binding_text(value: Any) -> Any:
    if isinstance(value, str) and is_binding(value):
        return value
    raise fail("type", f"must be a binding such as ${{{{parent.inputs.<name>}}}} or a mapping, "
                       f"got {describe_value(value)}",
               "write {type: mltable, path: <folder>} for local or cloud data")


# A string that is a whole binding (``${{parent.inputs.x}}``): data given as text.
BindingText = Annotated[str, Rule(_binding_text, BINDING_SCHEMA)]
Scalar = Annotated[str | bool | int | float, _plain(
    (str, bool, int, float), "a string, number or boolean",
    {"type": ["string", "number", "boolean"]})]
ScalarOrNull = Annotated[str | bool | int | float | None, _plain(
    (str, bool, int, float, type(None)), "a string, number, boolean or null",
    {"type": ["string", "number", "boolean", "null"]})]
Version = Annotated[str | int | float, _plain(
    (str, int, float), "a version string or number", {"type": ["string", "number"]})]
Number = Annotated[int | float, _plain((int, float), "a number", {"type": "number"})]
PathOrMapping = Annotated[str | dict[str, Any], _plain(
    (str, dict), "a file path or a mapping", {"type": ["string", "object"]})]


def _validate_bool(value: Any) -> Any:
    if isinstance(value, bool) or is_binding(value):
        return value
    raise fail("type", f"must be true or false, got {describe_value(value)}")


Flag = Annotated[bool | str, Rule(_validate_bool, {"anyOf": [{"type": "boolean"}, BINDING_SCHEMA]})]


def _pattern(regex: re.Pattern[str], what: str) -> Rule:
    def validate(value: Any) -> str:
        if not isinstance(value, str):
            raise fail("type", f"must be a string, got {describe_value(value)}")
        if not regex.match(value):
            raise fail("pattern", f"must match {regex.pattern} ({what}), got {value!r}")
        return value

    return Rule(validate, {"type": "string", "pattern": regex.pattern})


JobName = Annotated[str, _pattern(
    _JOB_NAME, "letters, digits, '_' and '-', starting with a letter or digit")]
Identifier = Annotated[str, _pattern(
    _IDENTIFIER, "letters, digits and '_', not starting with a digit")]
# An input name may be a parameter group's member: ``group.number`` (azure-ai-ml flattens
# ``@group`` inputs so, and binds them as ``${{inputs.group.number}}``).
INPUT_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,254}(\.[A-Za-z_][A-Za-z0-9_]{0,254}){0,16}$"
InputName = Annotated[str, _pattern(
    re.compile(INPUT_NAME_PATTERN), "letters, digits and '_', not starting with a digit; "
    "'.' between a parameter group and its member")]


def _lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


CaseInsensitive = BeforeValidator(_lower)
"""azure-ai-ml compares ``type``/``mode`` values case-insensitively; so does mlpipe."""
