"""How a storage account is reached: its URL and a credential, resolved once on the driver
and handed whole to whoever reads or writes (a local worker, a Dask worker).

The credential order (docs/data.md):

1. ``mlpipe.toml`` ``[datastores.<name>]`` ``account_key_env`` / ``sas_token_env``: the
   environment variable it names (it must be set);
2. the secret the datastore was registered with (``mlpipe datastore create``,
   ``ml_client.datastores.create_or_update``, v1 ``Datastore.register_*``), kept in the runs
   folder's ``assets/datastore_credentials.json`` (mode 0600);
3. none: a container no datastore names (``CloudLocation.public``) is read anonymously, as
   Azure reads a public container; else ``azure.identity.DefaultAzureCredential``
   (``az login``, a managed identity, the ``AZURE_*`` variables) for an ``https`` account;
   an ``http`` endpoint (an emulator such as Azurite) is read anonymously (a public
   container), as tokens need TLS.

:class:`StorageAccess` holds the secret in memory only: its ``repr`` and every message
made from it leave the secret out.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from mlpipe.data.cloud.store import secret_in
from mlpipe.data.errors import DataError
from mlpipe.plan import CloudLocation

if TYPE_CHECKING:  # the azure packages load only where cloud data is used
    from azure.storage.blob import BlobServiceClient

CredentialKind = Literal["account_key", "sas_token", "identity", "anonymous"]
INSTALL_HINT = "install mlpipe's azure extra: pip install 'mlpipe-azure[azure]'"
# The probe before a job gives up at once on an unreachable account (no retries).
PROBE_TIMEOUTS = {"retry_total": 0, "connection_timeout": 5, "read_timeout": 20}


@dataclass(frozen=True)
class StorageAccess:
    """An account's blob endpoint and the credential to use there (see the module doc).

    ``source`` says where the credential came from (``$VAR``, ``the datastore's registered
    account key``, ``DefaultAzureCredential``), for messages; ``secret`` is never shown.
    """

    account_url: str
    account_name: str
    credential: CredentialKind
    source: str
    secret: str | None = field(default=None, repr=False, compare=True)

    def __repr__(self) -> str:
        return (f"StorageAccess({self.account_url!r}, {self.credential}, "
                f"from {self.source})")

    def connection_string(self) -> str | None:
        """The storage SDK's connection string for a key, a SAS token or anonymous access
        (``None``: a token credential, which has none)."""
        endpoint = f"BlobEndpoint={self.account_url.rstrip('/')}/;"
        if self.credential == "account_key":
            protocol = urlsplit(self.account_url).scheme or "https"
            return (f"DefaultEndpointsProtocol={protocol};AccountName={self.account_name};"
                    f"AccountKey={self.secret};{endpoint}")
        if self.credential == "sas_token":
            return f"{endpoint}SharedAccessSignature={(self.secret or '').lstrip('?')}"
        if self.credential == "anonymous":
            return endpoint
        return None

    def service_client(self, **options: Any) -> BlobServiceClient:
        """A (synchronous) storage SDK client of the account: listing and probing."""
        blob = _storage_sdk()
        text = self.connection_string()
        client: BlobServiceClient
        if text is not None:
            client = blob.BlobServiceClient.from_connection_string(text, **options)
            return client
        from azure.identity import DefaultAzureCredential  # noqa: PLC0415

        client = blob.BlobServiceClient(self.account_url, credential=DefaultAzureCredential(),
                                        **options)
        return client

    def filesystem(self) -> Any:
        """The fsspec file system (adlfs) of the account: reads and writes of blobs."""
        try:
            from adlfs import AzureBlobFileSystem  # noqa: PLC0415
        except ImportError as error:
            raise DataError(f"reading cloud storage needs adlfs: {INSTALL_HINT}",
                            code="cloud-data") from error
        text = self.connection_string()
        if text is not None:
            return AzureBlobFileSystem(connection_string=text, anon=self.credential ==
                                       "anonymous", account_name=self.account_name)
        host = self.account_url.split("://", 1)[-1].rstrip("/")
        return AzureBlobFileSystem(account_name=self.account_name, account_host=host,
                                   anon=False)

    def scrub(self, text: str) -> str:
        """``text`` with the secret (and a SAS signature) taken out."""
        if self.secret:
            text = text.replace(self.secret, "***").replace(self.secret.lstrip("?"), "***")
        return text


def access_for(location: CloudLocation) -> StorageAccess:
    """The account URL and credential for ``location``, in the order of the module doc;
    :class:`DataError` when the variable ``mlpipe.toml`` names is not set."""
    url, account = location.account_url, location.account_name
    name = location.datastore or account
    if location.secret_env is not None:
        kind, variable = location.secret_env
        value = os.environ.get(variable)
        if not value:
            raise DataError(f"{location.uri}: environment variable {variable} is not set "
                            f"(mlpipe.toml [datastores.{name}] {kind}_env names it)",
                            code="cloud-credentials",
                            hint=f"export {variable}=<the {kind.replace('_', ' ')}>")
        return StorageAccess(url, account, kind, f"${variable}",  # type: ignore[arg-type]
                             value)
    registered = _registered_secret(location)
    if registered is not None:
        kind, value = registered
        return StorageAccess(url, account, kind,  # type: ignore[arg-type]
                             f"datastore {name}'s registered {kind.replace('_', ' ')}", value)
    if location.public:
        return StorageAccess(url, account, "anonymous", "anonymous access (no datastore)")
    if urlsplit(url).scheme == "http":
        return StorageAccess(url, account, "anonymous", "anonymous access (http endpoint)")
    return StorageAccess(url, account, "identity", "DefaultAzureCredential")


def _registered_secret(location: CloudLocation) -> tuple[str, str] | None:
    if location.credentials_file is None or location.datastore is None:
        return None
    return secret_in(location.credentials_file, location.datastore)


def _storage_sdk() -> Any:
    try:
        import azure.storage.blob as blob  # noqa: PLC0415
    except ImportError as error:
        raise DataError(f"reading cloud storage needs azure-storage-blob: {INSTALL_HINT}",
                        code="cloud-data") from error
    return blob


__all__ = ["PROBE_TIMEOUTS", "CredentialKind", "StorageAccess", "access_for"]
