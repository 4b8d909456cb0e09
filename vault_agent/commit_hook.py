"""One shape for whoever the index writer tells about its commits.

A commit (`indexer.build.Indexer.commit_snapshot`) goes through three steps, and at each
the writer calls every one of its hooks, in the order they were given:

1. `attach(segments)`: the segments about to be committed; a hook may add files to them
   and returns them (the embedder, semantic/embedder.py: embeddings finished since the
   last commit ride on this one);
2. `publishing(manifest)`: the snapshot's files are durable and CURRENT does not name it
   yet (the readers of this process preload it, publish.py: the first request after the
   commit finds it loaded);
3. `committed(manifest)`: CURRENT names it (the embedder's new target).

A hook overrides the steps it needs; the others do nothing. The writer's hooks are given to
it by whoever composes it (`server/context.py`: the readers' preload; the engine adds its
embedder), so the indexer imports none of them.
"""

from __future__ import annotations

from vault_agent.contracts import Manifest, SegmentRef


class CommitHook:
    """Told about every commit of the index writer, step by step (see the module doc)."""

    def attach(self, segments: list[SegmentRef]) -> list[SegmentRef]:
        """The segments to commit, with whatever this hook adds to them."""
        return segments

    def publishing(self, manifest: Manifest) -> None:
        """The snapshot is durable; CURRENT names it next."""

    def committed(self, manifest: Manifest) -> None:
        """CURRENT names the snapshot."""
