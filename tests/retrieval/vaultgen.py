"""The synthetic vault of the retrieval tests: small, deterministic, English and Japanese."""

from __future__ import annotations

import os
from pathlib import Path

MTIME_BASE = 1_767_225_600  # 2026-01-01T00:00:00Z; files get base + i hours, i in sorted order


def log_note() -> str:
    """A 420-line keeper's log with headings every 60 lines (for scans and coverage)."""
    lines = ["---", "title: Keeper Log", "tags: [lighthouse, log]", "type: log", "status: active", "---"]
    for i in range(1, 415):
        if i % 60 == 1:
            lines.append(f"## Week {i // 60 + 1}")
        elif i == 200:
            lines.append("The beacon rotation schedule moved to every ninety minutes.")
        else:
            lines.append(f"Entry {i}: checked the lamp, wiped the glass, wrote the weather.")
    return "\n".join(lines) + "\n"


def summary_artifact() -> str:
    return (
        "# Lamp checks summary [L7-L66]\n"
        "\n"
        "- The lamp is checked every day [L8-L66]\n"
        "  - glass wiped each entry [L68-L127]\n"
        "- Beacon rotation schedule changed [L206]\n"
        "\n"
        "## Later weeks\n"
        "\n"
        "- Weather written in every entry [L128-L420]\n"
    )


def bad_artifact() -> str:
    return (
        "# Findings\n"
        "\n"
        "- A claim without any citation\n"
        "- A claim citing the future [L900-L910]\n"
        "- Penguins nest on the roof [L8-L9]\n"
        "- The lamp was checked [L8]\n"
    )


FILES: dict[str, str] = {
    "Home.md": "# Home\n\nStart at [[Keeper Log]] and [[灯台日誌]].\nSee also [guide](resources/guide.md).\n",
    "log/Keeper Log.md": log_note(),
    "log/灯台日誌.md": (
        "---\ntitle: 灯台日誌\ntags: [lighthouse, 日本語]\n---\n# 灯台日誌\n\n"
        "灯台の光の点検を毎日行う。\nレンズの清掃は週に一度。\n\n## 天気\n\n強い風の日は点検を延期する。\n"
    ),
    "resources/guide.md": (
        "---\ntags: [guide]\n---\n# Guide\n\nHow to clean a lens: wipe the glass gently.\n"
        "Links back to [[Home]].\n%% a hidden comment about secret lamps %%\n"
    ),
    "resources/data.txt": "plain text file, not a note\n",
    "artifacts/summary.md": summary_artifact(),
    "artifacts/bad.md": bad_artifact(),
    "empty.md": "",
    ".obsidian/app.json": "{}\n",
    "node_modules/pkg/readme.md": "# excluded\n",
}


def write_vault(root: Path, files: dict[str, str] | None = None) -> Path:
    """Write the files and give them deterministic mtimes (base + i hours, sorted order)."""
    items = sorted((files or FILES).items())
    for i, (rel, text) in enumerate(items):
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        os.utime(p, (MTIME_BASE + 3600 * i, MTIME_BASE + 3600 * i))
    # Folders too (vault_ls lists their mtime): deepest first, so no later write moves one.
    folders = {q for rel, _ in items for q in (root / rel).parents if root in q.parents}
    for i, folder in enumerate(sorted(folders, key=lambda q: (-len(q.parts), str(q)))):
        os.utime(folder, (MTIME_BASE - 60 * i, MTIME_BASE - 60 * i))
    return root
