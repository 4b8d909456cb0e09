"""Issue 8 item 3: case-twin folders (`CSS 片段` beside `css 片段`). Every per-note tool
resolves the exact path when it exists, never the other twin; a path that names exactly one
file case-insensitively reaches it on every tool; an ambiguous one is refused everywhere,
as AMBIGUOUS listing both twins (issue 23: it was NOT_FOUND before the AMBIGUOUS code)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from vault_agent.api.operation import AppContext
from vault_agent.errors import VaultAgentError

from .conftest import make_ctx
from .golden import call
from .vaultgen import write_vault

TWINS = {
    "CSS 片段/a.md": "# Upper A\n\nupper text\n",
    "css 片段/a.md": "# Lower A\n\nlower text\n",
    "css 片段/b.md": "# Lower B\n\nonly in the lower twin\n",
}
RANGE = [{"start_line": 1, "end_line": 1}]
OPS: list[tuple[str, dict[str, object]]] = [
    ("read", {"full": True}),
    ("coverage", {"cited_ranges": RANGE}),
    ("scan", {}),
    ("info", {}),
    ("get", {}),
    ("get-note-outline", {}),
    ("get-document-tree", {}),
    ("get-section-source", {}),
    ("get-metadata-facets", {}),
]


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppContext]:
    c = make_ctx(write_vault(tmp_path_factory.mktemp("twins") / "vault", TWINS))
    yield c
    c.reader.close()


def _path_of(ctx: AppContext, op: str, path: str, extra: dict[str, object]) -> str:
    body = call(ctx, op, {"path": path, **extra})
    data = body.get("data", body)
    if "path" in data:
        return str(data["path"])
    by_text = {text: rel for rel, text in TWINS.items()}  # read and scan carry no path
    return by_text.get(data.get("text", ""), "?")


@pytest.mark.parametrize(("op", "extra"), OPS)
@pytest.mark.parametrize(
    ("asked", "answered"),
    [
        ("CSS 片段/a.md", "CSS 片段/a.md"),  # exact wins, never the lower twin
        ("css 片段/a.md", "css 片段/a.md"),
        ("CSS 片段/b.md", "css 片段/b.md"),  # names exactly one file case-insensitively
    ],
)
def test_per_note_tools_resolve_twins_alike(
    twins: AppContext, op: str, extra: dict[str, object], asked: str, answered: str
) -> None:
    assert _path_of(twins, op, asked, extra) == answered


@pytest.mark.parametrize(("op", "extra"), OPS)
def test_ambiguous_case_variant_is_ambiguous_everywhere(
    twins: AppContext, op: str, extra: dict[str, object]
) -> None:
    with pytest.raises(VaultAgentError) as info:
        call(twins, op, {"path": "Css 片段/A.md", **extra})
    assert info.value.code == "AMBIGUOUS"
    assert "'CSS 片段/a.md', 'css 片段/a.md'" in info.value.message


def test_unindexed_exact_file_does_not_answer_for_its_twin(tmp_path: Path) -> None:
    ctx = make_ctx(write_vault(tmp_path / "vault", {"css 片段/c.md": "# Lower C\n"}))
    try:
        (tmp_path / "vault" / "CSS 片段").mkdir()
        (tmp_path / "vault" / "CSS 片段" / "c.md").write_text("# Upper C\n", encoding="utf-8")
        assert call(ctx, "read", {"path": "CSS 片段/c.md", "full": True})["data"]["text"] == "# Upper C\n"
        with pytest.raises(VaultAgentError) as info:
            call(ctx, "get-note-outline", {"path": "CSS 片段/c.md"})
        assert info.value.code == "NOT_FOUND"
    finally:
        ctx.reader.close()
