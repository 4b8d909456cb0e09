"""Compact human output: generic tables and trees, per-operation renderers."""

from __future__ import annotations

from vault_agent.api.ops import CATALOG
from vault_agent.cli.render import generic, render_body, table


def test_table_aligns_and_right_aligns_numbers() -> None:
    rows = [{"tag": "project", "noteCount": 3}, {"tag": "research/ml", "noteCount": 12}]
    assert table(rows) == "tag          noteCount\nproject              3\nresearch/ml         12"
    assert table([]) == "(none)"


def test_generic_renders_scalars_lists_and_trees() -> None:
    data = {"path": "a.md", "count": 2, "items": [{"n": 1}], "empty": [], "flags": ["x", "y"]}
    assert generic(data) == "path: a.md\ncount: 2\nitems:\n  n\n  1\nempty: (none)\nflags: x, y"
    tree = {"id": "r", "children": [{"id": "a", "children": [{"id": "b", "children": []}]}]}
    assert generic(tree) == "id=r\n  id=a\n    id=b"


def test_render_body_prefers_the_operation_renderer() -> None:
    body = {"data": {"tags": [{"tag": "t", "noteCount": 1}], "indexFreshness": "fresh"}, "warnings": []}
    tags = CATALOG.named("tags")
    assert render_body(tags.envelope, body, tags.render) == "  notes  tag\n      1  t\n\nindex: fresh"
    assert render_body(True, body, own=lambda b: "own") == "own"
    outline = {
        "path": "a.md",
        "title": "A",
        "headings": [{"level": 2, "text": "Goals", "id": "h2-goals-0001"}],
    }
    op = CATALOG.named("get-note-outline")
    assert render_body(op.envelope, outline, op.render) == "a.md  (A)\n  ## Goals  [h2-goals-0001]"


def test_render_body_without_an_operation_renderer_is_generic() -> None:
    body = {"data": {"path": "a.md", "count": 2}, "warnings": []}
    assert render_body(True, body) == "path: a.md\ncount: 2"
    assert render_body(False, {"path": "a.md"}) == "path: a.md"


def test_a_section_read_by_get_says_which_lines_it_shows() -> None:
    data = {
        "path": "a.md",
        "title": "A",
        "tags": [],
        "snapshotMatches": True,
        "text": "## Goals\n\nship\n",
        "truncated": False,
        "section": {"id": "h2-goals-0002", "level": 2, "text": "Goals", "startLine": 5, "endLine": 7},
    }
    op = CATALOG.named("get")
    assert render_body(op.envelope, {"data": data, "warnings": []}, op.render) == (
        "a.md  (A)  tags: -\nsection h2-goals-0002 (Goals), lines 5-7\n\n## Goals\n\nship"
    )
