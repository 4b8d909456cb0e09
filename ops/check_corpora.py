#!/usr/bin/env python3
"""Index each real corpus and compare what the index says with its `stats.json`.

    python ops/check_corpora.py [CORPORA_DIR] [--parse-only]

CORPORA_DIR defaults to ../shared/corpora next to the repository; every sub-folder with a
`vault/` and a `stats.json` is checked. The index is built with the engine's public API
(`build_index(settings, full=True)`) into a temporary state dir and read back with DuckDB
from the Parquet segments its manifest names (`--parse-only` skips the engine and runs
`parse_note` over `Vault.walk()`). Prints a table per corpus; always exits 0 (a report).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import duckdb  # noqa: E402

from vault_agent.config import Settings  # noqa: E402
from vault_agent.contracts import SEGMENTS_DIR, Manifest  # noqa: E402

Rows = tuple[list[dict[str, Any]], list[dict[str, Any]]]  # notes, headings


def rows_from_index(vault: Path, index_dir: Path) -> Rows:
    """Build the index and read the live notes/headings rows of its manifest."""
    from vault_agent.indexer.build import build_index

    manifest: Manifest = build_index(Settings(vault=vault, index_dir=index_dir), full=True)
    con = duckdb.connect()
    seg_dir = index_dir / SEGMENTS_DIR
    newer: set[str] = set()
    parts: dict[str, list[str]] = {"notes": [], "headings": []}
    # A path's live rows are in the newest segment that holds it, unless it tombstones it.
    for seg in sorted(manifest.segments, key=lambda s: s.segment_id, reverse=True):
        notes_file = str(seg_dir / seg.files["notes"])
        held = {r[0] for r in con.execute("SELECT path FROM read_parquet(?)", [notes_file]).fetchall()}
        dead = sorted((held & newer) | set(seg.deleted))
        newer |= held
        con.execute(f"CREATE TEMP TABLE dead_{seg.segment_id} (path VARCHAR)")
        if dead:
            con.executemany(f"INSERT INTO dead_{seg.segment_id} VALUES (?)", [(p,) for p in dead])
        for table in parts:
            file = str(seg_dir / seg.files[table]).replace("'", "''")
            parts[table].append(
                f"SELECT * FROM read_parquet('{file}') WHERE path NOT IN (SELECT path FROM dead_{seg.segment_id})"
            )
    out: list[list[dict[str, Any]]] = []
    for table, cols in (
        ("notes", "path, fm_status, fm_error, tags, type_values, status_values, heading_count"),
        ("headings", "path, level"),
    ):
        if not parts[table]:
            out.append([])
            continue
        cur = con.execute(f"SELECT {cols} FROM ({' UNION ALL '.join(parts[table])}) ORDER BY ALL")
        names = [d[0] for d in cur.description]
        out.append([dict(zip(names, row, strict=True)) for row in cur.fetchall()])
    con.close()
    return out[0], out[1]


def rows_from_parser(vault_root: Path) -> Rows:
    """The same rows straight from parse_note over the vault walk (no engine)."""
    from vault_agent.indexer.parse import parse_note
    from vault_agent.paths import Vault

    vault = Vault(vault_root)
    notes: list[dict[str, Any]] = []
    headings: list[dict[str, Any]] = []
    for entry in vault.walk():
        raw = vault.read_bytes(vault.resolve(entry.rel, match="exact"))
        parsed = parse_note(entry.rel, raw, entry.mtime_ns, entry.size)
        notes.append(parsed.note)
        headings.extend(parsed.headings)
    return notes, headings


def actual_stats(notes: list[dict[str, Any]], headings: list[dict[str, Any]]) -> dict[str, Any]:
    def counted(values: Iterable[str]) -> list[list[Any]]:
        return [[k, v] for k, v in sorted(Counter(values).items(), key=lambda kv: (-kv[1], kv[0]))]

    top = counted(n["path"].split("/", 1)[0] if "/" in n["path"] else "(root)" for n in notes)
    most = max(notes, key=lambda n: (n["heading_count"], [-ord(c) for c in n["path"]]), default=None)
    return {
        "notes": len(notes),
        "top_level": top,
        "fm_present": sum(n["fm_status"] != "none" for n in notes),
        "fm_invalid": sum(n["fm_status"] == "invalid" for n in notes),
        "tags": counted(t for n in notes for t in n["tags"]),
        "notes_with_tags": sum(bool(n["tags"]) for n in notes),
        "type_values": counted(v for n in notes for v in n["type_values"]),
        "status_values": counted(v for n in notes for v in n["status_values"]),
        "headings_total": len(headings),
        "headings_by_level": counted(f"h{h['level']}" for h in headings),
        "notes_without_headings": sum(n["heading_count"] == 0 for n in notes),
        "max_headings_in_note": {"count": most["heading_count"], "path": most["path"]} if most else None,
    }


def expected_stats(stats: dict[str, Any]) -> dict[str, Any]:
    return {
        "notes": stats["notes"],
        "top_level": stats["top_level"],
        "fm_present": stats["fm_present"],
        "fm_invalid": len(stats["fm_failed"]) + len(stats["fm_not_mapping"]),
        "tags": stats["tags"],
        "notes_with_tags": stats["notes_with_tags"],
        "type_values": stats["type_values"],
        "status_values": stats["status_values"],
        "headings_total": stats["headings_total"],
        "headings_by_level": stats["headings_by_level"],
        "notes_without_headings": stats["notes_without_headings"],
        "max_headings_in_note": stats["max_headings_in_note"],
    }


def differences(expected: dict[str, Any], actual: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(metric, expected, actual) for every value that differs; count lists per key."""
    out: list[tuple[str, str, str]] = []
    for metric, want in expected.items():
        got = actual[metric]
        if isinstance(want, list):
            want_map = {str(k): v for k, v in want}
            got_map = {str(k): v for k, v in got}
            for key in sorted(set(want_map) | set(got_map)):
                if want_map.get(key) != got_map.get(key):
                    out.append((f"{metric}[{key}]", str(want_map.get(key, "-")), str(got_map.get(key, "-"))))
        elif want != got:
            out.append((metric, str(want), str(got)))
    return out


def table(rows: list[tuple[str, str, str]]) -> str:
    head = ("metric", "stats.json", "index")
    widths = [min(60, max(len(r[i]) for r in [head, *rows])) for i in range(3)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        lines.append("  ".join(c[:60].ljust(w) for c, w in zip(row, widths, strict=True)))
    return "\n".join(lines)


def check(corpus: Path, parse_only: bool, work: Path) -> None:
    import json

    stats = json.loads((corpus / "stats.json").read_text(encoding="utf-8"))
    vault = corpus / stats.get("root", "vault")
    try:
        if parse_only:
            notes, headings = rows_from_parser(vault)
        else:
            notes, headings = rows_from_index(vault, work / corpus.name)
    except Exception as exc:  # a report: say what failed and go on with the next corpus
        print(f"== {corpus.name}: could not build ({type(exc).__name__}: {exc})\n")
        return
    expected = expected_stats(stats)
    actual = actual_stats(notes, headings)
    diffs = differences(expected, actual)
    source = "parse_note" if parse_only else "index"
    print(f"== {corpus.name}: {actual['notes']} notes, {actual['headings_total']} headings ({source})")
    if diffs:
        print(table(diffs))
    else:
        print("no differences")
    print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpora", nargs="?", type=Path, default=REPO.parent / "shared" / "corpora")
    parser.add_argument(
        "--parse-only", action="store_true", help="skip the engine; parse_note over Vault.walk()"
    )
    args = parser.parse_args(argv)
    corpora = sorted(p for p in args.corpora.glob("*/") if (p / "stats.json").is_file())
    if not corpora:
        print("no corpora found (folders with stats.json)")
        return 0
    with tempfile.TemporaryDirectory(prefix="check-corpora-") as tmp:
        for corpus in corpora:
            check(corpus, args.parse_only, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
