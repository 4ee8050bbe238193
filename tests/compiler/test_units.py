"""The compiler's small parts: binding parsing, argument splitting, overrides, PRS flags, ordering."""

from __future__ import annotations

import pytest

from mlpipe.compiler.bindings import (
    expand_optional,
    parse_reference,
    references_in,
    split_arguments,
    whole_reference,
)
from mlpipe.compiler.graph import order_steps
from mlpipe.compiler.overrides import OverrideSyntaxError, apply_overrides
from mlpipe.compiler.prs_args import parse_prs_arguments


@pytest.mark.parametrize("text, scope, name, step", [
    ("${{parent.inputs.x}}", "parent_input", "x", None),
    ("${{ parent.outputs.y }}", "parent_output", "y", None),
    ("${{parent.jobs.prep.outputs.out}}", "step_output", "out", "prep"),
    ("${{inputs.data}}", "input", "data", None),
    ("$<<inputs.data>>", "input", "data", None),
    ("${{outputs.o}}", "output", "o", None),
    ("${{name}}", "template", "name", None),
    ("${{output_name}}", "template", "output_name", None),
    ("${{default_datastore}}", "template", "default_datastore", None),
    ("${{parent.jobs}}", "unknown", "parent.jobs", None),
])
def test_references(text: str, scope: str, name: str, step: str | None) -> None:
    ref = whole_reference(text)
    assert ref is not None and (ref.scope, ref.name, ref.step) == (scope, name, step)


def test_single_braces_are_not_bindings() -> None:
    assert whole_reference("${data.text}") is None and references_in("${data.text}") == []
    assert parse_reference("inputs.x").text == "${{inputs.x}}"


def test_optional_parts() -> None:
    keep = lambda ref: ref.name == "a"  # noqa: E731
    assert expand_optional("run $[[--a ${{inputs.a}}]] $[[--b ${{inputs.b}}]]", keep) == "run --a ${{inputs.a}} "


def test_split_keeps_paths_whole_and_splits_literals() -> None:
    values = {"p": ("/data/my folder", True), "lit": ("two words", False)}
    args = split_arguments("--p ${{inputs.p}} --l ${{inputs.lit}} --q 'x y'", lambda ref: values[ref.name])
    assert args == ["--p", "/data/my folder", "--l", "two", "words", "--q", "x y"]


def test_overrides() -> None:
    data = {"jobs": {"s": {"mini_batch_size": "10", "keys": ["a", "b"], "n": 1}}}
    out, problems = apply_overrides(data, ["jobs.s.mini_batch_size=5", "jobs.s.keys.1=c", "jobs.s.n=2",
                                           "jobs.s.new=[1, 2]", "jobs.s.flag=true"])
    assert problems == [] and data["jobs"]["s"]["mini_batch_size"] == "10"  # the input is not changed
    assert out["jobs"]["s"] == {"mini_batch_size": "5", "keys": ["a", "c"], "n": 2, "new": [1, 2], "flag": True}
    _, problems = apply_overrides(data, ["jobs.ss.x=1", "jobs.s.keys.7=x"])
    assert [p.message for p in problems] == ["cannot set: no key 'ss' in jobs",
                                             "cannot set: jobs.s.keys is a list of 2 items; '7' is not an index in it"]
    assert problems[0].hint == "did you mean 's'?" and problems[0].location.file == "--set"
    with pytest.raises(OverrideSyntaxError):
        apply_overrides(data, ["jobs.s"])


def test_overrides_make_the_mappings_a_key_path_needs() -> None:
    """As az ml's --set: settings.force_rerun=True in a file with no settings; a string on the
    way (jobs.s.component is a file reference) is not a mapping."""
    data = {"jobs": {"s": {"component": "./c.yml"}}}
    out, problems = apply_overrides(data, ["settings.force_rerun=True",
                                           "jobs.s.resources.instance_count=2"])
    assert problems == []
    assert out["settings"] == {"force_rerun": True}
    assert out["jobs"]["s"]["resources"] == {"instance_count": 2}
    _, problems = apply_overrides(data, ["jobs.s.component.name=x"])
    assert [p.message for p in problems] == ["cannot set: 'component' in jobs.s is not a mapping"]


def test_prs_flags() -> None:
    values, problems = parse_prs_arguments(
        ["--model", "m", "--error_threshold=-1", "--task_overhead_timeout", "0", "--copy_logs_to_parent", "maybe",
         "--append_row_dataframe_header", "--progress_update_timeout"])
    assert values == {"error_threshold": -1, "append_row_dataframe_header": True}
    assert [p.message for p in problems] == [
        "--task_overhead_timeout: must be in (0, 259200], got 0",
        "--copy_logs_to_parent: must be True or False, got 'maybe'",
        "--progress_update_timeout needs a value"]
    _, problems = parse_prs_arguments(["--first_task_creaton_timeout", "5", "--model_path", "x"])
    assert [(p.severity, p.hint) for p in problems] == [("warning", "did you mean '--first_task_creation_timeout'?")]
    values, problems = parse_prs_arguments(["--append_row_file_name", "scores.txt",
                                            "--append_row_file_name", "a/b.txt"])
    assert values == {"append_row_file_name": "scores.txt"}  # v1's append_row_file_name
    assert [p.message for p in problems] == [
        "--append_row_file_name: must be a file name (no folder), got 'a/b.txt'"]


def test_order_and_cycles() -> None:
    order, cycles = order_steps(["c", "a", "b", "d"], {"a": ["b"], "d": ["c"]})
    assert order == ["c", "b", "a", "d"] and cycles == []
    order, cycles = order_steps(["x", "y", "z"], {"x": ["y"], "y": ["x"], "z": ["x"]})
    assert order == [] and len(cycles) == 1 and set(cycles[0]) == {"x", "y"}
