"""``curl`` and ``wget`` in a command step: URLs that the job's ``mlpipe.toml`` maps are
copied from their local stand-ins; anything else runs the real program.

A command step finds this module first on its ``PATH`` as ``curl`` and ``wget``
(:func:`mlpipe.jobs.command.python_shim_dir`), so a published command such as
``wget https://host/cifar-10-python.tar.gz; tar -xzf ...`` or
``curl ${{inputs.url}} > ${{outputs.folder}}/data.csv`` runs offline once the URL (or a
prefix of it) is mapped. The options that say where the data goes are honoured
(curl: standard output, ``-o/--output FILE``, ``-O/--remote-name``, ``--output-dir``;
wget: the URL's file name, ``-O/--output-document FILE`` (``-`` standard output),
``-P/--directory-prefix DIR``); the others are accepted and change nothing. A mapped file
that does not exist is curl's error 22 / wget's 8. When a URL is not mapped, the real
program runs with the same arguments; when it cannot reach its host (curl 6/7, wget 4),
one more line names the ``mlpipe.toml`` entry that would serve the URL.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

from mlpipe.compiler.assets import stand_in
from mlpipe.url_stand_ins import offline_hint

_URL = re.compile(r"^(https?|ftp)://", re.I)
# Options that take a value (the next argument), besides those read below.
_CURL_VALUED = {"-H", "--header", "-A", "--user-agent", "-u", "--user", "-X", "--request",
                "-d", "--data", "-e", "--referer", "-m", "--max-time", "--retry",
                "--retry-delay", "--retry-max-time", "--connect-timeout", "-b", "--cookie",
                "-c", "--cookie-jar", "-r", "--range", "-w", "--write-out", "--proxy", "-x"}
_WGET_VALUED = {"-t", "--tries", "-T", "--timeout", "-U", "--user-agent", "--header",
                "-o", "--output-file", "-a", "--append-output", "--user", "--password",
                "-w", "--wait"}
# Short options that take a value, per program: ``-sSLo FILE`` / ``-qO-`` bundle them.
_SHORT_VALUED = {"curl": set("oHAuXdemrbcwx"), "wget": set("OPtTUoaw")}
_UNREACHABLE = {"curl": (6, 7), "wget": (4,)}
_SHIM_HEAD = 1024  # bytes of a PATH folder's curl read to tell mlpipe's shim


def main(argv: list[str]) -> int:
    """``argv``: the program (``curl`` or ``wget``) and its arguments."""
    program, args = argv[0], argv[1:]
    urls = [arg for arg in args if _URL.match(arg)]
    local = [(url, stand_in(url)) for url in urls]
    if not urls or any(path is None for _, path in local):
        return _run_real(program, args, [url for url, path in local if path is None])
    options = _unbundled(program, args)
    targets = (_curl_targets(options, urls) if program == "curl"
               else _wget_targets(options, urls))
    for (url, source), target in zip(local, targets, strict=True):
        if source is None or not source.is_file():
            print(f"{program}: {url}: 404 Not Found here (mlpipe.toml maps it to {source}, "
                  "which is not a file)", file=sys.stderr)
            return 22 if program == "curl" else 8
        if target is None:
            with source.open("rb") as data:
                shutil.copyfileobj(data, sys.stdout.buffer)
            sys.stdout.flush()
        else:
            Path(target).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    return 0


def _unbundled(program: str, args: list[str]) -> list[str]:
    """``args`` with bundled short options split (``-sSLo F`` is ``-s -S -L -o F``, ``-qO-``
    is ``-q -O -``) and ``--long=value`` as ``--long value``."""
    out: list[str] = []
    for arg in args:
        if arg.startswith("--") and "=" in arg:
            out.extend(arg.split("=", 1))
        elif arg.startswith("-") and not arg.startswith("--") and len(arg) > 2:
            for index, letter in enumerate(arg[1:], start=1):
                out.append(f"-{letter}")
                if letter in _SHORT_VALUED[program]:
                    if arg[index + 1:]:
                        out.append(arg[index + 1:])
                    break
        else:
            out.append(arg)
    return out


def _curl_targets(args: list[str], urls: list[str]) -> list[str | None]:
    """Where curl writes each URL (``None``: standard output)."""
    outputs: list[str | None] = []
    directory = ""
    remote_name_all = False
    iterator = iter(args)
    for arg in iterator:
        if arg in ("-o", "--output"):
            outputs.append(next(iterator, None))
        elif arg in ("-O", "--remote-name"):
            outputs.append("")  # the URL's own name
        elif arg == "--remote-name-all":
            remote_name_all = True
        elif arg == "--output-dir":
            directory = next(iterator, "") or ""
        elif arg in _CURL_VALUED:
            next(iterator, None)
    targets: list[str | None] = []
    for index, url in enumerate(urls):
        given = outputs[index] if index < len(outputs) else ("" if remote_name_all else None)
        if given is None:
            targets.append(None)
        else:
            name = given or _file_name(url)
            targets.append(os.path.join(directory, name) if directory else name)
    return targets


def _wget_targets(args: list[str], urls: list[str]) -> list[str | None]:
    """Where wget writes each URL (``None``: standard output); ``-O FILE`` gets them all."""
    document: str | None = ""
    prefix = ""
    iterator = iter(args)
    for arg in iterator:
        if arg in ("-O", "--output-document"):
            document = next(iterator, "") or ""
        elif arg in ("-P", "--directory-prefix"):
            prefix = next(iterator, "") or ""
        elif arg in _WGET_VALUED:
            next(iterator, None)
    if document == "-":
        return [None for _ in urls]
    if document:
        return [document for _ in urls]
    return [os.path.join(prefix, _file_name(url)) if prefix else _file_name(url) for url in urls]


def _file_name(url: str) -> str:
    return Path(urlsplit(url).path).name or "index.html"


def _run_real(program: str, args: list[str], unmapped: list[str]) -> int:
    """The real ``program`` (the first on ``PATH`` that is not this stand-in)."""
    path = os.pathsep.join(part for part in os.environ.get("PATH", "").split(os.pathsep)
                           if part and not _is_shim_dir(part))
    real = shutil.which(program, path=path)
    if real is None:
        print(f"{program}: not installed here", file=sys.stderr)
        for url in unmapped:
            print(f"{program}: {offline_hint(url)}", file=sys.stderr)
        return 127
    code = subprocess.run([real, *args], check=False).returncode
    if code in _UNREACHABLE[program]:
        for url in unmapped:
            print(f"{program}: {offline_hint(url)}", file=sys.stderr)
    return code


def _is_shim_dir(folder: str) -> bool:
    """A folder whose ``curl`` is one of mlpipe's stand-ins (a step's ``.mlpipe/bin``)."""
    try:  # the shim is two short lines: read no more of a real curl binary than that
        with (Path(folder) / "curl").open("rb") as shim:
            return b"mlpipe.jobs.downloaders" in shim.read(_SHIM_HEAD)
    except OSError:
        return False


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
