"""`vault-agent conversations list|show|end|undo|questions|reply|export` and `vault-agent messages [--follow]`.

They work on the state dir directly (records live in `<index-dir>/conversations/`), like
`status`; only `messages --follow` talks to the server (its `/messages/stream`). Heavy
imports stay inside the command functions so `vault-agent --help` stays fast.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vault_agent.cli.common import (
    ConfigOpt,
    IndexDirOpt,
    JsonOpt,
    ServerOpt,
    TokenOpt,
    VaultOpt,
    options_command,
    print_json,
    run_command,
    settings_from,
)

if TYPE_CHECKING:  # annotations only: the CLI's command table stays light
    from vault_agent.contracts import Outcome

conversations = typer.Typer(
    help="The record of each agent session: list, show, end, undo its writes, answer its questions, "
    "export as a note.",
    no_args_is_help=True,
)

IdArg = Annotated[str, typer.Argument(help="A conversation id (see `vault-agent conversations list`).")]


def _context(vault: Path | None, index_dir: Path | None, config: Path | None) -> Any:
    from vault_agent.api.operation import AppContext
    from vault_agent.paths import vault_for_settings
    from vault_agent.query.snapshot import SnapshotReader

    settings = settings_from(vault, index_dir, config)
    vault_ = vault_for_settings(settings)
    # Conversation records never touch the index; the reader is opened lazily and unused.
    return AppContext(settings=settings, vault=vault_, reader=SnapshotReader(settings, vault_))


def _emit(as_json: bool, outcome: Outcome[Any], render: Callable[[Any], str]) -> None:
    from vault_agent.api.invoke import to_jsonable

    body = {"data": to_jsonable(outcome.data), "warnings": [w.model_dump() for w in outcome.warnings]}
    if as_json:
        print_json(body)
    else:
        sys.stdout.write(render(body) + "\n")


def _render(body: Any) -> str:
    from vault_agent.api.human.conversations import render_conversations

    return render_conversations(body)


@conversations.command("list")
def list_cmd(
    limit: Annotated[
        int | None, typer.Option("--limit", help="How many, newest first (1–100, default 20).")
    ] = None,
    cursor: Annotated[str | None, typer.Option("--cursor", help="next_cursor of the previous page.")] = None,
    vault: VaultOpt = None,
    index_dir: IndexDirOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """List conversations, newest first. Example: vault-agent conversations list --limit 5"""

    def body() -> None:
        from vault_agent.conversations.tools import get_conversation

        _emit(json_out, get_conversation(_context(vault, index_dir, config), None, limit, cursor), _render)

    run_command(json_out, body)


@conversations.command("show")
def show_cmd(
    cid: IdArg,
    limit: Annotated[
        int | None, typer.Option("--limit", help="Entries per page (1–500, default 100).")
    ] = None,
    cursor: Annotated[str | None, typer.Option("--cursor", help="next_cursor of the previous page.")] = None,
    vault: VaultOpt = None,
    index_dir: IndexDirOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Show one conversation: messages, replies, tool calls, writes (sha256 before/after).
    Example: vault-agent conversations show c20260101T120000Z-a1b2c3"""

    def body() -> None:
        from vault_agent.conversations.tools import get_conversation

        _emit(json_out, get_conversation(_context(vault, index_dir, config), cid, limit, cursor), _render)

    run_command(json_out, body)


@conversations.command("end")
def end_cmd(
    cid: IdArg,
    vault: VaultOpt = None,
    index_dir: IndexDirOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """End a conversation now (the agent's next call starts a new one).
    Example: vault-agent conversations end c20260101T120000Z-a1b2c3"""

    def body() -> None:
        from vault_agent.conversations.tools import end_by_user

        outcome = end_by_user(_context(vault, index_dir, config), cid)
        _emit(json_out, outcome, lambda b: f"ended {b['data']['conversation']['id']}")

    run_command(json_out, body)


def _render_undo(body: Any) -> str:
    d = body["data"]
    verb = "would undo" if d["dry_run"] else "undid"
    lines = [f"{verb} {len(d['files'])} file(s) of {d['conversation_id']}"]
    for f in d["files"]:
        lines.append(f"  {f['status']:<8} {f['action']:<7} {f['path']}")
        lines += [f"           {text}" for text in (f.get("reason"), f.get("kept")) if text]
        if f.get("diff"):
            lines += ["    " + line for line in f["diff"].splitlines()]
            if f.get("diff_truncated"):
                lines.append("    (diff cut; the file is restored in full)")
    lines += [f"  not undoable (revert by hand): {m}" for m in d["not_undoable"]]
    if d["dry_run"]:
        conflicts = any(f["status"] == "conflict" for f in d["files"])
        lines.append(
            "dry run: nothing changed; "
            + (
                "--apply refuses while a file is a conflict" + ("" if d["merge"] else " (or try --merge)")
                if conflicts
                else "add --apply to undo" + (" (with --merge)" if d["merge"] else "")
            )
        )
    return "\n".join(lines)


@conversations.command("undo")
def undo_cmd(
    cid: IdArg,
    apply: Annotated[
        bool, typer.Option("--apply", help="Really undo (default: dry run with diffs).")
    ] = False,
    merge: Annotated[
        bool,
        typer.Option(
            "--merge",
            help="Where someone else also edited a file, keep those edits and take out "
            "only the agent's changes (three-way merge) instead of refusing the file.",
        ),
    ] = False,
    vault: VaultOpt = None,
    index_dir: IndexDirOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Revert a conversation's writes, every file or none. A file someone else edited between or
    after the agent's writes is a conflict (its reason says when) unless --merge; a file saved
    during --apply rolls the undo back. Example: vault-agent conversations undo ID --apply"""

    def body() -> None:
        from vault_agent.conversations.undo import undo_conversation

        ctx = _context(vault, index_dir, config)
        _emit(json_out, undo_conversation(ctx, cid, apply=apply, merge=merge), _render_undo)

    run_command(json_out, body)


@conversations.command("questions")
def questions_cmd(
    cid: Annotated[str | None, typer.Argument(help="A conversation id; omit for every open one.")] = None,
    vault: VaultOpt = None,
    index_dir: IndexDirOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Questions agents asked that wait for your reply (their client cannot show a form).
    Example: vault-agent conversations questions"""

    def body() -> None:
        from vault_agent.conversations.replies import open_questions

        def render(b: Any) -> str:
            rows = b["data"]["questions"]
            out = [
                f"{q['conversation_id']} #{q['message_seq']} ({q['client']}, until {q['expires_at']}): "
                f"{q['text']}\n  answer: {q['answer_with']}"
                for q in rows
            ]
            return "\n".join(out) or "no question is waiting for a reply"

        _emit(json_out, open_questions(_context(vault, index_dir, config), cid), render)

    run_command(json_out, body)


@conversations.command("reply")
def reply_cmd(
    cid: IdArg,
    text: Annotated[str, typer.Argument(help="Your answer (1–4,000 characters).")],
    seq: Annotated[
        int | None, typer.Option("--seq", help="Which question (message_seq), when several wait.")
    ] = None,
    vault: VaultOpt = None,
    index_dir: IndexDirOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Answer an agent's open question; its waiting send_message returns your text.
    Example: vault-agent conversations reply c20260101T120000Z-a1b2c3 'yes, go ahead'"""

    def body() -> None:
        from vault_agent.conversations.replies import reply_to_question

        outcome = reply_to_question(_context(vault, index_dir, config), cid, text, seq, "cli")
        _emit(json_out, outcome, lambda b: f"replied to question {b['data']['message_seq']} of {cid}")

    run_command(json_out, body)


@conversations.command("export")
def export_cmd(
    cid: IdArg,
    to: Annotated[Path, typer.Option("--to", help="Folder to write <id>.md into (created if missing).")],
    vault: VaultOpt = None,
    index_dir: IndexDirOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Write one conversation as a Markdown note. Example: vault-agent conversations export ID --to Agent/log"""

    def body() -> None:
        from vault_agent.conversations.export import write_export

        written = write_export(_context(vault, index_dir, config), cid, to)
        if json_out:
            print_json({"data": {"conversation_id": cid, "written_file": written.name}, "warnings": []})
        else:
            sys.stdout.write(f"wrote {written.name}\n")

    run_command(json_out, body)


@dataclass(frozen=True)
class MessagesOptions:
    """messages' options, in its --help order (each type is its typer option)."""

    follow: Annotated[
        bool, typer.Option("--follow", help="Stay connected and print messages as they come.")
    ] = False
    limit: Annotated[int, typer.Option("--limit", help="Recent messages shown without --follow.")] = 20
    vault: VaultOpt = None
    index_dir: IndexDirOpt = None
    config: ConfigOpt = None
    json_out: JsonOpt = False
    server: ServerOpt = None
    token: TokenOpt = None


def messages_cmd(options: MessagesOptions) -> None:
    """Messages the agent sent to the user: the recent ones, or live with --follow (needs a running
    server). Example: vault-agent messages --follow"""

    def body() -> None:
        from vault_agent.cli.follow import follow_messages, recent_messages

        if not options.follow:
            settings = settings_from(options.vault, options.index_dir, options.config)
            recent_messages(settings, options.limit, options.json_out)
            return
        settings = settings_from(
            options.vault,
            options.index_dir,
            options.config,
            require_vault=False,
            server=options.server,
            token=options.token,
        )
        follow_messages(settings, options.json_out)

    run_command(options.json_out, body)


messages_command = options_command(
    MessagesOptions, messages_cmd
)  # the typer command: one parameter per option
