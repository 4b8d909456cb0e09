"""vault_rename_tag: rename a tag and its nested children in every note, dry run by default.

`old` → `new` renames `old` and `old/…` (never `older`), case-insensitively, in the
frontmatter `tags`/`tag` values and the body's `#tags` (`vault_agent.tag_syntax` says
where tags are, and never finds them in code, comments, links or URLs); the rest of each
`old/x` keeps its spelling (`#Old/Child` → `#new/Child`). Only those characters change.

Plan: the candidate notes come from the snapshot (`candidates`, from the query layer);
each note's *current* bytes are read and planned. Apply: every planned note goes through
the write pipeline (`files.pipeline.apply_change`) with the sha256 of the bytes it was
planned from as its precondition, so a note that someone changed since is skipped and
named (`changed`), never overwritten; each write is recorded in the conversation like any
other (undoable). Renaming onto a tag that exists merges them; the answer says so.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass

from vault_agent.contracts import Outcome, WarningItem
from vault_agent.errors import Conflict, Forbidden, InvalidParameter, InvalidPath, NotFound, TooLarge
from vault_agent.files import events, policy
from vault_agent.files.atomic import read_current, sha256_hex
from vault_agent.files.diff import unified
from vault_agent.files.models import (
    RENAME_TAG_LIMIT_DEFAULT,
    RENAME_TAG_LIMIT_MAX,
    FilesContext,
    RenameTagResult,
    SkipReason,
    TagNoteChange,
    TagNoteSkipped,
    WriteOptions,
)
from vault_agent.files.pipeline import Change, apply_change
from vault_agent.tag_syntax import clean_tag, name_problem, prefix_length, scan_tags, tag_key

log = logging.getLogger("vault_agent.files")

TOOL = "vault_rename_tag"
MAX_NOTE_DIFF_CHARS = 2_000  # each listed note's diff
MAX_SKIPPED_LISTED = 50
MAX_MERGED_LISTED = 20

# The snapshot's candidate notes for a tag (a superset: each is checked on its bytes).
Candidates = Callable[[str], Outcome[list[str]]]


@dataclass
class NotePlan:
    rel: str
    before: bytes
    after: bytes
    frontmatter: int
    inline: int


@dataclass
class TagRename:
    """One rename, validated: `old` → `new`, and how `old` and its children are matched."""

    old: str
    new: str
    old_key: str
    old_levels: int

    def renamed(self, name: str) -> str | None:
        cut = prefix_length(name, self.old_key, self.old_levels)
        return None if cut is None else self.new + name[cut:]


def tag_rename(old: str, new: str) -> TagRename:
    """The validated tag names.

    Raises:
        InvalidParameter: a name that is not a valid Obsidian tag, or old equal to new.
    """
    old_name, new_name = clean_tag(old), clean_tag(new)
    for label, name in (("old", old_name), ("new", new_name)):
        problem = name_problem(name)
        if problem is not None:
            raise InvalidParameter(f"{label} cannot be a tag name: it {problem}")
    if old_name == new_name:
        raise InvalidParameter("new is the same tag as old; nothing to rename")
    return TagRename(old_name, new_name, tag_key(old_name), old_name.count("/") + 1)


def _read(ctx: FilesContext, rel: str) -> bytes | SkipReason:
    """A note's current bytes (no symlinks followed), or why it is skipped."""
    try:
        policy.check_write(ctx.vault, rel, "edit")
    except (Forbidden, InvalidPath):
        return "forbidden"
    try:
        fd, leaf, canon = ctx.vault.open_parent(rel, create=False)
    except (NotFound, InvalidPath, OSError):
        return "missing"
    try:
        data = read_current(fd, leaf, canon)
    except TooLarge:
        return "too_large"
    except (InvalidPath, OSError):
        return "missing"
    finally:
        os.close(fd)
    return "missing" if data is None else data


def plan_note(text: str, rename: TagRename) -> tuple[str, int, int] | None:
    """(new text, frontmatter renames, body renames) of one note; None when its body is too
    deeply nested to parse (its tags cannot be told from its text)."""
    scan = scan_tags(text)
    if not scan.body_read:
        return None
    edits: list[tuple[int, int, str]] = []
    counts = {"frontmatter": 0, "body": 0}
    for span in scan.spans:
        new_name = rename.renamed(span.name)
        if new_name is not None:
            edits.append((span.start, span.end, new_name))
            counts[span.where] += 1
    for start, end, new_name in sorted(edits, reverse=True):
        text = text[:start] + new_name + text[end:]
    return text, counts["frontmatter"], counts["body"]


def _plan(
    ctx: FilesContext, rels: list[str], rename: TagRename
) -> tuple[list[NotePlan], list[TagNoteSkipped]]:
    plans: list[NotePlan] = []
    skipped: list[TagNoteSkipped] = []
    for rel in sorted(set(rels)):
        data = _read(ctx, rel)
        if isinstance(data, str):
            skipped.append(TagNoteSkipped(path=rel, reason=data))
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            skipped.append(TagNoteSkipped(path=rel, reason="not_utf8"))
            continue
        planned = plan_note(text, rename)
        if planned is None:
            skipped.append(TagNoteSkipped(path=rel, reason="too_nested"))
            continue
        new_text, in_fm, in_body = planned
        if new_text != text:
            plans.append(NotePlan(rel, data, new_text.encode("utf-8"), in_fm, in_body))
    return plans, skipped


def _existing(ctx: FilesContext, rels: list[str], rename: TagRename, plans: list[NotePlan]) -> set[str]:
    """Keys of the tags (the new name or its children) that notes hold already."""
    new_key = tag_key(rename.new)
    levels = rename.new.count("/") + 1
    texts = {p.rel: p.before for p in plans}
    found: set[str] = set()
    for rel in sorted(set(rels) | set(texts)):
        data = texts.get(rel)
        if data is None:
            read = _read(ctx, rel)
            if isinstance(read, str):
                continue
            data = read
        text = data.decode("utf-8", errors="replace")
        for span in scan_tags(text).spans:
            if prefix_length(span.name, new_key, levels) is not None:
                found.add(tag_key(span.name))
    return found


def _merged(ctx: FilesContext, rename: TagRename, plans: list[NotePlan], candidates: Candidates) -> list[str]:
    """The renamed tags that exist already (a case-only rename merges nothing)."""
    if tag_key(rename.old) == tag_key(rename.new) or not plans:
        return []
    existing = _existing(ctx, candidates(rename.new).data, rename, plans)
    produced: set[str] = set()
    for plan in plans:
        for span in scan_tags(plan.before.decode("utf-8")).spans:
            new_name = rename.renamed(span.name)
            if new_name is not None:
                produced.add(tag_key(new_name))
    return sorted(produced & existing)


def _diff(rel: str, before: bytes, after: bytes) -> tuple[str, bool]:
    text, truncated = unified(rel, before, after)
    if len(text) <= MAX_NOTE_DIFF_CHARS:
        return text, truncated
    cut = text.rfind("\n", 0, MAX_NOTE_DIFF_CHARS) + 1
    return text[:cut], True


def _change(plan: NotePlan) -> TagNoteChange:
    diff, truncated = _diff(plan.rel, plan.before, plan.after)
    return TagNoteChange(
        path=plan.rel,
        occurrences=plan.frontmatter + plan.inline,
        frontmatter=plan.frontmatter,
        inline=plan.inline,
        sha256_before=sha256_hex(plan.before),
        sha256=sha256_hex(plan.after),
        diff=diff,
        diff_truncated=truncated,
    )


def _apply(
    ctx: FilesContext, plans: list[NotePlan]
) -> tuple[list[NotePlan], list[TagNoteSkipped], int | None]:
    """Write each planned note through the pipeline; (written, skipped, last event seq)."""
    written: list[NotePlan] = []
    skipped: list[TagNoteSkipped] = []
    seq: int | None = None
    for plan in plans:

        def planned(_current: bytes | None, after: bytes = plan.after) -> bytes:
            return after  # the precondition below guarantees _current is what was planned

        try:
            guarded = WriteOptions(expected_sha256=sha256_hex(plan.before))
            applied = apply_change(ctx, Change(TOOL, plan.rel, "must_exist", guarded), planned)
        except Conflict:
            skipped.append(TagNoteSkipped(path=plan.rel, reason="changed"))
            continue
        except (NotFound, InvalidPath):
            skipped.append(TagNoteSkipped(path=plan.rel, reason="missing"))
            continue
        except OSError:  # moved or deleted while it was written: nothing was replaced
            skipped.append(TagNoteSkipped(path=plan.rel, reason="changed"))
            continue
        written.append(plan)
        if applied.info.event_seq is not None:
            seq = applied.info.event_seq
    return written, skipped, seq


def _cursor(cursor: str | None) -> int:
    if cursor is None or cursor == "":
        return 0
    if not cursor.isdigit():
        raise InvalidParameter("cursor must be the next_cursor of a previous answer")
    return int(cursor)


@dataclass(frozen=True)
class RenameTagRequest:
    """vault_rename_tag's parameters: the tag and its new name, whether to write (else a dry
    run listing `limit` notes from `cursor`), whether to wait for the index."""

    old: str
    new: str
    apply: bool = False
    limit: int | None = None
    cursor: str | None = None
    wait_for_index: bool = False


def rename_tag(
    ctx: FilesContext, request: RenameTagRequest, candidates: Candidates
) -> Outcome[RenameTagResult]:
    """Plan (dry run) or apply the rename of tag `old` (and `old/…`) to `new`.

    Raises:
        InvalidParameter: an invalid tag name, old equal to new, limit outside 1–50, a bad cursor.
        IndexNotFound, IndexIncompatible: no usable snapshot to find the candidate notes.
    """
    rename = tag_rename(request.old, request.new)
    apply = request.apply
    size = RENAME_TAG_LIMIT_DEFAULT if request.limit is None else request.limit
    if not 1 <= size <= RENAME_TAG_LIMIT_MAX:
        raise InvalidParameter(f"limit must be an integer from 1 to {RENAME_TAG_LIMIT_MAX}")
    start = _cursor(request.cursor)
    found = candidates(rename.old)
    plans, skipped = _plan(ctx, found.data, rename)
    log.info("rename-tag planned notes=%d skipped=%d", len(plans), len(skipped))
    merged = _merged(ctx, rename, plans, candidates)
    warnings: list[WarningItem] = list(found.warnings)
    seq: int | None = None
    if apply:
        plans, conflicts, seq = _apply(ctx, plans)
        skipped = sorted(skipped + conflicts, key=lambda s: s.path)
        start = 0
    if merged:
        shown = ", ".join("#" + t for t in merged[:5]) + (", …" if len(merged) > 5 else "")
        warnings.append(
            WarningItem(
                code="TAG_MERGED",
                message=f"{shown}: already in use, so the renamed tags {'were merged' if apply else 'would merge'} "
                "with the existing ones (one tag afterwards)",
            )
        )
    if any(s.reason == "changed" for s in skipped):
        warnings.append(
            WarningItem(
                code="NOTES_SKIPPED",
                message="some notes changed after they were planned and were left as they are; "
                "run the rename again to include them",
            )
        )
    info, more = events.finish(ctx, seq, [], request.wait_for_index) if apply else (None, [])
    page = plans[start : start + size]
    end = start + len(page)
    data = RenameTagResult(
        old_tag=rename.old,
        new_tag=rename.new,
        dry_run=not apply,
        notes_total=len(plans),
        occurrences_total=sum(p.frontmatter + p.inline for p in plans),
        notes=[_change(p) for p in page],
        next_cursor=str(end) if not apply and end < len(plans) else None,
        truncated=len(plans) > len(page),
        merged=bool(merged),
        merged_tags=merged[:MAX_MERGED_LISTED],
        skipped_total=len(skipped),
        skipped=skipped[:MAX_SKIPPED_LISTED],
        index_freshness=found.freshness or "unknown",
        **(info.model_dump() if info is not None else {}),
    )
    return Outcome(data=data, warnings=warnings + more, freshness=found.freshness)
