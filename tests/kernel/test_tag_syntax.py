"""Where tags are in a note (`vault_agent.tag_syntax`) and what a rename changes
(`files.rename_tag.plan_note`): examples, golden diffs for the places a tag never is, and
two property tests against an independent model of the text."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from testkit import check_golden

from vault_agent.files.rename_tag import plan_note, tag_rename
from vault_agent.tag_syntax import name_problem, scan_tags

GOLDEN = Path(__file__).parent / "golden" / "tag_rename"


def _rename(text: str, old: str, new: str) -> str:
    planned = plan_note(text, tag_rename(old, new))
    assert planned is not None
    return planned[0]


def _names_found(text: str) -> list[tuple[str, str]]:
    return [(s.where, s.name) for s in scan_tags(text).spans]


def test_body_tags_start_a_word_and_stop_at_punctuation() -> None:
    text = "#one two#no (#paren) #tw-o_3/x. **#bold** *a*#glued #1984 #y1984 #日本語 #ok!\n"
    assert _names_found(text) == [
        ("body", "one"), ("body", "tw-o_3/x"), ("body", "bold"), ("body", "y1984"), ("body", "日本語"), ("body", "ok"),
    ]  # fmt: skip


def test_frontmatter_keys_values_and_styles() -> None:
    text = (
        "---\n"
        "tags: [a, 'b', \"#c\", d/e]  # tags: [z]\n"
        "TAG: f, g h\n"
        "tagsx: [no]\n"
        "alias: [no]\n"
        "Tags:\n  - i\n  - |\n    block\n"
        'tag2: "x"\n'
        "---\n"
        "tags: [body-is-not-frontmatter]\n"
    )
    assert _names_found(text) == [
        ("frontmatter", "a"), ("frontmatter", "b"), ("frontmatter", "c"), ("frontmatter", "d/e"),
        ("frontmatter", "f"), ("frontmatter", "g"), ("frontmatter", "h"), ("frontmatter", "i"),
    ]  # fmt: skip


def test_invalid_yaml_and_escaped_values_are_left_alone() -> None:
    assert _names_found("---\ntags: [a, b\n---\n#c\n") == [("body", "c")]
    assert _names_found('---\ntags: "\\x61"\n---\n') == []


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("project", True), ("a/b-c_d", True), ("日本", True), ("y1984", True), ("emoji😀", True),
        ("", False), ("a b", False), ("a.b", False), ("1984", False), ("12/34", False), ("a//b", False),
        ("/a", False), ("a/", False), ("a#b", False), ("a\u2014b", False), ("tab\tx", False), ("x" * 257, False),
    ],
)  # fmt: skip
def test_new_names_follow_obsidian(name: str, ok: bool) -> None:
    assert (name_problem(name) is None) is ok


CASES = {
    # name: (note text, old, new)
    "code_and_comments": (
        "Keep `#old` and ``a #old b`` as they are, rename #old.\n\n"
        "```\n#old in a fence\n```\n\n"
        "~~~md\n#old\n~~~\n\n"
        "    #old in indented code\n\n"
        "<!-- #old in an HTML comment -->\n"
        "text %% #old in an Obsidian comment %% #old\n\n"
        "%%\n#old in a comment block\n%%\n",
        "old",
        "new",
    ),
    "urls_and_anchors": (
        "[[Note#old]] [[Note#old|#old]] [x](Note.md#old) [y](https://example.com/#old)\n"
        "<https://example.com/a#old> https://example.com/b#old ![img #old](pic.png) #old\n"
        "[ref]: https://example.com/#old\n",
        "old",
        "new",
    ),
    "nested_and_case": (
        "---\ntags:\n  - Old        # keep this comment\n  - 'old/child'\n  - older\n---\n"
        "# Heading #OLD/Sub\n\n- #old/a/b and #Old\n\n| cell |#old|\n|---|---|\n",
        "old",
        "project/old",
    ),
    "crlf_and_bom": ("\ufeff---\r\ntags: old, keep\r\n---\r\nline #old\r\nnext #old\r\n", "old", "new"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_rename_diffs(case: str) -> None:
    text, old, new = CASES[case]
    after = _rename(text, old, new)
    diff = "".join(
        difflib.unified_diff(text.splitlines(True), after.splitlines(True), "before", "after", n=0)
    )
    check_golden(GOLDEN / f"{case}.diff", diff)


def test_too_deeply_nested_body_is_not_planned() -> None:
    text = "> " * 120 + "#old\n"
    assert plan_note(text, tag_rename("old", "new")) is None


# ----------------------------------------------------------------------------- properties
# A note is built from pieces whose nature is known by construction: a tag piece is a tag
# (each starts a word, after a blank or at a line start), a decoy only looks like one. The
# expected rename is computed from the pieces, independently of the scanner.
TAGS = ["#old", "#Old", "#OLD/x", "#old/a/b", "#oldish", "#other", "#old2"]
DECOYS = [
    "`#old`", "[[N#old]]", "[[N#old|a]]", "[t](https://e.com/#old)", "<https://e.com/x#old>",
    "<!-- #old -->", "%% #old %%", "a#old", "\\#old", "#1984", "(#old)", "![i](p.png#old)",
]  # fmt: skip
WORDS = ["alpha", "beta", "é", "東京", "x-y", "42"]

piece = st.sampled_from(TAGS + DECOYS + WORDS)
line = st.lists(piece, min_size=1, max_size=6).map(lambda ps: ["w", *ps])  # never a block opener
block = st.one_of(
    st.lists(line, min_size=1, max_size=3).map(lambda ls: ("para", ls)),
    st.sampled_from(["```\n#old code\n```", "    #old indented", "%%\n#old\n%%"]).map(lambda b: ("raw", b)),
)
frontmatter = st.lists(st.sampled_from(["old", "Old/x", "other", "'old'", '"#old/y"']), max_size=4)


def _build(fm: list[str], blocks: list[tuple[str, object]], rename: dict[str, str] | None) -> str:
    """The note text; with `rename` (tag piece → new piece), what the rename must produce."""
    out = []
    if fm:
        items = [rename.get(v, v) if rename else v for v in fm]
        out.append("---\ntags: [" + ", ".join(items) + "]\n---\n")
    for kind, value in blocks:
        if kind == "raw":
            out.append(f"{value}\n\n")
        else:
            lines = value if isinstance(value, list) else []
            out.append(
                "".join(" ".join(rename.get(p, p) if rename else p for p in ps) + "\n" for ps in lines) + "\n"
            )
    return "".join(out)


def _expected_pieces(old: str, new: str) -> dict[str, str]:
    """Each tag piece (body and frontmatter spellings) as the rename old → new writes it."""
    out: dict[str, str] = {}
    for p in TAGS + ["old", "Old/x", "other", "'old'", '"#old/y"']:
        lead = p[: len(p) - len(p.lstrip("'\"#"))]
        name = p[len(lead) :].rstrip("'\"")
        tail = p[len(lead) + len(name) :]
        head, _, rest = name.partition("/")
        if head.lower() == old:
            out[p] = lead + new + ("/" + rest if rest else "") + tail
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fm=frontmatter, blocks=st.lists(block, min_size=1, max_size=5))
def test_rename_changes_exactly_the_tag_pieces(fm: list[str], blocks: list[tuple[str, object]]) -> None:
    text = _build(fm, blocks, None)
    expected = _build(fm, blocks, _expected_pieces("old", "renamed/tag"))
    assert _rename(text, "old", "renamed/tag") == expected


same_case = st.sampled_from(["#old", "#old/a/b", "#oldish", "#other", *DECOYS, *WORDS])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    fm=st.lists(st.sampled_from(["old", "old/x", "other"]), max_size=4),
    lines=st.lists(st.lists(same_case, min_size=1, max_size=6), min_size=1, max_size=6),
)
def test_rename_there_and_back_restores_the_note(fm: list[str], lines: list[list[str]]) -> None:
    """With no `b` tag before (and `a` spelled as given), a → b then b → a is the identity."""
    text = _build(fm, [("para", [["w", *ps] for ps in lines])], None)
    there = _rename(text, "old", "fresh")
    assert _rename(there, "fresh", "old") == text
