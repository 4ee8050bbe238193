"""Datastores as azure-ai-ml has them: ``AzureBlobDatastore``, ``AzureDataLakeGen2Datastore``,
their credential configurations, ``load_datastore`` for Azure's datastore YAML, and
``ml_client.datastores`` (:class:`DatastoreOperations`) over the runs folder's store.

A registered datastore makes its URIs readable: ``azureml://datastores/<name>/paths/...``
and the ``wasbs://``, ``abfss://`` and ``https://`` URIs of its account and container are
read from (and outputs there uploaded to) the storage account (docs/data.md). Its secret
(an account key or SAS token) goes to the store's credentials file alone; ``get`` and
``list`` give the datastore without it, as azure-ai-ml does.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mlpipe.data.cloud.store import DatastoreInfo, DatastoreStore
from mlpipe.data.cloud.uris import DEFAULT_SUFFIX
from mlpipe.diagnostics import Diagnostic, ValidationError, did_you_mean
from mlpipe.runs import resolve_runs_dir
from mlpipe.sdk.assets import Resource
from mlpipe.sdk.exceptions import ResourceNotFoundError


class AccountKeyConfiguration(Resource):
    """``azure.ai.ml.entities.AccountKeyConfiguration``."""

    _fields = ("account_key",)

    def __init__(self, *, account_key: str | None = None, **kwargs: Any) -> None:
        self._set({"account_key": account_key}, kwargs)

    def __repr__(self) -> str:  # never shows the key
        return "AccountKeyConfiguration(account_key=***)"


class SasTokenConfiguration(Resource):
    """``azure.ai.ml.entities.SasTokenConfiguration``."""

    _fields = ("sas_token",)

    def __init__(self, *, sas_token: str | None = None, **kwargs: Any) -> None:
        self._set({"sas_token": sas_token}, kwargs)

    def __repr__(self) -> str:
        return "SasTokenConfiguration(sas_token=***)"


class NoneCredentialConfiguration(Resource):
    """``azure.ai.ml.entities.NoneCredentialConfiguration``: identity-based access."""

    def __init__(self, **kwargs: Any) -> None:
        self._set({}, kwargs)


_BLOB_TYPE = "azure_blob"
_GEN2_TYPE = "azure_data_lake_gen2"


class _Datastore(Resource):
    name: str
    type: str
    account_name: str
    endpoint: str
    protocol: str
    description: str | None
    tags: dict[str, str] | None
    credentials: Any
    _type = _BLOB_TYPE
    _container_field = "container_name"
    _fields = ("name", "type", "description", "tags", "account_name", "container_name",
               "endpoint", "protocol", "credentials")

    def __init__(self, *, name: str, account_name: str, container: str | None,
                 description: str | None = None, tags: dict[str, str] | None = None,
                 endpoint: str | None = None, protocol: str | None = None,
                 credentials: Any = None, **kwargs: Any) -> None:
        values = {"name": name, "type": self._type, "description": description, "tags": tags,
                  "account_name": account_name, self._container_field: container,
                  "endpoint": endpoint or DEFAULT_SUFFIX, "protocol": protocol or "https",
                  "credentials": credentials}
        self._set(values, kwargs)

    @property
    def container(self) -> str:
        return str(getattr(self, self._container_field))

    def _to_dict(self) -> dict[str, Any]:
        data = super()._to_dict()
        data.pop("credentials", None)  # printed without the secret
        return data


class AzureBlobDatastore(_Datastore):
    """``azure.ai.ml.entities.AzureBlobDatastore``."""

    def __init__(self, *, name: str, account_name: str, container_name: str,
                 **kwargs: Any) -> None:
        super().__init__(name=name, account_name=account_name, container=container_name,
                         **kwargs)


class AzureDataLakeGen2Datastore(_Datastore):
    """``azure.ai.ml.entities.AzureDataLakeGen2Datastore`` (read through the account's blob
    endpoint)."""

    _type = _GEN2_TYPE
    _container_field = "filesystem"
    _fields = ("name", "type", "description", "tags", "account_name", "filesystem",
               "endpoint", "protocol", "credentials")

    def __init__(self, *, name: str, account_name: str, filesystem: str, **kwargs: Any) -> None:
        super().__init__(name=name, account_name=account_name, container=filesystem, **kwargs)


def secret_of(credentials: Any) -> tuple[str, str] | None:
    """``(account_key | sas_token, value)`` of a credential configuration (or its YAML
    mapping); ``None`` for identity-based access."""
    if credentials is None:
        return None
    values = credentials if isinstance(credentials, dict) else vars(credentials)
    for kind in ("account_key", "sas_token"):
        value = values.get(kind)
        if isinstance(value, str) and value:
            return kind, value
    return None


def _info(datastore: _Datastore) -> tuple[DatastoreInfo, tuple[str, str] | None]:
    credentials = datastore.credentials
    if credentials is not None and not isinstance(credentials, (
            AccountKeyConfiguration, SasTokenConfiguration, NoneCredentialConfiguration, dict)):
        raise ValueError(f"datastore {datastore.name}: {type(credentials).__name__} credentials "
                         "are not available here; use an account key, a SAS token or none "
                         "(DefaultAzureCredential)")
    info = DatastoreInfo(name=datastore.name, type=datastore.type,  # type: ignore[arg-type]
                         account_name=datastore.account_name, container_name=datastore.container,
                         endpoint=datastore.endpoint, protocol=datastore.protocol,
                         description=datastore.description, tags=dict(datastore.tags or {}))
    return info, secret_of(credentials)


def from_info(info: DatastoreInfo) -> _Datastore:
    """The entity of a registered datastore, without its secret (as ``get`` returns it)."""
    common: dict[str, Any] = {"name": info.name, "account_name": info.account_name,
              "description": info.description, "tags": info.tags, "endpoint": info.endpoint,
              "protocol": info.protocol,
              "credentials": {"account_key": AccountKeyConfiguration(),
                              "sas_token": SasTokenConfiguration()}.get(info.credential or "")}
    if info.type == _GEN2_TYPE:
        return AzureDataLakeGen2Datastore(filesystem=info.container_name, **common)
    return AzureBlobDatastore(container_name=info.container_name, **common)


# -- Azure's datastore YAML -------------------------------------------------------------------

_KEYS = {_BLOB_TYPE: ("$schema", "name", "type", "description", "tags", "account_name",
                      "container_name", "endpoint", "protocol", "credentials", "properties"),
         _GEN2_TYPE: ("$schema", "name", "type", "description", "tags", "account_name",
                      "filesystem", "endpoint", "protocol", "credentials", "properties")}
_OTHER_TYPES = ("azure_file", "azure_data_lake_gen1", "one_lake")


def load_datastore(source: str | os.PathLike[str], **kwargs: Any) -> _Datastore:
    """A datastore from Azure's datastore YAML (``type: azure_blob`` or
    ``azure_data_lake_gen2``); :class:`ValidationError` naming the file, line and key of each
    problem (never the secret)."""
    from mlpipe.schema import load_yaml_file  # noqa: PLC0415

    document = load_yaml_file(str(source))
    data = document.data
    problems = [d for d in document.diagnostics if d.severity == "error"]

    def problem(path: tuple[str, ...], message: str, hint: str | None = None) -> None:
        problems.append(Diagnostic(message, ".".join(path), document.positions.locate(path),
                                   code="datastore", hint=hint))

    if not problems and not isinstance(data, dict):
        problem((), "a datastore file is a mapping (name, type, account_name, ...)")
    if problems:
        raise ValidationError(problems)
    assert isinstance(data, dict)
    for override in kwargs.get("params_override") or []:
        data.update(override)
    kind = data.get("type", _BLOB_TYPE)
    if kind not in _KEYS:
        problem(("type",), f"type {kind!r} cannot be read here: mlpipe reads azure_blob and "
                           "azure_data_lake_gen2 datastores" if kind in _OTHER_TYPES else
                f"unknown datastore type {kind!r} (azure_blob, azure_data_lake_gen2)",
                did_you_mean(str(kind), list(_KEYS)))
        raise ValidationError(problems)
    for key in data:
        if key not in _KEYS[kind]:
            problem((str(key),), f"unknown key {key!r} for a {kind} datastore",
                    did_you_mean(str(key), _KEYS[kind]))
    container_key = "filesystem" if kind == _GEN2_TYPE else "container_name"
    for key in ("name", "account_name", container_key):
        if not isinstance(data.get(key), str) or not data[key].strip():
            problem((key,) if key in data else (), f"'{key}' is required (text)")
    credentials = data.get("credentials")
    if credentials is not None:
        if not isinstance(credentials, dict):
            problem(("credentials",), "credentials is a mapping: account_key or sas_token")
        else:
            known = ("account_key", "sas_token")
            for key in credentials:
                if key in ("tenant_id", "client_id", "client_secret", "authority_url",
                           "resource_url"):
                    problem(("credentials", str(key)), "service principal credentials cannot be "
                            "used here", "use an account key, a SAS token, or none "
                            "(DefaultAzureCredential: az login)")
                elif key not in known:
                    problem(("credentials", str(key)), f"unknown credential {key!r}",
                            did_you_mean(str(key), known))
            if sum(1 for key in known if key in credentials) > 1:
                problem(("credentials",), "give one of account_key and sas_token")
    if problems:
        raise ValidationError(problems)
    fields = {k: v for k, v in data.items() if k in ("name", "description", "tags",
                                                     "account_name", "endpoint", "protocol")}
    creds: Resource | None = None
    if isinstance(credentials, dict) and credentials.get("account_key"):
        creds = AccountKeyConfiguration(account_key=str(credentials["account_key"]))
    elif isinstance(credentials, dict) and credentials.get("sas_token"):
        creds = SasTokenConfiguration(sas_token=str(credentials["sas_token"]))
    if kind == _GEN2_TYPE:
        return AzureDataLakeGen2Datastore(filesystem=data["filesystem"], credentials=creds,
                                          **fields)
    return AzureBlobDatastore(container_name=data["container_name"], credentials=creds, **fields)


# -- ml_client.datastores ---------------------------------------------------------------------

class DatastoreNotFoundError(ResourceNotFoundError):
    """No datastore of that name is registered."""


class DatastoreOperations:
    """``ml_client.datastores``: datastores registered in the runs folder."""

    def __init__(self, runs_dir: str | Path | None = None) -> None:
        self._runs_dir = runs_dir

    @property
    def _store(self) -> DatastoreStore:
        return DatastoreStore(resolve_runs_dir(self._runs_dir))

    def create_or_update(self, datastore: Any, **kwargs: Any) -> Any:
        """Register ``datastore`` (its secret in the store's credentials file); returns it
        as ``get`` does, without the secret."""
        if not isinstance(datastore, _Datastore):
            raise TypeError("ml_client.datastores.create_or_update() takes an AzureBlobDatastore "
                            f"or AzureDataLakeGen2Datastore, got {type(datastore).__name__}")
        info, secret = _info(datastore)
        self._store.register(info, secret)
        return from_info(info if secret is None else DatastoreInfo(
            **{**info.to_dict(), "credential": secret[0]}))

    def get(self, name: str, **kwargs: Any) -> Any:
        info = self._store.get(name)
        if info is None:
            names = [found.name for found in self._store.list()]
            raise DatastoreNotFoundError(
                f"no datastore named {name!r} is registered in {self._store.path}"
                + (f" (registered: {', '.join(names)})" if names else "")
                + (f"; {did_you_mean(name, names)}" if did_you_mean(name, names) else ""))
        return from_info(info)

    def get_default(self, **kwargs: Any) -> Any:
        return self.get("workspaceblobstore")

    def list(self, **kwargs: Any) -> list[Any]:
        return [from_info(info) for info in self._store.list()]

    def delete(self, name: str, **kwargs: Any) -> None:
        if not self._store.delete(name):
            raise DatastoreNotFoundError(f"no datastore named {name!r} is registered")


__all__ = ["AccountKeyConfiguration", "AzureBlobDatastore", "AzureDataLakeGen2Datastore",
           "DatastoreNotFoundError", "DatastoreOperations", "NoneCredentialConfiguration",
           "SasTokenConfiguration", "from_info", "load_datastore", "secret_of"]
