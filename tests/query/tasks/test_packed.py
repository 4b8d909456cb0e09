"""The compact task columns (packed.py) give back exactly what they were given."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from vault_agent.query.tasks.lang_columns import INVALID, MISSING
from vault_agent.query.tasks.packed import BLOCK, DayColumn, PackedTexts, SparseTexts

texts = st.lists(st.one_of(st.none(), st.text(max_size=12)), max_size=3 * BLOCK + 5)


@settings(max_examples=40, deadline=None)
@given(values=texts, data=st.data())
def test_packed_texts_take_and_array_match_the_column(values: list[str | None], data: st.DataObject) -> None:
    packed = PackedTexts.pack(pa.array(values, pa.string()))
    expected = ["" if v is None else v for v in values]
    assert packed.size == len(values)
    assert packed.array().to_pylist() == expected
    if values:
        rows = data.draw(st.lists(st.integers(0, len(values) - 1), max_size=60))
        assert packed.take(np.array(rows, np.int64)).to_pylist() == [expected[r] for r in rows]
        assert packed.texts(np.array(rows, np.int64)) == [expected[r] for r in rows]
    assert packed.take(np.zeros(0, np.int64)).to_pylist() == []


def test_packed_texts_of_a_sliced_and_chunked_column() -> None:
    words = [f"task {k} — café {k % 7}" for k in range(2 * BLOCK + 3)]
    chunked = pa.chunked_array([pa.array(words[: BLOCK + 7]), pa.array(words[BLOCK + 7 :])])
    assert PackedTexts.pack(chunked).array().to_pylist() == words
    sliced = pa.array(words).slice(5, BLOCK + 10)
    assert PackedTexts.pack(sliced).array().to_pylist() == words[5 : BLOCK + 15]


def test_packed_texts_are_smaller_than_the_plain_column() -> None:
    words = [f"Review the quarterly report for project {k % 50} #work" for k in range(4 * BLOCK)]
    assert PackedTexts.pack(pa.array(words)).nbytes < pa.array(words).nbytes / 2


day_numbers = st.one_of(st.integers(-30_000, 60_000), st.sampled_from([int(MISSING), int(INVALID)]))


@given(days=st.lists(day_numbers, max_size=200))
def test_day_column_gives_back_the_day_numbers(days: list[int]) -> None:
    array = np.array(days, np.int32)
    column = DayColumn.of(array)
    assert len(column) == len(days)
    assert column[np.arange(len(days))].tolist() == days
    assert column[np.arange(len(days))].dtype == np.int32
    for k in range(min(len(days), 5)):
        assert int(column[k]) == days[k]


def test_day_column_is_16_bit_for_this_century_and_wide_otherwise() -> None:
    assert DayColumn.of(np.array([19_000, int(MISSING), int(INVALID)], np.int32)).days.dtype == np.int16
    assert DayColumn.of(np.array([19_000, 60_000], np.int32)).days.dtype == np.int32


def test_sparse_texts() -> None:
    sparse = SparseTexts.of(pa.array([None, "every day", None, None, "when done"]))
    assert [sparse.get(r) for r in range(6)] == [None, "every day", None, None, "when done", None]
    assert sparse.dense(5).to_pylist() == ["", "every day", "", "", "when done"]
    assert SparseTexts.of(pa.array([None, None], pa.string())).dense(2).to_pylist() == ["", ""]
