"""Print, as JSON, the keys azure-ai-ml's component schemas write when a job is submitted
(each schema's ``dump_fields``: ``Meta.exclude`` and load-only fields left out), two levels
deep; run with the Python that has azure-ai-ml.

Used by ``tests/compiler/test_dropped_keys.py`` (``MLPIPE_AZURE_AI_ML_PYTHON``).
"""

from __future__ import annotations

import json
from typing import Any


def keys(schema: Any, depth: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, field in schema.dump_fields.items():
        nested = getattr(field, "nested", None)
        sub = None
        if nested is not None and depth < 1:
            inner = nested(context=schema.context) if isinstance(nested, type) else nested
            sub = keys(inner, depth + 1) if hasattr(inner, "dump_fields") else None
        out[field.data_key or name] = sub
    return out


def main() -> None:
    from azure.ai.ml._schema.component.command_component import CommandComponentSchema
    from azure.ai.ml._schema.component.parallel_component import ParallelComponentSchema
    from azure.ai.ml._schema.component.spark_component import SparkComponentSchema
    from azure.ai.ml._schema.pipeline.pipeline_component import PipelineComponentSchema

    schemas = {"command": CommandComponentSchema, "parallel": ParallelComponentSchema,
               "spark": SparkComponentSchema, "pipeline": PipelineComponentSchema}
    print(json.dumps({kind: keys(schema(context={"base_path": "."}))
                      for kind, schema in schemas.items()}))


if __name__ == "__main__":
    main()
