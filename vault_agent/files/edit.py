"""vault_edit (seed 003 edit_file): one targeted edit per call, answered with its diff.

Forms (exactly one per call):
- search/replace: `old_text` (non-empty) → `new_text`; `old_text` must occur exactly once
  unless `replace_all`; absent → CONFLICT (the file no longer holds what the agent read);
- insert: `content` after line N (`insert_after_line`, 0 = top) or before line N
  (`insert_before_line`, len+1 = end); a missing final newline is added to `content`;
- delete: `delete_lines: {start_line, end_line}`, 1-based inclusive.
Lines are split on '\n' only (the same numbering as vault_read); a CRLF file keeps CRLF:
inserted lines get '\r\n' and an `old_text` written with '\n' matches its '\r\n' form.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from vault_agent.contracts import Outcome
from vault_agent.errors import Conflict, InvalidParameter
from vault_agent.files.diff import unified
from vault_agent.files.models import EditResult, FilesContext, WriteOptions
from vault_agent.files.write_path import edit_text
from vault_agent.paths import display, normalize_rel_path

Form = Literal["replace", "insert", "delete_lines"]


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split on '\n' only ('' → no lines)."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


@dataclass(frozen=True)
class EditRequest:
    """vault_edit's parameters: the file, one edit form's fields (see the module doc), the
    write options, and the tool named in the conversation record (vault_edit, edit_file)."""

    path: str
    old_text: str | None = None
    new_text: str | None = None
    replace_all: bool | None = None
    insert_after_line: int | None = None
    insert_before_line: int | None = None
    content: str | None = None
    delete_lines: tuple[int, int] | None = None
    options: WriteOptions = field(default_factory=WriteOptions)
    tool: str = "vault_edit"


def _form(request: EditRequest) -> Form:
    old_text, new_text, content = request.old_text, request.new_text, request.content
    insert_after_line, insert_before_line = request.insert_after_line, request.insert_before_line
    forms: list[Form] = []
    if old_text is not None or new_text is not None or request.replace_all is not None:
        forms.append("replace")
    if insert_after_line is not None or insert_before_line is not None or content is not None:
        forms.append("insert")
    if request.delete_lines is not None:
        forms.append("delete_lines")
    if len(forms) != 1:
        raise InvalidParameter.naming(
            "give exactly one edit form: {old_text} and {new_text} (with {replace_all}), or "
            "{insert_after_line} or {insert_before_line} with {content}, or {delete_lines}"
        )
    form = forms[0]
    if form == "replace":
        if old_text is None or new_text is None:
            raise InvalidParameter.naming("a search/replace edit needs both {old_text} and {new_text}")
        if old_text == "":
            raise InvalidParameter.naming(
                "{old_text:lead} must not be empty; use {insert_after_line} to add text"
            )
    elif form == "insert":
        if (insert_after_line is None) == (insert_before_line is None):
            raise InvalidParameter.naming(
                "an insert needs exactly one of {insert_after_line} or {insert_before_line}"
            )
        if content is None:
            raise InvalidParameter.naming("an insert needs {content}")
    return form


def _replace(text: str, rel: str, old: str, new: str, replace_all: bool) -> tuple[str, int]:
    count = text.count(old)
    if count == 0 and "\r\n" in text and "\n" in old and "\r\n" not in old:
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        count = text.count(old)
    if count == 0:
        raise Conflict(
            f"old_text was not found in '{display(rel)}'; read the file again and copy the text exactly"
        )
    if count > 1 and not replace_all:
        raise Conflict(
            f"old_text occurs {count} times in '{display(rel)}'; add surrounding text to make it unique "
            "or pass replace_all: true"
        )
    return (text.replace(old, new) if replace_all else text.replace(old, new, 1)), count if replace_all else 1


def _insert(
    text: str, rel: str, index_after: int | None, index_before: int | None, content: str
) -> tuple[str, int]:
    lines = split_lines(text)
    eol = "\r\n" if "\r\n" in text else "\n"
    n = len(lines)
    if index_after is not None:
        if not 0 <= index_after <= n:
            raise InvalidParameter.about(
                "insert_after_line", f"must be an integer from 0 to {n} ('{display(rel)}' has {n} lines)"
            )
        at = index_after
    else:
        assert index_before is not None
        if not 1 <= index_before <= n + 1:
            raise InvalidParameter.about(
                "insert_before_line", f"must be an integer from 1 to {n + 1} ('{display(rel)}' has {n} lines)"
            )
        at = index_before - 1
    block = content if content.endswith("\n") or content == "" else content + eol
    if eol == "\r\n":
        block = block.replace("\r\n", "\n").replace("\n", "\r\n")
    if at == n and n and not lines[-1].endswith("\n"):
        lines[-1] += eol
    inserted = split_lines(block)
    if at == 0 and lines and lines[0].startswith("\ufeff") and inserted:
        lines[0] = lines[0][1:]  # a byte-order mark stays the first character of the file
        inserted[0] = "\ufeff" + inserted[0]
    return "".join(lines[:at] + inserted + lines[at:]), len(inserted)


def _delete(text: str, rel: str, start: int, end: int) -> tuple[str, int]:
    lines = split_lines(text)
    n = len(lines)
    if not (1 <= start <= end <= n):
        raise InvalidParameter.about(
            "delete_lines",
            f"must be a range of lines from 1 to {n}, start first ('{display(rel)}' has {n} lines)",
        )
    return "".join(lines[: start - 1] + lines[end:]), end - start + 1


def edit_file(ctx: FilesContext, request: EditRequest) -> Outcome[EditResult]:
    """Apply one edit form to an existing text file and return the unified diff.

    Raises:
        InvalidParameter: not exactly one form, empty old_text, line out of range.
        Conflict: old_text absent or ambiguous, or the file changed (expected_sha256).
        Forbidden: protected, `.system/`, `daily/`. NotFound: no such file.
    """
    form = _form(request)

    def apply_form(text: str, rel: str) -> tuple[str, int]:
        if form == "replace":
            assert request.old_text is not None and request.new_text is not None
            return _replace(text, rel, request.old_text, request.new_text, bool(request.replace_all))
        if form == "insert":
            assert request.content is not None
            return _insert(text, rel, request.insert_after_line, request.insert_before_line, request.content)
        assert request.delete_lines is not None
        return _delete(text, rel, request.delete_lines[0], request.delete_lines[1])

    texts = [(request.new_text, "new_text"), (request.content, "content")]
    rel = normalize_rel_path(request.path)
    applied, count = edit_text(ctx, request.tool, rel, "edit", apply_form, request.options, texts=texts)
    diff, truncated = unified(
        applied.rel, applied.before, applied.after
    )  # an edit always answers with its diff
    data = EditResult(
        path=applied.rel,
        operation=form,
        replacements=count,
        diff=diff,
        diff_truncated=truncated,
        size_bytes=len(applied.after),
        sha256=applied.sha256,
        dry_run=request.options.dry_run,
        **applied.info.model_dump(),
    )
    return Outcome(data=data, warnings=applied.warnings)
