"""Every sample in samples/ runs end to end with the expected content."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.jobs.support import Ran, create, files_under

pytestmark = pytest.mark.slow  # the samples run whole: CI's second stage

SAMPLES = REPO / "samples"


@pytest.fixture(scope="session")
def sample_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Ran]:
    runs = tmp_path_factory.mktemp("sample-runs")
    cache: dict[str, Ran] = {}

    class Runs(dict):
        def __missing__(self, sample: str) -> Ran:
            ran = create(SAMPLES / sample / "pipeline.yml", runs, sample.replace("-", "_"))
            self[sample] = ran
            return ran

    return Runs(cache)


def completed(ran: Ran) -> None:
    assert ran.proc.returncode == 0, ran.proc.stdout + ran.proc.stderr
    assert ran.record and ran.record["status"] == "completed"


def test_file_batch(sample_runs: dict[str, Ran]) -> None:
    ran = sample_runs["file-batch"]
    completed(ran)
    summary = ran.summary("count_words")
    assert summary["mini_batches_total"] == 4 and summary["items_succeeded"] == 20
    rows = {line.split()[0]: line.split()[1:] for line in ran.append_lines("count_words")}
    assert sorted(rows) == [f"doc_{i:02d}.txt" for i in range(20)]
    text = (SAMPLES / "file-batch" / "data" / "doc_03.txt").read_text()
    words = [w for w in text.split() if len(w) >= 2]
    assert rows["doc_03.txt"] == [str(len(text.splitlines())), str(len(words)), str(len(text))]
    assert "job: file_batch" in ran.proc.stdout and "count_words" in ran.proc.stdout


def test_tabular_scoring(sample_runs: dict[str, Ran]) -> None:
    ran = sample_runs["tabular-scoring"]
    completed(ran)
    lines = ran.append_lines("score_houses")
    assert len(lines) == 120
    prices = {int(a): int(b) for a, b in (line.split() for line in lines)}
    assert sorted(prices) == list(range(1, 121))
    for hid in (1, 57, 120):
        rooms, area, age = 1 + hid % 5, 30 + (hid * 7) % 90, hid % 40
        assert prices[hid] == 50000 + 20000 * rooms + 1500 * area - 800 * age
    assert ran.summary("score_houses")["mini_batches_total"] > 1  # "1kb" packs rows by size
    assert Path(ran.step("score_houses")["append_row_file"]).is_relative_to(ran.record["run_dir"])


def test_many_models(sample_runs: dict[str, Ran]) -> None:
    ran = sample_runs["many-models"]
    completed(ran)
    parts = files_under(ran.output("partition", "partitioned"), "part.csv")
    assert len(parts) == 12
    assert parts[0].read_text().splitlines()[0] == "week,price,units"
    summary = ran.summary("train")
    assert summary["mini_batches_total"] == 12 and summary["items_succeeded"] == 240
    assert summary["items_failed"] == 0
    models = files_under(ran.pipeline_output("models"), "model.json")
    assert len(models) == 12
    north_apples = json.loads((ran.pipeline_output("models") / "north" / "apples" / "model.json").read_text())
    assert north_apples["keys"] == {"region": "north", "product": "apples"}
    assert north_apples["rows"] == 20 and north_apples["tag"] == "sample"
    assert north_apples["intercept"] == pytest.approx(100, abs=1e-6)
    assert north_apples["slope"] == pytest.approx(-2, abs=1e-6)
    assert len(ran.append_lines("train")) == 240


def test_command_parallel_command(sample_runs: dict[str, Ran]) -> None:
    ran = sample_runs["command-parallel-command"]
    completed(ran)
    assert len(files_under(ran.output("make_numbers", "numbers"))) == 12
    assert ran.summary("sum_numbers")["mini_batches_total"] == 4
    assert len(ran.append_lines("sum_numbers")) == 12
    summary = json.loads((ran.pipeline_output("summary") / "summary.json").read_text())
    assert summary == {"files": 12, "numbers": 120, "total": 7260, "sum_of_squares": 583220}
    stdout = Path(ran.step("summarize")["stdout"]).read_text()
    assert json.loads(stdout) == summary
    order = [ran.step(s)["started_at"] for s in ("make_numbers", "sum_numbers", "summarize")]
    assert order == sorted(order)


def test_set_override_changes_the_run(tmp_path: Path) -> None:
    ran = create(SAMPLES / "file-batch" / "pipeline.yml", tmp_path / "runs", "override",
                 "--set", "jobs.count_words.mini_batch_size=10")
    completed(ran)
    assert ran.summary("count_words")["mini_batches_total"] == 2
    assert len(ran.append_lines("count_words")) == 20


def test_invalid_override_is_a_validation_error(tmp_path: Path) -> None:
    ran = create(SAMPLES / "file-batch" / "pipeline.yml", tmp_path / "runs", "bad",
                 "--set", "jobs.count_words.mini_batch_sise=10")
    assert ran.proc.returncode == 1
    assert "mini_batch_sise" in ran.proc.stderr and "Traceback" not in ran.proc.stderr
    assert ran.record is None


def test_quickstart_from_repo_root_uses_default_runs_dir(tmp_path: Path) -> None:
    """README's gesture: run from the repo root, runs land in ./mlpipe-runs (here: a copy)."""
    from tests.conftest import run_cli

    work = tmp_path / "repo"
    (work / "samples").mkdir(parents=True)
    import shutil

    shutil.copytree(SAMPLES / "file-batch", work / "samples" / "file-batch")
    env = {"MLPIPE_RUNS_DIR": ""}
    proc = run_cli("job", "create", "--file", "samples/file-batch/pipeline.yml", "--no-progress",
                   cwd=work, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = list((work / "mlpipe-runs").glob("*/job.json"))
    assert len(records) == 1
    name = records[0].parent.name
    assert name.startswith("file-batch-word-count_") and f"job: {name}" in proc.stdout
    listed = run_cli("job", "list", cwd=work, env=env)
    assert name in listed.stdout
