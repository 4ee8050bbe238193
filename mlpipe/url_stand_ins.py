"""URLs that a job's ``mlpipe.toml`` maps read their local stand-ins, in every process of the
job: ``urllib``, ``requests`` and ``urllib3`` downloads of a mapped URL (or of a URL below a
mapped prefix, e.g. a blob container) read the local file instead, and a URL that cannot be
reached says how to map it (:func:`offline_hint`).

Installed by ``mlpipe run-script`` (:mod:`mlpipe.scripts`), by a parallel step's workers
when the job has an ``mlpipe.toml`` (:mod:`mlpipe.runtime.worker`) and by a command step's
Pythons (:mod:`mlpipe.startup.sitecustomize`); the mapping itself is
:func:`mlpipe.compiler.assets.stand_in`'s.
"""

from __future__ import annotations

import email.message
import importlib
import io
import os
import urllib.error
import urllib.request
import urllib.response
from collections.abc import Callable
from typing import Any

from mlpipe.compiler.assets import ASSETS_FILE
from mlpipe.runs import STAND_INS_ENV


def install_url_stand_ins() -> None:
    """``urllib`` and ``requests`` downloads of URLs that ``mlpipe.toml`` maps read the
    local stand-ins; one that cannot reach its host says which URL and how to map it."""
    opener = StandInOpener()
    built: Any = urllib.request.build_opener(StandInHandler())
    for handler in built.handlers:
        opener.add_handler(handler)
    urllib.request.install_opener(opener)
    _install_requests_stand_ins()
    _install_urllib3_stand_ins()


def offline_hint(url: str) -> str:
    """What to do when ``url`` cannot be reached (this machine may be offline)."""
    where = os.environ.get(STAND_INS_ENV) or "the working folder"
    return (f"{url} cannot be reached from here; to run offline, map it (or a prefix of it) "
            f"to a local file in {ASSETS_FILE} [assets] in {where}: \"{url}\" = \"./local/path\"")


class StandInOpener(urllib.request.OpenerDirector):
    """The installed opener: a URL whose host cannot be reached raises ``URLError`` naming
    the URL and the ``mlpipe.toml`` stand-in that would serve it."""

    def open(self, fullurl: Any, data: Any = None, timeout: Any = None) -> Any:
        url = fullurl if isinstance(fullurl, str) else fullurl.full_url
        try:
            if timeout is None:
                return super().open(fullurl, data)
            return super().open(fullurl, data, timeout)
        except urllib.error.HTTPError:
            raise
        except urllib.error.URLError as error:
            if isinstance(error.reason, OSError):  # no route, no name: not an HTTP answer
                raise urllib.error.URLError(f"{error.reason} ({offline_hint(url)})") from error
            raise


class StandInHandler(urllib.request.BaseHandler):
    """``urllib`` downloads of URLs that ``mlpipe.toml`` ``[assets]`` maps (the URL itself or
    a prefix of it, e.g. a blob container) read the local stand-in instead."""

    handler_order = 100  # before the real HTTP handlers

    def _open(self, request: urllib.request.Request) -> Any:
        from mlpipe.compiler.assets import stand_in

        local = stand_in(request.full_url)
        if local is None:
            return None  # not mapped: the real handlers fetch it
        if not local.is_file():
            raise urllib.error.URLError(f"{request.full_url} is mapped to {local} in "
                                        "mlpipe.toml, which is not a file")
        headers = email.message.Message()
        headers["Content-Length"] = str(local.stat().st_size)
        response = urllib.response.addinfourl(local.open("rb"), headers, request.full_url, 200)
        response.msg = "OK"  # type: ignore[attr-defined]
        return response

    http_open = _open
    https_open = _open


def _mapped(url: str) -> tuple[int, str, bytes] | None:
    """``(status, reason, body)`` of the stand-in of ``url`` (404 when the mapped file is
    missing), or ``None`` when ``mlpipe.toml`` does not map it."""
    from mlpipe.compiler.assets import stand_in

    local = stand_in(url)
    if local is None:
        return None
    return (200, "OK", local.read_bytes()) if local.is_file() else (404, "Not Found", b"")


def _patch_once(module: str, owner: str, name: str,
                make: Callable[[Any, Any], Callable[..., Any]]) -> None:
    """Replace ``module.owner.name`` by ``make(original, module)`` once (nothing when the
    package is not installed)."""
    try:
        found: Any = importlib.import_module(module)
    except ImportError:
        return
    cls = getattr(found, owner)
    original = getattr(cls, name)
    if getattr(original, "mlpipe_stand_ins", False):
        return
    replacement: Any = make(original, found)
    replacement.mlpipe_stand_ins = True
    setattr(cls, name, replacement)


def _install_requests_stand_ins() -> None:
    """``requests`` (when installed) reads mapped URLs from their stand-ins, like urllib."""

    def make(original: Any, adapters: Any) -> Callable[..., Any]:
        models: Any = importlib.import_module("requests.models")
        exceptions: Any = importlib.import_module("requests.exceptions")

        def send(self: Any, request: Any, **kwargs: Any) -> Any:
            mapped = _mapped(request.url)
            if mapped is None:
                try:
                    return original(self, request, **kwargs)
                except exceptions.ConnectionError as error:
                    raise type(error)(f"{error} ({offline_hint(request.url)})",
                                      request=request) from error
            response = models.Response()
            response.status_code, response.reason, response._content = mapped
            response.headers["Content-Length"] = str(len(response._content))
            response.url, response.request = request.url, request
            return response

        return send

    _patch_once("requests.adapters", "HTTPAdapter", "send", make)


def _install_urllib3_stand_ins() -> None:
    """``urllib3.PoolManager().request(...)`` (when urllib3 is installed) reads mapped URLs
    from their stand-ins too."""

    def make(original: Any, poolmanager: Any) -> Callable[..., Any]:
        responses: Any = importlib.import_module("urllib3.response")

        def urlopen(self: Any, method: str, url: str, redirect: bool = True,
                    **kwargs: Any) -> Any:
            mapped = _mapped(url)
            if mapped is None:
                return original(self, method, url, redirect, **kwargs)
            status, reason, body = mapped
            return responses.HTTPResponse(
                body=io.BytesIO(body), status=status, reason=reason,
                headers={"Content-Length": str(len(body))}, request_url=url,
                preload_content=kwargs.get("preload_content", True),
                decode_content=kwargs.get("decode_content", True))

        return urlopen

    _patch_once("urllib3.poolmanager", "PoolManager", "urlopen", make)


__all__ = ["StandInHandler", "StandInOpener", "install_url_stand_ins", "offline_hint"]
