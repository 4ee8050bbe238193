"""Cloud storage URIs as Azure ML writes them, read into their parts.

The forms a job may name (azure-ai-ml's and the storage SDK's)::

    azureml://datastores/<datastore>/paths/<path>
    azureml://subscriptions/<s>/resourcegroups/<rg>/workspaces/<ws>/datastores/<ds>/paths/<p>
    wasbs://<container>@<account>.blob.core.windows.net/<path>        (wasb:// too)
    abfss://<filesystem>@<account>.dfs.core.windows.net/<path>        (abfs:// too)
    https://<account>.blob.core.windows.net/<container>/<path>        (.dfs. too)

A datastore URI names a datastore; the others name an account and a container. Nothing
here reads a registry or the network.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

_DATASTORE = re.compile(
    r"^azureml://(?:subscriptions/[^/]+/resource[gG]roups/[^/]+/"
    r"(?:providers/Microsoft\.MachineLearningServices/)?workspaces/[^/]+/)?"
    r"datastores/(?P<datastore>[^/]+)/paths/?(?P<path>.*)$", re.I)
_WASB = re.compile(r"^(?P<scheme>wasbs?|abfss?)://(?P<container>[^@/]+)@(?P<account>[^./]+)"
                   r"\.(?P<service>blob|dfs)\.(?P<suffix>[^/]+)/?(?P<path>.*)$", re.I)
_HTTPS = re.compile(r"^https?://(?P<account>[^./]+)\.(?P<service>blob|dfs)\.(?P<suffix>[^/]+)"
                    r"/(?P<container>[^/?#]+)/?(?P<path>[^?#]*)$", re.I)
DEFAULT_SUFFIX = "core.windows.net"


@dataclass(frozen=True)
class CloudUri:
    """The parts of a cloud URI: a datastore's, or an account's and container's."""

    text: str
    datastore: str | None = None
    account: str | None = None
    container: str | None = None
    path: str = ""  # inside the datastore or the container; "" is all of it
    suffix: str = DEFAULT_SUFFIX  # the endpoint suffix (sovereign clouds)

    @property
    def is_folder(self) -> bool:
        """Written as a folder (ends with ``/``, or names the whole container)."""
        return self.path == "" or self.text.endswith("/")


def parse_cloud_uri(text: str) -> CloudUri | None:
    """The parts of ``text``, or ``None`` when it is not a cloud storage URI."""
    raw = text.strip()
    found = _DATASTORE.match(raw)
    if found:
        return CloudUri(raw, datastore=found["datastore"], path=_clean(found["path"]))
    found = _WASB.match(raw) or _HTTPS.match(raw)
    if found:
        return CloudUri(raw, account=found["account"].lower(), container=found["container"],
                        path=_clean(found["path"]), suffix=found["suffix"].lower())
    return None


def is_cloud_uri(text: object) -> bool:
    return isinstance(text, str) and parse_cloud_uri(text) is not None


def is_account_uri(text: object) -> bool:
    """A cloud URI naming an account and a container (not a datastore)."""
    parts = parse_cloud_uri(text) if isinstance(text, str) else None
    return parts is not None and parts.account is not None


def _clean(path: str) -> str:
    """A blob name prefix: no leading or doubled slashes, percent-escapes decoded."""
    return "/".join(part for part in unquote(path).split("/") if part)


def join(prefix: str, name: str) -> str:
    return f"{prefix}/{name}" if prefix else name


__all__ = ["DEFAULT_SUFFIX", "CloudUri", "is_account_uri", "is_cloud_uri", "join",
           "parse_cloud_uri"]
