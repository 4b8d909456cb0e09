"""How a note's windows are laid out (passages.note_windows): consecutive windows of the
model's tokens, of which a layout picks some (the product: the first WINDOWS; the lab's
shapes: some spread evenly through the whole note). Pure functions over any text with a
character cut standing in for the model's (the model's own cut: test_semantic.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vault_agent.semantic.passages import READ_CHARS, WINDOWS, first_windows, note_windows, spread


def _cut(text: str, tokens: int) -> str:
    """A stand-in for the model's cut: a token is 4 characters."""
    return text[: 4 * tokens]


@settings(max_examples=300, deadline=None)
@given(total=st.integers(0, 400), count=st.integers(0, 40))
def test_spread_picks_count_windows_evenly_first_and_last_included(total: int, count: int) -> None:
    picked = spread(total, count)
    assert picked == sorted(set(picked))
    assert len(picked) == min(total, count)
    assert all(0 <= i < total for i in picked)
    if total >= 2 and count >= 2:
        assert picked[0] == 0 and picked[-1] == total - 1
        gaps = [b - a for a, b in zip(picked, picked[1:], strict=False)]
        assert max(gaps) - min(gaps) <= 1


def test_a_long_notes_spread_windows_reach_its_end_a_short_notes_are_all_of_it() -> None:
    body = " ".join(f"w{i:04d}" for i in range(2000))  # 12,000 characters: 94 windows of 32 tokens
    windows = note_windows("Title", [None], [body], _cut, 32, lambda total: spread(total, 4), 100_000)
    assert len(windows) == 4
    assert windows[0][1].startswith("Title\nw0000")
    assert "w1999" in windows[-1][1]  # the last window is the note's end
    assert all(w.startswith("Title\n") for _, w in windows[1:])  # later windows: headed by the title
    short = note_windows("Short", [None], ["a few words"], _cut, 32)
    assert short == [(0, "Short\na few words")]
    assert note_windows(None, [None], ["   "], _cut, 32) == []


def test_the_product_reads_a_notes_opening_in_its_first_windows() -> None:
    body = " ".join(f"w{i:04d}" for i in range(2000))
    opening = note_windows("T", [None], [body], _cut, 32)
    assert len(opening) == WINDOWS == 2 and "w1999" not in opening[1][1]
    assert note_windows("T", [None], [body], _cut, 32, first_windows(2)) == opening
    # each window starts where the one before ended: together they are the note's start
    assert opening[0][1] + opening[1][1].removeprefix("T\n") == ("T\n" + body)[: 2 * 4 * 32]
    assert READ_CHARS >= WINDOWS * 32 * 4


def test_a_window_points_at_the_body_it_starts_in() -> None:
    bodies = ["a" * 100, "b" * 300, "c" * 300]
    windows = note_windows(None, [None, None, None], bodies, _cut, 50, lambda total: list(range(total)))
    assert [where for where, _ in windows] == [0, 1, 1, 2]  # the third starts before 'c…'
