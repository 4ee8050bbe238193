"""Done-when: every pipeline and component of the corpus MANIFEST (tables 1-3) gets its
verdict from ``mlpipe job validate`` / ``mlpipe component validate``; the corpus plans
carry the values the MANIFEST pins."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mlpipe.compiler import compile_pipeline
from tests.conftest import run_cli

pytestmark = pytest.mark.corpus
ROW = re.compile(r"^\| (P\d+|PC\d+|CC\d+) \| `([^`]+)` \|[^|]*\| ([^|]*) \|", re.M)


def manifest_rows(corpus: Path) -> list[tuple[str, str, bool]]:
    """``(id, path, accepted)`` for every row of tables 1-3."""
    text = (corpus / "MANIFEST.md").read_text(encoding="utf-8")
    rows = [(id_, path, "reject" not in verdict) for id_, path, verdict in ROW.findall(text)]
    assert len(rows) == 42, "tables 1-3 list 42 files"
    return rows


def _verdicts(corpus: Path, group: str, rows: list[tuple[str, str, bool]]) -> dict[str, bool]:
    proc = run_cli(group, "validate", "--output", "json", *[str(corpus / p) for _, p, _ in rows], cwd=corpus)
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    return {item["file"]: item["valid"] for item in report["files"]}


def test_every_manifest_file_gets_its_verdict(corpus: Path) -> None:
    rows = manifest_rows(corpus)
    pipelines = [r for r in rows if r[0].startswith("P") and not r[0].startswith("PC")]
    components = [r for r in rows if r not in pipelines]
    got = {**_verdicts(corpus, "job", pipelines), **_verdicts(corpus, "component", components)}
    wrong = [f"{id_} {path}: expected {'accept' if ok else 'reject'}"
             for id_, path, ok in rows if got[path] != ok]
    assert wrong == []


def test_job_validate_accepts_component_files(corpus: Path) -> None:
    comp = "azure-sdk-for-python/test_configs/components/parallel_component_with_file_input.yml"
    proc = run_cli("job", "validate", comp, cwd=corpus)
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.strip().endswith(f"{comp}: OK (parallel component)")


def test_remote_components_are_listed_in_order(corpus: Path, tmp_path: Path) -> None:
    plan = compile_pipeline(corpus / "azureml-examples/sdk/python/foundation-models/system/distillation/"
                            "conversation/pipelines/hellaswag.yaml", runs_dir=tmp_path)
    first = plan.remote_assets[0]
    assert first.kind == "component" and "dataset_downloader" in first.reference
    flow = compile_pipeline(corpus / "azureml-examples/cli/jobs/pipelines-with-components/"
                            "pipeline_job_with_flow_as_component/pipeline.yml", runs_dir=tmp_path)
    assert [(a.kind, a.reference) for a in flow.remote_assets] == [
        ("flow", "./basic/flow.dag.yaml"), ("flow", "./run.yml")]
    assert flow.step("flow_node_from_dag").inputs["text"].value == "${data.text}"


def test_literal_bound_settings_resolve(corpus: Path, tmp_path: Path) -> None:
    base = corpus / "azure-sdk-for-python/test_configs/pipeline_jobs"
    p16 = compile_pipeline(base / "helloworld_pipeline_job_defaults_with_parallel_job_file_component_literal_"
                           "input_e2e.yml", runs_dir=tmp_path).steps[0]
    assert (p16.mini_batch_error_threshold, p16.max_concurrency_per_instance) == (1, 2)
    p19 = compile_pipeline(base / "helloworld_pipeline_job_defaults_with_parallel_job_file_literal_input_e2e.yml",
                           runs_dir=tmp_path).steps[0]
    assert (p19.instance_count, p19.mini_batch_error_threshold) == (2, 2)
    p20 = compile_pipeline(base / "helloworld_pipeline_job_defaults_with_parallel_job_tabular_input_e2e.yml",
                           runs_dir=tmp_path).steps[0]
    assert p20.program_arguments[0] == "--model" and p20.program_arguments[1].endswith("test_configs/model")


def test_output_files_and_bindings(corpus: Path, tmp_path: Path) -> None:
    p02 = compile_pipeline(corpus / "azureml-examples/cli/jobs/parallel/2a_iris_batch_prediction/pipeline.yml",
                           runs_dir=tmp_path, job_name="iris")
    out = p02.steps[0].outputs["job_output_file"]
    # ${{name}} in a step's output path is the step's job name (Azure: "for pipelines, it's the
    # step job name, not the pipeline job name")
    assert out.path == str(tmp_path.resolve() / "datastores" / "workspaceblobstore" / f"iris_{p02.steps[0].name}"
                           / "aggregated_returns.csv")
    p05 = compile_pipeline(corpus / "azureml-examples/cli/jobs/pipelines/mnist-batch-identification-using-"
                           "parallel/pipeline.yml", runs_dir=tmp_path)
    view = p05.step("view_prediction_result")
    append_file = p05.step("predict_digits_mnist").outputs["job_output_file"].path
    assert append_file.endswith("parallel_run_step.txt") and view.command == f"cat {append_file}"
    p11 = compile_pipeline(corpus / "azure-sdk-for-python/test_configs/dsl_pipeline/parallel_component/pipeline.yml",
                           runs_dir=tmp_path)
    assert [s.name for s in p11.steps] == ["get_data_node", "file_batch_inference_node", "convert_data_node",
                                           "file_batch_inference_duplicate_node", "tabular_batch_inference_node"]
    tab = p11.outputs["pipeline_job_out_tabular"]
    assert tab.type == "uri_file" and tab.path.endswith("tabular_batch_inference_node/outputs/job_out_path/"
                                                        "parallel_run_step.txt")
    assert p11.step("file_batch_inference_node").outputs["job_output_path"].type == "uri_folder"
    assert [w for w in p11.warnings if "has no MLTable file" in w.message]
