"""Malformed documents give diagnostics, never an exception, and no noise after a schema error."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlpipe.compiler import check_pipeline, validate_component

CASES = {
    "jobs_list": ("type: pipeline\njobs: [a, b]\n", "must be a mapping, got a list"),
    "node_scalar": ("type: pipeline\njobs:\n  a: hello\n", "must be a step mapping"),
    "component_int": ("type: pipeline\njobs:\n  a:\n    type: parallel\n    component: 5\n", "component"),
    "pipeline_input_binding": ("type: pipeline\ninputs:\n  x: ${{parent.inputs.y}}\njobs:\n"
                               "  a: {type: command, command: echo}\n", "not a binding"),
    "unbalanced_quote": ("type: pipeline\njobs:\n  a:\n    type: parallel\n    inputs:\n      d: {type: uri_folder, "
                         "path: .}\n    input_data: ${{inputs.d}}\n    task:\n      type: run_function\n      code: .\n"
                         "      entry_script: x.py\n      program_arguments: --a 'open ${{inputs.d}}\n",
                         "cannot split program_arguments: No closing quotation"),
    "bound_to_data": ("type: pipeline\ninputs:\n  s: {type: uri_folder, path: .}\njobs:\n  a:\n    type: parallel\n"
                      "    inputs:\n      d: ${{parent.inputs.s}}\n    input_data: ${{inputs.d}}\n"
                      "    mini_batch_size: ${{parent.inputs.s}}\n    task: {type: run_function, code: ., "
                      "entry_script: x.py}\n", "${{parent.inputs.s}} is a uri_folder input, not a literal"),
    "twice_bound_output": ("type: pipeline\noutputs:\n  o: {type: uri_folder}\njobs:\n"
                           "  a: {type: command, command: echo, outputs: {x: '${{parent.outputs.o}}'}}\n"
                           "  b: {type: command, command: echo, outputs: {x: '${{parent.outputs.o}}'}}\n",
                           "pipeline output 'o' is already bound to jobs.a.outputs.x"),
    "empty": ("", "empty"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_malformed_documents_are_reported(tmp_path: Path, name: str) -> None:
    text, message = CASES[name]
    (tmp_path / "x.py").write_text("")
    path = tmp_path / f"{name}.yml"
    path.write_text(text)
    result = check_pipeline(path, runs_dir=tmp_path / "runs")
    assert result.plan is None
    assert len(result.errors) == 1, [d.format() for d in result.errors]
    assert message in result.errors[0].message
    assert result.errors[0].location is not None and result.errors[0].location.line is not None
    validate_component(path)  # must not raise either
