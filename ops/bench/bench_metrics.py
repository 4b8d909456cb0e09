"""Recall metrics shared by the retrieval benches (bench_retrieval.py and its lab).

Per query: r@k = a target among the first k distinct notes (bridge questions: the share of
their targets among the first k), mrr = 1 / rank of the first target (0 when none is in the
list). Made-up queries (kind `nonsense`) have no targets: `refused` = 1 when the answer
holds no confident result (no hits, or NO_CONFIDENT_MATCH).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

KS = (1, 5, 10)

__all__ = ["KS", "kind_of", "markdown_table", "score", "summarize"]


def kind_of(q: dict[str, Any]) -> str:
    return str(q.get("kind", "paraphrase"))


def score(targets: list[str], ranked: list[str] | None, kind: str) -> dict[str, float]:
    """The metrics of one answer (`ranked`: distinct notes in rank order; None: refused)."""
    if kind == "nonsense":
        return {"refused": float(not ranked)}
    ranked = ranked or []
    out: dict[str, float] = {}
    for k in KS:
        found = [t in ranked[:k] for t in targets]
        out[f"r@{k}"] = sum(found) / len(found) if kind == "bridge" else float(any(found))
    ranks = [ranked.index(t) + 1 for t in targets if t in ranked]
    out["mrr"] = 1.0 / min(ranks) if ranks else 0.0
    return out


def summarize(rows: Iterable[dict[str, float]]) -> dict[str, float]:
    """Means of each metric over the rows that have it, and n."""
    rows = list(rows)
    if not rows:
        return {}
    keys = sorted({k for r in rows for k in r})
    means = {k: round(sum(r[k] for r in rows if k in r) / max(1, sum(k in r for r in rows)), 3) for k in keys}
    return means | {"n": len(rows)}


def markdown_table(report: dict[str, dict[str, dict[str, float]]], modes: list[str]) -> str:
    """`report[set][f"{kind}|{mode}"]` as one row per set x kind: r@5 / r@10 / MRR (nonsense:
    share refused) per mode, side by side."""
    lines = ["| set | class (n) | " + " | ".join(modes) + " |", "| --- | --- |" + " --- |" * len(modes)]
    for set_name, per in report.items():
        kinds = sorted({key.split("|")[0] for key in per}, key=lambda k: (k == "all", k))
        for kind in kinds:
            cells = []
            n = 0
            for mode in modes:
                m = per.get(f"{kind}|{mode}", {})
                n = int(m.get("n", n))
                if "refused" in m:
                    cells.append(f"refused {m['refused']:.3f}")
                elif m:
                    cells.append(f"{m['r@5']:.3f} / {m['r@10']:.3f} / {m['mrr']:.3f}")
                else:
                    cells.append("–")
            lines.append(f"| {set_name} | {kind} ({n}) | " + " | ".join(cells) + " |")
    return "\n".join(lines)
