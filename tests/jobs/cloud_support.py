"""A pipeline reading a datastore's blobs and writing its output there, over Azurite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.azurite_support import KEY, Azurite
from tests.conftest import run_cli

SCORE = """\
import os


def init():
    pass


def run(mini_batch):
    out = []
    for path in mini_batch:
        with open(path) as f:
            out.append(f"{os.path.basename(path)}: {f.read().strip()}")
    return out
"""

DOCS = {**{f"doc_{i:02d}.txt": f"hello {i}\n" for i in range(7)},
        "sub/deep.txt": "deep\n", "a.txt": "a\n", "a/b.txt": "b\n", ".hidden": "no\n"}

PIPELINE = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
display_name: cloud-rows
settings:
  default_compute: azureml:cpu
inputs:
  docs:
    type: uri_folder
    path: {input}
    mode: {mode}
jobs:
  score:
    type: parallel
    inputs:
      data: ${{{{parent.inputs.docs}}}}
    outputs:
      scored:
        type: uri_folder
        path: {output}
    input_data: ${{{{inputs.data}}}}
    mini_batch_size: "{size}"
    task:
      type: run_function
      code: ./src
      entry_script: score.py
      environment: azureml:env:1
      append_row_to: ${{{{outputs.scored}}}}
"""


def upload(container: Any, files: dict[str, str], prefix: str = "in/") -> None:
    for name, text in files.items():
        container.upload_blob(prefix + name, text.encode(), overwrite=True)


def write_local(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def write_job(folder: Path, *, input_uri: str, output_uri: str, mode: str = "ro_mount",
              size: int = 2, script: str = SCORE) -> Path:
    (folder / "src").mkdir(parents=True, exist_ok=True)
    (folder / "src" / "score.py").write_text(script)
    pipeline = folder / "pipeline.yml"
    pipeline.write_text(PIPELINE.format(input=input_uri, output=output_uri, mode=mode,
                                        size=size))
    return pipeline


def datastore_yaml(folder: Path, name: str, container: str, *,
                   account: str = "devstoreaccount1", credentials: str | None = "key") -> Path:
    text = (f"$schema: https://azuremlschemas.azureedge.net/latest/azureBlob.schema.json\n"
            f"name: {name}\ntype: azure_blob\naccount_name: {account}\n"
            f"container_name: {container}\n")
    if credentials == "key":
        text += f"credentials:\n  account_key: {KEY}\n"
    elif credentials is not None:
        text += f"credentials:\n  {credentials}\n"
    path = folder / f"{name}.yml"
    path.write_text(text)
    return path


def point_at(folder: Path, azurite: Azurite, *names: str, account: str = "devstoreaccount1",
             extra: str = "") -> None:
    """``mlpipe.toml`` saying where each datastore's account is: the emulator."""
    (folder / "mlpipe.toml").write_text("".join(
        f'[datastores.{name}]\naccount_url = "{azurite.url(account)}"\n{extra}'
        for name in names))


def register(folder: Path, runs: Path, name: str, container: str, **kwargs: Any) -> None:
    proc = run_cli("datastore", "create", "--file",
                   str(datastore_yaml(folder, name, container, **kwargs)),
                   env={"MLPIPE_RUNS_DIR": str(runs)})
    assert proc.returncode == 0, proc.stderr
    assert KEY not in proc.stdout + proc.stderr


def secrets_in(root: Path, secret: str) -> list[Path]:
    """Files below ``root`` holding ``secret``, but for the datastore credentials file."""
    return [path for path in root.rglob("*") if path.is_file()
            and path.name != "datastore_credentials.json"
            and secret.encode() in path.read_bytes()]
