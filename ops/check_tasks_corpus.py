#!/usr/bin/env python3
"""Index the Tasks plugin's documentation (a real vault full of task lines) and account for
every task line: what the index holds, what it leaves out and why, and every malformed date.

    python ops/check_tasks_corpus.py [CORPUS_DIR]

CORPUS_DIR defaults to ../shared/corpora/obsidian-tasks-docs next to the repository (its
`vault/`). Counted independently of the indexer, by a line scan: every line the plugin's
task regex reads (`task_syntax.parse_task_line` must read each one: none dropped), and
which of them sit in fenced code (simple fence toggling) or `%%` comments. Then the vault is
indexed with the engine's public API into a temporary state dir and `vault_tasks` is asked
for every task: the count must be the lines outside code, and every date that is no
calendar date must be there, marked invalid, never dropped. Prints one report; exits 1 when
an invariant fails (a line not read, a task missing or extra, an invalid date lost).
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from vault_agent.config import Settings  # noqa: E402
from vault_agent.indexer.build import build_index  # noqa: E402
from vault_agent.paths import vault_for_settings  # noqa: E402
from vault_agent.query.snapshot import SnapshotReader  # noqa: E402
from vault_agent.query.tasks.filters import TaskFilters  # noqa: E402
from vault_agent.query.tasks.run import TASKS_LIMIT_MAX, TasksRequest, vault_tasks  # noqa: E402
from vault_agent.task_syntax import parse_task_line  # noqa: E402

# The plugin's TaskRegularExpressions.taskRegex, and a blank or the line end after the box.
PLUGIN_LINE = re.compile(r"^[\s>]*([-*+]|[0-9]+[.)]) +\[.\](\s|$)")
FENCE = re.compile(r"^[\s>]*(`{3,}|~{3,})")
NOW = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def scan(
    vault: Path,
) -> tuple[Counter[str], set[tuple[str, int]], list[tuple[str, int, str, str]], list[str]]:
    """(lines by place, task lines outside code, invalid dates (path, line, field, text), unread)."""
    places: Counter[str] = Counter()
    outside: set[tuple[str, int]] = set()
    invalid: list[tuple[str, int, str, str]] = []
    unread: list[str] = []
    for file in sorted(vault.rglob("*.md")):
        rel = file.relative_to(vault).as_posix()
        if rel.startswith("."):
            continue
        fence: str | None = None
        comment = False
        for k, line in enumerate(file.read_text(encoding="utf-8").split("\n"), start=1):
            m = FENCE.match(line)
            if m and not comment:
                fence = None if fence is not None and m.group(1)[0] == fence[0] else fence or m.group(1)
                continue
            if fence is None and line.count("%%") % 2:
                comment = not comment
            if not PLUGIN_LINE.match(line):
                continue
            task = parse_task_line(line)
            if task is None:
                unread.append(f"{rel}:{k}")
                continue
            where = "code" if fence is not None else "comment" if comment else "body"
            places[where] += 1
            if where == "body":
                outside.add((rel, k))
            invalid += [(rel, k, f, task.values[f]) for f in task.invalid_dates()]
    return places, outside, invalid, unread


def indexed(vault: Path, state: Path) -> dict[tuple[str, int], list[str]]:
    """Every task of the index, with the date fields it marks invalid."""
    settings = Settings(vault=vault, index_dir=state)
    build_index(settings, full=True)
    reader = SnapshotReader(settings, vault_for_settings(settings), freshness=lambda _m: "fresh")
    found: dict[tuple[str, int], list[str]] = {}
    try:
        cursor: str | None = None
        while True:
            answer = vault_tasks(
                reader, TasksRequest(TaskFilters(sort="path"), TASKS_LIMIT_MAX, cursor), lambda: NOW
            )
            found.update({(t.path, t.line): t.invalid_dates for t in answer.data.results})
            cursor = answer.data.next_cursor
            if cursor is None:
                return found
    finally:
        reader.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "corpus", nargs="?", type=Path, default=REPO.parent / "shared" / "corpora" / "obsidian-tasks-docs"
    )
    args = ap.parse_args()
    vault = args.corpus / "vault"
    places, outside, invalid, unread = scan(vault)
    with tempfile.TemporaryDirectory() as tmp:
        tasks = indexed(vault, Path(tmp) / "state")
    lost = [(p, k, f, t) for p, k, f, t in invalid if (p, k) in outside and f not in tasks.get((p, k), [])]
    print(f"task lines (the plugin's line rule): {sum(places.values())}, of which in fenced code "
          f"{places['code']}, in %% comments {places['comment']}, in the body {places['body']}")  # fmt: skip
    print(f"lines the rule reads that task_syntax does not: {len(unread)} {unread[:5]}")
    print(f"indexed tasks: {len(tasks)} (body lines: {len(outside)}); missing {sorted(outside - set(tasks))[:5]}, "
          f"extra {sorted(set(tasks) - outside)[:5]}")  # fmt: skip
    print(f"malformed dates on task lines: {len(invalid)}; in the body {sum((p, k) in outside for p, k, _, _ in invalid)}, "
          f"each marked invalid in the index: {not lost}")  # fmt: skip
    for p, k, f, t in invalid:
        print(f"  {p}:{k} {f} {t} ({'indexed, marked invalid' if (p, k) in tasks else 'in code: no task'})")
    ok = not unread and set(tasks) == outside and not lost
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
