"""The package's shape: layers only import downward, no import cycles, no streamlit.

The layers and their order are declared once, in ``medeval.LAYERS`` (see the package docstring).
These tests read the source with ``ast`` (every ``import``, including those inside functions), so a
lazy import does not hide an upward dependency or a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import medeval

PACKAGE = Path(medeval.__file__).resolve().parent


def _module_name(path: Path) -> str:
    parts = ["medeval", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The medeval modules that ``name`` imports (statically, anywhere in the file)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in MODULES else mod for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        for t in targets:
            while t and t not in MODULES:  # `import medeval.engine.metrics.x` -> the nearest module
                t = t.rpartition(".")[0]
            if t and t != name:
                found.add(t)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def layer_of(module: str) -> str | None:
    """The layer a module belongs to: the first package below ``medeval`` (None for the root files)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in medeval.LAYERS) else None


def test_every_module_lives_in_a_declared_layer():
    loose = [m for m in MODULES if m not in ("medeval", "medeval.__main__") and layer_of(m) not in medeval.LAYERS]
    assert not loose, f"modules outside the declared layers {list(medeval.LAYERS)}: {loose}"
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == set(medeval.LAYERS), "every layer is a folder of medeval/ and every folder a layer"


def test_layers_only_import_downward():
    rank = {layer: i for i, layer in enumerate(medeval.LAYERS)}
    wrong = []
    for mod, deps in GRAPH.items():
        here = layer_of(mod)
        if here is None:
            continue
        for dep in deps:
            there = layer_of(dep)
            if there is None:
                if dep != "medeval":
                    wrong.append(f"{mod} -> {dep} (not in a layer)")
            elif there != here and rank[there] >= rank[here]:
                wrong.append(f"{mod} ({here}) -> {dep} ({there})")
    assert not wrong, "imports that go up or sideways between layers:\n" + "\n".join(sorted(wrong))


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        comp.append(m)
                        if m == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def test_no_import_cycles():
    cycles = _cycles(GRAPH)
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_cycle_finder_finds_cycles():
    # the check above must be able to fail
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_layer_check_sees_lazy_imports(tmp_path):
    # an import inside a function counts like one at the top of the file
    p = tmp_path / "m.py"
    p.write_text("def f():\n    from medeval.reports import dashboard\n")
    assert "medeval.reports.dashboard" in _imports("medeval.engine.m", p)


@pytest.mark.parametrize("layer", medeval.LAYERS)
def test_layer_packages_are_light(layer):
    # a layer's __init__ holds its docstring and at most re-exports of its own modules' public API
    # (`from medeval.calibration.smooth import smooth_cutoffs`): nothing from another layer, nothing else
    init = PACKAGE / layer / "__init__.py"
    tree = ast.parse(init.read_text(encoding="utf-8"))
    assert ast.get_docstring(tree), f"medeval/{layer}/__init__.py needs a docstring saying what the layer holds"
    if layer != "cli":  # `from medeval.cli import main` is the command's entry point
        own = f"medeval.{layer}."
        assert not [n for n in tree.body[1:] if isinstance(n, ast.Import) or (
            isinstance(n, ast.ImportFrom) and n.module != "__future__"
            and not (n.level == 0 and (n.module or "").startswith(own)) and not (n.level == 1 and n.module))], \
            f"medeval/{layer}/__init__.py imports something other than its own layer's modules"
        assert not [n for n in tree.body[1:] if not isinstance(n, (ast.Import, ast.ImportFrom, ast.Assign))], \
            f"medeval/{layer}/__init__.py holds code: it may only re-export (imports and __all__)"



def test_files_stay_small():
    # one job per file: a file over ~400 lines is split by concern unless it is one algorithm
    allowed = {}  # module -> reason, for a single algorithm that reads best in one file
    big = {m: n for m, p in MODULES.items() if (n := len(p.read_text(encoding="utf-8").splitlines())) > 420}
    assert set(big) <= set(allowed), f"files over 420 lines: {big}"
