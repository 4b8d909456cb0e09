"""HTML of the web page: Jinja2 templates with autoescaping, and the package's own assets.

Everything a note, a message or a path holds is untrusted text: templates escape every
value (`autoescape`), and the helpers that emit markup escape the text themselves:
`highlight` before it wraps matched words in `<mark>`, and the Markdown renderer of notes
(`web.note_render`: raw HTML in a note is shown as text, links are checked).
Assets (`static/`) are read once from the installed package and served with a content
hash in their URL, so a new version is never hidden by a cached file.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape

from vault_agent.query.match_terms import stems
from vault_agent.text import tokenize

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
ASSET_TYPES = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}


@dataclass(frozen=True)
class Asset:
    body: bytes
    content_type: str
    version: str  # first 12 hex digits of its sha256


def load_assets() -> dict[str, Asset]:
    """Every file of `vault_agent/web/static`, by name."""
    out: dict[str, Asset] = {}
    for entry in resources.files("vault_agent.web").joinpath("static").iterdir():
        suffix = "." + entry.name.rsplit(".", 1)[-1]
        if entry.is_file() and suffix in ASSET_TYPES:
            body = entry.read_bytes()
            out[entry.name] = Asset(body, ASSET_TYPES[suffix], hashlib.sha256(body).hexdigest()[:12])
    return out


def _marked_spans(
    tokens: list[str], word: str, stem_of: dict[str, str], wanted: frozenset[str]
) -> list[tuple[int, int]]:
    """Spans of `word` to mark: the whole word when its stem is a query stem, else the CJK
    bigrams (or single characters) that are (the stemmer leaves CJK unchanged)."""
    if len(tokens) == 1:
        return [(0, len(word))] if stem_of.get(tokens[0]) in wanted else []
    if not wanted.intersection(tokens):
        return []
    spans = []
    for i in range(len(word)):
        for j in (i + 2, i + 1):
            part = word[i:j]
            if len(part) == j - i and tokenize(part) and set(tokenize(part)) <= wanted:
                spans.append((i, j))
                break
    return spans


def highlight(text: str, wanted: frozenset[str]) -> Markup:
    """`text` escaped, with each word the query matched wrapped in `<mark>`: its stem is one
    of `wanted` (`query.match_terms.query_stems`: no stop words)."""
    marks = [False] * len(text)
    if wanted:
        words = [(m, tokenize(m.group())) for m in _WORD.finditer(text)]
        singles = list(dict.fromkeys(tokens[0] for _, tokens in words if len(tokens) == 1))
        stem_of = dict(zip(singles, stems(singles), strict=True))
        for m, tokens in words:
            for a, b in _marked_spans(tokens, m.group(), stem_of, wanted):
                for k in range(m.start() + a, m.start() + b):
                    marks[k] = True
    out: list[str] = []
    i = 0
    while i < len(text):
        j = i
        while j < len(text) and marks[j] == marks[i]:
            j += 1
        piece = str(escape(text[i:j]))
        out.append(f"<mark>{piece}</mark>" if marks[i] else piece)
        i = j
    return Markup("".join(out))


def flat_items(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    """A nested JSON value as (dotted key, text) pairs, for showing fields we do not know
    in advance (a search hit's `explain`, embedding progress)."""
    if isinstance(value, dict):
        out: list[tuple[str, str]] = []
        for key, item in value.items():
            out += flat_items(item, f"{prefix}.{key}" if prefix else str(key))
        return out
    if isinstance(value, list):
        return [(prefix, ", ".join(str(v) for v in value))]
    if isinstance(value, float):
        return [(prefix, f"{value:.6g}")]
    return [(prefix, "–" if value is None else str(value))]


def make_environment(assets: dict[str, Asset]) -> Environment:
    env = Environment(
        loader=PackageLoader("vault_agent.web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )

    def asset(name: str) -> str:
        return f"/ui/static/{name}?v={assets[name].version}"

    env.globals["asset"] = asset
    env.filters["highlight"] = highlight
    env.filters["flat_items"] = flat_items
    return env
