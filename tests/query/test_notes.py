"""Per-note contracts (seeds 001/004) from the snapshot: shapes, caps, path security."""

from __future__ import annotations

import os

import pytest

from vault_agent.api.invoke import body_of
from vault_agent.api.ops import CATALOG
from vault_agent.errors import Ambiguous, Forbidden, InvalidPath, NotFound, TooLarge, VaultAgentError
from vault_agent.query import outline, sections
from vault_agent.query.files import ReadRequest, vault_read
from vault_agent.query.note import get_note
from vault_agent.query.scan import ScanRequest, vault_scan

DOC = (
    "---\ntitle: Field Guide\ntags: [guide, '#field']\nproject: Alpha Beta\ndate: 2024-03-01\n"
    "entity: [owl, fox]\nepisode_id: 7\nsecret: do-not-show\n---\n"
    "Intro text before any heading.\n\n"
    "# Guide\n\n"
    "### Deep *first*\n\nsome text\n\n"
    "## Second `code` [link](https://example.invalid)\n\n"
    "```\n# not a heading\n```\n\n"
    "## Empty\n"
    "## <script>alert(1)</script>\n\ntext\n\n"
    "Setext\n======\n"
)


def _raw(op_name: str, outcome) -> dict:
    op = next(o for o in CATALOG if o.name == op_name)
    return body_of(op, outcome)


def test_note_outline_whole(snap, make_reader) -> None:
    settings, _ = snap({"notes/guide.md": DOC})
    out = outline.get_note_outline(make_reader(settings, "stale"), "notes/guide.md")
    assert _raw("get-note-outline", out) == {
        "schema": "knowtation.note_outline/v1",
        "path": "notes/guide.md",
        "title": "Field Guide",
        "headings": [
            {"level": 1, "text": "Guide", "id": "h1-guide-0001"},
            {"level": 3, "text": "Deep first", "id": "h3-deep-first-0002"},
            {"level": 2, "text": "Second code link", "id": "h2-second-code-link-0003"},
            {"level": 2, "text": "Empty", "id": "h2-empty-0004"},
            {"level": 2, "text": "<script>alert(1)</script>", "id": "h2-script-alert-1-script-0005"},
            {"level": 1, "text": "Setext", "id": "h1-setext-0006"},
        ],
        "truncated": False,
    }
    assert out.freshness == "stale" and [w.code for w in out.warnings] == ["INDEX_STALE", "NEXT_READ"]


def test_document_tree_nesting(snap, make_reader) -> None:
    settings, _ = snap({"notes/guide.md": DOC})
    out = outline.get_document_tree(make_reader(settings), "notes/guide.md")
    assert _raw("get-document-tree", out) == {
        "schema": "knowtation.document_tree/v0",
        "path": "notes/guide.md",
        "title": "Field Guide",
        "root": {
            "children": [
                {
                    "id": "h1-guide-0001",
                    "level": 1,
                    "text": "Guide",
                    "children": [
                        {"id": "h3-deep-first-0002", "level": 3, "text": "Deep first", "children": []},
                        {
                            "id": "h2-second-code-link-0003",
                            "level": 2,
                            "text": "Second code link",
                            "children": [],
                        },
                        {"id": "h2-empty-0004", "level": 2, "text": "Empty", "children": []},
                        {
                            "id": "h2-script-alert-1-script-0005",
                            "level": 2,
                            "text": "<script>alert(1)</script>",
                            "children": [],
                        },
                    ],
                },
                {"id": "h1-setext-0006", "level": 1, "text": "Setext", "children": []},
            ]
        },
        "truncated": False,
    }


def test_section_source(snap, make_reader) -> None:
    settings, _ = snap({"notes/guide.md": DOC})
    out = sections.get_section_source(make_reader(settings), "notes/guide.md")
    p = "notes-guide-md"
    assert _raw("get-section-source", out) == {
        "schema": "knowtation.section_source/v0",
        "path": "notes/guide.md",
        "title": "Field Guide",
        "sections": [
            {
                "section_id": f"{p}:h1-guide-0001",
                "heading_id": "h1-guide-0001",
                "level": 1,
                "heading_path": [],
                "heading_text": "Guide",
                "child_section_ids": [
                    f"{p}:h3-deep-first-0002",
                    f"{p}:h2-second-code-link-0003",
                    f"{p}:h2-empty-0004",
                    f"{p}:h2-script-alert-1-script-0005",
                ],
                "body_available": True,  # content of its subsections counts (same-or-higher rule)
            },
            {
                "section_id": f"{p}:h3-deep-first-0002",
                "heading_id": "h3-deep-first-0002",
                "level": 3,
                "heading_path": ["Guide"],
                "heading_text": "Deep first",
                "child_section_ids": [],
                "body_available": True,
            },
            {
                "section_id": f"{p}:h2-second-code-link-0003",
                "heading_id": "h2-second-code-link-0003",
                "level": 2,
                "heading_path": ["Guide"],
                "heading_text": "Second code link",
                "child_section_ids": [],
                "body_available": True,
            },
            {
                "section_id": f"{p}:h2-empty-0004",
                "heading_id": "h2-empty-0004",
                "level": 2,
                "heading_path": ["Guide"],
                "heading_text": "Empty",
                "child_section_ids": [],
                "body_available": False,
            },
            {
                "section_id": f"{p}:h2-script-alert-1-script-0005",
                "heading_id": "h2-script-alert-1-script-0005",
                "level": 2,
                "heading_path": ["Guide"],
                "heading_text": "<script>alert(1)</script>",
                "child_section_ids": [],
                "body_available": True,
            },
            {
                "section_id": f"{p}:h1-setext-0006",
                "heading_id": "h1-setext-0006",
                "level": 1,
                "heading_path": [],
                "heading_text": "Setext",
                "child_section_ids": [],
                "body_available": False,
            },
        ],
        "truncated": False,
        "body_returned": False,
        "snippet_returned": False,
    }


def test_metadata_facets(snap, make_reader) -> None:
    settings, _ = snap({"notes/guide.md": DOC, "projects/Gamma Ray/x.md": "---\ntags: a b\n---\n"})
    out = sections.get_metadata_facets(make_reader(settings), "notes/guide.md")
    assert _raw("get-metadata-facets", out) == {
        "schema": "knowtation.metadata_facets/v0",
        "path": "notes/guide.md",
        "facets": {
            "project": "alpha-beta",
            "tags": ["guide", "field"],
            "date": "2024-03-01",
            "updated": None,
            "causal_chain_id": None,
            "entity": ["owl", "fox"],
            "episode_id": "7",
        },
        "inferred": {"folder": "notes", "source_type": "note"},
        "truncated": False,
    }
    inferred = sections.get_metadata_facets(make_reader(settings), "projects/Gamma Ray/x.md").data
    assert inferred.facets.project == "gamma-ray" and inferred.facets.tags == ["a", "b"]
    assert inferred.inferred.folder == "projects/Gamma Ray"


def test_no_body_text_anywhere(snap, make_reader) -> None:
    settings, _ = snap({"notes/guide.md": DOC})
    reader = make_reader(settings)
    for name, fn in [
        ("get-note-outline", outline.get_note_outline),
        ("get-document-tree", outline.get_document_tree),
        ("get-section-source", sections.get_section_source),
        ("get-metadata-facets", sections.get_metadata_facets),
    ]:
        text = str(_raw(name, fn(reader, "notes/guide.md")))
        for leaked in (
            "Intro text",
            "some text",
            "not a heading",
            "do-not-show",
            "secret",
            str(settings.vault),
        ):
            assert leaked not in text


def test_empty_and_headingless(snap, make_reader) -> None:
    settings, _ = snap({"empty.md": "", "plain.md": "just text\n", "crlf.md": "# A\r\n\r\nB\r\n-\r\n"})
    reader = make_reader(settings)
    assert outline.get_note_outline(reader, "empty.md").data.headings == []
    assert outline.get_note_outline(reader, "plain.md").data.model_dump(by_alias=True) == {
        "schema": "knowtation.note_outline/v1",
        "path": "plain.md",
        "title": "plain",
        "headings": [],
        "truncated": False,
    }
    heads = outline.get_note_outline(reader, "crlf.md").data.headings
    assert [(h.level, h.text, h.id) for h in heads] == [(1, "A", "h1-a-0001"), (2, "B", "h2-b-0002")]
    assert sections.get_section_source(reader, "plain.md").data.sections == []
    assert outline.get_document_tree(reader, "empty.md").data.root.children == []


def test_heading_cap_and_too_large(snap, make_reader) -> None:
    many = "".join(f"## H {i}\n" for i in range(1, 503))
    big = "# Big\n" + ("x" * 100 + "\n") * 10_000
    settings, _ = snap({"many.md": many, "big.md": big})
    reader = make_reader(settings)
    out = outline.get_note_outline(reader, "many.md").data
    assert out.truncated is True and len(out.headings) == 500
    assert out.headings[-1].id == "h2-h-500-0500"
    tree = outline.get_document_tree(reader, "many.md").data
    assert tree.truncated is True and len(tree.root.children) == 500
    src = sections.get_section_source(reader, "many.md").data
    assert src.truncated is True and len(src.sections) == 500
    for fn in (
        outline.get_note_outline,
        outline.get_document_tree,
        sections.get_section_source,
        sections.get_metadata_facets,
    ):
        with pytest.raises(TooLarge) as exc:
            fn(reader, "big.md")
        assert "big.md" in exc.value.message
    # Every answer with headings says when they are incomplete, not only by a flag: the
    # capped ones (raw contracts carry it beside the body) and get_note of both notes.
    for fn in (outline.get_note_outline, outline.get_document_tree, sections.get_section_source):
        assert [w.code for w in fn(reader, "many.md").warnings] == ["HEADINGS_TRUNCATED", "NEXT_READ"]
    capped = get_note(reader, "many.md")
    assert (len(capped.data.headings), capped.data.headings_truncated) == (500, True)
    assert [w.message for w in capped.warnings] == [
        "this note has more than 500 headings; only the first 500 are listed. Read the rest of the note "
        "with vault_read"
    ]
    huge = get_note(reader, "big.md")  # headings were never indexed: not "no headings"
    assert (huge.data.headings, huge.data.headings_truncated) == ([], True)
    assert [(w.code, w.message) for w in huge.warnings] == [
        (
            "HEADINGS_TRUNCATED",
            "this note is over 1,000,000 characters, so its headings are not indexed (get_note_outline answers "
            "TOO_LARGE); read it in ranges with vault_read",
        )
    ]


def test_a_note_over_the_read_cap_gets_one_message_from_every_tool(snap, make_reader) -> None:
    settings, _ = snap({"small.md": "# S\n"})
    (settings.vault / "huge.md").write_bytes(b"a" * (32 * 1024 * 1024 + 1))  # grown after the index
    reader = make_reader(settings)
    messages = set()
    for read in (
        lambda: get_note(reader, "huge.md"),
        lambda: vault_read(reader.vault, ReadRequest("huge.md", full=True)),
        lambda: vault_scan(reader.vault, ScanRequest("huge.md")),
    ):
        with pytest.raises(TooLarge) as exc:
            read()
        messages.add(exc.value.message)
    assert messages == {
        "'huge.md' is over 32 MiB, more than vault-agent reads with any tool; open it in an editor, or split "
        "it into smaller notes"
    }


def test_case_insensitive_resolution(snap, make_reader) -> None:
    settings, _ = snap({"Notes/Plan.md": "# P\n", "dup/a.md": "# a\n", "dup/A.md": "# A\n"})
    reader = make_reader(settings)
    assert outline.get_note_outline(reader, "notes/plan.MD").data.path == "Notes/Plan.md"
    assert outline.get_note_outline(reader, "dup/A.md").data.path == "dup/A.md"  # exact wins
    with pytest.raises(Ambiguous) as info:
        outline.get_note_outline(reader, "DUP/a.MD")  # two case-variants: no guess, both listed
    assert "'dup/A.md', 'dup/a.md'" in info.value.message


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ("../outside.md", InvalidPath),
        ("notes/../../outside.md", InvalidPath),
        ("/etc/passwd.md", InvalidPath),
        ("C:/x.md", InvalidPath),
        ("~/x.md", InvalidPath),
        ("a\x00b.md", InvalidPath),
        ("", InvalidPath),
        ("notes/image.png", InvalidPath),
        ("notes", InvalidPath),
        (".obsidian/workspace.md", Forbidden),
        (".GIT/x.md", Forbidden),
        ("..%2Foutside.md", NotFound),
        ("missing.md", NotFound),
        ("node_modules/pkg/readme.md", NotFound),
        ("link.md", NotFound),
        ("linkdir/secret.md", NotFound),
    ],
)
def test_path_security(tmp_path, snap, make_reader, raw: str, error: type[VaultAgentError]) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\nprivate\n")
    settings, _ = snap({"notes/guide.md": DOC, "node_modules/pkg/readme.md": "# x\n"})
    os.symlink(outside / "secret.md", settings.vault / "link.md")
    os.symlink(outside, settings.vault / "linkdir")
    reader = make_reader(settings)
    for fn in (
        outline.get_note_outline,
        outline.get_document_tree,
        sections.get_section_source,
        sections.get_metadata_facets,
    ):
        with pytest.raises(error) as exc:
            fn(reader, raw)
        msg = exc.value.message
        assert str(tmp_path) not in msg and "/etc" not in msg and "Secret" not in msg


@pytest.mark.parametrize(
    ("raw", "error"),
    [("../outside.md", InvalidPath), ("/etc/passwd.md", InvalidPath), (".obsidian/x.md", Forbidden)],
)
def test_unsafe_path_rejected_before_the_snapshot(tmp_path, make_reader, raw: str, error: type) -> None:
    """Seed 004: unsafe paths fail before any read, so even without an index they are not
    answered INDEX_NOT_FOUND."""
    from query.snapfactory import settings_for

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n")
    reader = make_reader(settings_for(vault))
    for fn in (
        outline.get_note_outline,
        outline.get_document_tree,
        sections.get_section_source,
        sections.get_metadata_facets,
    ):
        with pytest.raises(error):
            fn(reader, raw)
