"""What each write of a conversation changed: a unified diff from the bytes before to the
bytes after, both kept by the record (`<id>.old/<sha256>`, content-addressed).

The web page shows one under each `write` entry. Diffs are bounded like undo's dry run
(`DIFF_CHARS_PER_WRITE` each, `DIFF_CHARS_PER_PAGE` for every write of one page of
entries) and never logged. A write whose bytes were not kept (recorded by an older
version, or removed by retention) says so instead of guessing.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from vault_agent.conversations.store import ConversationStore
from vault_agent.files.diff import unified

DIFF_CHARS_PER_WRITE = 20_000
DIFF_CHARS_PER_PAGE = 100_000


class WriteDiff(BaseModel):
    diff: str | None  # None: not shown (see `missing`)
    truncated: bool = False
    missing: str | None = None  # why there is no diff


def _side(store: ConversationStore, cid: str, sha: object) -> tuple[bytes | None, bool]:
    """(bytes, known): None with known=True is an absent file (created or deleted)."""
    if sha is None:
        return None, True
    data = store.old_bytes(cid, str(sha))
    return data, data is not None


def write_diffs(store: ConversationStore, cid: str, entries: list[dict[str, Any]]) -> dict[int, WriteDiff]:
    """Index in `entries` → the diff of that `write` entry (get_conversation's entries)."""
    out: dict[int, WriteDiff] = {}
    budget = DIFF_CHARS_PER_PAGE
    for i, entry in enumerate(entries):
        if entry.get("type") != "write" or not isinstance(entry.get("path"), str):
            continue
        before, known_before = _side(store, cid, entry.get("before_sha"))
        after, known_after = _side(store, cid, entry.get("after_sha"))
        if not (known_before and known_after):
            out[i] = WriteDiff(
                diff=None,
                missing="the bytes of this write were not kept (an older record, "
                "or removed with the conversation's old bytes)",
            )
            continue
        if budget <= 0:
            out[i] = WriteDiff(
                diff=None, missing="not shown: this page already shows the most diff text it may"
            )
            continue
        text, cut = unified(entry["path"], before, after, max_chars=min(DIFF_CHARS_PER_WRITE, budget))
        budget -= len(text)
        out[i] = WriteDiff(diff=text, truncated=cut)
    return out
