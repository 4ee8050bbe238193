"""``mldesigner``'s ``@command_component``: Python functions as command components, run
in a fresh process each, wired in an azure-ai-ml ``@pipeline``."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from mlpipe import MLClient, pipeline
from mlpipe.diagnostics import ValidationError
from mlpipe.mldesigner import command_component
from mlpipe.sdk.nodes import CommandNode
from tests.conftest import run_cli
from tests.sdk.support import write

COMPONENTS = '''\
from pathlib import Path
from mlpipe.mldesigner import command_component, Input, Output


@command_component(name="make_data", version="2", display_name="Make")
def make(out: Output(type="uri_folder"), rows: int = 2) -> str:
    """Writes rows."""
    (Path(out) / "rows.txt").write_text("\\n".join(str(i) for i in range(rows)))
    return f"made-{rows}"


@command_component()
def use(data: Input(type="uri_folder"), label: str, scale: float,
        result: Output(type="uri_folder"), extra: Input(type="uri_folder", optional=True),
        loud=False):
    from helper import shout  # the function's folder is on sys.path, as in mldesigner
    rows = (Path(data) / "rows.txt").read_text().split()
    text = f"{label}|{len(rows) * scale}|{extra}|{loud!r}"
    (Path(result) / "result.txt").write_text(shout(text) if loud else text)
'''


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def components(tmp_path: Path, runs_dir: Path) -> ModuleType:
    write(tmp_path / "src" / "helper.py", "def shout(text):\n    return text.upper()\n")
    return _load(write(tmp_path / "src" / "comps_mld.py", COMPONENTS))


def test_the_component_is_the_one_mldesigner_makes(components: ModuleType,
                                                   tmp_path: Path) -> None:
    data = components.make.component.data
    assert data["name"] == "make_data" and data["version"] == "2"
    assert data["display_name"] == "Make" and data["description"] == "Writes rows."
    assert data["tags"] == {"codegenBy": "mldesigner"}
    assert data["inputs"] == {"rows": {"type": "integer", "default": 2}}
    assert data["outputs"] == {"out": {"type": "uri_folder"}, "output": {"type": "string"}}
    assert data["command"] == ("mldesigner execute --source comps_mld.py --name make_data "
                               "--inputs rows='${{inputs.rows}}' --outputs "
                               "out='${{outputs.out}}' output='${{outputs.output}}'")
    assert data["code"] == str((tmp_path / "src").resolve())
    assert data["environment"] == ("azureml://registries/azureml/environments/mldesigner/"
                                   "labels/latest")
    use = components.use.component.data
    assert use["display_name"] == "use"
    assert use["inputs"]["extra"] == {"type": "uri_folder", "optional": True}
    assert use["inputs"]["loud"] == {"type": "boolean", "default": False}
    assert "$[[extra='${{inputs.extra}}']]" in use["command"]
    assert components.make.__name__ == "make" and "Writes rows." in components.make.__doc__
    # outside a pipeline the call is a command job, as azure-ai-ml's component functions
    assert isinstance(components.make(rows=3), CommandNode)


def test_a_pipeline_of_two_functions_passes_a_folder_a_parameter_and_a_returned_value(
        components: ModuleType, runs_dir: Path) -> None:
    @pipeline()
    def chain(scale):  # type: ignore[no-untyped-def]
        made = components.make(rows=3)
        used = components.use(data=made.outputs.out, label=made.outputs.output, scale=scale,
                              loud=True)
        return {"result": used.outputs.result}

    client = MLClient(runs_dir=runs_dir)
    result = client.jobs.create_or_update(chain(scale=0.5))
    assert result.ok, result
    assert (Path(result.outputs["result"]) / "result.txt").read_text() == "MADE-3|1.5|NONE|TRUE"
    assert client.components.create_or_update(components.make).name == "make_data"
    assert client.components.get("make_data", "2").data["command"].startswith("mldesigner")


def test_a_returned_value_no_step_wrote_fails_the_reader_naming_it(runs_dir: Path) -> None:
    from mlpipe.entities import CommandComponent

    silent = CommandComponent(name="silent", command="echo nothing", environment="azureml:e:1",
                              outputs={"value": {"type": "string"}})
    echo = CommandComponent(name="echo", command="echo ${{inputs.text}}",
                            environment="azureml:e:1", inputs={"text": {"type": "string"}})

    @pipeline()
    def reads():  # type: ignore[no-untyped-def]
        echo(text=silent().outputs.value)

    result = MLClient(runs_dir=runs_dir).jobs.create_or_update(reads())
    assert not result.ok
    record = json.loads((Path(result.run_dir) / "job.json").read_text())
    (step,) = [s for s in record["steps"].values() if s.get("error")]
    assert "input 'text' takes the value of output silent.value" in step["error"]


@pytest.mark.parametrize(("source", "message"), [
    ("def f(a): pass", "f(): parameter 'a' has no type: it has no annotation and no default"),
    ("def f(a=None): pass", "f(): parameter 'a' has no type"),
    ("def f(a: list = None): pass", "f(): parameter 'a' has the unsupported type 'list'"),
    ("def f(**kw): pass", "'**kw' is not supported"),
    ("def f() -> dict: pass", "the return annotation 'dict' is not supported"),
])
def test_bad_use_is_one_error_naming_the_function_and_parameter(source: str,
                                                               message: str) -> None:
    namespace: dict[str, object] = {}
    exec(compile(source, __file__, "exec"), namespace)
    with pytest.raises(ValidationError) as caught:
        command_component(namespace["f"])
    assert len(caught.value.diagnostics) == 1
    assert message in str(caught.value)


PUBLISHED = '''\
from pathlib import Path
from mldesigner import command_component, Input, Output


@command_component(display_name="Train", environment="./env.yaml")
def train(training_data: Input(type="uri_file"), model_output: Output(type="uri_folder"),
          max_epochs: int, learning_rate=0.02) -> str:
    (Path(model_output) / "model").write_text(Path(training_data).read_text() + str(max_epochs))
    return str(Path(model_output) / "model")


@command_component(name="score", version="1", environment=dict(
    conda_file=Path(__file__).parent / "conda.yaml", image="mcr.microsoft.com/x:1"))
def score(model_input: Input(type="uri_folder"), scored: Output(type="uri_folder"),
          model_file: str = None):
    (Path(scored) / "score").write_text(Path(model_file).read_text() + "!")
'''

NOTEBOOK_STYLE = '''\
from azure.ai.ml import MLClient, Input
from azure.ai.ml.dsl import pipeline
from azure.identity import DefaultAzureCredential
from src.components import train, score

ml_client = MLClient.from_config(credential=DefaultAzureCredential())


@pipeline(default_compute="cpu-cluster")
def train_and_score(data):
    trained = train(training_data=data, max_epochs=5)
    scored = score(model_input=trained.outputs.model_output,
                   model_file=trained.outputs.output)
    return {"scored": scored.outputs.scored}


job = ml_client.jobs.create_or_update(
    train_and_score(data=Input(type="uri_file", path="./data.txt")),
    experiment_name="pipeline_samples")
ml_client.jobs.stream(job.name)
'''


@pytest.mark.slow
def test_a_published_style_program_runs_unchanged_through_run_script(tmp_path: Path) -> None:
    write(tmp_path / "src" / "components.py", PUBLISHED)
    write(tmp_path / "src" / "env.yaml", "name: e\nimage: mcr.microsoft.com/x:1\n"
                                        "conda_file:\n  dependencies: [python=3.10]\n")
    write(tmp_path / "src" / "conda.yaml", "dependencies: [python=3.10]\n")
    write(tmp_path / "data.txt", "rows:")
    program = write(tmp_path / "notebook.py", NOTEBOOK_STYLE)
    proc = run_cli("run-script", str(program), cwd=tmp_path,
                   env={"MLPIPE_RUNS_DIR": str(tmp_path / "runs")})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (scored,) = (tmp_path / "runs").glob("train_and_score_*/scored/outputs/scored/score")
    assert scored.read_text() == "rows:5!"


def test_a_distribution_dict_and_a_resource_configuration_are_set_on_the_node(
        tmp_path: Path, runs_dir: Path) -> None:
    from mlpipe.entities import ResourceConfiguration

    module = _load(write(tmp_path / "dist_mld.py", '''\
from mlpipe.mldesigner import command_component, Output

@command_component(name="tf", distribution={"type": "tensorflow", "worker_count": 2})
def tf(out: Output(type="uri_folder"), epochs=3):
    pass
'''))
    node = module.tf(epochs=1)
    node.distribution.worker_count = 4
    node.resources = ResourceConfiguration(instance_count=2)
    data = node.to_dict(tmp_path)
    assert data["distribution"] == {"type": "tensorflow", "parameter_server_count": 0,
                                    "worker_count": 4}
    assert data["resources"] == {"instance_count": 2}
