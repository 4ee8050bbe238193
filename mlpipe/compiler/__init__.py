"""The binding compiler: pipeline YAML -> :class:`~mlpipe.plan.ExecutionPlan`.

``compile_pipeline`` resolves every binding, loads referenced component files,
merges component defaults with node overrides and checks what the schema layer
cannot see on its own (bindings, cycles, paths, resolved ranges). All problems
are reported together in one :class:`~mlpipe.diagnostics.ValidationError`.
"""

from typing import TYPE_CHECKING

from mlpipe.exports import exports_on_first_use

if TYPE_CHECKING:
    from mlpipe.compiler.component_check import validate_component
    from mlpipe.compiler.overrides import OverrideSyntaxError, apply_overrides
    from mlpipe.compiler.pipeline import (
        CompileResult,
        check_pipeline,
        compile_pipeline,
        default_runs_dir,
        validate_pipeline,
    )
    from mlpipe.compiler.standalone import validate_job

# Imported on first use: importing one module of the package must not build the others.
_EXPORTS = {
    "CompileResult": "mlpipe.compiler.pipeline",
    "OverrideSyntaxError": "mlpipe.compiler.overrides",
    "apply_overrides": "mlpipe.compiler.overrides",
    "check_pipeline": "mlpipe.compiler.pipeline",
    "compile_pipeline": "mlpipe.compiler.pipeline",
    "default_runs_dir": "mlpipe.compiler.pipeline",
    "validate_component": "mlpipe.compiler.component_check",
    "validate_job": "mlpipe.compiler.standalone",
    "validate_pipeline": "mlpipe.compiler.pipeline",
}

__getattr__ = exports_on_first_use(__name__, _EXPORTS)


__all__ = [
    "CompileResult",
    "OverrideSyntaxError",
    "apply_overrides",
    "check_pipeline",
    "compile_pipeline",
    "default_runs_dir",
    "validate_component",
    "validate_job",
    "validate_pipeline",
]
