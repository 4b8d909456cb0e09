#!/usr/bin/env python3
"""Run every view of every `.base` file of a real vault; check a sample of them independently.

    python ops/check_bases_corpus.py [--corpus ../shared/corpora/kepano-obsidian] [--min-checked 10]

The vault is copied to a temporary folder and indexed (the corpus is never copied into
the repository). Every view of every base runs through `vault_base` with `this` = the base
(as when the base is opened), and once more for each note that embeds it (`this` = that
note, as Obsidian shows an embed): each either runs or refuses with a named construct,
listed here (docs/bases.md quotes the list).

Independent check: for every view whose filters and sort this script can compute by
itself (a small evaluator below, plain Python over the notes' files and PyYAML, sharing no
code with vault_agent.query.bases), the rows it computes must be the rows vault_base
answers, in the same order. The script fails (exit 1) on a mismatch, on an error that is
not a named refusal, or when fewer than --min-checked views with rows were checked.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import shutil
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from vault_agent.config import load_settings  # noqa: E402
from vault_agent.errors import VaultAgentError  # noqa: E402
from vault_agent.indexer.build import build_index  # noqa: E402
from vault_agent.paths import vault_for_settings  # noqa: E402
from vault_agent.query.bases.models import BaseRequest  # noqa: E402
from vault_agent.query.bases.run import vault_base  # noqa: E402
from vault_agent.query.snapshot import SnapshotReader  # noqa: E402

WIKILINK = re.compile(r"!?\[\[([^\[\]|#]+)(?:#[^\[\]|]*)?(?:\|[^\[\]]*)?\]\]")
SKIP_DIRS = {".obsidian", ".git", ".trash"}


# ----------------------------------------------------------------------------- the vault, read here
@dataclass
class Note:
    path: str
    props: dict[str, Any]
    links: list[str]  # link targets as written (body and frontmatter), without alias or heading


def _frontmatter(text: str) -> tuple[dict[str, Any], str]:
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return {}, text
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            try:
                data = yaml.safe_load("\n".join(lines[1:i]))
            except yaml.YAMLError:
                data = None
            return (data if isinstance(data, dict) else {}), "\n".join(lines[i + 1 :])
    return {}, text


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    return []


def read_notes(vault: Path) -> dict[str, Note]:
    notes: dict[str, Note] = {}
    for folder, dirs, files in os.walk(vault):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in files:
            if not name.endswith(".md"):
                continue
            full = Path(folder) / name
            rel = full.relative_to(vault).as_posix()
            props, body = _frontmatter(full.read_text(encoding="utf-8", errors="replace"))
            links = [m.group(1).strip() for m in WIKILINK.finditer(body)]
            links += [m.group(1).strip() for s in _strings(props) for m in WIKILINK.finditer(s)]
            notes[rel] = Note(rel, {str(k): v for k, v in props.items()}, links)
    return notes


def _stem(name: str) -> str:
    last = name.strip().rsplit("/", 1)[-1]
    return (last[:-3] if last.lower().endswith(".md") else last).casefold()


def names(target: str, path: str) -> bool:
    """A link target names the file at `path` (its name or its path, without `.md`; any case)."""
    t = target.strip().casefold()
    return t in (path.casefold(), path[:-3].casefold()) or ("/" not in t and _stem(t) == _stem(path))


def prop(note: Note, name: str) -> Any:
    if name in note.props:
        return note.props[name]
    folded = name.casefold()
    return next((v for k, v in note.props.items() if k.casefold() == folded), None)


# ----------------------------------------------------------------------------- the statements computed here
class Unsupported(Exception):
    pass


def statement(text: str, note: Note, this: str) -> bool:  # noqa: C901 - one pattern per branch
    """The statements the kepano bases use, computed from the note's file."""
    t = text.strip()
    if m := re.fullmatch(r'(?:note\.)?(\w+)\.contains\(link\("([^"]+)"\)\)', t):
        return any(
            names(x, m.group(2) + ".md") for s in _strings(prop(note, m.group(1))) for x in _targets(s)
        )
    if m := re.fullmatch(r'!file\.name\.contains\("([^"]*)"\)', t):
        return m.group(1) not in note.path.rsplit("/", 1)[-1]
    if m := re.fullmatch(r"list\((?:note\.)?(\w+)\)\.contains\(this\)", t):
        return any(names(x, this) for s in _strings(prop(note, m.group(1))) for x in _targets(s))
    if t in ("file.hasLink(this)", "file.hasLink(this.file)"):
        return any(names(x, this) for x in note.links)
    if t == "file.path != this.file.path":
        return note.path != this
    if m := re.fullmatch(r"(?:note\.)?(\w+) > (\d+)", t):
        value = prop(note, m.group(1))
        return isinstance(value, int | float) and not isinstance(value, bool) and value > int(m.group(2))
    if m := re.fullmatch(r'file\.hasTag\("([^"]+)"\)', t):
        tags = [str(x).lstrip("#").casefold() for x in _strings(prop(note, "tags"))]
        want = m.group(1).casefold()
        return any(x == want or x.startswith(want + "/") for x in tags)
    raise Unsupported(t)


def _targets(text: str) -> list[str]:
    return [m.group(1) for m in WIKILINK.finditer(text)]


def tree(node: Any, note: Note, this: str) -> bool:
    if node is None:
        return True
    if isinstance(node, str):
        return statement(node, note, this)
    if not isinstance(node, dict) or len(node) != 1:
        raise Unsupported(str(node))
    ((op, items),) = node.items()
    results = [tree(item, note, this) for item in items or []]
    if op == "and":
        return all(results)
    if op == "or":
        return not results or any(results)
    if op == "not":
        return not any(results)
    raise Unsupported(op)


def order_key(value: Any) -> tuple[Any, ...]:
    """docs/bases.md's order: empty last; numbers, dates, text (case-insensitive), booleans,
    the rest by its text; a wikilink text is a link (ordered by its target)."""
    if value is None or value == "" or value == [] or value == {}:
        return (1,)
    if isinstance(value, bool):
        return (0, 3, int(value))
    if isinstance(value, int | float):
        return (0, 0, float(value))
    if isinstance(value, dt.datetime):
        return (0, 1, value.replace(tzinfo=None))
    if isinstance(value, dt.date):
        return (0, 1, dt.datetime(value.year, value.month, value.day))
    if isinstance(value, str):
        m = WIKILINK.fullmatch(value.strip())
        if m:
            return (0, 5, m.group(1).casefold(), m.group(1))
        return (0, 2, value.casefold(), value)
    raise Unsupported(f"a sort over a {type(value).__name__}")


def sort_value(note: Note, key: str) -> Any:
    if key == "file.name":
        return note.path.rsplit("/", 1)[-1]
    if key == "file.path":
        return note.path
    if key == "file.basename":
        return note.path.rsplit("/", 1)[-1][:-3]
    if key.startswith(("file.", "formula.")):
        raise Unsupported(key)
    return prop(note, key.removeprefix("note."))


def expected_rows(spec: dict[str, Any], view: dict[str, Any], notes: dict[str, Note], this: str) -> list[str]:
    """The rows of one view, computed here (Unsupported when it needs more than this script reads)."""
    if view.get("groupBy") or spec.get("formulas") and any("formula." in str(v) for v in view.values()):
        raise Unsupported("groups or formulas")
    kept = [
        n for n in notes.values() if tree(spec.get("filters"), n, this) and tree(view.get("filters"), n, this)
    ]
    kept.sort(key=lambda n: n.path)
    for key in reversed(view.get("sort") or []):
        name = key.get("property", key.get("column"))
        descending = str(key.get("direction", "ASC")).upper() == "DESC"
        present = [n for n in kept if order_key(sort_value(n, name)) != (1,)]
        empty = [n for n in kept if order_key(sort_value(n, name)) == (1,)]
        present.sort(key=lambda n: order_key(sort_value(n, name)), reverse=descending)
        kept = present + empty
    limit = view.get("limit")
    return [n.path for n in (kept[:limit] if isinstance(limit, int) else kept)]


# ----------------------------------------------------------------------------- vault_base over the copy
def all_rows(reader: SnapshotReader, path: str, view: int, this: str | None) -> list[str] | str:
    rows: list[str] = []
    cursor = None
    while True:
        try:
            out = vault_base(
                reader, BaseRequest(path=path, view=str(view), this=this, limit=500, cursor=cursor)
            )
        except VaultAgentError as err:
            return f"{err.code}: {err.message}"
        rows += [r.path for r in out.data.rows or []]
        cursor = out.data.next_cursor
        if cursor is None:
            return rows


def construct(message: str) -> str:
    """What a refusal names: the construct, without its place."""
    m = re.search(r"(the (?:function|method|view type) [^ ]+(?: \([^)]*\))?)", message)
    return m.group(1) if m else message[:120]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpora" / "kepano-obsidian")
    ap.add_argument("--min-checked", type=int, default=10)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bases-corpus-") as tmp:
        vault = Path(tmp) / "vault"
        shutil.copytree(args.corpus / "vault", vault)
        settings = load_settings({"vault": vault, "index_dir": Path(tmp) / "index"}, env={}, cwd=Path(tmp))
        build_index(settings, full=True)
        notes = read_notes(vault)
        reader = SnapshotReader(settings, vault_for_settings(settings))
        try:
            return _report(reader, vault, notes, args.min_checked)
        finally:
            reader.close()


def _embeds(reader: SnapshotReader, notes: dict[str, Note]) -> dict[str, list[tuple[str, str | None]]]:
    """base path → (the note embedding it, the view the embed names)."""
    out: dict[str, list[tuple[str, str | None]]] = {}
    for note in sorted(notes):
        for base in vault_base(reader, BaseRequest(path=note)).data.bases or []:
            for embed in base.embeds or []:
                out.setdefault(base.path, []).append((note, embed.view))
    return out


@dataclass
class _Tally:
    runs: int = 0
    refused: int = 0
    checked: int = 0
    nonempty: int = 0


def _one(reader: SnapshotReader, base: Any, info: Any, this: str | None, spec: dict[str, Any],
         notes: dict[str, Note], tally: _Tally, problems: list[str], constructs: Counter[str]) -> None:  # fmt: skip
    """Run one view in one context; check it independently when this script can."""
    got = all_rows(reader, base.path, info.index, this)
    label = f"  [{info.index}] {info.name} ({info.type})" + (f" this={this}" if this else "")
    if isinstance(got, str):
        if not got.startswith("INVALID_QUERY"):
            problems.append(f"{label}: {got}")
        tally.refused += 1
        constructs[construct(got)] += 1
        print(f"{label}: refused: {got}")
        return
    tally.runs += 1
    verdict = ""
    try:
        want = expected_rows(spec, spec["views"][info.index], notes, this or base.path)
    except (Unsupported, KeyError, TypeError):
        pass
    else:
        tally.checked += 1
        tally.nonempty += bool(want)
        verdict = "  checked: same rows" if want == got else "  checked: DIFFERENT"
        if want != got:
            problems.append(f"{label}: expected {want[:5]}…, got {got[:5]}…")
    print(f"{label}: {len(got)} rows{verdict}")


def _report(reader: SnapshotReader, vault: Path, notes: dict[str, Note], min_checked: int) -> int:
    listing = vault_base(reader, BaseRequest(limit=500)).data.bases or []
    embeds = _embeds(reader, notes)
    tally = _Tally()
    problems: list[str] = []
    constructs: Counter[str] = Counter()
    for base in listing:
        mine = embeds.get(base.path, [])
        print(f"{base.path}" + (f"  (embedded {len(mine)}×)" if mine else ""))
        spec = yaml.safe_load((vault / base.path).read_text(encoding="utf-8")) if base.kind == "file" else {}
        for info in base.views or []:
            shown = {n for n, v in mine if v == info.name or (v is None and info.index == 0)}
            for this in [None, *sorted(shown)]:
                _one(reader, base, info, this, spec, notes, tally, problems, constructs)
    print(
        f"\n{tally.runs} runs, {tally.refused} refused, {tally.checked} checked independently "
        f"({tally.nonempty} with rows)"
    )
    for name, count in constructs.most_common():
        print(f"  refused {count}×: {name}")
    if tally.nonempty < min_checked:
        problems.append(f"only {tally.nonempty} views with rows checked independently (want {min_checked})")
    for problem in problems:
        print("PROBLEM", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
