"""The pure path rules (vault_agent/paths/rules.py): properties over open-ended caller text."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vault_agent.errors import Forbidden, InvalidPath
from vault_agent.paths.rules import (
    MAX_COMPONENT_BYTES,
    MAX_DISPLAY_CHARS,
    PROTECTED_DIRS,
    Exclusions,
    PathRules,
    display,
    fold,
    has_surrogates,
    is_protected,
    normalize_rel_path,
)

FAST = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Components an attacker or a confused agent may type: traversal, separators of both kinds,
# drive letters, Unicode that changes under NFC, and ordinary names.
COMPONENT = st.one_of(
    st.sampled_from(["..", ".", "", "~", "C:", "a", "b.md", "cafe\u0301", "caf\u00e9", "\\", "..\\..", "x:"]),
    st.text(min_size=1, max_size=12),
)
RAW_PATH = st.lists(COMPONENT, max_size=8).map("/".join)


def _valid_or_refused(raw: str) -> str | None:
    try:
        return normalize_rel_path(raw, allow_root=True)
    except InvalidPath:
        return None


@FAST
@given(RAW_PATH)
def test_accepted_paths_stay_inside_the_root(raw: str) -> None:
    rel = _valid_or_refused(raw)
    if rel is None:
        return
    parts = rel.split("/") if rel else []
    assert all(p not in ("", ".", "..") for p in parts)
    assert not rel.startswith(("/", "~"))
    assert "\\" not in rel and "\x00" not in rel
    assert all(len(p.encode("utf-8")) <= MAX_COMPONENT_BYTES for p in parts)
    assert unicodedata.is_normalized("NFC", rel)


@FAST
@given(RAW_PATH)
def test_normalizing_twice_changes_nothing(raw: str) -> None:
    rel = _valid_or_refused(raw)
    if rel is not None:
        assert normalize_rel_path(rel, allow_root=True) == rel


@FAST
@given(st.lists(st.sampled_from(["a", "b", "..", "."]), min_size=1, max_size=10))
def test_traversal_is_refused_exactly_when_it_climbs_above_the_root(parts: list[str]) -> None:
    depth, climbs = 0, False
    for p in parts:
        if p == "..":
            climbs = climbs or depth == 0
            depth = max(0, depth - 1)
        elif p != ".":
            depth += 1
    rel = _valid_or_refused("/".join(parts))
    assert (rel is None) == climbs


@FAST
@given(st.text(max_size=40), st.characters(max_codepoint=31))
def test_control_characters_are_refused_anywhere(text: str, control: str) -> None:
    with pytest.raises(InvalidPath):
        normalize_rel_path(f"notes/{text}{control}x.md")


@FAST
@given(st.text(max_size=600))
def test_display_is_bounded_and_printable(text: str) -> None:
    shown = display(text)
    assert len(shown) <= MAX_DISPLAY_CHARS
    assert shown.isprintable()


@FAST
@given(
    st.sampled_from(sorted(PROTECTED_DIRS)),
    st.text(alphabet=". ", max_size=3),
    st.booleans(),
    st.text(max_size=20),
)
def test_protected_folders_match_in_any_case_with_trailing_dots(
    name: str, tail: str, upper: bool, below: str
) -> None:
    spelled = (name.upper() if upper else name) + tail
    assert is_protected(f"{spelled}/{below}")
    assert is_protected(f"notes/{spelled}/x.md")
    assert fold(spelled) == fold(name)


@FAST
@given(st.text(max_size=20))
def test_surrogates_are_detected_and_refused(text: str) -> None:
    broken = text + "\udc80"
    assert has_surrogates(broken) and not has_surrogates(text)  # st.text() never draws surrogates
    with pytest.raises(InvalidPath):
        normalize_rel_path(broken)


def test_rules_classify_notes_exclusions_and_protected_state_dir() -> None:
    rules = PathRules(
        Exclusions(["drafts/"], extra_paths=frozenset({"meta/state"})),
        extensions=(".MD", ".markdown"),
        protected_paths=frozenset({"Meta/State"}),
    )
    assert rules.is_note_name("a/B.md") and rules.is_note_name("c.Markdown")
    assert not rules.is_note_name("a.txt")
    assert rules.hidden("x/drafts/y.md", False)
    assert rules.hidden("meta/state/segments", True)
    assert not rules.hidden("notes/state/x.md", False)  # same last name, other folder
    assert rules.is_protected("META/state/x")  # compared case-insensitively
    with pytest.raises(Forbidden) as exc:
        rules.check_not_protected("a/.git/config")
    assert "a/.git/config" in exc.value.message
    rules.check_not_protected("notes/git.md")
