"""Security probes: traversal, symlinks (out, parent, swap), hardlinks, look-alikes, disabled writes."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vault_agent.api.invoke import invoke
from vault_agent.api.ops import CATALOG
from vault_agent.errors import Conflict, Forbidden, InvalidPath, NotFound, VaultAgentError

from .conftest import make_ctx, tree

Call = Callable[..., dict[str, Any]]

TRAVERSAL = [
    "../x.md",
    "..\\x.md",
    "a/../../x.md",
    "/etc/passwd",
    "C:\\x.md",
    "\\\\srv\\share\\x.md",
    "~/x.md",
    "a\x00b.md",
    "a\nb.md",
    "x" * 5000,
    "a/" + "b" * 300 + ".md",
]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret.md").write_text("outside\n")
    return out


def _probes(rel: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("create", {"path": rel, "content": "x"}),
        ("write", {"path": rel, "content": "x", "mode": "append"}),
        ("replace", {"path": rel, "find": "o", "replace": "x"}),
        ("edit", {"path": rel, "insert_after_line": 0, "content": "x"}),
        ("mv", {"source": rel, "destination": "notes/m.md"}),
        ("mv", {"source": "notes/a.md", "destination": rel}),
        ("rm", {"path": rel}),
        ("rm", {"path": rel, "permanent": True}),
        ("mkdir", {"path": rel}),
        ("info", {"path": rel}),
    ]


@pytest.mark.parametrize("rel", TRAVERSAL)
def test_traversal_rejected_before_io(call: Call, vault_dir: Path, outside: Path, rel: str) -> None:
    before, out_before = tree(vault_dir), tree(outside)
    for name, raw in _probes(rel):
        with pytest.raises(InvalidPath) as exc:
            call(name, **raw)
        assert str(vault_dir) not in exc.value.message and "/etc" not in exc.value.message
    assert tree(vault_dir) == before
    assert tree(outside) == out_before


def test_symlinked_file_and_folder(call: Call, vault_dir: Path, outside: Path) -> None:
    (vault_dir / "notes/link.md").symlink_to(outside / "secret.md")
    (vault_dir / "linkdir").symlink_to(outside, target_is_directory=True)
    (vault_dir / "dangling.md").symlink_to(outside / "missing.md")
    for rel in ("notes/link.md", "linkdir/secret.md", "linkdir/new.md", "dangling.md"):
        for name, raw in _probes(rel):
            with pytest.raises((InvalidPath, NotFound, Conflict)):
                call(name, **raw)
    assert tree(outside) == {"secret.md": b"outside\n"}
    assert not (outside / "missing.md").exists()
    assert os.path.islink(vault_dir / "notes/link.md") and os.path.islink(vault_dir / "linkdir")


def test_hardlink_is_not_written_through(call: Call, vault_dir: Path, outside: Path) -> None:
    os.link(outside / "secret.md", vault_dir / "notes/hard.md")
    call("write", path="notes/hard.md", content="changed\n", mode="overwrite")
    assert (outside / "secret.md").read_text() == "outside\n"  # atomic replace makes a new inode
    assert (vault_dir / "notes/hard.md").read_text() == "changed\n"


def test_parent_swapped_for_symlink(call: Call, vault_dir: Path, outside: Path) -> None:
    """A thread swaps notes/sub for a link to outside while writes run: 0 outside hits."""
    sub = vault_dir / "notes/sub"
    sub.mkdir()
    (sub / "x.md").write_text("x\n")
    real = vault_dir / "notes/sub_real"
    stop = threading.Event()
    swaps = [0]

    def swapper() -> None:
        # create_parents may recreate notes/sub as a real folder mid-swap: any step may fail
        while not stop.is_set():
            for step in (
                lambda: os.rename(sub, real),
                lambda: os.symlink(outside, sub),
                lambda: os.unlink(sub),
                lambda: os.rename(real, sub),
            ):
                try:
                    step()
                except OSError:
                    continue
            swaps[0] += 1

    t = threading.Thread(target=swapper)
    t.start()
    outcomes: dict[str, int] = {}
    try:
        for i in range(300):
            for name, raw in [
                ("create", {"path": f"notes/sub/n{i}.md", "content": "n"}),
                ("write", {"path": "notes/sub/x.md", "content": "+", "mode": "append"}),
                ("mv", {"source": "notes/sub/x.md", "destination": "notes/sub/y.md"}),
                ("mv", {"source": "notes/sub/y.md", "destination": "notes/sub/x.md"}),
            ]:
                try:
                    call(name, **raw)
                    outcomes["ok"] = outcomes.get("ok", 0) + 1
                except VaultAgentError as exc:
                    outcomes[exc.code] = outcomes.get(exc.code, 0) + 1
    finally:
        stop.set()
        t.join()
    assert tree(outside) == {"secret.md": b"outside\n"}
    assert set(outcomes) <= {"ok", "INVALID_PATH", "NOT_FOUND", "CONFLICT"}
    assert swaps[0] > 0


@pytest.mark.parametrize(
    "rel",
    [
        "\u2024\u2024/x.md",  # one dot leader twice: a name, not '..'
        "notes\u2215..\u2215..\u2215x.md",  # division slash is not a separator
        "notes／..／x.md",  # fullwidth solidus likewise
        "．．/x.md",
    ],
)
def test_lookalike_separators_stay_inside(call: Call, vault_dir: Path, outside: Path, rel: str) -> None:
    body = call("create", path=rel, content="look\n")
    written = body["data"]["written_path"]
    assert (vault_dir / written).read_text() == "look\n"
    assert (vault_dir / written).resolve().is_relative_to(vault_dir.resolve())
    assert tree(outside) == {"secret.md": b"outside\n"}


def test_lookalike_name_never_overwrites_original(call: Call, vault_dir: Path) -> None:
    original = (vault_dir / "notes/a.md").read_bytes()
    call("create", path="notes/\u0430.md", content="cyrillic\n")  # Cyrillic a
    assert (vault_dir / "notes/a.md").read_bytes() == original
    with pytest.raises(Forbidden):
        call("create", path="notes/.obsidian\u0301/x.md".replace("\u0301", ""), content="x")
    # NFD spelling of an existing NFC name edits the same file, never a twin
    (vault_dir / "notes/café.md").write_text("c\n")
    call("write", path="notes/cafe\u0301.md", content="d\n", mode="append")
    assert sorted(p.name for p in (vault_dir / "notes").iterdir()) == ["a.md", "café.md", "а.md"]
    assert (vault_dir / "notes/café.md").read_text() == "c\nd\n"


@pytest.mark.parametrize("rel", ["notes/a.md.", "notes/a.md ", "notes/new.", "dir./x.md", "dir /x.md"])
def test_trailing_dot_or_space_names_refused(call: Call, vault_dir: Path, rel: str) -> None:
    """RELIABILITY traversal matrix: a new name ending in a dot/space aliases another on sync."""
    before = tree(vault_dir)
    for name, args in [
        ("create", {"path": rel, "content": "x"}),
        ("mkdir", {"path": rel}),
        ("mv", {"source": "notes/a.md", "destination": rel}),
        ("write_file", {"path": rel, "content": "x"}),
    ]:
        with pytest.raises(InvalidPath, match="must not end with a dot or a space"):
            call(name, **args)
    assert tree(vault_dir) == before
    assert sorted(p.name for p in vault_dir.iterdir()) == [".system", "notes"]


def test_writes_disabled(vault_dir: Path) -> None:
    ctx = make_ctx(vault_dir, writes=False)
    before = tree(vault_dir)
    for name, raw in _probes("notes/a.md") + [("mkdir", {"path": "new"})]:
        op = CATALOG.named(name)
        if op.kind == "read":
            continue
        with pytest.raises(Forbidden, match="--allow-writes"):
            invoke(op, ctx, raw)
    assert tree(vault_dir) == before
    assert invoke(CATALOG.named("info"), ctx, {"path": "notes/a.md"}).data.path == "notes/a.md"


def test_writes_disabled_answers_before_the_params_are_checked(vault_dir: Path) -> None:
    """One check, first in `invoke`: a disabled write never reports its parameters."""
    ctx = make_ctx(vault_dir, writes=False)
    with pytest.raises(Forbidden, match="--allow-writes"):
        invoke(CATALOG.named("write"), ctx, {"no_such_parameter": 1})


def test_special_files_refused(call: Call, vault_dir: Path) -> None:
    os.mkfifo(vault_dir / "notes/fifo.md")
    cases: list[tuple[str, dict[str, Any]]] = [
        ("write", {"path": "notes/fifo.md", "content": "x", "mode": "append"}),
        ("edit", {"path": "notes/fifo.md", "insert_after_line": 0, "content": "x"}),
        ("create", {"path": "notes/fifo.md", "content": "x"}),
    ]
    for name, raw in cases:
        with pytest.raises(InvalidPath):
            call(name, **raw)


def test_error_messages_never_leak_absolute_paths(call: Call, vault_dir: Path) -> None:
    probes: list[tuple[str, dict[str, Any]]] = [
        ("write", {"path": "notes/none.md", "content": "x", "mode": "append"}),
        ("create", {"path": "notes/a.md", "content": "x"}),
        ("edit", {"path": "notes/a.md", "old_text": "zzz", "new_text": "y"}),
        ("mv", {"source": "notes/a.md", "destination": "notes/a.md/x"}),
        ("rm", {"path": "nothing"}),
        ("info", {"path": str(vault_dir / "notes/a.md")}),
    ]
    for name, raw in probes:
        with pytest.raises(VaultAgentError) as exc:
            call(name, **raw)
        assert str(vault_dir) not in exc.value.message
        assert "zzz" not in exc.value.message


def test_logs_name_tool_path_sizes_never_content(call: Call, caplog: pytest.LogCaptureFixture) -> None:
    canary = "canary-text-9b1e"
    with caplog.at_level("INFO", logger="vault_agent.files"):
        call("create", path="notes/log.md", content=f"{canary}\n")
        call("write", path="notes/log.md", content=f"{canary} again\n", mode="append")
        call("edit", path="notes/log.md", old_text=canary, new_text="x", replace_all=True)
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert canary not in text
    assert [r.getMessage() for r in caplog.records] == [
        "write tool=vault_create path=notes/log.md bytes_before=- bytes_after=17",
        "write tool=vault_write path=notes/log.md bytes_before=17 bytes_after=40",
        "write tool=vault_edit path=notes/log.md bytes_before=40 bytes_after=10",
    ]


def test_vanished_folder_is_conflict_not_internal() -> None:
    """ENOENT/ENOTDIR from a folder renamed under a write → CONFLICT (nothing written yet)."""
    from vault_agent.files.races import race_safe

    def vanished() -> None:
        raise FileNotFoundError(2, "No such file or directory")

    def denied() -> None:
        raise PermissionError(13, "Permission denied")

    with pytest.raises(Conflict, match="the vault changed while this write ran"):
        race_safe(vanished)()
    with pytest.raises(PermissionError):
        race_safe(denied)()
