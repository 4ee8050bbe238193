"""The dask backend's options: a scheduler named as Dask names it (address, scheduler file,
TLS settings), from a ``[dask]`` table, Python or ``$MLPIPE_DASK_SCHEDULER``; what cannot
be used is said with the file and the key."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import mlpipe
from mlpipe.runtime.backends.dask_options import (
    SCHEDULER_ENV,
    TOML_FILE,
    DaskOptions,
    DaskOptionsError,
    chosen_options,
)


def test_a_table_is_read_with_relative_files_from_its_folder(tmp_path: Path) -> None:
    options = DaskOptions.from_table({"scheduler_file": "cluster/scheduler.json",
                                      "tls_ca_file": "/etc/ca.pem", "require_encryption": True},
                                     "mlpipe.toml", tmp_path)
    assert options.scheduler_file == str(tmp_path / "cluster" / "scheduler.json")
    assert options.tls_ca_file == "/etc/ca.pem" and options.require_encryption


@pytest.mark.parametrize(("table", "message"), [
    ({"schedular": "tcp://h:8786"}, "[dask] schedular: not a setting of the dask backend"),
    ({"scheduler": 8786}, "[dask] scheduler: expected a string, got 8786"),
    ({"require_encryption": "yes"}, "[dask] require_encryption: expected true or false"),
])
def test_a_table_with_a_wrong_key_or_type_is_refused_naming_it(
        tmp_path: Path, table: dict[str, object], message: str) -> None:
    with pytest.raises(DaskOptionsError, match=message.replace("[", r"\[").replace("]", r"\]")):
        DaskOptions.from_table(table, "mlpipe.toml", tmp_path)
    if "schedular" in table:
        with pytest.raises(DaskOptionsError, match="did you mean 'scheduler'"):
            DaskOptions.from_table(table, "mlpipe.toml", tmp_path)


def test_the_address_comes_from_the_scheduler_or_its_file(tmp_path: Path) -> None:
    file = tmp_path / "scheduler.json"
    assert DaskOptions(scheduler="tcp://a:1").address() == "tcp://a:1"
    with pytest.raises(DaskOptionsError, match="no such file .*dask scheduler --scheduler-file"):
        DaskOptions(scheduler_file=str(file)).address()
    file.write_text("{", encoding="utf-8")  # the scheduler is writing it
    with pytest.raises(DaskOptionsError, match="no scheduler address in it"):
        DaskOptions(scheduler_file=str(file)).address()
    file.write_text(json.dumps({"address": "tls://b:2"}), encoding="utf-8")
    assert DaskOptions(scheduler_file=str(file)).address() == "tls://b:2"
    assert DaskOptions().address() is None  # a LocalCluster


def test_given_options_win_over_the_toml_which_wins_over_the_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SCHEDULER_ENV, "tcp://env:1")
    assert chosen_options(None, tmp_path).address() == "tcp://env:1"  # no mlpipe.toml
    (tmp_path / "mlpipe.toml").write_text('[assets]\n"x" = "./y"\n', encoding="utf-8")
    assert chosen_options(None, tmp_path).address() == "tcp://env:1"  # no [dask] table
    (tmp_path / "mlpipe.toml").write_text(
        '[dask]\nscheduler_file = "cluster.json"\ntls_ca_file = "ca.pem"\n', encoding="utf-8")
    from_toml = chosen_options(None, tmp_path)
    assert from_toml.scheduler is None  # the table's scheduler file replaces the variable
    assert from_toml.scheduler_file == str(tmp_path / "cluster.json")
    given = chosen_options(DaskOptions.given(scheduler="tcp://cli:2"), tmp_path)
    assert given.address() == "tcp://cli:2" and given.scheduler_file is None
    assert given.tls_ca_file == str(tmp_path / "ca.pem")  # the table's TLS settings still hold
    monkeypatch.delenv(SCHEDULER_ENV)
    assert chosen_options(None, None).address() is None  # a LocalCluster


@pytest.mark.parametrize(("text", "message"), [
    ("[dask]\nschedular = 'tcp://h:1'\n", r"mlpipe.toml \[dask\]: \[dask\] schedular: not a "
                                          r"setting.*did you mean 'scheduler'"),
    ("dask = 3\n", r"\[dask\] must be a table"),
    ("[dask\n", "cannot read it"),
])
def test_a_toml_that_cannot_be_used_is_refused_naming_the_file(
        tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "mlpipe.toml").write_text(text, encoding="utf-8")
    with pytest.raises(DaskOptionsError, match=message) as raised:
        chosen_options(None, tmp_path)
    assert str(tmp_path / "mlpipe.toml") in str(raised.value)


def test_the_dask_table_is_read_from_the_jobs_mlpipe_toml() -> None:
    from mlpipe.compiler.assets import ASSETS_FILE

    assert TOML_FILE == ASSETS_FILE  # the file the compiler reads [assets] and [datastores] from


def test_the_environment_variable_is_read_in_one_place() -> None:
    package = Path(mlpipe.__file__).parent
    readers = [path.relative_to(package).as_posix() for path in package.rglob("*.py")
               if re.search(r"environ(\.get)?[\[(]\s*(SCHEDULER_ENV|\"MLPIPE_DASK_SCHEDULER\")",
                            path.read_text(encoding="utf-8"))]
    assert readers == ["runtime/backends/dask_options.py"]
    source = (package / readers[0]).read_text(encoding="utf-8")
    assert len(re.findall(r"environ\.get\(SCHEDULER_ENV\)", source)) == 1


def test_tls_settings_are_dasks_security(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    assert DaskOptions(scheduler="tls://a:1").security() is None  # Dask's own configuration
    with pytest.raises(DaskOptionsError, match="tls_ca_file .*ca.pem: no such file"):
        DaskOptions(tls_ca_file=str(tmp_path / "ca.pem")).security()
    security = DaskOptions(require_encryption=True).security()
    assert security.require_encryption is True


@pytest.mark.slow
def test_a_job_names_its_cluster_by_option_or_mlpipe_toml(tmp_path: Path) -> None:
    """``--scheduler-file`` alone chooses the dask backend; ``[dask] scheduler`` in the job's
    mlpipe.toml names the cluster without the variable; the option wins over the table."""
    pytest.importorskip("distributed")
    import os
    import subprocess
    import sys

    from tests.runtime.backends.support import REPO, dask_processes, finish, pipeline_yaml

    project = tmp_path / "user"
    (project / "src").mkdir(parents=True)
    (project / "data").mkdir()
    (project / "src" / "score.py").write_text(
        "def run(mini_batch):\n    return list(mini_batch)\n", encoding="utf-8")
    (project / "data" / "f0.txt").write_text("x\n", encoding="utf-8")
    (project / "pipeline.yml").write_text(pipeline_yaml("score"), encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key != SCHEDULER_ENV}
    env["PYTHONPATH"] = str(REPO)

    def job(name: str, *options: str) -> str:
        return finish(subprocess.Popen(
            [sys.executable, "-m", "mlpipe", "job", "create", "-f", "pipeline.yml", "-n", name,
             "--runs-dir", str(tmp_path / "runs"), "--no-progress", *options],
            cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))

    with dask_processes(tmp_path / "cluster") as cluster:
        cluster.add_workers(1, nanny=False)
        at = f"(the scheduler at {cluster.address}, 1 worker;"
        out = job("by-file", "--scheduler-file", str(tmp_path / "cluster" / "scheduler.json"))
        assert "job by-file: completed" in out and at in out, out
        (project / "mlpipe.toml").write_text(f'[dask]\nscheduler = "{cluster.address}"\n',
                                             encoding="utf-8")
        out = job("by-toml", "--backend", "dask")
        assert "job by-toml: completed" in out and at in out, out
        (project / "mlpipe.toml").write_text('[dask]\nscheduler = "tcp://127.0.0.1:9"\n',
                                             encoding="utf-8")
        out = job("option-wins", "--scheduler", cluster.address)
        assert "job option-wins: completed" in out and at in out, out
    out = job("unreachable", "--backend", "dask")  # the table's scheduler, gone: said, no hang
    assert "job unreachable: completed" not in out and "tcp://127.0.0.1:9" in out, out
    (project / "mlpipe.toml").write_text('[dask]\nschedular = "tcp://h:1"\n', encoding="utf-8")
    out = job("typo", "--backend", "dask")
    assert "[dask] schedular: not a setting of the dask backend" in out, out
    assert "did you mean 'scheduler'" in out and "Traceback" not in out
