"""One shape of commit hook (issue 34 item 4): every commit calls each hook at each of its
three steps, in the order the hooks were given, the embedder after the composer's."""

from __future__ import annotations

import shutil
from pathlib import Path

from engine_support import make_settings, note_text, write
from testkit import wait_until

from vault_agent.commit_hook import CommitHook
from vault_agent.contracts import Manifest, SegmentRef
from vault_agent.freshness import read_current_manifest
from vault_agent.indexer.build import build_index, open_writer_dirs
from vault_agent.indexer.engine import Writer
from vault_agent.indexer.lock import WriterLock
from vault_agent.indexer.state_dir import reopen_indexer
from vault_agent.semantic.embedder import SemanticIndexer


class Recorder(CommitHook):
    """Writes down each step it sees, with what CURRENT named at that moment."""

    def __init__(
        self, name: str, steps: list[tuple[str, str, int | None, int | None]], index_dir: Path
    ) -> None:
        self.name, self.steps, self.index_dir = name, steps, index_dir
        self.handed: list[SegmentRef] | None = None

    def _current(self) -> int | None:
        manifest = read_current_manifest(self.index_dir)
        return manifest.snapshot_id if manifest else None

    def attach(self, segments: list[SegmentRef]) -> list[SegmentRef]:
        self.steps.append((self.name, "attach", None, self._current()))
        self.handed = list(segments)  # a new list: the next hook must get this one
        return self.handed

    def publishing(self, manifest: Manifest) -> None:
        self.steps.append((self.name, "publishing", manifest.snapshot_id, self._current()))

    def committed(self, manifest: Manifest) -> None:
        self.steps.append((self.name, "committed", manifest.snapshot_id, self._current()))


class Checker(Recorder):
    def __init__(self, first: Recorder, *args: object) -> None:
        super().__init__(*args)  # type: ignore[arg-type]
        self.first = first

    def attach(self, segments: list[SegmentRef]) -> list[SegmentRef]:
        assert segments is self.first.handed  # what the hook before it returned
        return super().attach(segments)


def test_every_step_calls_every_hook_in_order(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    settings = make_settings(vault)
    for i in range(3):
        write(vault, f"n{i}.md", note_text(i))
    steps: list[tuple[str, str, int | None, int | None]] = []
    a = Recorder("a", steps, settings.index_dir)
    b = Checker(a, "b", steps, settings.index_dir)
    manifest = build_index(settings, hooks=(a, b))
    new = manifest.snapshot_id
    assert [(name, step) for name, step, *_ in steps] == [
        ("a", "attach"),
        ("b", "attach"),
        ("a", "publishing"),
        ("b", "publishing"),
        ("a", "committed"),
        ("b", "committed"),
    ]
    # publishing: durable but not yet named by CURRENT; committed: named.
    assert [(s[2], s[3]) for s in steps if s[1] == "publishing"] == [(new, None), (new, None)]
    assert [(s[2], s[3]) for s in steps if s[1] == "committed"] == [(new, new), (new, new)]


def test_a_hook_overrides_only_the_steps_it_needs() -> None:
    hook = CommitHook()
    segments: list[SegmentRef] = []
    assert hook.attach(segments) is segments
    # The embedder is one: it adds files at `attach` and follows `committed`, nothing more.
    assert issubclass(SemanticIndexer, CommitHook)
    assert SemanticIndexer.publishing is CommitHook.publishing
    assert SemanticIndexer.attach is not CommitHook.attach


def test_the_writer_calls_the_composers_hooks_then_its_embedder(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    settings = make_settings(vault, debounce_ms=50)
    write(vault, "a.md", note_text(1))
    steps: list[tuple[str, str, int | None, int | None]] = []
    hook = Recorder("preload", steps, settings.index_dir)
    with Writer(settings, watch=False, hooks=(hook,)) as writer:
        assert writer._progress.indexer is not None
        assert writer._progress.indexer.hooks == (hook, writer._semantic)
        seen = len(steps)
        write(vault, "b.md", note_text(2))
        writer._on_hint("b.md", False)
        wait_until(lambda: len(steps) >= seen + 3, what="a commit told to the hook")
    assert [step for _, step, *_ in steps[seen : seen + 3]] == ["attach", "publishing", "committed"]


def test_a_recreated_state_dir_keeps_the_writers_hooks(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    settings = make_settings(vault)
    write(vault, "a.md", note_text(1))
    hook = CommitHook()
    lock = WriterLock(settings.index_dir)
    old = open_writer_dirs(settings, lock, (hook,))
    try:
        old.catch_up()
        shutil.rmtree(settings.index_dir)
        new = reopen_indexer(settings, old, old.log.head_seq())
        assert new.hooks == (hook,)
    finally:
        lock.release()
