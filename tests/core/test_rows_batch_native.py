"""The e/3 items of a batch made in C (prolog/c/rows_batch.c) are those
triple_rows/8 makes in Prolog, and where C cannot make them (a float time
to make exact, a bad place, lists of different lengths) it leaves the
batch to Prolog, binding nothing."""
from __future__ import annotations

import random

import pytest

from epsparql import Engine
from epsparql.core.runtime import runtime


@pytest.fixture(scope="module", autouse=True)
def loaded():
    Engine().close()            # loads bridge_python and its C part


def _case(rnd: random.Random) -> tuple[str, bool]:
    n = rnd.randint(0, 12)
    terms = ["'http://ex/a'", "'http://ex/b'", "7", "2.5", "n(5, 'http://ex/dt', \"05\")"]
    k = len(terms)
    ok = True
    ss = [rnd.randint(1, k) for _ in range(n)]
    ps = [rnd.randint(1, k) for _ in range(n)]
    os_ = [f"lit({rnd.choice(['3', '2.0', 'x'])})" if rnd.random() < 0.3 else str(rnd.randint(1, k))
           for _ in range(n)]
    t1 = [str(rnd.randint(0, 9)) for _ in range(n)]
    t2 = list(t1)
    r = rnd.random()
    if n and r < 0.15:
        t1[rnd.randrange(n)] = "1.5"; ok = False           # a float time: Prolog's
    elif n and r < 0.25:
        ss[rnd.randrange(n)] = k + 1; ok = False           # a bad place
    elif n and r < 0.3:
        ps = ps[:-1]; ok = False                            # lengths differ
    lists = ", ".join("[" + ", ".join(map(str, x)) + "]" for x in (ss, ps, os_, t1, t2))
    return f"_Table = terms({', '.join(terms)}), _Args = [{lists}]", ok


@pytest.mark.parametrize("seed", range(40))
def test_c_items_are_prologs(seed):
    rnd = random.Random(seed)
    setup, ok = _case(rnd)
    r = runtime().query_once(
        f"{setup}, _Args = [_Ss, _Ps, _Os, _T1s, _T2s], "
        "( bridge_python:triple_rows_c(_Ss, _Ps, _Os, _T1s, _T2s, _Table, _B1) -> C = made ; C = left ), "
        "( catch(bridge_python:triple_rows(_Ss, _Ps, _Os, _T1s, _T2s, _Table, 0, _B2), _, fail) "
        "  -> P = made ; P = error ), "
        "( C == made -> ( _B1 == _B2 -> Same = true ; Same = false ) ; Same = true )")
    assert r is not None
    assert r["Same"] in (True, "true")
    if ok:
        assert r["C"] == "made" and r["P"] == "made"
    else:
        assert r["C"] == "left"
