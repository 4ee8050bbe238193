"""Every cloud URI form Azure ML accepts reads into the same parts."""

from __future__ import annotations

import pytest

from mlpipe.data.cloud.uris import CloudUri, parse_cloud_uri


@pytest.mark.parametrize(("text", "expected"), [
    ("azureml://datastores/blobs/paths/in/", ("blobs", None, None, "in")),
    ("azureml://datastores/blobs/paths/a/b.csv", ("blobs", None, None, "a/b.csv")),
    ("azureml://datastores/blobs/paths/", ("blobs", None, None, "")),
    ("azureml://subscriptions/s-1/resourcegroups/rg/workspaces/ws/datastores/blobs/paths/in/x",
     ("blobs", None, None, "in/x")),
    ("azureml://subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/"
     "workspaces/ws/datastores/ds2/paths/p", ("ds2", None, None, "p")),
    ("wasbs://data@acct.blob.core.windows.net/in/doc.txt", (None, "acct", "data", "in/doc.txt")),
    ("wasb://data@acct.blob.core.windows.net", (None, "acct", "data", "")),
    ("abfss://fs@Acct.dfs.core.windows.net/a//b/", (None, "acct", "fs", "a/b")),
    ("https://acct.blob.core.windows.net/data/in/doc%201.txt",
     (None, "acct", "data", "in/doc 1.txt")),
    ("https://acct.dfs.core.chinacloudapi.cn/fs/x", (None, "acct", "fs", "x")),
])
def test_each_form_gives_its_parts(text: str, expected: tuple) -> None:
    uri = parse_cloud_uri(text)
    assert isinstance(uri, CloudUri)
    assert (uri.datastore, uri.account, uri.container, uri.path) == expected


@pytest.mark.parametrize("text", ["./data", "azureml:iris:1", "https://example.com/data.csv",
                                  "azureml://registries/azureml/components/x/labels/latest",
                                  "s3://bucket/key", "https://acct.blob.core.windows.net"])
def test_other_references_are_no_cloud_uris(text: str) -> None:
    assert parse_cloud_uri(text) is None


def test_a_sovereign_cloud_keeps_its_endpoint_suffix() -> None:
    uri = parse_cloud_uri("wasbs://c@acct.blob.core.usgovcloudapi.net/p")
    assert uri is not None and uri.suffix == "core.usgovcloudapi.net"
