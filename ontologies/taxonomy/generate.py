#!/usr/bin/env python
"""A seeded plant taxonomy shaped like the one of Test 2 of the EP-SPARQL paper.

    .venv/bin/python ontologies/taxonomy/generate.py [--seed 2011] [--out FILE]

The paper's class of concern is EthanPlants' ``Tracheobionta`` (vascular
plants), "that has 40,080 subclasses with a maximum class-hierarchy depth
of eight".  That ontology is not available, so this writes one of the same
shape, as N-Triples (``rdfs:subClassOf`` only), gzipped (about 7 MB as
plain text):

* exactly 40,080 classes strictly below ``Tracheobionta``, on levels 1..8
  (level = longest path up to the root), sized like a botanical hierarchy
  (superdivisions/divisions, divisions, classes, subclasses, orders,
  families, genera, species -- see LEVELS);
* branching drawn from heavy-tailed (log-normal) parent weights: a few
  families with hundreds of genera, many with one or two; every class
  down to the orders has at least one child, families and genera may be
  leaves (species always are);
* about 1.5% of the classes below level 1 have a second parent on the
  level above (hybrids, disputed placements): the hierarchy is a DAG, not
  a tree, and the depth stays at most 8;
* OUTSIDE classes that are not below the root: ``Plantae`` above it (the
  root's super-class) and a ``Bryobionta`` (non-vascular plants) subtree
  next to it, so that a stream over the whole taxonomy also carries
  triples that are not of concern.

Class IRIs are ``EthanPlants.owl#`` + a name: ``Tracheobionta``,
``Plantae``, ``Bryobionta``, ``T<level>_<n>`` below the root and
``B<level>_<n>`` below Bryobionta.  The output is deterministic (also the
gzip header), so the committed file can be checked against a fresh run.

From Python: ``taxonomy(seed)`` gives the edges and the classes,
``below(edges, root)`` the classes below a class (reflexive), ``load(path)``
the edges of a written file.
"""
from __future__ import annotations

import argparse
import gzip
import io
import random
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "tracheobionta.nt.gz"

NS = "http://spire.umbc.edu/ontologies/EthanPlants.owl#"
ROOT = NS + "Tracheobionta"
PLANTAE = NS + "Plantae"
BRYOBIONTA = NS + "Bryobionta"
SUBCLASS = "http://www.w3.org/2000/01/rdf-schema#subClassOf"

#: Classes per level below the root (level 1 = direct sub-classes):
#: superdivisions/divisions, divisions, classes, subclasses, orders,
#: families, genera, species.  Sum: 40,080.
LEVELS = (6, 12, 25, 60, 250, 900, 9_000, 29_827)
#: Levels whose classes all get at least one child (above the genera).
MUST_BRANCH = 6
#: Share of the classes on levels 2..8 that get a second parent.
SECOND_PARENT = 0.015
#: The Bryobionta subtree (outside the root): classes per level.
OUTSIDE_LEVELS = (3, 8, 24, 80, 200)
#: Log-normal sigma of the parent weights (how uneven the branching is).
SIGMA = 1.4

assert sum(LEVELS) == 40_080


def _grow(rnd: random.Random, top: str, prefix: str, levels: tuple[int, ...],
          must_branch: int, second: float) -> list[tuple[str, str]]:
    """Edges (child, parent) of a levelled DAG below ``top``."""
    edges: list[tuple[str, str]] = []
    above = [top]
    for depth, size in enumerate(levels, start=1):
        names = [f"{NS}{prefix}{depth}_{i:05d}" for i in range(size)]
        weights = [rnd.lognormvariate(0.0, SIGMA) for _ in above]
        parents: list[str] = []
        if depth - 1 < must_branch and depth > 1:
            # every class of the level above gets a child first
            parents = list(above)
            rnd.shuffle(parents)
        parents += rnd.choices(above, weights=weights, k=size - len(parents))
        rnd.shuffle(parents)
        for child, parent in zip(names, parents):
            edges.append((child, parent))
            if depth > 1 and len(above) > 1 and rnd.random() < second:
                other = parent
                while other == parent:
                    other = rnd.choices(above, weights=weights)[0]
                edges.append((child, other))
        above = names
    return edges


def taxonomy(seed: int = 2011) -> tuple[list[tuple[str, str]], list[str]]:
    """(edges, classes): ``(sub, super)`` pairs and every class IRI, the
    root's tree first, then the outside classes."""
    rnd = random.Random(seed)
    inside = _grow(rnd, ROOT, "T", LEVELS, MUST_BRANCH, SECOND_PARENT)
    outside = [(ROOT, PLANTAE), (BRYOBIONTA, PLANTAE)]
    outside += _grow(rnd, BRYOBIONTA, "B", OUTSIDE_LEVELS, 3, 0.0)
    edges = inside + outside
    classes: list[str] = []
    seen: set[str] = set()
    for c in [ROOT] + [c for e in edges for c in e]:
        if c not in seen:
            seen.add(c)
            classes.append(c)
    return edges, classes


def below(edges: list[tuple[str, str]], root: str = ROOT) -> set[str]:
    """The classes C with C rdfs:subClassOf* root (the root included)."""
    children = defaultdict(list)
    for c, p in edges:
        children[p].append(c)
    out, todo = {root}, [root]
    while todo:
        x = todo.pop()
        for c in children[x]:
            if c not in out:
                out.add(c)
                todo.append(c)
    return out


def depths(edges: list[tuple[str, str]], root: str = ROOT) -> dict[str, int]:
    """Longest path from each class below ``root`` up to it (root: 0)."""
    parents = defaultdict(list)
    for c, p in edges:
        parents[c].append(p)
    inside = below(edges, root)
    memo: dict[str, int] = {root: 0}

    def depth(c: str) -> int:
        if c not in memo:
            memo[c] = 1 + max(depth(p) for p in parents[c] if p in inside)
        return memo[c]

    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    for c in inside:
        depth(c)
    return memo


def ntriples(edges: list[tuple[str, str]]) -> str:
    return "".join(f"<{c}> <{SUBCLASS}> <{p}> .\n" for c, p in edges)


def write(path: Path, edges: list[tuple[str, str]]) -> None:
    data = ntriples(edges).encode("utf-8")
    if path.suffix == ".gz":
        buf = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as f:
            f.write(data)
        data = buf.getvalue()
    path.write_bytes(data)


def open_text(path: Path):
    """A text stream of the file, gunzipped when it ends in .gz."""
    path = Path(path)
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8")
    return open(path, encoding="utf-8")


def load(path: Path = OUT) -> list[tuple[str, str]]:
    """The (sub, super) edges of a written taxonomy (plain line parsing)."""
    edges = []
    with open_text(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[1] == f"<{SUBCLASS}>":
                edges.append((parts[0][1:-1], parts[2][1:-1]))
    return edges


def graph(path: Path = OUT):
    """The taxonomy as an rdflib Graph (parsed from the gzip file object)."""
    from rdflib import Graph
    g = Graph()
    with open_text(path) as f:
        g.parse(f, format="nt")
    return g


def summary(edges: list[tuple[str, str]]) -> dict:
    inside = below(edges) - {ROOT}
    d = depths(edges)
    parents = defaultdict(set)
    children = defaultdict(int)
    for c, p in edges:
        parents[c].add(p)
        children[p] += 1
    all_classes = {x for e in edges for x in e}
    fan = sorted(children[c] for c in below(edges) if children[c])
    return {
        "triples": len(edges),
        "classes": len(all_classes),
        "below_root": len(inside),
        "outside_root": len(all_classes) - len(inside) - 1,
        "max_depth": max(d.values()),
        "per_level": [sum(1 for c in inside if d[c] == k) for k in range(1, 9)],
        "two_parents": sum(1 for c in inside if len(parents[c]) > 1),
        "leaves_below_root": sum(1 for c in inside if not children[c]),
        "fan_out_median": fan[len(fan) // 2],
        "fan_out_max": fan[-1],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=2011)
    ap.add_argument("--out", type=Path, default=OUT, help="output file (.nt or .nt.gz)")
    args = ap.parse_args()
    edges, _ = taxonomy(args.seed)
    write(args.out, edges)
    s = summary(edges)
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes): {s['triples']:,} triples, "
          f"{s['below_root']:,} classes below Tracheobionta (per level {s['per_level']}), "
          f"max depth {s['max_depth']}, {s['two_parents']} with two parents, "
          f"{s['outside_root']} outside the root; fan-out median {s['fan_out_median']}, "
          f"max {s['fan_out_max']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
