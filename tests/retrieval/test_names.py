"""Names as people type them (issue 23 item 2): which note a name reaches, when it is
AMBIGUOUS (listed, bounded), NOT_FOUND with close names and the call to make next, how MCP
words it, what write tools say (they never guess), and what works without an index.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vault_agent.api.hints import Hints
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import CATALOG
from vault_agent.config import Settings
from vault_agent.errors import VaultAgentError

from .conftest import vault_ctx
from .golden import call, check_golden

NOTES = {
    "areas/plan.md": "# Plan A\n",
    "archive/plan.md": "# Plan B\n",
    "projects/Project Lighthouse.md": "---\ntitle: Project Lighthouse\naliases: [Beacon]\n---\n# Lighthouse\n",
    "people/Ann.md": "---\naliases: [beacon]\n---\n# Ann\n",
    "reviews/2026-01.md": "---\ntitle: Weekly Review\n---\n# Jan\n",
    "reviews/2026-02.md": "---\ntitle: Weekly Review\n---\n# Feb\n",
    "notes/Lighthouse Keeping.md": "# Keeping\n",
    "日本語/灯台の記録.md": "---\ntitle: 灯台の記録\n---\n# 記録\n",
    **{f"todo/{i:02d}/todo.md": f"# Todo {i}\n" for i in range(12)},
}


@pytest.fixture(scope="module")
def nctx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppContext]:
    with vault_ctx(tmp_path_factory.mktemp("names") / "vault", NOTES) as c:
        yield c


MCP_WORDS = Hints(CATALOG)


def _answer(ctx: AppContext, op: str, raw: dict[str, Any]) -> dict[str, Any]:
    try:
        body = call(ctx, op, raw)
    except VaultAgentError as exc:
        return {"code": exc.code, "message": exc.message, "mcp": MCP_WORDS.mcp_message(exc.message)}
    data = body.get("data", body)
    return {"path": data.get("path"), "warnings": body.get("warnings", [])}


CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("basename_twice", "read", {"path": "plan", "full": True}),
    ("wikilink_twice", "get-note-outline", {"path": "[[plan]]"}),
    ("title_twice", "get", {"path": "weekly review"}),
    ("alias_twice", "info", {"path": "BEACON"}),
    ("listing_is_bounded", "scan", {"path": "todo.md"}),
    ("typo_close_names", "read", {"path": "Project Lighthuose", "full": True}),
    ("part_of_a_title", "get-section-source", {"path": "Lighthouse"}),
    ("folder_in_the_name", "related", {"path": "projects/Lighthouse Projekt"}),
    ("nothing_close", "get-metadata-facets", {"path": "zzzz qqqq"}),
    ("cjk_title", "get-document-tree", {"path": "灯台の記録"}),
    ("cjk_typo", "coverage", {"path": "灯台の記禄", "cited_ranges": []}),
    ("partial_path", "read", {"path": "01/todo", "full": True}),
    ("wikilink_without_target", "read", {"path": "[[#Heading]]", "full": True}),
    ("absolute_refused_first", "read", {"path": "/etc/plan", "full": True}),
    ("protected_refused_first", "get-note-outline", {"path": ".obsidian/plan"}),
    ("folder_is_not_a_note", "get-note-outline", {"path": "reviews"}),
    ("folder_is_not_a_file", "read", {"path": "reviews", "full": True}),
    ("other_extension", "get-note-outline", {"path": "reviews/diagram.png"}),
]


def test_ambiguity_and_close_names_golden(nctx: AppContext) -> None:
    check_golden("names_resolution", {name: _answer(nctx, op, raw) for name, op, raw in CASES})


def test_write_tools_never_guess_and_say_so(tmp_path: Path) -> None:
    with vault_ctx(tmp_path / "vault", {"projects/Plan.md": "---\ntitle: The Plan\n---\n# Plan\n"}) as ctx:
        root = ctx.settings.vault
        ctx.settings = Settings(vault=root, index_dir=root / ".vault-agent", writes_enabled=True)
        answers = {}
        for op, raw in [
            ("write", {"path": "The Plan", "content": "x", "mode": "append"}),
            ("replace", {"path": "Plan", "find": "Plan", "replace": "P"}),
            ("edit", {"path": "[[Plan]]", "old_text": "Plan", "new_text": "P"}),
            ("rm", {"path": "The Plan"}),
            ("mv", {"source": "Plan", "destination": "b.md"}),
        ]:
            answers[op] = _answer(ctx, op, raw)
        check_golden("names_writes", answers)
        assert (root / "projects" / "Plan.md").read_text(encoding="utf-8").endswith("# Plan\n")


def test_without_an_index_paths_resolve_and_names_say_what_they_need(tmp_path: Path) -> None:
    with vault_ctx(tmp_path / "vault", {"projects/Plan.md": "# Plan\n"}, index=False) as ctx:
        assert (
            _answer(ctx, "read", {"path": "PROJECTS/plan", "full": True})["path"] is None
        )  # read has no path
        assert call(ctx, "read", {"path": "PROJECTS/plan", "full": True})["data"]["text"] == "# Plan\n"
        missing = _answer(ctx, "read", {"path": "Plan", "full": True})
        assert missing["code"] == "NOT_FOUND"
        assert "resolve once the vault is indexed (run 'vault-agent index')" in missing["message"]
        assert "ask the user to run 'vault-agent index'" in missing["mcp"]


def test_a_new_note_is_found_by_name_after_the_next_index(tmp_path: Path) -> None:
    """Names come from the pinned snapshot: the next committed snapshot brings new ones."""
    from vault_agent.indexer.build import build_index

    with vault_ctx(tmp_path / "vault", {"a.md": "# A\n"}) as ctx:
        root = ctx.settings.vault
        (root / "deep").mkdir()
        (root / "deep" / "Fresh Idea.md").write_text("---\naliases: [spark]\n---\n# F\n", encoding="utf-8")
        assert _answer(ctx, "get-note-outline", {"path": "spark"})["code"] == "NOT_FOUND"
        build_index(ctx.settings)
        assert _answer(ctx, "get-note-outline", {"path": "spark"})["path"] == "deep/Fresh Idea.md"
        (root / "deep" / "Fresh Idea.md").unlink()
        build_index(ctx.settings)
        assert _answer(ctx, "get-note-outline", {"path": "spark"})["code"] == "NOT_FOUND"
