"""`vault_base`: list the vault's bases, describe one, or run one view as saved (SPEC "Bases").

A run, on one pinned snapshot: find the base (sources.py) and parse it (base_file.py),
pick the view (by name, or by index from 0), check everything it needs (views.py), then

1. filter: the global and the view's filters (AND) as masks over every note (vector.py);
   the notes the masks do not settle are evaluated by the interpreter, row by row;
2. order: `groupBy` first, then `sort`, then the path; from the columns when they settle
   every matched note's value, else from each row's value (wire_values.order_key);
3. `limit`, then groups (consecutive runs of one group value), the summaries of the rows
   shown (each group's and the view's), and one page of rows with their columns' values.

A value the interpreter cannot compute for a row (`"a" * 2`) is that row's error, not the
view's: a filter that fails on a row does not show the row, a column shows null, and one
warning counts them (`ROW_ERRORS`). Running out of the evaluation budget, a formula
circle or an unsupported construct met at run time refuses the whole view. The work of one
request is bounded (MAX_REQUEST_STEPS) as well as each row's (budget.Limits).
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
from collections.abc import Callable
from typing import Any

from vault_agent.contracts import Outcome, WarningItem
from vault_agent.errors import InvalidParameter
from vault_agent.query.bases import listing
from vault_agent.query.bases.base_file import BaseSpec, ViewSpec, parse_base
from vault_agent.query.bases.models import (
    LIMIT_DEFAULT,
    LIMIT_MAX,
    MAX_PATH_CHARS,
    MAX_VIEW_CHARS,
    BaseData,
    BaseRequest,
)
from vault_agent.query.bases.row_scope import RunContext
from vault_agent.query.bases.rows import SnapshotRows
from vault_agent.query.bases.sources import BaseText, base_file_text, block_text, name_target
from vault_agent.query.bases.vector import Vectors
from vault_agent.query.bases.view_run import Page, ViewRun
from vault_agent.query.bases.views import (
    CompiledView,
    compile_view,
)
from vault_agent.query.note_names import resolve_indexed
from vault_agent.query.snapshot import SnapshotReader, SnapshotView
from vault_agent.query.snapshot_cache import remember

Clock = Callable[[], dt.datetime]


def snapshot_rows(reader: SnapshotReader, view: SnapshotView, cache: dict[Any, Any] | None) -> SnapshotRows:
    """The snapshot's rows (kept per snapshot in the request cache)."""
    key = ("bases_rows", view.manifest.snapshot_id)
    if cache is not None and key in cache:
        found = cache[key]
        assert isinstance(found, SnapshotRows)
        return found
    rows = SnapshotRows(reader, view, cache)
    if cache is not None:
        remember(cache, "bases_rows", view.manifest.snapshot_id, rows)
    return rows


def parsed(text: str, source: str) -> BaseSpec:
    """`parse_base`, kept for the texts seen last (a base is parsed once per content).

    Raises:
        BaseFileError: as parse_base.
    """
    return _parsed(text, source)


@functools.lru_cache(maxsize=256)
def _parsed(text: str, source: str) -> BaseSpec:
    return parse_base(text, source)


@functools.lru_cache(maxsize=256)
def _compiled(text: str, source: str, index: int) -> CompiledView:
    """A view of a base checked once per content (a CompiledView is not changed by a run)."""
    spec = _parsed(text, source)
    return compile_view(spec, spec.views[index])


def pick_view(spec: BaseSpec, wanted: str | int) -> ViewSpec:
    """The view named `wanted` (exactly, else case-insensitively), or at index `wanted`.

    Raises:
        InvalidParameter: no such view.
    """
    views = spec.views
    if isinstance(wanted, int) or (isinstance(wanted, str) and wanted.strip().isdigit()):
        index = int(wanted)
        named = [v for v in views if v.name == str(wanted)]
        if named:
            return named[0]
        if 0 <= index < len(views):
            return views[index]
    else:
        exact = [v for v in views if v.name == wanted]
        folded = [v for v in views if v.name.casefold() == wanted.casefold()]
        if exact or folded:
            return (exact or folded)[0]
    names = ", ".join(f"{i}: {v.name}" for i, v in enumerate(views[:20]))
    raise InvalidParameter(
        f"parameter 'view': no view '{str(wanted)[:80]}' in {spec.source}; its views are {names}"
    )


def _check(request: BaseRequest) -> int:
    limit = LIMIT_DEFAULT if request.limit is None else request.limit
    if not 1 <= limit <= LIMIT_MAX:
        raise InvalidParameter(f"parameter 'limit' must be from 1 to {LIMIT_MAX}")
    for name, value in (("path", request.path), ("this", request.this), ("view", request.view)):
        if value is not None and len(str(value)) > (MAX_VIEW_CHARS if name == "view" else MAX_PATH_CHARS):
            raise InvalidParameter(f"parameter '{name}' is too long")
    if request.path is None and (request.view is not None or request.this is not None):
        raise InvalidParameter("parameters 'view' and 'this' need 'path' (the base)")
    return limit


def vault_base(
    reader: SnapshotReader,
    request: BaseRequest,
    *,
    cache: dict[Any, Any] | None = None,
    clock: Clock | None = None,
) -> Outcome[BaseData]:
    """The vault's bases (no path), one base's views (a path), or one view's rows (path and view).

    Raises:
        InvalidParameter: limit, cursor, a view that does not exist, view/this without path.
        NotFound: no such base, note or block. InvalidQuery: the base or the view cannot
            be read or run (named construct and place). IndexNotFound, IndexIncompatible.
    """
    limit = _check(request)
    with reader.acquire() as view:
        rows = snapshot_rows(reader, view, cache)
        warnings = [*view.warnings()]
        if request.path is None:
            data = listing.list_bases(reader, view, rows, limit, request.cursor)
            return Outcome(data=data, warnings=warnings, freshness=view.freshness)
        target = name_target(reader, view, rows, request.path)
        this_path, this_warning = _this_path(reader, view, rows, request.this)
        warnings += [w for w in (target.warning, this_warning) if w is not None]
        wanted = request.view if request.view is not None else target.view
        if target.kind == "note" and wanted is None:
            data = listing.describe_note(view, rows, target.path)
            return Outcome(data=data, warnings=warnings, freshness=view.freshness)
        if target.kind == "file":
            base = base_file_text(rows, target.path)
        else:
            base = block_text(view, target.path, target.number or 1)
        spec = parsed(base.text, base.address)
        if wanted is None:
            data = listing.describe_base(view, rows, base, spec)
            return Outcome(data=data, warnings=warnings, freshness=view.freshness)
        chosen = pick_view(spec, wanted)
        compiled = _compiled(base.text, base.address, chosen.index)
        now = (clock or dt.datetime.now)().replace(tzinfo=None)
        context = RunContext(rows, compiled.needs, None, now, compiled.formulas, compiled.formula_sources)
        context.this = context.file_info(this_path or base.this)
        page = Page(limit, request.cursor, _fingerprint(base, chosen, this_path), view.manifest.snapshot_id)
        data, more = ViewRun(context, compiled, Vectors(rows)).answer(base, page)
        data.index_freshness = view.freshness
        return Outcome(data=data, warnings=[*warnings, *more], freshness=view.freshness)


def _this_path(
    reader: SnapshotReader, view: SnapshotView, rows: SnapshotRows, raw: str | None
) -> tuple[str | None, WarningItem | None]:
    """The note (or `.base` file) the caller names as `this`, and how it was named.

    Raises:
        InvalidParameter: a `.base` file that is not in the index. NotFound, Ambiguous,
            InvalidPath: as names.resolve_name for a note.
    """
    if raw is None:
        return None, None
    text = raw.strip()
    if text.lower().endswith(".base"):
        found = rows.bases.get(text) or rows.bases.get(rows.resolve(text, "") or "")
        if found is None:
            raise InvalidParameter(f"parameter 'this': no base file '{text[:200]}' in the index")
        return found.path, None
    resolution = resolve_indexed(reader, view, raw, "base")
    return resolution.path, resolution.warning()


def _fingerprint(base: BaseText, chosen: ViewSpec, this: str | None) -> str:
    raw = f"{base.address}\x00{chosen.index}\x00{this or ''}\x00{base.text}"
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:16]
