"""Issue 8 item 4: coverage counts whole lines, so a scan page cut inside a line must not
let the caller cite that line; the seed 002 loop still ends once every line was read."""

from __future__ import annotations

from pathlib import Path

from .conftest import make_ctx
from .golden import call
from .vaultgen import write_vault

LONG = {"long.md": "".join(f"{chr(97 + i)}" * 30_000 + "\n" for i in range(3))}


def _scan(ctx, cursor):
    params = {"path": "long.md"} if cursor is None else {"path": "long.md", "cursor": cursor}
    return call(ctx, "scan", params)["data"]


def _cited(pages) -> list[dict[str, int]]:
    return [
        p["applied_range"]
        for p in pages
        if p["applied_range"]["end_line"] >= p["applied_range"]["start_line"]
    ]


def test_pages_cut_inside_lines_do_not_cover_them(tmp_path: Path) -> None:
    ctx = make_ctx(write_vault(tmp_path / "vault", LONG))
    try:
        first = _scan(ctx, None)
        assert (first["truncated_reason"], first["applied_range"]) == (
            "max_chars",
            {"start_line": 1, "end_line": 0},
        )
        second = _scan(ctx, first["next_cursor"])
        read_chars = len(first["text"]) + len(second["text"])
        assert read_chars < 0.5 * len(LONG["long.md"])
        cov = call(ctx, "coverage", {"path": "long.md", "cited_ranges": _cited([first, second])})["data"]
        assert cov["meets_min_coverage"] is False
        assert cov["coverage_ratio"] <= read_chars / len(LONG["long.md"])
        # Following next_cursor to the end covers every line exactly once.
        pages = [first, second]
        while not pages[-1]["eof"]:
            pages.append(_scan(ctx, pages[-1]["next_cursor"]))
        assert "".join(p["text"] for p in pages) == LONG["long.md"]
        done = call(ctx, "coverage", {"path": "long.md", "cited_ranges": _cited(pages)})["data"]
        assert (done["covered_lines"], done["total_lines"], done["coverage_ratio"]) == (3, 3, 1.0)
    finally:
        ctx.reader.close()
