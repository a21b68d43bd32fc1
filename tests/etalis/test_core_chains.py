"""The core's new operators and ETALIS' consumption policies, against
reference simulations written from their definitions (docs/CORE.md):

- `L seq star_times(Q)`: every L occurs at once; every later compatible Q
  extends a chain (all of them unrestricted, the last touched one recent,
  the first stored one chronological) and occurs over [chain start, Q end];
- `L seq aggregate(Op, Q, R)`: the same with a running count/sum/min/max;
- `P fnot E`: P occurs unless a compatible E ending no later than P's end
  was seen before it;
- replace_bindings (ETALIS' recent and chronological): a new partial match
  replaces the stored ones with its bindings; a match consumes its partner.
"""
from __future__ import annotations

import random
from collections import Counter

import pytest

from conftest import as_tuple
from epsparql.core import term


def gen_stream(rng, names, n, keys=(0, 1, 2), values=(1, 5, 9)):
    """(name, key, value, start, end) sorted by end; intervals may overlap."""
    out = []
    for _ in range(n):
        s = rng.randint(0, 12)
        out.append((rng.choice(names), rng.choice(keys), rng.choice(values), s,
                    s + rng.choice((0, 0, 1))))
    rng.shuffle(out)
    out.sort(key=lambda e: e[4])
    return out


def push(eng, evs):
    got = eng.push_many([(term(n, k, v), s, e) for (n, k, v, s, e) in evs])
    assert eng.errors == []
    return Counter((as_tuple(d.event), d.start, d.end) for d in got)


# --------------------------------------------------------------- chains

OPS = {"count": (0, lambda a, x: a + 1),
       "sum(V2)": (0, lambda a, x: a + x),
       "min(V2)": (float("inf"), min),
       "max(V2)": (float("-inf"), max)}


def reference_chains(evs, policy, op=None):
    """h(K, R) <- a(K, _) seq star_times/aggregate(b(K, V2)): simulate."""
    chains = []                # [key, start, end, acc, touched], in store order
    out = Counter()
    init, step = OPS[op] if op else (None, None)
    tick = 0
    for (name, k, v, s, e) in evs:
        tick += 1
        if name == "a":
            chains.append([k, s, e, init, tick])
            out[(("h", (k, init) if op else (k,)), s, e)] += 1
        elif name == "b":
            cands = [c for c in chains if c[0] == k and c[2] < s]
            if policy == "recent":
                cands = sorted(cands, key=lambda c: -c[4])[:1]
            elif policy == "chronological":
                cands = cands[:1]
            for c in cands:
                c[2] = e
                c[4] = tick
                if op:
                    c[3] = step(c[3], v)
                out[(("h", (k, c[3]) if op else (k,)), c[1], e)] += 1
            if policy == "chronological":          # re-stored at the end
                for c in cands:
                    chains.remove(c)
                    chains.append(c)
    return out


@pytest.mark.parametrize("policy", ["unrestricted", "recent", "chronological"])
@pytest.mark.parametrize("seed", range(10))
def test_star_times_against_reference(make_engine, policy, seed):
    rng = random.Random(seed)
    evs = gen_stream(rng, ["a", "b", "b"], rng.randint(3, 14))
    eng = make_engine(policy=policy)
    eng.add_rules("h(K) <- a(K, _) seq star_times(b(K, _)).")
    assert push(eng, evs) == reference_chains(evs, policy), evs


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("policy", ["unrestricted", "recent"])
@pytest.mark.parametrize("seed", range(6))
def test_running_aggregate_against_reference(make_engine, op, policy, seed):
    rng = random.Random(seed)
    evs = gen_stream(rng, ["a", "b", "b"], rng.randint(3, 14))
    eng = make_engine(policy=policy)
    eng.add_rules(f"h(K, R) <- a(K, _) seq aggregate({op}, b(K, V2), R).")
    assert push(eng, evs) == reference_chains(evs, policy, op), evs


def test_running_aggregate_initial_value_can_be_given(make_engine):
    eng = make_engine()
    eng.add_rules("h(R) <- s seq aggregate(min(X, 100000), v(X), R).")
    got = eng.push_many([(term("s"), 1), (term("v", 7), 2), (term("v", 9), 3)])
    assert [as_tuple(d.event) for d in got] == [("h", (100000,)), ("h", (7,)), ("h", (7,))]


# --------------------------------------------------------------- fnot

@pytest.mark.parametrize("seed", range(20))
def test_fnot_against_reference(make_engine, seed):
    rng = random.Random(seed)
    evs = gen_stream(rng, ["a", "b"], rng.randint(2, 14))
    eng = make_engine()
    eng.add_rules("h(K) <- a(K, _) fnot b(K, _).")
    want = Counter()
    for i, (name, k, _, s, e) in enumerate(evs):
        if name == "a" and not any(n == "b" and kk == k and ee <= e
                                   for (n, kk, _, _, ee) in evs[:i]):
            want[(("h", (k,)), s, e)] += 1
    assert push(eng, evs) == want, evs


# ------------------------------------------- ETALIS' consumption policies

def reference_seq_replace(evs, policy):
    """d(K, V1, V2) <- a(K, V1) seq b(K, V2), one partial match per bindings."""
    store = []                                  # [k, v, start, end]; front first
    out = Counter()
    for (name, k, v, s, e) in evs:
        if name == "b":
            for g in store:                     # recent: newest first; chrono: oldest first
                if g[0] == k and g[3] < s:
                    store.remove(g)
                    out[(("d", (k, g[1], v)), g[2], e)] += 1
                    break
        else:
            store = [g for g in store if (g[0], g[1]) != (k, v)]
            if policy == "recent":
                store.insert(0, [k, v, s, e])
            else:
                store.append([k, v, s, e])
    return out


@pytest.mark.parametrize("policy", ["recent", "chronological"])
@pytest.mark.parametrize("seed", range(15))
def test_replace_bindings_seq_against_reference(make_engine, policy, seed):
    rng = random.Random(seed)
    evs = gen_stream(rng, ["a", "b"], rng.randint(3, 16), values=(1, 2))
    eng = make_engine(policy=policy)
    eng.set_option("replace_bindings", True)
    eng.add_rules("d(K, V1, V2) <- a(K, V1) seq b(K, V2).")
    assert push(eng, evs) == reference_seq_replace(evs, policy), evs


def test_replace_bindings_checks_before_it_stores(make_engine):
    """a(X) seq a(X): the second a pairs with the first before replacing it."""
    eng = make_engine(policy="recent")
    eng.set_option("replace_bindings", True)
    eng.add_rules("d(X) <- a(X) seq a(X).")
    got = eng.push_many([(term("a", 1), 1), (term("a", 1), 2), (term("a", 1), 3)])
    assert [(as_tuple(d.event), d.start, d.end) for d in got] == \
        [(("d", (1,)), 1, 2), (("d", (1,)), 2, 3)]
