"""Property: a job never loses a file that existed before it, wherever its outputs are put.

Random pipelines of command, parallel and sweep steps whose outputs are placed anywhere:
inside the YAML folder, over the pipeline's folder or its data, over the runs folder or
another job's folder or datastore output, over the user's files outside (some with the very
names mlpipe writes: `parallel_run_step.txt`, a sweep's `model.txt`), behind links to them,
with and without `--allow-external-outputs`. Whatever the job does (refused, failed,
completed), every file of the sandbox that existed before it still exists with the same
bytes: the tree is hashed before and after. The steps' own code writes only new names, so a
loss can only be mlpipe's."""

from __future__ import annotations

import contextlib
import os
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mlpipe.errors import MlpipeError
from tests.jobs.user_files_support import HEADER, TRAIN, tree_hashes

PLACES = (
    None,  # the default place, in the job's folder
    "./out_{i}",  # a new folder beside the YAML
    ".",  # the pipeline's own folder
    "..",  # around it (and around the runs folder)
    "./data",  # the pipeline's data, an input
    "./notes.txt",  # a file of the user's, as a folder
    "{outside}/keep",  # the user's files outside, with the names mlpipe writes
    "{outside}/keep/deeper",
    "./link_out",  # a link to the user's folder
    "./link_out/sub",
    "{runs}",  # the runs folder
    "{runs}/other-job/out",  # another job's folder
    "azureml://datastores/ws/paths/",  # a datastore's root
    "azureml://datastores/ws/paths/other",  # another job's datastore output
    "azureml://datastores/ws/paths/new_{i}",
)

ENTRY = """\
import os

def init():
    pass

def run(mini_batch):
    return [os.path.basename(path) for path in mini_batch]
"""


def _sandbox(root: Path, runs_inside: bool) -> tuple[Path, Path, Path]:
    """The user's files: a project, a folder outside, a runs folder with another job's."""
    project, outside = root / "proj", root / "outside"
    runs = project / "mlpipe-runs" if runs_inside else root / "runs"
    (project / "src").mkdir(parents=True)
    (project / "src" / "score.py").write_text(ENTRY)
    (project / "src" / "train.py").write_text(TRAIN)
    (project / "data").mkdir()
    for index in range(3):
        (project / "data" / f"doc_{index}.txt").write_text(f"doc {index}\n")
    (project / "notes.txt").write_text("my notes\n")
    keep = outside / "keep"
    (keep / "deeper").mkdir(parents=True)
    for name in ("keep.txt", "parallel_run_step.txt", "model.txt", "deeper/mine.txt"):
        (keep / name).write_text(f"the user's {name}\n")
    os.symlink(keep, project / "link_out")
    other = runs / "other-job" / "out"
    other.mkdir(parents=True)
    (other / "rows.txt").write_text("another job's rows\n")
    (runs / "other-job" / "job.json").write_text("{}\n")
    store = runs / "datastores" / "ws" / "other"
    store.mkdir(parents=True)
    (store / "scores.csv").write_text("another job's scores\n")
    return project, outside, runs


def _step(kind: str, index: int, place: str | None, project: Path, outside: Path,
          runs: Path, input_here: bool) -> str:
    out = "" if place is None else "\n" + " " * 16 + "path: " + place.format(
        i=index, outside=outside, runs=runs)  # as indented as the 'type' line above it
    data = "." if input_here else "./data"
    if kind == "command":
        body = f"""\
          s{index}:
            type: command
            environment: azureml:env:1
            inputs:
              data: {{type: uri_folder, path: {data}}}
            outputs:
              out:
                type: uri_folder{out}
            command: ls ${{{{inputs.data}}}} > ${{{{outputs.out}}}}/job_s{index}_listing.txt
        """
    elif kind == "parallel":
        body = f"""\
          s{index}:
            type: parallel
            inputs:
              data: {{type: uri_folder, path: {data}}}
            outputs:
              out:
                type: uri_folder{out}
            input_data: ${{{{inputs.data}}}}
            mini_batch_size: "2"
            max_concurrency_per_instance: 1
            task:
              type: run_function
              code: ./src
              entry_script: score.py
              environment: azureml:env:1
              append_row_to: ${{{{outputs.out}}}}
        """
    else:
        (project / f"trial_{index}.yml").write_text(textwrap.dedent("""\
            type: command
            inputs:
              lr: {type: number, default: 0.1}
            outputs:
              model: {type: uri_folder}
            code: ./src
            environment: azureml:env:1
            command: python train.py ${{outputs.model}} ${{inputs.lr}}
            """))
        body = f"""\
          s{index}:
            type: sweep
            trial: ./trial_{index}.yml
            sampling_algorithm: grid
            search_space:
              lr: {{type: choice, values: [0.1]}}
            objective: {{goal: maximize, primary_metric: accuracy}}
            limits: {{max_total_trials: 1}}
            outputs:
              model:
                type: uri_folder{out}
        """
    return textwrap.indent(textwrap.dedent(body), "  ")


STEPS = st.lists(st.tuples(st.sampled_from(["command", "parallel", "sweep"]),
                           st.sampled_from(PLACES)), min_size=1, max_size=3)
ALLOW = st.sampled_from([True, True, False])  # most jobs allow external outputs: they run
INPUT_HERE = st.sampled_from([False, False, False, True])  # an input 'path: .', at times


def _check(tmp_path: Path, steps: list[tuple[str, str | None]], allow: bool,
           runs_inside: bool, input_here: bool) -> None:
    from mlpipe.jobs import JobRequest, submit

    root = Path(os.path.realpath(tmp_path)) / f"ex{len(list(tmp_path.iterdir()))}"
    project, outside, runs = _sandbox(root, runs_inside)
    text = HEADER + "jobs:\n" + "".join(
        _step(kind, index, place, project, outside, runs, input_here)
        for index, (kind, place) in enumerate(steps))
    (project / "pipeline.yml").write_text(text)
    before = tree_hashes(root)
    with contextlib.suppress(MlpipeError):  # refused: nothing of the user's is touched either
        submit(JobRequest(project / "pipeline.yml", runs_dir=runs, name="prop",
                          allow_external_outputs=allow))
    after = tree_hashes(root)
    lost = {path: digest for path, digest in before.items() if after.get(path) != digest}
    assert not lost, f"lost or changed: {sorted(lost)}\n{text}"


_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                        HealthCheck.too_slow])


@settings(max_examples=4, **_SETTINGS)  # type: ignore[arg-type]
@given(steps=STEPS, allow=ALLOW, runs_inside=st.booleans(), input_here=INPUT_HERE)
@example(steps=[("sweep", "{outside}/keep"), ("command", "./link_out/sub")], allow=True,
         runs_inside=True, input_here=False)  # a clash refused; a write behind a link
@example(steps=[("parallel", "{outside}/keep/deeper"), ("sweep", "./out_{i}")], allow=True,
         runs_inside=False, input_here=False)  # beside the user's files
@example(steps=[("sweep", "."), ("command", "azureml://datastores/ws/paths/")], allow=True,
         runs_inside=True, input_here=False)  # the brief's: the pipeline's folder, a root
@example(steps=[("parallel", None), ("sweep", "azureml://datastores/ws/paths/new_{i}")],
         allow=False, runs_inside=True, input_here=True)  # the runs folder in the input
def test_no_file_of_the_users_is_lost_wherever_outputs_go(
        tmp_path: Path, steps: list[tuple[str, str | None]], allow: bool, runs_inside: bool,
        input_here: bool) -> None:
    _check(tmp_path, steps, allow, runs_inside, input_here)


@pytest.mark.slow
@settings(max_examples=40, **_SETTINGS)  # type: ignore[arg-type]
@given(steps=STEPS, allow=ALLOW, runs_inside=st.booleans(), input_here=INPUT_HERE)
def test_no_file_of_the_users_is_lost_over_many_pipelines(
        tmp_path: Path, steps: list[tuple[str, str | None]], allow: bool, runs_inside: bool,
        input_here: bool) -> None:
    _check(tmp_path, steps, allow, runs_inside, input_here)
