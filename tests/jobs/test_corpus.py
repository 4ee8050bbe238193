"""Every pipeline MANIFEST Table 1 marks runnable runs to the manifest's results;
the cloud-only ones stop before any step with the remote asset named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.jobs.support import Ran, create, files_under, label_counts, run_here

pytestmark = [pytest.mark.corpus, pytest.mark.slow]  # the corpus's jobs run whole

EX = "azureml-examples/cli/jobs"
SDK = "azure-sdk-for-python/test_configs"
PJ = f"{SDK}/pipeline_jobs"
PIPELINES = {
    "P01": f"{EX}/parallel/1a_oj_sales_prediction/pipeline.yml",
    "P02": f"{EX}/parallel/2a_iris_batch_prediction/pipeline.yml",
    "P03": f"{EX}/parallel/3a_mnist_batch_identification/pipeline.yml",
    "P04": f"{EX}/pipelines/iris-batch-prediction-using-parallel/pipeline.yml",
    "P05": f"{EX}/pipelines/mnist-batch-identification-using-parallel/pipeline.yml",
    "P06": f"{EX}/pipelines-with-components/pipeline_job_with_flow_as_component/pipeline.yml",
    "P07": "azureml-examples/sdk/python/foundation-models/system/distillation/conversation/pipelines/hellaswag.yaml",
    "P08": "azureml-examples/sdk/python/foundation-models/system/distillation/math/pipelines/gsm8k.yaml",
    "P09": "azureml-examples/sdk/python/foundation-models/system/distillation/nli/pipelines/snli.yaml",
    "P10": "azureml-examples/sdk/python/foundation-models/system/distillation/nlu_qa/pipelines/openbookqa.yaml",
    "P11": f"{SDK}/dsl_pipeline/parallel_component/pipeline.yml",
    "P14": f"{SDK}/dsl_pipeline/parallel_component_with_tabular_input/pipeline.yml",
    "P15": f"{PJ}/helloworld_pipeline_job_defaults_with_parallel_job_file_component_input_e2e.yml",
    "P16": f"{PJ}/helloworld_pipeline_job_defaults_with_parallel_job_file_component_literal_input_e2e.yml",
    "P17": f"{PJ}/helloworld_pipeline_job_defaults_with_parallel_job_file_dataset_input_e2e.yml",
    "P18": f"{PJ}/helloworld_pipeline_job_defaults_with_parallel_job_file_input_e2e.yml",
    "P19": f"{PJ}/helloworld_pipeline_job_defaults_with_parallel_job_file_literal_input_e2e.yml",
    "P20": f"{PJ}/helloworld_pipeline_job_defaults_with_parallel_job_tabular_input_e2e.yml",
    "P21": f"{PJ}/helloworld_pipeline_job_inline_file_parallel.yml",
    "P23": f"{PJ}/serverless_compute/all_types/parallel/pipeline.yml",
    "P24": f"{PJ}/serverless_compute/all_types/parallel/pipeline_serverless_compute.yml",
}
IRIS_LABELS = {"setosa": 49, "versicolor": 23, "virginica": 2}


class CorpusRuns(dict):
    """Runs each corpus pipeline once per session, on first use, in this process
    (``mlpipe job create`` itself is exercised by the sample and create tests)."""

    def __init__(self, corpus: Path, runs: Path):
        super().__init__()
        self.corpus, self.runs = corpus, runs

    def __missing__(self, case: str) -> Ran:
        ran = run_here(self.corpus / PIPELINES[case], self.runs, case)
        self[case] = ran
        return ran


@pytest.fixture(scope="session")
def corpus_runs(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> CorpusRuns:
    return CorpusRuns(corpus, tmp_path_factory.mktemp("corpus-runs"))


def completed(ran: Ran) -> None:
    errors = {n: s.get("error") for n, s in (ran.record or {}).get("steps", {}).items()}
    assert ran.proc.returncode == 0, (ran.proc.stderr[-3000:], errors)
    assert ran.record and ran.record["status"] == "completed"


def parallel_counts(ran: Ran, step: str) -> tuple[int, int, int]:
    summary = ran.summary(step)
    return summary["mini_batches_total"], summary["items_succeeded"], summary["items_failed"]


# --- many models (P01, P23, P24) -------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("case", ["P01", "P23", "P24"])
def test_oj_sales_many_models(corpus_runs: CorpusRuns, case: str) -> None:
    ran = corpus_runs[case]
    completed(ran)
    parts = files_under(ran.output("partition_job", "tabular_output_data"), "part.csv")
    assert len(parts) == 99
    lines = parts[0].read_text().splitlines()
    assert lines[0] == "WeekStarting,Quantity,Advert,Price,Revenue" and len(lines) == 122
    assert (ran.output("partition_job", "tabular_output_data") / "MLTable").is_file()
    assert parallel_counts(ran, "parallel_train") == (99, 11979, 0)
    models = files_under(ran.output("parallel_train", "model_folder"), "model.json")
    assert len(models) == 99
    assert all(len(m.relative_to(ran.output("parallel_train", "model_folder")).parts) == 3
               for m in models)
    assert {json.loads(m.read_text())["AZUREML_PARALLEL_EXAMPLE"] for m in models} == {"1a_yaml"}
    assert not ran.step("parallel_train").get("append_row_file")


# --- iris tabular (P02, P04, P14, P20) --------------------------------------------------

@pytest.mark.parametrize("case,step,batches", [
    ("P02", "batch_prediction", (9, 10)),
    ("P04", None, (9, 10)),
    ("P14", None, (74,)),
    ("P20", "hello_world_inline_parallel_tabular_job_1", (1,)),
])
def test_iris_tabular_scoring(corpus_runs: CorpusRuns, case: str, step: str | None,
                              batches: tuple[int, ...]) -> None:
    ran = corpus_runs[case]
    completed(ran)
    step = step or only_parallel_step(ran)
    total, ok, failed = parallel_counts(ran, step)
    assert total in batches and (ok, failed) == (74, 0)
    lines = ran.append_lines(step)
    assert len(lines) == 74
    assert label_counts(lines) == IRIS_LABELS
    assert all(len(line.split()) == 5 for line in lines)


def only_parallel_step(ran: Ran) -> str:
    assert ran.record is not None
    names = [n for n, s in ran.record["steps"].items() if s["kind"] == "parallel"]
    assert len(names) == 1
    return names[0]


def test_p02_append_row_file_keeps_the_template_basename(corpus_runs: CorpusRuns) -> None:
    ran = corpus_runs["P02"]
    completed(ran)
    assert Path(ran.step("batch_prediction")["append_row_file"]).name == "aggregated_returns.csv"


# --- mnist (P03, P05, P17) --------------------------------------------------------------

@pytest.mark.parametrize("case", ["P03", "P05"])
def test_mnist_digits(corpus_runs: CorpusRuns, case: str) -> None:
    ran = corpus_runs[case]
    completed(ran)
    pngs = files_under(ran.output("prepare_data", "mnist_png") / "mnist", "*.png")
    assert [p.name for p in pngs] == [f"{k}.png" for k in range(10)]
    assert parallel_counts(ran, "predict_digits_mnist") == (2, 10, 0)
    lines = ran.append_lines("predict_digits_mnist")
    assert sorted(lines) == [f"{k}.png: {k}" for k in range(10)]
    if case == "P05":
        mltable = (ran.output("prepare_data", "mnist_png") / "MLTable").read_text()
        assert "folder: ./mnist" in mltable
        printed = Path(ran.step("view_prediction_result")["stdout"]).read_text().splitlines()
        assert sorted(printed) == sorted(lines)


def test_p17_folder_item_fails_but_step_completes(corpus_runs: CorpusRuns) -> None:
    ran = corpus_runs["P17"]
    completed(ran)
    assert parallel_counts(ran, "predict_digits_mnist") == (1, 0, 1)
    assert ran.summary("predict_digits_mnist")["mini_batches_failed"] == 1
    path = ran.step("predict_digits_mnist").get("append_row_file")
    assert path is None or Path(path).read_text() == ""


# --- file pass-through (P15, P16, P18, P19, P21) ---------------------------------------

@pytest.mark.parametrize("case,foo", [("P15", None), ("P16", None), ("P18", "bar"), ("P19", "bar")])
def test_pass_through_receipts(corpus: Path, corpus_runs: CorpusRuns, case: str,
                               foo: str | None) -> None:
    ran = corpus_runs[case]
    completed(ran)
    step = only_parallel_step(ran)
    assert parallel_counts(ran, step) == (4, 4, 0)
    folder = ran.output(step, "job_output_path")
    receipts = {p.name: json.loads(p.read_text()) for p in files_under(folder)}
    assert sorted(receipts) == ["0.png", "1.png", "2.png", "3.png"]
    for name, receipt in receipts.items():
        source = Path(receipt["source"])
        assert source.name == name and receipt["bytes"] == source.stat().st_size
        assert receipt["FOO"] == foo
    if case in ("P18", "P19"):
        assert folder == ran.pipeline_output("job_out_path")
    workers = {(w["node"], w["process"]) for w in ran.step(step)["workers"]}
    if case == "P16":  # max_concurrency_per_instance bound to a pipeline literal: 2
        nodes = {node for node, _ in workers}
        assert workers == {(n, p) for n in nodes for p in ("process000", "process001")}
    if case == "P19":  # resources.instance_count bound to a pipeline literal: 2
        assert workers == {(0, "process000"), (1, "process000")}


def test_p21_copies_the_input_files(corpus: Path, corpus_runs: CorpusRuns) -> None:
    ran = corpus_runs["P21"]
    completed(ran)
    assert parallel_counts(ran, "hello_world_inline_paralleljob") == (4, 4, 0)
    copies = files_under(ran.output("hello_world_inline_paralleljob", "job_output_path"))
    assert [c.name for c in copies] == ["0.png", "1.png", "2.png", "3.png"]
    originals = corpus / SDK / "dataset/mnist-data"
    for copy in copies:
        assert copy.read_bytes() == (originals / copy.name).read_bytes()


# --- five steps (P11) -------------------------------------------------------------------

@pytest.mark.slow
def test_p11_five_steps(corpus: Path, corpus_runs: CorpusRuns) -> None:
    dataset = corpus / SDK / "dsl_pipeline/parallel_component/dataset"
    before = sorted((p.relative_to(dataset), p.stat().st_mtime) for p in dataset.rglob("*"))
    ran = corpus_runs["P11"]
    completed(ran)
    names = lambda folder: sorted(p.name for p in files_under(folder))  # noqa: E731
    assert names(ran.output("get_data_node", "file_output_data")) == \
        ["0.png", "1.png", "2.png", "3.png", "MLTable"]
    assert names(ran.output("get_data_node", "tabular_output_data")) == ["MLTable", "iris.csv"]
    assert parallel_counts(ran, "file_batch_inference_node") == (4, 4, 0)
    assert names(ran.output("file_batch_inference_node", "job_output_path")) == \
        ["0.png", "1.png", "2.png", "3.png"]
    converted = ran.output("convert_data_node", "file_output_data")
    assert names(converted) == ["0.png", "1.png", "2.png", "3.png", "MLTable"]
    assert (converted / "MLTable").read_text().count("file:") == 4
    assert parallel_counts(ran, "file_batch_inference_duplicate_node") == (4, 4, 0)
    assert names(ran.pipeline_output("pipeline_job_out_file")) == ["0.png", "1.png", "2.png", "3.png"]
    assert parallel_counts(ran, "tabular_batch_inference_node") == (74, 74, 0)
    lines = ran.append_lines("tabular_batch_inference_node")
    assert len(lines) == 74 and label_counts(lines) == IRIS_LABELS
    assert sorted((p.relative_to(dataset), p.stat().st_mtime) for p in dataset.rglob("*")) == before


# --- not runnable offline (P06-P10) -----------------------------------------------------

@pytest.mark.parametrize("case,first", [
    ("P06", "flow.dag.yaml"),
    ("P07", "dataset_downloader"),
    ("P08", "dataset_downloader"),
    ("P09", "dataset_downloader"),
    ("P10", "dataset_downloader"),
])
def test_remote_assets_stop_the_job_before_any_step(corpus: Path, tmp_path: Path, case: str,
                                                     first: str) -> None:
    ran = create(corpus / PIPELINES[case], tmp_path / "runs", case)
    assert ran.proc.returncode == 1
    errors = [line for line in ran.proc.stderr.splitlines() if "remote asset not available offline" in line]
    assert errors, ran.proc.stderr
    assert first in errors[0]
    assert "Traceback" not in ran.proc.stderr
    assert ran.record is None and not (tmp_path / "runs" / case).exists()
