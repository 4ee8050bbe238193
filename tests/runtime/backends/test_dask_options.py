"""The dask backend's options: a scheduler named as Dask names it (address, scheduler file,
TLS settings), from a ``[dask]`` table, Python or ``$MLPIPE_DASK_SCHEDULER``; what cannot
be used is said with the file and the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlpipe.runtime.backends.dask_options import SCHEDULER_ENV, DaskOptions, DaskOptionsError


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


def test_given_options_win_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SCHEDULER_ENV, "tcp://env:1")
    default = DaskOptions.from_environment()
    assert DaskOptions().over(default).address() == "tcp://env:1"
    assert DaskOptions(scheduler="tcp://cli:2").over(default).address() == "tcp://cli:2"
    given_file = DaskOptions(scheduler_file="/x.json").over(default)
    assert given_file.scheduler is None and given_file.scheduler_file == "/x.json"


def test_tls_settings_are_dasks_security(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    assert DaskOptions(scheduler="tls://a:1").security() is None  # Dask's own configuration
    with pytest.raises(DaskOptionsError, match="tls_ca_file .*ca.pem: no such file"):
        DaskOptions(tls_ca_file=str(tmp_path / "ca.pem")).security()
    security = DaskOptions(require_encryption=True).security()
    assert security.require_encryption is True
