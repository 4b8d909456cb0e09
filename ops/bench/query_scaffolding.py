"""Query cleanup for the embedding model, measured in bench_granularity.py (`--queries
clean`) and rejected (docs/retrieval.md, "Round 3"): kept here to re-run the comparison.

Question scaffolding ("how do I", "what happens when", "怎么", "には") is dropped at the
start and end of the query before embedding; the lexical list keeps the raw query.
"""

from __future__ import annotations

import re

# English openers, longest first; matched case-insensitively at the start, repeatedly
# ("please, how do I ..."), each followed by a word boundary.
_EN_OPENERS = (
    r"is there (?:a|any) way (?:to|of)",
    r"what (?:happens|will happen|happened) (?:when|if|after|to)",
    r"what should i do (?:when|if|about)",
    r"how (?:do|can|could|should|would) (?:i|we|you|one)",
    r"how (?:does|do|is|are|did) (?:the|a|an|my)?",
    r"where (?:do|can|should|could) (?:i|we|you)",
    r"where (?:is|are) (?:the|a|my)?",
    r"what (?:is|are|was|were) (?:the|a|an)?",
    r"why (?:does|do|is|are|did|can't|cannot|won't) (?:the|a|an|my)?",
    r"which (?:is|are)",
    r"(?:can|could|should) (?:i|we|you)",
    r"(?:i want|i'd like|i would like|i need) to",
    r"(?:please|tell me|show me|explain)",
    r"how to",
    r"how",
    r"is it possible to",
)
_EN_RE = re.compile(r"^(?:(?:" + "|".join(_EN_OPENERS) + r")\b[\s,:]*)+", re.IGNORECASE)
# Chinese/Japanese/Korean question words and endings: at the start or end of the query.
_CJK_HEAD_RE = re.compile(
    r"^(?:请问|請問|如何|怎么样|怎么|怎样|怎麼|为什么|為什麼|どうやって|どうすれば|なぜ)+"
)
_CJK_TAIL_RE = re.compile(
    r"(?:怎么办|怎麼辦|怎么做|怎么弄|该怎么|如何|的方法|方法|是什么|有哪些|吗|呢|には|にはどうすればいい|"
    r"方法は|したい|ですか|ますか|か|하는\s*방법|방법|어떻게\s*하나요|하나요)[\s?？!！。.]*$"
)
_TRAIL_RE = re.compile(r"[\s?？!！。.]+$")
_CJK_CHAR_RE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def model_text(query: str) -> str:
    """The query as the embedding model should see it (see the module doc)."""
    text = _TRAIL_RE.sub("", query.strip())
    text = _EN_RE.sub("", text)
    text = _CJK_HEAD_RE.sub("", text)
    for _ in range(2):  # "…的方法吗": two endings at most
        text = _CJK_TAIL_RE.sub("", text).strip()
    if _CJK_CHAR_RE.search(text):
        return text if len(text) >= 2 else query
    return text if len(text.split()) >= 2 else query  # "What is New" stays a title
