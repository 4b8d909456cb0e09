"""Frontmatter recognition, guards, field names, title, tags, type/status values, facets."""

from __future__ import annotations

import json
from typing import Any

import pytest

from vault_agent.contracts import ParsedNote
from vault_agent.indexer.frontmatter import MAX_FM_BYTES
from vault_agent.indexer.parse import parse_note
from vault_agent.yaml_guard import alias_count, nesting_depth


def parse(src: str | bytes, rel: str = "n.md") -> ParsedNote:
    raw = src.encode("utf-8") if isinstance(src, str) else src
    return parse_note(rel, raw, 0, len(raw))


def fm(block: str, body: str = "# Body\n") -> dict[str, Any]:
    return parse(f"---\n{block}\n---\n{body}").note


def facets(block: str) -> dict[str, Any]:
    return json.loads(fm(block)["facets_json"])


# ---------------------------------------------------------------- recognition
def test_fences_with_trailing_spaces_and_dot_close() -> None:
    note = parse("---  \ntitle: A\n...\n# H\n").note
    assert (note["fm_status"], note["title"], note["fm_fields"]) == ("valid", "A", ["title"])


def test_empty_block_is_valid_without_fields() -> None:
    parsed = parse("---\n---\n# H\n")
    assert (parsed.note["fm_status"], parsed.note["fm_fields"]) == ("valid", [])
    assert parsed.headings[0]["line"] == 3


def test_comment_only_block_is_valid() -> None:
    assert fm("# just a comment")["fm_status"] == "valid"


def test_unclosed_fence_is_body() -> None:
    parsed = parse("---\ntitle: x\n# H\n")
    assert (parsed.note["fm_status"], parsed.note["title"]) == ("none", "n")
    assert [(h["text"], h["line"]) for h in parsed.headings] == [("H", 3)]


def test_fence_must_be_first_line() -> None:
    parsed = parse("\n---\ntitle: x\n---\n")
    assert parsed.note["fm_status"] == "none"


def test_json_first_line_is_not_frontmatter() -> None:
    parsed = parse('{"title": "x"}\n# H\n')
    assert (parsed.note["fm_status"], parsed.note["title"], parsed.note["heading_count"]) == ("none", "n", 1)


def test_frontmatter_lines_never_headings_or_chunk_text() -> None:
    parsed = parse("---\ntitle: T\nsummary: |\n  # not a heading\nkey: x\n---\nBody\n")
    assert parsed.headings == []
    assert [(c["start_line"], c["text"]) for c in parsed.chunks] == [(7, "Body")]


def test_invalid_block_still_hides_its_lines() -> None:
    parsed = parse("---\n# Looks like a heading\nkey: [unclosed\n---\n# Real\n")
    assert (parsed.note["fm_status"], parsed.note["fm_error"]) == ("invalid", "yaml_error")
    assert [h["text"] for h in parsed.headings] == ["Real"]


# ---------------------------------------------------------------- invalid rules
@pytest.mark.parametrize(
    ("block", "rule"),
    [
        ("a: [1, 2", "yaml_error"),
        ("date: 2024-02-30", "yaml_error"),  # ValueError, not YAMLError
        ("a:\n\tb: 1", "yaml_error"),  # tab indentation
        ("? [a, b]\n: c", "yaml_error"),  # unhashable key
        ("created: {{date}}", "yaml_error"),
        ("- a\n- b", "not_mapping"),
        ("just a string", "not_mapping"),
        ("42", "not_mapping"),
        ("x: " + "[" * 65 + "]" * 65, "too_deep"),
        ("x: " + "[" * 25000, "too_deep"),
        ("\n".join(f"{' ' * i}k{i}:" for i in range(70)), "too_deep"),
        ("x:\n  " + "- " * 70 + "a", "too_deep"),
        ("a: &a x\nb: [" + ", ".join(["*a"] * 65) + "]", "too_many_aliases"),
        ("x: " + "a" * (MAX_FM_BYTES + 1), "too_large"),
    ],
)
def test_invalid_frontmatter_rules(block: str, rule: str) -> None:
    parsed = parse(f"---\n{block}\n---\n# Still indexed\n")
    note = parsed.note
    assert (note["fm_status"], note["fm_error"], note["fm_fields"], note["tags"]) == ("invalid", rule, [], [])
    assert note["title"] == "n"
    assert [h["text"] for h in parsed.headings] == ["Still indexed"]


def test_multibyte_block_over_64kib_is_too_large() -> None:
    block = "x: " + "東" * (MAX_FM_BYTES // 3 + 10)  # under 64 Ki characters, over 64 KiB
    assert fm(block)["fm_error"] == "too_large"


def test_nesting_and_alias_prescans() -> None:
    assert nesting_depth("a: 1\nb:\n  c:\n    d: [1, {e: 2}]") == 5
    assert nesting_depth('t: "[[Authors]]"') == 3
    assert alias_count("a: &x 1\nb: *x\nc: [*x, *x]\nd: '**bold**'") == 3
    assert fm("a: &x 1\nb: [" + ", ".join(["*x"] * 64) + "]")["fm_status"] == "valid"


# ---------------------------------------------------------------- fields and values
def test_fields_in_file_order_stringified_keys_last_wins() -> None:
    note = fm("b: 1\na: 2\n1: x\nnull: y\n2024-01-05: z\nb: 3")
    assert note["fm_fields"] == ["b", "a", "1", "null", "2024-01-05"]


def test_title_rules() -> None:
    assert fm("title: '  Spaced  '")["title"] == "Spaced"
    assert parse("---\ntitle: ''\n---\n", "dir/some-note_name.md").note["title"] == "some note name"
    assert parse("---\ntitle: 12\n---\n", "x.md").note["title"] == "x"
    assert parse("---\ntitle: [a]\n---\n", "x.md").note["title"] == "x"


@pytest.mark.parametrize(
    ("block", "tags"),
    [
        ("tags: [a, b]", ["a", "b"]),
        ("tags: a, b c,,d", ["a", "b", "c", "d"]),
        ("tags: '#one #two'", ["one", "two"]),
        ('tags: ["#x", "a/b", "A/b"]', ["x", "a/b", "A/b"]),
        ("tags: [a, a, '#a', b]", ["a", "b"]),
        ("tags: [Case, case]", ["Case", "case"]),
        ("tags: [1, true, 2.5, null, '', [n], {k: v}]", ["1", "true", "2.5"]),
        ("tags:\n  - x\n  - y", ["x", "y"]),
        ("tags: 7", ["7"]),
        ("tags:", []),
        ("tags: {a: 1}", []),
        ("tag: [a]", []),
        ("Tags: [a]", []),
    ],
)
def test_tags(block: str, tags: list[str]) -> None:
    assert fm(block)["tags"] == tags


def test_inline_tags_are_not_tags() -> None:
    assert parse("---\ntags: [a]\n---\nBody with #inline tag\n").note["tags"] == ["a"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Note", ["Note"]),
        ("[Project, project]", ["Project", "project"]),
        ("[a, a, b]", ["a", "b"]),
        ("3", ["3"]),
        ("2.50", ["2.5"]),
        ("true", ["true"]),
        ("[false, 0]", ["false", "0"]),
        ("null", []),
        ("''", []),
        ("[null, '', x]", ["x"]),
        ("{a: 1}", []),
        ("[[nested], {k: v}, ok]", ["ok"]),
        ('"[[Authors]]"', ["[[Authors]]"]),
        ("2024-01-05", ["2024-01-05"]),
    ],
)
def test_type_and_status_values(value: str, expected: list[str]) -> None:
    note = fm(f"type: {value}\nstatus: {value}")
    assert (note["type_values"], note["status_values"]) == (expected, expected)


# ---------------------------------------------------------------- facets
def test_facets_whole() -> None:
    block = (
        "project: My Big Project\ntags: [x]\ndate: 2026-01-05\nupdated: 2026-01-06T10:30:00\n"
        "causal_chain_id: c-1\nentity: Harbor Office\nepisode_id: 7"
    )
    assert facets(block) == {
        "facets": {
            "project": "my-big-project",
            "tags": ["x"],
            "date": "2026-01-05",
            "updated": "2026-01-06T10:30:00",
            "causal_chain_id": "c-1",
            "entity": ["Harbor Office"],
            "episode_id": "7",
        },
        "truncated": False,
    }


def test_facets_json_is_canonical() -> None:
    text = fm("project: 東京 Trip")["facets_json"]
    assert text == json.dumps(json.loads(text), ensure_ascii=False, sort_keys=True)
    assert json.loads(text)["facets"]["project"] == "東京-trip"


@pytest.mark.parametrize("value", ["''", "null", "'!!!'", "{a: 1}"])
def test_facets_project_null(value: str) -> None:
    assert facets(f"project: {value}")["facets"]["project"] is None


def test_facets_caps() -> None:
    many = ", ".join(f"t{i}" for i in range(150))
    out = facets(f"tags: [{many}]\nentity: [{many}]\ndate: '{'d' * 300}'")
    assert out["truncated"] is True
    assert out["facets"]["tags"] == [f"t{i}" for i in range(100)]
    assert out["facets"]["entity"] == [f"t{i}" for i in range(100)]
    assert out["facets"]["date"] == "d" * 256
    # The notes row keeps every tag; only the facets payload is capped.
    assert len(fm(f"tags: [{many}]")["tags"]) == 150


def test_facets_long_tag_capped() -> None:
    out = facets(f"tags: [{'a' * 300}]")
    assert (out["facets"]["tags"], out["truncated"]) == (["a" * 256], True)


def test_facets_of_invalid_frontmatter_are_empty() -> None:
    out = facets("project: x\ntags: [a")
    assert out["facets"]["project"] is None and out["facets"]["tags"] == []


def test_billion_laughs_under_alias_cap_never_expanded() -> None:
    levels = ["a: &a [x, x, x, x, x, x, x, x]"]
    for i in range(1, 8):
        prev = chr(ord("a") + i - 1)
        cur = chr(ord("a") + i)
        levels.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 8) + "]")
    block = "\n".join(levels) + "\ntags: *h\ntype: *h\nentity: *h"
    note = fm(block)  # 57 aliases, 8^8 leaves if traversed
    assert note["fm_status"] == "valid"
    assert (note["tags"], note["type_values"]) == ([], [])
    assert json.loads(note["facets_json"])["facets"]["entity"] == []


def test_title_tags_and_values_are_nfc() -> None:
    note = fm("title: Cafe\u0301\ntags: [cafe\u0301, caf\u00e9]\ntype: cafe\u0301")
    assert (note["title"], note["tags"], note["type_values"]) == ("Caf\u00e9", ["caf\u00e9"], ["caf\u00e9"])
