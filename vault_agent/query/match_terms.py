"""Which words of a text a search query matched, as the lexical engine matches them.

The engine matches a word when its stem (`search_fields.analyze_terms`: the text's tokens
through the English Snowball stemmer; CJK bigrams unchanged) equals a query token's stem:
"planning" matches the query "plans". Highlights follow the same rule, less the words that
carry no topic: English stop words, CJK question words and CJK function bigrams
(`is_function_bigram`, which the ranking already weighs down). So "how do I change the font size" marks "change", "font" and
"size", never "how", "do", "i" or "the".

The stop words are the Snowball project's English list (snowballstem.org, BSD), which
holds the question words; tantivy's built-in English filter is Lucene's 33 words (no
"how", "what", "why").
"""

from __future__ import annotations

from vault_agent.query.search_engine import QUESTION_BIGRAMS, is_function_bigram
from vault_agent.search_fields import analyzer
from vault_agent.text import tokenize

MAX_QUERY_TOKENS = 64  # what a highlight looks at of a query (search's own cap is larger)

_SNOWBALL_ENGLISH = """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his
    himself she her hers herself it its itself they them their theirs themselves what which
    who whom this that these those am is are was were be been being have has had having do
    does did doing would should could ought i'm you're he's she's it's we're they're i've
    you've we've they've i'd you'd he'd she'd we'd they'd i'll you'll he'll she'll we'll
    they'll isn't aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't won't
    wouldn't shan't shouldn't can't cannot couldn't mustn't let's that's who's what's here's
    there's when's where's why's how's a an the and but if or because as until while of at by
    for with about against between into through during before after above below to from up
    down in out on off over under again further then once here there when where why how all
    any both each few more most other some such no nor not only own same so than too very
"""
STOP_WORDS = frozenset(_SNOWBALL_ENGLISH.split())


def stems(tokens: list[str]) -> list[str]:
    """The engine's stem of each token, in order (one per token: the stemmer never drops one)."""
    if not tokens:
        return []
    out: list[str] = analyzer().analyze(" ".join(tokens))
    return out if len(out) == len(tokens) else [analyzer().analyze(t)[0] for t in tokens]


def query_stems(query: str) -> frozenset[str]:
    """The stems a highlight marks for `query`: its tokens as the engine matches them,
    without stop words and CJK question words; CJK function bigrams ("在安") go too when
    the query has other tokens (the ranking's rule: "京都" alone is the topic)."""
    tokens = [
        t
        for t in dict.fromkeys(tokenize(query)[:MAX_QUERY_TOKENS])
        if t.replace("’", "'") not in STOP_WORDS and t not in QUESTION_BIGRAMS
    ]
    topical = [t for t in tokens if not is_function_bigram(t)]
    return frozenset(stems(topical or tokens))
