"""Revert the writes of one conversation, all or nothing.

Per path, the first recorded write gives the bytes to restore (kept in `<id>.old/`, or
"none" when the agent created the file) and the last gives the sha256 the file must still
hold. Every path is checked before anything changes: one that changed since the agent
wrote it makes the whole undo a CONFLICT. Restores go through the write tools' own
pipeline (`files.pipeline.apply_change`, atomic, event appended so the index follows) with
`expected_sha256` as a last guard; a created file goes to the trash (`files.delete`).
Dry run by default.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable

from vault_agent.contracts import Outcome
from vault_agent.conversations.records import UndoItem, UndoResult
from vault_agent.conversations.store import ConversationStore, Line
from vault_agent.errors import Conflict, NotFound
from vault_agent.files.atomic import read_current
from vault_agent.files.delete import delete_path
from vault_agent.files.models import FilesContext
from vault_agent.files.pipeline import apply_change
from vault_agent.paths import display

NOT_UNDOABLE_TOOLS = ("vault_move", "vault_delete", "vault_mkdir", "move", "delete", "create_folder")


def _plan(lines: list[Line]) -> tuple[dict[str, tuple[Line, Line]], list[str]]:
    """Per path (first write, last write), and the calls undo cannot revert."""
    per_path: dict[str, tuple[Line, Line]] = {}
    for line in lines:
        if line.get("t") == "write":
            rel = str(line["path"])
            first = per_path.get(rel, (line, line))[0]
            per_path[rel] = (first, line)
    manual = [
        f"{line['tool']} {' -> '.join(_paths(line))}"
        for line in lines
        if line.get("t") == "call"
        and line.get("tool") in NOT_UNDOABLE_TOOLS
        and line.get("outcome") == "OK"
        # A file delete is recorded as a write (with its bytes): undoable. Folder deletes are not.
        and not (line.get("tool") in ("vault_delete", "delete") and set(_paths(line)) & set(per_path))
    ]
    return per_path, manual


def _paths(line: Line) -> list[str]:
    paths = line.get("paths")
    return [str(p) for p in paths] if isinstance(paths, list) else []


def _current_sha(ctx: FilesContext, rel: str) -> str | None:
    try:
        dir_fd, leaf, canon = ctx.vault.open_parent(rel)
    except NotFound:
        return None
    try:
        data = read_current(dir_fd, leaf, canon)
    finally:
        os.close(dir_fd)
    return hashlib.sha256(data).hexdigest() if data is not None else None


def _constant(data: bytes) -> Callable[[bytes | None], bytes]:
    return lambda _current: data


def undo_conversation(ctx: FilesContext, cid: str, *, apply: bool) -> Outcome[UndoResult]:
    """Plan (or, with `apply`, perform) the revert of conversation `cid`'s writes.

    Raises:
        NotFound: unknown id. Conflict (with `apply`): a file changed since the agent wrote
        it, or its old bytes are missing; nothing was changed.
    """
    store = ConversationStore(ctx.settings.index_dir)
    per_path, manual = _plan(store.read(cid))
    items: list[UndoItem] = []
    restores: dict[str, bytes | None] = {}
    for rel, (first, last) in per_path.items():
        old = None
        if first.get("before_sha") is not None:
            old = store.old_bytes(cid, str(first["before_sha"]))
        ok = _current_sha(ctx, rel) == last.get("after_sha") and (first.get("before_sha") is None or old is not None)
        action = "remove" if first.get("before_sha") is None else "restore"
        items.append(UndoItem(path=rel, action=action, status="planned" if ok else "conflict"))  # type: ignore[arg-type]
        restores[rel] = old
    conflicts = [i.path for i in items if i.status == "conflict"]
    if apply and conflicts:
        shown = ", ".join(display(p) for p in conflicts[:10])
        raise Conflict(
            f"{len(conflicts)} file(s) changed since the agent wrote them ({shown}); nothing was undone. "
            "Inspect them, then undo by hand"
        )
    if apply:
        by_path = {rel: last for rel, (_first, last) in per_path.items()}
        for item in items:
            old = restores[item.path]
            after = by_path[item.path].get("after_sha")
            if old is None:
                delete_path(ctx, item.path, expected_sha256=str(after))
            elif after is None:  # the agent deleted it: put it back where it was
                apply_change(ctx, "undo", item.path, _constant(old), exist="must_not_exist", create_parents=True)
            else:
                apply_change(ctx, "undo", item.path, _constant(old), exist="must_exist", expected_sha256=str(after))
            item.status = "done"
        store.append(cid, [{"t": "undo", "at": time.time(), "files": len(items)}])
    return Outcome(data=UndoResult(conversation_id=cid, dry_run=not apply, files=items, not_undoable=manual))
