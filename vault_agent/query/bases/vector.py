"""Filters and sort keys answered for every note at once, from vault_query's columns.

A filter is answered here as two masks over the snapshot's notes: `yes` (certainly true)
and `no` (certainly false); a note in neither is evaluated by the interpreter, row by row,
so the answer is always the interpreter's (views.py, run.py). `&&`, `||`, `!` and the
filter groups combine masks by three-valued logic (`a && b` is certainly false when `a`
is, whatever `b`); a statement is answered here when it is one of `shapes.simple_filter`'s
shapes:

- `file.hasTag(…)` / `file.tags.contains(…)`: the `tags` columns (nested tags, letter case
  folded, as `vault_query --tag`); `file.inFolder(…)`: the notes' paths;
- a property compared with a literal (`status == "done"`, `rating > 3`): the typed `props`
  columns, with Bases' rules (types kept apart, a list equals no scalar, null is unordered);
  a note whose value the columns cannot settle (a wikilink text, a date-time, a number the
  columns do not hold, a key written in another letter case or with punctuation that the
  index folds together) is left to the interpreter;
- a file field (`file.name`, `file.path`, `file.folder`, `file.ext`, `file.size`) compared
  with a literal.

Sort keys of note properties and file fields come from the same columns (vector_sort.py).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from vault_agent.property_values import canonical_key, micros
from vault_agent.query.bases import dates
from vault_agent.query.bases import expr_ast as A
from vault_agent.query.bases.rows import SnapshotRows
from vault_agent.query.bases.shapes import Comparison, FolderFilter, TagFilter, simple_filter
from vault_agent.query.bases.values import tag_name
from vault_agent.query.bases.views import CompiledFilter, CompiledStatement
from vault_agent.query.structured import columnar
from vault_agent.query.structured.columnar import (
    K_BOOLEAN,
    K_DATE,
    K_EMPTY,
    K_LIST,
    K_NULL,
    K_NUMBER,
    K_OBJECT,
    K_STRING,
)
from vault_agent.query.structured.plan import TagP

Mask = npt.NDArray[np.bool_]
Tri = tuple[Mask, Mask]  # (certainly true, certainly false)
Literal_ = str | float | bool | None
TAG_KEYS = ("tags", "tag")
FILE_TEXT = ("path", "name", "basename", "folder", "ext")
_ORDER_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
}
_ARROW_OPS = {"==": pc.equal, "<": pc.less, "<=": pc.less_equal, ">": pc.greater, ">=": pc.greater_equal}


@functools.lru_cache(maxsize=256)
def arrow_text(value: str) -> pa.Scalar:
    """A text literal as an Arrow scalar, made once: converting a Python value per call
    looks for optional modules (dateutil) on every call, ~0.5 ms each."""
    return pa.scalar(value, pa.string())


def _number_of(text: str) -> float | None:
    """compare._as_number of a text literal."""
    try:
        number = float(text.strip())
    except ValueError:
        return None
    return None if math.isnan(number) else number


class Vectors:
    """Masks over the notes of one snapshot (`rows`)."""

    def __init__(self, rows: SnapshotRows) -> None:
        self.rows = rows
        self.n = rows.count
        self._fields: dict[str, pa.Array] = {}

    def none(self) -> Mask:
        return np.zeros(self.n, np.bool_)

    def unknown(self) -> Tri:
        return self.none(), self.none()

    def constant(self, value: bool) -> Tri:
        full = np.ones(self.n, np.bool_)
        return (full, self.none()) if value else (self.none(), full)

    # ------------------------------------------------------------------ trees
    def filter(self, node: CompiledFilter) -> Tri:
        """The masks of a filter tree (groups: and = all, or = any, not = none; empty: true)."""
        if isinstance(node, CompiledStatement):
            return self.expression(node.expr)
        parts = [self.filter(item) for item in node.items]
        if not parts:
            return self.constant(True)
        if node.op == "not":
            parts = [(no, yes) for yes, no in parts]
        if node.op == "or":
            return _any(parts)
        return _all(parts)

    def expression(self, expr: A.Expr) -> Tri:
        """The masks of one statement (`&&`, `||`, `!` over shapes; the rest unknown)."""
        if isinstance(expr, A.Binary) and expr.op in ("&&", "||"):
            parts = [self.expression(expr.left), self.expression(expr.right)]
            return _all(parts) if expr.op == "&&" else _any(parts)
        if isinstance(expr, A.Unary) and expr.op == "!":
            yes, no = self.expression(expr.operand)
            return no, yes
        shape = simple_filter(expr)
        if isinstance(shape, TagFilter):
            return self._tags(shape.tags)
        if isinstance(shape, FolderFilter):
            return self._folder(shape.folder)
        if isinstance(shape, Comparison):
            if shape.ref.namespace == "note":
                return self._property(shape.ref.name, shape.op, shape.value)
            if shape.ref.namespace == "file":
                return self._file_field(shape.ref.name, shape.op, shape.value)
        return self.unknown()

    # ------------------------------------------------------------------ leaves
    def _tags(self, tags: tuple[str, ...]) -> Tri:
        columns = self.rows.props.columns
        if columns is None:
            return self.unknown()
        found = self.none()
        for tag in tags:
            want = tag_name(tag)
            if want != want.casefold():  # the tags columns fold case; Bases lower-cases
                return self.unknown()
            if want:
                mask = columnar.mask_of(columns, TagP(want, nested=True))
                if mask is None:
                    return self.unknown()
                found |= mask
        return found, ~found

    def _folder(self, folder: str) -> Tri:
        wanted = folder.strip().strip("/")
        if not wanted:
            return self.constant(True)
        found = np.asarray(
            pc.starts_with(self.rows.notes["path"], wanted + "/").to_numpy(zero_copy_only=False), np.bool_
        )
        return found, ~found

    def file_text(self, name: str) -> pa.Array:
        """A text file field of every note (`folder` of a root note is `/`)."""
        if name not in self._fields:
            paths = self.rows.notes["path"].combine_chunks()
            names = pc.replace_substring_regex(paths, r"^.*/", "")
            if name == "path":
                value = paths
            elif name == "name":
                value = names
            elif name == "folder":
                folders = pc.replace_substring_regex(paths, r"/[^/]*$", "")
                value = pc.if_else(pc.match_substring(paths, "/"), folders, arrow_text("/"))
            elif name == "ext":
                value = pc.if_else(
                    pc.match_substring_regex(names, r"^.+\."),
                    pc.replace_substring_regex(names, r"^.*\.", ""),
                    "",
                )
            else:  # basename
                value = pc.replace_substring_regex(names, r"(?:^(.+)\.[^.]*$)", r"\1")
            self._fields[name] = value
        return self._fields[name]

    def _file_field(self, name: str, op: str, value: Literal_) -> Tri:
        if name == "size":
            sizes = self.rows.notes["size"].fill_null(0).to_numpy().astype(np.float64)
            return self._number_values(sizes, op, value)
        if name not in FILE_TEXT:
            return self.unknown()
        texts = self.file_text(name)
        if isinstance(value, str):
            text = arrow_text(value)
            if op == "!=":
                yes = np.asarray(pc.equal(texts, text).to_numpy(zero_copy_only=False), np.bool_)
                return ~yes, yes
            yes = np.asarray(_ARROW_OPS[op](texts, text).to_numpy(zero_copy_only=False), np.bool_)
            return yes, ~yes
        if op in ("==", "!="):  # a text equals no number, boolean or null
            return self.constant(op == "!=")
        if isinstance(value, float):
            return self.unknown()  # a numeric text compared with a number: the interpreter
        return self.constant(False)

    def _number_values(self, numbers: npt.NDArray[np.float64], op: str, value: Literal_) -> Tri:
        """Every note holds a number (a file's size): compared with a literal."""
        if isinstance(value, bool) or value is None:
            return self.constant(op == "!=")
        if isinstance(value, str):
            if op in ("==", "!="):
                return self.constant(op == "!=")
            parsed = _number_of(value)
            if parsed is None:
                return self.constant(False)
            value = parsed
        if op in ("==", "!="):
            yes = numbers == value
            return (~yes, yes) if op == "!=" else (yes, ~yes)
        yes = _ORDER_OPS[op](numbers, value)
        return yes, ~yes

    # ------------------------------------------------------------------ properties
    def _property(self, name: str, op: str, value: Literal_) -> Tri:
        """`name op value` by Bases' rules over the props columns (module doc)."""
        columns = self.rows.props.columns
        if columns is None:
            return self.unknown()
        key = canonical_key(name)
        nullish = np.ones(self.n, np.bool_)  # no value (absent, or null) until rows say otherwise
        container = self.none()
        undecided = self.none()
        scalar_yes = self.none()
        tags = name.casefold() in TAG_KEYS
        for keyed, a, b, pos in self.rows.props.key_rows(key):
            cols = keyed.cols
            live = pos >= 0
            kinds = cols["kind"][a:b]
            is_list = cols["is_list"][a:b].astype(np.bool_)
            null = (kinds == K_NULL) & ~is_list
            listlike = is_list | (kinds == K_OBJECT) | (kinds == K_EMPTY) | (kinds == K_LIST) | (tags & ~null)
            scalar = live & ~listlike & ~null
            nullish[pos[live & ~null]] = False
            container[pos[live & listlike]] = True
            yes, settled = self._scalar_rows(cols, a, b, kinds, op, value)
            scalar_yes[pos[scalar & yes]] = True
            undecided[pos[scalar & ~settled]] = True
        if op == "==":
            yes = (nullish & (value is None)) | scalar_yes
        elif op == "!=":
            yes = (nullish & (value is not None)) | container | scalar_yes
        else:
            yes = scalar_yes
        yes = yes & ~undecided
        no = ~yes & ~undecided
        ambiguous = self.ambiguous_notes(name, key)
        if ambiguous is not None:
            yes, no = yes & ~ambiguous, no & ~ambiguous
        return yes, no

    def _scalar_rows(
        self, cols: dict[str, Any], a: int, b: int, kinds: npt.NDArray[np.int8], op: str, value: Literal_
    ) -> tuple[Mask, Mask]:
        """(the comparison holds, the columns settle it) for each scalar row a:b."""
        size = b - a
        yes = np.zeros(size, np.bool_)
        settled = np.zeros(size, np.bool_)
        is_string = kinds == K_STRING
        number = (kinds == K_NUMBER) & cols["n_ok"][a:b]
        boolean = kinds == K_BOOLEAN
        date = (kinds == K_DATE) & cols["d_ok"][a:b]
        texts = cols["s"].slice(a, size)
        if isinstance(value, str) and is_string.any():  # a wikilink text is a link: the interpreter
            linky = np.asarray(
                pc.match_substring(texts, "[[").fill_null(False).to_numpy(zero_copy_only=False)
            )
            plain = is_string & ~linky
        else:
            plain = is_string
        settled |= plain | number | boolean | date
        eq = op in ("==", "!=")
        if isinstance(value, str):
            compared = (pc.equal if eq else _ARROW_OPS[op])(texts, arrow_text(value))
            yes |= plain & np.asarray(compared.fill_null(False).to_numpy(zero_copy_only=False))
            moment = dates.parse_date(value)
            if moment is not None:
                at = micros(moment.moment)
                days = cols["d"][a:b]
                yes |= date & ((days == at) if eq else _ORDER_OPS[op](days, at))
            number_literal = _number_of(value)
            if not eq and number_literal is not None:
                yes |= number & _ORDER_OPS[op](cols["n"][a:b], number_literal)
        elif isinstance(value, bool):
            flags = cols["b"][a:b].astype(np.int8)
            yes |= boolean & ((flags == int(value)) if eq else _ORDER_OPS[op](flags, int(value)))
        elif isinstance(value, float):
            numbers = cols["n"][a:b]
            yes |= number & ((numbers == value) if eq else _ORDER_OPS[op](numbers, value))
            if not eq:
                settled &= ~plain  # a numeric text against a number: the interpreter decides
        if op == "!=":
            yes = settled & ~yes
        return yes, settled

    def ambiguous_notes(self, name: str, key: str) -> Mask | None:
        """Notes holding a frontmatter key that folds to `key` in the index but is not the
        one Bases reads for `name` (`Due Date!` beside `due date`): undecided here."""
        wanted = name.casefold()
        other = [code for code, field in self.rows.props.spellings(key) if field.casefold() != wanted]
        if not other:
            return None
        live = self.rows.props.live_fields()
        if live is None:
            return None
        codes, positions = live
        mask = self.none()
        mask[positions[np.isin(codes, np.asarray(other, np.int32))]] = True
        return mask


def _all(parts: list[Tri]) -> Tri:
    """`a && b && …` evaluated left to right: certainly false only where every earlier part
    is certainly true (an earlier part left to the interpreter may end in an error)."""
    yes, no = parts[0]
    for y, n in parts[1:]:
        yes, no = yes & y, no | (yes & n)
    return yes, no


def _any(parts: list[Tri]) -> Tri:
    """`a || b || …` evaluated left to right (see `_all`)."""
    yes, no = parts[0]
    for y, n in parts[1:]:
        yes, no = yes | (no & y), no & n
    return yes, no
