"""Hypothesis strategies for hostile inputs: mutated pipelines, components, MLTable files,
``--set`` values, and raw YAML text attacks (aliases, deep nesting, huge integers)."""

from __future__ import annotations

import copy
from typing import Any

import yaml
from hypothesis import strategies as st

from mlpipe.limits import MAX_DEPTH, MAX_INT_DIGITS

HOSTILE_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=20),
    st.sampled_from(["", " ", "~", "..", "../../..", "/etc/passwd", "${{", "${{parent.inputs}}",
                     "${{inputs.x}}", "${{outputs.}}", "azureml:", "azureml:x:1", "0", "-1",
                     "1e400", "10kb", "0kb", "café", "\u202e", "a\x00b", "*", "[", "{",
                     "parallel", "pipeline", "command", "mltable", "uri_folder", "uri_file",
                     "run_function", "append_row", "summary_only", "ro_mount", "direct"]),
    st.integers(min_value=MAX_INT_DIGITS - 2, max_value=MAX_INT_DIGITS + 60).map(
        lambda n: int("1" + "0" * n)),
    st.builds(lambda piece, n: piece * n,
              st.sampled_from(["${{", "$[[", "$<<", " ", "}}", "]]", "${{ ", "../", "a"]),
              st.integers(1, 5_000)),
)
HOSTILE_VALUES = st.recursive(
    HOSTILE_SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=6,
)
KEYS = st.one_of(st.text(max_size=12), st.sampled_from(
    ["type", "inputs", "outputs", "jobs", "task", "code", "entry_script", "path", "mode",
     "component", "mini_batch_size", "input_data", "environment", "settings", "resources",
     "retry_settings", "logging_level", "partition_keys", "program_arguments", "append_row_to",
     "transformations", "paths", "filter", "file", "folder", "pattern", "$schema", "name",
     "version", "error_threshold", "max_concurrency_per_instance", "limits", "identity"]))


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(data, dict):
        for key, value in data.items():
            out += _paths(value, prefix + (key,))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            out += _paths(value, prefix + (index,))
    return out


def _get(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        data = data[part]
    return data


def _deep(depth: int, leaf: Any, as_list: bool) -> Any:
    for _ in range(depth):
        leaf = [leaf] if as_list else {"k": leaf}
    return leaf


@st.composite
def mutated(draw: st.DrawFn, base: dict[str, Any], max_steps: int = 4) -> dict[str, Any]:
    """``base`` with 1-``max_steps`` random deletions, replacements and insertions."""
    data = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, max_steps))):
        path = draw(st.sampled_from(_paths(data)))
        node = _get(data, path)
        action = draw(st.sampled_from(["replace", "delete", "insert", "deep", "retype"]))
        if action == "insert" and isinstance(node, dict):
            node[draw(KEYS)] = draw(HOSTILE_VALUES)
        elif action == "insert" and isinstance(node, list):
            node.insert(draw(st.integers(0, len(node))), draw(HOSTILE_VALUES))
        elif not path:
            continue
        elif action == "delete":
            parent = _get(data, path[:-1])
            del parent[path[-1]]
        else:
            parent = _get(data, path[:-1])
            if action == "deep":
                depth = draw(st.sampled_from([3, MAX_DEPTH - 5, MAX_DEPTH + 5]))
                parent[path[-1]] = _deep(depth, node, draw(st.booleans()))
            elif action == "retype":
                parent[path[-1]] = draw(st.sampled_from(
                    [[node], {"x": node}, str(node), None, 7, True, [], {}]))
            else:
                parent[path[-1]] = draw(HOSTILE_VALUES)
    return data


def dump(data: Any) -> str:
    """YAML text of ``data`` (any Python value hypothesis can produce)."""
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120)


def _bomb(levels: int, width: int) -> str:
    lines = ["b0: &b0 [" + ", ".join(["lol"] * width) + "]"]
    lines += [f"b{i}: &b{i} [" + ", ".join([f"*b{i - 1}"] * width) + "]"
              for i in range(1, levels)]
    return "\n".join(lines) + "\n"


TEXT_ATTACKS = st.one_of(
    st.builds(_bomb, st.integers(2, 12), st.integers(2, 12)),
    st.integers(1, 60_000).map(lambda n: "deep: " + "[" * n + "]" * n + "\n"),
    st.integers(1, 3_000).map(
        lambda n: "deep:\n" + "".join(" " * (i + 1) + f"k{i}:\n" for i in range(n))
        + " " * (n + 1) + "x: 1\n"),
    st.integers(1, 6_000).map(lambda n: f"mini_batch_size: 1{'0' * n}\n"),
    st.integers(1, 6_000).map(lambda n: f"big: !!int 1{'0' * n}\n"),
    st.text(max_size=60).map(lambda t: f"junk: {t}\n"),
    st.sampled_from(["a: &x [*x]\n", "a: *nope\n", "<<: *nope\n", "<<: [1, 2]\n", "? [a]\n: 1\n",
                     "yes: 1\n", "a: !!python/object:os.system x\n", "a: !custom 1\n",
                     "---\n---\n", "\t- x\n", "a: b: c\n", "%YAML 1.1\n---\nx: 1\n",
                     "a: 2001-12-14\n", "a: !!binary aGk=\n", "a: 0o17\n", "a: 1_000\n",
                     "a: 190:20:30\n", "a: .inf\n", "a: 0x_FF\n"]),
)


@st.composite
def attacked_text(draw: st.DrawFn, base_text: str) -> str:
    """``base_text`` with a text attack put at the end, the start, or inside ``jobs``."""
    attack = draw(TEXT_ATTACKS)
    where = draw(st.sampled_from(["end", "start", "cut"]))
    if where == "end":
        return base_text + attack
    if where == "start":
        return attack + base_text
    cut = draw(st.integers(0, len(base_text)))
    return base_text[:cut] + attack + base_text[cut:]


SET_PATHS = st.one_of(
    st.sampled_from(["jobs.score_houses.mini_batch_size", "jobs.score_houses.task.code",
                     "jobs.score_houses.task.entry_script", "inputs.houses.path",
                     "jobs.score_houses.inputs.houses", "type", "jobs", "jobs.0",
                     "jobs.score_houses.resources.instance_count", "outputs.scores.path",
                     "jobs.score_houses.retry_settings.timeout", "settings.default_compute",
                     "jobs.score_houses.task.environment.conda_file", "inputs.houses.mode",
                     "jobs.score_houses.type", "jobs.score_houses.task.type"]),
    st.lists(st.text(alphabet="abcjobs_0123456789-²٣", min_size=1, max_size=6),
             min_size=1, max_size=4).map(".".join),
)
SET_VALUES = st.one_of(
    st.text(max_size=30), HOSTILE_VALUES.map(lambda v: yaml.safe_dump(v).strip()),
    TEXT_ATTACKS.map(lambda t: t.split(": ", 1)[-1]),
)
SET_ARGS = st.lists(st.builds(lambda k, v: f"{k}={v}", SET_PATHS, SET_VALUES), max_size=3)
