"""Build every program in ``programs/`` and write what its pipeline job dumps to.

Each program is azure-ai-ml code, unchanged (``from azure.ai.ml import ...``), that builds
a pipeline job named ``job`` (or a command or sweep node submitted on its own: the
standalone job azure-ai-ml submits for it). Run with a Python that has azure-ai-ml, this script writes
``fixtures/<program>.yml``: azure-ai-ml's ``job._to_dict()`` (or the error azure-ai-ml
raised), with this folder's absolute path written as ``.``. Where ``_to_dict()``
differs from the REST body sent to the cloud, the body's values are taken: a step's
``display_name`` and ``tags`` (``_to_dict()`` omits them) and the pipeline's literal
inputs (``_to_dict()`` writes a boolean ``True`` as ``1``, the body ``"True"``); and the relative
``code`` of a component read from a file (and of a step's copy of its task) is made
relative to this folder (``_to_dict()`` keeps it relative to the component file without
naming the file). The fixtures are checked in;
make them again only when a program is added or changed (azure-ai-ml is never a
dependency of mlpipe)::

    python3 -m venv /tmp/aml && /tmp/aml/bin/pip install azure-ai-ml
    /tmp/aml/bin/python tests/sdk/differential/make_fixtures.py [PROGRAM ...]

With ``--mirrors`` the same programs run on mlpipe's mirrors instead (the ``azure.ai.ml``
imports resolve to mlpipe, as under ``mlpipe run-script``); each job is dumped and compiled
(its problems and warnings kept), and the results are printed as one JSON object;
``tests/sdk/test_differential.py`` compares them with the fixtures.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import runpy
import sys
import traceback
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
FIXTURES = HERE / "fixtures"


def relative_paths(value: Any) -> Any:
    """``value`` with the programs folder's absolute path written as ``.``."""
    root = str(PROGRAMS)
    if isinstance(value, dict):
        return {key: relative_paths(item) for key, item in value.items()}
    if isinstance(value, list):
        return [relative_paths(item) for item in value]
    if isinstance(value, str) and root in value:
        return value.replace(root + os.sep, "./").replace(root, ".")
    return value


def azure_dump(job: Any) -> dict[str, Any]:
    """``job._to_dict()`` with REST values where it differs (see above), absolute ``code``.
    A command or sweep node is the standalone job ``ml_client.jobs.create_or_update(node)``
    submits (``node._to_job()``)."""
    from azure.ai.ml.entities import PipelineJob

    if not isinstance(job, PipelineJob):
        source = getattr(getattr(job, "_component", None), "_source_path", None)
        job = job._to_job()
        data = job._to_dict()
        _absolute_code(data.get("trial") or {}, source)
        return _rest_literals(job, data)
    data = job._to_dict()
    data = _rest_literals(job, data)
    body = job._to_rest_object().as_dict()["properties"]
    rest = body.get("jobs") or {}
    for name, node in (data.get("jobs") or {}).items():
        for key in ("display_name", "tags"):
            if (rest.get(name) or {}).get(key):
                node[key] = rest[name][key]
        for key, value in ((rest.get(name) or {}).get("inputs") or {}).items():
            written = (node.get("inputs") or {}).get(key)
            if value.get("job_input_type") == "literal" and written is not None \
                    and not isinstance(written, dict) and "${{" not in str(value.get("value")):
                node["inputs"][key] = value.get("value")  # a step's False too, not 0
        source = getattr(getattr(job.jobs[name], "_component", None), "_source_path", None)
        component = node.get("trial" if node.get("type") == "sweep" else "component")
        if source is None or not isinstance(component, dict):
            continue
        for holder in (component, component.get("task") or {}, node.get("task") or {}):
            _absolute_code(holder, source)
    return data


def _rest_literals(job: Any, data: dict[str, Any]) -> dict[str, Any]:
    """The job's literal inputs as its REST body has them (``_to_dict()`` writes True as 1)."""
    body = job._to_rest_object().as_dict()["properties"]
    for name, value in (body.get("inputs") or {}).items():
        if value.get("jobInputType") == "literal" and name in (data.get("inputs") or {}):
            data["inputs"][name] = value.get("value")
    return data


def _absolute_code(holder: dict[str, Any], source: Any) -> None:
    """A component file's relative ``code`` (in ``holder``) made absolute."""
    code = holder.get("code")
    if source is None or not isinstance(code, str):
        return
    code = code.removeprefix("azureml:")  # a node's copy of the component's task
    if not Path(code).is_absolute() and ":" not in code:
        holder["code"] = str((Path(source).parent / code).resolve())


def build(program: Path, mirrors: bool) -> dict[str, Any]:
    """``{"job": <the dumped job>, "stderr": ...}`` or ``{"error": "<Type>: <message>"}``."""
    os.chdir(PROGRAMS)
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()), \
                warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            job = runpy.run_path(str(program), run_name="program")["job"]
            if mirrors:
                import yaml

                text = io.StringIO()
                job.dump(text) if job.type == "pipeline" else job.dump_job(text)
                data = yaml.safe_load(text.getvalue())
                compiled = compile_notes(job)
            else:
                data = azure_dump(job)
    except Exception as error:  # the program's own error is its result
        if os.environ.get("DIFFERENTIAL_TRACEBACK"):
            traceback.print_exc()
        message = str(error).strip().splitlines()[0] if str(error).strip() else ""
        return {"error": f"{type(error).__name__}: {message}"}
    notes = [str(w.message) for w in caught if "experimental" not in str(w.message)]
    text = "\n".join(line for line in stderr.getvalue().splitlines()
                     if "experimental" not in line)
    result = {"job": relative_paths(json.loads(json.dumps(data, default=str))),
              "stderr": "\n".join([*notes, text]).strip()}
    if mirrors:
        result.update(compiled)
    return result


def compile_notes(job: Any) -> dict[str, Any]:
    """mlpipe's verdict on the job: ``problems`` (errors) and ``warnings``, as text."""
    import tempfile

    from mlpipe.diagnostics import ValidationError
    from mlpipe.sdk.running import compile_job

    with tempfile.TemporaryDirectory() as runs:
        try:
            plan = compile_job(job, runs_dir=runs, job_name="differential")
        except ValidationError as error:
            return {"problems": [str(d) for d in error.diagnostics], "warnings": []}
    return {"problems": [], "warnings": [str(d) for d in plan.warnings]}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("programs", nargs="*", help="program names (default: all)")
    parser.add_argument("--mirrors", action="store_true",
                        help="run on mlpipe's mirrors and print JSON instead of writing")
    args = parser.parse_args(argv)
    names = set(args.programs)
    programs = [p for p in sorted(PROGRAMS.glob("*.py")) if not names or p.stem in names]
    if args.mirrors:
        from mlpipe.scripts import install_mirrors

        install_mirrors()
    sys.path.insert(0, str(PROGRAMS))
    results = {program.stem: build(program, args.mirrors) for program in programs}
    if args.mirrors:
        json.dump(results, sys.stdout)
        return 0
    import yaml
    from azure.ai.ml import __version__ as azure_version

    FIXTURES.mkdir(exist_ok=True)
    for name, result in results.items():
        result.pop("stderr", None)
        header = (f"# {name}.py built by azure-ai-ml {azure_version}: job._to_dict() "
                  "(made by ../make_fixtures.py; do not edit)\n")
        text = yaml.safe_dump(result, sort_keys=False, allow_unicode=True)
        (FIXTURES / f"{name}.yml").write_text(header + text, encoding="utf-8")
        print(f"{name}: {'error' if 'error' in result else 'job'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
