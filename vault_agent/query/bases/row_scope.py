"""The `Scope` of one row (bases-expr's protocol, scope.py) over a pinned snapshot.

`RunContext` holds what every row of one request shares: the snapshot's rows, `this`, the
clock, the view's formulas and where each formula's text is in the base file. `RowScope`
is one row: its file, its formula values (`formulas.RowFormulas`: each formula once, cycles
refused), and errors raised inside a formula positioned in that formula's text.

An error is positioned once, where its expression is known: a statement's own errors by
the filter (views.py), a formula's by `RowScope.formula`. A positioned error is a
`ViewError` (an INVALID_QUERY that is not an `ExpressionError`), so the formulas that read
the failing one pass it up unchanged instead of re-anchoring it in their own text.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from vault_agent.errors import InvalidQuery
from vault_agent.query.bases.base_file import Source
from vault_agent.query.bases.budget import Budget
from vault_agent.query.bases.expr_errors import PREFIX, ExpressionError, Unsupported
from vault_agent.query.bases.formulas import FormulaSet, RowFormulas
from vault_agent.query.bases.rows import Needs, SnapshotRows
from vault_agent.query.bases.values import FileInfo, Value

MAX_FILE_INFOS = 10_000  # files looked up by path (`asFile()`, `file()`) kept per request


class ViewError(InvalidQuery):
    """An expression error positioned in the base file; `original` is the error itself."""

    def __init__(self, original: ExpressionError) -> None:
        message = original.message
        if isinstance(original, Unsupported):  # its reason names the construct only
            message = f"{PREFIX}: {original.reason} is not supported (at {original.where})"
        super().__init__(message)
        self.original = original


def locate(err: ExpressionError, source: Source) -> ViewError:
    """The error positioned in the file, at `source`'s place."""
    return ViewError(err.located(source.context, source.line, source.column))


@dataclass
class RunContext:
    """What the rows of one request share."""

    rows: SnapshotRows
    needs: Needs
    this: FileInfo | None
    now: dt.datetime
    formulas: FormulaSet
    formula_sources: Mapping[str, Source]
    _infos: dict[str, FileInfo | None] = field(default_factory=dict)
    _batch: dict[int, FileInfo] = field(default_factory=dict)  # the rows of the current batch

    def file_info(self, path: str) -> FileInfo | None:
        """Any file of the snapshot by path: a note or a `.base` file."""
        if path in self._infos:
            return self._infos[path]
        position = self.rows.position.get(path)
        info = self.rows.info(position, self.needs) if position is not None else self.rows.base_info(path)
        if len(self._infos) < MAX_FILE_INFOS:
            self._infos[path] = info
        return info

    def prefetch(self, positions: list[int]) -> None:
        """Read these notes' fields and properties at once (a page, a batch of rows to
        evaluate): the next `scope` calls for them gather nothing more."""
        store = self.rows.props.properties_many(positions)
        self._batch = dict(zip(positions, self.rows.infos(positions, self.needs, store), strict=True))

    def scope(self, position: int) -> RowScope:
        """The scope of the note at `position`."""
        info = self._batch.get(position)
        return RowScope(self, info if info is not None else self.rows.info(position, self.needs))


class RowScope:
    """One row's world (the `Scope` protocol)."""

    __slots__ = ("context", "file", "formulas")

    def __init__(self, context: RunContext, file: FileInfo) -> None:
        self.context = context
        self.file = file
        self.formulas = RowFormulas(context.formulas)

    @property
    def this(self) -> FileInfo | None:
        return self.context.this

    def now(self) -> dt.datetime:
        return self.context.now

    def formula(self, name: str, budget: Budget) -> Value:
        """The row's `formula.name`, errors positioned in that formula's text.

        Raises:
            ViewError: the formula (or one it reads) fails for this row.
        """
        try:
            return self.formulas.value(name, self, budget)
        except ExpressionError as err:
            source = self.context.formula_sources.get(name)
            if source is None:
                raise
            raise locate(err, source) from None

    def resolve_link(self, target: str, source: str) -> str | None:
        return self.context.rows.resolve(target, source)

    def file_info(self, path: str) -> FileInfo | None:
        return self.context.file_info(path)

    def backlinks(self, path: str) -> Sequence[str]:
        return self.context.rows.backlinks(path)
