"""The bounded folder tree of one snapshot, computed per request with array operations.

Input: the live notes' folder codes (`LiveNotes.folders`) and the folder vocabulary's
layout (parent, depth and name rank of every folder code). Direct counts are one
`bincount`; recursive counts add each level into its parents, deepest level first; the
breadth-first order sorts each level by (position of the parent, name). A folder is in
the tree when it holds a note at any depth; the root always is.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from vault_agent.query.models import TreeNode
from vault_agent.query.segment_columns import FolderVocab

Ints = npt.NDArray[np.int64]


def folder_counts(folders: npt.NDArray[np.int32], vocab: FolderVocab) -> tuple[Ints, Ints]:
    """(direct, recursive) note counts indexed by folder code."""
    parent, depth, _ = vocab.layout()
    size = len(parent)
    direct = np.bincount(folders, minlength=size).astype(np.int64)[:size]
    recursive = direct.copy()
    for level in range(int(depth.max(initial=0)), 0, -1):
        codes = np.flatnonzero(depth == level)
        recursive += np.bincount(parent[codes], weights=recursive[codes], minlength=size).astype(np.int64)
    return direct, recursive


def top_level_folders(
    folders: npt.NDArray[np.int32], vocab: FolderVocab, limit: int
) -> tuple[list[tuple[str, int]], bool]:
    """The `limit` top-level folders with the most notes (recursive), count descending then
    path ascending, and whether more exist."""
    _, level, rank = vocab.layout()
    _, recursive = folder_counts(folders, vocab)
    codes = np.flatnonzero((level == 1) & (recursive > 0))
    codes = codes[np.lexsort((rank[codes], -recursive[codes]))]
    return [(vocab.name(int(c)), int(recursive[c])) for c in codes[:limit]], len(codes) > limit


def folder_tree(
    folders: npt.NDArray[np.int32], vocab: FolderVocab, depth: int, limit: int, direct_only: bool
) -> tuple[TreeNode, bool]:
    """Breadth-first selection of at most `limit` nodes down to `depth`; (root, truncated)."""
    parent, level, rank = vocab.layout()
    direct, recursive = folder_counts(folders, vocab)
    present = recursive > 0
    present[0] = True  # the root, even for an empty vault
    children = np.bincount(parent[present & (level > 0)], minlength=len(parent))
    position = np.full(len(parent), -1, np.int64)
    position[0] = 0
    order: list[int] = [0]
    for lvl in range(1, depth + 1):
        codes = np.flatnonzero(present & (level == lvl))
        if not len(codes):
            break
        codes = codes[np.lexsort((rank[codes], position[parent[codes]]))]
        position[codes] = np.arange(len(order), len(order) + len(codes))
        order.extend(int(c) for c in codes)
    counts = direct if direct_only else recursive
    nodes: dict[int, TreeNode] = {}
    for code in order[:limit]:
        node = TreeNode(
            path=vocab.name(code),
            note_count=int(counts[code]),
            child_folders=int(children[code]),
            children=[],
        )
        nodes[code] = node
        up = int(parent[code])
        if up in nodes:
            nodes[up].children.append(node)  # BFS order = alphabetical per parent
    return nodes[0], len(order) > limit
