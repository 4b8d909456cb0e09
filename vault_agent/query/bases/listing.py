"""The vault's bases and their views (`vault_base()`), and one base's (`vault_base(path)`).

Bases are listed by address: `.base` files by path, then ```` ```base ```` blocks as
`Note.md#N`, all in code-point order, a page at a time (`limit`, `cursor`). Each shows its
views (index, name, type, whether it runs; the first 100, `view_count` when there are
more) or, when the base cannot be read, why; a page ends early past 20,000 characters. A `.base`
file also shows how many notes embed it; one base described alone lists those notes
(with the view each embed names), up to MAX_EMBEDS.
"""

from __future__ import annotations

from vault_agent.errors import InvalidQuery
from vault_agent.paging import json_chars
from vault_agent.query.bases import sources
from vault_agent.query.bases.base_file import BaseSpec, parse_base
from vault_agent.query.bases.models import BaseData, BaseInfo, EmbedInfo, ViewInfo
from vault_agent.query.bases.rows import SnapshotRows
from vault_agent.query.bases.sources import BaseText
from vault_agent.query.bases.view_run import view_info
from vault_agent.query.snapshot import SnapshotReader, SnapshotView
from vault_agent.query.structured.request import decode_cursor, encode_cursor

MAX_EMBEDS = 50
MAX_VIEWS_SHOWN = 100  # views listed per base (a base may hold up to 1,000)
MAX_LISTING_CHARS = 20_000  # a page of bases ends early past this (next_cursor continues)
_LISTING = "bases-listing"  # the listing's cursor fingerprint (it has no parameters)


def _views(spec: BaseSpec) -> list[ViewInfo]:
    """The base's views, the first MAX_VIEWS_SHOWN (`view_count` says how many there are)."""
    return [view_info(v) for v in spec.views[:MAX_VIEWS_SHOWN]]


def _info(base: BaseText, embeds: list[sources.Embed] | None, detailed: bool) -> BaseInfo:
    views: list[ViewInfo] | None = None
    count: int | None = None
    error: str | None = None
    try:
        spec = parse_base(base.text, base.address)
    except InvalidQuery as err:
        error = err.message
    else:
        views = _views(spec)
        count = len(spec.views) if len(spec.views) > len(views) else None
    mine = sources.embeds_of(embeds, base.address) if embeds is not None and base.kind == "file" else None
    return BaseInfo(
        path=base.address,
        kind=base.kind,
        views=views,
        view_count=count,
        error=error,
        embeds=[EmbedInfo(note=e.note, view=e.view) for e in mine[:MAX_EMBEDS]]
        if mine and detailed
        else None,
        embed_count=len(mine) if mine is not None else None,
    )


def list_bases(
    reader: SnapshotReader, view: SnapshotView, rows: SnapshotRows, limit: int, cursor: str | None
) -> BaseData:
    """One page of the vault's bases with their views."""
    addresses: list[tuple[str, str | None, int]] = [(path, None, 0) for path in sorted(rows.bases)]
    for note in sources.notes_with_blocks(reader, view, rows):
        count = len(sources.note_blocks(view, note))
        addresses += [(f"{note}#{i}", note, i) for i in range(1, count + 1)]
    addresses.sort(key=lambda a: a[0])
    offset, _ = decode_cursor(cursor, _LISTING)
    chosen = addresses[offset : offset + limit]
    embeds = sources.embeds(view, rows) if any(note is None for _, note, _ in chosen) else []
    out: list[BaseInfo] = []
    size = 0
    for address, holder, number in chosen:
        if out and size > MAX_LISTING_CHARS:
            break
        if holder is None:
            try:
                text = sources.file_text(rows.index_dir, rows.bases[address])
            except InvalidQuery as err:
                out.append(BaseInfo(path=address, kind="file", error=err.message))
                continue
            out.append(_info(BaseText(address, "file", text, address), embeds, detailed=False))
        else:
            block = sources.note_blocks(view, holder)[number - 1]
            out.append(_info(BaseText(address, "block", block, holder), None, detailed=False))
        size += json_chars(out[-1].model_dump(mode="json"))
    end = offset + len(out)
    return BaseData(
        bases=out,
        total=len(addresses),
        next_cursor=encode_cursor(end, _LISTING, view.manifest.snapshot_id) if end < len(addresses) else None,
        indexFreshness=view.freshness,
    )


def describe_base(view: SnapshotView, rows: SnapshotRows, base: BaseText, spec: BaseSpec) -> BaseData:
    """One base: its views, and the notes embedding it."""
    embeds = sources.embeds(view, rows) if base.kind == "file" else None
    del spec  # parsed by the caller already (its errors raised there); _info lists its views
    return BaseData(base=_info(base, embeds, detailed=True), indexFreshness=view.freshness)


def describe_note(view: SnapshotView, rows: SnapshotRows, note: str) -> BaseData:
    """The bases a note shows: its ```` ```base ```` blocks, then the base files it embeds
    (with the view each embed names); run one with `this` = the note."""
    out: list[BaseInfo] = []
    for number, block in enumerate(sources.note_blocks(view, note), start=1):
        out.append(_info(BaseText(f"{note}#{number}", "block", block, note), None, detailed=False))
    mine = [e for e in sources.embeds(view, rows) if e.note == note]
    for path in dict.fromkeys(e.base for e in mine):
        try:
            text = sources.file_text(rows.index_dir, rows.bases[path])
        except InvalidQuery as err:
            out.append(BaseInfo(path=path, kind="file", error=err.message))
            continue
        info = _info(BaseText(path, "file", text, path), None, detailed=False)
        info.embeds = [EmbedInfo(note=note, view=e.view) for e in mine if e.base == path][:MAX_EMBEDS]
        out.append(info)
    return BaseData(bases=out, this=note, total=len(out), indexFreshness=view.freshness)
