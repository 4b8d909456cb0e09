"""`vault-agent web`: a one-time sign-in link for the owner's web page, printed and opened.

The command asks the vault's running server for a link (`POST /sign-in/link`, with the
bearer token the CLI reads from `<index-dir>/token` like every server-backed command) and
prints it; on a desktop it also opens it in the default browser. The token itself is never
printed and never part of the link: the link holds a one-time nonce that the server
forgets once used or after 2 minutes (vault_agent/web/sign_in_links.py).
"""

from __future__ import annotations

import json
import os
import sys
import webbrowser
from typing import Annotated

import typer

from vault_agent.cli.command_spec import CommandSpec
from vault_agent.cli.common import (
    ConfigOpt,
    IndexDirOpt,
    JsonOpt,
    ServerOpt,
    TokenOpt,
    VaultOpt,
    run_command,
    settings_from,
)
from vault_agent.cli.request import call_server, connection

SIGN_IN_LINK = CommandSpec(
    name="web",
    http_method="POST",
    http_path="/sign-in/link",
    envelope=True,
    help="A one-time sign-in link for the web page.",
)


def desktop_available() -> bool:
    """True where opening a browser shows a window to this user: macOS and Windows, or a
    graphical session elsewhere. Without one, Python's `webbrowser` would start a text
    browser in this terminal, so the link is only printed."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def web(
    vault: VaultOpt = None,
    index_dir: IndexDirOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
    server: ServerOpt = None,
    token: TokenOpt = None,
    no_open: Annotated[
        bool, typer.Option("--no-open", help="Only print the link; do not open a browser.")
    ] = False,
) -> None:
    """Print a one-time sign-in link for the web page of the vault's running server, and open
    it in the browser on a desktop.

    The link works once, for 2 minutes; it holds no token (the bearer token stays in
    <index-dir>/token). Run it again for a new link.

    Example: vault-agent web --vault ~/notes
    """

    def body() -> None:
        settings = settings_from(vault, index_dir, config, require_vault=False, server=server, token=token)
        text, _headers = call_server(SIGN_IN_LINK, {}, *connection(settings, vault))
        data = json.loads(text)["data"]
        # The link first (stdout: the link alone, or the body with --json), then the browser.
        sys.stdout.write((text.rstrip("\n") if json_out else data["url"]) + "\n")
        sys.stdout.flush()
        opened = not no_open and desktop_available() and webbrowser.open(data["url"], new=2)
        if not json_out:
            minutes = max(1, int(data.get("expires_in_seconds", 120)) // 60)
            sys.stderr.write(
                ("opened in your browser" if opened else "open it in your browser")
                + f": it signs in one browser, once, within {minutes} minutes\n"
            )

    run_command(json_out, body)
