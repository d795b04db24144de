"""The package's import structure: imports point down the layers, no module imports form a cycle,
and engine code never names the knowledge base or a face (docs/architecture.md).

Every import counts: module level, under ``TYPE_CHECKING`` and inside functions — a lazy import
still couples the two modules. Parent-package ``__init__`` modules that Python runs implicitly are
not edges (importing ``graphmem.store.base`` is not an import of ``graphmem.store``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import graphmem

PACKAGE = Path(graphmem.__file__).parent

# Bottom (0) to top. A module belongs to the layer of its longest matching prefix.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    # Pure data and pure functions over it: no store, no I/O beyond reading a file they are handed.
    ("model", ("graphmem.models", "graphmem.errors", "graphmem.config", "graphmem.config_sections",
               "graphmem.text", "graphmem.ontology", "graphmem.extraction", "graphmem.validate",
               "graphmem.frontmatter", "graphmem.trust", "graphmem.openai_http", "graphmem.netguard")),
    ("store", ("graphmem.store",)),
    ("context", ("graphmem.context",)),
    ("engine", ("graphmem.ingest", "graphmem.retrieval", "graphmem.embeddings", "graphmem.wiki", "graphmem.feed",
                "graphmem.portability",
                "graphmem.memory", "graphmem.skills")),
    ("faces", ("graphmem.faces",)),
    # kb.py and the package facade (graphmem/__init__.py re-exports the knowledge base and the models).
    ("kb", ("graphmem.kb", "graphmem")),
    ("interfaces", ("graphmem.cli", "graphmem.compat", "graphmem.mcp", "graphmem.server", "graphmem.__main__")),
]

ENGINE = ("graphmem.ingest", "graphmem.retrieval", "graphmem.embeddings", "graphmem.wiki", "graphmem.memory",
          "graphmem.skills")
FACE_CLASSES = {"KnowledgeBase", "Documents", "Graph", "Events", "Wiki", "Memory", "Skills"}

# Known violations, each with its reason. Empty since issue 14 landed, and it should stay so: the
# tests below also fail when an entry here no longer names a real violation.
ALLOWED_UPWARD: set[tuple[str, str]] = set()
ALLOWED_NAMES: set[str] = set()
ALLOWED_CYCLES: list[set[str]] = []


def module_names() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ("graphmem", *path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = module_names()


def imports_of(name: str, path: Path) -> Iterator[tuple[str, int]]:
    """``(imported graphmem module, line)`` for every import in the module, wherever it is."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "graphmem":
                    yield _existing(alias.name), node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base.split(".")[0] != "graphmem":
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                yield (sub if sub in MODULES else _existing(base)), node.lineno


def _existing(name: str) -> str:
    while name not in MODULES and "." in name:
        name = name.rpartition(".")[0]
    return name


def layer_of(name: str) -> int:
    best, best_len = -1, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    return best


def edges() -> dict[str, set[tuple[str, int]]]:
    return {name: {(dep, line) for dep, line in imports_of(name, path) if dep != name}
            for name, path in MODULES.items()}


EDGES = edges()


def test_every_module_has_a_layer() -> None:
    assert [name for name in MODULES if layer_of(name) < 0] == []


def test_imports_point_down() -> None:
    upward = []
    for name, deps in EDGES.items():
        for dep, line in sorted(deps):
            if layer_of(dep) > layer_of(name) and (name, dep) not in ALLOWED_UPWARD:
                upward.append(f"{MODULES[name].relative_to(PACKAGE)}:{line} ({LAYERS[layer_of(name)][0]}) "
                              f"imports {dep} ({LAYERS[layer_of(dep)][0]})")
    assert upward == [], "imports pointing up the layers:\n" + "\n".join(upward)


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm, iterative (components of more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[set[str]] = []
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
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        out.append(component)
    return out


def test_the_allow_list_names_only_violations_that_still_exist() -> None:
    # Once a parallel branch fixes an entry, it must leave the list (so the list only shrinks).
    present = {(name, dep) for name, deps in EDGES.items() for dep, _ in deps}
    assert sorted(ALLOWED_UPWARD - present) == [], "fixed: remove these from ALLOWED_UPWARD"
    assert sorted(n for n in ALLOWED_NAMES if n not in MODULES or "KnowledgeBase" not in
                  MODULES[n].read_text(encoding="utf-8")) == [], "fixed: remove these from ALLOWED_NAMES"


def test_strongly_connected_finds_a_cycle_and_only_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert strongly_connected(graph) == [{"a", "b", "c"}]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles() -> None:
    # An allow-listed upward import is already a known violation; it is not counted twice as a cycle.
    graph = {name: {dep for dep, _ in deps if dep in MODULES and (name, dep) not in ALLOWED_UPWARD}
             for name, deps in EDGES.items()}
    components = strongly_connected(graph)
    cycles = [sorted(c) for c in components if c not in ALLOWED_CYCLES]
    assert cycles == [], "import cycles (every import counts, lazy ones too):\n" + "\n".join(map(str, cycles))
    fixed = [sorted(c) for c in ALLOWED_CYCLES if c not in components]
    assert fixed == [], "fixed: remove these from ALLOWED_CYCLES"


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n.startswith(ENGINE)))
def test_engine_never_names_the_knowledge_base_or_a_face(name: str) -> None:
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    named = sorted({(n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else n.name)
                    for n in ast.walk(tree)
                    if isinstance(n, (ast.Name, ast.Attribute, ast.alias))}
                   & FACE_CLASSES)
    annotations = [ast.unparse(a.annotation) for a in ast.walk(tree) if isinstance(a, ast.arg) and a.annotation]
    assert named == [] and not [a for a in annotations if a.strip("'\"") in FACE_CLASSES]
    params = sorted({a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)} & {"kb"})
    assert params == [], f"{name}: parameters named kb (engine functions take ctx: Context)"


def test_the_checker_sees_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..kb import KnowledgeBase\n"
              "def f():\n    from ..faces import Wiki\n    import graphmem.cli\n")
    path = tmp_path / "mod.py"
    path.write_text(source, encoding="utf-8")
    found = sorted(dep for dep, _ in imports_of("graphmem.wiki.mod", path))
    assert found == ["graphmem.cli", "graphmem.faces", "graphmem.kb"]
    assert layer_of("graphmem.wiki.mod") == 3 and layer_of("graphmem.kb") == 5
