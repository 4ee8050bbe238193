"""``mlpipe run-script FILE.py|FILE.ipynb [ARGS...]``: run a published azure-ai-ml (v2) or
azureml v1 script or notebook unchanged, its Azure imports resolved to mlpipe's mirrors."""

from __future__ import annotations

import argparse
import sys
import sysconfig
import traceback
from pathlib import Path

from mlpipe.errors import MlpipeError, UsageError

HELP = "run an azure-ai-ml or azureml v1 script/notebook unchanged, locally"


def register_top(top: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = top.add_parser("run-script", help=HELP, description=HELP)
    parser.add_argument("file", metavar="FILE", help="a .py script or an .ipynb notebook")
    parser.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS",
                        help="arguments for the script (its sys.argv[1:])")
    parser.set_defaults(handler=run_script, error_prefix="mlpipe run-script")


def _user_line(error: BaseException, path: Path) -> str:
    """``file:line`` of the user's line (the script, a notebook cell, a module of theirs) that
    made the call, else the script."""
    skipped = (str(Path(__file__).resolve().parents[1]), sysconfig.get_path("stdlib"), "<frozen")
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if not f.filename.startswith(skipped)]
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else str(path)


class ScriptFailed(MlpipeError):
    """The script or notebook raised; ``details`` are its traceback from the user's frames."""

    def __init__(self, message: str, details: tuple[str, ...] = ()):
        super().__init__(message)
        self._details = details

    def details(self) -> tuple[str, ...]:
        return self._details


def run_script(args: argparse.Namespace) -> int:
    """Run the script; its own ``sys.exit(code)`` is the exit code. Whatever it raises is
    said in one line (an mlpipe refusal, with the user's line that made the call) or as the
    traceback of the user's frames, exit 1."""
    from mlpipe.diagnostics import ValidationError
    from mlpipe.runtime.source_paths import user_traceback
    from mlpipe.scripts import NotebookError, run_path

    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    if path.suffix not in (".py", ".ipynb"):
        raise UsageError(f"{path}: expected a .py script or an .ipynb notebook")
    try:
        return run_path(path, args.args)  # the script's exit code (its sys.exit's)
    except NotebookError:
        raise  # it names the file
    except ValidationError as error:  # its diagnostics, then the count of problems
        raise error.about(str(path)) from None
    except MlpipeError as error:  # mlpipe's own answer (NotAvailableLocally, ...): one line
        raise ScriptFailed(f"{_user_line(error, path)}: {type(error).__name__}: "
                           f"{error}") from error
    except Exception as error:  # noqa: BLE001 - the user's code failed: show where
        lines = user_traceback(error, runner_frames=True).rstrip("\n").splitlines()
        raise ScriptFailed(f"{path} failed", tuple(lines)) from error
    finally:
        sys.stdout.flush()
