"""What an evaluation reads from the vault: the `Scope` bases-run implements per row, and
how a note's frontmatter becomes values.

Property names (`status`, `note.status`, `note["Due Date"]`, `this.topics`): the key as
written first; else the first key equal to it case-insensitively (Obsidian treats property
names case-insensitively); else null. A frontmatter string that is exactly one wikilink
(`"[[Note|alias]]"`) is a link, resolved from the note that holds it; a YAML date or
datetime is a date; `tags` (or `tag`) values are tags (`note.tags.contains("a")` matches
`a/b`), a string of them split at commas and blanks as Obsidian reads it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from typing import Protocol

from vault_agent.query.bases import dates
from vault_agent.query.bases.budget import Budget
from vault_agent.query.bases.expr_ast import NOWHERE
from vault_agent.query.bases.expr_errors import BudgetExceeded
from vault_agent.query.bases.values import FileInfo, LinkValue, TagText, Value

MAX_PROPERTY_DEPTH = 32
_WIKILINK = re.compile(r"!?\[\[([^\[\]|]+?)(?:\|([^\[\]]*))?\]\]")
_TAG_SPLIT = re.compile(r"[,\s]+")
_TAG_KEYS = ("tags", "tag")


class Scope(Protocol):
    """One row's world, implemented by bases-run (tests/query/bases/fixture.py is an example)."""

    @property
    def file(self) -> FileInfo:
        """The row's file."""
        ...

    @property
    def this(self) -> FileInfo | None:
        """The file `this` names (the base, or the note embedding it), or None."""
        ...

    def now(self) -> dt.datetime:
        """The request's clock as naive local time (`now()`; `today()` is its date)."""
        ...

    def formula(self, name: str, budget: Budget) -> Value:
        """The row's value of `formula.name` (formulas.RowFormulas does it with cycle checks).

        Raises:
            Unsupported: no formula of that name (or bases-run refuses it).
        """
        ...

    def resolve_link(self, target: str, source: str) -> str | None:
        """The vault path a link target written in `source` names (linkpaths' rules), or None."""
        ...

    def file_info(self, path: str) -> FileInfo | None:
        """Any vault file by path (`asFile()`, `file()`, `linksTo`), or None."""
        ...

    def backlinks(self, path: str) -> Sequence[str]:
        """The paths of the files linking to `path` (`file.backlinks`)."""
        ...


def find_key(props: Mapping[str, object], name: str) -> str | None:
    """The frontmatter key `name` reads: exact, else the first case-insensitive match."""
    if name in props:
        return name
    folded = name.casefold()
    return next((key for key in props if key.casefold() == folded), None)


def property_value(info: FileInfo, name: str, scope: Scope) -> Value:
    """The value of a note property of `info` (null when absent)."""
    key = find_key(info.properties, name)
    if key is None:
        return None
    raw = info.properties[key]
    if key.casefold() in _TAG_KEYS:
        return tags_value(raw)
    return from_yaml(raw, info.path, scope)


def all_properties(info: FileInfo, scope: Scope) -> dict[str, Value]:
    """Every note property of `info` as values (`note`, `file.properties`)."""
    return {key: property_value(info, key, scope) for key in info.properties}


def tags_value(raw: object) -> Value:
    """A `tags` property's value: a list of tags (a string split at commas and blanks)."""
    if isinstance(raw, str):
        return [TagText(part) for part in _TAG_SPLIT.split(raw) if part]
    if isinstance(raw, list | tuple):
        return [TagText(str(item)) for item in raw if item is not None]
    return None if raw is None else [TagText(str(raw))]


def link_from_text(text: str, source: str, scope: Scope) -> LinkValue:
    """A link from `[[target|display]]` or a bare target, resolved from `source`."""
    m = _WIKILINK.fullmatch(text.strip())
    target, display = (m.group(1).strip(), m.group(2)) if m else (text.strip(), None)
    path = None if "://" in target else scope.resolve_link(target.split("#", 1)[0], source)
    return LinkValue(target, path, display)


def from_yaml(raw: object, source: str, scope: Scope, level: int = 0) -> Value:
    """A frontmatter value as a Bases value (numbers become floats, wikilinks links).

    Raises:
        BudgetExceeded: lists or mappings nested deeper than MAX_PROPERTY_DEPTH.
    """
    if raw is None or isinstance(raw, bool):
        return raw
    if isinstance(raw, str):
        return link_from_text(raw, source, scope) if "[[" in raw and _WIKILINK.fullmatch(raw.strip()) else raw
    if isinstance(raw, int | float):
        return float(raw)
    if isinstance(raw, dt.date):
        return dates.from_python(raw)
    if level >= MAX_PROPERTY_DEPTH:
        raise BudgetExceeded(f"a property nests deeper than {MAX_PROPERTY_DEPTH} levels", NOWHERE)
    if isinstance(raw, list | tuple):
        return [from_yaml(item, source, scope, level + 1) for item in raw]
    if isinstance(raw, Mapping):
        return {str(key): from_yaml(item, source, scope, level + 1) for key, item in raw.items()}
    return str(raw)
