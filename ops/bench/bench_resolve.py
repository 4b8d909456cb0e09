"""Name resolution and section lookups at scale: p50/p99 per lookup kind (not in CI).

    nice .venv/bin/python ops/bench/bench_resolve.py --notes 100000 --work /tmp/bench-resolve
    .venv/bin/python ops/bench/bench_resolve.py --vault V --state S      # an existing index

Generates the vault with ops/gen_vault.py (seed 1) plus 100 notes with titles and aliases
(`bench-aliases/`, which the generator does not write) and indexes it once (both reused
when present). Then, with a fresh SnapshotReader per run:
- `first_names_ms`: the first name lookup, which builds the names of every segment
  (segment_names.py; later snapshots reuse them);
- per kind, p50/p99 wall and CPU ms of `--requests` lookups through the two entry points
  every tool uses: `resolve_on_disk` (file tools: read, scan, stat, get; the path steps
  look at the file system first) and `resolve_indexed` (per-note contracts; one snapshot
  pin per call, as a request pays). Kinds: exact, case, extension, wikilink, basename,
  title, alias, not_found (close names through the search engine) and section (a heading
  by text in a resolved note).
Freshness is pinned (no stat scan of the vault inside the timings). Prints the median over
--runs runs as JSON, with the load average before and after.
"""

from __future__ import annotations

import contextlib
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import benchkit
from bench_orientation import _prepare as prepare_vault  # noqa: E402  (the same generated vault)

from vault_agent.config import Settings
from vault_agent.errors import VaultAgentError
from vault_agent.indexer.build import build_index
from vault_agent.paths import vault_for_settings
from vault_agent.publish import remove_publish_listener
from vault_agent.query.note_names import resolve_indexed, resolve_on_disk
from vault_agent.query.section_read import SectionAddress, find_section
from vault_agent.query.snapshot import SnapshotReader

REPO = Path(__file__).resolve().parents[2]

ALIAS_NOTES = 100


def alias_note(i: int) -> str:
    return (
        f"---\ntitle: Bench Title {i}\naliases: [Alias Name {i}, Other Alias {i}]\n---\n"
        f"# Bench {i}\n\n## Install\n\nSteps.\n\n## Usage\n\nMore.\n"
    )


def _prepare(work: Path, notes: int, vault: Path | None, state: Path | None) -> Settings:
    """bench_orientation's generated, indexed vault, plus the notes with titles and aliases
    (an incremental index adds them once)."""
    settings = prepare_vault(work, notes, vault, state)
    if vault is not None and state is not None:
        return settings  # a given index is measured as it is (titles/aliases as they come)
    extra = Path(settings.vault) / "bench-aliases"
    extra.mkdir(exist_ok=True)
    missing = [i for i in range(ALIAS_NOTES) if not (extra / f"alias-note-{i}.md").exists()]
    for i in missing:
        (extra / f"alias-note-{i}.md").write_text(alias_note(i), encoding="utf-8")
    if missing:
        build_index(settings)
    return settings


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _time(fn: Callable[[str], Any], inputs: list[str]) -> dict[str, float]:
    wall, cpu = [], []
    for text in inputs:
        w0, c0 = time.perf_counter(), time.process_time()
        with contextlib.suppress(VaultAgentError):  # not_found (a rare ambiguous name) answers too
            fn(text)
        wall.append((time.perf_counter() - w0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    return {
        "p50_ms": round(_pct(wall, 0.5), 3),
        "p99_ms": round(_pct(wall, 0.99), 3),
        "cpu_p50_ms": round(_pct(cpu, 0.5), 3),
    }


def _inputs(reader: SnapshotReader, n: int, seed: int) -> dict[str, list[str]]:
    """Names of each kind, drawn from the snapshot (unique file names only)."""
    with reader.acquire() as view:
        rows = view.con.execute("SELECT path, title FROM notes ORDER BY path").fetchall()
    stems: dict[str, int] = {}
    for path, _ in rows:
        stem = path.rsplit("/", 1)[-1][:-3].casefold()
        stems[stem] = stems.get(stem, 0) + 1
    rng = random.Random(seed)
    plain = [(p, t) for p, t in rows if stems[p.rsplit("/", 1)[-1][:-3].casefold()] == 1]
    picks = rng.sample(plain, min(n, len(plain)))
    titled = [t for p, t in rows if t and t.casefold() != p.rsplit("/", 1)[-1][:-3].casefold()]
    titles = rng.sample(titled, min(n, len(titled)))
    names = [p.rsplit("/", 1)[-1][:-3] for p, _ in picks]
    return {
        "exact": [p for p, _ in picks],
        "case": [p.upper() for p, _ in picks],
        "extension": [p[:-3] for p, _ in picks],
        "wikilink": [f"[[{name}]]" for name in names],
        "basename": names,
        "title": titles,
        "alias": [f"Alias Name {rng.randrange(ALIAS_NOTES)}" for _ in range(n)],
        "not_found": [name[:-2] + "xq" + name[-1:] for name in names],
    }


def run_once(settings: Settings, requests: int, seed: int) -> dict[str, Any]:
    vault = vault_for_settings(settings)
    # Freshness pinned: the first acquire would otherwise stat the whole vault, which is
    # the snapshot's cost (bench_orientation.py), not resolution's.
    reader = SnapshotReader(settings, vault, freshness=lambda _m: "fresh")
    try:
        inputs = _inputs(reader, requests, seed)
        t0 = time.perf_counter()
        resolve_on_disk(vault, reader, inputs["title"][0], "read")
        first = round((time.perf_counter() - t0) * 1000, 1)
        out: dict[str, Any] = {"first_names_ms": first, "file_tools": {}, "index_tools": {}}

        def indexed(text: str) -> None:
            with reader.acquire() as view:
                resolve_indexed(reader, view, text, "get-note-outline")

        for kind, texts in inputs.items():
            out["file_tools"][kind] = _time(lambda t: resolve_on_disk(vault, reader, t, "read"), texts)
            out["index_tools"][kind] = _time(indexed, texts)
        address = SectionAddress(heading="Install")
        sections = [f"bench-aliases/alias-note-{i % ALIAS_NOTES}.md" for i in range(requests)]
        out["section"] = _time(lambda p: find_section(reader, p, address, b""), sections)
        return out
    finally:
        remove_publish_listener(Path(settings.index_dir), reader.preload)
        reader.close()


def _median(runs: list[dict[str, Any]]) -> Any:
    first = runs[0]
    if isinstance(first, dict):
        return {k: _median([r[k] for r in runs]) for k in first}
    return round(statistics.median(runs), 3)


def main() -> None:
    parser = benchkit.parser(__doc__)
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "bench-resolve")
    parser.add_argument("--vault", type=Path)
    parser.add_argument("--state", type=Path)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    # --smoke: a throw-away work dir, so a kept 100k-note vault is never mixed with 40 notes
    args = benchkit.parse(parser, smoke={"notes": 40, "runs": 1, "requests": 3, "work": None})
    with benchkit.workdir("bench-resolve", keep=args.work) as work:
        settings = _prepare(work, args.notes, args.vault, args.state)
        load_before = benchkit.load_line()
        runs = [run_once(settings, args.requests, args.seed + i) for i in range(args.runs)]
    result = {
        "notes": args.notes,
        "requests": args.requests,
        "runs": args.runs,
        "load_before": load_before,
        **_median(runs),
    }
    benchkit.report(result)  # with the load after


if __name__ == "__main__":
    main()
