"""Argument conventions shared by the commands, shaped like ``az ml``'s.

- :class:`CommandParser` makes a usage error name the sub-command it belongs to
  (``mlpipe job show: error: ...`` with ``job show``'s usage) and exit 2.
- :func:`add_job_name` accepts a job's name positionally or as ``--name/-n``.
- :func:`add_output_format` adds ``--output/-o`` and :func:`print_structured`
  prints a record as JSON or YAML.
- :func:`positive_count` reads a whole number of 1 or more.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

OUTPUT_FORMATS: tuple[str, ...] = ("table", "json", "yaml")

PostCheck = Callable[[argparse.ArgumentParser, argparse.Namespace], None]


class CommandParser(argparse.ArgumentParser):
    """An argument parser whose sub-commands report their own usage errors.

    argparse lets a sub-command's parser collect unknown arguments and hands them to
    the top-level parser, which then prints the top level's usage; here the
    sub-command that received them says so, with its own usage. Checks added with
    :meth:`add_post_check` run once this parser has read its arguments.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._post_checks: list[PostCheck] = []

    def add_post_check(self, check: PostCheck) -> None:
        """Run ``check(parser, namespace)`` after parsing; it calls ``parser.error``."""
        self._post_checks.append(check)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if self._is_leaf() and extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        for check in self._post_checks:
            check(self, parsed)
        return parsed, extras

    def _is_leaf(self) -> bool:
        """A parser with no sub-commands of its own (where unknown arguments belong)."""
        return self._subparsers is None


def add_job_name(parser: argparse.ArgumentParser, *, what: str = "the job's name") -> None:
    """A job name given as ``NAME`` or ``--name/-n NAME`` (az's spelling); the handler
    reads ``args.name``. Giving neither, or two different names, is a usage error."""
    parser.add_argument("name", nargs="?", metavar="NAME", action=_JobName,
                        help=f"{what} (or --name)")
    parser.add_argument("--name", "-n", dest="name", metavar="NAME", action=_JobName,
                        help=f"{what}, as in az ml")
    if isinstance(parser, CommandParser):
        parser.add_post_check(_require_name)


class _JobName(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        if values is None:  # the positional left out: keep a --name given before it
            return
        current = getattr(namespace, "name", None)
        if current is not None and current != values:
            parser.error(f"two job names given ({current!r} and {values!r}): "
                         "give NAME or --name NAME once")
        namespace.name = values


def _require_name(parser: argparse.ArgumentParser, namespace: argparse.Namespace) -> None:
    if getattr(namespace, "name", None) is None:
        parser.error("the job's name is required: NAME or --name/-n NAME")


def positive_count(text: str) -> int:
    """An argparse type: a whole number of 1 or more (``--max-results``, ``--instance-count``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {text}")
    return value


def add_output_format(parser: argparse.ArgumentParser,
                      formats: Sequence[str] = OUTPUT_FORMATS, default: str = "table") -> None:
    """``--output/-o`` as az spells it: ``table`` (the default), ``json`` or ``yaml``."""
    parser.add_argument("--output", "-o", choices=tuple(formats), default=default,
                        help=f"output format (default: {default})")


def print_structured(data: Any, output: str) -> None:
    """Print ``data`` as JSON or YAML (``output`` is ``json`` or ``yaml``)."""
    if output == "yaml":
        import yaml

        plain = json.loads(json.dumps(data, default=str))  # dates etc. as text, like JSON
        sys.stdout.write(yaml.safe_dump(plain, sort_keys=False, allow_unicode=True))
    else:
        print(json.dumps(data, indent=2, default=str))
