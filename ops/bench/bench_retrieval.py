"""Retrieval quality of `search` (and `vault_find`): recall@1/@3/@10 over distinct notes.

    .venv/bin/python ops/bench/bench_retrieval.py [--work /tmp/bench-retrieval] [--modes lexical]

Sets measured (each vault is indexed once into --work, outside the vault):
- dev: ../shared/bench/retrieval-dev.json on its vault, recall per query kind and per mode;
- titles: every note of each shared corpus, its title (frontmatter `title`, else the file
  stem as SPEC) as the query, recall@1 of the note itself;
- cjk: the synthetic CJK set of fixtures/search_cjk (long natural-language questions,
  short keyword queries, titles);
- find: the note named by vault_find's first suggested vault_read, per set (dev, cjk);
- --paraphrase: ops/bench/paraphrase-dev.json and paraphrase-holdout.json (their vaults
  embedded for real with --embed): default-mode search recall and vault_find's first read;
- --typos: every title of each shared corpus with one typo in its longest word
  (with_typo), r@1 of the note itself per mode, on the states --work already holds;
- --sets a.json,b.json (with --find-only: only vault_find): query sets in the paraphrase/holdout2 format (`sets` of
  {vault: "shared:<corpus>" | "fixture:<dir>" | "inline:<name>" with `notes` {path: text} |
  "git:<owner>/<name>@<commit>" with `paths` (bench_vaults.py), queries [{q, targets, kind?}]}),
  recall per kind and per --modes (group note), plus vault_find: first read right, `ready`
  rate, and ready-and-right (first read right when ready);
- --sets ... --classes: the issue-22 report, per set x class x mode: r@1/@5/@10 and MRR
  (bridge: share of targets), made-up queries refused, translated copies in the top 5
  (bench_metrics.py); dev and held-out side by side:
      --sets ops/bench/dev3.json,ops/bench/holdout3.json --classes --embed --modes lexical,semantic,hybrid
- --lab dev,holdout,public: the issue-29 tables (retrieval_lab.py): per class, on the dev
  sets (dev3.json + retrieval-dev.json), the held-out set (holdout3.json) and the public
  benchmarks (public_sets.py: LoCoMo, XQuAD), lexical / semantic / plain RRF / shipped
  r@5 / r@10 / MRR (nonsense: share refused), from lists cached in --work per (model,
  passage shape, vault): reruns cost only the rankings. --model use|e5-nano, --shape
  (retrieval_lab.passages_of), --modes any of lab_rankings.rankings() (default the four);
  --rules: every pin of the shipped fusion alone on plain RRF and taken out of it;
  --fusion: RRF's k and a depth cut per list (lab_rankings.FUSION_VARIANTS);
  --lab dev-long: the dev set with long notes (long_sets.py).
      --lab dev,holdout,public --work W [--model use] [--shape shipped]
Recall counts distinct notes in rank order (chunk hits collapse to their note). Prints
JSON. Not part of CI; quality numbers are deterministic (no timing).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import benchkit

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "ops" / "bench"))

from bench_metrics import kind_of, markdown_table, score, summarize  # noqa: E402
from bench_vaults import vault_key, vault_path  # noqa: E402

from vault_agent.config import Settings  # noqa: E402
from vault_agent.indexer.build import build_index  # noqa: E402
from vault_agent.paths import vault_for_settings  # noqa: E402
from vault_agent.query import search as search_mod  # noqa: E402
from vault_agent.query.snapshot import SnapshotReader  # noqa: E402

CORPORA = ["obsidian-tasks-docs", "kepano-obsidian", "eips"]
KS = (1, 3, 5, 10)


def _embed(settings: Settings, timeout_s: float = 1800.0) -> None:
    """Run the real writer until its background embedder has embedded every note."""
    from vault_agent.freshness import read_current_manifest
    from vault_agent.indexer.engine import Writer
    from vault_agent.semantic import semantic_state

    def done() -> bool:
        manifest = read_current_manifest(settings.index_dir)
        state = semantic_state(manifest) if manifest is not None else None
        return state is not None and state.embedded_notes >= state.live_notes

    with Writer(settings, watch=False):
        deadline = time.monotonic() + timeout_s
        while not done() and time.monotonic() < deadline:
            time.sleep(0.2)  # a benchmark, not a test: poll the committed manifest


REUSE = False  # --reuse: keep the state dirs of an earlier run with the same code
EMBED = False  # --embed: hybrid/semantic modes get real embeddings (the writer's embedder)


def _reader(vault: Path, work: Path, name: str) -> tuple[SnapshotReader, Settings]:
    state = work / name
    settings = Settings(vault=vault, index_dir=state)
    if REUSE and (state / "CURRENT").exists():  # --reuse: an index (and embeddings) of an earlier run
        return SnapshotReader(settings, vault_for_settings(settings), freshness=lambda _m: "fresh"), settings
    if state.exists():
        shutil.rmtree(state)
    build_index(settings, full=True)
    if EMBED:
        _embed(settings)
    return SnapshotReader(settings, vault_for_settings(settings), freshness=lambda _m: "fresh"), settings


def ranked_notes(reader: SnapshotReader, q: str, mode: str | None, cache: dict[Any, Any]) -> list[str]:
    """Distinct note paths in rank order (at most 50 chunk hits, or note-grouped when offered)."""
    del cache  # the engine keeps its own per-snapshot handles
    request = (
        search_mod.SearchRequest(q, 50) if mode is None else search_mod.SearchRequest(q, 50, mode, "note")
    )
    out = search_mod.search(reader, request)
    return list(dict.fromkeys(r.path for r in out.data.results))


def _recall(rank_lists: list[tuple[list[str], list[str]]]) -> dict[str, float]:
    n = max(1, len(rank_lists))
    return {
        f"r@{k}": round(sum(any(t in ranked[:k] for t in targets) for targets, ranked in rank_lists) / n, 3)
        for k in KS
    } | {"n": len(rank_lists)}


def _titles(reader: SnapshotReader) -> list[tuple[str, str]]:
    with reader.acquire() as view:
        rows = view.con.execute("SELECT path, title FROM notes ORDER BY path").fetchall()
    return [(str(p), str(t or Path(p).stem)) for p, t in rows]


def _find_first_read(reader: SnapshotReader, settings: Settings, q: str, cache: dict[Any, Any]) -> str | None:
    from vault_agent.query.find import FindRequest, vault_find

    out = vault_find(vault_for_settings(settings), reader, FindRequest(q), cache)
    dump = out.data.model_dump()
    for act in dump.get("next_actions", []) or []:
        params = act.get("params") or {}
        if act.get("type") == "vault_read" and params.get("path"):
            return str(params["path"])
    return None


def run_set(reader: SnapshotReader, queries: list[dict[str, Any]], modes: list[str | None]) -> dict[str, Any]:
    cache: dict[Any, Any] = {}
    out: dict[str, Any] = {}
    for mode in modes:
        per_kind: dict[str, list[tuple[list[str], list[str]]]] = defaultdict(list)
        for item in queries:
            ranked = ranked_notes(reader, item["q"], mode, cache)
            per_kind[item["kind"]].append((item["targets"], ranked))
            per_kind["all"].append((item["targets"], ranked))
        out[str(mode or "default")] = {k: _recall(v) for k, v in sorted(per_kind.items())}
    return out


def _set_vault(s: dict[str, Any], work: Path) -> Path:
    return vault_path(s, work)


def _sets_of(file: Path) -> list[dict[str, Any]]:
    """The `sets` of a set file; retrieval-dev.json and fixtures/search_cjk/queries.json
    (one vault, top-level `queries`) become one set."""
    doc = json.loads(file.read_text())
    if "sets" in doc:
        return list(doc["sets"])
    vault = doc.get("vault", "")
    if vault.startswith("corpora/"):
        return [{"vault": "shared:" + vault.split("/")[1], "queries": doc["queries"]}]
    folder = file.resolve().parent / "vault"
    where = folder.relative_to(REPO) if folder.is_relative_to(REPO) else folder
    return [{"vault": f"repo:{where}", "queries": doc["queries"]}]


def _find_outcome(
    reader: SnapshotReader, settings: Settings, q: str, cache: dict[Any, Any]
) -> tuple[list[str], str]:
    """(the notes of vault_find's suggested reads in order, integration_status)."""
    from vault_agent.query.find import FindRequest, vault_find

    dump = vault_find(vault_for_settings(settings), reader, FindRequest(q), cache).data.model_dump()
    reads = [str(a["params"]["path"]) for a in dump["next_actions"] if a.get("type") == "vault_read"]
    return reads, str(dump["summary"]["integration_status"])


def _start(work: Path, embed: bool) -> dict[str, tuple[SnapshotReader, Settings]]:
    """Set EMBED, make the work dir; the (empty) readers by vault a report fills."""
    global EMBED
    EMBED = embed
    work.mkdir(parents=True, exist_ok=True)
    return {}


def sets_report(work: Path, files: list[str], modes: list[str | None], embed: bool) -> dict[str, Any]:
    """Recall per set file x kind x mode, and vault_find's first read / ready rate per kind."""
    readers = _start(work, embed)
    report: dict[str, Any] = {}
    for f in files:
        per: dict[str, dict[str, list[tuple[list[str], list[str]]]]] = defaultdict(lambda: defaultdict(list))
        finds: dict[str, list[tuple[bool, bool, bool]]] = defaultdict(list)
        for s in _sets_of(Path(f)):
            if s["vault"] not in readers:
                readers[s["vault"]] = _reader(_set_vault(s, work), work, vault_key(s))
            reader, settings = readers[s["vault"]]
            cache: dict[Any, Any] = {}
            for item in s["queries"]:
                kinds = ("all", item.get("kind", "paraphrase"), "lang:" + item.get("lang", "?"))
                for mode in modes:
                    ranked = ranked_notes(reader, item["q"], mode, cache)
                    for k in kinds:
                        per[str(mode or "default")][k].append((item["targets"], ranked))
                reads, status = _find_outcome(reader, settings, item["q"], cache)
                first_right = bool(reads) and reads[0] in item["targets"]
                any_right = any(r in item["targets"] for r in reads)
                for k in kinds:
                    finds[k].append((first_right, status == "ready", any_right))
        rep: dict[str, Any] = {m: {k: _recall(v) for k, v in sorted(kk.items())} for m, kk in per.items()}
        rep["find"] = {
            k: {
                "first_read": round(sum(r for r, _, _ in v) / len(v), 3),
                "ready": round(sum(d for _, d, _ in v) / len(v), 3),
                # ready = read these (<= 3) ranges, then stop: right when a target is among them
                "ready_right": round(sum(a for _, d, a in v if d) / max(1, sum(d for _, d, _ in v)), 3),
                "n": len(v),
            }
            for k, v in sorted(finds.items())
        }
        report[Path(f).stem] = rep
    for r, _ in readers.values():
        r.close()
    return report


def answer_notes(reader: SnapshotReader, q: str, mode: str | None) -> list[str] | None:
    """Distinct notes of a search answer (note-grouped, 50), None when it says
    NO_CONFIDENT_MATCH (made-up words must get no confident result)."""
    out = search_mod.search(reader, search_mod.SearchRequest(q, 50, mode, "note"))
    if any(w.code == "NO_CONFIDENT_MATCH" for w in out.warnings):
        return None
    return list(dict.fromkeys(r.path for r in out.data.results))


def classes_report(work: Path, files: list[str], modes: list[str], embed: bool) -> dict[str, Any]:
    """Per set file x query class x mode: r@1/@5/@10 and MRR (bench_metrics.score), the share
    of made-up queries refused, and for English questions on obsidian-help the number of
    other-language notes in the top 5 (`crowd@5`: translated copies crowding the answer)."""
    readers = _start(work, embed)
    report: dict[str, Any] = {}
    for f in files:
        per: dict[str, list[dict[str, float]]] = defaultdict(list)
        for s in _sets_of(Path(f)):
            key = vault_key(s)
            if key not in readers:
                readers[key] = _reader(_set_vault(s, work), work, key)
            reader, _ = readers[key]
            for item in s["queries"]:
                kind = kind_of(item)
                for mode in modes:
                    notes = answer_notes(reader, item["q"], mode)
                    m = score(item["targets"], notes, kind)
                    if kind != "nonsense" and item.get("lang") == "en" and "obsidian-help" in key:
                        m["crowd@5"] = float(sum(not n.startswith("en/") for n in (notes or [])[:5]))
                    per[f"{kind}|{mode}"].append(m)
                    if kind != "nonsense":
                        per[f"all|{mode}"].append({k: m[k] for k in ("r@1", "r@5", "r@10", "mrr")})
        report[Path(f).stem] = {k: summarize(v) for k, v in sorted(per.items())}
    for r, _ in readers.values():
        r.close()
    return report


def with_typo(title: str, i: int) -> str | None:
    """The title with one typo in its longest word (>= 5 letters): a deleted letter (even i)
    or two letters swapped (odd i), never the first letter; None when no word qualifies."""
    words = title.split()
    j = max(range(len(words)), key=lambda k: (len(words[k]), -k))
    w = words[j]
    if len(w) < 5 or not w.isalpha():
        return None
    p = 1 + (i % (len(w) - 2))
    words[j] = w[:p] + w[p + 1 :] if i % 2 == 0 else w[:p] + w[p + 1] + w[p] + w[p + 2 :]
    return " ".join(words)


def typo_report(work: Path, modes: list[str | None]) -> dict[str, Any]:
    """Title-as-query r@1 with one typo per title, per shared corpus and mode."""
    out: dict[str, Any] = {}
    for corpus in CORPORA:
        reader, _ = _reader(SHARED / "corpora" / corpus / "vault", work, corpus)
        pairs = [(with_typo(t, i), p) for i, (p, t) in enumerate(_titles(reader))]
        qs = [{"q": q, "targets": [p], "kind": "typo"} for q, p in pairs if q]
        out[f"typo-titles/{corpus}"] = run_set(reader, qs, modes)
        reader.close()
    return out


def paraphrase_report(work: Path, embed: bool) -> dict[str, Any]:
    global EMBED
    EMBED = embed
    work.mkdir(parents=True, exist_ok=True)
    readers: dict[str, tuple[SnapshotReader, Settings]] = {}
    report: dict[str, Any] = {}
    for name in ("dev", "holdout"):
        pairs_search: list[tuple[list[str], list[str]]] = []
        pairs_find: list[tuple[list[str], list[str]]] = []
        for s in json.loads((REPO / f"ops/bench/paraphrase-{name}.json").read_text())["sets"]:
            kind, rel = s["vault"].split(":", 1)
            if s["vault"] not in readers:
                vault = SHARED / "corpora" / rel / "vault" if kind == "shared" else REPO / rel
                readers[s["vault"]] = _reader(vault, work, rel.replace("/", "_"))
            reader, settings = readers[s["vault"]]
            cache: dict[Any, Any] = {}
            for q in s["queries"]:
                pairs_search.append((q["targets"], ranked_notes(reader, q["q"], None, cache)))
                first = _find_first_read(reader, settings, q["q"], cache)
                pairs_find.append((q["targets"], [first] if first else []))
        report[name] = {"search_default": _recall(pairs_search), "find_first_read": _recall(pairs_find)}
    for r, _ in readers.values():
        r.close()
    return report


def lab_report(args: Any) -> None:
    """--lab: per group, a markdown table of class x ranking (r@5 / r@10 / MRR) and JSON."""
    import lab_rankings
    import retrieval_lab as lab

    work = Path(args.work)
    model = lab.MODELS[args.model]()
    available = lab_rankings.rankings(model.product_id)
    names = (
        [m for m in args.modes.split(",") if m] if args.modes != "lexical" else list(lab_rankings.RANKINGS)
    )
    if args.rules:
        names = [*lab_rankings.RANKINGS, *lab_rankings.PIN_VARIANTS]
    if args.fusion:
        names = [*lab_rankings.RANKINGS, *lab_rankings.FUSION_VARIANTS]
    chosen = {n: available[n] for n in names}
    groups = lab.SMOKE_GROUPS if args.smoke else lab.GROUPS
    vaults: dict[str, lab.LabVault] = {}
    report: dict[str, Any] = {}
    if args.calibrate:
        import lab_calibrate

        sets = lab.load_group(groups["dev"] + groups["dev-extra"], work, smoke=args.smoke)
        found = lab_calibrate.calibrate(sets, vaults, work, model, args.shape, args.calibrate)
        print(json.dumps(found, indent=1))
        for v in vaults.values():
            v.close()
        return
    for group in args.lab.split(","):
        sets = lab.load_group(groups[group], work, smoke=args.smoke)
        per = lab.run_group(sets, vaults, work, model, args.shape, chosen)
        report[group] = per
        print(f"\n### {group} ({args.model}, passages {args.shape})\n")
        print(markdown_table({group: per}, names))
    report["cost"] = lab.cost_of(work, model, args.shape, vaults)
    for v in vaults.values():
        v.close()
    (work / f"lab-{args.model}-{args.shape}.json").write_text(json.dumps(report, indent=1))
    benchkit.report({"lab": args.lab, "model": args.model, "shape": args.shape, **report["cost"]})


def main() -> None:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "bench-retrieval"))
    ap.add_argument("--modes", default="lexical")
    ap.add_argument("--skip-titles", action="store_true")
    ap.add_argument("--embed", action="store_true", help="embed every note first (hybrid, semantic modes)")
    ap.add_argument(
        "--paraphrase", action="store_true", help="only our paraphrase sets: search and vault_find"
    )
    ap.add_argument("--reuse", action="store_true", help="reuse the state dirs in --work")
    ap.add_argument(
        "--typos", action="store_true", help="typo'd titles of each corpus (reuses --work states)"
    )
    ap.add_argument("--sets", default="", help="comma-separated query set files (holdout2.json format)")
    ap.add_argument(
        "--classes",
        action="store_true",
        help="with --sets: r@1/5/10, MRR per class and mode (nonsense: share refused); prints a markdown table",
    )
    # --smoke: the query-set path over a synthetic fixture's own questions (no shared corpus)
    ap.add_argument("--lab", default="", help="dev,holdout,public: the per-class tables (retrieval_lab.py)")
    ap.add_argument("--model", default="use", help="--lab: use | e5-nano")
    ap.add_argument("--shape", default="shipped", help="--lab: passage shape (retrieval_lab.passages_of)")
    ap.add_argument("--rules", action="store_true", help="--lab: every pin alone on plain RRF and left out")
    ap.add_argument(
        "--fusion", action="store_true", help="--lab: RRF's k and a list depth cut, on plain RRF and shipped"
    )
    ap.add_argument(
        "--calibrate", type=int, default=0, help="--lab: N made-up queries a dev vault (lab_calibrate)"
    )
    args = benchkit.parse(ap, smoke={"sets": str(REPO / "fixtures" / "search_cjk" / "queries.json")})
    if args.lab:
        lab_report(args)
        return
    global REUSE
    REUSE = args.reuse
    if args.typos:
        REUSE = True
        print(json.dumps(typo_report(Path(args.work), [m or None for m in args.modes.split(",")]), indent=1))
        return
    if args.sets and args.classes:
        modes_c = [m for m in args.modes.split(",") if m]
        report_c = classes_report(Path(args.work), args.sets.split(","), modes_c, args.embed)
        print(json.dumps(report_c, indent=1, ensure_ascii=False))
        print(markdown_table(report_c, modes_c))
        return
    if args.sets:
        modes_ = [m or None for m in args.modes.split(",")]
        report_ = sets_report(Path(args.work), args.sets.split(","), modes_, args.embed)
        print(json.dumps(report_, indent=1, ensure_ascii=False))
        return
    if args.paraphrase:
        print(json.dumps(paraphrase_report(Path(args.work), args.embed), indent=1, ensure_ascii=False))
        return
    global EMBED
    EMBED = args.embed
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    modes: list[str | None] = [m or None for m in args.modes.split(",")]
    report: dict[str, Any] = {}
    dev = json.loads((SHARED / "bench/retrieval-dev.json").read_text())
    readers: dict[str, tuple[SnapshotReader, Settings]] = {}
    for corpus in CORPORA if not args.skip_titles else CORPORA[:1]:  # the dev set's vault first
        readers[corpus] = _reader(SHARED / "corpora" / corpus / "vault", work, corpus)
    reader, settings = readers["obsidian-tasks-docs"]
    report["dev"] = run_set(reader, dev["queries"], modes)
    cache: dict[Any, Any] = {}
    report["dev_find_first_read"] = _recall(
        [
            (
                [t for t in q["targets"]],
                [p] if (p := _find_first_read(reader, settings, q["q"], cache)) else [],
            )
            for q in dev["queries"]
        ]
    )
    cjk_file = REPO / "fixtures/search_cjk/queries.json"
    if cjk_file.exists():
        cjk = json.loads(cjk_file.read_text())
        r, s = _reader(REPO / "fixtures/search_cjk/vault", work, "cjk")
        report["cjk"] = run_set(r, cjk["queries"], modes)
        report["cjk_find_first_read"] = _recall(
            [(q["targets"], [p] if (p := _find_first_read(r, s, q["q"], {})) else []) for q in cjk["queries"]]
        )
        r.close()
    if not args.skip_titles:
        for corpus, (r, _) in readers.items():
            pairs = _titles(r)
            qs = [{"q": t, "targets": [p], "kind": "title"} for p, t in pairs if t.strip()]
            report[f"titles/{corpus}"] = run_set(r, qs, modes)
    for r, _ in readers.values():
        r.close()
    print(json.dumps(report, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
