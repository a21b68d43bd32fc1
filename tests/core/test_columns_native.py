"""The C side of the columns sink (``prolog/c/columns_buffer.c``) where
the random detections of test_columns_sink.py do not reach: nested calls
(each has its own buffer), argument positions past the last-atom slots,
atoms collected and made anew between detections, the per-call atom
cache past its slots, and the build of the C part itself
(``prolog/native.pl``): cached per source and SWI-Prolog, a clear error
without a compiler."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from epsparql.core import Compound
from epsparql.core.columns import ColumnReceiver, Columns, TermTable
from epsparql.core.runtime import PROLOG_DIR, runtime
from epsparql.core.swipl import swipl_executable


def _events(chunks: list[Columns]) -> list:
    return [(d.event, d.start, d.end) for c in chunks for d in c.detections()]


def test_a_call_inside_a_call_has_its_own_buffer(limits):
    """An inner with_columns/3 made from inside the outer goal, and one
    made from the outer receiver while it takes a buffer (as a Python
    function called by a rule, or on_chunk, may do): every detection goes
    to its own call's receiver, in order."""
    limits(3, 1048576)
    rt = runtime()
    inner_recs: list[ColumnReceiver] = []
    inner_table = TermTable()              # the inner engine's dictionary, across its calls

    def take(chunk: Columns) -> None:
        rec = ColumnReceiver(inner_table)
        rt.query_once("bridge_columns:with_columns(E, R, forall(between(1, 4, _I), "
                      "  bridge_columns:columns_sink(inner(x, _I), _I, _I)))",
                      {"E": "test_native_inner2", "R": rec})
        inner_recs.append(rec)
        outer_taken.append(chunk)

    outer_taken: list[Columns] = []
    outer = ColumnReceiver(TermTable(), take)
    middle = ColumnReceiver(TermTable())
    try:
        rt.query_once(
            "bridge_columns:with_columns(E, R, ( "
            "  forall(between(1, 5, _I), bridge_columns:columns_sink(outer(k, _I), _I, _I)), "
            "  bridge_columns:with_columns(E2, R2, "
            "    forall(between(1, 7, _J), bridge_columns:columns_sink(mid(_J, j), 0, _J))), "
            "  forall(between(6, 8, _I), bridge_columns:columns_sink(outer(k, _I), _I, _I)) ))",
            {"E": "test_native_outer", "R": outer, "E2": "test_native_mid", "R2": middle})
        assert _events(outer_taken) == [(Compound("outer", ("k", i)), i, i) for i in range(1, 9)]
        assert _events(middle.chunks) == [(Compound("mid", (j, "j")), 0, j) for j in range(1, 8)]
        assert len(inner_recs) == len(outer_taken) == 3
        for rec in inner_recs:
            assert _events(rec.chunks) == [(Compound("inner", ("x", i)), i, i) for i in range(1, 5)]
    finally:
        for e in ("test_native_outer", "test_native_mid", "test_native_inner2"):
            rt.query_once("bridge_columns:columns_drop(E)", {"E": e})


def test_wide_heads_and_collected_atoms():
    """Arity 20 (positions past the 16 last-atom slots), atoms that are
    made, dropped and collected between detections (a remembered atom is
    kept alive, so a new atom never takes its id), times that are floats
    or integers beyond 64 bits."""
    rt = runtime()
    rec = ColumnReceiver(TermTable())
    try:
        rt.query_once(
            "bridge_columns:with_columns(E, R, forall(between(1, 300, _I), ( "
            "  _K is _I // 3, format(atom(_A), 'tmp_atom_~w', [_K]), "
            "  length(_As, 20), maplist(=(_A), _As), _H =.. [w|_As], "
            "  ( _I mod 7 =:= 0 -> garbage_collect_atoms ; true ), "
            "  ( _I mod 2 =:= 0 -> _T1 is float(_I) / 2 ; _T1 is 2 ** 70 + _I ), "
            "  bridge_columns:columns_sink(_H, _T1, _I) )))",
            {"E": "test_native_wide", "R": rec})
        got = _events(rec.chunks)
        want = [(Compound("w", (f"tmp_atom_{i // 3}",) * 20), i / 2 if i % 2 == 0 else 2 ** 70 + i, i)
                for i in range(1, 301)]
        assert got == want
        assert [type(t1) for _, t1, _ in got] == [float if i % 2 == 0 else int for i in range(1, 301)]
    finally:
        rt.query_once("bridge_columns:columns_drop(E)", {"E": "test_native_wide"})


def _native_goal_env(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    goal = (f"use_module('{PROLOG_DIR / 'native'}'), native_library(columns_buffer, P), "
            "format('~w~n', [P]), halt")
    return subprocess.run([swipl_executable(), "-q", "-g", goal, "-t", "halt(1)"],
                          env={**os.environ, "EPSPARQL_NATIVE_DIR": str(tmp_path), **env},
                          capture_output=True, text=True, timeout=120)


def test_the_c_part_is_built_once_per_source_and_swi_prolog(tmp_path):
    first = _native_goal_env(tmp_path)
    assert first.returncode == 0, first.stderr
    path = Path(first.stdout.strip())
    assert path.parent == tmp_path and path.exists()
    assert path.name.startswith("columns_buffer-") and path.suffix == ".so"
    stamp = path.stat().st_mtime_ns
    again = _native_goal_env(tmp_path, CC="/nonexistent/cc")   # no build: no compiler needed
    assert again.returncode == 0, again.stderr
    assert Path(again.stdout.strip()) == path and path.stat().st_mtime_ns == stamp
    assert [p.name for p in tmp_path.iterdir()] == [path.name]   # no temporary left


def test_without_a_compiler_the_error_says_so(tmp_path):
    missing = _native_goal_env(tmp_path, CC="/nonexistent/cc")
    assert missing.returncode != 0
    assert "could not run the C compiler /nonexistent/cc" in missing.stderr
    failing = _native_goal_env(tmp_path, CC="false")
    assert failing.returncode != 0
    assert "could not build" in failing.stderr and "columns_buffer.c" in failing.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_atom_cache_over_many_atoms_and_calls():
    """More distinct atoms than the call's atom cache has slots (so slots
    are taken over), each at changing argument positions (the last-atom
    slots miss), atoms made and collected between detections, and a
    second call on the same dictionary: every atom decodes as itself."""
    rt = runtime()
    table = TermTable()
    goal = ("bridge_columns:with_columns(E, R, forall(between(1, 9000, _I), ( "
            "  _X is (_I * {a}) mod 6007, _Y is (_I * {b}) mod 6007, "
            "  format(atom(_A), 'cache_atom_~w', [_X]), format(atom(_B), 'cache_atom_~w', [_Y]), "
            "  ( _I mod 500 =:= 0 -> garbage_collect_atoms ; true ), "
            "  bridge_columns:columns_sink(p(_A, _B, _I), _I, _I) )))")
    try:
        for a, b in ((1, 7), (13, 1)):
            rec = ColumnReceiver(table)
            rt.query_once(goal.format(a=a, b=b), {"E": "test_native_cache", "R": rec})
            want = [(Compound("p", (f"cache_atom_{i * a % 6007}", f"cache_atom_{i * b % 6007}", i)), i, i)
                    for i in range(1, 9001)]
            assert _events(rec.chunks) == want
    finally:
        rt.query_once("bridge_columns:columns_drop(E)", {"E": "test_native_cache"})


def test_a_remembered_atom_evicted_from_the_cache_and_collected():
    """The last-atom slots hold no reference of their own: an atom kept at
    one argument position while thousands of others pass through the
    cache at another (evicting its slot), collected and made again in
    between, still decodes as itself."""
    rt = runtime()
    rec = ColumnReceiver(TermTable())
    try:
        rt.query_once(
            "bridge_columns:with_columns(E, R, forall(between(1, 9000, _I), ( "
            "  _K is _I // 1500, format(atom(_A), 'kept_atom_~w', [_K]), "
            "  format(atom(_B), 'passing_atom_~w', [_I]), "
            "  ( _I mod 250 =:= 0 -> garbage_collect_atoms ; true ), "
            "  bridge_columns:columns_sink(q(_A, _B), _I, _I) )))",
            {"E": "test_native_evict", "R": rec})
        want = [(Compound("q", (f"kept_atom_{i // 1500}", f"passing_atom_{i}")), i, i)
                for i in range(1, 9001)]
        assert _events(rec.chunks) == want
    finally:
        rt.query_once("bridge_columns:columns_drop(E)", {"E": "test_native_evict"})


def test_extra_flags_get_their_own_build_and_cc_may_be_a_file(tmp_path):
    """EPSPARQL_NATIVE_CFLAGS (a sanitizer build, say) is part of the
    build's name, so it never replaces the plain build; CC may name the
    compiler by its file (path(CC) once refused /usr/bin/gcc)."""
    import shutil
    cc = shutil.which("cc") or shutil.which("gcc")
    plain = _native_goal_env(tmp_path, CC=cc)
    assert plain.returncode == 0, plain.stderr
    flagged = _native_goal_env(tmp_path, EPSPARQL_NATIVE_CFLAGS=" -g  -DEPSPARQL_TEST ")
    assert flagged.returncode == 0, flagged.stderr
    a, b = Path(plain.stdout.strip()), Path(flagged.stdout.strip())
    assert a != b and a.exists() and b.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([a.name, b.name])
