"""az's machine output: ``--query`` and ``-o tsv|table|json|yaml`` written byte for byte as
``az`` (knack) writes them, Azure's status words, and the verbs az scripts call
(``job show --query``, ``job list --parent-job-name``, ``job download``, ``--web``, the
workspace selectors)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from mlpipe.cli.output import compile_query, render, run_query
from tests.conftest import run_cli


def _record(name: str, status: str, flag: bool, tags: list[str]) -> dict[str, Any]:
    return {"name": name, "status": status, "type": "pipeline", "id": "x",
            "duration_seconds": 1.5, "steps": {"a": {"status": "Completed"}}, "tags": tags,
            "flag": flag, "display_name": None,
            "services": {"Studio": {"endpoint": "file:///r/report.html"}}}


RECORDS = [_record("job_1", "Completed", True, []), _record("job_2", "Failed", False, ["t"])]

# (query, RECORDS[i] or all of them, (tsv, table, json, yaml)) as knack 0.12 (tabulate 0.10)
# formats them: produced once with knack's format_* functions, checked in.
KNACK = [
    ('name', 0, ('job_1\n', 'Result\n--------\njob_1\n', '"job_1"\n', 'job_1\n...\n')),
    ('status', 0, ('Completed\n', 'Result\n---------\nCompleted\n', '"Completed"\n', 'Completed\n...\n')),
    (None, 0, ('None\t1.5\tTrue\tx\tjob_1\t\tCompleted\t\t0\tpipeline\n', 'Duration_seconds    Flag    Name    Status\n------------------  ------  ------  ---------\n1.5                 True    job_1   Completed\n', '{\n  "display_name": null,\n  "duration_seconds": 1.5,\n  "flag": true,\n  "id": "x",\n  "name": "job_1",\n  "services": {\n    "Studio": {\n      "endpoint": "file:///r/report.html"\n    }\n  },\n  "status": "Completed",\n  "steps": {\n    "a": {\n      "status": "Completed"\n    }\n  },\n  "tags": [],\n  "type": "pipeline"\n}\n', 'display_name: null\nduration_seconds: 1.5\nflag: true\nid: x\nname: job_1\nservices:\n  Studio:\n    endpoint: file:///r/report.html\nstatus: Completed\nsteps:\n  a:\n    status: Completed\ntags: []\ntype: pipeline\n')),
    ('{Name:name,Status:status,Steps:steps}', 0, ('job_1\tCompleted\t\n', 'Name    Status\n------  ---------\njob_1   Completed\n', '{\n  "Name": "job_1",\n  "Status": "Completed",\n  "Steps": {\n    "a": {\n      "status": "Completed"\n    }\n  }\n}\n', 'Name: job_1\nStatus: Completed\nSteps:\n  a:\n    status: Completed\n')),
    ('[].{Name:name,Status:status}', None, ('job_1\tCompleted\njob_2\tFailed\n', 'Name    Status\n------  ---------\njob_1   Completed\njob_2   Failed\n', '[\n  {\n    "Name": "job_1",\n    "Status": "Completed"\n  },\n  {\n    "Name": "job_2",\n    "Status": "Failed"\n  }\n]\n', '- Name: job_1\n  Status: Completed\n- Name: job_2\n  Status: Failed\n')),
    ('[].[name,status,flag]', None, ('job_1\tCompleted\tTrue\njob_2\tFailed\tFalse\n', 'Column1    Column2    Column3\n---------  ---------  ---------\njob_1      Completed  True\njob_2      Failed     False\n', '[\n  [\n    "job_1",\n    "Completed",\n    true\n  ],\n  [\n    "job_2",\n    "Failed",\n    false\n  ]\n]\n', '- - job_1\n  - Completed\n  - true\n- - job_2\n  - Failed\n  - false\n')),
    ('flag', 0, ('true\n', 'Result\n--------\nTrue\n', 'true\n', 'true\n...\n')),
    ('[].name', None, ('job_1\njob_2\n', 'Result\n--------\njob_1\njob_2\n', '[\n  "job_1",\n  "job_2"\n]\n', '- job_1\n- job_2\n')),
    (None, None, ('None\t1.5\tTrue\tx\tjob_1\t\tCompleted\t\t0\tpipeline\nNone\t1.5\tFalse\tx\tjob_2\t\tFailed\t\t1\tpipeline\n', 'Duration_seconds    Flag    Name    Status\n------------------  ------  ------  ---------\n1.5                 True    job_1   Completed\n1.5                 False   job_2   Failed\n', '[\n  {\n    "display_name": null,\n    "duration_seconds": 1.5,\n    "flag": true,\n    "id": "x",\n    "name": "job_1",\n    "services": {\n      "Studio": {\n        "endpoint": "file:///r/report.html"\n      }\n    },\n    "status": "Completed",\n    "steps": {\n      "a": {\n        "status": "Completed"\n      }\n    },\n    "tags": [],\n    "type": "pipeline"\n  },\n  {\n    "display_name": null,\n    "duration_seconds": 1.5,\n    "flag": false,\n    "id": "x",\n    "name": "job_2",\n    "services": {\n      "Studio": {\n        "endpoint": "file:///r/report.html"\n      }\n    },\n    "status": "Failed",\n    "steps": {\n      "a": {\n        "status": "Completed"\n      }\n    },\n    "tags": [\n      "t"\n    ],\n    "type": "pipeline"\n  }\n]\n', '- display_name: null\n  duration_seconds: 1.5\n  flag: true\n  id: x\n  name: job_1\n  services:\n    Studio:\n      endpoint: file:///r/report.html\n  status: Completed\n  steps:\n    a:\n      status: Completed\n  tags: []\n  type: pipeline\n- display_name: null\n  duration_seconds: 1.5\n  flag: false\n  id: x\n  name: job_2\n  services:\n    Studio:\n      endpoint: file:///r/report.html\n  status: Failed\n  steps:\n    a:\n      status: Completed\n  tags:\n  - t\n  type: pipeline\n')),
    ('steps', 0, ('\n', '\n', '{\n  "a": {\n    "status": "Completed"\n  }\n}\n', 'a:\n  status: Completed\n')),
    ("[?status=='Nothing']", None, ('', '\n', '[]\n', '[]\n')),
]


@pytest.mark.parametrize(("query", "which", "expected"), KNACK,
                         ids=[f"{q}-{w}" for q, w, _ in KNACK])
def test_machine_output_is_knacks(query: str | None, which: int | None,
                                  expected: tuple[str, str, str, str]) -> None:
    data = copy.deepcopy(RECORDS if which is None else RECORDS[which])
    result = data if query is None else run_query(compile_query(query), data)
    written = tuple(render(result, fmt, query_active=query is not None)
                    for fmt in ("tsv", "table", "json", "yaml"))
    assert written == expected


PIPELINE = """\
type: pipeline
display_name: hello-az
outputs:
  greeting:
    type: uri_folder
jobs:
  hello:
    type: command
    compute: azureml:cpu-cluster
    command: echo hello > ${{outputs.greeting}}/hello.txt
    environment: azureml:env:1
    outputs:
      greeting: ${{parent.outputs.greeting}}
"""


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A completed job, created as az scripts do (``--query name -o tsv``); (runs folder, name)."""
    root = tmp_path_factory.mktemp("az_output")
    (root / "pipeline.yml").write_text(PIPELINE, encoding="utf-8")
    runs = root / "runs"
    created = run_cli("job", "create", "-f", str(root / "pipeline.yml"), "--query", "name",
                      "-o", "tsv", "-g", "rg", "-w", "ws", "--subscription", "sub", "--stream",
                      "--runs-dir", str(runs), "--no-progress")
    assert created.returncode == 0, created.stderr
    name = created.stdout.strip()  # the progress went to stderr
    assert created.stdout == f"{name}\n" and f"job: {name}" in created.stderr
    return runs, name


def _cli(runs: Path, *args: str) -> Any:
    proc = run_cli(*args, "--runs-dir", str(runs))
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.mark.slow  # runs whole jobs: CI's second stage
def test_show_query_gives_azure_status_words_and_the_report(job: tuple[Path, str]) -> None:
    runs, name = job
    assert _cli(runs, "job", "show", "-n", name, "--query", "status", "-o", "tsv").stdout == \
        "Completed\n"
    endpoint = _cli(runs, "job", "show", "-n", name, "--query", "services.Studio.endpoint")
    assert json.loads(endpoint.stdout) == (runs / name / "report.html").as_uri()  # -o json
    record = json.loads(_cli(runs, "job", "show", "-n", name, "-o", "json").stdout)
    assert record["steps"]["hello"]["status"] == "Completed" and record["type"] == "pipeline"
    assert _cli(runs, "job", "show", "-n", name, "-o", "none").stdout == ""
    human = _cli(runs, "job", "show", "-n", name, "--web")
    assert human.stdout.startswith(f"job {name}: completed")  # the human view keeps its words
    assert human.stderr.strip() == ("mlpipe: --web ignored: there is no studio here; open "
                                    f"{(runs / name / 'report.html').as_uri()}")


def test_list_tables_and_child_jobs(job: tuple[Path, str]) -> None:
    runs, name = job
    table = _cli(runs, "job", "list", "--query", "[].{Name:name,Status:status}", "-o", "table")
    width = max(len(name), len("Name") + 2)
    assert table.stdout.splitlines() == [f"{'Name':<{width}}  Status",
                                         f"{'-' * width}  ---------", f"{name}  Completed"]
    children = _cli(runs, "job", "list", "--parent-job-name", name, "--query",
                    "[].[name,status]", "-o", "tsv")
    assert children.stdout == f"{name}_hello\tCompleted\n"  # the child job's name


def test_download_to_a_file_or_into_the_job_itself_is_refused_in_one_line(
        job: tuple[Path, str], tmp_path: Path) -> None:
    runs, name = job
    (tmp_path / "a_file").write_text("")
    for target, says in ((tmp_path / "a_file", "is a file, not a folder"),
                         (runs / name / "copy", "is inside the job's own folder")):
        refused = run_cli("job", "download", name, "--download-path", str(target),
                          "--runs-dir", str(runs))
        assert refused.returncode == 1 and says in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr
    assert not (runs / name / "copy").exists()


def test_download_lays_files_out_as_az(job: tuple[Path, str], tmp_path: Path) -> None:
    runs, name = job
    _cli(runs, "job", "download", "-n", name, "--output-name", "greeting",
         "--download-path", str(tmp_path / "one"))
    assert (tmp_path / "one" / "named-outputs" / "greeting" / "hello.txt").read_text() == \
        "hello\n"
    _cli(runs, "job", "download", name, "--download-path", str(tmp_path / "logs"))
    assert (tmp_path / "logs" / "artifacts" / "job.json").is_file()
    assert not (tmp_path / "logs" / "named-outputs").exists()  # only the logs by default
    _cli(runs, "job", "download", name, "--all", "--download-path", str(tmp_path / "all"))
    assert sorted(p.name for p in (tmp_path / "all").iterdir()) == ["artifacts", "named-outputs"]
    missing = run_cli("job", "download", name, "--output-name", "nope", "--runs-dir", str(runs))
    assert missing.returncode == 1
    assert "has no output 'nope' (pipeline outputs: greeting; step outputs" in missing.stderr


def test_a_bad_query_or_format_is_a_usage_error(job: tuple[Path, str]) -> None:
    runs, name = job
    bad = run_cli("job", "show", name, "--query", "steps[", "--runs-dir", str(runs))
    assert bad.returncode == 2 and "invalid JMESPath query 'steps['" in bad.stderr
    assert "Traceback" not in bad.stderr
    assert run_cli("job", "list", "-o", "xml", "--runs-dir", str(runs)).returncode == 2
    assert _cli(runs, "job", "show", name, "-o", "TSV", "--query", "name").stdout == f"{name}\n"
