"""Sweep published Azure ML programs: run each one here, with its imports switched to mlpipe
and unchanged (``mlpipe run-script``, or ``az ml`` forwarded to mlpipe), and print a table.

    python tools/sweep_published_programs.py FOLDER [FOLDER ...] [--timeout 600]
        [--how both|switched|unchanged] [--only REGEX] [--jobs N] [--markdown] [--list]

Each ``FOLDER`` is a checkout of published programs (Azure/azureml-examples,
Azure/MachineLearningNotebooks, or one folder of them). Picked from it:

- notebooks (``.ipynb``) and Python scripts that build a pipeline with parallel steps
  (azure-ai-ml's ``parallel_run_function`` or a ``type: parallel`` component, azureml v1's
  ``ParallelRunStep`` / ``ParallelRunConfig``), and the programs docs/sdk.md's compatibility
  section lists by name (:data:`LISTED`). Entry scripts (``def run(``) and helper modules a
  sibling imports are not programs.
- ``az ml`` pipelines: each pipeline YAML with a ``type: parallel`` step, run by the
  published shell snippet that submits and waits for a job (``cli/run-job.sh``, found
  above the YAML) through an ``az`` that forwards ``az ml`` to mlpipe (docs/running.md's
  line); switched, it is ``mlpipe job create --file``.

Each run happens in a scratch copy of the program's folder (nothing is copied into the
project), with its own runs folder and a timeout. A failure's reason is the last error
line of its output, classified (:func:`classify`): ``framework`` (a library the program's
own code needs is not installed here), ``cloud-only`` (refused: it needs a workspace),
``cloud data`` (a download or registry asset with no local stand-in), ``datastore``
(waits on registered cloud datastores), ``timeout``, ``program returns no results`` (its
``run()`` returns fewer results than items, so its mini-batches count as failed, as in the
cloud), and ``mlpipe`` for the rest: those are this project's to fix.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mlpipe.import_mirrors import MIRRORS, V1_PACKAGES  # noqa: E402
from mlpipe.scripts import cell_code, notebook_cells  # noqa: E402

# The programs docs/sdk.md's compatibility section names (file stems), swept even where they
# build no parallel step.
LISTED = frozenset({
    "iris_batch_prediction", "oj_sales_prediction", "mnist_batch_prediction",
    "pipeline_with_parallel_nodes", "file-dataset-image-inference-mnist",
    "tabular-dataset-inference-iris", "tabular-dataset-partition-per-column",
    "file-dataset-partition-per-folder", "lightgbm-iris-sweep",
    "02_CustomScript_Training_Pipeline",
})
PARALLEL = re.compile(r"parallel_run_function|ParallelRunStep|ParallelRunConfig|"
                      r"AutoMLPipelineBuilder\.get_many_models|"  # v1 AutoML: ParallelRunSteps
                      r"type:\s*['\"]?parallel\b|\"type\":\s*\"parallel\"")
SKIPPED_DIRS = {".git", ".github", "node_modules", "__pycache__", ".ipynb_checkpoints"}
RUN_JOB = "run-job.sh"
MAX_COPY_BYTES = 200 * 1024 * 1024


@dataclass(frozen=True)
class Program:
    path: Path   # the notebook, script or pipeline YAML
    root: Path   # the checkout it was found in
    kind: str    # "notebook" | "script" | "az"

    @property
    def name(self) -> str:
        return f"{self.root.name}/{self.path.relative_to(self.root)}"


@dataclass(frozen=True)
class Outcome:
    program: Program
    how: str
    ok: bool
    seconds: float
    reason: str = ""
    cause: str = ""


# -- picking the programs ------------------------------------------------------------------------

def _files(root: Path, suffixes: tuple[str, ...]) -> list[Path]:
    out = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        out += [Path(folder, f) for f in sorted(files) if f.endswith(suffixes)]
    return out


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _code(path: Path) -> str:
    """A program's Python: a notebook's code cells, or the script."""
    if path.suffix == ".ipynb":
        try:
            return "\n".join(notebook_cells(path))
        except Exception:  # not a readable notebook: not a program
            return ""
    return _text(path)


def _builds_parallel(path: Path, code: str) -> bool:
    """The program builds a parallel step itself or loads a component file that is one."""
    if PARALLEL.search(code):
        return True
    for ref in re.findall(r"load_component\(\s*(?:source\s*=\s*)?[rf]?['\"]([^'\"]+)['\"]", code):
        component = path.parent / ref
        if component.is_file() and re.search(r"^type:\s*parallel\b", _text(component), re.M):
            return True
    return False


def _is_helper(path: Path, code: str) -> bool:
    """An entry script, or a module a sibling notebook or script imports."""
    if re.search(r"^def (run|init)\(", code, re.M):
        return True
    pattern = re.compile(rf"^\s*(from|import)\s+{re.escape(path.stem)}\b", re.M)
    return any(pattern.search(_code(other)) for other in path.parent.iterdir()
               if other != path and other.suffix in (".py", ".ipynb"))


def _run_job_script(pipeline: Path, root: Path) -> Path | None:
    for folder in [pipeline.parent, *pipeline.parent.parents]:
        if (folder / RUN_JOB).is_file():
            return folder / RUN_JOB
        if folder == root:
            return None
    return None


def find_programs(root: Path) -> list[Program]:
    """The programs of one checkout worth sweeping, in path order."""
    programs = []
    for path in _files(root, (".ipynb", ".py")):
        code = _code(path)
        if not code or _is_helper(path, code):
            continue
        if path.stem in LISTED or _builds_parallel(path, code):
            programs.append(Program(path, root, "notebook" if path.suffix == ".ipynb"
                                    else "script"))
    for path in _files(root, (".yml", ".yaml")):
        text = _text(path)
        if (re.search(r"^type:\s*pipeline\b", text, re.M) and PARALLEL.search(text)
                and _run_job_script(path, root) is not None):
            programs.append(Program(path, root, "az"))
    return sorted(programs, key=lambda p: p.name)


# -- switching imports ---------------------------------------------------------------------------

# azure-ai-ml's public modules -> the names docs/sdk.md's migration table gives them
_PUBLIC = {"azure.ai.ml": "mlpipe", **{k: v for k, v in MIRRORS.items() if k != "azure.ai.ml"}}


def _switched_module(name: str) -> str | None:
    if name in _PUBLIC:
        return _PUBLIC[name]
    if any(name == p or name.startswith(p + ".") for p in V1_PACKAGES):
        return "mlpipe.v1"
    return None


def switch_imports(code: str) -> str:
    """Each ``from <azure module> import ...`` line made ``from <mlpipe module> import ...``
    (the migration docs/sdk.md describes); an ``import azureml.core`` kept, after an ``import
    mlpipe`` that lets it resolve; other lines stay as published."""
    def swap(match: re.Match[str]) -> str:
        target = _switched_module(match.group(2))
        return match.group(0) if target is None else f"{match.group(1)}from {target} import"

    code = re.sub(r"^(\s*)from\s+([\w.]+)\s+import", swap, code, flags=re.M)
    first = next((m for m in re.finditer(r"^(\s*)import\s+([\w.]+)", code, flags=re.M)
                  if _switched_module(m.group(2))), None)
    if first is None:
        return code
    # ``import azureml.core`` (for azureml.core.VERSION) stays, after an ``import mlpipe``
    # whose import mirrors resolve it
    return (f"{code[:first.start()]}{first.group(1)}import mlpipe\n"
            f"{code[first.start():]}")


def switched_script(program: Program, folder: Path) -> Path:
    """The program with its imports switched, as a script beside it in ``folder``."""
    path = folder / program.path.name
    if program.kind == "notebook":
        cells = notebook_cells(path)
        code = "".join(cell_code(cell, i, note=lambda _text: None) for i, cell in enumerate(cells))
    else:
        code = _text(path)
    script = path.with_name(f"{path.stem}_switched.py")
    script.write_text(switch_imports(code), encoding="utf-8")
    return script


# -- running -------------------------------------------------------------------------------------

def documented_az() -> str:
    """docs/running.md's one line that makes an ``az`` forwarding ``az ml`` to mlpipe."""
    text = (REPO / "docs" / "running.md").read_text(encoding="utf-8")
    (line,) = [line for line in text.splitlines() if line.startswith("mkdir -p .mlpipe-az")]
    return line


def _copy(program: Program, scratch: Path) -> Path:
    """A scratch copy of the program's folder (an ``az`` pipeline's beside ``run-job.sh``)."""
    source = program.path.parent
    size = sum(p.stat().st_size for p in source.rglob("*") if p.is_file())
    if size > MAX_COPY_BYTES:
        raise RuntimeError(f"{source} holds {size >> 20} MiB: too big to copy")
    folder = scratch / source.name
    shutil.copytree(source, folder, symlinks=True,
                    ignore=shutil.ignore_patterns(*SKIPPED_DIRS))
    if program.kind == "az":
        script = _run_job_script(program.path, program.root)
        assert script is not None
        shutil.copy(script, scratch / RUN_JOB)
    return folder


def command(program: Program, how: str, folder: Path) -> tuple[list[str], Path]:
    """The command line and working folder of one run."""
    bin_dir = Path(sys.executable).parent
    mlpipe = str(bin_dir / "mlpipe") if (bin_dir / "mlpipe").exists() else "mlpipe"
    target = folder / program.path.name
    if program.kind == "az":
        if how == "switched":
            return [mlpipe, "job", "create", "--file", str(target)], folder
        relative = f"{folder.name}/{program.path.name}"
        return ["bash", "-c", f"{documented_az()}\nbash {RUN_JOB} {relative}"], folder.parent
    if how == "switched":
        return [sys.executable, switched_script(program, folder).name], folder
    return [mlpipe, "run-script", target.name], folder


ERROR_LINE = re.compile(r"^(\w+\.)*\w*(Error|Exception|Exit|Interrupt|Failure|Unavailable|"
                        r"NotAvailableLocally)\b.*|^mlpipe[\w -]*: .*|^error: .*|"
                        r"^\S+:\d+:\d+: .*|"  # a diagnostic: file:line:column: key: message
                        r"^Job (failed|not completed).*|^Job creation failed.*", re.I)
# lines that only say that something above failed
WRAPPER = re.compile(r"^Job (failed|not completed|creation failed)|JobFailedError|"
                     r"^mlpipe run-script: .* failed$|see the step logs|"
                     r"^mlpipe: The job was not started|: error: argument", re.I)


def reason_of(output: str) -> str:
    """The line that says why a run failed: the first diagnostic (``file:line:col:``), else
    the last error line that is not only a wrapper, else the last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if ERROR_LINE.match(line)]
    diagnostics = [line for line in errors if re.match(r"^\S+:\d+:\d+: ", line)]
    causes = [line for line in errors if not WRAPPER.search(line)]
    found = (diagnostics[:1] or causes[-1:] or errors[-1:] or lines[-1:] or ["no output"])[0]
    return found[:300]


_OWN = ("azure", "azureml", "mlpipe", "mltable", "mldesigner")
CAUSES = (  # (cause, pattern on the reason and output): first match wins
    ("timeout", r"^timeout after"),
    # PRS counts a mini-batch whose run() returns fewer results than items as failed (the
    # program's own choice: it returns [] and writes its outputs itself)
    ("program returns no results", r"run\(\) returned 0 results for a mini-batch"),
    ("cloud-only", r"NotAvailableLocally|runs in Azure only|needs a workspace|"
                   r"azureml://registries/|AutoML|remote asset not available offline: flow "),
    ("workspace asset", r"AssetNotFoundError|is registered in .*registry\.json"),
    ("datastore", r"ClientAuthenticationError|DefaultAzureCredential failed|"
                  r"CredentialUnavailableError"),
    ("datastore", r"register_azure_blob_container|account_key|account_name|"
                  r"azureml://datastores/(?!workspaceblobstore)|[Dd]atastore '[^']+' .*not"),
    ("cloud data", r"cannot be reached from here|cannot reach the storage account|URLError|"
                   r"ConnectionError|"
                   r"reading cloud storage needs|RemoteAssetsError|not available offline|"
                   r"Name or service not known|wasbs?://|abfss?://"),
)


def classify(reason: str, output: str = "") -> str:
    """What stops a run: a missing framework, cloud-only, cloud data, datastore, timeout, or
    mlpipe (this project's to fix)."""
    tail = "\n".join(output.splitlines()[-30:])
    missing = re.search(r"No module named '([\w.]+)'", reason)
    if missing is None and re.search(r"mini-batches failed|no worker could start", reason, re.I):
        # the step's error groups below the reason say what its mini-batches hit
        missing = re.search(r"(?:\d+ x|\]) ModuleNotFoundError: No module named '([\w.]+)'",
                            tail)
    if missing:
        top = missing.group(1).split(".")[0]
        return "mlpipe" if top in _OWN else f"framework ({top})"
    for cause, pattern in CAUSES:
        if re.search(pattern, reason) or (cause != "timeout" and re.search(pattern, tail)):
            return cause
    return "mlpipe"


def step_failure(runs: Path) -> tuple[str, str] | None:
    """The first failed step of the last failed job in ``runs`` (its record, ``job.json``):
    ``step NAME: <its error's first line>`` and the whole error, or ``None``."""
    failed = []
    for record in runs.glob("*/job.json"):
        try:
            job = json.loads(record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        steps = job.get("steps") if isinstance(job, dict) else None
        for name, step in (steps or {}).items():
            if isinstance(step, dict) and step.get("status") == "failed" and step.get("error"):
                error = str(step["error"])
                detail = error
                groups = Path(str(step.get("logs_dir") or "")) / "user" / "error.txt"
                if step.get("logs_dir") and groups.is_file():  # a parallel step's error groups
                    summary = groups.read_text(encoding="utf-8", errors="replace")
                    detail += "\n" + "\n".join(summary.splitlines()[:28])
                failed.append((str(step.get("ended_at") or ""), name, error, detail))
    if not failed:
        return None
    _, name, error, detail = min(failed)  # the first to fail: the others often follow from it
    lines = [line.strip() for line in error.strip().splitlines() if line.strip()]
    why = lines[0][:200]
    last = reason_of("\n".join(lines[1:])) if len(lines) > 1 else ""
    if last and last not in why:  # "command exited with code 1:" and the traceback's end
        why = f"{why.rstrip(':')}: {last}"
    return f"step {name}: {why}"[:300], detail


def run(program: Program, how: str, timeout: float) -> Outcome:
    scratch = Path(tempfile.mkdtemp(prefix="mlpipe-sweep-"))
    started = time.monotonic()
    try:
        folder = _copy(program, scratch)
        argv, cwd = command(program, how, folder)
        bin_dir = str(Path(sys.executable).parent)
        env = {**os.environ, "MLPIPE_RUNS_DIR": str(scratch / "runs"),
               "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
               "PYTHONUNBUFFERED": "1", "MPLBACKEND": "Agg"}
        env.pop("MLPIPE_IMPORT_MIRRORS", None)
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            output, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)  # the program's whole process group: steps too
            proc.communicate()
            return Outcome(program, how, False, time.monotonic() - started,
                           f"timeout after {timeout:.0f} s", "timeout")
        seconds = time.monotonic() - started
        if proc.returncode == 0:
            return Outcome(program, how, True, seconds)
        why, detail = step_failure(scratch / "runs") or (reason_of(output), output)
        why = why.replace(f"{scratch}{os.sep}", "")  # the scratch copy's paths: relative
        cause = classify(why, detail)
        if cause == "mlpipe" and detail is not output:
            cause = classify(why, output)  # the console's error groups say more
        return Outcome(program, how, False, seconds, why, cause)
    except Exception as error:  # the sweep goes on: this row says what went wrong
        return Outcome(program, how, False, time.monotonic() - started,
                       f"sweep: {type(error).__name__}: {error}", "sweep")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


# -- the table -----------------------------------------------------------------------------------

def _cell(outcome: Outcome) -> str:
    if outcome.ok:
        return "ran"
    reason = outcome.reason if len(outcome.reason) <= 160 else outcome.reason[:159] + "…"
    return f"failed ({outcome.cause}): {reason}".replace("|", "\\|")


def table(outcomes: list[Outcome], markdown: bool) -> str:
    hows = list(dict.fromkeys(o.how for o in outcomes))
    rows: dict[str, dict[str, Outcome]] = {}
    for outcome in outcomes:
        rows.setdefault(outcome.program.name, {})[outcome.how] = outcome
    lines = []
    if markdown:
        lines += ["| program | " + " | ".join(f"{h} | time" for h in hows) + " |",
                  "| --- |" + " --- | ---: |" * len(hows)]
    for name, by_how in rows.items():
        cells = [f"{_cell(by_how[h])} | {by_how[h].seconds:.0f} s" if h in by_how else " | "
                 for h in hows]
        if markdown:
            lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
        else:
            lines.append(name)
            lines += [f"    {h}: {c.replace(' | ', '  [') + ']'}" for h, c in zip(hows, cells,
                                                                                  strict=True)]
    total = Counter(o.how for o in outcomes)
    ran = Counter(o.how for o in outcomes if o.ok)
    causes = Counter(o.cause for o in outcomes if not o.ok)
    lines.append("")
    lines.append("; ".join(f"{h}: {ran[h]}/{total[h]} ran" for h in hows)
                 + (" (failures: " + ", ".join(f"{c} {n}" for c, n in causes.most_common())
                    + ")" if causes else ""))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, help="checkouts of published programs")
    parser.add_argument("--how", choices=["both", "switched", "unchanged"], default="both")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per run")
    parser.add_argument("--jobs", type=int, default=1, help="runs at once (default 1; times "
                        "are then those of a busier machine)")
    parser.add_argument("--only", help="only programs whose name matches this regex")
    parser.add_argument("--markdown", action="store_true", help="a Markdown table")
    parser.add_argument("--list", action="store_true", help="list the programs, run none")
    parser.add_argument("--json", type=Path, help="also write each outcome to this JSON file")
    args = parser.parse_args(argv)
    programs = [p for folder in args.folders for p in find_programs(folder.resolve())
                if not args.only or re.search(args.only, p.name)]
    if args.list:
        print("\n".join(f"{p.kind:8} {p.name}" for p in programs))
        return 0
    hows = ["switched", "unchanged"] if args.how == "both" else [args.how]
    def one(work: tuple[Program, str]) -> Outcome:
        outcome = run(*work, args.timeout)
        print(f"{outcome.seconds:6.0f} s  {outcome.how:9} {outcome.program.name}: "
              f"{_cell(outcome)}", file=sys.stderr, flush=True)
        return outcome
    with ThreadPoolExecutor(args.jobs) as pool:  # each run is a process of its own
        outcomes = list(pool.map(one, [(p, how) for p in programs for how in hows]))
    if args.json:
        args.json.write_text(json.dumps([
            {"program": o.program.name, "kind": o.program.kind, "how": o.how, "ok": o.ok,
             "seconds": round(o.seconds, 1), "reason": o.reason, "cause": o.cause}
            for o in outcomes], indent=1), encoding="utf-8")
    print(table(outcomes, args.markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
