"""Revert the writes of one conversation: every file or none, never over someone's edit.

`undo_conversation` plans each file (`undo_plan`: chain check, merge, diff) and, with
`apply`, refuses the whole undo when any file is a conflict. Otherwise it swaps every
file at once with the write tools' compare-and-swap (`files.batch_swap`): all files are
checked and staged first, then swapped in; a file saved by someone else during the swap
rolls back the ones already swapped. Either way one `undo` line records the outcome
(`done`, `rolled back` or `failed`, with the reason and each file's state), so a later dry
run tells the truth: restored files read `undone`, rolled-back ones are planned again.
The files undo changed go to the event log, so the index follows. Dry run by default.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from vault_agent.contracts import Outcome
from vault_agent.conversations.lines import CallLine, Line, UndoLine, UndoneFile
from vault_agent.conversations.records import UndoResult
from vault_agent.conversations.store import ConversationStore
from vault_agent.conversations.undo_plan import FilePlan, plan_undo
from vault_agent.errors import Conflict, NotFound, VaultAgentError
from vault_agent.files import events
from vault_agent.files.atomic import read_current, sha256_hex
from vault_agent.files.batch_swap import Change, SwapFailed, swap_all
from vault_agent.files.models import FilesContext
from vault_agent.paths import display

NOT_UNDOABLE_TOOLS = ("vault_move", "vault_delete", "vault_mkdir", "move", "delete", "create_folder")
SHOWN_IN_ERRORS = 5


def _not_undoable(lines: list[Line], written: set[str]) -> list[str]:
    """The calls undo cannot revert (moves, folder deletes, folder creation)."""
    return [
        f"{line.tool} {' -> '.join(line.paths)}"
        for line in lines
        if isinstance(line, CallLine)
        and line.tool in NOT_UNDOABLE_TOOLS
        and line.outcome == "OK"
        # A file delete is recorded as a write (with its bytes): undoable. Folder deletes are not.
        and not (line.tool in ("vault_delete", "delete") and set(line.paths) & written)
    ]


def _reader(ctx: FilesContext) -> Callable[[str], bytes | None]:
    def read_now(rel: str) -> bytes | None:
        try:
            dir_fd, leaf, canon = ctx.vault.open_parent(rel)
        except NotFound:
            return None
        try:
            return read_current(dir_fd, leaf, canon)
        finally:
            os.close(dir_fd)

    return read_now


def _refusal(plans: list[FilePlan]) -> Conflict:
    bad = [p.item for p in plans if p.item.status == "conflict"]
    shown = "; ".join(f"{display(i.path)}: {i.reason}" for i in bad[:SHOWN_IN_ERRORS])
    more = f"; and {len(bad) - SHOWN_IN_ERRORS} more" if len(bad) > SHOWN_IN_ERRORS else ""
    return Conflict(f"{len(bad)} file(s) cannot be undone, so nothing was undone ({shown}{more})")


def _record(
    store: ConversationStore,
    cid: str,
    outcome: str,
    reason: str | None,
    states: dict[str, str],
    plans: list[FilePlan],
) -> None:
    files = [
        UndoneFile(
            path=p.item.path,
            action=p.item.action,
            state=states.get(p.item.path, "untouched"),
            sha=sha256_hex(p.restored) if p.restored is not None else None,
        )
        for p in plans
        if p.item.status == "planned"
    ]
    store.append(cid, [UndoLine(at=time.time(), outcome=outcome, files=files, reason=reason)])


def undo_conversation(
    ctx: FilesContext,
    cid: str,
    *,
    apply: bool,
    merge: bool = False,
    before_swap: Callable[[], None] | None = None,
) -> Outcome[UndoResult]:
    """Plan (or, with `apply`, perform) the revert of conversation `cid`'s writes.

    `merge`: a file someone else also edited keeps those edits and loses only the
    agent's changes (a three-way merge) instead of being a conflict. `before_swap` runs
    between staging and swapping (tests stage their races there).

    Raises:
        NotFound: unknown id. Conflict (with `apply`): a file cannot be undone (see each
        file's reason in the dry run), or changed while undoing; nothing was undone.
    """
    store = ConversationStore(ctx.settings.index_dir)
    lines = store.read(cid)
    read_now = _reader(ctx)
    plans = plan_undo(store, cid, lines, read_now, merge_edits=merge, with_diffs=not apply)
    manual = _not_undoable(lines, {p.item.path for p in plans})
    result = UndoResult(
        conversation_id=cid,
        dry_run=not apply,
        merge=merge,
        files=[p.item for p in plans],
        not_undoable=manual,
    )
    if not apply:
        return Outcome(data=result)
    if any(p.item.status == "conflict" for p in plans):
        raise _refusal(plans)
    todo = [p for p in plans if p.item.status == "planned"]
    if not todo:
        return Outcome(data=result)  # every file is already undone: nothing to do, nothing to record
    with ctx.write_lock.hold():
        try:
            report = swap_all(
                ctx, [Change(p.item.path, p.now, p.restored) for p in todo], before_swap=before_swap
            )
        except SwapFailed as exc:
            states = {rel: "rolled back" for rel in exc.rolled_back} | {
                rel: "left restored" for rel in exc.left
            }
            outcome = "failed" if exc.left else "rolled back"
            _record(store, cid, outcome, f"'{display(exc.failed)}': {exc.message}", states, todo)
            raise Conflict(_swap_failure_message(exc)) from None
        except VaultAgentError as exc:  # while staging: no file changed
            _record(store, cid, "failed", exc.message, {}, todo)
            if isinstance(exc, Conflict):
                raise Conflict(
                    f"{exc.message}; nothing was undone. Run the dry run again to see each file"
                ) from None
            raise
        _record(store, cid, "done", None, dict.fromkeys(report.done, "restored"), todo)
    seq, warnings = events.record(
        ctx,
        [("delete", rel, None) if rel in report.trashed_to else ("upsert", rel, None) for rel in report.done],
    )
    _info, warnings = events.finish(ctx, seq, warnings, False)
    for p in todo:
        p.item.status = "done"
    return Outcome(data=result, warnings=list(warnings))


def _swap_failure_message(exc: SwapFailed) -> str:
    if exc.left:
        shown = ", ".join(display(r) for r in exc.left[:SHOWN_IN_ERRORS])
        return (
            f"{exc.message}, and {len(exc.left)} file(s) already undone could not be put back ({shown}); "
            "they stay undone. Run the dry run again to see each file"
        )
    return (
        f"{exc.message}; the {len(exc.rolled_back)} file(s) already undone were put back, so nothing "
        "was undone. Run the dry run again to see each file"
    )
