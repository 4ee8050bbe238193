"""The rest of azure-ai-ml's surface that published programs touch: ``pipeline_job.outputs.x``
and ``["x"]``, ``entities.Job``, ``MLClient.create_or_update(entity)`` by type,
``constants._common`` and the other private constants modules, ``node.task = None``, a bare
``"name:version"`` environment, and ``NotAvailableLocally`` (never ``AttributeError``) for
what needs a workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mlpipe import Input, MLClient, Output, command, pipeline
from mlpipe.entities import (
    AmlCompute,
    CommandComponent,
    Data,
    Environment,
    Job,
    Model,
    PipelineJob,
)
from mlpipe.parallel import RunFunction, parallel_run_function
from mlpipe.sdk.operations import NotAvailableLocally
from tests.conftest import run_cli
from tests.sdk.support import make_file_project, write


def scorer(root: Path):  # type: ignore[no-untyped-def]
    """A parallel function over ``root/src/echo.py`` (paths from this file are absolute)."""
    return parallel_run_function(
        inputs=dict(files=Input(type="uri_folder")), outputs=dict(lines=Output(type="uri_file")),
        input_data="${{inputs.files}}", mini_batch_size="2",
        task=RunFunction(code=str(root / "src"), entry_script="echo.py",
                         program_arguments="--tag kept", append_row_to="${{outputs.lines}}"))


def scoring(root: Path) -> PipelineJob:
    score = scorer(root)

    @pipeline(default_compute="cpu-cluster")
    def scoring(files):  # type: ignore[no-untyped-def]
        step = score(files=files)
        return {"scored": step.outputs.lines}

    return scoring(files=Input(type="uri_folder", path=str(root / "data")))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make_file_project(tmp_path / "proj", files=3)
    monkeypatch.chdir(root)
    return root


def test_pipeline_job_sections_take_attribute_and_item_access(project: Path) -> None:
    job = scoring(project)
    assert job.outputs.scored is job.outputs["scored"]
    assert job.inputs.files is job.inputs["files"] and job.jobs.step is job.jobs["step"]
    job.outputs.scored.mode = "upload"
    job.outputs["scored"].path = "azureml://datastores/workspaceblobstore/paths/lines.txt"
    job.inputs.files = Input(type="uri_folder", path=str(project / "src"), mode="download")
    data = job.to_dict()
    assert data["outputs"]["scored"] == {
        "type": "uri_file", "mode": "upload",
        "path": "azureml://datastores/workspaceblobstore/paths/lines.txt"}
    assert data["inputs"]["files"]["mode"] == "download"
    with pytest.raises(AttributeError, match="no output named 'scores'.*did you mean 'scored'"):
        job.outputs.scores  # noqa: B018


def test_node_task_none_runs_the_components_task_and_environments_are_references(
        project: Path) -> None:
    score = scorer(project)

    @pipeline(default_compute="cpu-cluster")
    def p(files):  # type: ignore[no-untyped-def]
        step = score(files=files)
        step.task = None  # as azure-ai-ml: the component's task applies again
        listing = command(name="listing", command="ls ${{inputs.files}}",
                          environment="listing-env:4",
                          inputs={"files": Input(type="uri_folder")})
        listing(files=files)
        return {"scored": step.outputs.lines}

    job = p(files=Input(type="uri_folder", path=str(project / "data")))
    plan = job.compile(runs_dir=project / "runs", job_name="task_none")
    step = plan.step("step")
    assert step.entry_script == "echo.py" and step.program_arguments == ("--tag", "kept")
    assert job.to_dict()["jobs"]["listing"]["environment"] == "azureml:listing-env:4"
    assert plan.step("listing").environment.reference == "azureml:listing-env:4"


def test_jobs_are_job_entities_and_create_or_update_dispatches_on_type(project: Path) -> None:
    client = MLClient(runs_dir=project / "runs")
    job = scoring(project)
    assert isinstance(job, Job) and isinstance(job, PipelineJob)
    result = client.create_or_update(job, experiment_name="surface")
    assert isinstance(result, Job) and result.status == "completed"
    assert isinstance(client.jobs.get(result.name), Job)
    assert job.status is None and job.jobs.step.status is None  # not a submitted job
    model = client.create_or_update(Model(name="m", path=str(project / "src")))
    assert model.id == "azureml:m:1" and client.models.get("m", "1").version == "1"
    env = client.create_or_update(Environment(name="env", image="python:3.11"))
    assert client.environments.get("env", env.version).image == "python:3.11"
    component = client.create_or_update(CommandComponent(
        name="lister", command="ls", environment="azureml:env:1"))
    assert client.components.get("lister", component.version).name == "lister"
    compute = client.begin_create_or_update(AmlCompute(name="gpu", size="Standard_NC6"))
    assert compute.result().name == "gpu"
    with pytest.raises(TypeError, match="ml_client.data.create_or_update"):
        client.create_or_update(Data(name="d", path=str(project / "data")))


def test_what_needs_a_workspace_says_so_in_one_error(project: Path) -> None:
    from mlpipe.entities import ManagedOnlineEndpoint  # type: ignore[attr-defined]

    client = MLClient(runs_dir=project / "runs")
    with pytest.raises(NotAvailableLocally,
                       match=r"azure.ai.ml.entities.ManagedOnlineEndpoint\(\) needs an Azure ML"):
        ManagedOnlineEndpoint(name="endpoint")
    with pytest.raises(NotAvailableLocally, match=r"begin_create_or_update\(Schedule\)"):
        client.begin_create_or_update(type("Schedule", (), {})())


def test_private_constants_modules_resolve_under_run_script(tmp_path: Path) -> None:
    script = write(tmp_path / "constants.py", """\
from azure.ai.ml.constants import AssetTypes, InputOutputModes
from azure.ai.ml.constants._common import LROConfigurations, AzureMLResourceType
from azure.ai.ml.constants._component import NodeType
from azure.ai.ml.constants._job import DistributionType
from azure.ai.ml.constants._compute import ComputeType
from azure.ai.ml.entities import Job, PipelineJob
print(AssetTypes.MLTABLE, InputOutputModes.EVAL_MOUNT, LROConfigurations.POLLING_TIMEOUT,
      AzureMLResourceType.JOB, NodeType.PARALLEL, DistributionType.MPI,
      ComputeType.AMLCOMPUTE, issubclass(PipelineJob, Job))
""")
    proc = run_cli("run-script", str(script), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["mltable", "eval_mount", "720", "jobs", "parallel", "mpi",
                                   "amlcompute", "True"]


COMPONENT = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
type: command
name: lister
description: Lists a folder.
inputs:
  folder: {type: uri_folder, description: what to list}
  depth: {type: integer, default: 1}
outputs:
  listing: {type: uri_folder}
command: ls ${{inputs.folder}} > ${{outputs.listing}}/files.txt
environment: azureml:env:1
"""


def test_components_print_and_help_and_pipeline_components_register(project: Path,
                                                                     capsys: Any) -> None:
    # azureml-examples jobs/pipelines 1a and stepsequence: print(component),
    # help(component._func); 1j: ml_client.components.create_or_update(pipeline_function)
    from mlpipe import load_component

    lister = load_component(write(project / "lister.yml", COMPONENT))
    assert str(lister).startswith("$schema:") and "name: lister" in str(lister)
    help(lister._func)
    shown = capsys.readouterr().out
    assert "lister(*, folder=None, depth=1)" in shown and "Lists a folder." in shown

    @pipeline()
    def listing(folder):  # type: ignore[no-untyped-def]
        step = lister(folder=folder)
        return {"files": step.outputs.listing}

    client = MLClient(runs_dir=project / "runs")
    registered = client.components.create_or_update(listing)
    assert (registered.name, registered.type) == ("listing", "pipeline")

    @pipeline(default_compute="cpu-cluster")
    def outer(folder):  # type: ignore[no-untyped-def]
        inner = registered(folder=folder)
        return {"files": inner.outputs.files}

    plan = outer(folder=Input(type="uri_folder", path=str(project / "data"))).compile(
        runs_dir=project / "runs", job_name="registered")
    assert [step.name for step in plan.steps] == ["inner.step"]


def test_interactive_services_are_recorded(project: Path) -> None:
    from mlpipe.entities import JobService, SshJobService

    node = command(command="echo hi", environment="azureml:env:1",
                   services={"lab": JobService(type="jupyter_lab"),
                             "ssh": SshJobService(ssh_public_keys="ssh-rsa AAA")})
    assert node.to_dict(project)["services"] == {
        "lab": {"type": "jupyter_lab"}, "ssh": {"type": "ssh", "ssh_public_keys": "ssh-rsa AAA"}}
