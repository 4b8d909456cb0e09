"""`artifact_audit` (seed 002): check a Markdown artifact's citations against its source.

Citation syntax (docs/retrieval.md): a marker `[L12]`, `[L12-L20]`, `[L12-20]` or a list
`[L3-L5, L9]` (the `L` is case-insensitive) cites those lines of the source file.

Node tree: every ATX heading and every list item of the artifact is a node, id `n<line>`
(its 1-based line in the artifact). Headings nest by level; a list item belongs to the
nearest previous list item with less indentation in the same section, else to the
section's heading. Lines that are neither (paragraphs, continuation lines) lend their
markers to the node before them. Frontmatter and fenced code are skipped.

Rules:
- rootless_node (根拠なし要素): a node with no citation of its own and no cited descendant.
- orphan_branch (孤立分岐): a node with a citation that starts past the source's last line
  (the branch hangs from nothing in the source).
- one_way_ref (片方向参照): a node with citations inside the source and at least one search
  token of its own text (text.tokenize, minus a few English stopwords), none of which
  occurs in the lines it cites (the node points at the source, the source does not point
  back at the node).
- coverage_ratio: coverage of the source by `cited_ranges`, or when absent by the union
  of all markers in the artifact (vault_coverage arithmetic).
- marginal_gain: coverage_ratio minus that of the previous audit of the same
  (artifact, source) pair in this process; null on the first.
- needs_forced_full_scan per seed 002: coverage_ratio < 0.8, or any finding, or
  marginal_gain >= 0.05 with uncovered ranges left.
next_actions: not forced → stop (1.0). Forced with gaps → vault_scan of the first gap
(0.8), plus artifact_audit {artifact_path, source_path} (0.4) when there are findings.
Forced by findings only → artifact_audit (0.6, after fixing the artifact), stop (0.2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from vault_agent.contracts import Outcome
from vault_agent.paths import Vault
from vault_agent.query.coverage import check_ranges, compute_coverage
from vault_agent.query.limits import COVERAGE_MIN_RATIO, MARGINAL_GAIN_MIN
from vault_agent.query.lines import TextFile, load_text, strip_eol
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.query.wire import NextAction, Wire, action, ratio, scan_params, stop
from vault_agent.text import tokenize

MAX_FINDINGS = 100
# Words too common to show that a node and its cited lines talk about the same thing.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "have",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
        "with",
    ]
)
_MARKER_RE = re.compile(r"\[\s*(L\d+(?:\s*[-–]\s*L?\d+)?(?:\s*,\s*L\d+(?:\s*[-–]\s*L?\d+)?)*)\s*\]", re.I)
_PART_RE = re.compile(r"L(\d+)(?:\s*[-–]\s*L?(\d+))?", re.I)
_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_ITEM_RE = re.compile(r"^([ \t]*)(?:[-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")

Kind = Literal["rootless_node", "orphan_branch", "one_way_ref"]


class Finding(Wire):
    kind: Kind
    message: str
    node_id: str | None


class AuditData(Wire):
    artifact_path: str
    source_path: str
    rootless_nodes: int
    orphan_branches: int
    one_way_refs: int
    coverage_ratio: float | None
    uncovered_ranges_count: int
    marginal_gain: float | None
    needs_forced_full_scan: bool
    next_actions: list[NextAction]
    findings: list[Finding]


@dataclass
class Node:
    line: int
    kind: str  # heading | item
    level: int  # heading level, or indentation width for items
    text: str = ""
    cites: list[tuple[int, int]] = field(default_factory=list)
    children: list[Node] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"n{self.line}"


def parse_markers(text: str) -> list[tuple[int, int]]:
    """Line ranges cited by the markers in one line of text."""
    out: list[tuple[int, int]] = []
    for marker in _MARKER_RE.finditer(text):
        for part in _PART_RE.finditer(marker.group(1)):
            a = int(part.group(1))
            b = int(part.group(2)) if part.group(2) else a
            out.append((min(a, b), max(a, b)))
    return out


def _indent(ws: str) -> int:
    return len(ws.expandtabs(4))


def parse_artifact(doc: TextFile) -> list[Node]:
    """The artifact's nodes in document order, linked into a tree (roots have no parent)."""
    lines = [strip_eol(x) for x in doc.lines]
    nodes: list[Node] = []
    heads: list[Node] = []  # open headings, outermost first
    items: list[Node] = []  # open list items of the current section, outermost first
    roots: list[Node] = []
    fence: str | None = None
    start = 0
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                start = i + 1
                break
    current: Node | None = None
    for idx in range(start, len(lines)):
        text = lines[idx]
        fm = _FENCE_RE.match(text)
        if fence is not None:
            if fm and fm.group(1)[0] == fence[0] and len(fm.group(1)) >= len(fence):
                fence = None
            continue
        if fm:
            fence = fm.group(1)
            continue
        hm = _HEADING_RE.match(text)
        im = None if hm else _ITEM_RE.match(text)
        if hm:
            node = Node(line=idx + 1, kind="heading", level=len(hm.group(1)), text=hm.group(2) or "")
            while heads and heads[-1].level >= node.level:
                heads.pop()
            items = []
            (heads[-1].children if heads else roots).append(node)
            heads.append(node)
        elif im:
            node = Node(line=idx + 1, kind="item", level=_indent(im.group(1)), text=im.group(2) or "")
            while items and items[-1].level >= node.level:
                items.pop()
            parent = items[-1] if items else (heads[-1] if heads else None)
            (parent.children if parent else roots).append(node)
            items.append(node)
        else:
            if current is not None and text.strip():
                current.cites.extend(parse_markers(text))
                current.text += " " + text
            continue
        node.cites.extend(parse_markers(node.text))
        nodes.append(node)
        current = node
    return nodes


def _cited_below(node: Node, memo: dict[int, bool]) -> bool:
    """Whether any descendant of node has a citation."""
    if node.line not in memo:
        memo[node.line] = any(bool(c.cites) or _cited_below(c, memo) for c in node.children)
    return memo[node.line]


def audit_nodes(nodes: list[Node], source: TextFile) -> list[Finding]:
    """Findings in document order (rootless, orphan and one-way checks per node)."""
    total = source.total_lines
    source_lines = [strip_eol(x) for x in source.lines]
    memo: dict[int, bool] = {}
    findings: list[Finding] = []
    for node in nodes:
        what = f"{'heading' if node.kind == 'heading' else 'list item'} at line {node.line}"
        if not node.cites and not _cited_below(node, memo):
            findings.append(
                Finding(
                    kind="rootless_node",
                    message=f"{what} has no citation and no cited descendant",
                    node_id=node.id,
                )
            )
            continue
        if any(a > total for a, _ in node.cites):
            findings.append(
                Finding(
                    kind="orphan_branch",
                    message=f"{what} cites lines past the end of the source ({total} lines)",
                    node_id=node.id,
                )
            )
        inside = [(a, min(b, total)) for a, b in node.cites if a <= total]
        own = set(tokenize(_MARKER_RE.sub(" ", node.text))) - STOPWORDS
        if inside and own:
            cited: set[str] = set()
            for a, b in inside:
                for i in range(a, b + 1):
                    cited.update(tokenize(source_lines[i - 1]))
            if not own & cited:
                findings.append(
                    Finding(
                        kind="one_way_ref",
                        message=f"{what} shares no word with the source lines it cites",
                        node_id=node.id,
                    )
                )
    return findings


def artifact_audit(
    vault: Vault,
    artifact_path: object,
    source_path: object,
    cited_ranges: list[tuple[int, int]] | None,
    history: dict[Any, float],
    reader: SnapshotReader | None = None,
) -> Outcome[AuditData]:
    """Audit an artifact against its source; `history` keeps coverage per pair (process-wide).

    Raises:
        InvalidParameter, TooLarge: malformed or too many cited ranges.
        InvalidPath, Forbidden, Ambiguous, NotFound: either path or name (see lines.load_text).
    """
    if cited_ranges is not None:
        check_ranges(cited_ranges)
    artifact = load_text(vault, artifact_path, reader, "audit")
    source = load_text(vault, source_path, reader, "audit")
    nodes = parse_artifact(artifact)
    if cited_ranges is None:
        cited_ranges = [r for n in nodes for r in n.cites]
    cov = compute_coverage(cited_ranges, source.total_lines)
    findings = audit_nodes(nodes, source)
    counts = {
        k: sum(1 for f in findings if f.kind == k) for k in ("rootless_node", "orphan_branch", "one_way_ref")
    }
    key = ("artifact_audit", artifact.path, source.path)
    prev = history.get(key)
    gain = None if prev is None else ratio(cov.coverage_ratio - prev)
    history[key] = cov.coverage_ratio
    uncovered = len(cov.uncovered)
    forced = (
        cov.coverage_ratio < COVERAGE_MIN_RATIO
        or any(counts.values())
        or (gain is not None and gain >= MARGINAL_GAIN_MIN and uncovered > 0)
    )
    actions: list[NextAction]
    pair = {"artifact_path": artifact.path, "source_path": source.path}
    gap_forced = cov.coverage_ratio < COVERAGE_MIN_RATIO or (
        gain is not None and gain >= MARGINAL_GAIN_MIN and uncovered > 0
    )
    if not forced:
        actions = [stop(1.0)]
    elif gap_forced and cov.uncovered:
        actions = [action("vault_scan", 0.8, scan_params(source.path, cov.uncovered[0]))]
        if any(counts.values()):
            actions.append(action("artifact_audit", 0.4, pair))
    else:
        actions = [action("artifact_audit", 0.6, pair), stop(0.2)]
    data = AuditData(
        artifact_path=artifact.path,
        source_path=source.path,
        rootless_nodes=counts["rootless_node"],
        orphan_branches=counts["orphan_branch"],
        one_way_refs=counts["one_way_ref"],
        coverage_ratio=cov.coverage_ratio,
        uncovered_ranges_count=uncovered,
        marginal_gain=gain,
        needs_forced_full_scan=forced,
        next_actions=actions,
        findings=findings[:MAX_FINDINGS],
    )
    return Outcome(data=data, warnings=[*artifact.warnings(), *source.warnings()])
