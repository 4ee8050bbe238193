"""Benchmark: list and run 100,000 one-blob mini-batches from Azurite, side by side with a
bare adlfs + loky loop over the same blobs.

    python bench/cloud_blobs_100k.py [--blobs 100000]

Starts Azurite in memory (tests/azurite_support.py finds it: ``npm install --prefix
.azurite azurite``), uploads the blobs once per run (a few bytes each; the emulator takes a
few hundred a second), then times, each in a child process:

* listing: ``mlpipe.data.cloud.blobs.iter_blobs`` over the folder (pages of 5,000);
* mlpipe: ``mlpipe job create`` of a pipeline whose ``ro_mount`` input is the datastore
  folder, ``mini_batch_size: 1``, a ``run()`` that reads its file, its rows appended and the
  append_row file uploaded (wall time, CPU, peak RSS of the command and its workers);
* baseline: adlfs ``find`` then ``joblib.Parallel(backend="loky")`` reading every blob with
  ``cat_file``, as many workers as mlpipe's.

Prints the blobs per second of each and the ratio baseline / mlpipe (1.0: as fast as the
bare loop). Figures taken while the machine is busy are noisy: the load is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SCRIPT = """\
import os


def init():
    pass


def run(mini_batch):
    out = []
    for path in mini_batch:
        with open(path, "rb") as f:
            out.append(f"{os.path.basename(path)} {len(f.read())}")
    return out
"""


def upload(connection: str, container: str, count: int) -> None:
    from adlfs import AzureBlobFileSystem
    from azure.storage.blob import BlobServiceClient

    BlobServiceClient.from_connection_string(connection).create_container(container)
    fs = AzureBlobFileSystem(connection_string=connection)
    start = time.perf_counter()
    for first in range(0, count, 5000):
        fs.pipe({f"{container}/in/b{i:07d}.txt": f"blob {i}\n".encode()
                 for i in range(first, min(count, first + 5000))})
    print(f"uploaded {count:,} blobs in {time.perf_counter() - start:.1f} s", flush=True)


def child(code: str, *args: str) -> dict[str, float]:
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, check=False)
    if proc.returncode != 0:
        raise SystemExit(proc.stdout + proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


LISTING = """\
import json, sys, time
from mlpipe.data.cloud.access import StorageAccess
from mlpipe.data.cloud.blobs import iter_blobs
url, key, container = sys.argv[1:4]
access = StorageAccess(url, "devstoreaccount1", "account_key", "bench", key)
start = time.perf_counter()
count = sum(1 for _ in iter_blobs(access, container, "in"))
print(json.dumps({"seconds": time.perf_counter() - start, "count": count}))
"""

BASELINE = """\
import json, os, sys, time
from adlfs import AzureBlobFileSystem
from joblib import Parallel, delayed
connection, container, workers = sys.argv[1], sys.argv[2], int(sys.argv[3])
_fs = None
def read(names):
    global _fs
    if _fs is None:
        _fs = AzureBlobFileSystem(connection_string=connection)
    return sum(len(_fs.cat_file(name)) for name in names)
start = time.perf_counter()
fs = AzureBlobFileSystem(connection_string=connection)
names = fs.find(f"{container}/in")
chunks = [names[i:i + 64] for i in range(0, len(names), 64)]
total = sum(Parallel(n_jobs=workers, backend="loky")(delayed(read)(c) for c in chunks))
print(json.dumps({"seconds": time.perf_counter() - start, "count": len(names), "bytes": total}))
"""


def run_mlpipe(folder: Path, runs: Path, workers: int) -> dict[str, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "mlpipe", "job", "create", "--file", str(folder / "pipeline.yml"),
         "--no-progress", "--set", f"jobs.score.max_concurrency_per_instance={workers}"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO),
                                             "MLPIPE_RUNS_DIR": str(runs)}, check=False)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(proc.stdout[-3000:] + proc.stderr[-3000:])
    return {"seconds": seconds, "cpu": (after.ru_utime + after.ru_stime)
            - (before.ru_utime + before.ru_stime), "peak_rss_mb": after.ru_maxrss / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blobs", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    from tests.azurite_support import KEY, azurite_program, start_azurite

    program = azurite_program()
    if program is None:
        raise SystemExit("Azurite is not installed: npm install --prefix .azurite azurite")
    # in memory: the emulator's own disk writes are no part of what is measured
    azurite = start_azurite(program, "--inMemoryPersistence")
    try:
        folder = Path(tempfile.mkdtemp(prefix="mlpipe-bench-cloud-"))
        connection = azurite.connection_string()
        upload(connection, "bench", args.blobs)
        (folder / "src").mkdir()
        (folder / "src" / "score.py").write_text(SCRIPT)
        (folder / "pipeline.yml").write_text(
            "type: pipeline\ninputs:\n  blobs:\n    type: uri_folder\n"
            "    path: azureml://datastores/bench/paths/in/\n    mode: ro_mount\n"
            "jobs:\n  score:\n    type: parallel\n    inputs:\n"
            "      data: ${{parent.inputs.blobs}}\n    outputs:\n      rows:\n"
            "        type: uri_folder\n        path: azureml://datastores/bench/paths/out/\n"
            "    input_data: ${{inputs.data}}\n    mini_batch_size: \"1\"\n"
            "    task:\n      type: run_function\n      code: ./src\n"
            "      entry_script: score.py\n      append_row_to: ${{outputs.rows}}\n")
        (folder / "mlpipe.toml").write_text(
            f'[datastores.bench]\naccount_url = "{azurite.url()}"\n'
            'container_name = "bench"\naccount_name = "devstoreaccount1"\n'
            'account_key_env = "BENCH_KEY"\n')
        os.environ["BENCH_KEY"] = KEY
        runs = folder / "runs"
        print(f"load before: {os.getloadavg()[0]:.1f}", flush=True)
        listing = child(LISTING, azurite.url(), KEY, "bench")
        print(f"listing: {listing['count']:,} blobs in {listing['seconds']:.2f} s = "
              f"{listing['count'] / listing['seconds']:,.0f} blobs/s", flush=True)
        baseline = child(BASELINE, connection, "bench", str(args.workers))
        print(f"baseline (adlfs find + loky cat_file, {args.workers} workers): "
              f"{baseline['seconds']:.1f} s = {args.blobs / baseline['seconds']:,.0f} blobs/s",
              flush=True)
        mlpipe = run_mlpipe(folder, runs, args.workers)
        print(f"mlpipe job create ({args.blobs:,} one-blob mini-batches, {args.workers} "
              f"workers): {mlpipe['seconds']:.1f} s = {args.blobs / mlpipe['seconds']:,.0f} "
              f"blobs/s, CPU {mlpipe['cpu']:.1f} s, peak RSS {mlpipe['peak_rss_mb']:.0f} MB")
        print(f"ratio baseline/mlpipe: {baseline['seconds'] / mlpipe['seconds']:.2f} "
              f"(load after: {os.getloadavg()[0]:.1f})")
    finally:
        azurite.stop()
        import shutil

        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
