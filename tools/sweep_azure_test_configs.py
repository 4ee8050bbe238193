"""Sweep azure-ai-ml's own test configurations: azure-ai-ml's offline verdict beside
``mlpipe job validate``'s, one row per job or component YAML.

    python tools/sweep_azure_test_configs.py CONFIGS --azure-python PYTHON [--markdown]

``CONFIGS`` is a checkout of ``sdk/ml/azure-ai-ml/tests/test_configs`` (Azure/azure-sdk-for-python);
``PYTHON`` a Python with azure-ai-ml installed (``python -m venv /tmp/aml &&
/tmp/aml/bin/pip install azure-ai-ml==1.35.2``). azure-ai-ml's verdict is ``load_job`` (or
``load_component`` for a component) and, where it has one, the entity's ``_validate()``:
both offline. Files that are neither a job nor a component (environments, data, models,
deployments, ...) are left out. The table ends with the counts; a row whose verdicts differ
is marked ``DIFF``. Nothing from the configurations is copied into the project.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

# runs in azure-ai-ml's Python: one JSON verdict per file named on stdin
AZURE_JUDGE = r'''
import json, sys, warnings, logging
warnings.filterwarnings("ignore"); logging.disable(logging.CRITICAL)
import yaml
from azure.ai.ml import load_component, load_job
ASSETS = ("environment", "data", "model", "compute", "endpoint", "deployment", "workspace",
          "registry", "datastore", "connection", "schedule", "featureset", "featurestore",
          "capabilityhost", "index", "serverless", "marketplace", "batch", "online")
def kind(data):
    if not isinstance(data, dict):
        return None
    schema = str(data.get("$schema", "")).lower()
    tail = schema.rsplit("/", 1)[-1]
    if "component" in tail:
        return "component"
    if tail.endswith("job.schema.json"):
        return "job"
    if any(word in tail for word in ASSETS):
        return None
    kind = str(data.get("type", "")).lower()
    if kind == "pipeline":
        return "job"
    if kind in ("parallel", "spark", "import", "data_transfer", "command", ""):
        if "command" not in data and kind in ("command", ""):
            return None
        jobby = any(k in data for k in ("compute", "experiment_name", "limits", "services",
                                          "identity"))
        return "job" if jobby and "version" not in data else "component"
    if kind in ("sweep", "automl", "finetuning", "distillation"):
        return "job"
    return None
for line in sys.stdin:
    path = line.strip()
    try:
        data = yaml.safe_load(open(path, encoding="utf-8"))
    except Exception as exc:
        print(json.dumps({"file": path, "kind": None, "ok": None, "why": f"yaml: {exc}"}))
        continue
    what = kind(data)
    if what is None:
        print(json.dumps({"file": path, "kind": None, "ok": None, "why": "not a job/component"}))
        continue
    try:
        entity = load_component(path) if what == "component" else load_job(path)
        check = getattr(entity, "_validate", None)
        result = check() if check is not None else None
        ok = result is None or result.passed
        why = "" if ok else "; ".join(f"{k}: {v}" for k, v in result.error_messages.items())
    except Exception as exc:
        ok, why = False, f"{type(exc).__name__}: {exc}"
    print(json.dumps({"file": path, "kind": what, "ok": ok, "why": " ".join(why.split())[:300]}),
          flush=True)
'''


def azure_verdicts(configs: Path, python: str) -> list[dict]:
    files = sorted(str(p) for p in configs.rglob("*") if p.suffix in (".yml", ".yaml"))
    proc = subprocess.run([python, "-c", AZURE_JUDGE], input="\n".join(files), text=True,
                          capture_output=True, env={**os.environ, "PYTHONWARNINGS": "ignore"},
                          cwd=configs, timeout=3600)
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if not rows:
        sys.exit(f"azure-ai-ml's Python gave no verdicts:\n{proc.stderr[-2000:]}")
    return [row for row in rows if row["kind"] is not None]


def mlpipe_verdicts(files: list[str], cwd: Path) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for start in range(0, len(files), 50):  # one process per 50 files
        proc = subprocess.run([sys.executable, "-m", "mlpipe", "job", "validate",
                               *files[start:start + 50], "--output", "json"],
                              capture_output=True, text=True, cwd=cwd, timeout=1800)
        for entry in json.loads(proc.stdout)["files"]:
            errors = [d for d in entry["diagnostics"] if d["severity"] == "error"]
            first = errors[0] if errors else None
            out[str(Path(cwd, entry["file"]).resolve())] = {
                "ok": entry["valid"],
                "why": f"{first['key_path'] or ''}: {first['message']}" if first else ""}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("configs", type=Path, help="a checkout of azure-ai-ml's tests/test_configs")
    parser.add_argument("--azure-python", required=True, help="a Python with azure-ai-ml")
    parser.add_argument("--markdown", action="store_true", help="a Markdown table")
    parser.add_argument("--only-diff", action="store_true", help="only the rows that differ")
    args = parser.parse_args(argv)
    configs = args.configs.resolve()
    theirs = azure_verdicts(configs, args.azure_python)
    ours = mlpipe_verdicts([row["file"] for row in theirs], configs)
    same = 0
    lines = ["| file | kind | azure-ai-ml | mlpipe | |", "| --- | --- | --- | --- | --- |"] \
        if args.markdown else []
    for row in theirs:
        mine = ours.get(str(Path(row["file"]).resolve()), {"ok": None, "why": "not judged"})
        agree = mine["ok"] == row["ok"]
        same += agree
        if args.only_diff and agree:
            continue
        name = str(Path(row["file"]).relative_to(configs))
        verdict = ("valid" if row["ok"] else f"refused ({row['why'][:120]})")
        mine_text = ("valid" if mine["ok"] else f"refused ({mine['why'][:120]})")
        if args.markdown:
            lines.append(f"| `{name}` | {row['kind']} | {verdict} | {mine_text} | "
                         f"{'' if agree else 'DIFF'} |")
        else:
            lines.append(f"{'    ' if agree else 'DIFF'} {name}: azure-ai-ml {verdict}; "
                         f"mlpipe {mine_text}")
    lines.append(f"\n{same}/{len(theirs)} files get azure-ai-ml's verdict "
                 f"({sum(1 for r in theirs if r['ok'])} valid for azure-ai-ml)")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
