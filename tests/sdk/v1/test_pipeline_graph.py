"""The v1 pipeline graph: PythonScriptStep / CommandStep / ParallelRunStep in any mix, wired
by PipelineData, OutputFileDatasetConfig, DataReference and DataPath, run in dependency order
with the step's run context; published v1 code runs unchanged (run-script) and with its
imports switched (python), its entry scripts importing ``azureml.core`` either way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from mlpipe import ValidationError
from mlpipe.v1 import (
    CommandStep,
    DataPath,
    DataPathComputeBinding,
    DataReference,
    Dataset,
    Datastore,
    Experiment,
    Model,
    OutputFileDatasetConfig,
    Pipeline,
    PipelineData,
    PipelineParameter,
    PythonScriptStep,
)
from tests.conftest import REPO, run_cli
from tests.sdk.v1.support import RAW_FILES, make_chain, switch_v1_imports, write


def _job(runs: Path) -> Path:
    (record,) = runs.glob("*/job.json")
    return record.parent


def _check_chain(project: Path, runs: Path, stdout: str) -> None:
    job = _job(runs)
    assert "PipelineRun Status: Finished" in stdout
    summary = next((project / "out").rglob("summary.txt"))
    assert summary.read_text() == f"{RAW_FILES} scored\n"
    # PipelineData lands under its step run's id, as in Azure: <job>_<step> here
    scores = runs / "datastores" / "workspaceblobstore" / f"{job.name}_score" / "scores" \
        / "scores.txt"
    assert sorted(scores.read_text().splitlines()) == [
        f"f{i}.txt:LINE {i}:{job.name}" for i in range(RAW_FILES)]  # prep's output, scored
    record = json.loads((job / "job.json").read_text())
    assert list(record["steps"]) == ["prep", "score", "report_py"]
    assert record["steps"]["report_py"]["depends_on"] == ["score"]
    assert record["steps"]["score"]["depends_on"] == ["prep"]
    prep_log = (job / "prep" / "logs" / "user" / "std_log.txt").read_text()
    assert f"prep run {job.name}_prep of {job.name}" in prep_log  # Run.get_context() ids
    assert "step report.py Finished" in stdout and "step prep Finished" in stdout


@pytest.mark.slow
def test_script_parallel_script_pipeline_runs_unchanged_through_run_script(
        tmp_path: Path) -> None:
    project = tmp_path / "v1"
    notebook = make_chain(project)
    runs = tmp_path / "runs"
    proc = run_cli("run-script", str(notebook), cwd=project, env={"MLPIPE_RUNS_DIR": str(runs)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _check_chain(project, runs, proc.stdout)


@pytest.mark.slow
def test_pipeline_started_with_python_resolves_azureml_core_in_its_steps(tmp_path: Path) -> None:
    """Imports switched in the notebook only: the steps' scripts keep ``from azureml.core
    import Run, Model``, which resolves in command steps and parallel workers alike."""
    project = tmp_path / "v1"
    notebook = make_chain(project)
    driver = write(project / "driver.py", switch_v1_imports(notebook.read_text()))
    assert "azureml" not in driver.read_text()
    runs = tmp_path / "runs"
    env = {k: v for k, v in os.environ.items() if k != "MLPIPE_IMPORT_MIRRORS"}
    proc = subprocess.run([sys.executable, str(driver)], cwd=project, capture_output=True,
                          text=True, timeout=300,
                          env={**env, "PYTHONPATH": str(REPO), "MLPIPE_RUNS_DIR": str(runs)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _check_chain(project, runs, proc.stdout)

    # The hook is what resolves them: turned off, the first step cannot import azureml.
    off = subprocess.run([sys.executable, str(driver)], cwd=project, capture_output=True,
                         text=True, timeout=300,
                         env={**env, "PYTHONPATH": str(REPO), "MLPIPE_IMPORT_MIRRORS": "0",
                              "MLPIPE_RUNS_DIR": str(tmp_path / "off")})
    assert off.returncode == 1 and "ActivityFailedException" in off.stderr
    log = (_job(tmp_path / "off") / "prep" / "logs" / "user" / "std_log.txt").read_text()
    assert "ModuleNotFoundError: No module named 'azureml'" in log


TABLE_STEPS = {
    "prepare.py": '''\
import argparse, os
import pandas as pd
from azureml.core import Run
parser = argparse.ArgumentParser()
parser.add_argument("--out")
args = parser.parse_args()
frame = Run.get_context().input_datasets["raw_data"].to_pandas_dataframe()
os.makedirs(args.out, exist_ok=True)
frame.assign(total=frame.a + frame.b).to_csv(os.path.join(args.out, "part.csv"), index=False)
''',
    "parquet.py": '''\
import argparse, os
from azureml.core import Run
parser = argparse.ArgumentParser()
parser.add_argument("--prepared")
parser.add_argument("--out")
args = parser.parse_args()
frame = Run.get_context().input_datasets["prepared"].to_pandas_dataframe()
os.makedirs(args.out, exist_ok=True)
frame.to_parquet(os.path.join(args.out, "processed.parquet"))
''',
    "total.py": '''\
import os
from azureml.core import Run
dataset = Run.get_context().input_datasets["as_parquet"]
frame = dataset.to_pandas_dataframe()
train, test = dataset.random_split(percentage=0.5, seed=111)
print("TOTAL", int(frame.total.sum()), "ROWS", len(frame),
      "SPLIT", len(train.to_pandas_dataframe()) + len(test.to_pandas_dataframe()))
''',
}


@pytest.mark.slow
def test_outputs_read_as_tables_downstream(tmp_path: Path) -> None:
    """OutputFileDatasetConfig(destination=...).read_delimited_files().as_input(name), then
    PipelineData.as_dataset().parse_parquet_files(): each step reads the table the step
    before wrote, through Run.get_context().input_datasets (the nyc-taxi notebook's way)."""
    for name, text in TABLE_STEPS.items():
        write(tmp_path / "steps" / name, text)
    write(tmp_path / "data" / "raw.csv", "a,b\n1,2\n3,4\n5,6\n")
    store = Datastore(None, "workspaceblobstore")
    raw = Dataset.Tabular.from_delimited_files(str(tmp_path / "data" / "raw.csv"))
    prepared = OutputFileDatasetConfig("prepared", destination=(store, "prepared/{run-id}"))
    as_parquet = PipelineData("as_parquet", datastore=store).as_dataset()
    steps = [
        PythonScriptStep("prepare.py", arguments=["--out", prepared],
                         inputs=[raw.as_named_input("raw_data")],
                         source_directory=str(tmp_path / "steps"), compute_target="cpu"),
        PythonScriptStep("parquet.py", arguments=["--prepared",
                                                  prepared.read_delimited_files().as_input(
                                                      "prepared"),
                                                  "--out", as_parquet.pipeline_data],
                         outputs=[as_parquet.pipeline_data],
                         source_directory=str(tmp_path / "steps"), compute_target="cpu"),
        PythonScriptStep("total.py", inputs=[as_parquet.parse_parquet_files()],
                         source_directory=str(tmp_path / "steps"), compute_target="cpu"),
    ]
    runs = tmp_path / "runs"
    run = Experiment(None, "tables").submit(Pipeline(steps=steps), runs_dir=runs,
                                            job_name="tables")
    assert run.get_status() == "Finished"
    stdout = (Path(run.logs["total_py"]) / "user" / "stdout.txt").read_text()
    assert "TOTAL 21 ROWS 3 SPLIT 3" in stdout
    (read,) = run.find_step_run("prepare.py")[0].get_details()["inputDatasets"]
    assert read["consumptionDetails"]["inputName"] == "raw_data"
    assert read["dataset"].to_pandas_dataframe().a.tolist() == [1, 3, 5]
    written = runs / "datastores" / "workspaceblobstore" / "prepared" / "tables_prepare_py" \
        / "part.csv"
    assert pd.read_csv(written).total.tolist() == [3, 7, 11]  # {run-id}: the step run's id


def test_data_references_datapaths_and_parameters_become_inputs(tmp_path: Path) -> None:
    """DataReference, (PipelineParameter(DataPath), DataPathComputeBinding) and a string
    PipelineParameter in arguments: the data paths arrive as local paths, a submission's
    pipeline_parameters override the defaults."""
    write(tmp_path / "echo.py", "import sys\nprint('ARGS', sys.argv[1:])\n")
    store = Datastore(None, "mystore")
    write(store.local_root / "titanic" / "Titanic.csv", "a\n1\n")
    write(store.local_root / "sample2" / "x.txt", "x\n")
    reference = DataReference(store, "test_data", "titanic/Titanic.csv")
    param = PipelineParameter("input_datapath", DataPath(store, "titanic"))
    binding = (param, DataPathComputeBinding(mode="mount"))
    text = PipelineParameter("input_string", "sample_string1")
    step = PythonScriptStep("echo.py", name="train_step",
                            arguments=["--ref", reference, "--path", binding, "--text", text],
                            inputs=[reference, binding], source_directory=str(tmp_path),
                            compute_target="cpu-cluster")
    node = Pipeline(steps=[step]).to_job().to_dict()["jobs"]["train_step"]
    assert node["command"] == ("python echo.py --ref ${{inputs.test_data}} --path "
                               "${{inputs.input_datapath}} --text sample_string1")
    assert node["inputs"]["test_data"]["type"] == "uri_file"
    run = Experiment(None, "params").submit(
        Pipeline(steps=[step]), runs_dir=tmp_path / "runs",
        pipeline_parameters={"input_datapath": DataPath(store, "sample2"),
                             "input_string": "sample_string2"})
    assert run.get_status() == "Finished"
    out = (Path(run.logs["train_step"]) / "user" / "stdout.txt").read_text()
    assert (f"ARGS ['--ref', '{store.local_root / 'titanic' / 'Titanic.csv'}', '--path', "
            f"'{store.local_root / 'sample2'}', '--text', 'sample_string2']") in out


def test_run_after_orders_steps_and_brings_them_into_the_pipeline(tmp_path: Path) -> None:
    """aml-pipelines-getting-started: step2.run_after(step1), step3.run_after(step2), and a
    Pipeline of [step3] alone runs all three, in that order."""
    log = tmp_path / "order.txt"
    script = f"import sys, time\ntime.sleep(0.2)\nopen({str(log)!r}, 'a').write(sys.argv[1] + '\\n')\n"
    write(tmp_path / "src" / "step.py", script)
    steps = [PythonScriptStep("step.py", name=f"step{i}", arguments=[f"s{i}"],
                              source_directory=str(tmp_path / "src"), compute_target="c")
             for i in (1, 2, 3)]
    steps[1].run_after(steps[0])
    steps[2].run_after(steps[1])
    run = Experiment(None, "order").submit(Pipeline(steps=[steps[2]]),
                                           runs_dir=tmp_path / "runs")
    assert run.get_status() == "Finished"
    assert log.read_text().splitlines() == ["s1", "s2", "s3"]
    assert [s.name for s in run.get_steps()] == ["step3", "step2", "step1"]


def test_steps_named_alike_and_command_steps(tmp_path: Path) -> None:
    """Two steps default to the same script name (v1 allows it); a CommandStep runs a shell
    command with its data arguments substituted."""
    write(tmp_path / "train.py", "print('trained')\n")
    write(tmp_path / "listing.py", "import os, sys\nos.makedirs(sys.argv[1], exist_ok=True)\n"
          "open(os.path.join(sys.argv[1], 'files.txt'), 'w').write('a b')\n")
    out = PipelineData("listing")
    steps = [PythonScriptStep("train.py", source_directory=str(tmp_path), compute_target="c"),
             PythonScriptStep("train.py", source_directory=str(tmp_path), compute_target="c"),
             CommandStep(command=["python", "listing.py", out], outputs=[out], name="list files",
                         source_directory=str(tmp_path), compute_target="c")]
    job = Pipeline(steps=steps).to_job()
    assert list(job.to_dict()["jobs"]) == ["train_py", "train_py_1", "list_files"]
    run = Experiment(None, "alike").submit(Pipeline(steps=steps), runs_dir=tmp_path / "runs")
    assert [r.name for r in run.find_step_run("train.py")] == ["train.py", "train.py"]
    assert run.get_status() == "Finished"
    listing = run.find_step_run("list files")[0].get_output_data("listing")
    assert (Path(listing.path) / "files.txt").read_text() == "a b"


def test_an_input_no_step_writes_is_named(tmp_path: Path) -> None:
    write(tmp_path / "a.py", "")
    orphan = PipelineData("nobody_writes_me")
    step = PythonScriptStep("a.py", arguments=["--in", orphan.as_input("data")],
                            source_directory=str(tmp_path), compute_target="c")
    with pytest.raises(ValidationError, match="'nobody_writes_me' is a PipelineData that no step"):
        Pipeline(steps=[step]).to_job()


PUBLISHED = '''\
from azureml.core import Experiment, Workspace
from azureml.pipeline.core import Pipeline
from azureml.pipeline.steps import PythonScriptStep

ws = Workspace.from_config()
step = PythonScriptStep(name="train_step", script_name="train.py", source_directory=".",
                        compute_target="cpu-cluster")
pipeline = Pipeline(workspace=ws, steps=[step])
run = Experiment(ws, "publish").submit(pipeline)
run.wait_for_completion()
published_pipeline = pipeline.publish(name="Pipeline", description="to publish",
                                      continue_on_step_failure=True)
print("never here")
'''


def test_publish_ends_with_one_not_available_locally_line(tmp_path: Path) -> None:
    write(tmp_path / "train.py", "print('trained')\n")
    script = write(tmp_path / "publish.py", PUBLISHED)
    proc = run_cli("run-script", str(script), cwd=tmp_path,
                   env={"MLPIPE_RUNS_DIR": str(tmp_path / "runs")})
    assert proc.returncode == 1
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"mlpipe run-script: {script}:11: NotAvailableLocally: "
                           "Pipeline.publish() needs an Azure ML workspace")
    assert "Experiment(ws, name).submit(pipeline)" in line and "never here" not in proc.stdout


def test_registered_model_survives_its_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                              ) -> None:
    """Model.register copies the files into the local store (the tutorial deletes the
    downloaded folder right after registering)."""
    monkeypatch.setenv("MLPIPE_RUNS_DIR", str(tmp_path / "runs"))
    write(tmp_path / "models" / "inception_v3.ckpt", "weights")
    model = Model.register(None, model_path=str(tmp_path / "models" / "inception_v3.ckpt"),
                           model_name="inception", tags={"pretrained": "inception"})
    import shutil

    shutil.rmtree(tmp_path / "models")
    path = Path(Model.get_model_path("inception"))
    assert path.read_text() == "weights" and path.name == "inception_v3.ckpt"
    assert path.parent == tmp_path / "runs" / "assets" / "model" / "inception" / "1"
    assert Model(None, "inception").version == model.version == 1


def test_file_dataset_download_and_mount(tmp_path: Path) -> None:
    write(tmp_path / "labels" / "labels.txt", "cat\n")
    write(tmp_path / "labels" / "sub" / "more.txt", "dog\n")
    dataset = Dataset.File.from_files(str(tmp_path / "labels"))
    copies = dataset.download(target_path=str(tmp_path / "copy"))
    assert sorted(Path(c).relative_to(tmp_path / "copy").as_posix() for c in copies) == [
        "labels.txt", "sub/more.txt"]
    assert dataset.to_path() == ["/labels.txt", "/sub/more.txt"]
    with pytest.raises(FileExistsError, match="overwrite=True"):
        dataset.download(target_path=str(tmp_path / "copy"))
    with dataset.mount() as context:
        assert Path(context.mount_point, "labels.txt").read_text() == "cat\n"
    config = dataset.as_named_input("labels_input").as_mount("/tmp/somewhere")
    assert config.path_on_compute == "/tmp/somewhere" and config.mode == "ro_mount"


TRAIN = '''\
import argparse, os
from azureml.core import Run
run = Run.get_context()
parser = argparse.ArgumentParser()
parser.add_argument("--reg", type=float)
args = parser.parse_args()
os.makedirs("outputs", exist_ok=True)
open("outputs/model.pkl", "w").write(f"model {args.reg}")
print("trained", run.id)
'''


def test_script_run_config_runs_as_a_one_step_job(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Experiment.submit(ScriptRunConfig(...)) (v1 training notebooks) runs the script once;
    the run lists its ./outputs files and registers a model from them. CommandStep takes the
    same config (aml-pipelines-with-commandstep)."""
    from mlpipe.v1 import Environment, MpiConfiguration, ScriptRunConfig

    monkeypatch.setenv("MLPIPE_RUNS_DIR", str(tmp_path / "runs"))
    write(tmp_path / "src" / "train.py", TRAIN)
    src = ScriptRunConfig(source_directory=str(tmp_path / "src"), script="train.py",
                          arguments=["--reg", 0.5], compute_target="cpu-cluster",
                          environment=Environment("sklearn-env"))
    run = Experiment(None, "train-exp").submit(src, runs_dir=tmp_path / "runs")
    assert run.wait_for_completion(show_output=False) == "Finished"
    assert run.get_file_names() == ["outputs/model.pkl"]
    model = run.register_model(model_name="sk-model", model_path="outputs/model.pkl")
    assert Path(Model.get_model_path("sk-model")).read_text() == "model 0.5"
    assert model.version == 1
    # azureml's positional order: ..., properties, model_framework, model_framework_version,
    # description (tests/sdk/v1/test_run_signatures.py checks every run method's order)
    again = run.register_model("sk-model", "outputs/model.pkl", {"k": "v"}, None,
                               "ScikitLearn", "1.0", "a ridge model")
    assert again.version == 2 and again.description == "a ridge model"
    run.download_file("outputs/model.pkl", str(tmp_path / "copy.pkl"))
    assert (tmp_path / "copy.pkl").read_text() == "model 0.5"

    command = ScriptRunConfig(source_directory=str(tmp_path / "src"),
                              command=["python train.py --reg 2"], compute_target="gpu",
                              distributed_job_config=MpiConfiguration(node_count=2))
    step = CommandStep(name="train-mnist", runconfig=command)
    node = Pipeline(steps=[step]).to_job().to_dict()["jobs"]["train_mnist"]
    assert node["command"] == "python train.py --reg 2"
    assert node["compute"] == "azureml:gpu"  # a v2 compute reference, as azure-ai-ml writes it


def test_datasets_from_urls_read_their_stand_ins(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Dataset.File.from_files / Tabular.from_delimited_files of a URL that mlpipe.toml maps
    (a prefix is enough) read the local stand-in."""
    write(tmp_path / "mlpipe.toml",
          '[assets]\n"https://dprepdata.blob.core.windows.net" = "./blob"\n')
    write(tmp_path / "blob" / "demo" / "Titanic.csv", "PassengerId,Survived\n1,0\n2,1\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MLPIPE_RUNS_DIR", str(tmp_path / "runs"))
    url = "https://dprepdata.blob.core.windows.net/demo/Titanic.csv"
    files = Dataset.File.from_files(url)
    assert files.local_path() == str(tmp_path / "blob" / "demo" / "Titanic.csv")
    table = Dataset.Tabular.from_delimited_files(url).to_pandas_dataframe()
    assert table.Survived.tolist() == [0, 1]


def test_a_parallel_step_reading_an_output_as_a_table_is_refused(tmp_path: Path) -> None:
    """run() would get file paths where v1 gives DataFrames: refused, not silently different."""
    from mlpipe.v1 import ParallelRunConfig, ParallelRunStep

    write(tmp_path / "prep.py", "")
    write(tmp_path / "score.py", "def run(batch):\n    return batch\n")
    prepared = OutputFileDatasetConfig("prepared")
    prep = PythonScriptStep("prep.py", arguments=[prepared], source_directory=str(tmp_path),
                            compute_target="c")
    config = ParallelRunConfig(source_directory=str(tmp_path), entry_script="score.py",
                               error_threshold=-1, output_action="summary_only",
                               environment="env", compute_target="c", node_count=1)
    score = ParallelRunStep("score", config, inputs=[prepared.read_delimited_files().as_input("t")])
    with pytest.raises(ValidationError, match="reads another step's output as a table") as err:
        Pipeline(steps=[prep, score]).to_job()
    assert err.value.diagnostics[0].location.file == __file__


def test_run_methods_return_what_azureml_returns(tmp_path: Path) -> None:
    """azureml's ``get_children()`` / ``get_steps()`` are generators (2019 notebooks write
    ``next(pipeline_run.get_children())``: the last step), and a step run's ``get_details()``
    has ``inputDatasets`` and ``outputDatasets`` in azureml's shape (the style-transfer
    notebook downloads ``get_details()['outputDatasets'][0]['dataset']``)."""
    write(tmp_path / "src" / "make.py", "import os, sys\nos.makedirs(sys.argv[1], exist_ok=True)\n"
          "open(os.path.join(sys.argv[1], 'video.txt'), 'w').write('frames')\n")
    out = PipelineData("stitched")
    step = PythonScriptStep("make.py", name="stitch", arguments=[out], outputs=[out],
                            source_directory=str(tmp_path / "src"), compute_target="c")
    run = Experiment(None, "details").submit(Pipeline(steps=[step]), runs_dir=tmp_path / "runs")
    children = run.get_children()
    assert iter(children) is children and next(children).name == "stitch"
    assert next(run.get_steps()).name == "stitch"
    stitch = run.find_step_run("stitch")[0]
    details = stitch.get_details()
    [output] = details["outputDatasets"]
    assert output["outputType"] == "RunOutput" and output["outputDetails"] == {
        "outputName": "stitched"}
    output["dataset"].download(str(tmp_path / "video"))
    assert [p.read_text() for p in (tmp_path / "video").rglob("video.txt")] == ["frames"]
    assert details["inputDatasets"] == [] and details["status"] == "Finished"


def test_a_string_datastore_is_named_at_the_users_line(tmp_path: Path) -> None:
    """``DataReference("predictions")``: the first argument is the datastore, not a name."""
    with pytest.raises(ValidationError) as caught:
        DataReference("predictions")
    [problem] = caught.value.diagnostics
    assert problem.key_path == "DataReference.datastore"
    assert "got the string 'predictions'" in problem.message
    assert "data_reference_name='predictions'" in (problem.hint or "")
    assert problem.location is not None and problem.location.file == __file__
