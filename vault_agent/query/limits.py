"""The exploration tools' limits and answer budgets (SPEC), in one place for every surface."""

from __future__ import annotations

READ_DEFAULT_MAX_CHARS = 20_000
READ_HARD_MAX_CHARS = 100_000
SCAN_DEFAULT_CHUNK_LINES = 200  # VAULT_SCAN_DEFAULT_CHUNK_LINES
SCAN_MAX_CHUNK_LINES = 1_000  # VAULT_SCAN_MAX_CHUNK_LINES
SEARCH_DEFAULT_LIMIT = 50
SEARCH_MAX_LIMIT = 500
MAX_CONTEXT_LINES = 10  # vault_search context lines before/after a match
FIND_MAX_CANDIDATES_CAP = 10_000  # vault_find budget.max_candidates upper bound
FIND_MAX_TIME_MS = 600_000  # vault_find budget.time_ms upper bound
LS_MAX_ENTRIES = 1_000  # vault_ls limit upper bound
LS_DEFAULT_LIMIT = 100
LS_MAX_CHARS = 20_000  # one vault_ls page's entries, as JSON (next_cursor for the rest)
FIND_DEFAULT_TIME_MS = 60_000
FIND_DEFAULT_MAX_CANDIDATES = 200
COVERAGE_MIN_RATIO = 0.8
MARGINAL_GAIN_MIN = 0.05
MAX_CITED_RANGES = 1_000  # TOO_LARGE above: the answer lists the merged ranges back
# Answer budgets (Operation.max_answer_chars): a read's text is at most READ_HARD_MAX_CHARS;
# JSON escapes (\n, \") and the other fields come on top. Coverage lists up to 2 × 1,000 ranges.
READ_ANSWER_CHARS = 120_000
COVERAGE_ANSWER_CHARS = 100_000
MAX_FILE_BYTES = 32 * 1024 * 1024  # files read by the tools; TOO_LARGE above
