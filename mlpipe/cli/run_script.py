"""``mlpipe run-script FILE.py|FILE.ipynb [ARGS...]``: run a published azure-ai-ml (v2) or
azureml v1 script or notebook unchanged, its Azure imports resolved to mlpipe's mirrors."""

from __future__ import annotations

import argparse
import sys
import sysconfig
import traceback
from pathlib import Path

HELP = "run an azure-ai-ml or azureml v1 script/notebook unchanged, locally"


def register_top(top: argparse._SubParsersAction) -> None:
    parser = top.add_parser("run-script", help=HELP, description=HELP)
    parser.add_argument("file", metavar="FILE", help="a .py script or an .ipynb notebook")
    parser.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS",
                        help="arguments for the script (its sys.argv[1:])")
    parser.set_defaults(handler=run_script)


def _user_line(error: BaseException, path: Path) -> str:
    """``file:line`` of the user's line (the script, a notebook cell, a module of theirs) that
    made the call, else the script."""
    skipped = (str(Path(__file__).resolve().parents[1]), sysconfig.get_path("stdlib"), "<frozen")
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if not f.filename.startswith(skipped)]
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else str(path)


def run_script(args: argparse.Namespace) -> int:
    from mlpipe.diagnostics import ValidationError
    from mlpipe.errors import MlpipeError
    from mlpipe.runtime.source_paths import user_traceback
    from mlpipe.scripts import NotebookError, run_path

    path = Path(args.file)
    if not path.is_file():
        print(f"mlpipe run-script: {path}: no such file", file=sys.stderr)
        return 2
    if path.suffix not in (".py", ".ipynb"):
        print(f"mlpipe run-script: {path}: expected a .py script or an .ipynb notebook",
              file=sys.stderr)
        return 2
    try:
        run_path(path, args.args)
    except SystemExit as exit_:
        code = exit_.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except ValidationError as error:
        print(f"mlpipe run-script: {path}: {error}", file=sys.stderr)
        return 1
    except NotebookError as error:
        print(f"mlpipe run-script: {error}", file=sys.stderr)
        return 1
    except MlpipeError as error:  # mlpipe's own answer (NotAvailableLocally, ...): one line
        print(f"mlpipe run-script: {_user_line(error, path)}: {type(error).__name__}: {error}",
              file=sys.stderr)
        return 1
    except Exception as error:  # noqa: BLE001 - the user's code failed: show where, exit 1
        print(user_traceback(error, runner_frames=True), end="", file=sys.stderr)
        print(f"mlpipe run-script: {path} failed", file=sys.stderr)
        return 1
    finally:
        sys.stdout.flush()
    return 0
