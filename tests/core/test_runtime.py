"""The janus-swi bridge itself: one SWI-Prolog per process, reached from any
thread; the swipl for subprocesses is the same SWI-Prolog; long texts reach
Prolog as strings; Python extension functions are called back through janus."""
from __future__ import annotations

import random
import subprocess
import threading

import pytest
from rdflib import Literal, URIRef

from conftest import dets
from epsparql import Engine
from epsparql.core import CoreEngine, PrologError, term as T
from epsparql.core.runtime import runtime, swipl_executable, swipl_home


def test_swipl_executable_is_the_bridges_prolog():
    rt = runtime()
    v = rt.query_once("current_prolog_flag(version, V)")["V"]
    home = rt.query_once("current_prolog_flag(home, H)")["H"]
    out = subprocess.run([swipl_executable(), "-g", "current_prolog_flag(version,V),write(V)",
                          "-t", "halt"], capture_output=True, text=True, timeout=60).stdout
    assert int(out) == v >= 90112
    assert subprocess.run([swipl_executable(), "--dump-runtime-variables"], capture_output=True,
                          text=True, timeout=60).stdout.count(f'PLBASE="{home}"') == 1
    assert swipl_home() == home


def test_long_texts_arrive_as_strings_and_short_ones_as_atoms():
    rt = runtime()
    rt.query_once("assertz((bridge_python:kinds_of(_A, _B, _K) :- "
                  "( atom(_A), string(_B) -> _K = ok ; _K = bad )))")
    assert rt.call("kinds_of", "short", ("s", "long text é")) == "ok"
    # a text that is not valid Unicode is refused before it reaches Prolog
    with pytest.raises(ValueError):
        rt.call("kinds_of", "x", ("s", "bad \ud800"))
    assert rt.call("kinds_of", "again", ("s", "fine")) == "ok"


def test_a_failing_entry_point_is_a_prolog_error():
    rt = runtime()
    rt.query_once("assertz((bridge_python:always_fails(_, _) :- fail))")
    with pytest.raises(PrologError, match="failed"):
        rt.call("always_fails", "x")
    with pytest.raises(PrologError):
        rt.call("no_such_entry_point", "x")
    assert rt.query_once("X is 6 * 7") == {"X": 42}          # still usable


def _stream(rng: random.Random, n: int) -> list[tuple]:
    return [(T(rng.choice("ab"), rng.randrange(4)), t) for t in range(1, n + 1)]


def _expected(stream: list[tuple], window: int) -> list:
    """seq of a(X) then b(X) within the window, every pair (plain reference)."""
    out = []
    for i, (ei, ti) in enumerate(stream):
        if ei.name != "a":
            continue
        for ej, tj in stream[i + 1:]:
            if ej.name == "b" and ej.args == ei.args and tj > ti and tj - ti <= window:
                out.append(((("h", ei.args)), ti, tj))
    return sorted(out, key=repr)


def test_engines_in_several_threads_at_once_give_each_their_own_answers():
    rules = "h(X) <- a(X) seq b(X) within 5."
    results: dict[int, list] = {}
    errors: list[BaseException] = []
    streams = {k: _stream(random.Random(k), 400) for k in range(6)}

    def work(k: int) -> None:
        try:
            eng = CoreEngine(batch_size=37)
            eng.add_rules(rules)
            got = []
            for i in range(0, len(streams[k]), 50):
                got += eng.push_many(streams[k][i:i + 50])
            assert dets(eng.drain()) == dets(got)
            results[k] = dets(got)
            eng.close()
        except BaseException as e:        # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in streams]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for k, s in streams.items():
        assert results[k] == [(("h", args), a, b) for ((_, args), a, b) in _expected(s, 5)]
    # threads that ended (and their Prolog engines) leave the runtime usable
    eng = CoreEngine()
    eng.add_rules(rules)
    assert dets(eng.push_many([(T("a", 1), 1), (T("b", 1), 2)])) == [(("h", (1,)), 1, 2)]
    eng.close()


def test_python_function_raising_in_another_thread_is_an_expression_error():
    ex = "http://example.org/fn#"
    out: list = []

    def run() -> None:
        e = Engine()
        e.register_function(ex + "half", lambda x: Literal(int(x) // 2))
        e.register_function(ex + "boom", lambda x: 1 / 0)
        q = e.register(f"SELECT ?h WHERE {{ ?s <{ex}p> ?v BIND(<{ex}half>(?v) AS ?h) }}")
        b = e.register(f"SELECT ?s WHERE {{ ?s <{ex}p> ?v FILTER(<{ex}boom>(?v) > 0) }}")
        e.push_many([(URIRef(ex + "s"), URIRef(ex + "p"), Literal(10), 1)])
        e.flush()
        out.append(([a.bindings["h"] for a in q.results()], list(b.results())))
        e.close()

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert out == [([Literal(5)], [])]
