"""Trees to print or draw: what ``epsparql explain`` shows is made of these.

The algebra (:mod:`.algebra_tree`) and the rule graph (:mod:`.rule_graph`)
both become :class:`TreeNode` trees; :func:`tree_lines` prints one as an
indented tree, :mod:`.drawing` draws them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["TreeNode", "tree_lines", "duration_text", "clip", "MAX_INDENT"]


@dataclass
class TreeNode:
    """A node of a tree to print or draw: a label, detail lines, children."""

    label: str
    details: list[str] = field(default_factory=list)
    children: list["TreeNode"] = field(default_factory=list)
    ref: bool = False            # a reference to a node shown elsewhere


#: Indentation wider than this is shown cut (``… `` and its last part):
#: a tree thousands of levels deep prints in lines of bounded width.
MAX_INDENT = 90


def tree_lines(node: TreeNode, prefix: str = "", last: bool = True, top: bool = True) -> list[str]:
    """The tree as indented lines (box-drawing branches, details under their node)."""
    lines: list[str] = []
    stack: list[tuple[TreeNode, str, bool, bool]] = [(node, prefix, last, top)]
    while stack:                      # iterative: trees can be thousands of levels deep
        node, prefix, last, top = stack.pop()
        if top:
            head, cont = "", ""
        else:
            head = prefix + ("└─ " if last else "├─ ")
            cont = prefix + ("   " if last else "│  ")
        lines.append(_cut(head) + node.label)
        bar = "│  " if node.children else "   "
        for d in node.details:
            lines.append(_cut(cont + bar) + "  " + d if not top else bar + "  " + d)
        kids = node.children
        for i in range(len(kids) - 1, -1, -1):
            stack.append((kids[i], cont if not top else "", i == len(kids) - 1, False))
    return lines


def _cut(indent: str) -> str:
    if len(indent) <= MAX_INDENT:
        return indent
    return "… " + indent[-(MAX_INDENT - 30):]


def duration_text(seconds: Any) -> str:
    """A window or age for people: ``30min``, ``2h``, ``1d``, ``90s``, ``∞``."""
    if seconds in (None, "inf") or (isinstance(seconds, float) and math.isinf(seconds)):
        return "∞"
    s = float(seconds)
    for unit, n in (("d", 86400), ("h", 3600), ("min", 60)):
        if s >= n and (s / n).is_integer():
            return f"{int(s / n)}{unit}"
    return f"{s:g}s"


def clip(s: str, n: int) -> str:
    """``s`` cut to ``n`` characters (an ellipsis marks the cut)."""
    return s if len(s) <= n else s[:n - 1] + "…"
