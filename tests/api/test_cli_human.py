"""Human CLI output of server-backed commands (issue 13 gaps), against a live server."""

from __future__ import annotations

import subprocess

import pytest

from api.serverkit import VAULT_AGENT, ServerThread


def _cli(server: ServerThread, *argv: str) -> str:
    settings = server.ctx.settings
    proc = subprocess.run(
        [VAULT_AGENT, *argv, "--vault", str(settings.vault), "--server", server.url],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(settings.vault),
    )
    assert proc.returncode == 0, proc.stderr[-500:]
    return proc.stdout


def test_find_prints_path_and_lines_of_each_next_action(server: ServerThread) -> None:
    out = _cli(server, "find", "alpha")
    print(out)
    # The commands repeat the --vault and --server given, so that they run as printed.
    same = f"--vault {server.ctx.settings.vault} --server {server.url}"
    assert out.splitlines()[1:] == [
        "next:",
        f"1. projects/alpha/plan.md lines 8-12  (vault-agent read projects/alpha/plan.md --start 8 --end 12 {same})",
        "2. projects/alpha/notes/meeting-2026-01-07.md lines 8-10  "
        f"(vault-agent read projects/alpha/notes/meeting-2026-01-07.md --start 8 --end 10 {same})",
        "3. projects/alpha/secret-notes.md lines 4-6  "
        f"(vault-agent read projects/alpha/secret-notes.md --start 4 --end 6 {same})",
        "4. stop: enough was found",
    ]


def test_grep_shows_line_numbers_by_default(server: ServerThread) -> None:
    out = _cli(server, "grep", "milestone")
    print(out)
    assert out.strip() and all(line.split(":")[1].strip().isdigit() for line in out.splitlines())


def test_tags_print_like_overview(server: ServerThread) -> None:
    tags = _cli(server, "tags")
    overview = _cli(server, "overview")
    names = [line.split()[-1] for line in tags.splitlines()[1:] if line.startswith("  ") and line.strip()]
    print(tags)
    assert names and all(not n.startswith("#") for n in names)
    assert all(f"  {n}" in overview for n in names[:3])


def test_tree_says_what_is_not_shown(server: ServerThread) -> None:
    out = _cli(server, "tree", "--depth", "1")
    print(out)
    assert "more)" not in out
    assert "subfolder" in out and "not shown; raise --depth or --limit" in out


@pytest.mark.parametrize("command", [["read"], ["tree"], ["serve"], []])
def test_help_shows_no_bool_after_flags(command: list[str]) -> None:
    out = subprocess.run([VAULT_AGENT, *command, "--help"], capture_output=True, text=True, timeout=60).stdout
    assert "--help" in out and "<bool>" not in out
