"""JSON Schemas for editors, generated from the models (never written by hand)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from mlpipe.schema.command import CommandComponent
from mlpipe.schema.data_transfer import DataTransferCopyComponent
from mlpipe.schema.import_job import ImportComponent
from mlpipe.schema.parallel import ParallelComponent
from mlpipe.schema.pipeline import PipelineComponent, PipelineJob
from mlpipe.schema.spark import SparkComponent

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMAS: dict[str, tuple[type[BaseModel], str]] = {
    "pipeline_job": (PipelineJob, "mlpipe pipeline job (Azure ML v2 pipeline YAML)"),
    "parallel_component": (ParallelComponent, "mlpipe parallel component (Azure ML v2)"),
    "command_component": (CommandComponent, "mlpipe command component (Azure ML v2)"),
    "pipeline_component": (PipelineComponent, "mlpipe pipeline component (Azure ML v2)"),
    "spark_component": (SparkComponent, "mlpipe Spark component (Azure ML v2)"),
    "data_transfer_component": (DataTransferCopyComponent,
                                "mlpipe data transfer component (Azure ML v2)"),
    "import_component": (ImportComponent, "mlpipe import component (Azure ML v2)"),
}


def _any_of(node: Any) -> Any:
    """Discriminated unions come out as ``oneOf``; members may overlap for a JSON
    validator (an integer is also a number), so use ``anyOf``. Name patterns of
    mappings (step, input and output names) become closed ``patternProperties``."""
    if isinstance(node, dict):
        out = {("anyOf" if k == "oneOf" else k): _any_of(v) for k, v in node.items()
               if k != "discriminator"}
        if "patternProperties" in out and "additionalProperties" not in out:
            out["additionalProperties"] = False  # names must match the pattern
        return out
    if isinstance(node, list):
        return [_any_of(v) for v in node]
    return node


def build_schema(name: str) -> dict[str, Any]:
    """The JSON Schema document for ``name`` (a key of :data:`SCHEMAS`)."""
    model, title = SCHEMAS[name]
    body = _any_of(model.model_json_schema(by_alias=True, mode="validation"))
    body.pop("title", None)
    return {"$schema": JSON_SCHEMA_DIALECT, "$id": f"urn:mlpipe:schema:{name}", "title": title,
            **body}


def render_schema(name: str) -> str:
    """``build_schema(name)`` as the exact text written to disk."""
    return json.dumps(build_schema(name), indent=2, ensure_ascii=False) + "\n"


def export_schemas(out_dir: str | Path = "schemas") -> list[Path]:
    """Write ``<name>.schema.json`` for every schema into ``out_dir``; return the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in SCHEMAS:
        path = out / f"{name}.schema.json"
        path.write_text(render_schema(name), encoding="utf-8")
        written.append(path)
    return written
