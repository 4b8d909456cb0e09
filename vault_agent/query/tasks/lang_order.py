"""The Tasks plugin's orders, as the task engine's sort keys (order.py) and groups use them.

The plugin's default order, which it appends to every query's sort lines
(docs/Queries/Sorting.md "Default sort order"): `status.type`, `urgency`, `due`, `priority`,
`path`. Text (`path`, `description`, `heading`, `filename`, `status.name`, `id`, group
names) is in the order of JavaScript's `localeCompare(…, {numeric: true})`, approximated by
`natural_key`; `sort by description` ignores a leading link or emphasis
(`clean_description`); `sort by random` is the plugin's daily hash (`random_key`).
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from vault_agent.query.tasks.lang_ast import SortKey

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
