"""Registered datastores: the secret lives in its own 0600 file, nowhere else."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from mlpipe.data.cloud.store import DatastoreInfo, DatastoreStore

SECRET = "c2VjcmV0LWtleS1mb3ItdGVzdHM="


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_secret_is_kept_apart_in_a_file_only_its_owner_reads(tmp_path: Path) -> None:
    old = os.umask(0)  # even a permissive umask gives the credentials file 0600
    try:
        store = DatastoreStore(tmp_path)
        store.register(DatastoreInfo("blobs", "azure_blob", "acct", "data"),
                       ("account_key", SECRET))
    finally:
        os.umask(old)
    assert store.credentials_path.name == "datastore_credentials.json"
    assert _mode(store.credentials_path) == 0o600
    assert SECRET not in store.path.read_text()
    assert store.get("blobs") == DatastoreInfo("blobs", "azure_blob", "acct", "data",
                                               credential="account_key")
    assert store.secret("blobs") == ("account_key", SECRET)
    assert SECRET not in repr(store.get("blobs"))


def test_registering_again_without_a_secret_forgets_the_old_one(tmp_path: Path) -> None:
    store = DatastoreStore(tmp_path)
    store.register(DatastoreInfo("blobs", "azure_blob", "acct", "data"), ("sas_token", "sv=1"))
    store.register(DatastoreInfo("blobs", "azure_blob", "acct", "data2"), None)
    assert store.secret("blobs") is None
    assert store.get("blobs").container_name == "data2"
    assert "sv=1" not in store.credentials_path.read_text()
    assert _mode(store.credentials_path) == 0o600


def test_delete_forgets_the_datastore_and_its_secret(tmp_path: Path) -> None:
    store = DatastoreStore(tmp_path)
    store.register(DatastoreInfo("a", "azure_blob", "acct", "c"), ("account_key", SECRET))
    assert store.delete("a") and not store.delete("a")
    assert store.get("a") is None and store.secret("a") is None
    assert store.list() == []


def test_the_account_url_follows_endpoint_and_protocol() -> None:
    info = DatastoreInfo("a", "azure_data_lake_gen2", "acct", "fs",
                         endpoint="core.chinacloudapi.cn", protocol="https")
    assert info.account_url == "https://acct.blob.core.chinacloudapi.cn"
