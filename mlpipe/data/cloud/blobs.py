"""Listing a blob folder (paged, streamed, in the local listing's order) and probing a
location before a job starts, with storage errors worded without any secret."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mlpipe.data.cloud.access import PROBE_TIMEOUTS, StorageAccess
from mlpipe.data.cloud.store import register_hint
from mlpipe.data.listing import MLTABLE_FILE, SORT_LIMIT
from mlpipe.plan import CloudLocation

PAGE = 5000  # blobs per listing request (the service's maximum)


@dataclass(frozen=True)
class BlobEntry:
    """A blob below a listed folder: its name relative to the folder, size and etag."""

    name: str
    size: int
    etag: str


def iter_blobs(access: StorageAccess, container: str, prefix: str, *,
               sort_limit: int = SORT_LIMIT, every: bool = False) -> Iterator[BlobEntry]:
    """Every blob below ``prefix`` (a folder) in the order :func:`mlpipe.data.listing.iter_files`
    lists the same files on disk: depth-first, each folder's names sorted by code point (a
    sub-folder's blobs where its name sorts), or in the service's order past ``sort_limit``
    entries; names beginning with ``.`` and a top-level ``MLTable`` are left out (``every``:
    kept, for a copy of the folder). Pages of :data:`PAGE` blobs are requested as the
    iteration needs them."""
    client = access.service_client().get_container_client(container)
    root = f"{prefix.strip('/')}/" if prefix.strip("/") else ""
    yield from _walk(client, root, len(root), sort_limit, every)


# A listed entry: (name in its folder, full name, size, etag, is a folder); a plain tuple, as
# up to SORT_LIMIT of them are held while a folder's names are sorted
_Item = tuple[str, str, int, str, bool]


def _items(client: Any, folder: str, every: bool) -> Iterator[_Item]:
    """A folder's visible entries as the service pages them (hidden names, empty names and
    ADLS Gen2 folder markers left out)."""
    for item in client.walk_blobs(name_starts_with=folder, delimiter="/", include=["metadata"],
                                  results_per_page=PAGE):
        name = item.name[len(folder):].rstrip("/")
        if not name or (name.startswith(".") and not every):
            continue
        if item.name.endswith("/"):
            yield name, item.name, 0, "", True
        elif not _is_folder_marker(item):
            yield name, item.name, int(item.size or 0), str(item.etag or ""), False


def _walk(client: Any, folder: str, cut: int, sort_limit: int,
          every: bool) -> Iterator[BlobEntry]:
    items = _items(client, folder, every)
    buffered: list[_Item] = []
    for item in items:
        buffered.append(item)
        if len(buffered) >= sort_limit:
            break
    else:
        buffered.sort(key=lambda entry: entry[0])
        for item in buffered:
            yield from _entry(client, folder, item, cut, sort_limit, every)
        return
    for item in buffered:  # a large folder: the service's order, as it comes
        yield from _entry(client, folder, item, cut, sort_limit, every)
    del buffered
    for item in items:
        yield from _entry(client, folder, item, cut, sort_limit, every)


def _entry(client: Any, folder: str, item: _Item, cut: int, sort_limit: int,
           every: bool) -> Iterator[BlobEntry]:
    name, full, size, etag, is_folder = item
    if is_folder:
        yield from _walk(client, full, cut, sort_limit, every)
    elif every or not (len(folder) == cut and name == MLTABLE_FILE):
        yield BlobEntry(full[cut:], size, etag)


def _is_folder_marker(item: Any) -> bool:
    """An ADLS Gen2 directory seen through the blob API: an empty blob marked as a folder."""
    metadata = getattr(item, "metadata", None) or {}
    return not item.size and str(metadata.get("hdi_isfolder", "")).lower() == "true"


def blob_properties(access: StorageAccess, container: str, name: str) -> BlobEntry:
    """Size and etag of one blob (storage errors propagate)."""
    props = access.service_client().get_blob_client(container, name).get_blob_properties()
    return BlobEntry(name, int(props.size or 0), str(props.etag or ""))


@dataclass(frozen=True)
class Problem:
    """Why a location cannot be used, and what to do about it (no secret in either)."""

    message: str
    fix: str


def probe(location: CloudLocation, access: StorageAccess, want: str) -> Problem | None:
    """Why ``location`` cannot be used (``None``: it can). ``want`` is ``file`` (one blob
    must be there), ``folder`` (a blob must be below it) or ``container`` (an output's: the
    container must be there). One request, no retries."""
    client = access.service_client(**PROBE_TIMEOUTS).get_container_client(location.container)
    try:
        if want == "file":
            client.get_blob_client(location.path).get_blob_properties()
            return None
        prefix = f"{location.path}/" if want == "folder" and location.path else ""
        page = next(iter(client.list_blobs(name_starts_with=prefix, results_per_page=1)
                         .by_page()), None)
        if want == "folder" and not list(page or []):
            return Problem(f"no blob below '{location.path or '/'}' in container "
                           f"'{location.container}'", "check the path: the folder is empty "
                           "or does not exist")
        return None
    except Exception as error:  # noqa: BLE001 - worded by kind below
        return describe_error(error, location, access)


def describe_error(error: BaseException, location: CloudLocation,
                   access: StorageAccess) -> Problem:
    """A storage error in one line and its fix: what went wrong where, never the secret or
    the service's own text (which may carry a signed URL)."""
    raw = getattr(error, "error_code", "") or ""
    code = str(getattr(raw, "value", raw))  # the SDK's StorageErrorCode, or its text
    status = getattr(error, "status_code", None)
    kind = type(error).__name__
    if location.public and status is not None:
        return _not_public(location, code, status)
    name = location.datastore or location.account_name
    fix_store = (f"register datastore '{name}' again with the right credential (mlpipe "
                 f"datastore create --file {name}.yml)")
    if access.source.startswith("$"):
        fix_store = f"set {access.source} to the right {access.credential.replace('_', ' ')}"
    if status is None and kind in ("ServiceRequestError", "ServiceRequestTimeoutError",
                                   "ConnectionError", "ClientConnectorError"):
        where = (f'an mlpipe.toml entry [datastores.<name>] account_name = '
                 f'"{location.account_name}", account_url = "..."' if location.public else
                 f"[datastores.{name}] account_url in mlpipe.toml, or the datastore's "
                 "endpoint and protocol")
        return Problem(f"cannot reach the storage account at {location.account_url}",
                       f"check the account's URL ({where}) and the network")
    if status is None and kind in ("ClientAuthenticationError", "CredentialUnavailableError"):
        return Problem(f"no credential for account '{location.account_name}': "
                       f"{access.source} found none",
                       "run az login, or register the datastore with an account key or SAS "
                       f"token, or name a variable in mlpipe.toml [datastores.{name}] "
                       "account_key_env")
    if code == "ContainerNotFound":
        return Problem(f"container '{location.container}' does not exist in account "
                       f"'{location.account_name}'",
                       f"create the container, or fix datastore '{name}''s container_name")
    if code in ("BlobNotFound", "ResourceNotFound") or status == 404:
        return Problem(f"no blob '{location.path}' in container '{location.container}'",
                       "check the path (a folder is a uri_folder input)")
    if code in ("AuthenticationFailed", "AuthorizationFailure", "InvalidAuthenticationInfo",
                "NoAuthenticationInformation", "AuthorizationPermissionMismatch") \
            or status in (401, 403):
        return Problem(f"account '{location.account_name}' refused {access.source} "
                       f"({code or status})", fix_store)
    return Problem(f"storage error {code or kind}{f' (HTTP {status})' if status else ''}",
                   "try again; if it persists, check the account")


def _not_public(location: CloudLocation, code: str, status: int) -> Problem:
    """Why a container no datastore names cannot be read anonymously, told apart by the
    service's answer (Azure answers an anonymous request for a private container 404
    ``ResourceNotFound``, as for one that does not exist; a firewall or Azurite 403
    ``AuthorizationFailure``; an account that forbids public access 409
    ``PublicAccessNotPermitted``)."""
    answer = f"HTTP {status}{f' {code}' if code else ''}"
    where = f"container '{location.container}' of account '{location.account_name}'"
    register = register_hint(location.account_name, location.container)
    if code == "BlobNotFound" or (code == "" and status == 404 and location.path):
        return Problem(f"no blob '{location.path}' in the public {where}",
                       "check the path (a folder is a uri_folder input)")
    if code == "ContainerNotFound":
        return Problem(f"{where} does not exist", f"check the URL, or {register}")
    if code == "PublicAccessNotPermitted" or status == 409:
        return Problem(f"account '{location.account_name}' allows no anonymous access "
                       f"({answer}) and no datastore names {where}", register)
    if status == 404:
        return Problem(f"{where} cannot be read anonymously ({answer}: a private container, "
                       "or none of that name) and no datastore names it", register)
    if status in (401, 403):
        return Problem(f"{where} is not public ({answer}: the account refused an anonymous "
                       "request) and no datastore names it", register)
    return Problem(f"storage error {code or status} (HTTP {status}) reading the {where} "
                   "anonymously", f"try again; if it persists, {register}")


__all__ = ["PAGE", "BlobEntry", "Problem", "blob_properties", "describe_error", "iter_blobs",
           "probe"]
