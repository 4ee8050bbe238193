"""Hostile input: whatever a user feeds ``mlpipe job validate`` ends in messages, never a
traceback, a crash, or an unbounded time or memory.

Property tests (hypothesis) mutate the samples' pipelines, a component file, an MLTable
file and ``--set`` values; regression tests pin each defect of issue 9 (items 4-7).
Profiles: ``ci`` (default, a few hundred examples in all) and ``long``
(``HYPOTHESIS_PROFILE=long pytest tests/hostile/test_inputs.py``).
"""

from __future__ import annotations

import io
import os
import re
import resource
import shutil
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlpipe.cli import main
from mlpipe.data.errors import DataError
from mlpipe.data.mltable_spec import load_spec
from mlpipe.limits import (
    MAX_ARGUMENTS_CHARS,
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_INT_DIGITS,
    MAX_KEYS,
    MAX_NODES,
    MAX_SCHEMA_PROBLEMS,
)
from tests.conftest import REPO
from tests.hostile.support import SET_ARGS, attacked_text, dump, mutated

settings.register_profile("ci", max_examples=60, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.too_slow,
                                                 HealthCheck.function_scoped_fixture])
# The long profile (run by hand) also bounds each example's time; CI makes no timing claims.
settings.register_profile("long", max_examples=2_000, deadline=timedelta(seconds=20),
                          suppress_health_check=[HealthCheck.too_slow,
                                                 HealthCheck.function_scoped_fixture])
PROFILE = settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
SAMPLES = ("tabular-scoring", "file-batch", "many-models", "command-parallel-command")
MEMORY_LIMIT = 1_500 * 1024 * 1024

COMPONENT = """\
$schema: https://azuremlschemas.azureedge.net/latest/parallelComponent.schema.json
type: parallel
name: score
version: "1"
inputs:
  data:
    type: uri_folder
  label:
    type: string
    default: x
outputs:
  result:
    type: uri_file
input_data: ${{inputs.data}}
mini_batch_size: "2"
retry_settings:
  max_retries: 1
  timeout: 60
task:
  type: run_function
  code: ./src
  entry_script: score.py
  program_arguments: --label ${{inputs.label}}
  append_row_to: ${{outputs.result}}
"""
MLTABLE = """\
type: mltable
paths:
  - pattern: ./*.csv
transformations:
  - read_delimited:
      delimiter: ","
      header: all_files_same_headers
  - filter: 'price > 10 and col("rooms") in (1, 2)'
  - keep_columns: [price, rooms]
  - take: 5
"""


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private copy of the samples (mutated files are written next to the originals)."""
    root = tmp_path_factory.mktemp("hostile")
    for name in SAMPLES:
        shutil.copytree(REPO / "samples" / name, root / name)
    (root / "tabular-scoring" / "score.yml").write_text(COMPONENT)
    return root


def validate(*argv: str) -> tuple[int, str, str]:
    """``mlpipe ARGV`` in this process: exit code, stdout, stderr. An exception escapes."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse usage errors
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def assert_clean(code: int, out: str, err: str) -> None:
    assert code in (0, 1, 2), (code, out, err)
    assert "Traceback" not in out + err
    if code == 1:
        assert "invalid" in out, out
    if code == 2:
        assert err.strip(), "a usage error says why"


def sample_data(projects: Path, name: str) -> dict[str, Any]:
    data = yaml.safe_load((projects / name / "pipeline.yml").read_text())
    assert isinstance(data, dict)
    return data


def cli_run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The CLI in a real subprocess with its address space capped at 1.5 GB."""
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "mlpipe", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60, preexec_fn=cap)


# ---------------------------------------------------------------- properties


@settings(PROFILE)
@given(data=st.data(), sample=st.sampled_from(SAMPLES), overrides=SET_ARGS)
def test_mutated_pipelines_end_in_messages(projects: Path, data: st.DataObject, sample: str,
                                           overrides: list[str]) -> None:
    doc = data.draw(mutated(sample_data(projects, sample)))
    path = projects / sample / "hostile.yml"
    path.write_text(dump(doc), encoding="utf-8")
    args = [arg for item in overrides for arg in ("--set", item)]
    assert_clean(*validate("job", "validate", str(path), *args))


@settings(PROFILE, max_examples=max(PROFILE.max_examples // 3, 10))
@given(data=st.data(), sample=st.sampled_from(SAMPLES))
def test_sdk_load_job_of_mutated_pipelines_raises_validation_errors_only(
        projects: Path, data: st.DataObject, sample: str) -> None:
    from mlpipe import ValidationError
    from mlpipe.sdk import compile_job
    from mlpipe.sdk.loading import load_job

    path = projects / sample / "sdk-hostile.yml"
    path.write_text(dump(data.draw(mutated(sample_data(projects, sample)))), encoding="utf-8")
    try:
        job = load_job(path)
        job.to_yaml()
        compile_job(job, runs_dir=projects / "runs", job_name="j")
    except ValidationError as exc:
        assert exc.diagnostics


@settings(PROFILE)
@given(data=st.data(), sample=st.sampled_from(SAMPLES))
def test_attacked_pipeline_text_ends_in_messages(projects: Path, data: st.DataObject,
                                                 sample: str) -> None:
    text = (projects / sample / "pipeline.yml").read_text()
    path = projects / sample / "attacked.yml"
    path.write_text(data.draw(attacked_text(text)), encoding="utf-8")
    assert_clean(*validate("job", "validate", str(path)))


@settings(PROFILE)
@given(data=st.data(), as_text=st.booleans())
def test_mutated_components_end_in_messages(projects: Path, data: st.DataObject,
                                            as_text: bool) -> None:
    folder = projects / "tabular-scoring"
    text = (data.draw(attacked_text(COMPONENT)) if as_text
            else dump(data.draw(mutated(yaml.safe_load(COMPONENT)))))
    (folder / "hostile-component.yml").write_text(text, encoding="utf-8")
    assert_clean(*validate("component", "validate", str(folder / "hostile-component.yml")))
    pipeline = sample_data(projects, "tabular-scoring")
    pipeline["jobs"]["score_houses"] = {"type": "parallel", "component": "./hostile-component.yml",
                                        "inputs": {"data": "${{parent.inputs.houses}}"}}
    (folder / "uses-component.yml").write_text(dump(pipeline), encoding="utf-8")
    assert_clean(*validate("job", "validate", str(folder / "uses-component.yml")))


@settings(PROFILE)
@given(data=st.data(), as_text=st.booleans())
def test_mutated_mltable_files_raise_data_errors_only(projects: Path, data: st.DataObject,
                                                      as_text: bool) -> None:
    folder = projects / "tabular-scoring" / "data"
    text = (data.draw(attacked_text(MLTABLE)) if as_text
            else dump(data.draw(mutated(yaml.safe_load(MLTABLE)))))
    (folder / "MLTable").write_text(text, encoding="utf-8")
    try:
        load_spec(str(folder))
    except DataError as exc:
        assert exc.diagnostic.location is not None
        assert exc.diagnostic.location.file == str(folder / "MLTable")


@settings(PROFILE)
@given(expression=st.one_of(
    st.text(max_size=80),
    st.builds(lambda op, n: "a" + f" {op} a" * n, st.sampled_from(["+", "and", "<", "*", "or"]),
              st.integers(1, 3_000)),
    st.integers(1, 3_000).map(lambda n: "(" * n + "a" + ")" * n),
    st.integers(1, 3_000).map(lambda n: "not " * n + "a"),
    st.integers(1, 3_000).map(lambda n: "-" * n + "a")))
def test_filter_expressions_raise_data_errors_only(projects: Path, expression: str) -> None:
    folder = projects / "tabular-scoring" / "data"
    (folder / "MLTable").write_text(
        MLTABLE.replace("'price > 10 and col(\"rooms\") in (1, 2)'", yaml.safe_dump(expression,
                                                                                    width=10**9)
                        .removesuffix("\n...\n").strip()), encoding="utf-8")
    try:
        load_spec(str(folder))
    except DataError as exc:
        assert exc.diagnostic.location is not None


# ---------------------------------------------------------------- regressions, item by item


def pipeline_with(projects: Path, name: str, text: str) -> Path:
    path = projects / "tabular-scoring" / name
    path.write_text("$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json\n"
                    "type: pipeline\n" + text, encoding="utf-8")
    return path


def billion_laughs(levels: int) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_alias_bomb_is_refused_before_it_expands(projects: Path) -> None:
    path = pipeline_with(projects, "bomb.yml", billion_laughs(9))
    proc = cli_run("job", "validate", str(path), cwd=projects)
    assert proc.returncode == 1, proc.stderr
    found = re.search(rf"bomb\.yml:(\d+):\d+: the document expands to more than {MAX_NODES:,} "
                      "nodes", proc.stdout)
    assert found and 3 <= int(found.group(1)) <= 11, proc.stdout  # at an alias line
    assert "Traceback" not in proc.stderr


def test_aliases_within_the_budget_still_work(projects: Path) -> None:
    text = sample_data(projects, "tabular-scoring")
    path = pipeline_with(projects, "anchors.yml", billion_laughs(3) + dump(
        {k: v for k, v in text.items() if k not in ("$schema", "type")}))
    code, out, _ = validate("job", "validate", str(path))
    assert "expands to more than" not in out


def test_deep_flow_nesting_is_an_error_not_a_segfault(projects: Path) -> None:
    path = pipeline_with(projects, "deep.yml", "jobs: " + "[" * 50_000 + "]" * 50_000 + "\n")
    proc = cli_run("job", "validate", str(path), cwd=projects)
    assert proc.returncode == 1, (proc.returncode, proc.stderr[-500:])
    # the column is where the limit is met: at depth MAX_DEPTH, or where libyaml's own
    # look-ahead stops (libyaml >= 0.2.6 refuses 1,000 flow levels before any event)
    assert re.search(rf"deep\.yml:3:\d+: nested more than {MAX_DEPTH} levels deep", proc.stdout), \
        proc.stdout


def test_deep_block_nesting_is_an_error_not_a_recursion_error(projects: Path) -> None:
    body = "jobs:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(1_200))
    path = pipeline_with(projects, "deepmap.yml", body + "  " * 1_201 + "x: 1\n")
    code, out, err = validate("job", "validate", str(path))
    assert code == 1 and f"nested more than {MAX_DEPTH} levels deep" in out
    assert "Traceback" not in err


def test_a_set_key_path_deeper_than_a_document_may_nest_is_a_usage_error(
        projects: Path) -> None:
    path = str(projects / "file-batch" / "pipeline.yml")
    deep = "tags.a" + ".b" * 3_000 + "=1"
    for verb in ("validate", "create"):
        code, out, err = validate("job", verb, "--file", path, "--set", deep)
        assert code == 2 and "the key path has 3002 parts, more than the 100 levels" in err
        assert "Traceback" not in out + err


def test_file_over_the_size_limit_is_refused_unread(projects: Path) -> None:
    path = pipeline_with(projects, "huge.yml", "description: " + "x" * MAX_FILE_BYTES + "\n")
    code, out, _ = validate("job", "validate", str(path))
    assert code == 1 and "huge.yml: file too large" in out


def test_too_many_keys_is_an_error_with_a_line(projects: Path) -> None:
    path = pipeline_with(projects, "keys.yml", "".join(f"k{i}: 1\n" for i in range(MAX_KEYS + 5)))
    code, out, _ = validate("job", "validate", str(path))
    assert code == 1 and f"keys.yml:{MAX_KEYS + 1}:1: more than {MAX_KEYS:,} mapping keys" in out


@pytest.mark.parametrize("value", ["1" + "0" * 5_000, '"1' + "0" * 5_000 + '"',
                                   '"1' + "0" * 200 + 'kb"'])
def test_huge_integers_are_errors_not_tracebacks(projects: Path, value: str) -> None:
    text = (projects / "tabular-scoring" / "pipeline.yml").read_text()
    path = projects / "tabular-scoring" / "bigint.yml"
    path.write_text(text.replace('mini_batch_size: "1kb"', f"mini_batch_size: {value}"))
    code, out, err = validate("job", "validate", str(path))
    assert code == 1, (out, err)
    assert "Traceback" not in err
    assert f"than {MAX_INT_DIGITS} digits" in out or f"the limit is {MAX_INT_DIGITS}" in out


def test_huge_integer_in_an_int_setting_written_as_a_string(projects: Path) -> None:
    text = (projects / "tabular-scoring" / "pipeline.yml").read_text()
    path = projects / "tabular-scoring" / "bigcount.yml"
    path.write_text(text.replace("instance_count: 1", f'instance_count: "1{"0" * 5_000}"'))
    code, out, _ = validate("job", "validate", str(path))
    assert code == 1 and "jobs.score_houses.resources.instance_count" in out
    assert f"more than {MAX_INT_DIGITS} digits" in out


@pytest.mark.parametrize("value", ["[]", "{}", "[pipeline]", "{a: 1}", "1", "null"])
def test_non_string_type_is_a_message(projects: Path, value: str) -> None:
    path = projects / "tabular-scoring" / "badtype.yml"
    path.write_text(f"type: {value}\njobs: {{}}\n")
    assert_clean(*validate("job", "validate", str(path)))
    assert_clean(*validate("component", "validate", str(path)))


def test_filter_of_5000_terms_is_a_data_error(projects: Path) -> None:
    folder = projects / "tabular-scoring" / "data"
    (folder / "MLTable").write_text(MLTABLE.replace("'price > 10 and col(\"rooms\") in (1, 2)'",
                                                    "'" + " + ".join(["price"] * 5_000) + " > 1'"))
    with pytest.raises(DataError, match="filter expression too long"):
        load_spec(str(folder))
    (folder / "MLTable").write_text(MLTABLE.replace("'price > 10 and col(\"rooms\") in (1, 2)'",
                                                    "'" + "+".join(["a"] * 1_500) + " > 1'"))
    with pytest.raises(DataError, match="nested more than"):
        load_spec(str(folder))


def test_alias_bomb_in_an_mltable_file_is_a_data_error(projects: Path) -> None:
    folder = projects / "tabular-scoring" / "data"
    (folder / "MLTable").write_text(MLTABLE + billion_laughs(9).replace("a0:", "x0:"))
    with pytest.raises(DataError, match="expands to more than") as info:
        load_spec(str(folder))
    assert info.value.diagnostic.location is not None
    assert info.value.diagnostic.location.line is not None


def test_set_values_go_through_the_limits(projects: Path) -> None:
    path = projects / "tabular-scoring" / "pipeline.yml"
    bomb = "{" + billion_laughs(9).replace("\n", ", ").rstrip(", ") + "}"
    code, out, _ = validate("job", "validate", str(path),
                            "--set", f"jobs.score_houses.tags={bomb}",
                            "--set", "jobs.score_houses.retry_settings.max_retries=1" + "0" * 5000,
                            "--set", "jobs.1" + "0" * 5000 + ".x=1")
    assert code == 1
    assert "expands to more than" in out and "integer too long" in out


# ---------------------------------------------------------------- item 6: paths


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A work tree (a ``.git`` folder is all the check looks for) holding a sample project."""
    root = tmp_path / "repo"
    shutil.copytree(REPO / "samples" / "tabular-scoring", root / "pipelines" / "tabular")
    (root / ".git").mkdir()
    return root


def with_task(project: Path, **task: str) -> Path:
    text = (project / "pipeline.yml").read_text()
    for key, value in task.items():
        old = next(line for line in text.splitlines() if line.strip().startswith(f"{key}:"))
        text = text.replace(old, old.split(":")[0] + f": {value}")
    path = project / "paths.yml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("entry", ["/abs/evil.py", "../../x.py", "sub/../../score.py",
                                   "..\\score.py", "C:/evil.py"])
def test_entry_script_outside_the_code_folder_is_an_error(repo: Path, entry: str) -> None:
    project = repo / "pipelines" / "tabular"
    (project / "evil.py").write_text("def run(b):\n    return b\n")
    path = with_task(project, entry_script=f"'{entry}'")
    code, out, _ = validate("job", "validate", str(path))
    assert code == 1
    assert f"jobs.score_houses.task.entry_script: entry script '{entry}' must be inside the " \
           "code folder" in out


def test_entry_script_in_a_sub_folder_of_code_is_fine(repo: Path) -> None:
    project = repo / "pipelines" / "tabular"
    (project / "src" / "sub").mkdir()
    (project / "src" / "sub" / "score.py").write_text("def run(b):\n    return b\n")
    code, out, _ = validate("job", "validate", str(with_task(project,
                                                           entry_script="./sub/../sub/score.py")))
    assert code == 0, out


def test_code_in_a_parent_folder_of_the_work_tree_is_fine(repo: Path) -> None:
    project = repo / "pipelines" / "tabular"
    shutil.move(str(project / "src"), str(repo / "src"))
    code, out, _ = validate("job", "validate", str(with_task(project, code="../../src")))
    assert code == 0 and "warning" not in out, out


def test_code_outside_the_work_tree_is_a_warning(repo: Path) -> None:
    project = repo / "pipelines" / "tabular"
    shutil.move(str(project / "src"), str(repo.parent / "src"))
    for written in ("../../../src", str(repo.parent / "src")):
        code, out, _ = validate("job", "validate", str(with_task(project, code=written)))
        assert code == 0
        assert f"code folder '{written}' is outside the git work tree ({repo})" in out


def test_code_reached_through_a_symlink_out_of_the_tree_is_a_warning(repo: Path) -> None:
    project = repo / "pipelines" / "tabular"
    shutil.move(str(project / "src"), str(repo.parent / "elsewhere"))
    (project / "src").symlink_to(repo.parent / "elsewhere")
    code, out, _ = validate("job", "validate", str(project / "pipeline.yml"))
    assert code == 0
    assert "code folder './src' leaves the git work tree" in out and "symbolic link" in out


def test_without_a_work_tree_one_parent_folder_is_allowed(tmp_path: Path) -> None:
    project = tmp_path / "a" / "b"
    shutil.copytree(REPO / "samples" / "tabular-scoring", project)
    shutil.move(str(project / "src"), str(tmp_path / "a" / "src"))
    code, out, _ = validate("job", "validate", str(with_task(project, code="../src")))
    assert code == 0 and "warning" not in out, out
    shutil.move(str(tmp_path / "a" / "src"), str(tmp_path / "src"))
    code, out, _ = validate("job", "validate", str(with_task(project, code="../../src")))
    assert "is outside the folder above the YAML file's folder" in out


def test_mltable_input_and_component_outside_the_work_tree_are_warnings(repo: Path) -> None:
    project = repo / "pipelines" / "tabular"
    shutil.move(str(project / "data"), str(repo.parent / "data"))
    (repo.parent / "score.yml").write_text(COMPONENT.replace("./src", str(project / "src")))
    data = sample_data(project.parent, "tabular")
    data["inputs"]["houses"]["path"] = "../../../data"
    data["jobs"]["extra"] = {"type": "parallel", "component": "../../../score.yml",
                             "inputs": {"data": "${{parent.inputs.houses}}"}}
    path = project / "paths.yml"
    path.write_text(dump(data))
    code, out, _ = validate("job", "validate", str(path))
    assert "mltable input '../../../data' is outside the git work tree" in out
    assert "component file '../../../score.yml' is outside the git work tree" in out


# ---------------------------------------------------------------- item 9: outputs


@pytest.mark.parametrize("declared", ["../elsewhere/scores.csv", "ABS/scores.csv",
                                      "azureml://datastores/ds/paths/../../../../escaped.csv"])
def test_output_path_outside_the_runs_folder_needs_the_jobs_consent(tmp_path: Path,
                                                                    declared: str) -> None:
    project = tmp_path / "proj"
    shutil.copytree(REPO / "samples" / "tabular-scoring", project)
    declared = declared.replace("ABS", str(tmp_path / "abs"))
    text = (project / "pipeline.yml").read_text().replace(
        "  scores:\n    type: uri_file\n", f"  scores:\n    type: uri_file\n    path: {declared}\n")
    (project / "out.yml").write_text(text)
    runs = tmp_path / "runs"
    refused = cli_run("job", "validate", "out.yml", cwd=project)
    assert refused.returncode == 1
    assert "out.yml:21:5: outputs.scores.path: output 'scored' is written outside " \
           "the runs folder" in refused.stdout and "--allow-external-outputs" in refused.stdout
    allowed = cli_run("job", "validate", "out.yml", "--allow-external-outputs", cwd=project)
    assert allowed.returncode == 0
    assert "out.yml:21:5: warning: outputs.scores.path: output 'scored' is written outside " \
           "the runs folder" in allowed.stdout
    if declared.startswith("azureml:") or declared.startswith("/"):
        return  # one real run is enough to see the console line
    create = [sys.executable, "-m", "mlpipe", "job", "create", "-f", "out.yml", "--no-progress",
              "--runs-dir", str(runs)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(create, cwd=project, capture_output=True, text=True, timeout=300,
                          env=env)
    assert proc.returncode == 1 and "nothing was run" in proc.stderr
    assert not (tmp_path / "elsewhere").exists()
    proc = subprocess.run([*create, "--allow-external-outputs"], cwd=project,
                          capture_output=True, text=True, timeout=300, env=env)
    assert f"output 'scored' is written outside the runs folder {runs}" in proc.stderr
    assert (tmp_path / "elsewhere" / "scores.csv").is_file()


def test_output_path_inside_the_runs_folder_is_not_announced(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    shutil.copytree(REPO / "samples" / "tabular-scoring", project)
    text = (project / "pipeline.yml").read_text().replace(
        "  scores:\n    type: uri_file\n",
        "  scores:\n    type: uri_file\n    path: azureml://datastores/ds/paths/${{name}}/s.csv\n")
    (project / "in.yml").write_text(text)
    code, out, _ = validate("job", "validate", str(project / "in.yml"))
    assert code == 0 and "warning" not in out, out


def test_thousands_of_unknown_keys_are_counted_not_each_described(projects: Path) -> None:
    path = pipeline_with(projects, "unknown.yml",
                         "jobs: {}\n" + "".join(f"k{i}: 1\n" for i in range(5_000)))
    code, out, _ = validate("job", "validate", str(path))
    assert code == 1 and f"more schema problems not shown (at most {MAX_SCHEMA_PROBLEMS}" in out
    assert out.count("\n") < MAX_SCHEMA_PROBLEMS + 10


def test_a_bad_tagged_value_is_a_message(projects: Path) -> None:
    path = pipeline_with(projects, "tagged.yml", "jobs: {}\nx: !!int 10 pipeline\n"
                                                 "y: !!timestamp 2020-99-99\n")
    code, out, _ = validate("job", "validate", str(path))
    assert code == 1
    assert "tagged.yml:4:4: x: string '10 pipeline' is not a valid !!int" in out
    assert "is not a valid !!timestamp" in out


def test_deep_mlpipe_toml_is_a_message(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    shutil.copytree(REPO / "samples" / "tabular-scoring", project)
    (project / "mlpipe.toml").write_text("a = " + "[" * 50_000 + "]" * 50_000 + "\n")
    code, out, _ = validate("job", "validate", str(project / "pipeline.yml"))
    assert code == 1 and "cannot read mlpipe.toml: nested too deeply" in out


def test_sdk_load_job_of_an_alias_bomb_is_a_validation_error(projects: Path) -> None:
    from mlpipe import ValidationError
    from mlpipe.sdk.loading import load_job

    path = pipeline_with(projects, "sdk-bomb.yml", billion_laughs(9))
    with pytest.raises(ValidationError, match="expands to more than"):
        load_job(path)


def test_mltable_paths_leaving_the_work_tree_are_warnings(repo: Path) -> None:
    project = repo / "pipelines" / "tabular"
    (repo.parent / "outside").mkdir()
    (project / "data" / "MLTable").write_text(MLTABLE.replace(
        "  - pattern: ./*.csv\n", "  - pattern: ./*.csv\n  - folder: ../../../../outside\n"
                                  "  - pattern: ../../../../outside/*.csv\n  - folder: ../src\n"))
    code, out, _ = validate("job", "validate", str(project / "pipeline.yml"))
    assert code == 0, out
    assert "MLTable path 'folder: ../../../../outside' is outside the git work tree" in out
    assert "MLTable path 'pattern: ../../../../outside/*.csv' is outside" in out
    assert "'folder: ../src'" not in out


# ---------------------------------------------------------------- bounded time


@pytest.mark.parametrize("tail", ["${{" + " " * 200_000, "$[[" * 100_000, "a" * 300_000,
                                  "$<<" + " " * 200_000])
def test_pathological_program_arguments_end_quickly_in_a_message(projects: Path,
                                                                  tail: str) -> None:
    """``${{`` and many spaces took cubic time in the binding pattern, unclosed ``$[[``
    quadratic time, and a huge argument text minutes in shlex: now all linear or refused."""
    text = (projects / "tabular-scoring" / "pipeline.yml").read_text()
    path = projects / "tabular-scoring" / "args.yml"
    path.write_text(text.replace("--model ${{inputs.price_model}}",
                                 "--model ${{inputs.price_model}} " + tail))
    proc = cli_run("job", "validate", str(path), cwd=projects)  # the timeout bounds it
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr
    if len(tail) > MAX_ARGUMENTS_CHARS:
        assert "program_arguments: cannot split program_arguments: it is " in proc.stdout


@pytest.mark.parametrize("name", ["a" * 300, "a/" * 3_000])
def test_unusable_file_arguments_are_usage_errors(name: str) -> None:
    for argv in (["job", "validate", name], ["component", "validate", name],
                 ["job", "create", "-f", name]):
        code, _, err = validate(*argv)
        assert code == 2 and "not a usable path" in err, (argv, err)


@pytest.mark.parametrize("key", ["code", "entry_script", "conda_file", "path", "component"])
def test_unusable_paths_in_the_yaml_are_errors(projects: Path, key: str) -> None:
    data = sample_data(projects, "tabular-scoring")
    job = data["jobs"]["score_houses"]
    long_name = "x" * 300
    if key in ("code", "entry_script"):
        job["task"][key] = long_name + (".py" if key == "entry_script" else "")
    elif key == "conda_file":
        job["task"]["environment"]["conda_file"] = long_name
    elif key == "path":
        data["inputs"]["houses"]["path"] = long_name
    else:
        data["jobs"]["extra"] = {"type": "parallel", "component": long_name}
    path = projects / "tabular-scoring" / "unusable.yml"
    path.write_text(dump(data))
    code, out, _ = validate("job", "validate", str(path))
    assert code == 1 and "a name in it is longer than 255 bytes" in out, out


def test_deep_flow_nesting_in_an_mltable_file_is_a_data_error(tmp_path: Path) -> None:
    """Past libyaml's own look-ahead limit (1,000 flow levels in libyaml >= 0.2.6) the limit
    check must still answer, not leave the document to ruamel's recursive composer."""
    (tmp_path / "MLTable").write_text("paths: " + "[" * 5_000 + "]" * 5_000 + "\n",
                                      encoding="utf-8")
    with pytest.raises(DataError, match=f"nested more than {MAX_DEPTH} levels deep"):
        load_spec(str(tmp_path))
