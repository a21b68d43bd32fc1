"""A small reference evaluator of the rule language of docs/CORE.md.

Deliberately naive: each pattern is evaluated over the whole finite stream
to the explicit list of its occurrences, by nested loops, with no windows
pushed down, no stores, no indexing, no sharing.  It is the specification
written as Python, to compare the engine against.

Patterns (plain tuples):

    ("ev", name, args)        args: Var or constants (int, float, str atoms)
    (op, P, Q)                op in seq and par equals meets during starts finishes
    ("or", P, Q)
    ("cnot", P, E)
    ("where", P, cond)        cond(bindings) -> bool, or an iterable of dicts
                              of new bindings (one per solution)
    ("within", P, W)

Events: (name, args tuple, start, end).  An occurrence is
(bindings dict, start, end); a pattern denotes the MULTISET of its
occurrences, i.e. a list (every pushed event is a distinct occurrence).
Derived heads feeding other rules are not modelled.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass


@dataclass(frozen=True)
class Var:
    name: str

    def __repr__(self) -> str:
        return self.name


# The temporal condition of each binary operator on a left interval
# [ls, le] and a right one [rs, re], straight from the table in CORE.md.
TEMPORAL = {
    "seq": lambda ls, le, rs, re: le < rs,
    "and": lambda ls, le, rs, re: True,
    "par": lambda ls, le, rs, re: ls <= re and rs <= le,
    "equals": lambda ls, le, rs, re: ls == rs and le == re,
    "meets": lambda ls, le, rs, re: le == rs,
    "during": lambda ls, le, rs, re: rs < ls and le < re,
    "starts": lambda ls, le, rs, re: ls == rs and le < re,
    "finishes": lambda ls, le, rs, re: le == re and rs < ls,
}


def same(a, b) -> bool:
    """Equality as Prolog unification of ground atomic terms (1 \\= 1.0)."""
    return type(a) is type(b) and a == b


def merge(b1: dict, b2: dict):
    """The union of two compatible bindings, or None if they disagree."""
    out = dict(b1)
    for k, v in b2.items():
        if k in out:
            if not same(out[k], v):
                return None
        else:
            out[k] = v
    return out


def compatible(b1: dict, b2: dict) -> bool:
    return merge(b1, b2) is not None


def match_event(pattern_args, event_args):
    """Bindings if an event's args match a pattern's args, else None."""
    if len(pattern_args) != len(event_args):
        return None
    b: dict = {}
    for p, v in zip(pattern_args, event_args):
        if isinstance(p, Var):
            if p.name in b:
                if not same(b[p.name], v):
                    return None
            else:
                b[p.name] = v
        elif not same(p, v):
            return None
    return b


def occurrences(pattern, events):
    """The list (multiset) of occurrences of pattern over events."""
    kind = pattern[0]
    out = []
    if kind == "ev":
        _, name, args = pattern
        for (ename, eargs, s, e) in events:
            if ename == name:
                b = match_event(args, eargs)
                if b is not None:
                    out.append((b, s, e))
    elif kind in TEMPORAL:
        _, left, right = pattern
        cond = TEMPORAL[kind]
        lefts = occurrences(left, events)
        rights = occurrences(right, events)
        for (lb, ls, le) in lefts:
            for (rb, rs, re) in rights:
                if cond(ls, le, rs, re):
                    b = merge(lb, rb)
                    if b is not None:
                        out.append((b, min(ls, rs), max(le, re)))
    elif kind == "or":
        _, left, right = pattern
        out.extend(occurrences(left, events))
        out.extend(occurrences(right, events))
    elif kind == "cnot":
        _, p, e = pattern
        negs = occurrences(e, events)
        for (pb, ps, pe) in occurrences(p, events):
            blocked = False
            for (eb, es, ee) in negs:
                if compatible(pb, eb) and ps < es and ee < pe:
                    blocked = True
            if not blocked:
                out.append((pb, ps, pe))
    elif kind == "where":
        _, p, cond = pattern
        for (pb, ps, pe) in occurrences(p, events):
            result = cond(pb)
            if result is True:
                out.append((pb, ps, pe))
            elif result is False:
                pass
            else:
                for extra in result:
                    b = merge(pb, extra)
                    if b is not None:
                        out.append((b, ps, pe))
    elif kind == "within":
        _, p, w = pattern
        for (pb, ps, pe) in occurrences(p, events):
            if pe - ps <= w:
                out.append((pb, ps, pe))
    else:
        raise ValueError(f"unknown pattern {pattern!r}")
    return out


def detections(rules, events) -> Counter:
    """Multiset of (head, start, end) for rules [(head_name, head_args, body)].

    A head is (name, args tuple); a Var argument gives its value, or None
    when the occurrence leaves it unbound.
    """
    result: Counter = Counter()
    for head_name, head_args, body in rules:
        for (b, s, e) in occurrences(body, events):
            args = tuple(b.get(a.name) if isinstance(a, Var) else a for a in head_args)
            result[((head_name, args), s, e)] += 1
    return result


def pattern_vars(pattern, acc=None):
    """Names of the variables of a pattern, in first-occurrence order
    (where-conditions contribute the variables they declare in .vars)."""
    if acc is None:
        acc = []
    kind = pattern[0]
    if kind == "ev":
        for a in pattern[2]:
            if isinstance(a, Var) and a.name not in acc:
                acc.append(a.name)
    elif kind in TEMPORAL or kind in ("or", "cnot"):
        pattern_vars(pattern[1], acc)
        pattern_vars(pattern[2], acc)
    elif kind == "where":
        pattern_vars(pattern[1], acc)
        for v in getattr(pattern[2], "vars", ()):
            if v not in acc:
                acc.append(v)
    elif kind == "within":
        pattern_vars(pattern[1], acc)
    return acc


def prolog_value(v) -> str:
    if isinstance(v, Var):
        return v.name
    if isinstance(v, str):
        return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return repr(v)


def pattern_text(pattern) -> str:
    """The pattern as (fully parenthesised) rule-language text.
    A where-condition must carry its Prolog text in .prolog."""
    kind = pattern[0]
    if kind == "ev":
        _, name, args = pattern
        if not args:
            return name
        return f"{name}({', '.join(prolog_value(a) for a in args)})"
    if kind in TEMPORAL or kind in ("or", "cnot"):
        return f"({pattern_text(pattern[1])} {kind} {pattern_text(pattern[2])})"
    if kind == "where":
        return f"({pattern_text(pattern[1])} where ({pattern[2].prolog}))"
    if kind == "within":
        return f"({pattern_text(pattern[1])} within {pattern[2]!r})"
    raise ValueError(f"unknown pattern {pattern!r}")


def rule_text(head_name, head_args, body) -> str:
    if head_args:
        head = f"{head_name}({', '.join(prolog_value(a) for a in head_args)})"
    else:
        head = head_name
    return f"{head} <- {pattern_text(body)}."
