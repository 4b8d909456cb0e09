"""Bases expressions: parse cost of a 200-line `.base` and evaluation cost per row.

    nice .venv/bin/python ops/bench/bench_bases_expr.py [--rows 100000] [--runs 5] [--corpus DIR]

Parse: a generated `.base` of 200 YAML lines (global and view filters, formulas, a summary;
expressions of the shapes real bases use, written for this script) is read with PyYAML,
then every expression parsed and checked (`parse_expression` + `check_supported`); the
figure is the median CPU ms of the expressions' part (and, beside it, of the YAML load).
`--corpus DIR` also parses every `.base` file under DIR (e.g. ../shared/corpora/kepano-obsidian)
and reports how many expressions parse and which constructs are refused.

Evaluation: `--rows` synthetic rows (properties, tags, links), each evaluated for a tag
filter, two property comparisons, a folder filter and one formula (the issue's view); the
figure is the median CPU µs per row for the five expressions together.
"""

from __future__ import annotations

import datetime as dt
import statistics
import sys
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import benchkit

sys.path.insert(0, str(benchkit.REPO))

import yaml  # noqa: E402

from vault_agent.query.bases.budget import Budget  # noqa: E402
from vault_agent.query.bases.expr_ast import Expr  # noqa: E402
from vault_agent.query.bases.expr_errors import ExpressionError  # noqa: E402
from vault_agent.query.bases.expr_parse import parse_expression  # noqa: E402
from vault_agent.query.bases.formulas import FormulaSet, RowFormulas  # noqa: E402
from vault_agent.query.bases.interpret import evaluate  # noqa: E402
from vault_agent.query.bases.support import check_supported  # noqa: E402
from vault_agent.query.bases.values import FileInfo, LinkRef, Value, truthy  # noqa: E402

_FILTERS = [
    'file.hasTag("project")', 'status != "done"', "rating > 3", 'file.inFolder("Projects")',
    '!file.name.contains("Template")', "list(owner).contains(this)", 'file.mtime > now() - "2 weeks"',
    'categories.contains(link("Projects"))', "file.hasLink(this.file)", "priority >= 2 && !archived",
]  # fmt: skip
_FORMULAS = [
    'if(due, (date(due) - today()).days.round(0), "")', "(price / quantity).toFixed(2)",
    'file.ctime.format("YYYY-MM-DD")', "tasks.filter(value.contains(\"todo\")).length",
    '[impact, urgency].reduce(acc + value, 0) / effort', 'title.lower().replace(/\\s+/g, "-")',
    "list(file.tags).filter(value.startsWith(\"#area\")).join(\", \")", 'if(rating, "★".repeat(rating), "")',
]  # fmt: skip


def base_text(lines: int = 200) -> str:
    """A `.base` of about `lines` YAML lines: filters, formulas, views, a summary."""
    out = ["filters:", "  and:"] + [f"    - '{f}'" for f in _FILTERS[:4]]
    out += ["formulas:"] + [f"  f{i}: '{f}'" for i, f in enumerate(_FORMULAS)]
    out += ["summaries:", "  spread: 'values.filter(value.isType(\"number\")).stddev()'", "views:"]
    view = 0
    while len(out) < lines - 12:
        out += ["  - type: table", f"    name: View {view}", "    filters:", "      or:"]
        out += [f"        - '{_FILTERS[(view + k) % len(_FILTERS)]}'" for k in range(3)]
        out += ["    order:", "      - file.name", "      - formula.f0", "      - rating"]
        out += ["    sort:", "      - property: rating", "        direction: DESC"]
        view += 1
    return "\n".join(out) + "\n"


def expressions(doc: Mapping[str, Any]) -> Iterator[str]:
    """Every expression text of a parsed `.base` (filters, formulas, summaries)."""

    def filters(node: Any) -> Iterator[str]:
        if isinstance(node, str):
            yield node
        elif isinstance(node, Mapping):
            for key in ("and", "or", "not"):
                for item in node.get(key) or []:
                    yield from filters(item)

    yield from filters(doc.get("filters"))
    for section in ("formulas", "summaries"):
        yield from (str(v) for v in (doc.get(section) or {}).values())
    for view in doc.get("views") or []:
        if isinstance(view, Mapping):
            yield from filters(view.get("filters"))


def _cpu_ms(fn: Any, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.process_time()
        fn()
        times.append((time.process_time() - start) * 1000)
    return statistics.median(times)


def _parse_all(texts: Sequence[str]) -> list[Expr]:
    out = []
    for text in texts:
        expr = parse_expression(text)
        check_supported(expr)
        out.append(expr)
    return out


def measure_parse(runs: int) -> dict[str, Any]:
    text = base_text()
    texts = list(expressions(yaml.safe_load(text)))
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return {
        "base_lines": text.count("\n"),
        "expressions": len(texts),
        "parse_check_ms": round(_cpu_ms(lambda: _parse_all(texts), runs * 5), 3),
        "yaml_load_ms": round(_cpu_ms(lambda: yaml.load(text, Loader=loader), runs * 5), 3),
    }


def measure_corpus(root: Path) -> dict[str, Any]:
    parsed, refused = 0, Counter[str]()
    files = sorted(root.rglob("*.base"))
    for path in files:
        for text in expressions(yaml.safe_load(path.read_text(encoding="utf-8")) or {}):
            try:
                check_supported(parse_expression(text))
                parsed += 1
            except ExpressionError as err:
                refused[f"{type(err).__name__}: {err.reason}"] += 1
    return {"corpus_files": len(files), "corpus_expressions_ok": parsed, "corpus_refused": dict(refused)}


@dataclass
class _Scope:
    file: FileInfo
    this: FileInfo | None
    formulas: FormulaSet
    row: RowFormulas = field(init=False)

    def __post_init__(self) -> None:
        self.row = RowFormulas(self.formulas)

    def now(self) -> dt.datetime:
        return dt.datetime(2025, 6, 1, 12, 0, 0)

    def formula(self, name: str, budget: Budget) -> Value:
        return self.row.value(name, self, budget)

    def resolve_link(self, target: str, source: str) -> str | None:
        return target + ".md"

    def file_info(self, path: str) -> FileInfo | None:
        return None

    def backlinks(self, path: str) -> Sequence[str]:
        return ()


def _rows(count: int) -> list[FileInfo]:
    rows = []
    for i in range(count):
        props = {"status": ("todo", "doing", "done")[i % 3], "rating": i % 7, "price": 10 + i % 50, "quantity": 1 + i % 4,
                 "tags": ["project", f"area/{i % 9}"], "due": dt.date(2025, 1 + i % 12, 1 + i % 27)}  # fmt: skip
        folder = "Projects" if i % 4 else "Archive"
        rows.append(FileInfo(f"{folder}/Note {i}.md", 1000 + i, dt.datetime(2024, 1, 1), dt.datetime(2025, 5, 1),
                             (f"#project/{i % 5}",) if i % 2 else ("#other",), (LinkRef("Home", "Home.md"),), (),
                             props))  # fmt: skip
    return rows


def measure_eval(rows: int, runs: int) -> dict[str, Any]:
    filters = [parse_expression(t) for t in ('file.hasTag("project")', 'status != "done"', "rating > 3",
                                              'file.inFolder("Projects")', "formula.ppu")]  # fmt: skip
    formulas = FormulaSet.parse({"ppu": "(price / quantity).toFixed(2)"})
    infos = _rows(rows)

    def run() -> int:
        kept = 0
        for info in infos:
            scope = _Scope(info, None, formulas)
            budget = Budget()
            kept += all(truthy(evaluate(expr, scope, budget=budget)) for expr in filters)
        return kept

    per_row = _cpu_ms(run, runs) * 1000 / rows
    return {"rows": rows, "expressions_per_row": len(filters), "eval_us_per_row": round(per_row, 2)}


def main() -> None:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--corpus", type=Path, default=None)
    args = benchkit.parse(ap, smoke={"rows": 200, "runs": 1, "corpus": None})
    figures = {**measure_parse(args.runs), **measure_eval(args.rows, args.runs)}
    if args.corpus is not None:
        figures.update(measure_corpus(args.corpus))
    benchkit.report(figures)


if __name__ == "__main__":
    main()
