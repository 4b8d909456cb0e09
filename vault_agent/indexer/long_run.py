"""A long-running writer process made ready for saves: nothing left to do on the first one.

After start-up (lock, recovery, catch-up) `settle_for_saves()`:
- warms the parser. Small batches parse in the writer's process, which imports the parser
  (markdown-it and its regexes, the link and frontmatter rules, numpy's string kernels) on
  first use: ~150 CPU-ms that the first save after start waited for (at 100k under load:
  the slowest save of a run, 1.1-1.8 s). A note that touches every rule, parsed in memory
  here, pays it at start instead.
- freezes the start-up heap (`gc.freeze`). The notes the writer knows (~150k tracked
  objects at 100k notes) live as long as the process; every full collection walked them
  again (40 CPU-ms each, 100-380 ms wall under load, with the interpreter held while a
  commit waits; after the freeze ~0). A 100k reconcile scan's transients trigger one about
  every minute.
`end_settled()` (at stop) makes them collectable again, so a process that starts writers
repeatedly (tests) does not keep their cyclic garbage for ever.
"""

from __future__ import annotations

import gc

_WARM_UP_NOTE = (
    b"---\ntags: [a]\ntitle: T\n---\n# Head\n\nText #tag [[Other#Part|alias]] [l](x.md) ![[img.png]]\n\n"
    b"```py\ncode\n```\n\n- item\n\n## Sub\n\n> quote\n"
)


def warm_up_parsing() -> None:
    """Parse one in-memory note into segment tables (imports and compiles the parser)."""
    from vault_agent.indexer.parse import parse_note
    from vault_agent.indexer.parse_pool import batch_tables

    batch_tables([parse_note("warm-up.md", _WARM_UP_NOTE, 0, len(_WARM_UP_NOTE))])


def settle_for_saves() -> None:
    warm_up_parsing()
    gc.freeze()


def end_settled() -> None:
    gc.unfreeze()
