"""The house rules of the package (docs/ARCHITECTURE.md), checked on its
source: no module imports, directly or through others, a module that
imports it (lazy imports inside functions count too), and no module
imports a private name (``_name``) of another.  The same for the Prolog
modules under prolog/ (second half): no cycle, and no reference to a
predicate another module neither exports nor declares as a hook."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
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


# ---------------------------------------------------------------------------
# The Prolog side (prolog/*.pl), on the same rules: every file is a module,
# no module reaches another through a cycle (use_module/reexport edges and
# `Module:Name` references together), and a `Module:Name` reference into
# another project module names a predicate that module exports or declares
# as a multifile hook itself.  A module calling its own predicates through
# its own name (closures, the clauses it generates) is not cross-module.

PROLOG = ROOT / "prolog"

def strip_prolog(text: str) -> str:
    """``text`` with comments, quoted atoms, strings and back-quoted text
    (and the character of a ``0'c`` literal) blanked out; newlines are kept,
    so offsets and line numbers stay those of the source."""
    out = list(text)
    n = len(text)
    i = 0

    def blank(a: int, b: int) -> None:
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    def escape_end(k: int) -> int:
        """The index after the escape sequence starting at text[k] == '\\'."""
        if k + 1 < n and text[k + 1] in "xX0123456789":
            j = k + 2 if text[k + 1] in "xX" else k + 1
            while j < n and text[j] in "0123456789abcdefABCDEF":
                j += 1
            return j + 1 if j < n and text[j] == "\\" else j
        return k + 2

    def quoted_end(k: int, q: str) -> int:
        """The index after the quoted item opened at text[k] == q."""
        j = k + 1
        while j < n:
            c = text[j]
            if c == "\\":
                j = escape_end(j)
            elif c == q:
                if j + 1 < n and text[j + 1] == q:      # a doubled quote
                    j += 2
                else:
                    return j + 1
            else:
                j += 1
        return n

    def number_before(k: int) -> int | None:
        """Where the number token ending at text[k - 1] starts, if one does."""
        j = k
        while j > 0 and text[j - 1].isdigit():
            j -= 1
        in_name = j > 0 and (text[j - 1].isalnum() or text[j - 1] == "_")
        return j if j < k and not in_name else None

    while i < n:
        c = text[i]
        if c == "%":
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif c == "'" and (k := number_before(i)) is not None:
            if text[k:i] == "0":                        # 0'c: one character
                j = i + 1
                if j < n and text[j] == "\\":
                    j = escape_end(j)
                elif text.startswith("''", j):
                    j += 2
                else:
                    j += 1
                blank(i, j)
                i = j
            else:                                       # Radix'Digits
                i += 1
        elif c in "'\"`":
            j = quoted_end(i, c)
            blank(i, j)
            i = j
        else:
            i += 1
    return "".join(out)


def balanced(text: str, start: int) -> int:
    """The index of the bracket closing the one at text[start]."""
    depth = 0
    for k in range(start, len(text)):
        depth += (text[k] in "([{") - (text[k] in ")]}")
        if depth == 0:
            return k
    raise ValueError(f"unbalanced {text[start]!r} at offset {start}")


def top_level_items(text: str) -> list[str]:
    """``text`` split at the commas outside brackets."""
    items, depth, cur = [], 0, []
    for c in text:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            items.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    if "".join(cur).strip():
        items.append("".join(cur).strip())
    return items


def top_level_commas(text: str) -> int:
    """How many commas ``text`` has outside brackets."""
    depth = count = 0
    for c in text:
        depth += (c in "([{") - (c in ")]}")
        count += c == "," and depth == 0
    return count


PI = re.compile(r"(?:([a-z]\w*):)?([a-z]\w*)\s*(//?)\s*(\d+)")
DIRECTIVE = re.compile(r":-\s*(use_module|reexport|ensure_loaded|multifile)\b")
QUALIFIED = re.compile(r"(?<![\w$])([a-z]\w*):([a-z]\w*)")


def indicators(text: str) -> list[tuple[str | None, str, int]]:
    """The predicate indicators in ``text``: (module or None, name, arity);
    ``name//N`` (a DCG nonterminal) is the predicate name/N+2."""
    return [(m, name, int(a) + (2 if sl == "//" else 0)) for m, name, sl, a in PI.findall(text)]


@dataclass
class PrologModule:
    """What the architecture checks read of one Prolog source file."""

    name: str | None                                  # from :- module/2 (None: not a module)
    exports: set[tuple[str, int]] = field(default_factory=set)
    dcg: set[tuple[str, int]] = field(default_factory=set)   # nonterminals name//N, as (name, N)
    imports: list[str] = field(default_factory=list)          # use_module, reexport, ensure_loaded
    reexports: list[tuple[str, list | None]] = field(default_factory=list)
    multifile: set[tuple[str, str, int]] = field(default_factory=set)  # (owner, name, arity)
    # Module:Name references: (module, name, arity or None, line)
    refs: list[tuple[str, str, int | None, int]] = field(default_factory=list)


def parse_prolog(text: str) -> PrologModule:
    """Module declaration, exports, imports, multifile declarations and
    ``Module:Name`` references of one Prolog source text."""
    code = strip_prolog(text)
    m = re.search(r":-\s*module\(\s*([a-z]\w*)\s*,\s*\[", code)
    mod = PrologModule(m.group(1) if m else None)
    if m:
        end = balanced(code, m.end() - 1)
        for item in top_level_items(code[m.end():end]):
            if not item.startswith("op("):
                for _, name, arity in indicators(item):
                    mod.exports.add((name, arity))
                    if "//" in item:
                        mod.dcg.add((name, arity - 2))
    for d in DIRECTIVE.finditer(code):
        kind = d.group(1)
        stop = re.compile(r"\.(\s|$)").search(code, d.end())
        body = code[d.end():stop.start() if stop else len(code)]
        if kind == "multifile":
            for owner, name, arity in indicators(body):
                mod.multifile.add((owner or mod.name, name, arity))
            continue
        a = re.match(r"\s*\(\s*([a-z]\w*)\s*(\)|,)", body)
        if not a or a.group(1) == "library":
            continue
        mod.imports.append(a.group(1))
        if kind == "reexport":
            if a.group(2) == ",":
                rest = body[a.end():]
                lst = rest[rest.index("["):balanced(rest, rest.index("[")) + 1]
                mod.reexports.append((a.group(1), [(n, ar) for _, n, ar in indicators(lst)]))
            else:
                mod.reexports.append((a.group(1), None))
    for q in QUALIFIED.finditer(code):
        target, name = q.groups()
        after = code[q.end():]
        if after.startswith("("):
            close = balanced(code, q.end())
            arity = top_level_commas(code[q.end() + 1:close]) + 1  # arguments may be blanked
        elif (s := re.match(r"\s*(//?)\s*(\d+)", after)):
            arity = int(s.group(2)) + (2 if s.group(1) == "//" else 0)
        else:
            arity = None                                # a closure or an atom goal
        mod.refs.append((target, name, arity, code.count("\n", 0, q.start()) + 1))
    return mod


def prolog_modules() -> dict[str, PrologModule]:
    """Every prolog/*.pl by file stem, reexported predicates counted as
    exported by the module that reexports them."""
    mods = {p.stem: parse_prolog(p.read_text()) for p in sorted(PROLOG.glob("*.pl"))}
    changed = True
    while changed:
        changed = False
        for mod in mods.values():
            for source, names in mod.reexports:
                if source in mods:
                    new = set(names) if names is not None else mods[source].exports
                    if not new <= mod.exports:
                        mod.exports |= new
                        changed = True
    return mods


def prolog_edges(mods: dict[str, PrologModule]) -> dict[str, set[str]]:
    """Module -> the project modules it loads or names in a reference."""
    return {name: {t for t in mod.imports if t in mods and t != name}
            | {t for t, *_ in mod.refs if t in mods and t != name}
            for name, mod in mods.items()}


def reference_allowed(mods: dict[str, PrologModule], target: str, name: str,
                      arity: int | None) -> bool:
    """Does ``target`` export ``name``/``arity`` or declare it a multifile
    hook itself?  (Arity unknown, for a closure: any arity of the name.)"""
    t = mods[target]
    offered = t.exports | {(n, a) for owner, n, a in t.multifile if owner == target}
    if arity is None:
        return any(n == name for n, _ in offered | t.dcg)
    return (name, arity) in offered or (name, arity) in t.dcg


def unexported_references(mods: dict[str, PrologModule]) -> dict[str, list[str]]:
    """Module -> its references to names another module does not offer."""
    bad: dict[str, list[str]] = {}
    for name, mod in mods.items():
        for target, pred, arity, line in mod.refs:
            if target in mods and target != name \
                    and not reference_allowed(mods, target, pred, arity):
                shown = f"{target}:{pred}/{arity if arity is not None else '?'}"
                bad.setdefault(name, []).append(f"{shown} (prolog/{name}.pl:{line})")
    return bad


SMALL_MODULE = """\
/*  A module for the parser's own test: core:hidden/1 in a block comment. */
:- module(small, [ visible/1,      % core:hidden/1 in a line comment
                   phrase_me//1,
                   op(700, xfx, ===) ]).
:- use_module(library(lists)).
:- use_module(core).
:- reexport(other, [shared/2]).
:- multifile hook/2, core:injected/3.
visible(X) :- core:pub(X, 'core:quoted'), atom_length("core:string", _),
    C = 0'%, C2 = 0'', C3 = 0'\\', Y = 16'ff, core:later(C, C2, C3, Y), `core:codes`.
phrase_me(X) --> [X], { maplist(core:closure, [X]) }.
small:self(1).
"""


def test_the_prolog_parser_reads_only_code():
    mod = parse_prolog(SMALL_MODULE)
    assert mod.name == "small"
    assert mod.exports == {("visible", 1), ("phrase_me", 3)} and mod.dcg == {("phrase_me", 1)}
    assert mod.imports == ["core", "other"]
    assert mod.reexports == [("other", [("shared", 2)])]
    assert mod.multifile == {("small", "hook", 2), ("core", "injected", 3)}
    # not the comments, the quoted atom, the string, the codes, nor 0'% and 0''
    assert [(t, n, a) for t, n, a, _ in mod.refs] == [
        ("core", "injected", 3), ("core", "pub", 2), ("core", "later", 4),
        ("core", "closure", None), ("small", "self", 1)]
    assert [line for *_, line in mod.refs] == [8, 9, 10, 11, 12]
    assert strip_prolog("a('x%y'), b % c\n") == "a(     ), b    \n"


def test_the_prolog_checks_see_a_violation():
    mods = {"small": parse_prolog(SMALL_MODULE),
            "core": parse_prolog(":- module(core, [pub/2, later/4]).\n"
                                 ":- multifile closure/2.\n:- use_module(small).\n")}
    assert unexported_references(mods) == {"small": ["core:injected/3 (prolog/small.pl:8)"]}
    assert cycles(prolog_edges(mods)) == [["core", "small"]]


def test_every_prolog_file_is_a_module():
    mods = prolog_modules()
    assert len(mods) >= 20
    assert {stem: m.name for stem, m in mods.items() if m.name != stem} == {}


def test_the_prolog_graph_is_read():
    edges = prolog_edges(prolog_modules())
    assert "core_compile" in edges["epsparql_core"]          # use_module
    assert "sparql_background" in edges["stream_panes"]      # Module:Name too
    assert "core_compile" in edges["etalis"]                 # a hook's clauses


def test_no_prolog_module_cycle():
    assert cycles(prolog_edges(prolog_modules())) == []


def test_prolog_modules_reach_only_exported_predicates():
    bad = unexported_references(prolog_modules())
    assert bad == {}, (
        "references to predicates the module neither exports nor declares multifile:\n"
        + "\n".join(f"  {m}: " + ", ".join(refs) for m, refs in sorted(bad.items())))


