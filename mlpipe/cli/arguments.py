"""Argument conventions shared by the commands, shaped like ``az ml``'s.

- :class:`CommandParser` makes a usage error name the sub-command it belongs to
  (``mlpipe job show: error: ...`` with ``job show``'s usage) and exit 2.
- :func:`add_job_name` accepts a job's name positionally or as ``--name/-n``.
- :func:`add_output_format` adds az's ``--output/-o`` and ``--query`` to a verb, and
  :func:`emit` prints its result: the human view, or the machine output (``json``,
  ``jsonc``, ``yaml``, ``yamlc``, ``tsv``, ``table`` of a query, ``none``) that
  :mod:`mlpipe.cli.output` writes as az does. ``--query`` alone means ``-o json``, az's
  default. Every verb with output goes through these two.
- :func:`add_workspace_options` accepts az's ``--resource-group/-g``, ``--workspace-name/-w``
  and ``--subscription`` (one local workspace: they select nothing); :func:`add_web`
  accepts ``--web`` and :func:`web_note` says what it would have opened.
- :func:`runs_dir_option` adds ``--runs-dir``; :func:`add_overrides` adds ``--set``;
  :func:`add_backend` adds ``--backend`` and each backend's own options
  (:func:`backend_choice` reads them).
- :func:`positive_count` reads a whole number of 1 or more.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from mlpipe.cli.output import FORMATS, compile_query, render, run_query
from mlpipe.errors import UsageError
from mlpipe.frozen import freeze
from mlpipe.runtime.backends import BACKENDS, BackendChoice, backend_names

OUTPUT_FORMATS: tuple[str, ...] = FORMATS

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


def add_overrides(parser: argparse.ArgumentParser, help: str) -> None:
    """``--set KEY.PATH=VALUE`` (repeatable, az's spelling) into ``args.overrides``; a value
    not written ``KEY=VALUE`` is a usage error here, the key path is read where it applies
    (:func:`mlpipe.compiler.overrides.parse_override`, the advisor's settings)."""
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        type=_override, metavar="KEY.PATH=VALUE", help=help)


def _override(text: str) -> str:
    key, sep, _value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY.PATH=VALUE, got {text!r}")
    return text


BACKEND_OPTION_DEST = "backend_option:"  # + "<backend>:<option>": where argparse keeps a value


def add_backend(parser: argparse.ArgumentParser) -> None:
    """``--backend``, its choices and their help, and each backend's own options
    (``--scheduler`` ...), all read from the backends' table (``BackendSpec.options``): a
    backend that declares an option gets its flag here, in a group of its own; read them
    with :func:`backend_choice`."""
    choices = ", ".join(f"{spec.name} ({spec.summary})" if spec.summary else spec.name
                        for spec in BACKENDS.values())
    parser.add_argument("--backend", choices=backend_names(), default=None,
                        help=f"where parallel steps run: {choices}; default: local, or the "
                             "backend whose options are given (--scheduler: dask)")
    for spec in BACKENDS.values():
        if not spec.options:
            continue
        group = parser.add_argument_group(f"options of the {spec.name} backend "
                                          f"(with --backend {spec.name})")
        for option in spec.options:
            dest = f"{BACKEND_OPTION_DEST}{spec.name}:{option.name}"
            if option.switch:
                group.add_argument(option.flag, dest=dest, action="store_true",
                                   default=argparse.SUPPRESS, help=option.help)
            else:
                group.add_argument(option.flag, dest=dest, metavar=option.metavar,
                                   default=argparse.SUPPRESS, help=option.help)


def backend_choice(args: argparse.Namespace) -> BackendChoice:
    """The backend ``args`` chose and the values of its options given on the command line
    (options of one backend without ``--backend`` choose it: ``--scheduler`` is ``--backend
    dask``); :class:`UsageError` for an option of another backend."""
    given = [(dest.removeprefix(BACKEND_OPTION_DEST).partition(":"), value)
             for dest, value in vars(args).items() if dest.startswith(BACKEND_OPTION_DEST)]
    implied = {backend for (backend, _, _), _ in given}
    chosen: str = getattr(args, "backend", None) or (
        implied.pop() if len(implied) == 1 else "local")
    options: dict[str, Any] = {}
    for (backend, _, name), value in given:
        if backend != chosen:
            flag = "--" + name.replace("_", "-")
            raise UsageError(f"{flag} is an option of the {backend} backend: add --backend "
                             f"{backend}")
        options[name] = value
    return BackendChoice(chosen, freeze(options))


def positive_count(text: str) -> int:
    """An argparse type: a whole number of 1 or more (``--max-results``, ``--instance-count``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {text}")
    return value


def runs_dir_option(parser: argparse.ArgumentParser, help: str | None = None) -> None:
    """``--runs-dir`` (:func:`mlpipe.runs.resolve_runs_dir` reads it, then the variable)."""
    parser.add_argument("--runs-dir", metavar="DIR",
                        help=help or "runs folder (default: $MLPIPE_RUNS_DIR or ./mlpipe-runs)")


def add_output_format(parser: argparse.ArgumentParser,
                      formats: Sequence[str] = OUTPUT_FORMATS, default: str = "table") -> None:
    """``--output/-o`` as az spells it (``table``, the default, is the human view) and
    ``--query JMESPATH``; read them with :func:`output_format` or :func:`emit`."""
    parser.add_argument("--output", "-o", choices=tuple(formats), default=default,
                        type=str.lower, action=_OutputGiven,
                        help=f"output format, as az: {', '.join(formats)} (default: {default})")
    parser.add_argument("--query", type=_query, metavar="JMESPATH",
                        help="JMESPath query on the machine output, as az (implies -o json "
                             "unless -o is given)")


class _OutputGiven(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        namespace.output = values
        namespace.output_given = True


def _query(text: str) -> Any:
    try:
        return compile_query(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def output_format(args: argparse.Namespace) -> str:
    """``human`` (the default view: ``table``, or ``text`` where a verb calls it that) or the
    machine format the command line asks for."""
    output = getattr(args, "output", "table") or "table"
    if getattr(args, "query", None) is not None and not getattr(args, "output_given", False):
        return "json"  # az's default output
    if output in ("table", "text") and getattr(args, "query", None) is None:
        return "human"
    return output


def machine_output(args: argparse.Namespace) -> bool:
    """Whether stdout is for the machine output (human progress goes to stderr then)."""
    return output_format(args) != "human"


def emit(args: argparse.Namespace, data: Any, human: Callable[[], None] | None = None) -> None:
    """Print a verb's result: ``human()`` for the default view (when given), else ``data``
    (or ``data()``) through ``--query`` in the ``-o`` format, as az prints it."""
    output = output_format(args)
    if output == "human" and human is not None:
        human()
        return
    result = data() if callable(data) else data
    query = getattr(args, "query", None)
    if query is not None:
        result = run_query(query, result)
    sys.stdout.write(render(result, "table" if output == "human" else output,
                            query_active=query is not None))


def print_structured(data: Any, output: str | argparse.Namespace) -> None:
    """Print ``data`` in a machine format (``output``: a format name, or the parsed
    arguments, whose ``--query`` then applies too)."""
    if isinstance(output, argparse.Namespace):
        emit(output, data)
    else:
        sys.stdout.write(render(data, output))


def add_workspace_options(parser: argparse.ArgumentParser) -> None:
    """az's workspace selectors, accepted so az scripts run unchanged: there is one local
    workspace (the runs folder), so they select nothing."""
    parser.add_argument("--resource-group", "-g", metavar="NAME",
                        help="accepted for az compatibility (no effect locally)")
    parser.add_argument("--workspace-name", "-w", metavar="NAME",
                        help="accepted for az compatibility (no effect locally)")
    parser.add_argument("--subscription", metavar="ID",
                        help="accepted for az compatibility (no effect locally)")


def add_web(parser: argparse.ArgumentParser) -> None:
    """``--web``: az opens the studio; here a note says where the job's report is instead."""
    parser.add_argument("--web", action="store_true",
                        help="accepted for az compatibility: no studio here, a note names the "
                             "job's report instead")


def web_note(args: argparse.Namespace, report: str | None) -> None:
    """The note ``--web`` gets (on stderr, so machine output stays clean)."""
    if getattr(args, "web", False):
        where = f"open {report}" if report else "see mlpipe job show NAME"
        print(f"mlpipe: --web ignored: there is no studio here; {where}", file=sys.stderr)
