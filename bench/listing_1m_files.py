"""Benchmark: list a folder of 1,000,000 empty files into mini-batches.

    python bench/listing_1m_files.py [--files 1000000] [--layout flat|nested]
                                     [--mini-batch-size 10] [--root /tmp/mlpipe-bench-1m]

Creates the files once under /tmp (reused when present), then measures in
separate child processes, side by side:

* mlpipe: ``mlpipe.data.iter_mini_batches`` over a ``uri_folder`` input;
* baseline: ``os.walk`` listing every file, sorting, then cutting batches
  (what a runner that lists first and schedules after does).

Prints the time to the first and to the last mini-batch and each child's peak
RSS. Targets (issue 3): first mini-batch < 1 s, driver peak RSS < 300 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MARKER = ".complete"  # hidden: not listed by mlpipe, skipped by the baseline


def create_files(root: Path, count: int, layout: str) -> None:
    if (root / MARKER).is_file() and (root / MARKER).read_text() == f"{count} {layout}":
        print(f"reusing {count:,} files under {root}")
        return
    start = time.perf_counter()
    root.mkdir(parents=True, exist_ok=True)
    folders = 1 if layout == "flat" else 1000
    per_folder = -(-count // folders)
    made = 0
    for f in range(folders):
        folder = root if layout == "flat" else root / f"d{f:04d}"
        folder.mkdir(exist_ok=True)
        for _ in range(min(per_folder, count - made)):
            fd = os.open(folder / f"f{made:07d}.dat", os.O_CREAT | os.O_WRONLY, 0o644)
            os.close(fd)
            made += 1
    (root / MARKER).write_text(f"{count} {layout}")
    print(f"created {count:,} empty files under {root} in {time.perf_counter() - start:.1f} s")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_mlpipe(root: str, size: str) -> dict[str, float]:
    sys.path.insert(0, str(REPO))
    from mlpipe.data import iter_mini_batches  # noqa: PLC0415
    from mlpipe.frozen import freeze  # noqa: PLC0415
    from mlpipe.plan import ParallelStep, PlanInput  # noqa: PLC0415
    from mlpipe.sizes import parse_mini_batch_size  # noqa: PLC0415

    step = ParallelStep(name="bench", step_dir="/tmp/unused", input_data="data",
                        inputs=freeze({"data": PlanInput("data", "uri_folder", path=root)}),
                        mini_batch_size=parse_mini_batch_size(size))
    start = time.perf_counter()
    first = None
    batches = items = 0
    for mb in iter_mini_batches(step):
        if first is None:
            first = time.perf_counter() - start
        batches += 1
        items += mb.items or 0
    return {"first": first or 0.0, "last": time.perf_counter() - start, "batches": batches,
            "items": items, "rss": peak_rss_mb()}


def child_walk(root: str, size: str) -> dict[str, float]:
    per = int(size)
    start = time.perf_counter()
    files: list[str] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        files.extend(os.path.join(folder, n) for n in names if not n.startswith("."))
    files.sort()
    first = None
    batches = 0
    for i in range(0, len(files), per):
        batch = files[i:i + per]
        if first is None:
            first = time.perf_counter() - start
        batches += 1
        del batch
    return {"first": first or 0.0, "last": time.perf_counter() - start, "batches": batches,
            "items": len(files), "rss": peak_rss_mb()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1_000_000)
    parser.add_argument("--layout", choices=("flat", "nested"), default="flat",
                        help="flat: all files in one folder (default); nested: 1000 folders")
    parser.add_argument("--mini-batch-size", default="10")
    parser.add_argument("--root", default=None)
    parser.add_argument("--child", choices=("mlpipe", "walk"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    root = Path(args.root or f"/tmp/mlpipe-bench-{args.files}-{args.layout}")
    if args.child:
        worker = child_mlpipe if args.child == "mlpipe" else child_walk
        print(json.dumps(worker(str(root), args.mini_batch_size)))
        return 0
    create_files(root, args.files, args.layout)
    results = {}
    for name in ("mlpipe", "walk"):
        out = subprocess.run([sys.executable, __file__, "--child", name, "--files", str(args.files),
                              "--layout", args.layout, "--mini-batch-size", args.mini_batch_size,
                              "--root", str(root)], capture_output=True, text=True, check=True)
        results[name] = json.loads(out.stdout.strip().splitlines()[-1])
    m, w = results["mlpipe"], results["walk"]
    print(f"\n{args.files:,} files ({args.layout}), mini_batch_size {args.mini_batch_size}: "
          f"{m['batches']:,} mini-batches, {m['items']:,} files")
    print(f"{'':24}{'mlpipe':>12}{'os.walk':>12}{'ratio':>10}")
    for key, label, unit in (("first", "first mini-batch", "s"), ("last", "last mini-batch", "s"),
                             ("rss", "driver peak RSS", "MB")):
        ratio = m[key] / w[key] if w[key] else float("nan")
        print(f"{label:24}{m[key]:>10.3f}{unit:>2}{w[key]:>10.3f}{unit:>2}{ratio:>10.2f}")
    ok_first, ok_rss = m["first"] < 1.0, m["rss"] < 300
    print(f"\ntargets: first < 1 s: {'PASS' if ok_first else 'FAIL'}; "
          f"peak RSS < 300 MB: {'PASS' if ok_rss else 'FAIL'}")
    assert m["items"] == w["items"] == args.files, "every file must be listed once"
    return 0 if ok_first and ok_rss else 1


if __name__ == "__main__":
    sys.exit(main())
