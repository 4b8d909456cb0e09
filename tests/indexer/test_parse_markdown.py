"""Headings (seed 001 unit matrix and SPEC.md rules), %% comments, body_available, links."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import pytest

from vault_agent.contracts import ParsedNote
from vault_agent.indexer.parse import parse_note


def parse(src: str | bytes, rel: str = "n.md") -> ParsedNote:
    raw = src.encode("utf-8") if isinstance(src, str) else src
    return parse_note(rel, raw, 0, len(raw))


def outline(src: str | bytes) -> list[tuple[int, str, str]]:
    return [(h["level"], h["text"], h["id"]) for h in parse(src).headings]


def heads(src: str | bytes, *keys: str) -> list[tuple[Any, ...]]:
    return [tuple(h[k] for k in keys) for h in parse(src).headings]


# ------------------------------------------------------------ seed 001 unit matrix
def test_frontmatter_ignored_as_outline_content() -> None:
    src = "---\ntitle: T\nheading: x\n---\n# Only\n"
    assert outline(src) == [(1, "Only", "h1-only-0001")]
    # Without fence handling the last YAML line would be a setext heading.
    assert outline("---\nkey: value\n---\n") == []


def test_atx_headings() -> None:
    src = "# One\n## Two\n### Three\n#### Four\n##### Five\n###### Six\n####### Seven\n#NoSpace\n"
    assert heads(src, "level", "text", "line") == [
        (1, "One", 1),
        (2, "Two", 2),
        (3, "Three", 3),
        (4, "Four", 4),
        (5, "Five", 5),
        (6, "Six", 6),
    ]


def test_closing_hashes() -> None:
    assert heads("## Install ##\n### Configure ######\n## Keep # inside #\n", "text") == [
        ("Install",),
        ("Configure",),
        ("Keep # inside",),
    ]


def test_setext_headings() -> None:
    src = "Title\n=====\n\ntext\n\nSubtitle\n--------\nbody\n"
    assert heads(src, "level", "text", "line") == [(1, "Title", 1), (2, "Subtitle", 6)]


def test_multiline_setext_heading_text_collapsed() -> None:
    assert heads("Two\nlines\n===\n", "text", "line") == [("Two lines", 1)]


def test_fenced_code_headings_ignored() -> None:
    src = "# Real\n```\n# no\n```\n~~~md\n## no\n~~~\n````\n```\n# no\n````\n## Also real\n"
    assert heads(src, "text") == [("Real",), ("Also real",)]


def test_unclosed_fence_hides_rest() -> None:
    assert heads("# A\n```\n# B\n", "text") == [("A",)]


def test_indented_code_headings_ignored() -> None:
    assert heads("# Real\n\n    # not\n    ## not\n\n## After\n", "text") == [("Real",), ("After",)]


def test_html_blocks_and_raw_html_headings_ignored() -> None:
    src = "<div>\n# not a heading\n</div>\n\n<h2>Raw</h2>\n\n## Markdown\n"
    assert heads(src, "text") == [("Markdown",)]


def test_duplicate_headings_distinct_ids() -> None:
    assert outline("## Install\n## Install\n# Install\n") == [
        (2, "Install", "h2-install-0001"),
        (2, "Install", "h2-install-0002"),
        (1, "Install", "h1-install-0003"),
    ]


def test_inline_formatting_becomes_plain_text() -> None:
    assert outline("## **Bold** [Link](https://example.com) `code`\n") == [
        (2, "Bold Link code", "h2-bold-link-code-0001")
    ]


@pytest.mark.parametrize(
    ("src", "text"),
    [
        ("# *em* _em_ ~~del~~\n", "em em del"),
        ("# ![alt *text*](i.png) after\n", "alt text after"),
        ("# a\\*b \\# c\n", "a*b # c"),
        ("# &amp; &copy; &#35;\n", "& © #"),
        ("# [ref][r]\n\n[r]: https://example.com\n", "ref"),
        ("# <https://example.com>\n", "https://example.com"),
        ("# [[Wiki|alias]]\n", "[[Wiki|alias]]"),
        ("#    spaced\t\tout   \n", "spaced out"),
        ("# Cafe\u0301\n", "Caf\u00e9"),
        ("# `  code  `\n", "code"),
    ],
)
def test_heading_text_extraction(src: str, text: str) -> None:
    assert heads(src, "text") == [(text,)]


@pytest.mark.parametrize(
    ("src", "text"),
    [
        ("# <script>alert(1)</script>\n", "<script>alert(1)</script>"),
        ("# <img src=x onerror=alert(1)>\n", "<img src=x onerror=alert(1)>"),
        ('# "quotes" & <b>bold</b>\n', '"quotes" & <b>bold</b>'),
        ("# `<b>code</b>`\n", "<b>code</b>"),
    ],
)
def test_html_like_heading_text_stays_literal(src: str, text: str) -> None:
    assert heads(src, "text") == [(text,)]


def test_empty_note_and_no_heading_note() -> None:
    assert outline("") == []
    assert outline("text\n\n- list\n\n> quote\n") == []


def test_empty_heading_text() -> None:
    assert outline("#\n## ##\n") == [(1, "", "h1-heading-0001"), (2, "", "h2-heading-0002")]


def test_crlf_input() -> None:
    src = b"---\r\ntitle: W\r\n---\r\n# First\r\n\r\nSecond\r\n------\r\n"
    assert heads(src, "level", "text", "line") == [(1, "First", 4), (2, "Second", 6)]


def test_many_headings_all_kept_for_the_query_cap() -> None:
    src = "".join(f"## S{i}\n" for i in range(600))
    parsed = parse(src)
    assert len(parsed.headings) == parsed.note["heading_count"] == 600
    assert parsed.headings[-1]["id"] == "h2-s599-0600"


def test_japanese_heading_slug() -> None:
    assert outline("# 東京の会議\n## 次の一歩（ToDo）\n") == [
        (1, "東京の会議", "h1-東京の会議-0001"),
        (2, "次の一歩（ToDo）", "h2-次の一歩-todo-0002"),
    ]


def test_headings_inside_containers() -> None:
    src = "> ## Quoted\n\n- ### In list\n\n1. #### Numbered\n"
    assert heads(src, "level", "text", "line") == [(2, "Quoted", 1), (3, "In list", 3), (4, "Numbered", 5)]


# ------------------------------------------------------------ structure fields
def test_parent_ordinal_with_skipped_levels() -> None:
    src = "# A\n### B\n###### C\n## D\n#### E\n# F\n"
    assert heads(src, "ordinal", "parent_ordinal") == [(1, None), (2, 1), (3, 2), (4, 1), (5, 4), (6, None)]


def test_heading_path_follows_parents() -> None:
    parsed = parse("## Lead\n# A\n### B\n## C\n")
    assert [c["heading_path"] for c in parsed.chunks] == [["Lead"], ["A"], ["A", "B"], ["A", "C"]]


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        ("# A\ntext\n", [True]),
        ("# A\n# B\ntext\n", [False, True]),
        ("# A\n## B\ntext\n", [True, True]),
        ("# A\n## B\n# C\n", [False, False, False]),
        ("# A\n\n```\ncode\n```\n", [True]),
        ("# A\n\n```\n```\n", [False]),
        ("# A\n\n| a |\n| - |\n| 1 |\n", [True]),
        ("# A\n\n- item\n", [True]),
        ("# A\n\n---\n", [False]),
        ("# A\n\n<div>x</div>\n", [True]),
        ("# A\n\n%% hidden %%\n", [False]),
        ("### A\n## B\ntext\n", [False, True]),
    ],
)
def test_body_available(src: str, expected: list[bool]) -> None:
    assert [h["body_available"] for h in parse(src).headings] == expected


# ------------------------------------------------------------ %% comments
def test_comments_yield_no_headings_or_text() -> None:
    src = "# A\n%% # Hidden %%\ntext %%inline%% kept\n%%\n## Hidden block\nsecret words\n%%\n## B\n"
    parsed = parse(src)
    assert heads(src, "text", "line") == [("A", 1), ("B", 8)]
    text = "\n".join(c["text"] for c in parsed.chunks)
    assert "Hidden" not in text and "secret" not in text and "inline" not in text
    assert "text  kept" in text
    assert [(c["start_line"], c["end_line"]) for c in parsed.chunks] == [(1, 7), (8, 8)]


def test_comments_kept_inside_fenced_code() -> None:
    src = "# A\n```\n%% shown %%\n```\n"
    assert "%% shown %%" in parse(src).chunks[0]["text"]


def test_fence_inside_comment_is_comment() -> None:
    src = "%%\n```\n%%\n# After\n"
    assert heads(src, "text", "line") == [("After", 4)]


def test_unclosed_comment_hides_rest() -> None:
    parsed = parse("# A\n%% start\n# B\ntext\n")
    assert heads("# A\n%% start\n# B\ntext\n", "text") == [("A",)]
    assert parsed.chunks[0]["text"] == "# A\n\n\n"


# ------------------------------------------------------------ links
def links(src: str) -> list[tuple[Any, ...]]:
    return [(r["ordinal"], r["target"], r["anchor"], r["kind"], r["line"]) for r in parse(src).links]


def test_wikilinks_embeds_and_markdown_links() -> None:
    src = (
        "---\na: 1\n---\n"
        "See [[Note A]] and [[Folder/Note B#Section|alias]] and ![[image.png]].\n"
        "[md](other%20note.md#Part) [abs](https://example.com) [mail](mailto:x@example.com)\n"
        "[[ spaced |x]] [[#Local heading]] ![pic](pics/a.png) [self](#top) [[]]\n"
    )
    assert links(src) == [
        (1, "Note A", None, "wikilink", 4),
        (2, "Folder/Note B", "Section", "wikilink", 4),
        (3, "image.png", None, "embed", 4),
        (4, "other note.md", "Part", "markdown", 5),
        (5, "spaced", None, "wikilink", 6),
        (6, "", "Local heading", "wikilink", 6),
        (7, "pics/a.png", None, "embed", 6),
        (8, "", "top", "markdown", 6),
    ]


def test_links_skip_code() -> None:
    src = (
        "[[a]] `[[code span]]` ``[[double]]``\n"
        "```\n[[fenced]]\n```\n\n"
        "    [[indented]]\n\n"
        "[[b]] [c](<c d.md>)\n"
    )
    assert [(t, line) for _, t, _, _, line in links(src)] == [("a", 1), ("b", 8), ("c d.md", 8)]


def test_links_in_comments_ignored() -> None:
    assert links("%% [[hidden]] %%\n[[shown]]\n") == [(1, "shown", None, "wikilink", 2)]


def test_markdown_link_with_title_and_parens() -> None:
    src = '[t](a/b.md "Title") [p](notes/x(1).md)\n'
    assert [t for _, t, _, _, _ in links(src)] == ["a/b.md", "notes/x(1).md"]


def test_percent_percent_inside_code_span_is_not_a_comment() -> None:
    src = "# A\n| `%%` comments | ignored |\n\n## B\ntext `a %% b` and %%hidden%% shown\n"
    parsed = parse(src)
    assert heads(src, "text") == [("A",), ("B",)]
    assert parsed.chunks[1]["text"] == "## B\ntext `a %% b` and  shown"


def test_code_spans_linear_and_commonmark_like() -> None:
    from vault_agent.note_syntax import code_spans

    assert code_spans("a `x` b ``y`` `z ``` q `") == [(2, 5), (8, 13), (14, 24)]
    assert code_spans("`` unmatched ` run") == []
    line = "".join("`" * i + "a" for i in range(1, 1500))  # ~1.1 MB of unmatched runs
    assert code_spans(line) == []


# ------------------------------------------------------------ block structure by comrak
# Each case is one where markdown-it-py and comrak (the block parser since PARSER_VERSION 3)
# differ or could differ; the expected value is what cmark, CommonMark's reference, says.
def test_code_lines_of_fences_left_open_in_list_items() -> None:
    # A fence opened in a list item ends with the item; its lines are code, the rest is not.
    src = "- a\n  ```\n  [[inside]]\n[[outside]]\n\n- ```\n\n     [[five]]\n"
    assert [(t, line) for _, t, _, _, line in links(src)] == [("outside", 4)]


def test_code_lines_of_an_unclosed_fence_at_the_end() -> None:
    assert links("```\n[[a]]\n[[b]]") == []
    assert links("> ```\n> [[a]]\n[[b]]\n") == [(1, "b", None, "wikilink", 3)]


def test_indented_lines_after_a_reference_definition_are_paragraph_text() -> None:
    # CommonMark: an indented line cannot start a code block right after a reference
    # definition (`[^1]:` takes the next line as its destination), so it is paragraph text.
    assert links("[r]: /u\n    [[x]]\n") == [(1, "x", None, "wikilink", 2)]
    assert links("[^1]:\n    ```\n    [[x]]\n    ```\n") == [(1, "x", None, "wikilink", 3)]


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        # The setext heading's paragraph starts at the reference definition (cmark's line).
        ("[ref]: /u\nText\n===\n", [(1, 1, "Text")]),
        ("> - Foo\n>   *bar*\n>   ---\n", [(1, 2, "Foo bar")]),
        ("> Foo\nlazy\n> ===\n", [(1, 1, "Foo lazy")]),
        ("- # In item #\n", [(1, 1, "In item")]),
        ("  ##  spaced  ##  \n", [(1, 2, "spaced")]),
        ("# [x] and [y]\n\n[x]: /u\n", [(1, 1, "x and [y]")]),
        ("Para\n2. not a list\n---\n", [(1, 2, "Para 2. not a list")]),
    ],
)
def test_heading_lines_and_sources(src: str, expected: list[tuple[int, int, str]]) -> None:
    assert heads(src, "line", "level", "text") == expected


def test_strikethrough_in_headings_needs_two_tildes() -> None:
    # Obsidian and markdown-it strike `~~s~~` only; comrak's GFM would also take `~a~`.
    assert heads("# ~a~ b ~~s~~ t\n", "text") == [("~a~ b s t",)]


def test_empty_ordered_item_on_the_last_line_is_not_content() -> None:
    # Without a final newline comrak would read `1.` as a paragraph.
    assert heads("# A\n# B\n1.", "body_available") == [(False,), (False,)]


def test_deep_nesting_never_fails_the_parse() -> None:
    # A line of 100+ blockquotes goes to markdown-it's block parser (comrak would recurse
    # past the stack on ~30,000 `>`); lists nested by indentation stay with comrak, whose
    # tree is walked without recursion.
    for src in (">" * 50_000 + " # x\n", "> - " * 20_000 + "# y\n", "- " * 50_000 + "z\n"):
        note = parse(src)
        assert note.note["flags"] == [] and note.headings == []
    nested = "# top\n" + "".join("  " * i + "- a\n" for i in range(900)) + "  " * 900 + "# deep\n"
    note = parse(nested)
    assert note.note["flags"] == [] and [h["text"] for h in note.headings] == ["top", "deep"]


def test_deep_inline_nesting_does_not_crash_the_process() -> None:
    # comrak-ext builds its Python tree recursively: emphasis, images or links nested
    # ~25,000 deep overflowed the stack (a segfault, also in the writer's inline parse).
    # Such notes go to markdown-it's block parser. Run where a segfault could not take the
    # test runner down with it.
    code = textwrap.dedent(
        """
        from vault_agent.indexer.parse import parse_note
        for nested in ("*a " * 40000 + "x" + " a*" * 40000, "![a " * 40000 + "x" + "](u)" * 40000):
            raw = ("# Before\\n\\n" + nested + "\\n\\n## After\\n").encode()
            n = parse_note("deep.md", raw, 0, len(raw))
            print(n.note["flags"], [(h["text"], h["body_available"]) for h in n.headings])
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == ["[] [('Before', True), ('After', False)]"] * 2
