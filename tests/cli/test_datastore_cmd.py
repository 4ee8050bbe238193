"""``mlpipe datastore create|show|list|delete``: Azure's datastore YAML registered, its
secret never printed, a bad file named at its line."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from tests.conftest import run_cli

KEY = "c2VjcmV0LWtleS1mb3ItdGhlLWNsaS10ZXN0cw=="
GOOD = f"""\
$schema: https://azuremlschemas.azureedge.net/latest/azureBlob.schema.json
name: blobs
type: azure_blob
description: the team's data
account_name: acct
container_name: data
credentials:
  account_key: {KEY}
"""


def _cli(runs: Path, *args: str):
    return run_cli("datastore", *args, env={"MLPIPE_RUNS_DIR": str(runs)})


def test_create_show_list_delete_never_print_the_secret(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    (tmp_path / "ds.yml").write_text(GOOD)
    created = _cli(runs, "create", "--file", str(tmp_path / "ds.yml"))
    assert created.returncode == 0, created.stderr
    assert created.stdout.startswith("registered datastore blobs (azure_blob: account acct, "
                                     "container data, credentials: account_key)")
    shown = _cli(runs, "show", "-n", "blobs", "-o", "json")
    assert json.loads(shown.stdout)["credentials"] == {"type": "account_key"}
    assert json.loads(shown.stdout)["container_name"] == "data"
    listed = _cli(runs, "list", "--query", "[].name", "-o", "tsv")
    assert listed.stdout.split() == ["blobs"]
    secret_file = runs / "assets" / "datastore_credentials.json"
    assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600
    for proc in (created, shown, listed):
        assert KEY not in proc.stdout + proc.stderr
    assert [p.name for p in runs.rglob("*") if p.is_file() and KEY in p.read_text()] == \
        ["datastore_credentials.json"]
    assert _cli(runs, "delete", "blobs").returncode == 0
    assert _cli(runs, "show", "blobs").returncode == 1
    assert KEY not in secret_file.read_text()


def test_a_bad_datastore_file_is_named_at_its_lines(tmp_path: Path) -> None:
    (tmp_path / "ds.yml").write_text(GOOD.replace("container_name: data\n", "containr: data\n")
                                     .replace(f"account_key: {KEY}",
                                              f"client_secret: {KEY}"))
    proc = _cli(tmp_path / "runs", "create", "--file", str(tmp_path / "ds.yml"))
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert any(line.startswith(f"{tmp_path / 'ds.yml'}:6:1: containr: unknown key 'containr'")
               and "container_name" in line for line in lines), proc.stderr
    assert any(":8:3: credentials.client_secret: service principal credentials cannot be used "
               "here" in line for line in lines), proc.stderr
    assert any("'container_name' is required" in line for line in lines), proc.stderr
    assert KEY not in proc.stderr
    assert not (tmp_path / "runs" / "assets").exists()


def test_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    proc = _cli(tmp_path, "create", "--file", str(tmp_path / "nope.yml"))
    assert proc.returncode == 2 and "no such file" in proc.stderr
