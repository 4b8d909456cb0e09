"""A note on the page (`/ui/note`): its outline, then one section rendered as Markdown.

`?path=` names the note; `?section=` (a heading id), `?heading=` (a heading's text, from a
wikilink) or `?line=` (a search hit) the section, else a short note is shown whole and a
long one from its top (`web.sections`). The text is read through the `read` operation
under 20,000 characters, with "Read on" for the rest, and rendered by `web.note_render`
(frontmatter as a properties table, `web.properties`); `?view=source` shows the same lines
as written, numbered. `?q=` marks the words the search matched (`query.match_terms`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from vault_agent.api.invoke import body_of, invoke
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import explore, notes
from vault_agent.errors import InvalidParameter, TooLarge
from vault_agent.linkpaths import LinkResolver
from vault_agent.query.match_terms import query_stems
from vault_agent.query.related import path_index
from vault_agent.web.note_render import NoteLinks, render_markdown
from vault_agent.web.page import Page
from vault_agent.web.properties import properties, split_frontmatter
from vault_agent.web.sections import SectionPlace, SectionSpan, read_lines, read_section, section_span
from vault_agent.web.session import Session

LINK_MARKS = ("[[", "](", "]:")  # a text without them needs no link resolver


def whole_number(value: str | None, name: str) -> int | None:
    """A query parameter that must be a whole number (or absent).

    Raises:
        InvalidParameter: not digits, or absurdly long.
    """
    if value is None or value == "":
        return None
    if not value.isdigit() or len(value) > 9:
        raise InvalidParameter(f"parameter '{name}' must be a whole number")
    return int(value)


@dataclass(frozen=True)
class NoteRequest:
    """What the note view was asked for (its query parameters, checked)."""

    path: str
    place: SectionPlace
    at: int | None = None  # "Read on": the line to go on from
    char: int | None = None  # ... and the character in it
    q: str = ""  # the search that led here (kept in the section's links)
    stems: frozenset[str] = frozenset()  # the words it matched
    source: bool = False  # the lines as written, numbered


def note_address(path: str, span: SectionSpan | None, q: str = "", **more: Any) -> str:
    """The page address of a note's section (`more`: `view`, `at`, `char`), `#section` included."""
    params: list[tuple[str, Any]] = [("path", path)]
    if span is not None:
        params.append(("section", span.heading_id or ""))
    params += [(k, v) for k, v in more.items() if v]
    if q:
        params.append(("q", q))
    return "/ui/note?" + urlencode(params) + "#section"


def addresses(path: str, span: SectionSpan | None, read: dict[str, Any], want: NoteRequest) -> dict[str, str]:
    """Where the section's links go: the other view of it (rendered / source) and "Read on"."""
    data = read["data"]
    here = {"at": want.at, "char": want.char}
    out = {
        "source": note_address(path, span, want.q, view="source", **here),
        "rendered": note_address(path, span, want.q, **here),
    }
    step = data.get("next_offset") or {}
    if data.get("truncated") and data.get("truncated_reason") != "range_end" and step.get("start_line"):
        view = "source" if want.source or span is None else None
        out["more"] = note_address(
            path, span, want.q, view=view, at=step["start_line"], char=step.get("start_char")
        )
    return out


def _resolver(ctx: AppContext) -> LinkResolver:
    with ctx.reader.acquire() as view:
        return path_index(view, ctx.snapshot_cache)


def shown(
    ctx: AppContext, path: str, read: dict[str, Any], stems: frozenset[str], source: bool
) -> dict[str, Any]:
    """What the section shows: its lines as written (numbered), or rendered, with the
    frontmatter (when the text starts with it) as properties."""
    data = read["data"]
    text: str = data["text"]
    first = int(data["applied_range"]["start_line"])
    if source:  # a text ending in a newline has no line after it
        lines = text.removesuffix("\n").split("\n")
        return {"lines": list(enumerate(lines, start=first)), "rendered": None, "properties": None}
    block, body = split_frontmatter(text)[:2] if first == 1 and not data.get("start_char") else (None, text)
    resolver = _resolver(ctx) if any(mark in body for mark in LINK_MARKS) else LinkResolver([])
    return {
        "lines": None,
        "rendered": render_markdown(body, NoteLinks(path, resolver, stems)),
        "properties": properties(block) if block is not None else None,
    }


def _note(page: Page, want: NoteRequest) -> dict[str, Any]:
    ctx = page.ctx
    outline_op = notes.GET_NOTE_OUTLINE
    outline: dict[str, Any] | None = None
    span: SectionSpan | None = None
    try:
        outline = body_of(outline_op, invoke(outline_op, ctx, {"path": want.path}))
    except TooLarge as exc:  # no outline: read it in pages of lines, as written
        too_large: str | None = exc.message
        path = want.path
        read = body_of(explore.READ, read_lines(ctx, path, want.at, want.char))
    else:
        assert outline is not None
        too_large, path = None, outline["path"]
        span = section_span(ctx, path, want.place)
        read = body_of(explore.READ, read_section(ctx, span, want.at, want.char))
    return {
        "outline": outline,
        "too_large": too_large,
        "span": span,
        "read": read,
        "path": path,
        "title": (outline or {}).get("title") or path,
        "links": addresses(path, span, read, want),
        **shown(ctx, path, read, want.stems, want.source or span is None),
    }


async def note(page: Page, request: web.Request, session: Session) -> web.StreamResponse:
    q = request.query
    path = q.get("path", "")
    if not path:
        raise InvalidParameter("missing required parameter 'path'")
    query = q.get("q", "")
    want = NoteRequest(
        path=path,
        place=SectionPlace(
            heading_id=q.get("section") or None,
            heading=q.get("heading") or None,
            line=whole_number(q.get("line"), "line"),
        ),
        at=whole_number(q.get("at"), "at"),
        char=whole_number(q.get("char"), "char"),
        q=query,
        stems=query_stems(query),
        source=q.get("view") == "source",
    )
    values = await page.call(_note, page, want)
    return page.page_html(
        request,
        session,
        "note.html",
        view="search",
        parts=("section",),
        q=query,
        stems=want.stems,
        source=want.source or values["span"] is None,  # a note without an outline: as written
        **values,
    )
