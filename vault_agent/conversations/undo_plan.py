"""What undoing a conversation would do to each file it wrote, and why not where it cannot.

Per file, the record's `write` lines form a chain. The first write's `before_sha` is the
file before the agent (its bytes are kept in `<id>.old/`, none when the agent created
it); after that, each write's `before_sha` must equal the previous write's `after_sha`,
and the file now must hold the last `after_sha`. A link that does not hold means someone
else changed the file between two of the agent's writes, or after the last one: restoring
the old bytes would throw that edit away, so the file is a `conflict` whose reason names
the writes around the gap. With `merge`, the agent's writes are taken out one by one,
newest first, by a three-way merge (`merge.merge`: base = the file right after that write,
mine = the file as it is, theirs = the file right before that write), which keeps every
other edit; a hunk that cannot merge cleanly makes the file a conflict, never a guess.

A file that already holds what undo would put there is `undone` (after an earlier undo,
or the agent's writes cancelled out). Each planned file carries a bounded unified diff
from the file now to the file undo would leave, for the person to look at before
`--apply`; diffs are never logged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from vault_agent.conversations.lines import Line, UndoLine, WriteLine
from vault_agent.conversations.merge import changed_lines, merge
from vault_agent.conversations.records import UndoAction, UndoItem, UndoStatus
from vault_agent.conversations.store import ConversationStore, iso
from vault_agent.files.diff import unified

DIFF_CHARS_PER_FILE = 20_000
DIFF_CHARS_TOTAL = 100_000  # every file's diff together: a dry run stays readable
MERGE_HINT = "; 'undo --merge' takes out only the agent's changes and keeps the other edits"


@dataclass
class FilePlan:
    item: UndoItem
    now: bytes | None  # the file's bytes when planned (None: absent): what apply must find
    restored: bytes | None  # what undo leaves (None: the file goes to the trash)


def _sha(data: bytes | None) -> str | None:
    return hashlib.sha256(data).hexdigest() if data is not None else None


def _at(line: Line) -> str:
    return iso(line.at)


def writes_per_file(lines: list[Line]) -> dict[str, list[WriteLine]]:
    """The write lines of each path, in record order."""
    out: dict[str, list[WriteLine]] = {}
    for line in lines:
        if isinstance(line, WriteLine):
            out.setdefault(line.path, []).append(line)
    return out


def undone_marks(lines: list[Line]) -> dict[str, str]:
    """Per path, when an earlier undo restored it and the agent has not written it since
    (undo lines with per-file outcomes; older records count files only and cannot say)."""
    marks: dict[str, str] = {}
    for line in lines:
        match line:
            case WriteLine(path=path):
                marks.pop(path, None)
            case UndoLine(files=list(files)):
                marks.update((f.path, _at(line)) for f in files if f.state == "restored")
    return marks


def chain_gaps(writes: list[WriteLine], sha_now: str | None) -> list[str]:
    """Where someone else changed the file: one sentence per broken link of the chain."""
    gaps = [
        f"changed by someone else between the agent's writes at {_at(prev)} and {_at(nxt)}"
        for prev, nxt in zip(writes, writes[1:], strict=False)
        if nxt.before_sha != prev.after_sha
    ]
    last = writes[-1]
    if sha_now != last.after_sha:
        what = "deleted it" if last.after_sha is None else "wrote it"
        gaps.append(f"changed by someone else after the agent last {what} at {_at(last)}")
    return gaps


def _gap_reason(gaps: list[str]) -> str:
    shown = "; ".join(gaps[:3])
    more = f" (and {len(gaps) - 3} more times)" if len(gaps) > 3 else ""
    return shown + more


def merge_out(
    store: ConversationStore, cid: str, writes: list[WriteLine], now: bytes | None
) -> tuple[bytes | None, str]:
    """The file now without the agent's writes (newest first), or (None, why not)."""
    if now is None or any(w.before_sha is None or w.after_sha is None for w in writes):
        return None, (
            "the agent created or deleted it and someone else changed it too, so there is no "
            "version to merge into; restore it by hand"
        )
    text = now
    for w in reversed(writes):
        after_sha, before_sha = str(w.after_sha), str(w.before_sha)
        after = now if _sha(now) == after_sha else store.old_bytes(cid, after_sha)
        before = store.old_bytes(cid, before_sha)
        if after is None or before is None:
            return None, (
                f"the agent's own result of its write at {_at(w)} was not kept (recorded by an "
                "older version), so its changes cannot be told apart from the other edits"
            )
        merged = merge(after, text, before)
        if merged is None:
            return None, (
                f"the agent's write at {_at(w)} and someone else's edit changed the same lines; "
                "resolve it by hand"
            )
        text = merged
    return text, ""


def _kept(target: bytes, merged: bytes) -> str:
    added, removed = changed_lines(target, merged)
    if not added and not removed:
        return "no edit by someone else is left once the agent's changes are out"
    return f"kept the edits made by someone else: {added} line(s) added, {removed} removed"


def plan_file(
    store: ConversationStore,
    cid: str,
    rel: str,
    writes: list[WriteLine],
    now: bytes | None,
    marks: dict[str, str],
    merge_edits: bool,
) -> FilePlan:
    """The plan of one file (see the module docstring)."""
    first_before = writes[0].before_sha
    action: UndoAction = "remove" if first_before is None else "restore"
    target = None if first_before is None else store.old_bytes(cid, first_before)

    def result(
        status: UndoStatus,
        restored: bytes | None = None,
        *,
        reason: str | None,
        kept: str | None = None,
        merged: bool = False,
    ) -> FilePlan:
        item = UndoItem(
            path=rel, action="merge" if merged else action, status=status, reason=reason, kept=kept
        )
        return FilePlan(item, now, restored)

    if first_before is not None and target is None:
        return result(
            "conflict",
            reason=f"the bytes from before the agent's first write at {_at(writes[0])} "
            "were not kept; restore it by hand",
        )
    if rel in marks:
        changed = "" if now == target else ", and it changed since"
        return result("undone", reason=f"undone at {marks[rel]}{changed}")
    if now is None and target is None:  # the agent created it, and it is gone: moved or deleted since
        return result(
            "conflict",
            reason=f"it no longer exists where the agent created it at {_at(writes[0])} "
            "(moved or deleted since); find it and remove it by hand",
        )
    if now == target:
        return result("undone", reason="it already holds what it held before the agent's first write")
    gaps = chain_gaps(writes, _sha(now))
    if not gaps:
        return result("planned", target, reason=None)
    if not merge_edits:
        return result("conflict", reason=_gap_reason(gaps) + MERGE_HINT)
    merged, why = merge_out(store, cid, writes, now)
    if merged is None or target is None:
        return result("conflict", reason=f"{_gap_reason(gaps)}; cannot merge: {why}")
    return result("planned", merged, reason=_gap_reason(gaps), kept=_kept(target, merged), merged=True)


def plan_undo(
    store: ConversationStore,
    cid: str,
    lines: list[Line],
    read_now: Callable[[str], bytes | None],
    *,
    merge_edits: bool,
    with_diffs: bool,
) -> list[FilePlan]:
    """The plan of every file the conversation wrote, in the order first written."""
    marks = undone_marks(lines)
    plans = [
        plan_file(store, cid, rel, writes, read_now(rel), marks, merge_edits)
        for rel, writes in writes_per_file(lines).items()
    ]
    if with_diffs:
        budget = DIFF_CHARS_TOTAL
        for plan in plans:
            if plan.item.status != "planned":
                continue
            cap = min(DIFF_CHARS_PER_FILE, budget)
            diff, cut = unified(plan.item.path, plan.now, plan.restored, max_chars=cap)
            plan.item.diff, plan.item.diff_truncated = diff, cut
            budget -= len(diff)
    return plans
