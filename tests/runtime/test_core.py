"""The entry-script contract, results and append_row, with real worker processes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from mlpipe.cores import core_count
from mlpipe.data.minibatch import MiniBatch
from mlpipe.frozen import freeze
from mlpipe.plan import PrsOptions
from mlpipe.runtime import default_concurrency, run_parallel_step, worker_names
from mlpipe.sizes import parse_mini_batch_size
from tests.runtime.support import LOADER, Recorder, file_mini_batches, make_step

ECHO = """
    import os, sys
    from azureml_user.parallel_run import EntryScript

    def init():
        global logger
        logger = EntryScript().logger
        logger.info("init argv=%s env=%s out=%s", sys.argv[1:], os.environ.get("MY_FLAG"),
                    os.environ["AZUREML_BI_OUTPUT_PATH"])
        print("hello from init", flush=True)
        os.write(2, b"raw fd 2 output\\n")

    def run(mini_batch):
        logger.info("agent=%s n=%d", EntryScript().agent_name, len(mini_batch))
        return [os.path.basename(p) for p in mini_batch]

    def shutdown():
        print("shutdown called")
"""


def test_files_run_in_order_with_logs_and_entry_script(tmp_path: Path) -> None:
    step = make_step(tmp_path, ECHO, program_arguments=("--model", "m1"),
                     environment_variables=freeze({"MY_FLAG": "yes"}))
    batches = file_mini_batches(tmp_path / "data", 9, per_batch=2)
    recorder = Recorder()
    summary = run_parallel_step(step, mini_batches=batches, loader=LOADER, observers=[recorder])
    assert summary.status == "Completed", summary.reason
    assert (summary.mini_batches_total, summary.mini_batches_succeeded) == (5, 5)
    assert (summary.items_total, summary.items_succeeded, summary.items_failed) == (9, 9, 0)
    out = Path(step.outputs["out"].path) / "parallel_run_step.txt"
    assert summary.append_row_file == str(out)
    assert out.read_text().splitlines() == [f"f{i:04d}.txt" for i in range(9)]
    assert [w.process for w in recorder.started] == ["process000", "process001"]
    assert recorder.summary is summary
    assert all(a.picked_count == 1 and a.final for a in recorder.attempts)
    logs = Path(step.logs_dir) / "user"
    texts = {p.name: p.read_text() for p in (logs / "entry_script_log" / "0").iterdir()}
    assert set(texts) <= {"process000.log.txt", "process001.log.txt"}
    joined = "".join(texts.values())
    assert "init argv=['--model', 'm1'] env=yes out=" + step.outputs["out"].path in joined
    assert "|INFO|" in joined and "agent=process00" in joined
    stdout = "".join(p.read_text() for p in (logs / "stdout" / "0").iterdir())
    stderr = "".join(p.read_text() for p in (logs / "stderr" / "0").iterdir())
    assert "hello from init" in stdout and "shutdown called" in stdout
    assert "raw fd 2 output" in stderr
    # the run used the snapshot, not the live folder
    assert (Path(step.snapshot_dir) / "score.py").is_file()


def test_worker_names_follow_nodes_and_processes(tmp_path: Path) -> None:
    step = make_step(tmp_path, ECHO, workers=3, instance_count=2)
    names = [(w.node, w.process) for w in worker_names(step)]
    assert names == [(0, "process000"), (0, "process001"), (0, "process002"),
                     (1, "process000"), (1, "process001"), (1, "process002")]


def test_unset_concurrency_is_the_one_core_count(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # mlpipe.cores owns the count: the runtime's default workers (and the runner's budget,
    # the SDK's local compute) read it, so a changed count shows up here
    monkeypatch.setattr("mlpipe.runtime.concurrency.core_count", lambda: 3)
    step = make_step(tmp_path, ECHO, workers=None)
    assert len(worker_names(step)) == 3 == default_concurrency()
    assert core_count() >= 1


CONTEXT = """
    def init():
        pass

    def run(mini_batch, mini_batch_context):
        key = mini_batch_context.partition_key_value
        mini_batch = mini_batch.copy()
        mini_batch["keys"] = "/".join(f"{k}={v}" for k, v in key.items())
        mini_batch["index"] = mini_batch_context.minibatch_index
        return mini_batch
"""


def _partitions() -> list[MiniBatch]:
    out = []
    for n, (store, brand) in enumerate([("1000", "dominicks"), ("1001", "tropicana")]):
        frame = pd.DataFrame({"Store": [store] * 2, "Brand": [brand] * 2, "Quantity": [n, n + 1]})
        out.append(MiniBatch(id=f"p{n}", index=n, kind="table", payload=frame, items=2,
                             partition_key_value=freeze({"Store": store, "Brand": brand})))
    return out


def test_run_with_context_gets_partition_keys_and_dataframe_rows(tmp_path: Path) -> None:
    step = make_step(tmp_path, CONTEXT, uri_file=True, partition_keys=("Store", "Brand"))
    summary = run_parallel_step(step, mini_batches=_partitions(), loader=LOADER)
    assert summary.status == "Completed", summary.reason
    assert Path(step.outputs["out"].path).read_text().splitlines() == [
        "1000 dominicks 0 Store=1000/Brand=dominicks 0",
        "1000 dominicks 1 Store=1000/Brand=dominicks 0",
        "1001 tropicana 1 Store=1001/Brand=tropicana 1",
        "1001 tropicana 2 Store=1001/Brand=tropicana 1",
    ]


def test_dataframe_header_option_and_settings_file(tmp_path: Path) -> None:
    # the compiler read parallel_run_step.settings.json into the plan
    # (tests/compiler/test_rules.py)
    step = make_step(tmp_path, CONTEXT, prs=PrsOptions(append_row_dataframe_header=True),
                     append_row_csv=freeze({"sep": ","}))
    summary = run_parallel_step(step, mini_batches=_partitions(), loader=LOADER)
    assert summary.status == "Completed", summary.reason
    lines = Path(summary.append_row_file or "").read_text().splitlines()
    assert lines[0] == "Store,Brand,Quantity,keys,index"
    assert lines[1] == "1000,dominicks,0,Store=1000/Brand=dominicks,0"
    assert len(lines) == 5


RESULTS = """
    import os
    def init():
        pass
    def run(mini_batch):
        name = os.path.basename(mini_batch[0])
        if name == "f0000.txt":
            return None
        if name == "f0001.txt":
            return {"not": "a list"}
        if name == "f0002.txt":
            return ("a", "b", "c", "d")      # 4 results for 2 items: 2 succeeded + a warning
        if name == "f0004.txt":
            return ["only one"]              # 1 result for 2 items: 1 failed item
        return tuple(mini_batch)
"""


def test_return_values_are_counted_as_azure_does(tmp_path: Path) -> None:
    step = make_step(tmp_path, RESULTS, max_retries=0, append_row=False)
    batches = file_mini_batches(tmp_path / "data", 2, per_batch=1)
    batches += [MiniBatch(id="two", index=2, kind="files", payload=(str(tmp_path / "f0002.txt"),
                                                                    "x"), items=2),
                MiniBatch(id="four", index=3, kind="files", payload=(str(tmp_path / "f0004.txt"),
                                                                     "y"), items=2),
                MiniBatch(id="ok", index=4, kind="files", payload=("p", "q"), items=2)]
    recorder = Recorder()
    summary = run_parallel_step(step, mini_batches=batches, loader=LOADER, observers=[recorder])
    by_id = {a.mini_batch_id: a for a in recorder.attempts}
    none = by_id["mb-0000"]
    assert none.status == "Failed" and none.error_category == "ReturnValue"
    assert "should return a list or a pandas DataFrame" in (none.error_message or "")
    assert "is NoneType" in (none.error_message or "")
    assert "is dict" in (by_id["mb-0001"].error_message or "")
    assert (by_id["two"].status, by_id["two"].succeeded, by_id["two"].failed) == ("Succeeded", 2, 0)
    assert (by_id["four"].status, by_id["four"].succeeded, by_id["four"].failed) == ("Failed", 1, 1)
    assert by_id["ok"].status == "Succeeded"
    assert summary.status == "Completed"  # thresholds default to -1: ignore failures
    assert (summary.mini_batches_succeeded, summary.mini_batches_failed) == (2, 3)
    assert (summary.items_total, summary.items_succeeded, summary.items_failed) == (8, 5, 3)
    assert summary.append_row_file is None
    assert not list(Path(step.outputs["out"].path).iterdir())  # summary-only writes no rows


def _folder_step(tmp_path: Path, data: Path):  # type: ignore[no-untyped-def]
    from mlpipe.plan import PlanInput

    step = make_step(tmp_path, ECHO, mini_batch_size=parse_mini_batch_size("2"), input_data="data",
                     inputs=freeze({"data": PlanInput("data", "uri_folder", path=str(data))}))
    return step


def test_data_layer_listing_feeds_the_workers(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "sub").mkdir(parents=True)
    for name in ("b.txt", "a.txt", "sub/c.txt"):
        (data / name).write_text(name)
    step = _folder_step(tmp_path, data)
    summary = run_parallel_step(step, progress=True)  # mlpipe.data lists and loads
    assert summary.status == "Completed", summary.reason
    assert (summary.mini_batches_total, summary.items_total) == (2, 3)
    assert sorted(Path(summary.append_row_file or "").read_text().split()) == \
        ["a.txt", "b.txt", "c.txt"]


def test_bad_input_data_fails_the_step_with_the_data_error(tmp_path: Path) -> None:
    step = _folder_step(tmp_path, tmp_path / "missing")
    summary = run_parallel_step(step)
    assert summary.status == "Failed"
    assert "missing" in (summary.reason or "")
    assert (Path(step.logs_dir) / "job_result.txt").read_text().startswith("Failed")


def test_the_runtime_does_not_read_the_settings_file_again(tmp_path: Path) -> None:
    # a broken file is the compiler's error (tests/compiler/test_rules.py); the runtime
    # follows the plan
    step = make_step(tmp_path, ECHO, extra_files={"parallel_run_step.settings.json": "{oops"})
    summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "d", 1),
                                loader=LOADER)
    assert summary.status == "Completed", summary.reason
