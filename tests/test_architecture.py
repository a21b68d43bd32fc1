"""The house rules of the package (docs/ARCHITECTURE.md), checked on its
source: no module imports, directly or through others, a module that
imports it (lazy imports inside functions count too), and no module
imports a private name (``_name``) of another."""
from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

PKG = ROOT / "epsparql"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in PKG.rglob("*.py")}


def resolve(importer: str, level: int, name: str | None) -> str:
    """The absolute module name of an import in ``importer``."""
    if level == 0:
        return name or ""
    path = MODULES[importer]
    base = importer.split(".") if path.name == "__init__.py" else importer.split(".")[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def imports(mod: str):
    """(imported module, imported names) of every import in ``mod``'s source."""
    tree = ast.parse(MODULES[mod].read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, []
        elif isinstance(node, ast.ImportFrom):
            target = resolve(mod, node.level, node.module)
            yield target, [a.name for a in node.names]


def project_edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {m: set() for m in MODULES}
    for mod in MODULES:
        for target, names in imports(mod):
            if not target.startswith("epsparql"):
                continue
            for n in names:                       # `from .pkg import module`
                if f"{target}.{n}" in MODULES:
                    edges[mod].add(f"{target}.{n}")
            if target in MODULES and (not names or any(f"{target}.{n}" not in MODULES
                                                       for n in names)):
                edges[mod].add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in edges[v]:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_the_checker_sees_imports():
    edges = project_edges()
    assert "epsparql.prepare" in edges["epsparql.query_engine"]
    assert "epsparql.rdf.ntriples" in edges["epsparql.io.streams"]
    assert "epsparql.spark.job" in edges["epsparql.spark.worker"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_circle():
    # a package's __init__ that re-exports its modules is part of the graph,
    # so a module importing its own package's face would show up here too
    assert cycles(project_edges()) == []


def test_no_module_imports_a_private_name_of_another():
    bad = []
    for mod in MODULES:
        for target, names in imports(mod):
            if target.startswith("epsparql") and target != mod:
                bad += [f"{mod}: from {target} import {n}" for n in names
                        if n.startswith("_") and not n.startswith("__")]
    assert bad == []
