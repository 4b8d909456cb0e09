"""`sort by …` and the plugin's default order, as numeric keys for one stable lexsort.

The user's sort lines come first, then the plugin's default order, which it always appends
(docs/Queries/Sorting.md "Default sort order"): `status.type`, `urgency`, `due`, `priority`,
`path`; ties left after all of them keep (path, line) order. Each key follows the plugin's
comparator: dates invalid first, then by date, absent last; urgency highest first (its
src/Task/Urgency.ts, computed from today); priority highest first; `status` open before
done; `recurring` recurring first; `tag N` by the Nth tag, tasks without one last; text
(`path`, `description`, `heading`, `filename`, `status.name`, `id`) in the order of
JavaScript's `localeCompare(…, {numeric: true})`, approximated by `natural_key`; `random`
by the plugin's daily hash of the description. `reverse` reverses that key.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from vault_agent.query.tasks.lang_ast import STATUS_TYPES, SortKey
from vault_agent.query.tasks.lang_columns import INVALID, MISSING, TaskColumns, day_number

Rows = np.ndarray
Key = npt.NDArray[np.float64] | npt.NDArray[np.int64]

DEFAULT_SORT = (
    SortKey("status.type"),
    SortKey("urgency"),
    SortKey("due"),
    SortKey("priority"),
    SortKey("path"),
)
# Status.typeGroupText's prefixes: the order `sort by status.type` and its groups follow.
STATUS_TYPE_ORDER = {"IN_PROGRESS": 1, "TODO": 2, "ON_HOLD": 3, "DONE": 4, "CANCELLED": 5, "NON_TASK": 6}
_TYPE_RANK = np.array([STATUS_TYPE_ORDER[t] for t in STATUS_TYPES], dtype=np.int64)
_PRIORITY_URGENCY = np.array([1.5, 1.0, 0.65, 0.325, 0.0, -0.3]) * 6.0  # by priority code
_DIGITS = re.compile(r"\d+")
# ICU's root collation puts white space, then punctuation and symbols in this order, before
# digits and letters (JavaScript's localeCompare in Obsidian); ASCII code order differs.
_ICU_PUNCTUATION = "\t\n\v\f\r _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"
_ICU_ORDER = str.maketrans({c: chr(1 + i) for i, c in enumerate(_ICU_PUNCTUATION)})
_LEADING_LINK = re.compile(r"^\[\[?([^\]]*)]]?")
_LEADING_FORMATS = tuple(
    re.compile(p)
    for p in (r"^\*\*([^*]+)\*\*", r"^\*([^*]+)\*", r"^==([^=]+)==", r"^__([^_]+)__", r"^_([^_]+)_")
)


def natural_key(text: str) -> tuple[str, str]:
    """An approximation of `a.localeCompare(b, undefined, {numeric: true})`: accents and case
    ignored first (digit runs compared as numbers), then lower case before upper case."""
    base = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)).casefold()
    primary = _DIGITS.sub(lambda m: f"{len(m[0].lstrip('0') or '0'):03d}{m[0].lstrip('0') or '0'}", base)
    return primary.translate(_ICU_ORDER), text.swapcase()


def ranks(values: Sequence[str]) -> npt.NDArray[np.int64]:
    """Each value's position in natural order (equal values share a rank)."""
    order = {v: i for i, v in enumerate(sorted(set(values), key=natural_key))}
    return np.fromiter((order[v] for v in values), dtype=np.int64, count=len(values))


def urgency(cols: TaskColumns, rows: Rows, today: dt.date) -> npt.NDArray[np.float64]:
    """The plugin's urgency score (src/Task/Urgency.ts), in its order of additions."""
    now = day_number(today)
    score = np.zeros(len(rows), dtype=np.float64)
    due = cols.dates["due"][rows].astype(np.int64)
    valid = (due != MISSING) & (due != INVALID)
    overdue = (now - due).astype(np.float64)
    multiplier = np.where(
        overdue >= 7.0, 1.0, np.where(overdue >= -14.0, ((overdue + 14.0) * 0.8) / 21.0 + 0.2, 0.2)
    )
    score = score + np.where(valid, multiplier * 12.0, 0.0)
    scheduled = cols.dates["scheduled"][rows].astype(np.int64)
    score = score + np.where((scheduled != INVALID) & (scheduled != MISSING) & (now >= scheduled), 5.0, 0.0)
    start = cols.dates["start"][rows].astype(np.int64)
    score = score + np.where((start != INVALID) & (start != MISSING) & (now < start), -3.0, 0.0)
    return np.asarray(score + _PRIORITY_URGENCY[cols.priority[rows]], dtype=np.float64)


def _imul(a: int, b: int) -> int:
    r = (a * b) & 0xFFFFFFFF
    return r - (1 << 32) if r >= 1 << 31 else r


def random_key(description: str, today: dt.date) -> int:
    """The plugin's RandomField.sortKey: a 32-bit hash of today's date and the description."""
    text = f"{today.year}-{today.month:02d}-{today.day:02d} {description}"
    units = text.encode("utf-16-le")
    h = 9
    for i in range(0, len(units), 2):
        h = _imul(h ^ (units[i] | units[i + 1] << 8), 387_420_489)
    return h ^ ((h & 0xFFFFFFFF) >> 9)


def clean_description(text: str) -> str:
    """DescriptionField.cleanDescription: a leading link or emphasis sorts by its text."""
    if m := _LEADING_LINK.match(text):
        inner = m[1]
        text = inner[inner.find("|") + 1 :] + text[m.end() :]
    for pattern in _LEADING_FORMATS:
        if m := pattern.match(text):
            text = m[1] + text[m.end() :]
    return text


def _tag_keys(cols: TaskColumns, rows: Rows, index: int) -> list[Key]:
    nth = [cols.tags[k][index - 1] if len(cols.tags[k]) >= index else "" for k in rows]
    lacking = np.array([len(cols.tags[k]) < index for k in rows], dtype=np.int64)
    return [lacking, ranks(nth)]


def _text_key(cols: TaskColumns, rows: Rows, field: str) -> Key:
    values = cols.text(field)
    picked = [values[k] for k in rows]
    if field == "description":
        picked = [clean_description(v) for v in picked]
    return ranks(picked)


def _keys(key: SortKey, cols: TaskColumns, rows: Rows, today: dt.date) -> list[Key]:
    f = key.field
    if f == "status":
        return [
            np.isin(
                cols.status_code[rows], [STATUS_TYPES.index(t) for t in ("DONE", "CANCELLED", "NON_TASK")]
            ).astype(np.int64)
        ]
    if f == "status.type":
        return [_TYPE_RANK[cols.status_code[rows]]]
    if f == "recurring":
        return [(~cols.recurring[rows]).astype(np.int64)]
    if f == "priority":
        return [cols.priority[rows].astype(np.int64)]
    if f == "urgency":
        return [-urgency(cols, rows, today)]
    if f == "happens":
        return [cols.happens()[rows].astype(np.int64)]
    if f in cols.dates:
        return [cols.dates[f][rows].astype(np.int64)]
    if f == "tag":
        return _tag_keys(cols, rows, key.tag_index)
    if f == "random":
        descriptions = cols.table.column("description")
        return [np.array([random_key(descriptions[int(k)].as_py(), today) for k in rows], dtype=np.int64)]
    return [_text_key(cols, rows, f)]


def sort_rows(sorts: Sequence[SortKey], cols: TaskColumns, rows: Rows, today: dt.date) -> Rows:
    """`rows` in the query's order: its sort lines, then the plugin's default order."""
    if len(rows) < 2:
        return rows
    keys: list[Key] = []
    for key in (*sorts, *DEFAULT_SORT):
        for k in _keys(key, cols, rows, today):
            keys.append(-k if key.reverse else k)
    keys.append(rows.astype(np.int64))  # table order (path, line): the last tie-break
    order = np.lexsort(tuple(reversed(keys)))
    return rows[order]
