"""The binding lexer: bindings found in both spellings; an unclosed ``${{``, a ``}}`` without
its opener and an empty ``${{}}`` are errors at their line and column, in every string where
bindings are read (command, program_arguments, inputs, args, ...)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from mlpipe.schema import load_pipeline
from mlpipe.schema.bindings import binding_expression, find_bindings, is_binding, lex


def test_bindings_in_both_spellings_and_what_is_not_a_binding() -> None:
    text = "--a ${{inputs.a}} --b $<< inputs.b >> --c ${data.text} --d {{x}}"
    assert find_bindings(text) == [("inputs.a", 4, 17), ("inputs.b", 22, 37)]
    assert lex(text)[1] == ()
    assert is_binding("  ${{ parent.inputs.x }} ") and not is_binding("${{a}} ${{b}}")
    assert binding_expression("$<<inputs.n>>") == "inputs.n"
    assert lex('python -c "print({\\"a\\": {\\"b\\": 1}})"') == ((), ())


@pytest.mark.parametrize(("text", "offset", "message", "hint"), [
    ("--drop_cols ${{inputs.drop_cols} --x ${{inputs.x}}", 12,
     "'${{' is not closed: expected '}}' in '${{inputs.drop_cols}'",
     "close it: ${{<expression>}}"),
    ("--n inputs.n}}", 12, "'}}' closes no binding: its '${{' is missing",
     "write '${{inputs.n}}'"),
    ("--n ${{ }}", 4, "empty binding '${{ }}'", "name what it binds: ${{inputs.<name>}}"),
    ("--n $<<inputs.n", 4, "'$<<' is not closed: expected '>>' in '$<<inputs.n'",
     "close it: $<<<expression>>>"),
])
def test_broken_bindings(text: str, offset: int, message: str, hint: str) -> None:
    [problem] = lex(text)[1]
    assert (problem.offset, problem.message, problem.hint) == (offset, message, hint)


PIPELINE = """\
type: pipeline
inputs:
  label: "x-${{parent.inputs.other}"
jobs:
  score:
    type: parallel
    inputs:
      data: {type: uri_folder, path: ./data}
    input_data: ${{inputs.data}}
    task:
      entry_script: score.py
      program_arguments: >-
        --data ${{inputs.data}}
        --out outputs.result}}
  train:
    type: command
    command: "python train.py --n ${{}}"
  wrangle:
    type: spark
    component: ./spark.yml
    args: --in ${{inputs.in
"""


def test_each_broken_binding_is_an_error_at_its_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "pipeline.yml"
    path.write_text(textwrap.dedent(PIPELINE))
    errors = [d for d in load_pipeline(path).errors if d.code == "binding"]
    found = [(d.key_path, d.location.line, d.location.column, d.message.split(":")[0])
             for d in errors]
    assert found == [
        ("inputs.label", 3, 13, "'${{' is not closed"),
        ("jobs.score.task.program_arguments", 14, 29, "'}}' closes no binding"),
        ("jobs.train.command", 17, 35, "empty binding '${{}}'"),
        ("jobs.wrangle.args", 21, 16, "'${{' is not closed"),
    ]


def test_broken_bindings_are_found_in_data_of_any_depth_or_sharing() -> None:
    """The walk needs no Python stack: --set and YAML aliases can make data deeper than a
    file may be, or share one list in many places."""
    from mlpipe.schema.checks import binding_syntax
    from mlpipe.schema.yamlio import PositionMap

    deep: list[object] = ["${{inputs.x"]
    for _ in range(5_000):
        deep = [deep]
    shared = ["ok", "${{}}"]
    looped: dict[str, object] = {"a": shared, "b": shared}
    looped["self"] = looped
    problems = binding_syntax({"deep": deep, "looped": looped}, PositionMap("p.yml", {}, {}, []))
    assert [p.key_path for p in problems] == ["deep" + "[0]" * 5_001, "looped.a[1]"]
