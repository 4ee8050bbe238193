"""The module graph of ``mlpipe`` has no cycle and no import of a higher layer.

Every import counts: at module level, inside a function, and under ``if TYPE_CHECKING:``
(a cycle held apart by a type-only import is still a cycle: break it with a ``Protocol``
in the lower module). The layers (docs/architecture.md draws them), lowest first: a
module may import its own layer and the ones below.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "mlpipe"

LAYERS: list[tuple[str, ...]] = [
    # 0: shared vocabulary, no mlpipe imports but each other
    ("mlpipe.errors", "mlpipe.frozen", "mlpipe.diagnostics", "mlpipe.version", "mlpipe.runs",
     "mlpipe.sizes", "mlpipe.limits", "mlpipe.wording", "mlpipe.cores",
     "mlpipe.import_mirrors", "mlpipe.exports", "mlpipe.io_types", "mlpipe.unavailable"),
    # 1: what a pipeline is: the YAML models, the plan, the data readers
    ("mlpipe.schema", "mlpipe.plan", "mlpipe.data", "mlpipe.settings_file"),
    # 2: turning models into a plan, and running a plan's parallel steps
    # (and running a published script or notebook: mlpipe.scripts; URLs read from their
    # mlpipe.toml stand-ins: mlpipe.url_stand_ins; the start-up hook of the
    # Pythons a command step starts, which installs the mirrors and URL stand-ins: startup)
    ("mlpipe.compiler", "mlpipe.runtime", "mlpipe.scripts", "mlpipe.startup",
     "mlpipe.url_stand_ins"),
    # 3: whole jobs: the front door, the runner, the job store
    ("mlpipe.jobs",),
    # 4: the two faces
    ("mlpipe.sdk", "mlpipe.cli"),
    # 5: azure-ai-ml mirrors at the top level and the package itself
    ("mlpipe", "mlpipe.dsl", "mlpipe.entities", "mlpipe.parallel", "mlpipe.identity",
     "mlpipe.v1", "mlpipe.constants", "mlpipe.__main__", "mlpipe.azure_ai_ml",
     "mlpipe.sweep", "mlpipe.automl", "mlpipe.mldesigner"),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def import_targets(node: ast.AST, module: str, is_package: bool) -> set[str]:
    """The module names an ``import`` / ``from ... import`` statement may load."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names}
    if not isinstance(node, ast.ImportFrom):
        return set()
    base = node.module or ""
    if node.level:
        parts = module.split(".") if is_package else module.split(".")[:-1]
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join(parts + ([base] if base else []))
    return {base, *(f"{base}.{alias.name}" for alias in node.names)}


def imported(path: Path, module: str, known: set[str]) -> set[str]:
    """The ``mlpipe`` modules ``path`` imports, anywhere in it."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        found.update(import_targets(node, module, is_package))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return (found & known) - {module}


def module_graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    known = set(files)
    return {name: imported(path, name, known) for name, path in files.items()}


def layer_of(module: str) -> int:
    """The layer of the longest prefix of ``module`` named in :data:`LAYERS`."""
    best, depth = -1, -1
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and prefix.count(".") > depth:
                best, depth = index, prefix.count(".")
    if best < 0 or (depth == 0 and module != "mlpipe"):
        raise AssertionError(f"{module} is in no layer: add it to LAYERS in {__file__}")
    return best


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def strong(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                strong(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            strong(node)
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return module_graph()


def test_the_graph_sees_the_package(graph: dict[str, set[str]]) -> None:
    assert "mlpipe.jobs.front_door" in graph
    assert "mlpipe.compiler" in graph["mlpipe.jobs.front_door"]


def test_no_module_sits_in_an_import_cycle(graph: dict[str, set[str]]) -> None:
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_imports_a_higher_layer(graph: dict[str, set[str]]) -> None:
    upward = sorted(f"{module} (layer {layer_of(module)}) imports {target} "
                    f"(layer {layer_of(target)})"
                    for module, targets in graph.items() for target in targets
                    if layer_of(target) > layer_of(module))
    assert upward == []


def test_layers_order_the_floors() -> None:
    assert layer_of("mlpipe.errors") < layer_of("mlpipe.plan") < layer_of("mlpipe.compiler.steps")
    assert layer_of("mlpipe.runtime.driver") < layer_of("mlpipe.jobs.front_door")
    assert layer_of("mlpipe.jobs.front_door") < layer_of("mlpipe.sdk.running") < layer_of("mlpipe.v1")


def test_package_exports_are_the_names_not_the_modules() -> None:
    """``from mlpipe.jobs import submit`` is the front door function, also once the module
    holding it has been imported (a submodule of the same name would shadow it)."""
    import importlib
    import inspect

    import mlpipe.jobs

    for name, module in mlpipe.jobs._EXPORTS.items():
        importlib.import_module(module)
        assert not inspect.ismodule(getattr(mlpipe.jobs, name)), name


ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"
MERMAID_EDGE = re.compile(r"^\s*(\w+)\s*-->\s*(\w+)\s*$")


def box_of(module: str) -> str:
    """The box of docs/architecture.md's picture that holds ``module``: ``base`` for layer 0,
    ``mirrors`` for layer 5, else the package or top-level module below ``mlpipe``."""
    layer = layer_of(module)
    if layer == 0:
        return "base"
    if layer == len(LAYERS) - 1:
        return "mirrors"
    return module.split(".")[1]


def package_edges(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """Box-to-box imports (edges into ``base`` left out: every box uses it)."""
    return {(box_of(module), box_of(target)) for module, targets in graph.items()
            for target in targets
            if box_of(module) != box_of(target) and box_of(target) != "base"}


def test_the_architecture_picture_is_the_module_graph(graph: dict[str, set[str]]) -> None:
    """The arrows of docs/architecture.md's mermaid picture are the real imports, no more, no
    fewer (the message gives the lines to paste)."""
    drawn = {(m.group(1), m.group(2)) for line in ARCHITECTURE.read_text().splitlines()
             if (m := MERMAID_EDGE.match(line)) and m.group(2) != "base"}
    real = package_edges(graph)
    assert drawn == real, "docs/architecture.md's arrows should be:\n" + "\n".join(
        f"    {a} --> {b}" for a, b in sorted(real, key=lambda e: (-layer_rank(e[0]), e)))


def layer_rank(box: str) -> int:
    """The layer of a picture box (for ordering the arrows top-down)."""
    if box == "base":
        return 0
    if box == "mirrors":
        return len(LAYERS) - 1
    return layer_of(f"mlpipe.{box}")


def function_level_imports(path: Path, module: str, known: set[str]) -> set[str]:
    """The ``mlpipe`` modules ``path`` imports inside a function body."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(function):
                found.update(import_targets(node, module, is_package))
    return (found & known) - {module}


def test_sdk_modules_import_each_other_at_module_level() -> None:
    """Inside ``mlpipe.sdk`` one module imports another at the top, never inside a function,
    where it would only hide a cycle (lower layers, such as ``mlpipe.jobs``, may still be
    loaded on first use)."""
    files = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    sdk = {name for name in files if name.startswith("mlpipe.sdk")}
    hidden = sorted(f"{name} imports {target} inside a function"
                    for name in sdk
                    for target in function_level_imports(files[name], name, sdk))
    assert hidden == []
