"""No confident match: does a semantic neighbour stand out from the rest of the vault?

Only a query that no note holds a word of reaches this test (search.ranked_hits: lexical
evidence first, so a query with a real lexical hit is never refused). Its semantic answer
stands when its best notes stand out; what "stand out" means depends on the model's
geometry, so each model has its own measured gate (GATES, chosen on the dev vaults with
made-up queries and the dev paraphrases: docs/retrieval.md "No confident match"):
- `cosine`: the cosine itself. USE spreads unrelated texts around 0.1 and related ones
  well above, so a fixed floor separates them;
- `z`: the cosine's z-score within the query's own top POOL notes (their mean and standard
  deviation). multilingual-e5-small puts every pair of texts between 0.80 and 0.95, so no
  fixed floor works, while the gap between a query's best notes and the bulk of its
  neighbours moves with the query: a made-up word is about equally far from every note.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from vault_agent.semantic.encoder import load_encoder

POOL_MIN = 5  # fewer neighbours than this: too few to tell a z-score (the answer stands)


@dataclass(frozen=True)
class Gate:
    statistic: Literal["cosine", "z"]
    threshold: float  # a hit stands out at this value of the statistic or more


# Per model (its id before "@", the weights hash): bench_retrieval.py --lab dev --calibrate
# 300 --model M.
GATES: dict[str, Gate] = {
    # made-up 2,400 queries' best cosines p90 0.171; real paraphrases p5 0.206: 0.17
    # refuses 90% and answers 98% of them (95% of those sharing no word with their note)
    "use-multilingual-v3": Gate("cosine", 0.17),
}
DEFAULT_GATE = Gate("z", 2.5)

__all__ = ["DEFAULT_GATE", "GATES", "POOL_MIN", "Gate", "confident_hits", "statistic"]


def statistic(gate: Gate, cosines: Sequence[float]) -> np.ndarray:
    """The gate's statistic of each of a query's top notes (`cosines`, best first)."""
    c = np.asarray(cosines, dtype=np.float64)
    if gate.statistic == "cosine":
        return c
    if len(c) < POOL_MIN or float(c.std()) <= 1e-9:
        return np.full(len(c), np.inf)
    out: np.ndarray = (c - c.mean()) / float(c.std())
    return out


def confident_hits(cosines: Sequence[float], model_id: str | None = None) -> int:
    """How many of a query's top notes (cosines best first) stand out under the model's
    gate (`model_id`: the loaded encoder's when None); 0 = no confident match."""
    if model_id is None:
        encoder = load_encoder()
        model_id = encoder.model_id if encoder is not None else ""
    gate = GATES.get(model_id.split("@")[0], DEFAULT_GATE)
    return int(np.count_nonzero(statistic(gate, cosines) >= gate.threshold))
