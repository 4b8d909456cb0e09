"""Parsing must not leak: comrak-ext's tree is a pyo3 reference cycle (parent <-> children)
that Python's cyclic GC cannot see, so every parse path has to unlink it (markdown._walk).
Without that, each note kept ~170 objects (~20 KB) alive: a writer parsing small batches
inline grows for as long as it runs. The live allocation count measures it: synthetic
notes parsed once to warm every cache, then twice more; a leak grows by ~100 blocks a note,
the bound is a few blocks a note."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from pathlib import Path

import comrak
import pytest

from vault_agent.indexer import markdown
from vault_agent.indexer.parse import parse_note
from vault_agent.indexer.parse_pool import parse_batch
from vault_agent.paths import Vault

NOTES = 300
ROUNDS = 2
BOUND = 3 * NOTES  # blocks left after ROUNDS rounds (a leak leaves ~100 x NOTES per round)


def synthetic_note(i: int) -> str:
    """Every kind of node the walk meets or skips: headings (ATX, setext, with inline
    syntax), nested lists and blockquotes, code, HTML, tables, emphasis, links, images."""
    return (
        f"---\ntags: [t{i % 7}]\n---\n# Note {i} with *emphasis* and [[link {i}]]\n\n"
        f"Intro **strong _nested {i}_** and `code` with [a link](https://example.com/{i}).\n\n"
        f"## Lists\n\n- one\n  - two with ![img](x{i}.png)\n    1. three\n\n"
        f"> quote {i}\n> > nested *quote*\n\nSetext {i}\n---\n\n"
        f"```python\nprint({i})\n```\n\n    indented code\n\n<div>html {i}</div>\n\n"
        f"| a | b |\n|---|---|\n| *{i}* | [x](y) |\n\n### End\ntext ~~strike~~ {i}\n"
    )


def allocated_growth(parse_all: Callable[[], None]) -> int:
    parse_all()  # warm up: regex, logger and interned-string caches fill once
    gc.collect()
    before = sys.getallocatedblocks()
    for _ in range(ROUNDS):
        parse_all()
    gc.collect()
    return sys.getallocatedblocks() - before


def test_parse_note_leaves_nothing_behind() -> None:
    raws = [synthetic_note(i).encode() for i in range(NOTES)]

    def parse_all() -> None:
        for i, raw in enumerate(raws):
            parse_note(f"n{i}.md", raw, 0, len(raw))

    assert allocated_growth(parse_all) < BOUND


def test_inline_batch_parse_leaves_nothing_behind(tmp_path: Path) -> None:
    # The writer's path for small batches (parse_pool.parse_batch, no worker process).
    rels = [f"d{i % 5}/n{i}.md" for i in range(NOTES)]
    for i, rel in enumerate(rels):
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_text(synthetic_note(i), encoding="utf-8")
    vault = Vault(tmp_path)

    def parse_all() -> None:
        for start in range(0, NOTES, 100):
            tables, missing = parse_batch(vault, rels[start : start + 100])
            assert missing == [] and tables["notes"].num_rows == 100
            del tables

    assert allocated_growth(parse_all) < BOUND


def test_a_walk_that_raises_still_unlinks_the_tree() -> None:
    # No source lines: reading the first heading's line raises IndexError mid-walk.
    srcs = [synthetic_note(i) + "\n" for i in range(NOTES)]

    def parse_all() -> None:
        for src in srcs:
            out = markdown._Blocks(lines=[], sources=[], heading_at=[], events=[], code_ranges=[])
            root = comrak.parse_document(src, markdown._COMRAK_EXT, markdown._COMRAK_OPTS)
            with pytest.raises(IndexError):
                markdown._walk(root, out)
            del root

    assert allocated_growth(parse_all) < BOUND
