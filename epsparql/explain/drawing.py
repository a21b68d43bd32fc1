"""``epsparql explain --png``: trees drawn side by side with matplotlib."""
from __future__ import annotations

from typing import Sequence

from ..trampoline import Walk, run
from .tree import TreeNode, clip

__all__ = ["draw_png", "count_boxes", "TooLargeToDraw", "MAX_BOXES"]


#: More boxes than this make no legible picture (and take matplotlib minutes).
MAX_BOXES = 400


class TooLargeToDraw(ValueError):
    """The trees have more than :data:`MAX_BOXES` boxes."""


def count_boxes(roots: Sequence[TreeNode]) -> int:
    """How many boxes the trees would draw."""
    n, stack = 0, list(roots)
    while stack:
        t = stack.pop()
        n += 1
        stack.extend(t.children)
    return n


def draw_png(path: str, panels: Sequence[tuple[str, list[TreeNode]]], title: str) -> None:
    """Draw trees (algebra, rule graph) side by side with matplotlib.  Raises
    :class:`TooLargeToDraw` (drawing nothing) past :data:`MAX_BOXES` boxes."""
    boxes = sum(count_boxes(roots) for _, roots in panels)
    if boxes > MAX_BOXES:
        raise TooLargeToDraw(f"the trees have {boxes:,} boxes, more than can be drawn "
                             f"legibly ({MAX_BOXES:,}); the printed trees show them all")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def layout(roots: list[TreeNode]):
        pos: list[tuple[TreeNode, float, int]] = []
        edges: list[tuple[int, int]] = []
        next_x = [0.0]

        def place(n: TreeNode, depth: int) -> Walk[int]:
            idx = len(pos)
            pos.append((n, 0.0, depth))
            kids = []
            for c in n.children:
                kids.append((yield place(c, depth + 1)))
            if kids:
                x = (pos[kids[0]][1] + pos[kids[-1]][1]) / 2
            else:
                x = next_x[0]
                next_x[0] += 1.0
            pos[idx] = (n, x, depth)
            edges.extend((idx, k) for k in kids)
            return idx

        for r in roots:
            run(place(r, 0))
            next_x[0] += 0.3
        return pos, edges

    layouts = [layout(roots) for _, roots in panels]
    widths = [max([x for _, x, _ in p] + [0]) + 1 for p, _ in layouts]
    depths = [max([d for _, _, d in p] + [0]) + 1 for p, _ in layouts]
    col_w, row_h = 3.0, 1.35
    stacked = sum(widths) > 10 and len(panels) > 1     # wide: one panel above the other
    if stacked:
        fig_w = max(8.0, max(widths) * col_w + 1)
        fig_h = max(4.0, sum(depths) * row_h + 1.5 * len(panels))
        fig, axes = plt.subplots(len(panels), 1, figsize=(min(fig_w, 80), min(fig_h, 80)),
                                 gridspec_kw={"height_ratios": [max(d, 1) for d in depths]},
                                 squeeze=False)
        axes_list = [a[0] for a in axes]
    else:
        fig_w = max(8.0, sum(widths) * col_w + 1)
        fig_h = max(4.0, max(depths) * row_h + 1.5)
        fig, axes = plt.subplots(1, len(panels), figsize=(min(fig_w, 80), min(fig_h, 80)),
                                 gridspec_kw={"width_ratios": [max(w, 1) for w in widths]},
                                 squeeze=False)
        axes_list = list(axes[0])
    fig.suptitle(title, fontsize=12)
    for ax, (name, _), (pos, edges), w, dep in zip(axes_list, panels, layouts, widths, depths):
        ax.set_title(name, fontsize=11, loc="left")
        ax.set_xlim(-0.6, w - 0.4)
        ax.set_ylim(-dep + 0.4, 0.6)
        ax.axis("off")
        texts = []
        for n, x, d in pos:
            lines = [clip(n.label, 44)] + [clip(t, 44) for t in n.details[:6]]
            if len(n.details) > 6:
                lines.append(f"… {len(n.details) - 6} more")
            face = "#eeeeee" if n.ref else ("#dbe9f6" if n.label.startswith("n") else "#fdebd0")
            texts.append(ax.text(x, -d, "\n".join(lines), ha="center", va="center", fontsize=8,
                                 family="DejaVu Sans Mono", zorder=2,
                                 bbox=dict(boxstyle="round,pad=0.35", fc=face, ec="#444444",
                                           lw=0.7)))
        for a, b in edges:
            _, xa, da = pos[a]
            _, xb, db = pos[b]
            # centre to centre, clipped at both boxes (texts are drawn first)
            ax.annotate("", xy=(xb, -db), xytext=(xa, -da), zorder=3,
                        arrowprops=dict(arrowstyle="-|>", color="#555555", lw=0.8,
                                        patchA=texts[a].get_bbox_patch(),
                                        patchB=texts[b].get_bbox_patch(),
                                        shrinkA=1, shrinkB=1))
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=100, format="png")     # the path as given, no extension added
    plt.close(fig)
