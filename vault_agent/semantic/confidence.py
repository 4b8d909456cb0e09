"""No confident match: does any note come close enough in meaning to a query no note holds
a word of?

Only such a query reaches this test (search.ranked_hits: lexical evidence first, so a
query with a real lexical hit is never refused). Its semantic neighbours answer when the
nearest is at least the model's floor (GATES), else the answer is empty with
NO_CONFIDENT_MATCH. The floor is the cosine that refuses 90% of made-up queries against
the dev vaults; what it costs in real questions is measured beside it.

Why a floor on the cosine and not a statistic that moves with the query: measured on the
dev vaults (`bench_retrieval.py --lab dev --calibrate 300`: 300 made-up queries against 8
vaults, 247 real questions in natural language), the query's own distribution separates
made-up words from real questions worse than the cosine itself, for both models: at 90%
of made-up queries refused, multilingual-e5-small keeps 81% of the real questions with the
floor and 17-48% with the z-score of the best note among all notes or the top 50, the gap
to the median, to the 10th or the 50th neighbour, the hubness-corrected cosine, or the
distance to the vault's centroid (a made-up word's subword pieces make a few notes stand
out as much as a real question's meaning does). docs/retrieval.md "No confident match".
"""

from __future__ import annotations

from collections.abc import Sequence

from vault_agent.semantic.encoder import load_encoder

# The best cosine a query no note holds a word of needs, per model (its id before "@",
# the weights hash): refuses 90% of 2,400 made-up queries against the dev vaults.
GATES: dict[str, float] = {
    # real questions in natural language kept: 97.6% (of those sharing no word with their
    # note: 95.1%)
    "use-multilingual-v3": 0.171,
    # e5's cosines sit in 0.78-0.90 for everything: the floor alone keeps 81% of real
    # questions; behind lexical evidence and the script check (confident_hits' callers),
    # 92.8% of made-up queries refused, 99.6% of real questions answered, 97.6% of those
    # sharing no word with their note (two windows of 128 tokens a note)
    "multilingual-e5-small-q4": 0.86,
}
NO_GATE = -1.0  # a model without a measured floor answers (nothing is refused)

__all__ = ["GATES", "NO_GATE", "confident_hits", "floor", "model_reads"]


def floor(model_id: str | None = None) -> float:
    """The model's floor (`model_id`: the loaded encoder's when None)."""
    if model_id is None:
        encoder = load_encoder()
        model_id = encoder.model_id if encoder is not None else ""
    return GATES.get(model_id.split("@")[0], NO_GATE)


def model_reads(query: str) -> bool:
    """Whether the loaded model has a piece for every character of `query` (False: part
    of it reads as <unk>, so its neighbours say nothing of its meaning; no model: True).

    Why: a query in a script the vault holds no word of is answered whatever its cosine
    (its lexical silence says nothing; e5 bridges languages), unless the model cannot read
    it: on the dev sets every made-up query answered was a string of CJK characters in a
    vault without CJK text, most with characters outside e5's vocabulary, while none of
    the 172 real CJK questions of the dev and held-out sets holds one."""
    encoder = load_encoder()
    return encoder is None or encoder.unknown_chars(query) == 0


def confident_hits(cosines: Sequence[float], model_id: str | None = None, same_script: bool = True) -> int:
    """How many of a query's top notes (cosines, best first) answer: those at the model's
    floor or above; all of them for a query in a script the vault holds no word of
    (`same_script` false: its lexical silence says nothing, the model bridges languages).
    0 = no confident match."""
    if not same_script:
        return len(cosines)
    cut = floor(model_id)
    return sum(1 for c in cosines if c >= cut)
