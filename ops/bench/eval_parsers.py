#!/usr/bin/env python3
"""Evaluate Rust-backed CommonMark parsers against indexer/markdown.py (not a dependency).

    pip install --target /tmp/rsparsers markdown-it-pyrs cmarkgfm
    PYTHONPATH=/tmp/rsparsers python ops/bench/eval_parsers.py DIR... [--fuzz 20000 --seed 1] [--oracle]

For every note under each DIR, `parse_note` runs as the indexer runs it, and the block
structure it asks for (`parse_structure`: headings with line, level, text and
body_available; code-block line ranges) is computed by the indexer (comrak since
PARSER_VERSION 3) and by each candidate: markdown-it-py as the indexer used it before, and
markdown-it-pyrs when importable: counts of notes that differ,
CPU seconds of each, and the first differences. `--fuzz N` adds N random documents built
from Markdown edge-case lines; differences only on blank lines of code ranges (invisible:
links are the only users) are counted apart. `--oracle` judges every other difference
with cmark, the CommonMark reference implementation (`cmark_oracle`): which side's heading
lines/levels and non-blank code lines it agrees with. Prints a report; exit 0.
"""

from __future__ import annotations

import bisect
import os
import random
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import benchkit

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from vault_agent.indexer import markdown as M  # noqa: E402
from vault_agent.indexer import parse as P  # noqa: E402
from vault_agent.text import collapse_ws, nfc  # noqa: E402

Structure = M.Structure


def _finish(
    headings: list[M.Heading], heading_at: list[int], events: list[int], code: list[Any]
) -> Structure:
    """body_available exactly as markdown.parse_structure computes it from the events."""
    following, nxt = [len(events)] * len(events), len(events)
    for k in range(len(events) - 1, -1, -1):
        following[k] = nxt
        if events[k] == 0:
            nxt = k
    stack: list[int] = []
    bounds = [len(events)] * len(headings)
    for h, pos in enumerate(heading_at):
        while stack and headings[stack[-1]].level >= headings[h].level:
            bounds[stack.pop()] = pos
        stack.append(h)
    for h, pos in enumerate(heading_at):
        headings[h].body_available = following[pos] < bounds[h]
    return Structure(headings=headings, code_ranges=code)


def pyrs_structure() -> Callable[[str], Structure] | None:
    try:
        import markdown_it_pyrs
    except ImportError:
        return None
    md = markdown_it_pyrs.MarkdownIt("commonmark").enable("table").enable("strikethrough")
    inline = {"text", "code_inline", "html_inline", "text_special", "softbreak", "hardbreak"}
    inline |= {"em", "strong", "link", "image", "s", "autolink"}

    def text(node: Any, parts: list[str]) -> None:
        for c in node.children:
            if c.name in ("softbreak", "hardbreak"):
                parts.append(" ")
            elif "content" in c.meta and not c.children:
                parts.append(c.meta["content"])
            else:
                text(c, parts)

    def parse(src: str) -> Structure:
        data = src.encode("utf-8")
        starts = [0] + [i + 1 for i, b in enumerate(data) if b == 10]
        heads: list[M.Heading] = []
        at: list[int] = []
        events: list[int] = []
        code: list[tuple[int, int]] = []

        def walk(node: Any) -> None:
            in_para = False
            for c in node.children:
                if c.name in inline:  # the hidden paragraph of a tight list item
                    if not in_para:
                        events.append(0)
                    in_para = True
                    continue
                in_para = False
                if c.name in ("heading", "lheading"):
                    parts: list[str] = []
                    text(c, parts)
                    line = bisect.bisect_right(starts, c.srcmap[0])
                    heads.append(M.Heading(line, int(c.meta["level"]), collapse_ws(nfc("".join(parts)))))
                    at.append(len(events))
                    events.append(int(c.meta["level"]))
                elif c.name in ("paragraph", "table"):
                    events.append(0)
                elif c.name in ("fence", "code_block", "html_block"):
                    if c.name != "html_block":
                        s, e = c.srcmap
                        code.append(
                            (bisect.bisect_right(starts, s), bisect.bisect_right(starts, max(s, e - 1)))
                        )
                    if c.meta.get("content", "").strip():
                        events.append(0)
                else:
                    walk(c)

        walk(md.tree(src))
        return _finish(heads, at, events, code)

    return parse


def markdown_it_structure() -> Callable[[str], Structure]:
    """The indexer's block structure before PARSER_VERSION 3: markdown-it-py's block rules
    (CommonMark preset, tables and strikethrough), the same heading text rules."""
    from markdown_it.token import Token

    def parse(src: str) -> Structure:
        env: dict[str, Any] = {}
        tokens: list[Token] = []
        M._MD.block.parse(src, M._MD, env, tokens)
        heads: list[M.Heading] = []
        at: list[int] = []
        events: list[int] = []
        code: list[tuple[int, int]] = []
        for i, tok in enumerate(tokens):
            if tok.type == "heading_open":
                level = int(tok.tag[1])
                line = (tok.map[0] if tok.map else 0) + 1
                heads.append(M.Heading(line, level, M.heading_text(tokens[i + 1].content, env)))
                at.append(len(events))
                events.append(level)
            elif tok.type in ("paragraph_open", "table_open"):
                events.append(0)
            elif tok.type in ("fence", "code_block", "html_block"):
                if tok.type != "html_block" and tok.map:
                    code.append((tok.map[0] + 1, tok.map[1]))
                if tok.content.strip():
                    events.append(0)
        return _finish(heads, at, events, code)

    return parse


def cmark_oracle() -> Callable[[str], tuple[list[tuple[int, int]], list[tuple[int, int]]]] | None:
    """The CommonMark reference implementation (cmark, GitHub's fork with its `table` and
    `strikethrough` extensions, through the maintained `cmarkgfm` binding) as the judge:
    heading (line, level) pairs and fenced/indented code line ranges from its source
    positions. Heading text and body_available are not judged (cmark gives HTML)."""
    try:
        import cmarkgfm  # type: ignore[import-not-found]
        from cmarkgfm.cmark import Options  # type: ignore[import-not-found]
    except ImportError:
        return None
    opts = Options.CMARK_OPT_SOURCEPOS | Options.CMARK_OPT_UNSAFE
    head_re = re.compile(r'<h([1-6]) data-sourcepos="(\d+):')
    pre_re = re.compile(r'<pre data-sourcepos="(\d+):\d+-(\d+):')

    def parse(src: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        html = cmarkgfm.markdown_to_html_with_extensions(src, opts, ["table", "strikethrough"])
        heads = [(int(m.group(2)), int(m.group(1))) for m in head_re.finditer(html)]
        code = [(int(m.group(1)), int(m.group(2))) for m in pre_re.finditer(html)]
        return heads, code

    return parse


def judged(src: str, s: Structure) -> tuple[list[tuple[int, int]], set[int]]:
    """What the oracle can judge of a structure: heading (line, level), non-blank code lines."""
    return [(h.line, h.level) for h in s.headings], _covered(src, s.code_ranges)


def _covered(src: str, ranges: list[tuple[int, int]]) -> set[int]:
    lines = src.split("\n")
    return {i for lo, hi in ranges for i in range(lo, hi + 1) if i <= len(lines) and lines[i - 1].strip()}


PIECES = [
    "# h",
    "## h *e* `c`",
    "###### x",
    "####### no",
    "#nospace",
    "  # indented",
    "    code",
    "\tcode tab",
    "```",
    "~~~",
    "```py",
    "````",
    "text",
    "para *em* [l](u) ![a](b)",
    "> q",
    "> # qh",
    ">",
    "- item",
    "  - nested",
    "1. one",
    "2) two",
    "* star",
    "+ plus",
    "---",
    "***",
    "===",
    "--",
    "",
    "",
    "",
    "<div>",
    "</div>",
    "<!-- c -->",
    "<b>x</b>",
    "",
    "a",
    "b",
    "",
    "",
    "",
    "-",
    "-",
    "",
    "",
    "",
    "1",
    "2",
    "",
    "[ref]: /u",
    "# [ref] h",
    "h \\",
    "\\# esc",
    "&amp; ent",
    "- # list heading",
    "> - q item",
    "Setext",
    "   ===",
    "``` unclosed",
    "é ü 中文",
    "# é *ü*",
    "- ```",
    "  ```",
    "    - x",
    "<pre>",
    "</pre>",
    "<script>",
    "</script>",
    "~~s~~",
    "# h #",
    "\t- tab item",
    "-\tx",
    ">> nested",
    "lazy line",
    "[Ünï]: /u",
    "# [ÜNÏ]",
    "<custom-tag>",
    "<!DOCTYPE x>",
    "1.",
    "- ",
    "10. ten",
    "# <https://a.b>",
    "# [l]: x",
    "     five",
    "| a | b |",
    "| - | - |",
    "| c |",
    "a | b",
    "# ~a~ b",
    "# ~~s~~ t",
    "[ref]: /u 'title'",
    "> ===",
    ">     > lazy",
    "1.",
]


def blank_only(src: str, a: Structure, b: Structure) -> bool:
    """Same headings, code ranges that differ only on blank lines (no link can be there)."""
    lines = src.split("\n")

    def covered(s: Structure) -> set[int]:
        return {
            i
            for lo, hi in s.code_ranges
            for i in range(lo, hi + 1)
            if i <= len(lines) and lines[i - 1].strip()
        }

    return a.headings == b.headings and covered(a) == covered(b)


def main() -> int:
    ap = benchkit.parser(__doc__)
    ap.add_argument("dirs", nargs="*", type=Path)
    ap.add_argument("--fuzz", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--oracle", action="store_true", help="judge each difference with cmark (cmarkgfm)")
    ap.add_argument("--examples", type=int, default=3, help="examples printed per verdict")
    args = benchkit.parse(ap, smoke={"dirs": [benchkit.REPO / "fixtures" / "demo"], "fuzz": 20})
    reference = M.parse_structure
    candidates = {
        n: f
        for n, f in (("markdown-it-py", markdown_it_structure()), ("markdown-it-pyrs", pyrs_structure()))
        if f
    }
    cpu = {"indexer": 0.0, **{n: 0.0 for n in candidates}}
    diffs: dict[str, list[str]] = {n: [] for n in candidates}
    soft: dict[str, int] = {n: 0 for n in candidates}
    oracle = cmark_oracle() if args.oracle else None
    # per candidate: verdict -> examples ("candidate", "indexer", "neither", "undecided")
    verdicts: dict[str, dict[str, list[str]]] = {n: {} for n in candidates}
    where = [""]

    def judge(name: str, src: str, ref: Structure, got: Structure) -> None:
        assert oracle is not None
        heads, code = oracle(src)
        truth = (heads, _covered(src, code))
        ref_ok, got_ok = judged(src, ref) == truth, judged(src, got) == truth
        verdict = (
            "undecided"
            if ref_ok and got_ok
            else "candidate"
            if got_ok
            else "indexer"
            if ref_ok
            else "neither"
        )
        verdicts[name].setdefault(verdict, []).append(where[0])

    def compare(src: str) -> Structure:
        t = time.process_time()
        ref = reference(src)
        cpu["indexer"] += time.process_time() - t
        for name, fn in candidates.items():
            t = time.process_time()
            got = fn(src)
            cpu[name] += time.process_time() - t
            if got != ref and blank_only(src, ref, got):
                soft[name] += 1
            elif got != ref:
                diffs[name].append(where[0])
                if oracle is not None:
                    judge(name, src, ref, got)
        return ref

    P.parse_structure = compare  # parse_note hands it the text exactly as the indexer does
    notes = 0
    for root in args.dirs:
        for d, dn, fn in os.walk(root):
            dn[:] = sorted(x for x in dn if not x.startswith("."))
            for f in sorted(fn):
                if f.endswith(".md"):
                    where[0] = str(Path(d, f).relative_to(root))
                    raw = Path(d, f).read_bytes()
                    P.parse_note(where[0], raw, 1, len(raw))
                    notes += 1
    rng = random.Random(args.seed)
    for i in range(args.fuzz):
        src = "\n".join(rng.choice(PIECES) for _ in range(rng.randint(1, 25))) + ("\n" if i % 2 else "")
        where[0] = repr(src)
        compare(src)
    print(f"notes {notes}, fuzz documents {args.fuzz}")
    for name, seconds in cpu.items():
        extra = f", differ {len(diffs[name])}, blank-line-only {soft[name]}" if name in diffs else ""
        print(f"{name:18} cpu {seconds:7.2f} s{extra}")
        for example in diffs.get(name, [])[:5]:
            print(f"    {example[:160]}")
        for verdict, examples in sorted(verdicts.get(name, {}).items()):
            print(f"  cmark agrees with {verdict}: {len(examples)}")
            for example in examples[: args.examples]:
                print(f"    {example[:300]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
