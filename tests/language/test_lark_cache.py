"""Parsers analysed once per machine (epsparql/language/lark_cache.py)."""
from __future__ import annotations

from epsparql.language.lark_cache import cached_lark

GRAMMAR = 'start: "a" NAME\n%import common.CNAME -> NAME\n%ignore " "\n'


def test_the_cache_gives_the_same_parser_and_replaces_earlier_versions(tmp_path, monkeypatch):
    monkeypatch.setenv("EPSPARQL_CACHE_DIR", str(tmp_path))
    p1 = cached_lark("g", GRAMMAR, parser="lalr")
    [f] = tmp_path.glob("g-*.lark")
    p2 = cached_lark("g", GRAMMAR, parser="lalr")           # from the file
    assert p1.parse("a x") == p2.parse("a x")
    cached_lark("g", GRAMMAR.replace('"a"', '"b"'), parser="lalr")   # a new version
    [g] = tmp_path.glob("g-*.lark")
    assert g != f
    f.write_bytes(b"not a parser")                          # a broken file: rebuilt, no error
    g.write_bytes(b"\x80garbage")
    assert cached_lark("g", GRAMMAR, parser="lalr").parse("a y") is not None


def test_no_cache_when_switched_off(tmp_path, monkeypatch):
    monkeypatch.setenv("EPSPARQL_CACHE_DIR", "")
    assert cached_lark("g", GRAMMAR, parser="lalr").parse("a z") is not None
    assert not list(tmp_path.iterdir())
