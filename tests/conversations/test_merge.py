"""The three-way merge behind `undo --merge`: cases by hand, then properties over random
histories of agent writes and a person's edits in between."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vault_agent.conversations.merge import changed_lines, merge, split_lines

BASE = b"title\none\ntwo\nthree\n"


def test_one_side_changes_take_that_side() -> None:
    assert merge(BASE, BASE, BASE) == BASE
    assert merge(BASE, BASE + b"mine\n", BASE) == BASE + b"mine\n"
    assert merge(BASE, BASE, b"title\nthree\n") == b"title\nthree\n"


def test_same_change_on_both_sides_is_taken_once() -> None:
    assert (
        merge(BASE, b"title\nONE\ntwo\nthree\n", b"title\nONE\ntwo\nthree\n") == b"title\nONE\ntwo\nthree\n"
    )


def test_changes_that_share_lines_conflict() -> None:
    assert merge(BASE, b"title\nONE\ntwo\nthree\n", b"title\nuno\ntwo\nthree\n") is None
    assert merge(BASE, b"title\none changed\ntwo\nthree\n", b"title\ntwo\nthree\n") is None  # edit vs delete


def test_insertions_at_one_place_conflict_unless_equal() -> None:
    assert merge(BASE, BASE + b"a\n", BASE + b"b\n") is None
    assert merge(BASE, BASE + b"a\n", BASE + b"a\n") == BASE + b"a\n"


def test_undoing_an_append_keeps_the_line_written_right_after_it() -> None:
    """The issue's race: the agent appended `agent`, the person wrote `person` right after
    (or right before) it; taking the append out keeps the person's line (diff3 and git
    would call these touching hunks a conflict)."""
    after = BASE + b"agent\n"
    assert merge(after, after + b"person\n", BASE) == BASE + b"person\n"
    assert merge(after, BASE + b"person\nagent\n", BASE) == BASE + b"person\n"


def test_no_final_newline_and_bytes_that_are_not_utf8() -> None:
    assert split_lines(b"a\nb") == [b"a\n", b"b"]
    assert split_lines(b"") == []
    assert merge(b"x\xff\ny", b"x\xff\ny\nz", b"x\xff\n") is None  # `y` vs `y\n`: the same line edited
    assert merge(b"\xfe\n", b"\xfe\nmine\n", b"") == b"mine\n"
    assert changed_lines(b"a\nb\n", b"a\nc\nd\n") == (2, 1)


# ----------------------------------------------------------------------------- properties
# A history: the original note, then rounds of (agent edit, person edit). Every line is
# unique, so "the person's lines" and "the agent's lines" are sets we can check by name.
Edit = tuple[str, int, int]  # (kind, position seed, count)
edits = st.lists(
    st.tuples(st.sampled_from(["insert", "delete"]), st.integers(0, 1000), st.integers(1, 3)),
    min_size=1,
    max_size=3,
)


def _apply(
    lines: list[bytes], ops: list[Edit], tag: str, counter: list[int], protected: set[bytes]
) -> list[bytes]:
    out = list(lines)
    for kind, seed, count in ops:
        at = seed % (len(out) + 1)
        if kind == "insert":
            new = []
            for _ in range(count):
                counter[0] += 1
                new.append(f"{tag}-{counter[0]}\n".encode())
            out[at:at] = new
        else:
            # The person never deletes the agent's lines and nobody deletes the person's: those
            # are the edits a merge must refuse, not the ones whose keeping we check here.
            victims = [i for i in range(at, min(at + count, len(out))) if out[i] not in protected]
            for i in reversed(victims):
                del out[i]
    return out


@settings(max_examples=300, deadline=None)
@given(
    original=st.integers(0, 12),
    rounds=st.lists(st.tuples(edits, edits), min_size=1, max_size=3),
    person_last=edits,
)
def test_undo_merge_never_drops_a_line_only_the_person_added(
    original: int, rounds: list[tuple[list[Edit], list[Edit]]], person_last: list[Edit]
) -> None:
    counter = [0]
    text = [f"orig-{i}\n".encode() for i in range(original)]
    history: list[tuple[bytes, bytes]] = []  # (before, after) of each agent write
    agent_lines: set[bytes] = set()
    person_lines: set[bytes] = set()
    for agent_ops, person_ops in rounds:
        before = b"".join(text)
        text = _apply(text, agent_ops, "agent", counter, person_lines)
        agent_lines |= {line for line in text if line.startswith(b"agent-")}
        history.append((before, b"".join(text)))
        text = _apply(text, person_ops, "person", counter, person_lines | agent_lines)
        person_lines |= {line for line in text if line.startswith(b"person-")}
    text = _apply(text, person_last, "person", counter, person_lines | agent_lines)
    person_lines |= {line for line in text if line.startswith(b"person-")}
    result: bytes | None = b"".join(text)
    for before, after in reversed(history):  # undo's order: newest write first
        assert result is not None
        result = merge(after, result, before)
        if result is None:
            return  # a conflict is always allowed: the file is left alone
    assert result is not None  # merged, or the join when there is no history
    lines = set(split_lines(result))
    assert person_lines <= lines  # never lose a line only the person added
    assert not (agent_lines & lines)  # and the agent's lines are all gone


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([b"a\n", b"b\n", b"c\n", b"d"]), max_size=8),
    st.lists(st.sampled_from([b"a\n", b"b\n", b"x\n"]), max_size=8),
)
def test_merge_with_an_unchanged_side_is_the_other_side(base: list[bytes], other: list[bytes]) -> None:
    b, o = b"".join(base), b"".join(other)
    assert merge(b, b, o) == o
    assert merge(b, o, b) == o
