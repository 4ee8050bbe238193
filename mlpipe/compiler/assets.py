"""Remote asset references and the local stand-ins ``mlpipe.toml`` maps them to.

A reference such as ``azureml:iris:1``, ``azureml://registries/azureml/components/x/labels/latest``
or ``https://host/data.csv`` cannot be read offline. Validation accepts it and
the plan lists it in ``ExecutionPlan.remote_assets`` so a run stops before any
step starts. An ``mlpipe.toml`` beside the pipeline YAML can map references to
local paths (relative to the toml file)::

    [assets]
    "azureml:iris:1" = "./data/iris"
    "azureml://registries/azureml/components/dataset_downloader/labels/latest" = "./downloader.yml"

    [outputs]
    allow_external = true   # outputs of the pipelines here may be written outside the runs folder

    [datastores.blobs]      # where a datastore's account is reached, and its secret's variable
    account_url = "http://127.0.0.1:10000/devstoreaccount1"
    account_key_env = "BLOBS_KEY"

A cloud URI (``azureml://datastores/...``, ``wasbs://``, ``abfss://``,
``https://<account>.blob.core.windows.net/...``) that ``[assets]`` does not map is read
from storage when it names a registered datastore (``mlpipe datastore create``) or a
``[datastores.<name>]`` entry with ``account_url`` and ``container_name``
(:func:`cloud_location`); an account URI of a container no datastore names is read
anonymously (a public container: the front door checks it before the job); an
``azureml://datastores/<name>`` URI of an unknown datastore is a remote asset the run
refuses.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from mlpipe.compiler.containment import unusable_path
from mlpipe.data.cloud.store import DatastoreInfo, DatastoreStore, register_hint
from mlpipe.data.cloud.uris import CloudUri, parse_cloud_uri
from mlpipe.diagnostics import Diagnostic, Location, did_you_mean
from mlpipe.limits import InputLimitError, check_file_size
from mlpipe.plan import CloudLocation
from mlpipe.runs import ASSETS_DIR, STAND_INS_ENV

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ASSETS_FILE = "mlpipe.toml"
# Assets registered from Python (``ml_client.data.create_or_update(...)``), under the runs folder.
REGISTRY_FILE = Path(ASSETS_DIR) / "registry.json"
# ``git+https://host/repo.git@branch`` is a code snapshot azure-ai-ml takes from a git repository.
_REMOTE = re.compile(r"^(azureml:|https?://|wasbs?://|abfss?://|adl://|s3://|gs://|git\+)", re.I)
# A workspace resource's ARM id (``/subscriptions/<s>/resourceGroups/<g>/providers/
# Microsoft.MachineLearningServices/workspaces/<w>/data/<name>/versions/<v>``): an asset for
# azure-ai-ml (``is_ARM_id_for_resource``), never a local absolute path.
_ARM_ID = re.compile(r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/"
                     r"Microsoft\.MachineLearningServices/workspaces/[^/]+/[^/]+/[^/]", re.I)


def is_remote(reference: object) -> bool:
    """True for ``azureml:``, ``azureml://``, ``http(s)://``, cloud-storage URIs, ``git+`` code
    and ARM ids."""
    if not isinstance(reference, str):
        return False
    text = reference.strip()
    return _REMOTE.match(text) is not None or _ARM_ID.match(text) is not None


def strip_file_prefix(reference: str) -> str:
    """``file:./x.yml`` -> ``./x.yml`` (the ``file:`` form of local component references)."""
    return reference[5:] if reference.startswith("file:") else reference


@dataclass
class AssetMap:
    """The ``[assets]`` table of an ``mlpipe.toml`` (empty when there is none), and its
    ``[outputs] allow_external`` switch."""

    base_dir: Path
    mapping: dict[str, str] = field(default_factory=dict)
    file: Path | None = None
    allow_external_outputs: bool = False
    # [datastores.<name>]: account_url, container_name, account_name, account_key_env,
    # sas_token_env (names of environment variables, never secrets)
    datastores: dict[str, dict[str, str]] = field(default_factory=dict)
    runs_dir: Path | None = None  # whose registered datastores count

    def local(self, reference: str) -> Path | None:
        """The local path ``reference`` maps to, or ``None``."""
        target = self.mapping.get(reference.strip())
        if target is None:
            return None
        path = Path(target).expanduser()
        return path if path.is_absolute() else (self.base_dir / path).resolve()

    def locate(self, reference: str, base_dir: Path) -> tuple[Path | None, str | None]:
        """``(absolute local path, None)`` or ``(None, remote reference)`` for a path as written.

        Local paths (``file:`` prefix allowed) are relative to ``base_dir``; a remote
        reference mapped in ``[assets]`` becomes its local path, and so does one below a
        mapped URL (``"https://<account>.blob.core.windows.net" = "./blob"``: its containers
        are sub-folders), as scripts' downloads of it are (:func:`stand_in`).
        """
        raw = reference.strip()
        if is_remote(raw):
            target = self.mapping.get(raw)
            if target is not None and is_remote(target):  # a data asset of cloud data
                return None, target.strip()
            local = _under(self, raw)  # mapped itself, or below a mapped URL prefix
            return (local, None) if local is not None else (None, raw)
        path = Path(strip_file_prefix(raw)).expanduser()
        path = path if path.is_absolute() else base_dir / path
        return Path(os.path.normpath(path.absolute())), None


def registered_references(runs_dir: Path | None) -> dict[str, str]:
    """``{"azureml:name:version": absolute path}`` of the assets registered under ``runs_dir``."""
    if runs_dir is None:
        return {}
    try:
        data = json.loads((runs_dir / REGISTRY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    references = data.get("references") if isinstance(data, dict) else None
    if not isinstance(references, dict):
        return {}
    return {k: v for k, v in references.items() if isinstance(k, str) and isinstance(v, str)}


def load_asset_map(yaml_dir: Path, runs_dir: Path | None = None
                   ) -> tuple[AssetMap, list[Diagnostic]]:
    """Read ``<yaml_dir>/mlpipe.toml`` over the assets registered under ``runs_dir``;
    problems with the toml are diagnostics."""
    asset_map, problems = _read_toml(yaml_dir)
    asset_map.mapping = {**registered_references(runs_dir), **asset_map.mapping}
    asset_map.runs_dir = runs_dir
    return asset_map, problems


def _read_toml(yaml_dir: Path) -> tuple[AssetMap, list[Diagnostic]]:
    path = yaml_dir / ASSETS_FILE
    if not path.is_file():
        return AssetMap(yaml_dir), []
    try:
        check_file_size(path)
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except RecursionError:
        return AssetMap(yaml_dir, file=path), [
            Diagnostic(f"cannot read {ASSETS_FILE}: nested too deeply",
                       location=Location(str(path)), code="input-limit")]
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, InputLimitError) as exc:
        return AssetMap(yaml_dir, file=path), [
            Diagnostic(f"cannot read {ASSETS_FILE}: {exc}", location=Location(str(path)),
                       code="assets")
        ]
    table = data.get("assets", {})
    problems: list[Diagnostic] = []
    if not isinstance(table, dict):
        problems.append(Diagnostic('[assets] must be a table of reference = "local path"',
                                   key_path="assets", location=Location(str(path)), code="assets"))
        table = {}
    mapping: dict[str, str] = {}
    for key, value in table.items():
        if isinstance(value, str) and unusable_path(value):
            problems.append(Diagnostic(f"not a usable path: {unusable_path(value)}",
                                       key_path=f"assets.{key}", location=Location(str(path)),
                                       code="assets"))
        elif isinstance(value, str):
            mapping[key] = value
        else:
            problems.append(Diagnostic("must be a local path (a string), got "
                                       f"{type(value).__name__}", key_path=f"assets.{key}",
                                       location=Location(str(path)), code="assets"))
    allow, outputs_problems = _outputs_table(data.get("outputs", {}), path)
    datastores, datastore_problems = _datastores_table(data.get("datastores", {}), path)
    return AssetMap(yaml_dir, mapping, path, allow, datastores), \
        problems + outputs_problems + datastore_problems


DATASTORE_KEYS = ("account_url", "container_name", "account_name", "account_key_env",
                  "sas_token_env")


def _datastores_table(table: object, path: Path) -> tuple[dict[str, dict[str, str]],
                                                          list[Diagnostic]]:
    """``[datastores.<name>]`` tables of text values (secrets only by variable name)."""
    where = Location(str(path))
    if not isinstance(table, dict):
        return {}, [Diagnostic('[datastores] must hold tables: [datastores.<name>] account_url = '
                               '"..."', key_path="datastores", location=where, code="assets")]
    found: dict[str, dict[str, str]] = {}
    problems = []
    for name, entry in table.items():
        if not isinstance(entry, dict):
            problems.append(Diagnostic(f"must be a table (keys: {', '.join(DATASTORE_KEYS)})",
                                       key_path=f"datastores.{name}", location=where,
                                       code="assets"))
            continue
        for key, value in entry.items():
            if key not in DATASTORE_KEYS:
                hint = did_you_mean(key, DATASTORE_KEYS)
                if key in ("account_key", "sas_token"):
                    hint = (f"give the name of an environment variable holding it: {key}_env "
                            "(a secret is never written in mlpipe.toml)")
                problems.append(Diagnostic(f"unknown key {key!r} (keys: "
                                           f"{', '.join(DATASTORE_KEYS)})",
                                           key_path=f"datastores.{name}.{key}", location=where,
                                           code="assets", hint=hint))
            elif not isinstance(value, str) or not value.strip():
                problems.append(Diagnostic("must be a non-empty string",
                                           key_path=f"datastores.{name}.{key}", location=where,
                                           code="assets"))
        found[str(name)] = {k: v.strip() for k, v in entry.items()
                            if k in DATASTORE_KEYS and isinstance(v, str) and v.strip()}
    return found, problems


def cloud_location(reference: str, asset_map: AssetMap, *, anonymous: bool = True
                   ) -> tuple[CloudLocation | None, str | None]:
    """Where the cloud URI ``reference`` is read from (or written to), through the
    datastore it names (or the registered datastore of its account and container):
    ``(location, None)``, or ``(None, what to do)`` when it names none, or ``(None, None)``
    when it is no cloud URI.

    An account URI (``https://``, ``wasbs://``, ``abfss://``) of a container no datastore
    names is read as Azure reads it, without a credential: a ``public`` location, which the
    front door checks is public before the job starts (``anonymous=False``, an output's
    case: nothing is written anonymously, so it names what to register instead). An
    ``mlpipe.toml`` entry with the account's ``account_name`` and no ``container_name`` says
    where the account is reached (and, with a secret's variable, with which credential)."""
    uri = parse_cloud_uri(reference)
    if uri is None:
        return None, None
    store = DatastoreStore(asset_map.runs_dir) if asset_map.runs_dir is not None else None
    name = uri.datastore or _datastore_of(uri, store, asset_map)
    if name is None:
        return _account_location(uri, asset_map, anonymous=anonymous)
    info = store.get(name) if store is not None else None
    settings = asset_map.datastores.get(name, {})
    container = settings.get("container_name") or (info.container_name if info else None) \
        or uri.container
    account_url = settings.get("account_url") or (info.account_url if info else None)
    if account_url is None and uri.account is not None and settings:
        account_url = f"https://{uri.account}.blob.{uri.suffix}"
    if container is None or account_url is None:
        return None, (f"datastore '{name}' is not registered: register it (mlpipe datastore "
                      f"create --file {name}.yml), give [datastores.{name}] account_url and "
                      "container_name in mlpipe.toml, or map the URI to a local path in "
                      "mlpipe.toml [assets]")
    account = settings.get("account_name") or (info.account_name if info else None) \
        or uri.account or _account_in(account_url)
    credentials = str(store.credentials_path) if store is not None and info is not None \
        and info.credential else None
    return CloudLocation(uri=uri.text, account_name=account, account_url=account_url.rstrip("/"),
                         container=container, path=uri.path, datastore=name,
                         secret_env=_secret_env(settings), credentials_file=credentials), None


def web_url_hint(reference: str) -> str | None:
    """What to do about an ``http(s)://`` input that is no storage account's (a file on a web
    server, such as GitHub's raw files): ``None`` for anything else."""
    if not re.match(r"^https?://", reference.strip(), re.I) or parse_cloud_uri(reference):
        return None
    if re.match(r"^https?://[^/?#]+\.(blob|dfs)\.[^/?#]+/[^?#]*[?#]", reference.strip(), re.I):
        return ("a storage URL with a query (a SAS token is a datastore's credential, never "
                "part of the path): give the URL without it and register a datastore of its "
                "container with the token (mlpipe datastore create, credentials: sas_token), "
                "or map the URL to a local copy in mlpipe.toml [assets]")
    return ("a web server's file, not a storage account's: mlpipe reads Azure Blob and ADLS "
            "URIs only; download the file and map the URL to the copy with --set or in "
            "mlpipe.toml [assets]")


def _account_location(uri: CloudUri, asset_map: AssetMap, *, anonymous: bool
                      ) -> tuple[CloudLocation | None, str | None]:
    """An account URI no datastore names: the account's container read anonymously (or with
    the secret an ``mlpipe.toml`` account entry names)."""
    assert uri.account is not None and uri.container is not None
    entry, settings = _account_entry(uri.account, asset_map)
    secret_env = _secret_env(settings)
    if secret_env is None and not anonymous:
        return None, register_hint(uri.account, uri.container)
    account_url = settings.get("account_url") or f"https://{uri.account}.blob.{uri.suffix}"
    return CloudLocation(uri=uri.text, account_name=uri.account,
                         account_url=account_url.rstrip("/"), container=uri.container,
                         path=uri.path, datastore=entry if secret_env else None,
                         secret_env=secret_env, public=secret_env is None), None


def _account_entry(account: str, asset_map: AssetMap) -> tuple[str | None, dict[str, str]]:
    """The ``mlpipe.toml`` ``[datastores.<name>]`` entry of a whole account (its
    ``account_name``, or its name when it gives none, is ``account``; no ``container_name``)."""
    for name, settings in sorted(asset_map.datastores.items()):
        named = settings.get("account_name", name).lower()
        if named == account and "container_name" not in settings:
            return name, settings
    return None, {}


def _secret_env(settings: dict[str, str]) -> tuple[str, str] | None:
    """``(account_key | sas_token, VARIABLE)`` an ``mlpipe.toml`` entry names, if any."""
    return next(((kind, settings[f"{kind}_env"]) for kind in ("account_key", "sas_token")
                 if f"{kind}_env" in settings), None)


def _datastore_of(uri: CloudUri, store: DatastoreStore | None, asset_map: AssetMap) -> str | None:
    """The datastore registered (or given in mlpipe.toml) for the URI's account and container."""
    for name, settings in sorted(asset_map.datastores.items()):
        if settings.get("account_name", "").lower() == uri.account \
                and settings.get("container_name") == uri.container:
            return name
    infos: list[DatastoreInfo] = store.list() if store is not None else []
    return next((info.name for info in infos if info.account_name.lower() == uri.account
                 and info.container_name == uri.container), None)


def _account_in(account_url: str) -> str:
    """The account an endpoint URL names: its host's first label, or an emulator's first path
    segment (``http://127.0.0.1:10000/devstoreaccount1``)."""
    from urllib.parse import urlsplit  # noqa: PLC0415

    parts = urlsplit(account_url)
    segment = parts.path.strip("/").split("/")[0]
    host = parts.hostname or ""
    if segment and (host.replace(".", "").isdigit() or host == "localhost"):
        return segment
    return host.split(".")[0]


def _outputs_table(table: object, path: Path) -> tuple[bool, list[Diagnostic]]:
    """``[outputs] allow_external`` (a boolean; the table's only key)."""
    where = Location(str(path))
    if not isinstance(table, dict):
        return False, [Diagnostic("[outputs] must be a table (allow_external = true)",
                                  key_path="outputs", location=where, code="assets")]
    problems = [Diagnostic(f"unknown key {key!r} (the table has allow_external)",
                           key_path=f"outputs.{key}", location=where, code="assets")
                for key in table if key != "allow_external"]
    allow = table.get("allow_external", False)
    if not isinstance(allow, bool):
        problems.append(Diagnostic(f"must be true or false, got {allow!r}",
                                   key_path="outputs.allow_external", location=where,
                                   code="assets"))
        allow = False
    return allow, problems


def stand_in(reference: str, *folders: Path) -> Path | None:
    """The local path ``mlpipe.toml`` maps ``reference`` (or a URL prefix of it) to, looking
    in ``folders``, the job's folder (:data:`STAND_INS_ENV`), then the working folder."""
    job_folder = os.environ.get(STAND_INS_ENV)
    for folder in (*folders, *([Path(job_folder)] if job_folder else []), Path.cwd()):
        if not (folder / ASSETS_FILE).is_file():
            continue
        asset_map, _ = load_asset_map(folder)
        found = _under(asset_map, reference)
        if found is not None:
            return found
    return None


def _under(asset_map: AssetMap, reference: str) -> Path | None:
    exact = asset_map.local(reference)
    if exact is not None:
        return exact
    for key in sorted(asset_map.mapping, key=len, reverse=True):
        prefix = key.rstrip("/") + "/"
        if reference.startswith(prefix):
            root = asset_map.local(key)
            if root is not None:
                return root / reference[len(prefix):]
    return None


__all__ = ["ASSETS_FILE", "REGISTRY_FILE", "STAND_INS_ENV", "AssetMap", "cloud_location",
           "is_remote",
           "load_asset_map", "registered_references", "stand_in", "strip_file_prefix",
           "web_url_hint"]
