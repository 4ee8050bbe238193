"""The binding compiler: pipeline YAML -> :class:`~mlpipe.plan.ExecutionPlan`.

``compile_pipeline`` resolves every binding, loads referenced component files,
merges component defaults with node overrides and checks what the schema layer
cannot see on its own (bindings, cycles, paths, resolved ranges). All problems
are reported together in one :class:`~mlpipe.diagnostics.ValidationError`.
"""

from mlpipe.compiler.component_check import validate_component
from mlpipe.compiler.overrides import OverrideSyntaxError, apply_overrides
from mlpipe.compiler.pipeline import (
    CompileResult,
    check_pipeline,
    compile_pipeline,
    default_runs_dir,
    validate_pipeline,
)

__all__ = [
    "CompileResult",
    "OverrideSyntaxError",
    "apply_overrides",
    "check_pipeline",
    "compile_pipeline",
    "default_runs_dir",
    "validate_component",
    "validate_pipeline",
]
