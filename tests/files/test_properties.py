"""Property tests: line edits match a list model; link rewriting never breaks unrelated text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vault_agent.files.edit import _delete, _insert, split_lines
from vault_agent.files.links import LinkIndex, RewriteContext, rewrite_links

LINE = st.text(alphabet=st.characters(exclude_characters="\n\r", exclude_categories=["Cs"]), max_size=12)
LINES = st.lists(LINE, max_size=12)


@settings(max_examples=200, deadline=None)
@given(LINES, st.data(), LINES)
def test_insert_matches_list_model(lines: list[str], data: st.DataObject, new: list[str]) -> None:
    text = "".join(line + "\n" for line in lines)
    at = data.draw(st.integers(min_value=0, max_value=len(lines)))
    content = "".join(line + "\n" for line in new)
    out, count = _insert(text, "n.md", at, None, content)
    assert split_lines(out) == [ln + "\n" for ln in lines[:at] + new + lines[at:]]
    assert count == len(new)


@settings(max_examples=200, deadline=None)
@given(st.lists(LINE, min_size=1, max_size=12), st.data())
def test_delete_matches_list_model(lines: list[str], data: st.DataObject) -> None:
    text = "".join(line + "\n" for line in lines)
    start = data.draw(st.integers(min_value=1, max_value=len(lines)))
    end = data.draw(st.integers(min_value=start, max_value=len(lines)))
    out, count = _delete(text, "n.md", start, end)
    assert out == "".join(ln + "\n" for ln in lines[: start - 1] + lines[end:])
    assert count == end - start + 1


FILES = ["a.md", "b/c.md", "b/d e.md", "img/p.png"]
TEXT = st.text(alphabet=st.sampled_from(list("[]()!|#<>`~ \n/.abcdemp%2")), max_size=80)


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_rewrite_is_identity_for_unmoved_and_total(text: str) -> None:
    idx = LinkIndex(FILES)
    same = RewriteContext(mapping={}, before=idx, after=idx)
    assert rewrite_links(text, "b/src.md", "b/src.md", same) == (text, 0)
    moved = RewriteContext(
        mapping={"b/c.md": "z/c2.md"},
        before=idx,
        after=LinkIndex(["a.md", "z/c2.md", "b/d e.md", "img/p.png"]),
    )
    out, n = rewrite_links(text, "b/src.md", "b/src.md", moved)
    assert (out == text) == (n == 0)
    assert out.count("\n") == text.count("\n")
