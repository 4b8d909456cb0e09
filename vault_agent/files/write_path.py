"""The one path every content write takes before the pipeline: normalise the caller's path,
apply the write policy for the action, validate the new text, run the change, diff it.

`content.py` (create, write, put, replace) and `edit.py` (the three edit forms) only say what
the change is: whole new bytes (`write_content`) or an edit of the current text that counts
what it did (`edit_text`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from vault_agent.files import policy
from vault_agent.files.diff import unified
from vault_agent.files.models import FilesContext, WriteOptions
from vault_agent.files.pipeline import Applied, Change, Transform, apply_change, decode_text, encode_content
from vault_agent.files.policy import Action

# An edit of a note's text: (current text, its vault path) → (new text, how many it changed).
TextEdit = Callable[[str, str], tuple[str, int]]


def write_content(
    ctx: FilesContext,
    change: Change,
    action: Action,
    content: str,
    combine: Callable[[bytes | None, bytes], bytes],
) -> tuple[Applied, int]:
    """Write `content` (combined with the current bytes by `combine`) as `change` says, under
    the policy for `action`; the change and the bytes the caller sent.

    Raises:
        Forbidden / InvalidPath / TooLarge / Conflict / NotFound: policy, content, pipeline.
    """
    policy.check_write(ctx.vault, change.rel, action)
    data = encode_content(content)
    transform: Transform = lambda current: combine(current, data)  # noqa: E731
    return apply_change(ctx, change, transform), len(data)


def edit_text(
    ctx: FilesContext,
    tool: str,
    rel: str,
    action: Action,
    edit: TextEdit,
    options: WriteOptions,
    *,
    texts: Sequence[tuple[str | None, str]] = (),
) -> tuple[Applied, int]:
    """Apply `edit` to the existing text file `rel` under the policy for `action`, after
    checking each given new text (`texts`: value, parameter name); the change and the count
    the edit returned.

    Raises:
        Forbidden / InvalidPath / TooLarge / Conflict / NotFound: policy, texts, edit, pipeline.
    """
    policy.check_write(ctx.vault, rel, action)
    for text, name in texts:
        if text is not None:
            encode_content(text, name)
    counted: list[int] = []

    def transform(current: bytes | None) -> bytes:
        assert current is not None  # exist="must_exist"
        out, count = edit(decode_text(current, rel), rel)
        counted.append(count)
        return out.encode("utf-8")

    applied = apply_change(ctx, Change(tool, rel, "must_exist", options), transform)
    return applied, counted[-1]


def change_diff(applied: Applied, wanted: bool) -> tuple[str | None, bool]:
    """The change's unified diff and whether it was cut, when `wanted`."""
    return unified(applied.rel, applied.before, applied.after) if wanted else (None, False)
