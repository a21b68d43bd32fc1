"""SPARQL 1.1's static scope rules (epsparql/language/scope.py).

Rebinding an in-scope variable (``SELECT (expr AS ?v)``, ``BIND(expr AS
?v)``) and a blank node label shared by two groups are query errors with
the line and column of the offending variable or triple, as in SPARQL 1.1
(section 18.2.1), where before they were accepted and silently dropped
rows.  Checked on hand-written cases, against a plain reference of the
in-scope table of section 18.2.1 on generated group structures, and
through the command line where the defect was found.
"""
from __future__ import annotations

import random

import pytest

from epsparql import Engine
from epsparql.language import QueryError, parse_query

from cli.test_cli import cli  # tests/cli/

EX = "PREFIX : <http://ex/> "


def error_at(text: str) -> QueryError:
    with pytest.raises(QueryError) as info:
        parse_query(text)
    return info.value


# ---------------------------------------------------------------------------
# the two queries of the issue, and their neighbours

def marked(text: str) -> tuple[str, tuple[int, int]]:
    """``text`` without its '‸' mark, and the (line, column) of the mark."""
    i = text.index("‸")
    before = text[:i]
    return text.replace("‸", ""), (before.count("\n") + 1, i - before.rfind("\n"))


@pytest.mark.parametrize("text, words", [
    ("SELECT (?y*2 AS ‸?y) WHERE { ?x <http://ex/p> ?y }",
     "(... AS ?y) cannot assign ?y: it is already bound by the WHERE clause"),
    ("SELECT ?x WHERE { ?x <http://ex/p> ?y . BIND(1 AS ‸?y) }",
     "BIND cannot assign ?y: it is already bound earlier in this group"),
    # bound by a nested group, OPTIONAL, UNION, SEQ, GRAPH, an earlier BIND
    (EX + "SELECT * { { ?x :p ?y } BIND(1 AS ‸?y) }", "BIND cannot assign ?y"),
    (EX + "SELECT * { ?x :p ?z OPTIONAL { ?x :q ?y }\n BIND(1 AS ‸?y) }",
     "BIND cannot assign ?y"),
    (EX + "SELECT * { { ?x :p ?y } UNION { ?x :q ?z } BIND(2 AS ‸?z) }",
     "BIND cannot assign ?z"),
    (EX + "SELECT * { { ?x :p ?a } SEQ { ?x :q ?b } BIND(2 AS ‸?b) }",
     "BIND cannot assign ?b"),
    (EX + "SELECT * { ?x :p ?y GRAPH ?g { ?x :q ?z } BIND(:g AS ‸?g) }",
     "BIND cannot assign ?g"),
    (EX + "SELECT * { ?x :p ?y BIND(1 AS ?a) BIND(2 AS ‸?a) }", "BIND cannot assign ?a"),
    (EX + "SELECT * { ?x :p ?y { SELECT ?k { ?k :q ?w } } BIND(1 AS ‸?k) }",
     "BIND cannot assign ?k"),
    # the paper's form: the chain and its FILTERs are one group
    (EX + "SELECT (getDURATION() AS ‸?x) WHERE { ?x :p ?y } SEQ { ?x :q ?z }",
     "cannot assign ?x"),
    # SELECT over a sub-select's projection
    (EX + "SELECT * { { SELECT (1 AS ‸?k) { ?k :q ?w } } }", "cannot assign ?k"),
    # blank node labels scoped to one group
    (EX + "SELECT * WHERE { _:b :p ?x } SEQ { ‸_:b :q ?y }",
     "blank node _:b is used in two different groups (first used at line 1, column 40)"),
    (EX + "SELECT * { _:b :p ?x OPTIONAL { ‸_:b :q ?y } }",
     "blank node _:b is used in two different groups"),
])
def test_rebinding_is_a_query_error_with_its_position(text, words):
    text, position = marked(text)
    err = error_at(text)
    assert (err.line, err.column) == position, str(err)
    assert words in err.message
    assert "use a new variable name" in err.message or "write a variable" in err.message


@pytest.mark.parametrize("text", [
    # the BIND target is only used afterwards: a join, as SPARQL says
    EX + "SELECT * { ?x :p ?y BIND(?y + 1 AS ?z) ?x :q ?z }",
    # FILTER and MINUS bind nothing
    EX + "SELECT * { ?x :p ?y FILTER(BOUND(?z)) BIND(1 AS ?z) }",
    EX + "SELECT * { ?x :p ?y MINUS { ?x :q ?z } BIND(1 AS ?z) }",
    # a nested group has its own scope
    EX + "SELECT * { ?x :p ?y { ?x :q ?w BIND(1 AS ?z) } }",
    EX + "SELECT * { ?x :p ?y { BIND(1 AS ?y) } }",
    # OPTIONAL's group is its own scope too
    EX + "SELECT * { ?x :p ?y OPTIONAL { ?x :q ?w BIND(?w AS ?z) } }",
    # SELECT expressions may use earlier ones
    EX + "SELECT (?y + 1 AS ?z) (?z * 2 AS ?w) { ?x :p ?y }",
    # one label in the blocks of one group (FILTER does not split them)
    EX + "SELECT * { _:b :p ?x FILTER(?x > 1) _:b :q ?y }",
    # template labels are the template's own
    EX + "CONSTRUCT { _:b :r ?x } WHERE { _:b :p ?x }",
    # anonymous blank nodes are fresh per use
    EX + "SELECT * WHERE { [] :p ?x } SEQ { [] :q ?x }",
])
def test_valid_scopes_are_accepted(text):
    parse_query(text)


def test_engine_register_refuses_with_source_and_caret():
    engine = Engine()
    try:
        with pytest.raises(QueryError) as info:
            engine.register("SELECT ?x WHERE {\n  ?x <http://ex/p> ?y .\n  BIND(1 AS ?y)\n}")
        lines = str(info.value).split("\n")
        assert lines[0].startswith("line 3, column 13: BIND cannot assign ?y")
        assert lines[1:] == ["  BIND(1 AS ?y)", "            ^"]
    finally:
        engine.close()


# ---------------------------------------------------------------------------
# generated group structures against the in-scope table of SPARQL 1.1 18.2.1

class Gen:
    """Random WHERE clauses and, alongside, whether a BIND rebinds."""

    def __init__(self, rnd: random.Random) -> None:
        self.rnd = rnd
        self.vars = [f"v{i}" for i in range(5)]

    def triple(self) -> tuple[str, set[str]]:
        a, b = self.rnd.sample(self.vars, 2)
        return f"?{a} :p{self.rnd.randint(0, 3)} ?{b} .", {a, b}

    def group(self, depth: int) -> tuple[str, set[str], bool]:
        """(text, variables in scope after it, does it rebind somewhere)."""
        parts: list[str] = []
        scope: set[str] = set()
        bad = False
        for _ in range(self.rnd.randint(1, 4)):
            kind = self.rnd.choice(["triple", "triple", "bind", "filter", "minus"]
                                   + (["group", "optional", "union", "seq"] if depth else []))
            if kind == "triple":
                text, vs = self.triple()
            elif kind == "bind":
                v = self.rnd.choice(self.vars)
                bad |= v in scope                      # the rule under test
                text, vs = f"BIND(1 AS ?{v})", {v}
            elif kind == "filter":
                text, vs = f"FILTER(BOUND(?{self.rnd.choice(self.vars)}))", set()
            elif kind == "minus":
                inner, _, b = self.group(0)
                text, vs, bad = f"MINUS {{ {inner} }}", set(), bad or b
            elif kind in ("group", "optional"):
                inner, vs, b = self.group(depth - 1)
                text, bad = ("OPTIONAL " if kind == "optional" else "") + f"{{ {inner} }}", bad or b
            else:
                left, lv, b1 = self.group(depth - 1)
                right, rv, b2 = self.group(depth - 1)
                op = "UNION" if kind == "union" else "SEQ"
                text, vs, bad = f"{{ {left} }} {op} {{ {right} }}", lv | rv, bad or b1 or b2
            parts.append(text)
            scope |= vs
        return " ".join(parts), scope, bad


@pytest.mark.parametrize("seed", range(6))
def test_generated_groups_follow_the_in_scope_table(seed):
    rnd = random.Random(seed)
    gen = Gen(rnd)
    seen = {True: 0, False: 0}
    for _ in range(100):
        where, scope, bad = gen.group(3)
        projected = rnd.choice(gen.vars)
        select_bad = rnd.random() < 0.3
        if select_bad:
            proj = f"(1 AS ?{projected})"
            bad_select = projected in scope
        else:
            proj, bad_select = "*", False
        text = f"{EX} SELECT {proj} WHERE {{ {where} }}"
        try:
            parse_query(text)
            refused = False
        except QueryError as err:
            refused = True
            assert "cannot assign" in err.message and err.line and err.column, str(err)
        assert refused == (bad or bad_select), text
        seen[refused] += 1
    assert seen[True] > 10 and seen[False] > 10          # both outcomes exercised


# ---------------------------------------------------------------------------
# through the command line, where the defect was found

def test_check_and_run_refuse_the_rebinding_queries(tmp_path):
    a = tmp_path / "a.rq"
    a.write_text("SELECT (?y*2 AS ?y) WHERE { ?x <http://ex/p> ?y }\n")
    b = tmp_path / "b.rq"
    b.write_text("SELECT ?x WHERE { ?x <http://ex/p> ?y . BIND(1 AS ?y) }\n")
    stream = tmp_path / "s.nt"
    stream.write_text('<http://ex/s> <http://ex/p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> 10 .\n')
    r = cli("check", a, b)
    assert r.returncode == 2
    assert f"{a}:1:17: (... AS ?y) cannot assign ?y" in r.stderr
    assert f"{b}:1:51: BIND cannot assign ?y" in r.stderr
    assert ": ok" not in r.stdout
    for q in (a, b):
        r = cli("run", q, "--stream", stream)
        assert r.returncode == 2 and r.stdout == ""
        assert "cannot assign ?y" in r.stderr
