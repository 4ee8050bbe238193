"""A component's ``additional_includes`` are in its step's code snapshot, as azure-ai-ml puts
them in the code it uploads: a folder or file under its own name, ``<name>.zip`` built from
the folder ``<name>``; a parallel component has none (azure-ai-ml drops the key)."""

from __future__ import annotations

import zipfile
from pathlib import Path

from mlpipe.plan import CodeInclude
from mlpipe.runtime.snapshot import snapshot_code
from tests.conftest import run_cli
from tests.jobs.support import create, write


def _project(root: Path) -> Path:
    """A command component whose code imports a package from a shared folder two levels up,
    reads a shared file and opens a zip built from a folder; a parallel step after it."""
    write(root / "shared" / "util" / "__init__.py", "VALUE = 7\n")
    write(root / "shared" / "settings.txt", "threshold=3\n")
    write(root / "assets" / "models" / "m.txt", "weights\n")
    write(root / "components" / "train" / "src" / "main.py", """\
        import sys, zipfile
        from pathlib import Path
        import util
        names = zipfile.ZipFile("models.zip").namelist()
        text = Path("settings.txt").read_text().strip()
        Path(sys.argv[1], "result.txt").write_text(f"{util.VALUE} {text} {names}")
        """)
    write(root / "components" / "train" / "train.yml", """\
        $schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
        type: command
        name: train
        version: 1
        code: ./src
        command: python main.py ${{outputs.out}}
        environment: azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu:1
        outputs:
          out: {type: uri_folder}
        additional_includes:
          - ../../shared/util
          - ../../shared/settings.txt
          - ../../assets/models.zip
        """)
    write(root / "psrc" / "score.py", """\
        import os
        def init():
            pass
        def run(batch):
            return [f"{os.path.basename(p)} {os.path.exists('util')}" for p in batch]
        """)
    return write(root / "pipeline.yml", """\
        $schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
        type: pipeline
        settings: {default_compute: azureml:cpu}
        jobs:
          train:
            component: ./components/train/train.yml
          inline:
            component:
              type: command
              code: ./components/train/src
              command: python main.py ${{outputs.out}}
              environment: azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu:1
              outputs: {out: {type: uri_folder}}
              additional_includes: [./shared/util, ./shared/settings.txt, ./assets/models.zip]
          score:
            type: parallel
            inputs:
              data: ${{parent.jobs.train.outputs.out}}
            outputs:
              scored: {type: uri_folder}
            component:
              type: parallel
              inputs: {data: {type: uri_folder}}
              outputs: {scored: {type: uri_folder}}
              input_data: ${{inputs.data}}
              mini_batch_size: "1"
              additional_includes: [./shared/util]
              task:
                type: run_function
                code: ./psrc
                entry_script: score.py
                environment: azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu:1
                append_row_to: ${{outputs.scored}}
        """)


def test_a_step_runs_with_its_components_additional_includes(tmp_path: Path) -> None:
    pipeline = _project(tmp_path / "project")
    ran = create(pipeline, tmp_path / "runs", "inc")
    assert ran.proc.returncode == 0, ran.proc.stdout + ran.proc.stderr
    expected = "7 threshold=3 ['models/', 'models/m.txt']"
    for step in ("train", "inline"):  # a component file's, and an inline component's
        assert (ran.output(step, "out") / "result.txt").read_text() == expected
    # azure-ai-ml drops a parallel component's additional_includes: no 'util' there either
    assert ran.append_lines("score") == ["result.txt False"]
    snapshot = Path(ran.step("train")["step_dir"]) / "code"
    assert sorted(p.name for p in snapshot.iterdir()) == ["main.py", "models.zip",
                                                          "settings.txt", "util"]


def test_validate_warns_that_a_parallel_component_has_no_additional_includes(
        tmp_path: Path) -> None:
    pipeline = _project(tmp_path / "project")
    proc = run_cli("job", "validate", str(pipeline), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert ("warning: jobs.score.component.additional_includes: additional_includes of a "
            "parallel component are not applied" in proc.stdout), proc.stdout
    assert "put the files in the task's code folder (task.code)" in proc.stdout


def test_includes_merge_and_zip_as_azure_ai_ml_builds_them(tmp_path: Path) -> None:
    write(tmp_path / "code" / "main.py", "")
    write(tmp_path / "a" / "lib" / "x.py", "X = 1\n")
    write(tmp_path / "b" / "lib" / "y.py", "Y = 2\n")
    write(tmp_path / "pkg" / "sub" / "z.py", "")
    write(tmp_path / "pkg" / "__pycache__" / "z.cpython-311.pyc", "")
    includes = [CodeInclude(str(tmp_path / "a" / "lib")), CodeInclude(str(tmp_path / "b" / "lib")),
                CodeInclude(str(tmp_path / "pkg"), zipped=True)]
    dest = snapshot_code(tmp_path / "code", tmp_path / "step" / "code", includes)
    assert sorted(p.name for p in (dest / "lib").iterdir()) == ["x.py", "y.py"]  # merged
    # the folder's own entry first, then its files sorted; caches left out
    assert zipfile.ZipFile(dest / "pkg.zip").namelist() == ["pkg/", "pkg/sub/z.py"]
    # no code: the snapshot is the includes alone, as azure-ai-ml uploads them
    only = snapshot_code(None, tmp_path / "other", includes[:1])
    assert sorted(p.name for p in only.iterdir()) == ["lib"]
